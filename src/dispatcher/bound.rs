//! Requests for services the embedder bound (section 2; the Wave-1 requests of
//! sections 2.19-2.23): admission, owner precedence, hand-off to the service on a
//! thread of its own, and its answer on the way back.
//!
//! Admission runs on the dispatcher in this order, and the first failure answers the
//! extension with a [`Refusal`]: the feature was negotiated (`shortcut/register`, sent
//! inside `initialize`, needs it offered); the params are an object with an unsigned
//! `parent_request_id`; the owner (a live parent's own, else an explicit
//! `resource_owner` that matches this generation's issued triple); the closed params
//! and their bounds; the kind's own host state, through its guard (`super::guards`).

use std::sync::Arc;
use std::time::Instant;

use serde_json::{Map, Value};

use super::connection::{ChildKind, ChildRequest, Connection};
use super::guards::{Placed, Verdict};
use super::placement::{place, KnownParent};
use super::timers::Timer;
use super::Dispatcher;
use crate::manifest::ApiVersion;
use crate::model::events::{Diagnostic, GenerationRef};
use crate::model::frontend::CancelFlag;
use crate::services::bound::{
    Admission, ErrorFamily, Outcome, RawReply, RawService, Refusal, ServiceAnswer, ServiceCall,
    ServiceKind, ServiceMethod, ServiceRefusal, ServiceRequest,
};
use crate::services::ResourceOwner;
use crate::transport::ConnId;
use crate::wire::{codes, RequestId, ResponseError};

/// Where a request's owner came from.
pub(super) struct Admitted {
    pub(super) parent: Option<u64>,
    pub(super) owner: ResourceOwner,
    /// The parent had settled; the explicit owner was admitted.
    pub(super) independent: bool,
    /// What the kind's guard decided: the service serves it (with the key it holds
    /// while it waits), or the runtime answers it now or later.
    pub(super) verdict: Verdict,
}

impl Admitted {
    /// What the service is told about the request.
    pub(super) fn into_call(
        self,
        source: GenerationRef,
        method: ServiceMethod,
        cancelled: CancelFlag,
        reports: super::features::offering::CallReports,
    ) -> ServiceCall {
        ServiceCall {
            source,
            method,
            parent_request_id: self.parent,
            owner: self.owner,
            independent: self.independent,
            cancelled,
            reports,
        }
    }
}

/// Runs a service on a thread of its own: it may block, and the dispatcher never waits
/// for an embedder. A serial kind's lane only enqueues, here, so that its order is the
/// admission order.
pub(super) fn run_service(
    service: Arc<dyn RawService>,
    call: ServiceCall,
    request: ServiceRequest,
    reply: RawReply,
) -> std::io::Result<()> {
    if service.inline() {
        service.serve(call, request, reply);
        return Ok(());
    }
    std::thread::Builder::new()
        .name("octet-service".into())
        .spawn(move || service.serve(call, request, reply))
        .map(|_| ())
}

