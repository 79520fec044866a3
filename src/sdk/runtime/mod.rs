//! The runtime behind [`Extension::run`]: one reader loop on stdin, one writer thread
//! owning stdout, and a bounded pool of workers running handlers.
//!
//! The reader splits stdin on LF only, decodes each frame with the connection's
//! [`Codec`] and ignores (with a stderr diagnostic) any frame that is not a JSON-RPC
//! message. It answers `initialize`, `shutdown`, unknown methods and malformed requests
//! itself, routes `$/cancelRequest` to the matching request's token, routes the host's
//! answers to handlers blocked in a child request, and hands every other request to a
//! worker.
//!
//! # API 0.3
//!
//! When `OCTET_EXTENSION_API_VERSION` (or [`Extension::api_version`]) selects API 0.3,
//! every frame in both directions is canonical ([`Codec::Canonical`]) from the first
//! one on. Without a configured version, an `initialize` naming API 0.3 switches the
//! connection to the canonical wire, provided that very frame is canonical. Then:
//! - A frame that is not canonical JSON (including an empty frame or a CR before the
//!   LF) is answered -32700 "parse error" with `"id": null`: its id cannot be known.
//! - A canonical frame that breaks the envelope rules (closed envelope, missing
//!   `params`, bad id, ...) and is a request or notification (it has `method`) is
//!   answered -32600 "invalid request" with its id when that id is valid, else with
//!   `"id": null`. One that is a response fails the child request it answers (when its
//!   id is known) and is otherwise ignored. An error response with a `null` id (the
//!   host could not read one of our frames) is only a diagnostic, never answered.
//! - Only methods the contract selected are handled or sent: any other request is
//!   answered -32601 "unknown or unnegotiated method", any other notification ignored.
//! - `shutdown` is answered `{"terminal":"shutdown"}`.
//! - The selected `max_frame_bytes` (LF excluded) bounds frames in both directions
//!   once `initialize` is answered.

pub(crate) mod catalog;
mod contract;
pub(crate) mod diagnostic;
mod dispatch;
mod doorbell;
mod host_notifications;
mod initialize;
pub(crate) mod pool;
mod run;
mod runnable;
pub(crate) mod state;
mod writer;

use std::io::{ErrorKind, Read, Write};
use std::panic::{self, AssertUnwindSafe};
use std::sync::Arc;
use std::thread;

use crossbeam_channel::{bounded, Sender};
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};

use self::dispatch::Method;
use self::pool::Pool;
use self::state::Wire;
use self::state::{diagnostic, ActiveRequest, Session, Shared};
use super::context::Context;
use super::error::ChildRequestError;
use super::error::RunError;
use super::extension::Extension;
use super::request::LifecycleNotice;
use super::{FINAL_FLUSH_TIMEOUT, LIFECYCLE_QUEUE, READ_CHUNK_BYTES, SETTLE_TIMEOUT};
use crate::manifest::ApiVersion;
use crate::wire::canonical::decode_canonical;
use crate::wire::codec::{canonical_frame_limit, Codec};
use crate::wire::{
    codes, FrameError, FrameSplitter, Message, Notification, Request, RequestId, ResponseError,
    Split,
};

/// The -32601 message of API 0.3's fixed error table.
const UNNEGOTIATED_METHOD: &str = "unknown or unnegotiated method";

/// Serves `ext` on `input`/`output` until `shutdown` or EOF.
pub(crate) fn serve<R: Read, W: Write + Send + 'static>(
    ext: Extension,
    configured: Option<ApiVersion>,
    mut input: R,
    output: W,
) -> Result<(), RunError> {
    // The reader is this thread: the extension's own, lent to the SDK until it returns
    // and then given back with the scheduler slice it had.
    crate::slice::borrow_thread();
    let (writer, writer_done) = writer::spawn(output);
    let codec = configured.map_or(Codec::JsonRpc, Codec::for_api);
    let wire = Wire {
        codec,
        limit: codec.initial_frame_limit(),
    };
    let shared = Arc::new(Shared::new(writer, wire));
    let mut connection = Connection {
        ext: Arc::new(ext),
        shared: Arc::clone(&shared),
        configured,
        ready: None,
        codec,
        frame_limit: wire.limit,
    };
    let outcome = connection.read_loop(&mut input);
    crate::slice::release_thread();
    let flush_deadline = shared.close(SETTLE_TIMEOUT, FINAL_FLUSH_TIMEOUT);
    drop(connection);
    if !writer_done.wait(flush_deadline) {
        diagnostic(format_args!(
            "stdout is not drained; exiting without the last frames"
        ));
    }
    outcome
}

