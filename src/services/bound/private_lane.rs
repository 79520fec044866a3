//! The private `session/append_entry` lane of the awaited session-operation hooks
//! (section 1.4b; SUPPLEMENT "session_leaf grant"): the grant the host sends in
//! `hook/run`'s `params.session_leaf`, the params an extension appends with, and the
//! commit the embedder's session writer answers.
//!
//! The runtime mints every grant: a 64-character lowercase hex id, single use. An
//! append names the grant it spends; its receipt carries the `successor` grant for the
//! next append, until the invocation settles, when the lane closes.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::params::ServiceParams;
use super::refusal::{Refusal, ServiceRefusal};
use super::results::ClosedResult;
use crate::limits::{
    MAX_ENTRY_ID_BYTES, MAX_ENTRY_TYPE_BYTES, MAX_JSON_DEPTH, MAX_OPERATION_ID_BYTES,
    MAX_PRIVATE_ENTRY_BYTES, MAX_PRIVATE_ENTRY_NODES,
};
use crate::validate::{check_bounds, Bounds};

/// What an append names of its grant: `params.session_leaf` of the private
/// `session/append_entry`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LeafRef {
    /// The single-use grant id: 64 lowercase hex characters.
    pub grant_id: String,
    /// The activation epoch the invocation runs in.
    pub activation_epoch: u64,
    /// The invocation, `session-operation:N`.
    pub operation_id: String,
}

impl LeafRef {
    fn check(&self) -> Result<(), ServiceRefusal> {
        let hex = |c: char| c.is_ascii_digit() || ('a'..='f').contains(&c);
        if self.grant_id.len() != 64 || !self.grant_id.chars().all(hex) {
            return Err(Refusal::InvalidRequest
                .because("`session_leaf.grant_id` must be 64 lowercase hex characters"));
        }
        if self.operation_id.is_empty() || self.operation_id.len() > MAX_OPERATION_ID_BYTES {
            return Err(Refusal::InvalidRequest.because(format!(
                "`session_leaf.operation_id` must be 1 to {MAX_OPERATION_ID_BYTES} bytes"
            )));
        }
        Ok(())
    }
}

/// The private `session/append_entry` (section 1.4b): an entry the extension appends
/// while its session-operation hook is awaited, spending its `session_leaf` grant.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PrivateAppend {
    /// The entry's type, 1 to [`MAX_ENTRY_TYPE_BYTES`].
    pub entry_type: String,
    /// The private value: at most [`MAX_PRIVATE_ENTRY_BYTES`] of JSON and
    /// [`MAX_PRIVATE_ENTRY_NODES`] nodes.
    pub data: Value,
    /// The grant this append spends (already checked live by the runtime).
    pub session_leaf: LeafRef,
}

impl ServiceParams for PrivateAppend {
    fn check(&self) -> Result<(), ServiceRefusal> {
        if self.entry_type.is_empty() || self.entry_type.len() > MAX_ENTRY_TYPE_BYTES {
            return Err(Refusal::InvalidRequest.because(format!(
                "`entry_type` must be 1 to {MAX_ENTRY_TYPE_BYTES} bytes"
            )));
        }
        let bounds = Bounds {
            max_bytes: MAX_PRIVATE_ENTRY_BYTES,
            max_depth: MAX_JSON_DEPTH,
            max_nodes: MAX_PRIVATE_ENTRY_NODES,
            max_key_bytes: usize::MAX,
        };
        check_bounds(&self.data, bounds).map_err(|e| {
            Refusal::BoundsExceeded.because(format!(
                "the private `data` is at most {MAX_PRIVATE_ENTRY_BYTES} bytes and \
                 {MAX_PRIVATE_ENTRY_NODES} nodes: {e}"
            ))
        })?;
        self.session_leaf.check()
    }
}

/// What the session writer answers for a private append: the committed entry and the
/// session's head after it. The extension's receipt adds the `successor` grant.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "CommitAnswer")]
pub struct PrivateCommit {
    /// The committed entry's id, 1 to [`MAX_ENTRY_ID_BYTES`] bytes.
    pub entry_id: String,
    /// The session's head after the commit, 1 to [`MAX_ENTRY_ID_BYTES`] bytes.
    pub head: String,
}

