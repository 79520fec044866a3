//! What a successful `tool/call` publishes (sections 2.26, 2.27): its declared resource
//! outputs and the blobs it committed, together or not at all.
//!
//! The answer of a call whose tool declares resource outputs, or that committed a
//! blob, is validated here on the dispatcher, as its caller will validate it again:
//! only a valid, successful result publishes. Its resource outputs must be values it
//! registered, and every BlobRef in its structured content must match a blob it
//! committed (published now) or an exported blob of its owner. Anything else fails the
//! call as an invalid result, and everything it made is retired. Other answers are
//! validated by their caller alone, the BlobRefs they carry included.

use serde_json::Value;

use crate::dispatcher::Dispatcher;
use crate::model::call::{CallError, RawResult};
use crate::transport::ConnId;
use crate::validate::resource::{ResourceRef, ResourceSlot};
use crate::validate::{ResultError, ResultErrorKind};

fn invalid(at: impl Into<String>, reason: impl Into<String>) -> ResultError {
    ResultError::new(
        at,
        ResultErrorKind::Resource {
            reason: reason.into(),
        },
    )
}

impl Dispatcher {
    /// The call `id` was answered with `raw`: publishes what it made, or retires it.
    /// Returns the error the call fails with instead, when its result is invalid.
    pub(in crate::dispatcher) fn settle_outputs(
        &mut self,
        conn: ConnId,
        id: u64,
        raw: &RawResult,
    ) -> Option<CallError> {
        let c = self.conns.get_mut(&conn)?;
        let resource_outputs = c.features.resources.forget_outputs(id);
        let owner = c.owner.session_id.clone();
        // Only a call that committed a blob has one to publish; the BlobRefs of any
        // other result are checked by its caller (`RawResult::tool_output`), off the
        // dispatcher.
        let bulk_tool = self.shared.features.bulk.get().and_then(|store| {
            store
                .take_grant(conn, id)
                .filter(|_| store.has_provisional(conn, id))
        });
        let tool = match (&resource_outputs, bulk_tool) {
            (Some((tool, _)), _) => tool.clone(),
            (None, Some(tool)) => tool,
            (None, None) => {
                self.retire_made(conn, id);
                return None;
            }
        };
        let result = match raw.tool_output(&tool) {
            Ok(result) if !result.is_error => result,
            Ok(_) => {
                self.retire_made(conn, id);
                return None;
            }
            Err(error) => {
                self.retire_made(conn, id);
                return Some(error);
            }
        };
        let structured = result.structured_content.unwrap_or(Value::Null);
        let blobs = match self.shared.features.bulk.get() {
            Some(store) => store
                .result_blobs(conn, id, &owner, &structured)
                .map_err(|why| invalid("structured_content", why)),
            None => Ok(Vec::new()),
        };
        let checked = blobs.and_then(|blobs| {
            let slots = resource_outputs.map(|(_, slots)| slots).unwrap_or_default();
            let refs = resources_of(&slots, &structured)?;
            let c = self.conns.get_mut(&conn).expect("checked above");
            let retired = c.features.resources.export(id, &refs).map_err(|error| {
                invalid(
                    "structured_content",
                    format!(
                        "a declared resource output is not a value this call registered: {error}"
                    ),
                )
            })?;
            Ok((blobs, retired))
        });
        match checked {
            Ok((blobs, retired)) => {
                if let Some(store) = self.shared.features.bulk.get() {
                    store.export(conn, id, &blobs);
                }
                self.dispose(conn, retired);
                None
            }
            Err(error) => {
                self.retire_made(conn, id);
                Some(CallError::InvalidResult(error))
            }
        }
    }

    /// Retires the resources and discards the blobs the call `id` made.
    fn retire_made(&mut self, conn: ConnId, id: u64) {
        self.retire_resources(conn, id);
        self.discard_blobs(conn, id);
    }
}

/// The resource refs at `outputs` of a call's structured content, each of its slot's type.
fn resources_of(
    outputs: &[ResourceSlot],
    structured: &Value,
) -> Result<Vec<ResourceRef>, ResultError> {
    let mut exports = Vec::new();
    for slot in outputs {
        let Some(value) = slot.path.lookup(structured) else {
            continue;
        };
        let at = format!("structured_content{}", slot.path);
        let resource = ResourceRef::parse(value).map_err(|problem| {
            ResultError::new(
                at.clone(),
                ResultErrorKind::Resource {
                    reason: problem.to_string(),
                },
            )
        })?;
        if resource.type_id != slot.type_id {
            return Err(ResultError::new(
                at,
                ResultErrorKind::Resource {
                    reason: format!("the output must be a `{}`", slot.type_id),
                },
            ));
        }
        exports.push(resource);
    }
    Ok(exports)
}
