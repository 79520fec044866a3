//! What arrives from a generation: frames, closed streams and writer progress.

use serde_json::Value;

use super::connection::PendingKind;
use super::route::{HostMethod, Route};
use super::Dispatcher;
use crate::limits::MAX_CHILD_IDS_PER_GENERATION;
use crate::model::call::CallError;
use crate::model::events::{Diagnostic, HostEvent};
use crate::model::progress::{self, Progress, ProgressEvent};
use crate::model::status::LifecycleState;
use crate::services::bound::{ErrorFamily, Refusal, ServiceMethod};
use crate::transport::{ConnId, InboundFrame, TransportEvent, TransportMessage};
use crate::validate;
use crate::wire::salvage::RefusedRequest;
use crate::wire::{codes, FrameError, Message, Notification, RequestId, ResponseError};

/// What is wrong with a refused request frame.
enum Fault<'a> {
    /// It could not be decoded, or broke an envelope rule.
    Frame(&'a FrameError),
    /// It was over the frame bound: its size and the bound, in bytes.
    Oversized(usize, usize),
}

/// The error a refused request is answered with (section 2: every request whose id
/// can be read is answered; its params are never passed on). A fault that lies in the
/// params alone (a lone surrogate escape in a text, params that are not structured,
/// a frame over the bound that carries params) is -32602: for a Wave-1 method with
/// its contract name first (`invalid_request`, or `bounds_exceeded` for size, section
/// 3). Any other fault is -32700 when the frame is not JSON (or not canonical on API
/// 0.3) and -32600 otherwise. On API 0.3 the connection sends the table's exact
/// message, with these words in `data.reason` (`Connection::encode_error`).
fn refused_request_error(
    request: &RefusedRequest,
    fault: Fault<'_>,
    c: &super::connection::Connection,
) -> ResponseError {
    // A row's family answers a params problem; API 0.3's table is applied when the
    // connection encodes the error.
    let family = ServiceMethod::resolve(&request.method, c.api, &c.features(), None)
        .map(|m| m.family())
        .filter(|family| *family != ErrorFamily::V0_3Table);
    let (params_problem, refusal, detail) = match fault {
        Fault::Oversized(bytes, limit) => (
            request.has_params,
            Refusal::BoundsExceeded,
            format!("the request frame of {bytes} bytes exceeds the {limit}-byte frame bound"),
        ),
        Fault::Frame(_) if request.lone_surrogate => (
            true,
            Refusal::InvalidRequest,
            "the params hold a lone UTF-16 surrogate escape (such as \\ud800 without its \
             pair); text must be valid Unicode, so cut strings on character boundaries"
                .to_string(),
        ),
        Fault::Frame(error) => (
            request.params_only || matches!(error, FrameError::ParamsNotStructured),
            Refusal::InvalidRequest,
            format!("the params are not readable: {error}"),
        ),
    };
    if let (true, Some(family)) = (params_problem, family) {
        return family.respond(&refusal.because(detail));
    }
    if params_problem {
        return ResponseError::new(codes::INVALID_PARAMS, format!("invalid params: {detail}"));
    }
    let code = match fault {
        Fault::Frame(FrameError::Parse { .. } | FrameError::NotCanonical(_)) => codes::PARSE_ERROR,
        _ => codes::INVALID_REQUEST,
    };
    let detail = match fault {
        Fault::Frame(error) => error.to_string(),
        Fault::Oversized(..) => detail,
    };
    let words = if code == codes::PARSE_ERROR {
        "parse error"
    } else {
        "invalid request"
    };
    ResponseError::new(code, format!("{words}: {detail}"))
}

/// The event a checked `notification`, `context/contribution` or
/// `status/contribution` from `source` becomes, or why it is refused.
fn embedder_event(
    method: HostMethod,
    source: &crate::model::events::GenerationRef,
    params: &Value,
) -> Result<HostEvent, String> {
    let source = source.clone();
    match method {
        HostMethod::Notification => validate::notification(params)
            .map(|notification| HostEvent::Notification {
                source,
                notification,
            })
            .map_err(|e| e.to_string()),
        HostMethod::ContextContribution => validate::context_contribution(params)
            .map(|contribution| HostEvent::ContextContribution {
                source,
                contribution,
            })
            .map_err(|e| e.to_string()),
        _ => validate::status_contribution(params)
            .map(|contribution| HostEvent::StatusContribution {
                source,
                contribution,
            })
            .map_err(|e| e.to_string()),
    }
}