/// A private append's answer: `{entry_id, head}`, or the reference's whole receipt with
/// `successor` (a grant object or null), which the runtime replaces with the grant it
/// mints.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CommitAnswer {
    entry_id: String,
    head: String,
    #[serde(default)]
    #[allow(dead_code)]
    successor: Option<serde_json::Map<String, Value>>,
}

impl From<CommitAnswer> for PrivateCommit {
    fn from(answer: CommitAnswer) -> PrivateCommit {
        PrivateCommit {
            entry_id: answer.entry_id,
            head: answer.head,
        }
    }
}

impl ClosedResult for PrivateCommit {
    fn check_bounds(&self) -> Result<(), String> {
        for (name, value) in [("entry_id", &self.entry_id), ("head", &self.head)] {
            if value.is_empty() || value.len() > MAX_ENTRY_ID_BYTES {
                return Err(format!("`{name}` must be 1 to {MAX_ENTRY_ID_BYTES} bytes"));
            }
        }
        Ok(())
    }
}

/// A new single-use grant id: 64 lowercase hex characters no other grant of this host
/// has (a hash of the host's instance, a counter and the time).
pub(crate) fn mint_grant_id(instance: &str) -> String {
    static MINTED: AtomicU64 = AtomicU64::new(0);
    let n = MINTED.fetch_add(1, Ordering::Relaxed);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let digest = Sha256::new()
        .chain_update(instance.as_bytes())
        .chain_update(n.to_le_bytes())
        .chain_update(nanos.to_le_bytes())
        .chain_update(std::process::id().to_le_bytes())
        .finalize();
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::super::params::closed;
    use super::super::results::ServiceResult;
    use super::*;
    use serde_json::json;

    #[test]
    fn a_commit_is_read_in_its_own_shape_or_the_reference_receipt() {
        let own = json!({"entry_id": "e1", "head": "e1"});
        assert_eq!(PrivateCommit::check(&own), Ok(()));
        let receipt = json!({"entry_id": "e1", "head": "e1", "successor": {"grant_id": "g"}});
        assert_eq!(PrivateCommit::check(&receipt), Ok(()));
        let no_successor = json!({"entry_id": "e1", "head": "e1", "successor": null});
        assert_eq!(PrivateCommit::check(&no_successor), Ok(()));
        let bad_successor = json!({"entry_id": "e1", "head": "e1", "successor": 1});
        assert!(PrivateCommit::check(&bad_successor).is_err());
        let extra = json!({"entry_id": "e1", "head": "e1", "seq": 1});
        assert!(PrivateCommit::check(&extra).is_err());
        let empty = json!({"entry_id": "e1", "head": ""});
        assert!(PrivateCommit::check(&empty).is_err());
        assert_eq!(
            PrivateCommit {
                entry_id: "e1".into(),
                head: "e2".into()
            }
            .into_result(),
            json!({"entry_id": "e1", "head": "e2"})
        );
    }

    fn append(data: Value, grant: &str) -> Result<PrivateAppend, Refusal> {
        let params = json!({"entry_type": "note", "data": data,
            "session_leaf": {"grant_id": grant, "activation_epoch": 1, "operation_id": "session-operation:1"}});
        let append: PrivateAppend = closed(params).map_err(|e| e.refusal)?;
        append.check().map_err(|e| e.refusal)?;
        Ok(append)
    }

    #[test]
    fn grants_are_64_lowercase_hex_and_unique() {
        let a = mint_grant_id("i");
        let b = mint_grant_id("i");
        assert_ne!(a, b);
        assert!(append(json!({}), &a).is_ok());
        assert_eq!(
            append(json!({}), &a.to_uppercase()),
            Err(Refusal::InvalidRequest)
        );
        assert_eq!(append(json!({}), "abc"), Err(Refusal::InvalidRequest));
    }

    #[test]
    fn the_private_value_is_bounded_in_bytes_and_nodes() {
        let grant = mint_grant_id("i");
        let big = json!({"text": "x".repeat(MAX_PRIVATE_ENTRY_BYTES)});
        assert_eq!(append(big, &grant), Err(Refusal::BoundsExceeded));
        let many = Value::Array(vec![json!(1); MAX_PRIVATE_ENTRY_NODES + 1]);
        assert_eq!(append(many, &grant), Err(Refusal::BoundsExceeded));
        assert!(append(Value::Array(vec![json!(1); 100]), &grant).is_ok());
    }
}