/// What exists once `initialize` succeeded.
struct Ready {
    session: Arc<Session>,
    pool: Pool,
    lifecycle: Option<Sender<LifecycleNotice>>,
    notifications: host_notifications::HostNotifications,
}

/// Whether the reader goes on.
enum Flow {
    Continue,
    Stop(Result<(), RunError>),
}

struct Connection {
    ext: Arc<Extension>,
    shared: Arc<Shared>,
    configured: Option<ApiVersion>,
    ready: Option<Ready>,
    /// How inbound frames are decoded.
    codec: Codec,
    /// The inbound frame limit, LF included; applied from the next read on.
    frame_limit: usize,
}

impl Connection {
    fn read_loop<R: Read>(&mut self, input: &mut R) -> Result<(), RunError> {
        let mut splitter = FrameSplitter::new(self.frame_limit);
        let mut buffer = vec![0u8; READ_CHUNK_BYTES];
        loop {
            if splitter.limit() != self.frame_limit {
                splitter.set_limit(self.frame_limit);
            }
            let limit = splitter.limit();
            crate::spin::follow_load();
            let read = match input.read(&mut buffer) {
                Ok(0) => {
                    if let Some(bytes) = splitter.finish() {
                        diagnostic(format_args!(
                            "stdin ended inside a frame; {bytes} bytes dropped"
                        ));
                    }
                    return Ok(());
                }
                Ok(n) => n,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(RunError::Io(e)),
            };
            let mut stop = None;
            splitter.push(&buffer[..read], |split| {
                if stop.is_some() {
                    return;
                }
                match split {
                    Split::Frame(frame) => {
                        if let Flow::Stop(outcome) = self.on_frame(frame) {
                            stop = Some(outcome);
                        }
                    }
                    Split::Oversized { bytes, .. } => diagnostic(format_args!(
                        "ignoring a frame of {bytes} bytes, over the {limit}-byte bound"
                    )),
                }
            });
            if let Some(outcome) = stop {
                return outcome;
            }
        }
    }

    fn on_frame(&mut self, frame: &[u8]) -> Flow {
        match self.codec.decode_deferring_context(frame) {
            Err(e) => {
                self.on_invalid_frame(frame, e);
                Flow::Continue
            }
            Ok((Message::Request(request), context)) => {
                if self.switches_to_canonical(&request) {
                    self.use_codec(Codec::Canonical);
                    if let Err(e) = Codec::Canonical.decode(frame) {
                        self.on_invalid_frame(frame, e);
                        return Flow::Continue;
                    }
                }
                self.on_request(request, context)
            }
            Ok((Message::Notification(notification), _)) => {
                self.on_notification(notification);
                Flow::Continue
            }
            Ok((Message::Response(response), _)) => {
                self.shared.resolve_child(response);
                Flow::Continue
            }
        }
    }

    /// Whether `request` is an `initialize` naming API 0.3 that reached a connection
    /// without a configured version, still on JSON-RPC.
    fn switches_to_canonical(&self, request: &Request) -> bool {
        self.codec == Codec::JsonRpc
            && self.configured.is_none()
            && self.ready.is_none()
            && request.method == "initialize"
            && request
                .params
                .as_ref()
                .and_then(|p| p.get("api_version"))
                .and_then(Value::as_str)
                == Some(ApiVersion::V0_3.as_str())
    }

    /// Decodes and encodes with `codec` from now on, at its initial frame limit.
    fn use_codec(&mut self, codec: Codec) {
        self.codec = codec;
        self.frame_limit = codec.initial_frame_limit();
        self.shared.set_wire(Wire {
            codec,
            limit: self.frame_limit,
        });
    }

