//! The extension side of immutable bulk objects (section 2.27, API 0.4): enable
//! [`FEATURE_BULK_OBJECTS`] with [`crate::sdk::Extension::feature`], then from a tool
//! handler write bytes as a blob ([`Context::write_blob`], [`Context::write_blob_from`])
//! and read a blob the host handed the call ([`Context::read_blob`]). Both stream
//! through the transfer directory the host offered; the bytes never travel in a
//! frame. A blob written here is published when the call returns its BlobRef in its
//! structured content.
//!
//! ```no_run
//! use octet_host::sdk::{Context, ToolOutput};
//! use serde_json::json;
//!
//! fn export(cx: &Context) -> Result<ToolOutput, octet_host::sdk::ChildRequestError> {
//!     let blob = cx.write_blob(b"netlist v1\n", "text/plain")?;
//!     Ok(ToolOutput::text("exported").with_structured_content(json!({"netlist": blob.to_value()})))
//! }
//! ```

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;

use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

use super::context::Context;
use super::error::ChildRequestError;
use crate::features::bulk::BlobRef;
use crate::negotiation::Feature;

/// The API 0.4 feature of `bulk/write`, `bulk/commit`, `bulk/read` and `bulk/release`
/// (section 2.27): offered only when the embedder configures bulk storage.
pub const FEATURE_BULK_OBJECTS: &str = Feature::BulkObjectsV1.as_str();

/// The only profile.
const PROFILE: &str = "local-file.v1";

fn storage_error(reason: impl Into<String>) -> ChildRequestError {
    ChildRequestError::Sidecar {
        reason: reason.into(),
    }
}

impl Context {
    /// The locator `name` of the offered transfer directory: a flat host-made name.
    fn locator(&self, answer: &Value, method: &'static str) -> Result<PathBuf, ChildRequestError> {
        let name = answer
            .get("locator")
            .and_then(Value::as_str)
            .filter(|n| n.starts_with("octet-transfer-") && !n.contains('/') && !n.contains(".."))
            .ok_or(ChildRequestError::MalformedAnswer { method })?;
        let dir = self
            .session_transfer_directory()
            .ok_or_else(|| storage_error("the host offered no transfer directory"))?;
        Ok(dir.join(name))
    }

    /// Writes `data` as a blob of `media_type` under this call.
    pub fn write_blob(&self, data: &[u8], media_type: &str) -> Result<BlobRef, ChildRequestError> {
        self.write_blob_from(data, data.len() as u64, media_type)
    }

    /// Streams exactly `bytes` bytes of `reader` into a blob of `media_type` under this
    /// call, hashing them on the way; memory stays at one 1 MiB buffer.
    pub fn write_blob_from(
        &self,
        mut reader: impl Read,
        bytes: u64,
        media_type: &str,
    ) -> Result<BlobRef, ChildRequestError> {
        let mut params = Map::new();
        params.insert("profile".into(), json!(PROFILE));
        params.insert("capacity".into(), json!(bytes));
        params.insert("media_type".into(), json!(media_type));
        let ticket = self.request("bulk/write", params)?;
        let path = self.locator(&ticket, "bulk/write")?;
        let id = ticket
            .get("ticket")
            .and_then(Value::as_str)
            .ok_or(ChildRequestError::MalformedAnswer {
                method: "bulk/write",
            })?
            .to_string();
        let written = (|| -> io::Result<(u64, String)> {
            let mut file = OpenOptions::new()
                .write(true)
                .truncate(true)
                .custom_flags(libc::O_NOFOLLOW)
                .open(&path)?;
            let mut digest = Sha256::new();
            let mut buffer = vec![0u8; 1 << 20];
            let mut count = 0u64;
            let mut limited = (&mut reader).take(bytes);
            loop {
                let n = limited.read(&mut buffer)?;
                if n == 0 {
                    break;
                }
                digest.update(&buffer[..n]);
                file.write_all(&buffer[..n])?;
                count += n as u64;
            }
            // Close the file before the commit: the host snapshots what is there.
            drop(file);
            Ok((count, crate::hex::lower(&digest.finalize())))
        })();
        let (count, sha256) = match written {
            Ok(done) => done,
            Err(e) => {
                let mut release = Map::new();
                release.insert("id".into(), json!(id));
                let _ = self.request("bulk/release", release);
                return Err(storage_error(format!("cannot fill the locator: {e}")));
            }
        };
        let mut params = Map::new();
        params.insert("ticket".into(), json!(id));
        params.insert("bytes".into(), json!(count));
        params.insert(
            "digest".into(),
            json!({"algorithm": "sha256", "value": sha256}),
        );
        let answer = self.request("bulk/commit", params)?;
        BlobRef::parse(&answer).map_err(|_| ChildRequestError::MalformedAnswer {
            method: "bulk/commit",
        })
    }

    /// Reads the whole of `blob` (one the host handed this call, or this extension's
    /// own), checking its size and SHA-256, then releases the lease.
    pub fn read_blob(&self, blob: &BlobRef) -> Result<Vec<u8>, ChildRequestError> {
        let mut params = Map::new();
        params.insert("profile".into(), json!(PROFILE));
        params.insert("blob".into(), blob.to_value());
        let lease = self.request("bulk/read", params)?;
        let path = self.locator(&lease, "bulk/read")?;
        let read = (|| -> io::Result<Vec<u8>> {
            let mut file = OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NOFOLLOW)
                .open(&path)?;
            let mut data = Vec::new();
            (&mut file as &mut File)
                .take(blob.bytes + 1)
                .read_to_end(&mut data)?;
            Ok(data)
        })();
        if let Some(id) = lease.get("lease").and_then(Value::as_str) {
            let mut release = Map::new();
            release.insert("id".into(), json!(id));
            let _ = self.request("bulk/release", release);
        }
        let data = read.map_err(|e| storage_error(format!("cannot read the lease: {e}")))?;
        let sha256 = crate::hex::lower(&Sha256::digest(&data));
        if data.len() as u64 != blob.bytes || sha256 != blob.sha256 {
            return Err(storage_error("the leased file does not match the BlobRef"));
        }
        Ok(data)
    }
}