impl Dispatcher {
    pub(super) fn on_transport(&mut self, message: TransportMessage) {
        let TransportMessage { conn, event } = message;
        match event {
            TransportEvent::Frames(frames) => {
                for frame in frames {
                    let frame = match (&frame, self.conns.get(&conn)) {
                        (InboundFrame::Undecoded(_), Some(c)) => frame.decoded(c.codec),
                        _ => frame,
                    };
                    self.on_frame(conn, frame);
                }
                // The reader may hand over another batch ([`crate::transport::gate`]).
                if let Some(c) = self.conns.get(&conn) {
                    c.io.read_gate.batch_handled();
                }
            }
            TransportEvent::Written { .. } => {
                if let Some(c) = self.conns.get_mut(&conn) {
                    c.on_written();
                }
            }
            TransportEvent::ReaderClosed {
                unterminated,
                error,
            } => {
                let Some(c) = self.conns.get_mut(&conn) else {
                    return;
                };
                c.reader_closed = true;
                let source = c.source.clone();
                if let Some(bytes) = unterminated {
                    self.shared
                        .events
                        .diagnostic(&source, Diagnostic::UnterminatedFrame { bytes });
                }
                let reason = match error {
                    Some(e) => format!("reading the extension's stdout failed: {e}"),
                    None => "the extension closed its stdout".to_string(),
                };
                self.on_transport_lost(conn, reason);
            }
            TransportEvent::WriterFailed { error } => {
                let Some(c) = self.conns.get_mut(&conn) else {
                    return;
                };
                c.writer_failed = true;
                self.on_transport_lost(
                    conn,
                    format!("writing to the extension's stdin failed: {error}"),
                );
            }
        }
    }

    fn on_frame(&mut self, conn: ConnId, frame: InboundFrame) {
        let Some(c) = self.conns.get(&conn) else {
            return;
        };
        if let Some(sink) = &c.wire_trace {
            if let InboundFrame::Message(message) = &frame {
                if let Ok(bytes) = crate::wire::encode(message) {
                    super::connection::trace_frame(
                        sink,
                        &c.source,
                        crate::model::trace::WireDirection::FromExtension,
                        &bytes,
                        false,
                    );
                }
            }
        }
        // API 0.3: only methods the contract selected may be sent either way.
        let contract = c.negotiated.as_ref().and_then(|n| n.contract.as_ref());
        match frame {
            InboundFrame::Message(Message::Response(response)) => self.on_response(conn, response),
            InboundFrame::Message(Message::Request(request))
                if contract.is_some_and(|contract| !contract.allows(&request.method)) =>
            {
                let error =
                    ResponseError::new(codes::METHOD_NOT_FOUND, "unknown or unnegotiated method");
                self.shared.events.diagnostic(
                    &c.source,
                    Diagnostic::Refused {
                        method: request.method.clone(),
                        reason: error.message.clone(),
                    },
                );
                self.send_error(conn, &request.id, &error);
            }
            InboundFrame::Message(Message::Request(request)) => {
                self.on_extension_request(conn, request)
            }
            InboundFrame::Message(Message::Notification(notification))
                if contract.is_some_and(|contract| !contract.allows(&notification.method)) =>
            {
                self.shared.events.diagnostic(
                    &c.source,
                    Diagnostic::Refused {
                        method: notification.method,
                        reason: "not selected by the API 0.3 contract".into(),
                    },
                );
            }
            InboundFrame::Message(Message::Notification(notification)) => {
                self.on_extension_notification(conn, notification)
            }
            other => self.on_refused_frame(conn, other),
        }
    }

