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

use serde_json::{Map, Value};

use super::connection::{ChildKind, ChildRequest};
use super::guards::Placed;
use super::Dispatcher;
use crate::model::events::{Diagnostic, GenerationRef};
use crate::model::frontend::CancelFlag;
use crate::services::bound::{
    Admission, ErrorFamily, Outcome, RawReply, RawService, Refusal, ServiceAnswer, ServiceCall,
    ServiceMethod, ServiceRefusal, ServiceRequest,
};
use crate::services::ResourceOwner;
use crate::transport::ConnId;
use crate::wire::{codes, RequestId, ResponseError};

/// Where a request's owner came from.
struct Admitted {
    parent: Option<u64>,
    owner: ResourceOwner,
    /// The parent had settled; the explicit owner was admitted.
    independent: bool,
    /// What the kind's guard gave the request to hold while it waits.
    key: Option<String>,
}

impl Admitted {
    /// What the service is told about the request.
    fn into_call(
        self,
        source: GenerationRef,
        method: ServiceMethod,
        cancelled: CancelFlag,
    ) -> ServiceCall {
        ServiceCall {
            source,
            method,
            parent_request_id: self.parent,
            owner: self.owner,
            independent: self.independent,
            cancelled,
        }
    }
}

/// Runs a service on a thread of its own: it may block, and the dispatcher never waits
/// for an embedder.
fn run_service(
    service: Arc<dyn RawService>,
    call: ServiceCall,
    request: ServiceRequest,
    reply: RawReply,
) -> std::io::Result<()> {
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
        let family = method.family();
        let (request, admitted) = self
            .admit_bound(conn, method, params)
            .map_err(|refusal| refusal_response(family, &refusal))?;
        let c = self.conns.get_mut(&conn).expect("connection is live");
        let Some(service) = c.services.get(method.kind()).cloned() else {
            let refusal = Refusal::UnsupportedFeature
                .because(format!("no {} service is bound", method.kind()));
            return Err(refusal_response(family, &refusal));
        };
        let cancelled = CancelFlag::default();
        let key = admitted.key.clone();
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
        let call = admitted.into_call(c.source.clone(), method, cancelled.clone());
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
    ) -> Result<(ServiceRequest, Admitted), ServiceRefusal> {
        let c = self.conns.get_mut(&conn).expect("connection is live");
        if !method.apis().contains(&c.api) {
            return Err(Refusal::UnsupportedFeature
                .because(format!("{method} is not a method of API {}", c.api)));
        }
        if method.admission() == Admission::None {
            // The negotiated capability was checked inbound (the API 0.3 contract);
            // the params are a closed model without parent or owner.
            let empty = Map::new();
            let params = match params {
                Some(Value::Object(map)) => map,
                None => &empty,
                Some(_) => return Err(Refusal::InvalidRequest.because("params must be an object")),
            };
            let request = ServiceRequest::parse(method, params)?;
            let admitted = Admitted {
                parent: None,
                owner: c.owner.clone(),
                independent: false,
                key: None,
            };
            return Ok((request, admitted));
        }
        let Some(feature) = method.kind().feature() else {
            return Err(Refusal::UnsupportedFeature.because("not a feature of this API version"));
        };
        let initialize = c.pending.initialize_id();
        let negotiated = match (&c.negotiated, initialize) {
            (Some(n), _) => n.features.contains(feature),
            // Registrations are written inside `initialize`, before the answer that
            // selects the feature: offered is enough until then (section 2.20).
            (None, Some(init)) => {
                method.admission() == Admission::InsideInitialize && c.pending.offers(init, feature)
            }
            (None, None) => false,
        };
        if !negotiated {
            return Err(
                Refusal::UnsupportedFeature.because(format!("{feature} was not negotiated"))
            );
        }
        let empty = Map::new();
        let params = match params {
            Some(Value::Object(map)) => map,
            None => &empty,
            Some(_) => return Err(Refusal::InvalidRequest.because("params must be an object")),
        };
        let parent = params
            .get("parent_request_id")
            .ok_or_else(|| Refusal::InvalidRequest.because("parent_request_id is required"))?
            .as_u64()
            .ok_or_else(|| {
                Refusal::InvalidRequest.because("parent_request_id must be an unsigned integer")
            })?;
        // Owner precedence (section 2): a live parent's owner wins and an explicit
        // field is ignored; with a settled parent only this generation's issued triple
        // is admitted; anything else is refused, never coerced.
        let live = match method.admission() {
            Admission::InsideInitialize => initialize == Some(parent),
            _ => c.pending.is_call(&parent),
        };
        let admitted = if live {
            Admitted {
                parent: Some(parent),
                owner: c.owner.clone(),
                independent: false,
                key: None,
            }
        } else {
            let issued = parent >= 1 && parent < c.peek_next_request_id();
            let pending = c.pending.contains_key(&parent);
            let explicit = params.get("resource_owner").map(ResourceOwner::parse);
            match explicit {
                Some(Ok(owner)) if issued && !pending && owner == c.owner => Admitted {
                    parent: Some(parent),
                    owner,
                    independent: true,
                    key: None,
                },
                Some(Ok(_)) if !issued || pending => {
                    return Err(Refusal::NotForegroundOwner.because(format!(
                        "request {parent} is not a host request this generation settled"
                    )))
                }
                Some(Ok(_)) => {
                    return Err(Refusal::NotForegroundOwner
                        .because("resource_owner is not the owner issued to this process"))
                }
                Some(Err(e)) => return Err(Refusal::NotForegroundOwner.because(e.to_string())),
                None => {
                    return Err(Refusal::NotForegroundOwner.because(format!(
                        "request {parent} is not an active host request, and no resource_owner was given"
                    )))
                }
            }
        };
        let request = ServiceRequest::parse(method, params)?;
        // The kind's own host state has the last word (`super::guards`).
        let mut admitted = admitted;
        if let Some(guard) = c.guards.get_mut(method.kind()) {
            let pending: Vec<&str> = c
                .children
                .values()
                .filter_map(|child| match &child.kind {
                    ChildKind::Service {
                        method: other,
                        key: Some(key),
                    } if other.kind() == method.kind() => Some(key.as_str()),
                    _ => None,
                })
                .collect();
            let placed = Placed {
                live,
                independent: admitted.independent,
            };
            admitted.key = guard.admit(&request, placed, &pending)?;
        }
        Ok((request, admitted))
    }

    /// `providers/complete` (API 0.3 `provider_catalog`): handed to the bound service
    /// on a thread of its own; nothing is answered.
    pub(super) fn on_bound_notification(
        &mut self,
        conn: ConnId,
        params: &Value,
    ) -> Result<(), String> {
        let method = ServiceMethod::ProvidersComplete;
        let (request, admitted) = self
            .admit_bound(conn, method, Some(params))
            .map_err(|refusal| refusal.to_string())?;
        let c = self.conns.get_mut(&conn).expect("connection is live");
        let Some(service) = c.services.get(method.kind()).cloned() else {
            return Err(format!("no {} service is bound", method.kind()));
        };
        let cancelled = CancelFlag::default();
        let call = admitted.into_call(c.source.clone(), method, cancelled.clone());
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
        if let (Some(key), Some(guard)) = (key, c.guards.get_mut(method.kind())) {
            guard.settled(key, matches!(outcome, Outcome::Answered(_)));
        }
        match outcome {
            Outcome::Answered(result) => {
                self.answer_with(conn, &id, &result, false);
            }
            Outcome::Refused(refusal) => {
                self.send_error(conn, &id, &refusal_response(method.family(), &refusal))
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

    /// `initialize` settled: requests still waiting were cancelled with it, and each
    /// kind's guard learns whether its kind was negotiated (without `shortcuts`, no
    /// shortcut stays admitted, section 2.20).
    pub(super) fn initialize_settled(&mut self, conn: ConnId) {
        if let Some(c) = self.conns.get_mut(&conn) {
            let features = c.features();
            c.guards.initialize_settled(|kind| {
                kind.feature()
                    .is_none_or(|feature| features.contains(feature))
            });
        }
    }
}

/// The error an extension receives for `refusal` in `family`: the Wave-1 vocabulary
/// (section 3), or API 0.3's fixed error table with the contract name and detail in
/// `data` (SUPPLEMENT "Error table").
fn refusal_response(family: ErrorFamily, refusal: &ServiceRefusal) -> ResponseError {
    if family == ErrorFamily::Wave1Tokens {
        return refusal.to_response();
    }
    let (code, message) = match refusal.refusal {
        Refusal::UnsupportedFeature => (codes::METHOD_NOT_FOUND, "unknown or unnegotiated method"),
        _ => (codes::INVALID_PARAMS, "invalid params"),
    };
    let mut error = ResponseError::new(code, message);
    error.data = Some(serde_json::json!({
        "refusal": refusal.refusal.name(),
        "reason": refusal.to_string(),
    }));
    error
}