impl Dispatcher {
    /// Admits a request for a bound service, or refuses it.
    pub(super) fn on_bound_request(
        &mut self,
        conn: ConnId,
        id: &RequestId,
        method: ServiceMethod,
        params: Option<&Value>,
    ) -> Result<(), ResponseError> {
        // A row of another API version is refused in this connection's vocabulary.
        let api = self.conns.get(&conn).expect("connection is live").api;
        let family = match api {
            _ if method.apis().contains(&api) => method.family(),
            ApiVersion::V0_3 => ErrorFamily::V0_3Table,
            _ => ErrorFamily::ContractTokens,
        };
        let (request, mut admitted) = self
            .admit_bound(conn, method, params, true)
            .map_err(|refusal| family.respond(&refusal))?;
        let c = self.conns.get_mut(&conn).expect("connection is live");
        let Some(service) = c.services.get(method.kind()).cloned() else {
            let refusal = Refusal::UnsupportedFeature
                .because(format!("no {} service is bound", method.kind()));
            return Err(family.respond(&refusal));
        };
        let cancelled = CancelFlag::default();
        let (key, held) = match std::mem::replace(&mut admitted.verdict, Verdict::Serve(None)) {
            Verdict::Answer(result) => {
                self.answer_with(conn, id, &result, false);
                return Ok(());
            }
            Verdict::Serve(key) => (key, false),
            Verdict::Hold(key) => (Some(key), true),
        };
        c.children.insert(
            id.clone(),
            ChildRequest {
                kind: ChildKind::Service { method, key },
                // An independently answered request outlives its settled parent; the
                // API 0.3 requests name none.
                parent: admitted.parent.filter(|_| !admitted.independent),
                cancelled: cancelled.clone(),
            },
        );
        if held {
            // The runtime answers it from the kind's state: when the state changes, or
            // at the guard's next deadline.
            self.answer_held(conn, method.kind());
            return Ok(());
        }
        let reports = super::features::offering::call_reports(&self.shared, &c.guards, method);
        let call = admitted.into_call(c.source.clone(), method, cancelled.clone(), reports);
        let reply = RawReply::new(
            conn,
            id.clone(),
            method,
            cancelled,
            self.service_answer_sender.clone(),
        );
        // Without a thread the reply is dropped, which answers the extension with an
        // internal error.
        if let Err(error) = run_service(service, call, request, reply) {
            let source = c.source.clone();
            self.shared.events.diagnostic(
                &source,
                Diagnostic::Refused {
                    method: method.name().into(),
                    reason: format!("no thread for the service: {error}"),
                },
            );
        }
        Ok(())
    }

    fn admit_bound(
        &mut self,
        conn: ConnId,
        method: ServiceMethod,
        params: Option<&Value>,
        as_request: bool,
    ) -> Result<(ServiceRequest, Admitted), ServiceRefusal> {
        let c = self.conns.get_mut(&conn).expect("connection is live");
        if !method.apis().contains(&c.api) {
            return Err(Refusal::UnsupportedFeature
                .because(format!("{method} is not a method of API {}", c.api)));
        }
        if method.is_notification() && as_request {
            return Err(Refusal::InvalidRequest.because(format!(
                "{method} is a notification: send it without an id, and expect no answer"
            )));
        }
        let initialize = c.pending.initialize_id();
        if let Some(feature) = method.kind().feature() {
            let negotiated = match (&c.negotiated, initialize) {
                (Some(n), _) => n.features.contains(feature),
                // Registrations are written inside `initialize`, before the answer that
                // selects the feature: offered is enough until then (section 2.20).
                (None, Some(init)) => {
                    method.admission() == Admission::InsideInitialize
                        && c.pending.offers(init, feature)
                }
                (None, None) => false,
            };
            if !negotiated {
                return Err(
                    Refusal::UnsupportedFeature.because(format!("{feature} was not negotiated"))
                );
            }
        }
        let empty = Map::new();
        let params = match params {
            Some(Value::Object(map)) => map,
            None => &empty,
            Some(_) => return Err(Refusal::InvalidRequest.because("params must be an object")),
        };
        if method.admission() == Admission::None {
            // A capability's methods were checked inbound (the API 0.3 contract), a
            // feature's just above; the params are a closed model without parent or
            // owner.
            let mut request = ServiceRequest::parse(method, params)?;
            let placed = Placed {
                parent: None,
                live: false,
                independent: false,
            };
            let owner = c.owner.clone();
            let verdict = guard_decide(c, method, &mut request, placed, &owner)?;
            let admitted = Admitted {
                parent: None,
                owner,
                independent: false,
                verdict,
            };
            return Ok((request, admitted));
        }
        if method.kind().feature().is_none() {
            return Err(Refusal::UnsupportedFeature.because("not a feature of this API version"));
        }
        let parent = params
            .get("parent_request_id")
            .ok_or_else(|| Refusal::InvalidRequest.because("parent_request_id is required"))?
            .as_u64()
            .ok_or_else(|| {
                Refusal::InvalidRequest.because("parent_request_id must be an unsigned integer")
            })?;
        let known = KnownParent {
            is_initialize: initialize == Some(parent),
            live_call: c.pending.is_call(&parent),
            live_tool_call: c.pending.is_tool_call(&parent),
            live_delegating: c.pending.is_delegating(&parent),
            retained_owner: super::features::offering::retains_owner(&c.features()),
            pending: c.pending.contains_key(&parent),
            issued: parent >= 1 && parent < c.peek_next_request_id(),
            tombstoned: c.tombstones.get(parent, Instant::now()).is_some(),
        };
        let explicit = params.get("resource_owner").map(ResourceOwner::parse);
        let placement = place(
            method.admission(),
            method.name(),
            parent,
            known,
            explicit,
            &c.owner,
        )?;
        let mut request = ServiceRequest::parse(method, params)?;
        // The kind's own host state has the last word (`super::guards`).
        let placed = Placed {
            parent: Some(parent),
            live: placement.live,
            independent: placement.independent,
        };
        let verdict = guard_decide(c, method, &mut request, placed, &placement.owner)?;
        let admitted = Admitted {
            parent: Some(parent),
            owner: placement.owner,
            independent: placement.independent,
            verdict,
        };
        Ok((request, admitted))
    }