    /// A frame that is not a usable message: ignored on JSON-RPC, answered or routed
    /// on the canonical wire as the module documentation describes.
    fn on_invalid_frame(&self, frame: &[u8], error: FrameError) {
        if self.codec == Codec::JsonRpc {
            diagnostic(format_args!("ignoring a malformed frame: {error}"));
            return;
        }
        let value = match &error {
            FrameError::NotCanonical(e) => {
                diagnostic(format_args!("answering a non-canonical frame: {e}"));
                self.shared.send_error_without_id(&ResponseError::new(
                    codes::PARSE_ERROR,
                    format!("parse error: {e}"),
                ));
                return;
            }
            FrameError::ErrorWithoutId(e) => {
                diagnostic(format_args!(
                    "the host could not read one of our frames: {e}"
                ));
                return;
            }
            // Every other error comes from a frame that is canonical JSON.
            _ => decode_canonical(frame).unwrap_or(Value::Null),
        };
        let id = value
            .get("id")
            .and_then(|id| RequestId::from_value(id).ok());
        let is_response = value.get("method").is_none()
            && (value.get("result").is_some() || value.get("error").is_some());
        if is_response {
            let failed = id.as_ref().is_some_and(|id| {
                self.shared
                    .fail_child(id, ChildRequestError::InvalidResponse(error.clone()))
            });
            if !failed {
                diagnostic(format_args!("ignoring an invalid response: {error}"));
            }
            return;
        }
        diagnostic(format_args!("answering an invalid request: {error}"));
        let answer =
            ResponseError::new(codes::INVALID_REQUEST, format!("invalid request: {error}"));
        match id {
            Some(id) => self.shared.send_error(&id, &answer),
            None => self.shared.send_error_without_id(&answer),
        }
    }

    fn reply_error(&self, id: &RequestId, code: i64, message: impl Into<String>) {
        self.shared
            .send_error(id, &ResponseError::new(code, message));
    }

    /// Answers or runs `request`; `context` is its `params.context` when the codec kept
    /// it as text (`wire::deferred`).
    fn on_request(&mut self, request: Request, context: Option<Box<RawValue>>) -> Flow {
        if request.method == "initialize" {
            return self.on_initialize(request);
        }
        let Some(ready) = &self.ready else {
            self.reply_error(
                &request.id,
                codes::INVALID_REQUEST,
                "initialize has not completed",
            );
            return Flow::Continue;
        };
        let canonical = ready.session.api_version == ApiVersion::V0_3;
        if !ready.session.allows(&request.method) {
            self.reply_error(&request.id, codes::METHOD_NOT_FOUND, UNNEGOTIATED_METHOD);
            return Flow::Continue;
        }
        if request.method == "shutdown" {
            let result = if canonical {
                json!({"terminal": "shutdown"})
            } else {
                json!({})
            };
            self.shared.send_result(&request.id, &result);
            return Flow::Stop(Ok(()));
        }
        let Some(method) = Method::resolve(&request.method, ready.session.api_version, &self.ext)
        else {
            let message = if canonical {
                UNNEGOTIATED_METHOD.to_owned()
            } else {
                format!("unknown method `{}`", request.method)
            };
            self.reply_error(&request.id, codes::METHOD_NOT_FOUND, message);
            return Flow::Continue;
        };
        let mut params = match request.params {
            None => Map::new(),
            Some(Value::Object(map)) => map,
            Some(_) => {
                self.reply_error(
                    &request.id,
                    codes::INVALID_PARAMS,
                    "params must be an object",
                );
                return Flow::Continue;
            }
        };
        let active = Arc::new(ActiveRequest::new(request.id));
        if !self.shared.register_active(Arc::clone(&active)) {
            self.reply_error(
                &active.id,
                codes::INVALID_REQUEST,
                format!("request id {} is already in use", active.id),
            );
            return Flow::Continue;
        }
        let (shared, session) = (Arc::clone(&self.shared), Arc::clone(&ready.session));
        let cx = match context {
            Some(text) => Context::with_context_text(shared, session, Arc::clone(&active), text),
            None => {
                let raw_context = params.remove("context").unwrap_or(Value::Null);
                Context::new(shared, session, Some(Arc::clone(&active)), raw_context)
            }
        };
        let ext = Arc::clone(&self.ext);
        let shared = Arc::clone(&self.shared);
        ready.pool.submit(Box::new(move || {
            let outcome = if active.token.is_cancelled() {
                Err(crate::sdk::HandlerError::cancelled())
            } else {
                dispatch::execute(&ext, method, params, &cx)
            };
            shared.answer_active(&active, outcome.map_err(|e| e.to_response_error()));
        }));
        Flow::Continue
    }

