//! Immutable bulk objects (section 2.27, API 0.4 `bulk_objects_v1`, profile
//! `local-file.v1`): large bytes pass between an extension and the host as files in a
//! host-owned transfer directory, never in frames. The runtime serves it itself.
//!
//! - `bulk/write` reserves a ticket and creates its locator, a flat file
//!   `octet-transfer-<token>` in the transfer directory, for the extension to fill.
//! - `bulk/commit` consumes the ticket: the host opens the locator without following
//!   links (`openat` with `O_NOFOLLOW` on the directory it holds open, so nothing is
//!   checked and then opened again), refuses anything but a regular file with one link,
//!   and streams it into a private snapshot while hashing it. Only when the size and
//!   SHA-256 match does the snapshot become a provisional blob; later writes to the
//!   locator cannot alter it.
//! - A blob is exported only when its call settles successfully with its BlobRef in
//!   the structured content; otherwise it is discarded.
//! - `bulk/read` gives a lease: a private copy of the snapshot at a new locator, for a
//!   blob the reading call may see (its own extension's, or one the host handed it in
//!   the call's arguments); `bulk/release` ends a ticket or a lease.
//!
//! Quotas: every object at most `object_bytes`; per host session, committed bytes plus
//! reservations at most `owner_bytes` and at most `blobs_per_owner` blobs; per
//! generation at most `write_tickets_per_generation` tickets and
//! `read_leases_per_generation` leases. These are protocol quotas, not confinement of
//! a trusted subprocess.
//!
//! [`BulkStorage`] is the embedder's configuration; `store::BulkStore` the host's
//! records; the dispatcher (`dispatcher/bulk.rs`) admits the requests.

pub(crate) mod blob;
pub(crate) mod store;

use std::fmt;
use std::path::PathBuf;

use serde_json::json;

pub use blob::{BlobRef, BlobRefProblem};

use crate::negotiation::BulkLimits;
use crate::wire::{codes, ResponseError};

/// The BlobRef-shaped objects (those with a `$blob` member) of `value`, at most `max`,
/// depth first; whether each is a valid BlobRef is the caller's to check.
pub(crate) fn blob_values(value: &serde_json::Value, max: usize) -> Vec<&serde_json::Value> {
    let mut found = Vec::new();
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        if found.len() == max {
            break;
        }
        match value {
            serde_json::Value::Object(map) if map.contains_key("$blob") => found.push(value),
            serde_json::Value::Object(map) => stack.extend(map.values()),
            serde_json::Value::Array(items) => stack.extend(items.iter()),
            _ => {}
        }
    }
    found
}

/// The `$blob` tokens of the BlobRef-shaped objects in `value` (at most 256).
pub(crate) fn blob_tokens(value: &serde_json::Value) -> Vec<String> {
    blob_values(value, 256)
        .into_iter()
        .filter_map(|v| v.get("$blob").and_then(serde_json::Value::as_str))
        .map(str::to_string)
        .collect()
}

/// The bulk storage an embedder configures, which offers `bulk_objects_v1` (section
/// 2.27) to every API 0.4 extension.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BulkStorage {
    /// Where the transfer directory and the snapshots live; `None` for a temporary
    /// store in the host's scratch directory, removed with the host.
    pub directory: Option<PathBuf>,
    /// The finite limits advertised in `protocol.bulk_objects_v1.limits`.
    pub limits: BulkLimits,
}

impl BulkStorage {
    /// A temporary store with the reference's default limits: it lives in the host's
    /// scratch directory and goes with the host.
    pub fn temporary() -> BulkStorage {
        BulkStorage {
            directory: None,
            limits: BulkLimits::default(),
        }
    }

    /// A store in `directory` (created owner-only), with the default limits. Its
    /// snapshots and locators are removed when the host shuts down; blobs retained with
    /// [`ExtensionHost::retain_durable`](crate::ExtensionHost::retain_durable) stay in
    /// `directory/durable` for a later host to recover.
    pub fn in_directory(directory: impl Into<PathBuf>) -> BulkStorage {
        BulkStorage {
            directory: Some(directory.into()),
            limits: BulkLimits::default(),
        }
    }

    /// Other finite limits (each at least 1 and at most 2^53 - 1).
    pub fn with_limits(mut self, limits: BulkLimits) -> BulkStorage {
        self.limits = limits;
        self
    }
}

/// Why a bulk request was refused (SUPPLEMENT "2.27 bulk methods"): `{code:-32000,
/// message:<name>, data:{code:<name>}}`.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum BulkError {
    /// Malformed params, a bad parent, an unknown or foreign ticket, lease or blob
    /// (the words say which).
    BlobUnavailable(String),
    /// A quota would be exceeded (the words say which).
    QuotaExceeded(String),
    /// The committed bytes do not have the declared SHA-256.
    IntegrityMismatch,
    /// The committed file does not have the declared size, or exceeds the capacity.
    SizeMismatch,
    /// The store failed (the words say how).
    StorageUnavailable(String),
    /// `bulk_objects_v1` was not negotiated.
    UnsupportedFeature,
}

impl BulkError {
    /// The contract name, such as `quota_exceeded`.
    pub fn name(&self) -> &'static str {
        match self {
            BulkError::BlobUnavailable(_) => "blob_unavailable",
            BulkError::QuotaExceeded(_) => "quota_exceeded",
            BulkError::IntegrityMismatch => "integrity_mismatch",
            BulkError::SizeMismatch => "size_mismatch",
            BulkError::StorageUnavailable(_) => "storage_unavailable",
            BulkError::UnsupportedFeature => "unsupported_feature",
        }
    }

    /// The error object the request is answered with.
    pub fn to_response_error(&self) -> ResponseError {
        let mut error = ResponseError::new(codes::SERVER_ERROR, self.name());
        error.data = Some(json!({"code": self.name()}));
        error
    }

    pub(crate) fn unavailable(why: impl Into<String>) -> BulkError {
        BulkError::BlobUnavailable(why.into())
    }
}

impl fmt::Display for BulkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BulkError::BlobUnavailable(why) => write!(f, "blob_unavailable: {why}"),
            BulkError::QuotaExceeded(why) => write!(f, "quota_exceeded: {why}"),
            BulkError::IntegrityMismatch => f.write_str(
                "integrity_mismatch: the committed bytes do not have the declared SHA-256",
            ),
            BulkError::SizeMismatch => f.write_str(
                "size_mismatch: the committed file does not have the declared size, or exceeds the ticket's capacity",
            ),
            BulkError::StorageUnavailable(why) => write!(f, "storage_unavailable: {why}"),
            BulkError::UnsupportedFeature => {
                f.write_str("unsupported_feature: bulk_objects_v1 was not negotiated")
            }
        }
    }
}

impl std::error::Error for BulkError {}