    /// A notification row of the table (`providers/complete`): handed to the bound
    /// service on a thread of its own; nothing is answered.
    pub(super) fn on_bound_notification(
        &mut self,
        conn: ConnId,
        method: ServiceMethod,
        params: &Value,
    ) -> Result<(), String> {
        let (request, admitted) = self
            .admit_bound(conn, method, Some(params), false)
            .map_err(|refusal| refusal.to_string())?;
        let c = self.conns.get_mut(&conn).expect("connection is live");
        let Some(service) = c.services.get(method.kind()).cloned() else {
            return Err(format!("no {} service is bound", method.kind()));
        };
        let cancelled = CancelFlag::default();
        let reports = super::features::offering::call_reports(&self.shared, &c.guards, method);
        let call = admitted.into_call(c.source.clone(), method, cancelled.clone(), reports);
        let reply = RawReply::detached(method, cancelled);
        run_service(service, call, request, reply)
            .map_err(|e| format!("no thread for the service: {e}"))
    }

    /// A service answered. Answers for requests that were meanwhile dropped (parent
    /// settled, cancelled, generation gone) are ignored.
    pub(super) fn on_service_answer(&mut self, answer: ServiceAnswer) {
        let ServiceAnswer { conn, id, outcome } = answer;
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        let Some(child) = c.children.remove(&id) else {
            return;
        };
        let (method, key) = match child.kind {
            ChildKind::Service { method, key } => (method, key),
            ChildKind::Brokered => return self.on_brokered_answer(conn, &id, outcome),

            _ => return,
        };
        let mut outcome = outcome;
        if let (Some(key), Some(guard)) = (key, c.guards.get_mut(method.kind())) {
            if let Outcome::Answered(result) = outcome {
                outcome = match guard.complete_answer(&key, result) {
                    Ok(completed) => Outcome::Answered(completed),
                    Err(why) => Outcome::Broken(why),
                };
            }
            let result = match &mut outcome {
                Outcome::Answered(result) => Some(result),
                _ => None,
            };
            guard.settled(key, result);
        }
        match outcome {
            Outcome::Answered(result) => {
                self.answer_with(conn, &id, &result, false);
            }
            Outcome::Refused(refusal) => {
                self.send_error(conn, &id, &method.family().respond(&refusal))
            }
            Outcome::Broken(why) => self.service_failed(
                conn,
                &id,
                method,
                format!("the bound service's answer broke the method's rules: {why}"),
                "answered wrongly",
            ),
            Outcome::Dropped | Outcome::Error(_) => self.service_failed(
                conn,
                &id,
                method,
                "the bound service dropped the request without answering".into(),
                "did not answer",
            ),
        }
    }

