//! Native resource refs (section 2.26, API 0.4 `resource_refs_v1`): the host's record
//! of every ResourceRef a generation issued, served by the runtime itself.
//!
//! The native object stays in the extension; the host keeps only the token, its type
//! and its state, so that every rule of the reference holds whatever the extension
//! does:
//!
//! - `resource/register` under a live `tool/call` parent makes a *provisional* value.
//!   It becomes *active* only when that call settles successfully and its
//!   `structured_content` carries it at a declared output path; a failed, invalid or
//!   cancelled call retires every provisional value it registered.
//! - A call's input resources are checked and pinned exclusively when the call is
//!   actually sent (a queued call pins when it leaves the queue), and stay pinned until
//!   the extension settles it, even when the caller cancelled it first.
//! - `resource/release` retires an active value at once (`resource_busy` while it is
//!   pinned); the native cleanup follows as a host-to-extension `resource/dispose`, whose
//!   missing or unknown status ends the generation.
//! - Records live with their generation: a reload, a restart or an owner retirement
//!   leaves every earlier token unknown.
//!
//! [`ResourceTable`] is that record, for one generation; the dispatcher
//! (`dispatcher/resources.rs`) drives it.

mod table;

use std::fmt;

use serde_json::json;

pub use table::ResourceTable;

use crate::wire::{codes, ResponseError};

/// Why a resource request or a call's resources are refused (SUPPLEMENT "2.26
/// resource methods"). Each named refusal is `{code:-32000, message:<name>,
/// data:{code:<name>}}`; a malformed request is -32602 `invalid resource request`.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ResourceError {
    /// The value is pinned by a running call.
    Busy,
    /// No live record of this generation has the token (unknown, retired, another
    /// generation's, another parent's provisional value).
    Unavailable,
    /// The record's type is not the one named.
    TypeMismatch,
    /// `max_records` or `max_registrations_per_parent` would be exceeded.
    QuotaExceeded,
    /// `resource_refs_v1` was not negotiated.
    UnsupportedFeature,
    /// The request is malformed or its parent is not a live `tool/call` (the fixed
    /// words say which member).
    Invalid(String),
}

impl ResourceError {
    /// The contract name, such as `resource_busy`.
    pub fn name(&self) -> &'static str {
        match self {
            ResourceError::Busy => "resource_busy",
            ResourceError::Unavailable | ResourceError::Invalid(_) => "resource_unavailable",
            ResourceError::TypeMismatch => "resource_type_mismatch",
            ResourceError::QuotaExceeded => "quota_exceeded",
            ResourceError::UnsupportedFeature => "unsupported_feature",
        }
    }

    /// The error object the request is answered with.
    pub fn to_response_error(&self) -> ResponseError {
        let name = self.name();
        let (code, message) = match self {
            ResourceError::Invalid(_) => (codes::INVALID_PARAMS, "invalid resource request"),
            _ => (codes::SERVER_ERROR, name),
        };
        let mut error = ResponseError::new(code, message);
        error.data = Some(json!({"code": name}));
        error
    }
}

impl fmt::Display for ResourceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ResourceError::Busy => f.write_str("resource_busy: a running call holds the resource"),
            ResourceError::Unavailable => f.write_str(
                "resource_unavailable: no live resource of this extension generation has that token",
            ),
            ResourceError::TypeMismatch => {
                f.write_str("resource_type_mismatch: the resource has another type")
            }
            ResourceError::QuotaExceeded => f.write_str(
                "quota_exceeded: at most 256 resources per generation and 32 registrations per call",
            ),
            ResourceError::UnsupportedFeature => {
                f.write_str("unsupported_feature: resource_refs_v1 was not negotiated")
            }
            ResourceError::Invalid(why) => write!(f, "invalid resource request: {why}"),
        }
    }
}

impl std::error::Error for ResourceError {}
