//! Extension-originated requests (section 2): id rules, parent correlation, and the
//! frontend-answered methods `confirmation/request` (2.2) and `input/request` (2.7).

use serde_json::{json, Value};

use super::connection::{Answer, ChildKind, ChildRequest};
use super::route::{Answerer, HostMethod, Route};
use super::{Dispatcher, FrontendAnswer};
use crate::limits::{
    MAX_CHILD_IDS_PER_GENERATION, MAX_INPUT_ANSWER_BYTES, MAX_INPUT_PROMPT_BYTES,
    MAX_OUTSTANDING_CHILD_REQUESTS,
};
use crate::manifest::ApiVersion;
use crate::model::events::Diagnostic;
use crate::model::frontend::{CancelFlag, ConfirmationRequest, InputRequest};
use crate::negotiation::Feature;
use crate::services::bound::Refusal;
use crate::transport::{ConnId, OutboundFrame};
use crate::wire::{codes, Request, RequestId, ResponseError};

/// Why an extension-originated request is refused, with its JSON-RPC error.
fn refusal(code: i64, message: impl Into<String>) -> ResponseError {
    ResponseError::new(code, message)
}

/// The answer to a request no route takes. A method of an optional feature this host
/// does not offer gets the Wave-1 vocabulary's token on API 0.2 and 0.4, not "unknown
/// method" (section 3).
fn unknown_method(api: ApiVersion, method: &str) -> ResponseError {
    match Feature::of_request(method) {
        Some(feature) if api.has_v0_2_fields() && api != ApiVersion::V0_3 => {
            Refusal::UnsupportedFeature
                .because(format!(
                    "{method} needs the {feature} feature, which this host did not offer"
                ))
                .to_response()
        }
        _ => refusal(codes::METHOD_NOT_FOUND, "unknown or unnegotiated method"),
    }
}

impl Dispatcher {
    /// Reports that a request of `method` from `conn` was refused, and why.
    pub(super) fn report_refused(&self, conn: ConnId, method: &str, reason: String) {
        if let Some(c) = self.conns.get(&conn) {
            self.shared.events.diagnostic(
                &c.source,
                Diagnostic::Refused {
                    method: method.to_string(),
                    reason,
                },
            );
        }
    }

    /// An extension-originated request.
    pub(super) fn on_extension_request(&mut self, conn: ConnId, request: Request) {
        let Request { id, method, params } = request;
        match self.admit_child(conn, &id, &method, params.as_ref()) {
            Ok(()) => {}
            Err(error) => {
                if let Some(c) = self.conns.get(&conn) {
                    self.shared.events.diagnostic(
                        &c.source,
                        Diagnostic::Refused {
                            method: method.clone(),
                            reason: error.message.clone(),
                        },
                    );
                }
                self.send_error(conn, &id, &error);
            }
        }
    }

    fn admit_child(
        &mut self,
        conn: ConnId,
        id: &RequestId,
        method: &str,
        params: Option<&Value>,
    ) -> Result<(), ResponseError> {
        let Some(c) = self.conns.get_mut(&conn) else {
            return Ok(());
        };
        if c.children.contains_key(id) || c.child_ids_used.contains(id) {
            return Err(refusal(
                codes::INVALID_REQUEST,
                format!("request id {id} was already used"),
            ));
        }
        if c.children.len() >= MAX_OUTSTANDING_CHILD_REQUESTS {
            return Err(refusal(
                codes::RESOURCE_EXHAUSTED,
                format!("at most {MAX_OUTSTANDING_CHILD_REQUESTS} requests may be outstanding"),
            ));
        }
        if c.child_ids_used.len() >= MAX_CHILD_IDS_PER_GENERATION {
            return Err(refusal(
                codes::RESOURCE_EXHAUSTED,
                format!("at most {MAX_CHILD_IDS_PER_GENERATION} request ids per generation"),
            ));
        }
        c.child_ids_used.insert(id.clone());
        match Route::request(method, c.api, &c.features(), params) {
            Some(Route::Bound(bound)) => self.on_bound_request(conn, id, bound, params),
            Some(Route::Host(host)) => match host.answerer() {
                Answerer::Broker => {
                    self.on_brokered_request(conn, id, host, params);
                    Ok(())
                }
                Answerer::Runtime => {
                    let params = params.cloned().unwrap_or(Value::Null);
                    let result = self.on_service_request(conn, host, &params)?;
                    self.answer_with(conn, id, &result, false);
                    if matches!(
                        host,
                        HostMethod::ToolsRegister | HostMethod::ToolsUnregister
                    ) {
                        self.check_catalog_ack(conn);
                    }
                    Ok(())
                }
                Answerer::Frontend => self.on_frontend_question(conn, id, host, params),
                Answerer::Feature => self.on_feature_request(conn, id, host, params),
                // Notifications only: no request routes here.
                Answerer::Embedder => Err(unknown_method(c.api, method)),
            },
            None => Err(unknown_method(c.api, method)),
        }
    }