    /// The transport to a generation broke: every waiter learns it at once, and the
    /// generation is terminated unless it is already on its way out.
    fn on_transport_lost(&mut self, conn: ConnId, reason: String) {
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        let shutting_down = c.stage != super::connection::ShutdownStage::None;
        if !shutting_down {
            c.last_error = Some(reason.clone());
            let source = c.source.clone();
            self.shared.events.diagnostic(
                &source,
                Diagnostic::TransportLost {
                    reason: reason.clone(),
                },
            );
        }
        let initializing = c.state == LifecycleState::Initializing;
        self.fail_all(conn, CallError::TransportLost { reason });
        if shutting_down {
            self.on_shutdown_transport_lost(conn);
        } else if initializing {
            // A child that goes away during `initialize` is usually exiting: give it the
            // ordinary exit wait, so the start error can carry its real exit status.
            self.set_state(conn, LifecycleState::Crashed);
            self.await_exit(conn);
        } else {
            self.terminate(conn, LifecycleState::Crashed);
        }
    }

    /// A frame the host refuses to read as a message. Besides the diagnostic: while
    /// initializing, stdout lines that are not JSON are counted for the start error;
    /// an answer whose id can still be read fails its call at once (it would otherwise
    /// wait for its deadline); a request whose id can still be read is answered at once
    /// ([`refused_request_error`]); and a request whose id is unusable gets an error
    /// reply with `id: null` (JSON-RPC 2.0, -32600).
    fn on_refused_frame(&mut self, conn: ConnId, frame: InboundFrame) {
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        self.shared.events.frame_diagnostic(&c.source, &frame);
        let (salvage, reason, refused) = match frame {
            InboundFrame::Invalid {
                error,
                salvage,
                excerpt,
                ..
            } => {
                let refused = salvage
                    .request
                    .as_ref()
                    .map(|request| refused_request_error(request, Fault::Frame(&error), c));
                if matches!(error, FrameError::Parse { .. })
                    && c.state == LifecycleState::Initializing
                {
                    c.startup_noise.0 += 1;
                    c.startup_noise.1.get_or_insert(excerpt);
                }
                if salvage.is_request && matches!(error, FrameError::BadId(_)) {
                    let reply = ResponseError::new(
                        codes::INVALID_REQUEST,
                        format!("invalid request id: {error}"),
                    );
                    c.push_error_without_id(&reply);
                }
                (salvage, error.to_string(), refused)
            }
            InboundFrame::Oversized { bytes, salvage } => {
                let refused = salvage.request.as_ref().map(|request| {
                    refused_request_error(request, Fault::Oversized(bytes, c.limit()), c)
                });
                let reason = format!(
                    "a frame of {bytes} bytes exceeds the {}-byte bound",
                    c.limit()
                );
                (salvage, reason, refused)
            }
            InboundFrame::Message(_) | InboundFrame::Undecoded(_) => return,
        };
        if let (Some(request), Some(error)) = (salvage.request, refused) {
            self.answer_refused_request(conn, request.id, &error);
        }
        if let Some(id) = salvage.response_id {
            self.refuse_answer(conn, id, reason);
        }
    }

    /// Answers a refused request whose id could be read. The id counts as used (section
    /// 2: ids are never reused in a generation); an id that was already used, or is
    /// still outstanding, is answered with `id: null` instead, so the extension can
    /// never take the answer for that of its earlier request.
    fn answer_refused_request(&mut self, conn: ConnId, id: RequestId, error: &ResponseError) {
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        let reused = c.children.contains_key(&id) || c.child_ids_used.contains(&id);
        if reused {
            let reply = ResponseError::new(
                codes::INVALID_REQUEST,
                format!("request id {id} was already used; {}", error.message),
            );
            c.push_error_without_id(&reply);
            return;
        }
        if c.child_ids_used.len() < MAX_CHILD_IDS_PER_GENERATION {
            c.child_ids_used.insert(id.clone());
        }
        self.send_error(conn, &id, error);
    }