    /// The service failed the request: the host hears `reason`, the extension -32603.
    fn service_failed(
        &mut self,
        conn: ConnId,
        id: &RequestId,
        method: ServiceMethod,
        reason: String,
        what: &str,
    ) {
        if let Some(c) = self.conns.get(&conn) {
            let method_name = method.name().into();
            self.shared.events.diagnostic(
                &c.source,
                Diagnostic::Refused {
                    method: method_name,
                    reason,
                },
            );
        }
        let message = format!(
            "internal error: the host's {} service {what}",
            method.kind()
        );
        self.send_error(
            conn,
            id,
            &ResponseError::new(codes::INTERNAL_ERROR, message),
        );
    }

    /// Answers the held requests of `kind` on `conn` that its guard can answer now,
    /// and schedules its next deadline.
    pub(super) fn answer_held(&mut self, conn: ConnId, kind: ServiceKind) {
        let now = Instant::now();
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        let kind = c.guards.decided_by(kind);
        let Some(guard) = c.guards.get_mut(kind) else {
            return;
        };
        let ready = guard.ready(now);
        let deadline = guard.next_deadline();
        for (key, outcome) in ready {
            let Some(c) = self.conns.get_mut(&conn) else {
                return;
            };
            let guards = &c.guards;
            let id = c.children.iter().find_map(|(id, child)| match &child.kind {
                ChildKind::Service {
                    method,
                    key: Some(held),
                } if guards.decided_by(method.kind()) == kind
                    && method.is_guarded()
                    && *held == key =>
                {
                    Some(id.clone())
                }
                _ => None,
            });
            let Some(id) = id else {
                continue;
            };
            let method = match c.children.remove(&id).map(|child| child.kind) {
                Some(ChildKind::Service { method, .. }) => method,
                _ => continue,
            };
            match outcome {
                Ok(result) => self.answer_with(conn, &id, &result, false),
                Err(refusal) => self.send_error(conn, &id, &method.family().respond(&refusal)),
            }
        }
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        if let Some(at) = deadline.filter(|&at| c.guards.wants_held_timer(kind, at, now)) {
            self.timers.schedule(at, Timer::HeldDeadline { conn, kind });
        }
    }

    /// `initialize` settled: requests still waiting were cancelled with it, and each
    /// kind's guard learns whether its kind was negotiated (without `shortcuts`, no
    /// shortcut stays admitted, section 2.20).
    pub(super) fn initialize_settled(&mut self, conn: ConnId) {
        if let Some(c) = self.conns.get_mut(&conn) {
            let features = c.features();
            c.guards.initialize_settled(features);
        }
    }
}

/// The kind's guard decides `request` (`super::guards`), given the keys its other
/// requests still hold; a kind without a guard has the service serve everything.
fn guard_decide(
    c: &mut Connection,
    method: ServiceMethod,
    request: &mut ServiceRequest,
    placed: Placed,
    owner: &ResourceOwner,
) -> Result<Verdict, ServiceRefusal> {
    let Connection {
        guards, children, ..
    } = c;
    let Some(guard) = guards.get_mut(method.kind()) else {
        if method.is_guarded() {
            return Err(Refusal::UnsupportedFeature
                .because(format!("{method} has no runtime state on this connection")));
        }
        return Ok(Verdict::Serve(None));
    };
    let pending: Vec<&str> = children
        .values()
        .filter_map(|child| match &child.kind {
            ChildKind::Service {
                method: other,
                key: Some(key),
            } if other.kind() == method.kind() => Some(key.as_str()),
            _ => None,
        })
        .collect();
    let verdict = guard.decide(request, placed, owner, &pending)?;
    match (&verdict, method.is_guarded()) {
        (Verdict::Serve(_), true) => Err(Refusal::UnsupportedFeature.because(format!(
            "the runtime answers {method} itself; it cannot be served"
        ))),
        _ => Ok(verdict),
    }
}
