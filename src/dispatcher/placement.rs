//! Where the owner rules of section 2 place an extension's request to a bound service:
//! what the connection knows about the parent it names, and the owner it is served for
//! under the row's [`Admission`].

use crate::services::bound::{Admission, Refusal, ServiceRefusal};
use crate::services::{OwnerError, ResourceOwner};

/// What the connection knows about the parent a request names.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct KnownParent {
    /// It is the pending `initialize` request.
    pub(super) is_initialize: bool,
    /// It is a live embedder call (any host request a person waits on).
    pub(super) live_call: bool,
    /// It is a live `tool/call`.
    pub(super) live_tool_call: bool,
    /// It is a live `tool/call` or `command/execute`: a parent of delegated sessions
    /// (section 2.13).
    pub(super) live_delegating: bool,
    /// The retained-owner feature was negotiated
    /// ([`super::features::offering::RETAINED_OWNER`]): a request admitted under a live tool call
    /// or command may carry the issued owner (section 2.18).
    pub(super) retained_owner: bool,
    /// It is still pending, of whatever kind.
    pub(super) pending: bool,
    /// This generation issued the id (it lies below the next request id).
    pub(super) issued: bool,
    /// The host cancelled it and still remembers the id (section 1.9).
    pub(super) tombstoned: bool,
}

/// Where the owner rules placed a request.
#[derive(Debug, PartialEq)]
pub(super) struct Placement {
    pub(super) owner: ResourceOwner,
    /// The parent had settled and the explicit owner was admitted.
    pub(super) independent: bool,
    /// The parent is live in the sense of the row's admission.
    pub(super) live: bool,
}