    /// Extension-originated notifications (sections 2.1, 2.3, 2.4, 2.6).
    fn on_extension_notification(&mut self, conn: ConnId, notification: Notification) {
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        let source = c.source.clone();
        let params = notification.params.unwrap_or(Value::Null);
        let refuse = |this: &Self, reason: String| {
            this.shared.events.diagnostic(
                &source,
                Diagnostic::Refused {
                    method: notification.method.clone(),
                    reason,
                },
            );
        };
        let state = c.state;
        if state != LifecycleState::Ready && state != LifecycleState::Draining {
            refuse(self, format!("sent while the generation is {state}"));
            return;
        }
        let route = Route::notification(&notification.method, c.api, &c.features(), &params);
        match route {
            Some(Route::Bound(method)) => {
                if let Err(reason) = self.on_bound_notification(conn, method, &params) {
                    refuse(self, reason);
                }
            }
            Some(Route::Host(
                method @ (HostMethod::Notification
                | HostMethod::ContextContribution
                | HostMethod::StatusContribution),
            )) => match embedder_event(method, &source, &params) {
                Ok(event) => self.shared.events.emit(event),
                Err(reason) => refuse(self, reason),
            },
            Some(Route::Host(HostMethod::Progress)) => self.on_progress(conn, &params),
            Some(Route::Host(HostMethod::CancelRequest)) => self.on_child_cancel(conn, &params),
            Some(Route::Host(HostMethod::PresentationUpdate)) => {
                self.on_presentation(conn, &params)
            }
            // Reaches here only when the 0.3 contract selected it.
            Some(Route::Host(HostMethod::ProviderEvent)) => self.on_provider_event(conn, &params),
            // Only notification rows resolve here.
            Some(Route::Host(_)) | None => refuse(
                self,
                format!(
                    "`{}` is not a notification the host accepts",
                    notification.method
                ),
            ),
        }
    }

    /// `$/progress` (section 2.6): only for an active request of this generation, with a
    /// strictly increasing sequence; anything else is ignored with a diagnostic.
    fn on_progress(&mut self, conn: ConnId, params: &Value) {
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        let source = c.source.clone();
        let refuse = |reason: String| Diagnostic::Refused {
            method: "$/progress".into(),
            reason,
        };
        let negotiated = c.negotiated.as_ref().is_some_and(|n| {
            n.features
                .contains(crate::negotiation::Feature::RequestProgress)
        });
        if !negotiated {
            self.shared.events.diagnostic(
                &source,
                refuse("request_progress was not negotiated".into()),
            );
            return;
        }
        let request_id = params.get("request_id").and_then(Value::as_u64);
        let sequence = params.get("sequence").and_then(Value::as_u64);
        let event = params.get("event").filter(|e| e.is_object());
        let (Some(request_id), Some(sequence), Some(event)) = (request_id, sequence, event) else {
            self.shared.events.diagnostic(
                &source,
                refuse(
                    "params need request_id, sequence (unsigned integers) and an event object"
                        .into(),
                ),
            );
            return;
        };
        let decoration = c.negotiated.as_ref().is_some_and(|n| {
            n.features
                .contains(crate::negotiation::Feature::ProgressDecoration)
        });
        let Some(pending) = c.pending.get_mut(&request_id) else {
            self.shared.events.diagnostic(
                &source,
                refuse(format!("request {request_id} is not active")),
            );
            return;
        };
        let PendingKind::Call {
            progress: sink,
            tool_call,
            ..
        } = &pending.kind
        else {
            self.shared.events.diagnostic(
                &source,
                refuse(format!("request {request_id} is not a call")),
            );
            return;
        };
        if pending.last_progress.is_some_and(|last| sequence <= last) {
            self.shared.events.diagnostic(
                &source,
                refuse(format!(
                    "sequence {sequence} does not increase for request {request_id}"
                )),
            );
            return;
        }
        let (tool_call, sink) = (*tool_call, sink.clone());
        let is_partial = event.get("type").and_then(Value::as_str) == Some("partial_result");
        let parsed = match is_partial {
            true => partial_result(c, tool_call, event).map(|result| vec![result]),
            false => progress::parse_event(event, decoration),
        };
        let events = match parsed {
            Ok(events) => events,
            Err(reason) => {
                self.shared.events.diagnostic(&source, refuse(reason));
                return;
            }
        };
        if let Some(pending) = c.pending.get_mut(&request_id) {
            pending.last_progress = Some(sequence);
        }
        for event in events {
            let progress = Progress {
                request_id,
                sequence,
                event,
            };
            if let Some(sink) = &sink {
                let _ = sink.try_send(progress.clone());
            }
            if let ProgressEvent::PartialResult(result) = &progress.event {
                self.relay_update(conn, request_id, &result.to_value());
            }
            self.shared.events.emit(HostEvent::Progress {
                source: source.clone(),
                progress,
            });
        }
    }
}