    /// `confirmation/request` or `input/request`: checked here, then asked of the
    /// frontend on a thread of its own (a headless frontend answers at once).
    fn on_frontend_question(
        &mut self,
        conn: ConnId,
        id: &RequestId,
        method: HostMethod,
        params: Option<&Value>,
    ) -> Result<(), ResponseError> {
        let c = self.conns.get_mut(&conn).expect("connection is live");
        let kind = match method {
            HostMethod::InputRequest => ChildKind::Input,
            _ => ChildKind::Confirmation,
        };
        let empty = serde_json::Map::new();
        let params = match params {
            Some(Value::Object(map)) => map,
            None => &empty,
            Some(_) => return Err(refusal(codes::INVALID_PARAMS, "params must be an object")),
        };
        let invalid = |message: &str| refusal(codes::INVALID_PARAMS, message);
        // Parent correlation (section 2): API 0.2+ operation-scoped requests name an
        // active host request; frozen API 0.1 omits it.
        let parent = if c.api.has_v0_2_fields() {
            let parent = params
                .get("parent_request_id")
                .ok_or_else(|| invalid("parent_request_id is required"))?
                .as_u64()
                .ok_or_else(|| invalid("parent_request_id must be an unsigned integer"))?;
            let active = c.pending.is_call(&parent);
            if !active {
                return Err(refusal(
                    codes::NO_OWNER,
                    format!("request {parent} is not an active host request"),
                ));
            }
            Some(parent)
        } else {
            None
        };
        let text = |name: &str| -> Result<Option<String>, ResponseError> {
            match params.get(name) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(_) => Err(invalid(&format!("`{name}` must be a string"))),
            }
        };
        let flag = |name: &str| -> Result<bool, ResponseError> {
            match params.get(name) {
                None | Some(Value::Null) => Ok(false),
                Some(Value::Bool(b)) => Ok(*b),
                Some(_) => Err(invalid(&format!("`{name}` must be a boolean"))),
            }
        };
        let prompt = text("prompt")?.ok_or_else(|| invalid("`prompt` is required"))?;
        let source = c.source.clone();
        let cancelled = CancelFlag::default();
        let frontend = self.shared.frontend.clone();
        let interactive = frontend.is_interactive();
        match kind {
            ChildKind::Confirmation => {
                if !c.located.manifest.contributes.confirmations {
                    return Err(refusal(
                        codes::METHOD_NOT_FOUND,
                        "the manifest does not declare confirmations",
                    ));
                }
                // A destructive menu action the person confirmed before it ran: its own
                // first confirmation is that same decision (section 1.6b).
                let preapproved = parent
                    .and_then(|p| c.pending.get_mut(&p))
                    .and_then(|pending| match &mut pending.kind {
                        super::connection::PendingKind::Call { preapproved, .. } => {
                            Some(std::mem::take(preapproved))
                        }
                        _ => None,
                    })
                    .unwrap_or(false);
                if preapproved {
                    self.answer_child(conn, id, Answer::Confirmed(true));
                    return Ok(());
                }
                let question = ConfirmationRequest {
                    source,
                    prompt,
                    detail: text("detail")?,
                    destructive: flag("destructive")?,
                    default: flag("default")?,
                    cancelled: cancelled.clone(),
                };
                if !interactive {
                    self.answer_child(conn, id, kind.dropped_answer());
                    return Ok(());
                }
                c.children.insert(
                    id.clone(),
                    ChildRequest {
                        kind,
                        parent,
                        cancelled,
                    },
                );
                self.ask_frontend(conn, id.clone(), move || {
                    Answer::Confirmed(frontend.confirm(question))
                });
            }
            ChildKind::Service { .. } | ChildKind::Brokered | ChildKind::Nested { .. } => {
                unreachable!("bound and brokered services are admitted above")
            }
            ChildKind::Input => {
                if prompt.trim().is_empty() {
                    return Err(invalid("`prompt` must contain non-whitespace text"));
                }
                if prompt.len() > MAX_INPUT_PROMPT_BYTES {
                    return Err(invalid("`prompt` exceeds 16 KiB"));
                }
                let question = InputRequest {
                    source,
                    prompt,
                    secret: flag("secret")?,
                    cancelled: cancelled.clone(),
                };
                if !interactive {
                    self.answer_child(conn, id, kind.dropped_answer());
                    return Ok(());
                }
                c.children.insert(
                    id.clone(),
                    ChildRequest {
                        kind,
                        parent,
                        cancelled,
                    },
                );
                self.ask_frontend(conn, id.clone(), move || {
                    Answer::Input(frontend.input(question))
                });
            }
        }
        Ok(())
    }

    /// Asks the frontend on a thread of its own; the answer comes back as a message.
    fn ask_frontend(
        &mut self,
        conn: ConnId,
        id: RequestId,
        ask: impl FnOnce() -> Answer + Send + 'static,
    ) {
        let answers = self.answer_sender.clone();
        let spawned = std::thread::Builder::new()
            .name("octet-frontend".into())
            .spawn(move || {
                let answer = ask();
                let _ = answers.send(FrontendAnswer { conn, id, answer });
            });
        if let Err(error) = spawned {
            // Without a thread nobody can be asked: answer as a headless frontend would.
            if let Some(c) = self.conns.get(&conn) {
                self.shared.events.diagnostic(
                    &c.source,
                    Diagnostic::Refused {
                        method: "frontend".into(),
                        reason: error.to_string(),
                    },
                );
            }
        }
    }

    /// A frontend answered. Answers for requests that were meanwhile dropped (parent
    /// settled, generation gone) are ignored: they cannot cross a generation.
    pub(super) fn on_frontend_answer(&mut self, answer: FrontendAnswer) {
        let Some(c) = self.conns.get_mut(&answer.conn) else {
            return;
        };
        if c.children.remove(&answer.id).is_some() {
            self.answer_child(answer.conn, &answer.id, answer.answer);
        }
    }

    /// Writes the answer to an extension-originated request.
    pub(super) fn answer_child(&mut self, conn: ConnId, id: &RequestId, answer: Answer) {
        // Input answers may be secret (section 2.7): their frame is wiped after writing.
        let is_input = matches!(answer, Answer::Input(_));
        let result = match answer {
            Answer::Cancelled => {
                let error = ResponseError::new(
                    codes::REQUEST_CANCELLED,
                    "request cancelled: its parent request settled",
                );
                self.send_error(conn, id, &error);
                return;
            }
            Answer::Confirmed(confirmed) => json!({ "confirmed": confirmed }),
            Answer::Input(Some(value)) if value.len() > MAX_INPUT_ANSWER_BYTES => {
                if let Some(c) = self.conns.get(&conn) {
                    self.shared.events.diagnostic(
                        &c.source,
                        Diagnostic::Refused {
                            method: "input/request".into(),
                            reason: "the frontend's answer exceeds 256 KiB; sent null".into(),
                        },
                    );
                }
                json!({ "value": null })
            }
            Answer::Input(value) => json!({ "value": value }),
        };
        self.answer_with(conn, id, &result, is_input);
        if is_input {
            super::runtime_answers::wipe_result(result);
        }
    }

    /// Sends a result to an extension-originated request; `wipe` marks a frame that may
    /// carry a secret, which the writer zeroes after writing (section 2.10).
    pub(super) fn answer_with(&mut self, conn: ConnId, id: &RequestId, result: &Value, wipe: bool) {
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        match c.encode_result(id, result) {
            Ok(bytes) => c.push_frame(OutboundFrame {
                bytes,
                state: None,
                wipe,
            }),
            Err(e) => {
                let error = ResponseError::new(codes::INTERNAL_ERROR, e.to_string());
                self.send_error(conn, id, &error);
            }
        }
    }

    /// Sends an error response to an extension-originated request.
    pub(super) fn send_error(&mut self, conn: ConnId, id: &RequestId, error: &ResponseError) {
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        if let Ok(bytes) = c.encode_error(id, error) {
            c.push_frame(OutboundFrame {
                bytes,
                state: None,
                wipe: false,
            });
        }
    }

    /// The host request `parent` settled: every unresolved child it owns is cancelled.
    /// The extension gets the dropped answer (denied, or `null` input) and a late
    /// frontend answer is ignored.
    pub(super) fn settle_children(&mut self, conn: ConnId, parent: u64) {
        let Some(c) = self.conns.get(&conn) else {
            return;
        };
        let owned: Vec<RequestId> = c
            .children
            .iter()
            .filter(|(_, child)| child.parent == Some(parent))
            .map(|(id, _)| id.clone())
            .collect();
        for id in owned {
            self.drop_child(conn, &id);
        }
        if let Some(c) = self.conns.get_mut(&conn) {
            c.guards.parent_settled(parent);
        }
        self.each_feature(|f, d| f.parent_settled(d, conn, parent));
    }

    /// Answers every outstanding child with its dropped answer: the generation is
    /// draining, so nothing it asks can be acted on any more.
    pub(super) fn settle_all_children(&mut self, conn: ConnId) {
        let Some(c) = self.conns.get(&conn) else {
            return;
        };
        let ids: Vec<RequestId> = c.children.keys().cloned().collect();
        for id in ids {
            self.drop_child(conn, &id);
        }
    }

    /// Removes one child, tells the frontend, and answers the extension as if the person
    /// had dismissed the question (section 2.2: dropping denies; 2.7: `null`).
    fn drop_child(&mut self, conn: ConnId, id: &RequestId) {
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        let Some(child) = c.remove_child(id) else {
            return;
        };
        child.cancelled.cancel();
        self.each_feature(|f, d| f.child_withdrawn(d, conn, id, &child));
        self.answer_child(conn, id, child.kind.dropped_answer());
    }

    /// The extension cancelled one of its own outstanding requests (section 2.9): the
    /// frontend is told, and the request is answered with the cancellation error.
    pub(super) fn on_child_cancel(&mut self, conn: ConnId, params: &Value) {
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        let id = match params.get("id").map(RequestId::from_value) {
            Some(Ok(id)) => id,
            _ => {
                self.shared.events.diagnostic(
                    &c.source,
                    Diagnostic::Refused {
                        method: "$/cancelRequest".into(),
                        reason: "params need a valid id".into(),
                    },
                );
                return;
            }
        };
        if let Some(child) = c.remove_child(&id) {
            child.cancelled.cancel();
            self.each_feature(|f, d| f.child_withdrawn(d, conn, &id, &child));
            self.send_error(
                conn,
                &id,
                &ResponseError::new(codes::REQUEST_CANCELLED, "cancelled"),
            );
        }
    }

    /// Cancels every child of a generation that is going away; nothing can be answered.
    pub(super) fn drop_children(&mut self, conn: ConnId) {
        if let Some(c) = self.conns.get_mut(&conn) {
            let ids: Vec<RequestId> = c.children.keys().cloned().collect();
            for id in ids {
                if let Some(child) = c.remove_child(&id) {
                    child.cancelled.cancel();
                }
            }
        }
    }
}