/// The owner rules of section 2 ("Optional Wave-1 resource_owner") for a request that
/// names `parent`, by the row's [`Admission`]: a live parent's owner wins and an
/// explicit field is ignored; with a settled parent only the issued triple is admitted,
/// answered independently; a cancelled parent's children, and missing, foreign or
/// stale owners, are refused, never coerced.
pub(super) fn place(
    admission: Admission,
    method: &str,
    parent: u64,
    known: KnownParent,
    explicit: Option<Result<ResourceOwner, OwnerError>>,
    issued: &ResourceOwner,
) -> Result<Placement, ServiceRefusal> {
    if admission == Admission::LiveToolOrCommand && explicit.is_some() && !known.retained_owner {
        return Err(Refusal::UnsupportedFeature.because(format!(
            "{method} with resource_owner needs {}, which was not negotiated; name a live \
             parent_request_id",
            super::features::offering::RETAINED_OWNER.as_str()
        )));
    }
    if known.tombstoned {
        return Err(Refusal::NotForegroundOwner.because(format!(
            "request {parent} was cancelled; the requests made for it are refused"
        )));
    }
    let live = match admission {
        Admission::InsideInitialize => known.is_initialize,
        Admission::LiveToolCall => known.live_tool_call,
        Admission::LiveToolOrCommand => known.live_delegating,
        _ => known.live_call,
    };
    match admission {
        Admission::SettledOwnerOnly if known.pending => {
            return Err(Refusal::InvalidRequest.because(format!(
                "{method} is sent only after its parent settled; request {parent} is still live"
            )))
        }
        Admission::InvocationGrant if !live => {
            return Err(Refusal::NotForegroundOwner.because(format!(
                "{method} with a session_leaf is admitted only while its hook/run is \
                 awaited; request {parent} is not live"
            )))
        }
        Admission::LiveToolCall if !live => {
            return Err(Refusal::NotForegroundOwner.because(format!(
                "{method} is admitted only for a live tool/call; request {parent} is not one"
            )))
        }
        Admission::LiveToolOrCommand if live => {
            // With the retained-owner contract an explicit owner must match the live
            // parent's (section 2.18).
            return match explicit {
                Some(Ok(owner)) if &owner != issued => Err(Refusal::NotForegroundOwner
                    .because("resource_owner is not the owner of the live parent")),
                Some(Err(e)) => Err(Refusal::NotForegroundOwner.because(e.to_string())),
                _ => Ok(Placement {
                    owner: issued.clone(),
                    independent: false,
                    live,
                }),
            };
        }
        Admission::LiveToolOrCommand if explicit.is_none() => {
            return Err(Refusal::NotForegroundOwner.because(format!(
                "{method} needs a live tool/call or command/execute as its parent; request \
                 {parent} is not one"
            )))
        }
        _ if live => {
            return Ok(Placement {
                owner: issued.clone(),
                independent: false,
                live,
            })
        }
        _ => {}
    }
    match explicit {
        Some(Ok(owner)) if known.issued && !known.pending && &owner == issued => Ok(Placement {
            owner,
            independent: true,
            live,
        }),
        Some(Ok(_)) if !known.issued || known.pending => Err(Refusal::NotForegroundOwner.because(
            format!("request {parent} is not a host request this generation settled"),
        )),
        Some(Ok(_)) => Err(Refusal::NotForegroundOwner
            .because("resource_owner is not the owner issued to this process")),
        Some(Err(e)) => Err(Refusal::NotForegroundOwner.because(e.to_string())),
        None => Err(Refusal::NotForegroundOwner.because(format!(
            "request {parent} is not an active host request, and no resource_owner was given"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::services::bound::ServiceMethod;
    use serde_json::json;

    fn issued() -> ResourceOwner {
        ResourceOwner::parse(&json!({
            "session_id": "s",
            "extension_instance_id": "i",
            "process_generation": 1
        }))
        .unwrap()
    }

    fn foreign() -> ResourceOwner {
        ResourceOwner::parse(&json!({
            "session_id": "other",
            "extension_instance_id": "i",
            "process_generation": 1
        }))
        .unwrap()
    }

    /// A parent this generation issued and that settled.
    fn settled() -> KnownParent {
        KnownParent {
            issued: true,
            ..KnownParent::default()
        }
    }

    /// A live `tool/call` parent.
    fn live_tool_call() -> KnownParent {
        KnownParent {
            issued: true,
            pending: true,
            live_call: true,
            live_tool_call: true,
            ..KnownParent::default()
        }
    }

    fn place_m(
        m: ServiceMethod,
        parent: u64,
        known: KnownParent,
        explicit: Option<Result<ResourceOwner, OwnerError>>,
        issued: &ResourceOwner,
    ) -> Result<Placement, ServiceRefusal> {
        place(m.admission(), m.name(), parent, known, explicit, issued)
    }

    fn place_as(
        admission: Admission,
        parent: u64,
        known: KnownParent,
        explicit: Option<Result<ResourceOwner, OwnerError>>,
        issued: &ResourceOwner,
    ) -> Result<Placement, ServiceRefusal> {
        place(admission, "a/method", parent, known, explicit, issued)
    }

    fn refusal(result: Result<Placement, ServiceRefusal>) -> Refusal {
        result.expect_err("refused").refusal
    }

    #[test]
    fn a_live_parent_wins_over_an_explicit_owner() {
        let placed = place_m(
            ServiceMethod::ComposerSet,
            2,
            live_tool_call(),
            Some(Ok(foreign())),
            &issued(),
        )
        .unwrap();
        assert_eq!(placed.owner, issued());
        assert!(!placed.independent && placed.live);
    }

    #[test]
    fn a_settled_parent_needs_the_issued_owner() {
        let m = ServiceMethod::ComposerSet;
        let placed = place_m(m, 2, settled(), Some(Ok(issued())), &issued()).unwrap();
        assert!(placed.independent && !placed.live);
        let foreign = place_m(m, 2, settled(), Some(Ok(foreign())), &issued());
        assert_eq!(refusal(foreign), Refusal::NotForegroundOwner);
        assert_eq!(
            refusal(place_m(m, 2, settled(), None, &issued())),
            Refusal::NotForegroundOwner
        );
        let never = KnownParent::default();
        assert_eq!(
            refusal(place_m(m, 99, never, Some(Ok(issued())), &issued())),
            Refusal::NotForegroundOwner
        );
    }

    #[test]
    fn a_cancelled_parent_refuses_its_children_even_with_the_issued_owner() {
        let tombstoned = KnownParent {
            tombstoned: true,
            ..settled()
        };
        let placed = place_m(
            ServiceMethod::SessionAppendEntry,
            2,
            tombstoned,
            Some(Ok(issued())),
            &issued(),
        );
        assert_eq!(refusal(placed), Refusal::NotForegroundOwner);
    }

    #[test]
    fn every_admission_places_by_its_own_rule() {
        // Today's table has no row of some admissions yet; `place` reads only the
        // admission it is given.
        let placed = |admission, known, explicit| {
            place_as(admission, 2, known, explicit, &issued()).map(|p| p.independent)
        };
        // Live tool call: only a live `tool/call`, never a settled one or another call.
        assert_eq!(
            placed(Admission::LiveToolCall, live_tool_call(), None),
            Ok(false)
        );
        let other_call = KnownParent {
            live_tool_call: false,
            ..live_tool_call()
        };
        assert_eq!(
            refusal_of(placed(Admission::LiveToolCall, other_call, None)),
            Refusal::NotForegroundOwner
        );
        assert_eq!(
            refusal_of(placed(
                Admission::LiveToolCall,
                settled(),
                Some(Ok(issued()))
            )),
            Refusal::NotForegroundOwner
        );
        // Settled owner only: a live parent is invalid_request; a settled one with the
        // issued owner is answered independently.
        assert_eq!(
            refusal_of(placed(
                Admission::SettledOwnerOnly,
                live_tool_call(),
                Some(Ok(issued()))
            )),
            Refusal::InvalidRequest
        );
        assert_eq!(
            placed(Admission::SettledOwnerOnly, settled(), Some(Ok(issued()))),
            Ok(true)
        );
        assert_eq!(
            refusal_of(placed(Admission::SettledOwnerOnly, settled(), None)),
            Refusal::NotForegroundOwner
        );
        // Inside initialize: the pending `initialize` is the live parent.
        let initialize = KnownParent {
            is_initialize: true,
            pending: true,
            issued: true,
            ..KnownParent::default()
        };
        assert_eq!(
            placed(Admission::InsideInitialize, initialize, None),
            Ok(false)
        );
    }

    #[test]
    fn delegated_requests_need_a_delegating_parent_and_the_retained_owner_feature_for_an_owner() {
        let delegating = KnownParent {
            live_delegating: true,
            ..live_tool_call()
        };
        let retained = |known: KnownParent| KnownParent {
            retained_owner: true,
            ..known
        };
        let placed = |known, explicit| {
            place_as(Admission::LiveToolOrCommand, 2, known, explicit, &issued())
                .map(|p| p.independent)
        };
        assert_eq!(placed(delegating, None), Ok(false));
        // A live call that is not a tool call or command (a prompt handler) is no parent.
        let prompt = KnownParent {
            live_delegating: false,
            ..live_tool_call()
        };
        assert_eq!(
            refusal_of(placed(prompt, None)),
            Refusal::NotForegroundOwner
        );
        // An explicit owner without the retained-owner feature is unsupported.
        assert_eq!(
            refusal_of(placed(delegating, Some(Ok(issued())))),
            Refusal::UnsupportedFeature
        );
        // With it: a live parent's owner must match; a settled parent's issued owner is
        // admitted independently; a cancelled parent is refused.
        assert_eq!(placed(retained(delegating), Some(Ok(issued()))), Ok(false));
        assert_eq!(
            refusal_of(placed(retained(delegating), Some(Ok(foreign())))),
            Refusal::NotForegroundOwner
        );
        assert_eq!(placed(retained(settled()), Some(Ok(issued()))), Ok(true));
        let tombstoned = KnownParent {
            tombstoned: true,
            ..retained(settled())
        };
        assert_eq!(
            refusal_of(placed(tombstoned, Some(Ok(issued())))),
            Refusal::NotForegroundOwner
        );
    }

    fn refusal_of(result: Result<bool, ServiceRefusal>) -> Refusal {
        result.expect_err("refused").refusal
    }
}