/// A `partial_result` progress event (section 2.25): only during an active `tool/call`
/// of a generation that negotiated `content_parts` (and `request_progress`, checked by
/// the caller). The snapshot is validated like the final result (content-part limits,
/// detail budgets, artifact resolution for the request's owner) except for the output
/// schema, which only the final result must satisfy.
fn partial_result(
    c: &super::connection::Connection,
    tool_call: bool,
    event: &Value,
) -> Result<ProgressEvent, String> {
    use crate::negotiation::Feature;
    use crate::validate::{MediaPolicy, OutputSchema, ToolResultContext};
    if !tool_call {
        return Err("partial_result is only for an active tool/call".into());
    }
    let negotiated = c.negotiated.as_ref().ok_or("the generation is not ready")?;
    if !negotiated.features.contains(Feature::ContentParts) {
        return Err("partial_result needs content_parts".into());
    }
    let result = event
        .get("result")
        .filter(|r| r.is_object())
        .ok_or("partial_result needs a `result` object")?;
    let mut context = ToolResultContext::new(negotiated.api_version);
    if result
        .get("structured_content")
        .is_some_and(|v| !v.is_null())
    {
        // Bounds only: a partial snapshot need not satisfy the output schema.
        context.output_schema = OutputSchema::Declared { validator: None };
    }
    let store = c
        .artifacts
        .as_ref()
        .filter(|_| negotiated.features.contains(Feature::Artifacts))
        .map(|store| store.lock());
    let view = store.as_ref().map(|store| store.owner_view(&c.owner));
    if let Some(view) = &view {
        context.media = MediaPolicy::Artifacts(view);
    }
    crate::validate::tool_output(result, &context)
        .map(|output| ProgressEvent::PartialResult(Box::new(output)))
        .map_err(|e| format!("partial_result: {e}"))
}

impl Dispatcher {
    /// A partial result of the call sent as request `id` on `conn`: relayed, when the
    /// call has a [`super::reply::Relay`], to the request it is nested under as the
    /// relay's notification (`request_id`, `sequence`, `result`). Relaying never
    /// waits: when the relay's capacity of snapshots still wait for the asking
    /// generation's writer, or that writer has no room, the snapshot is dropped.
    fn relay_update(&mut self, conn: ConnId, id: u64, result: &Value) {
        let relay = self.conns.get_mut(&conn).and_then(|c| {
            let PendingKind::Call {
                relay: Some(relay), ..
            } = &mut c.pending.get_mut(&id)?.kind
            else {
                return None;
            };
            relay.has_room().then(|| {
                (
                    relay.conn,
                    relay.request.clone(),
                    relay.method,
                    relay.sent + 1,
                )
            })
        });
        let Some((to, request, method, sequence)) = relay else {
            return;
        };
        let Some(c) = self.conns.get_mut(&to) else {
            return;
        };
        if !c.children.contains_key(&request) || !c.writer_has_room() {
            return;
        }
        let params = serde_json::json!({
            "request_id": request.to_value(),
            "sequence": sequence,
            "result": result,
        });
        let Ok(bytes) = c.encode_notification(method, &params) else {
            return;
        };
        let state = crate::transport::FrameState::new();
        c.push_frame(crate::transport::OutboundFrame {
            bytes,
            state: Some(state.clone()),
            wipe: false,
        });
        if let Some(PendingKind::Call {
            relay: Some(relay), ..
        }) = self
            .conns
            .get_mut(&conn)
            .and_then(|c| c.pending.get_mut(&id))
            .map(|p| &mut p.kind)
        {
            relay.sent = sequence;
            relay.unwritten.push_back(state);
        }
    }
}