    fn on_initialize(&mut self, request: Request) -> Flow {
        if self.ready.is_some() {
            self.reply_error(
                &request.id,
                codes::INVALID_REQUEST,
                "initialize was already answered",
            );
            return Flow::Continue;
        }
        let params = request.params.unwrap_or_else(|| json!({}));
        let offered = params
            .get("api_version")
            .and_then(Value::as_str)
            .and_then(ApiVersion::parse);
        let api_version = match (self.configured, offered) {
            (Some(ours), Some(theirs)) if ours != theirs => {
                // API 0.3's fixed error table names this failure; the feature-negotiated
                // wire calls it invalid params.
                let code = if ours == ApiVersion::V0_3 || theirs == ApiVersion::V0_3 {
                    codes::VERSION_MISMATCH
                } else {
                    codes::INVALID_PARAMS
                };
                self.reply_error(
                    &request.id,
                    code,
                    format!(
                        "this extension speaks API {ours}, but initialize selects API {theirs}"
                    ),
                );
                return Flow::Continue;
            }
            (Some(ours), _) => ours,
            (None, Some(theirs)) => theirs,
            (None, None) => {
                self.reply_error(
                    &request.id,
                    codes::INVALID_PARAMS,
                    "initialize lacks a known `api_version`",
                );
                return Flow::Continue;
            }
        };
        match initialize::negotiate(&self.ext, api_version, &params) {
            Ok((result, session)) => {
                let session = Arc::new(session);
                let lifecycle = self.start_lifecycle(&session);
                let max_frame_bytes = session.max_frame_bytes;
                let notifications =
                    host_notifications::HostNotifications::start(&self.ext, &self.shared, &session);
                // Shortcuts are registered inside `initialize` (section 2.20): its
                // answer waits for theirs.
                // The completion chain is registered once `initialize` was answered
                // (section 2.24b).
                let cx = Context::new(
                    Arc::clone(&self.shared),
                    Arc::clone(&session),
                    None,
                    Value::Null,
                );
                let ext = Arc::clone(&self.ext);
                let then = move || crate::sdk::autocomplete::register(&ext, cx);
                if host_notifications::HostNotifications::registers(&self.ext, &session) {
                    notifications.register_then_answer(
                        &self.ext,
                        &self.shared,
                        request.id,
                        result,
                        then,
                    );
                } else {
                    self.shared.send_result(&request.id, &result);
                    then();
                }
                self.ready = Some(Ready {
                    pool: Pool::new(session.max_concurrent_requests),
                    session,
                    lifecycle,
                    notifications,
                });
                if let Some(max_frame_bytes) = max_frame_bytes {
                    self.frame_limit = canonical_frame_limit(max_frame_bytes);
                    self.shared.set_wire(Wire {
                        codec: self.codec,
                        limit: self.frame_limit,
                    });
                }
            }
            Err(error) => self
                .shared
                .send_error(&request.id, &error.to_response_error()),
        }
        Flow::Continue
    }

    /// Starts the thread that runs the lifecycle handler in arrival order.
    fn start_lifecycle(&self, session: &Arc<Session>) -> Option<Sender<LifecycleNotice>> {
        if session.lifecycle_events.is_empty() {
            return None;
        }
        let handler = Arc::clone(&self.ext.lifecycle.as_ref()?.handler);
        let cx = Context::new(
            Arc::clone(&self.shared),
            Arc::clone(session),
            None,
            Value::Null,
        );
        let (tx, rx) = bounded::<LifecycleNotice>(LIFECYCLE_QUEUE);
        thread::Builder::new()
            .name("octet-sdk-lifecycle".into())
            .spawn(move || {
                for event in rx {
                    let method = event.method.clone();
                    if panic::catch_unwind(AssertUnwindSafe(|| handler(event, &cx))).is_err() {
                        diagnostic(format_args!("the lifecycle handler panicked on {method}"));
                    }
                }
            })
            .expect("spawning the lifecycle thread");
        Some(tx)
    }

    fn on_notification(&mut self, notification: Notification) {
        let Some(ready) = &self.ready else {
            return;
        };
        if !ready.session.allows(&notification.method) {
            diagnostic(format_args!(
                "ignoring the unnegotiated notification {}",
                notification.method
            ));
            return;
        }
        // Cancellation exists from API 0.2 on (required on 0.2, 0.3 and 0.4).
        let cancellable = ready.session.api_version.has_v0_2_fields();
        if notification.method == "$/cancelRequest" && cancellable {
            match notification
                .params
                .as_ref()
                .and_then(|p| p.get("id"))
                .map(RequestId::from_value)
            {
                Some(Ok(id)) => self.shared.cancel(&id),
                _ => diagnostic(format_args!("ignoring $/cancelRequest without a valid id")),
            }
            return;
        }
        if ready.notifications.on_notification(&notification) {
            return;
        }
        if let Some(lifecycle) = &ready.lifecycle {
            if ready
                .session
                .lifecycle_events
                .contains(&notification.method)
            {
                let event = LifecycleNotice {
                    method: notification.method,
                    params: notification.params.unwrap_or(Value::Null),
                };
                // The lifecycle thread only stops when this sender is dropped.
                let _ = lifecycle.send(event);
            }
        }
    }
}

#[cfg(test)]
mod tests;
