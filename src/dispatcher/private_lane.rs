//! The private `session/append_entry` lane of one generation (section 1.4b): the
//! invocation whose session-operation hook is awaited, and its current single-use
//! `session_leaf` grant.
//!
//! Sending a `hook/run` with a grant opens the lane for that request. An append is
//! admitted only with that request as its live parent and the grant not yet spent; it
//! spends it, and its receipt carries the successor the runtime mints once the session
//! writer committed. When the hook's request settles the lane closes: the grant is
//! revoked, and a later append is refused.

use serde_json::{json, Value};

use super::guard::{KindGuard, Placed};
use crate::services::bound::{mint_grant_id, Refusal, ServiceRefusal, ServiceRequest};

/// The awaited invocation.
#[derive(Debug)]
struct Invocation {
    /// Its `hook/run` request.
    parent: u64,
    activation_epoch: u64,
    operation_id: String,
    /// The grant not yet spent, if any.
    grant: Option<String>,
    /// Mixed into every grant this invocation mints.
    instance: String,
}

/// The private lane of one generation.
#[derive(Debug, Default)]
pub(crate) struct PrivateLane {
    invocation: Option<Invocation>,
}

impl PrivateLane {
    /// Opens the lane for the `hook/run` request `parent`: the first grant.
    pub fn open(
        &mut self,
        parent: u64,
        activation_epoch: u64,
        operation_id: String,
        instance: &str,
    ) -> String {
        let grant = mint_grant_id(instance);
        self.invocation = Some(Invocation {
            parent,
            activation_epoch,
            operation_id,
            grant: Some(grant.clone()),
            instance: instance.to_string(),
        });
        grant
    }
}

impl KindGuard for PrivateLane {
    fn admit(
        &mut self,
        request: &ServiceRequest,
        placed: Placed,
        _pending: &[&str],
    ) -> Result<Option<String>, ServiceRefusal> {
        let ServiceRequest::SessionAppendPrivate(append) = request else {
            return Ok(None);
        };
        let Some(invocation) = &mut self.invocation else {
            return Err(Refusal::NotForegroundOwner
                .because("no session-operation hook is awaited; the private lane is closed"));
        };
        if !placed.live || placed.parent != Some(invocation.parent) {
            return Err(Refusal::NotForegroundOwner.because(format!(
                "the private lane belongs to the awaited hook/run request {}",
                invocation.parent
            )));
        }
        let leaf = &append.session_leaf;
        if leaf.activation_epoch != invocation.activation_epoch
            || leaf.operation_id != invocation.operation_id
        {
            return Err(Refusal::InvalidRequest
                .because("the session_leaf names another activation or operation"));
        }
        if invocation.grant.as_deref() != Some(leaf.grant_id.as_str()) {
            return Err(Refusal::InvalidRequest.because(
                "the session_leaf grant was spent or is not this invocation's; use the \
                 successor of the last receipt",
            ));
        }
        invocation.grant = None;
        Ok(Some("private".into()))
    }

    /// A committed append gets its successor grant; a refused or failed one closes the
    /// lane for the rest of the invocation.
    fn settled(&mut self, _key: String, result: Option<&mut Value>) {
        let Some(result) = result else {
            return;
        };
        let successor = match &mut self.invocation {
            Some(invocation) => {
                let grant = mint_grant_id(&invocation.instance);
                invocation.grant = Some(grant.clone());
                json!({
                    "grant_id": grant,
                    "activation_epoch": invocation.activation_epoch,
                    "operation_id": invocation.operation_id,
                })
            }
            None => Value::Null,
        };
        if let Value::Object(receipt) = result {
            receipt.insert("successor".into(), successor);
        }
    }

    fn parent_settled(&mut self, parent: u64) {
        if self
            .invocation
            .as_ref()
            .is_some_and(|invocation| invocation.parent == parent)
        {
            self.invocation = None;
        }
    }

    fn initialize_settled(&mut self, _negotiated: bool) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::services::bound::{LeafRef, PrivateAppend};

    fn append(grant: &str, epoch: u64, operation: &str) -> ServiceRequest {
        ServiceRequest::SessionAppendPrivate(PrivateAppend {
            entry_type: "note".into(),
            data: json!({}),
            session_leaf: LeafRef {
                grant_id: grant.into(),
                activation_epoch: epoch,
                operation_id: operation.into(),
            },
        })
    }

    fn live(parent: u64) -> Placed {
        Placed {
            parent: Some(parent),
            live: true,
            independent: false,
        }
    }

    fn refusal(result: Result<Option<String>, ServiceRefusal>) -> Refusal {
        result.expect_err("refused").refusal
    }

    #[test]
    fn a_grant_is_spent_once_and_its_successor_is_next() {
        let mut lane = PrivateLane::default();
        let grant = lane.open(7, 2, "session-operation:1".into(), "i");
        let first = append(&grant, 2, "session-operation:1");
        assert_eq!(lane.admit(&first, live(7), &[]), Ok(Some("private".into())));
        // Spent while its append is in flight, and after.
        assert_eq!(
            refusal(lane.admit(&first, live(7), &[])),
            Refusal::InvalidRequest
        );
        let mut receipt = json!({"entry_id": "p1", "head": "p1"});
        lane.settled("private".into(), Some(&mut receipt));
        let successor = receipt["successor"]["grant_id"]
            .as_str()
            .unwrap()
            .to_string();
        assert_ne!(successor, grant);
        assert_eq!(
            refusal(lane.admit(&first, live(7), &[])),
            Refusal::InvalidRequest
        );
        let next = append(&successor, 2, "session-operation:1");
        assert!(lane.admit(&next, live(7), &[]).is_ok());
    }

    #[test]
    fn another_parent_epoch_or_operation_is_refused_and_settling_closes_the_lane() {
        let mut lane = PrivateLane::default();
        let grant = lane.open(7, 2, "session-operation:1".into(), "i");
        let good = append(&grant, 2, "session-operation:1");
        let stale = append(&grant, 1, "session-operation:1");
        let other = append(&grant, 2, "session-operation:9");
        assert_eq!(
            refusal(lane.admit(&good, live(8), &[])),
            Refusal::NotForegroundOwner
        );
        let settled = Placed {
            live: false,
            ..live(7)
        };
        assert_eq!(
            refusal(lane.admit(&good, settled, &[])),
            Refusal::NotForegroundOwner
        );
        assert_eq!(
            refusal(lane.admit(&stale, live(7), &[])),
            Refusal::InvalidRequest
        );
        assert_eq!(
            refusal(lane.admit(&other, live(7), &[])),
            Refusal::InvalidRequest
        );
        lane.parent_settled(7);
        assert_eq!(
            refusal(lane.admit(&good, live(7), &[])),
            Refusal::NotForegroundOwner
        );
        // A commit that lands after the invocation settled gets no successor.
        let mut late = json!({"entry_id": "p2", "head": "p2"});
        lane.settled("private".into(), Some(&mut late));
        assert_eq!(late["successor"], Value::Null);
    }
}
