//! The runtime behind [`Extension::run`]: one reader loop on stdin, one writer thread
//! owning stdout, and a bounded pool of workers running handlers.
//!
//! The reader splits stdin on LF only, decodes each frame with [`crate::wire::decode`]
//! and ignores (with a stderr diagnostic) any frame that is not a JSON-RPC message. It
//! answers `initialize`, `shutdown`, unknown methods and malformed requests itself,
//! routes `$/cancelRequest` to the matching request's token, routes the host's answers
//! to handlers blocked in a child request, and hands every other request to a worker.

mod dispatch;
mod initialize;
mod pool;
pub(crate) mod state;
mod writer;

use std::io::{ErrorKind, Read, Write};
use std::panic::{self, AssertUnwindSafe};
use std::sync::Arc;
use std::thread;

use crossbeam_channel::{bounded, Sender};
use serde_json::{json, Map, Value};

use self::dispatch::Method;
use self::pool::Pool;
use self::state::{diagnostic, ActiveRequest, Session, Shared};
use super::context::Context;
use super::error::RunError;
use super::extension::Extension;
use super::request::LifecycleEvent;
use super::{FINAL_FLUSH_TIMEOUT, LIFECYCLE_QUEUE, READ_CHUNK_BYTES, SETTLE_TIMEOUT};
use crate::limits::MAX_FRAME_BYTES;
use crate::manifest::ApiVersion;
use crate::wire::{
    self, codes, FrameSplitter, Message, Notification, Request, RequestId, ResponseError, Split,
};

/// Serves `ext` on `input`/`output` until `shutdown` or EOF.
pub(crate) fn serve<R: Read, W: Write + Send + 'static>(
    ext: Extension,
    configured: Option<ApiVersion>,
    mut input: R,
    output: W,
) -> Result<(), RunError> {
    let (writer, writer_done) = writer::spawn(output);
    let shared = Arc::new(Shared::new(writer));
    let mut connection = Connection {
        ext: Arc::new(ext),
        shared: Arc::clone(&shared),
        configured,
        ready: None,
    };
    let outcome = connection.read_loop(&mut input);
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
    lifecycle: Option<Sender<LifecycleEvent>>,
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
}

impl Connection {
    fn read_loop<R: Read>(&mut self, input: &mut R) -> Result<(), RunError> {
        let mut splitter = FrameSplitter::new(MAX_FRAME_BYTES);
        let mut buffer = vec![0u8; READ_CHUNK_BYTES];
        loop {
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
                    Split::Oversized { bytes } => diagnostic(format_args!(
                        "ignoring a frame of {bytes} bytes, over the {MAX_FRAME_BYTES}-byte bound"
                    )),
                }
            });
            if let Some(outcome) = stop {
                return outcome;
            }
        }
    }

    fn on_frame(&mut self, frame: &[u8]) -> Flow {
        match wire::decode(frame) {
            Err(e) => {
                diagnostic(format_args!("ignoring a malformed frame: {e}"));
                Flow::Continue
            }
            Ok(Message::Request(request)) => self.on_request(request),
            Ok(Message::Notification(notification)) => {
                self.on_notification(notification);
                Flow::Continue
            }
            Ok(Message::Response(response)) => {
                self.shared.resolve_child(response);
                Flow::Continue
            }
        }
    }

    fn reply_error(&self, id: &RequestId, code: i64, message: impl Into<String>) {
        self.shared
            .send_error(id, &ResponseError::new(code, message));
    }

    fn on_request(&mut self, request: Request) -> Flow {
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
        if request.method == "shutdown" {
            self.shared.send_result(&request.id, &json!({}));
            return Flow::Stop(Ok(()));
        }
        let Some(method) = Method::resolve(&request.method, ready.session.api_version, &self.ext)
        else {
            self.reply_error(
                &request.id,
                codes::METHOD_NOT_FOUND,
                format!("unknown method `{}`", request.method),
            );
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
        let raw_context = params.remove("context").unwrap_or(Value::Null);
        let cx = Context::new(
            Arc::clone(&self.shared),
            Arc::clone(&ready.session),
            Some(Arc::clone(&active)),
            raw_context,
        );
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
                self.reply_error(
                    &request.id,
                    codes::INVALID_PARAMS,
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
        if api_version == ApiVersion::V0_3 {
            self.reply_error(
                &request.id,
                codes::VERSION_MISMATCH,
                "API 0.3 (the canonical wire) is not supported by this SDK yet",
            );
            return Flow::Stop(Err(RunError::UnsupportedApiVersion(api_version)));
        }
        match initialize::negotiate(&self.ext, api_version, &params) {
            Ok((result, session)) => {
                let session = Arc::new(session);
                let lifecycle = self.start_lifecycle(&session);
                self.ready = Some(Ready {
                    pool: Pool::new(session.max_concurrent_requests),
                    session,
                    lifecycle,
                });
                self.shared.send_result(&request.id, &result);
            }
            Err(error) => self
                .shared
                .send_error(&request.id, &error.to_response_error()),
        }
        Flow::Continue
    }

    /// Starts the thread that runs the lifecycle handler in arrival order.
    fn start_lifecycle(&self, session: &Arc<Session>) -> Option<Sender<LifecycleEvent>> {
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
        let (tx, rx) = bounded::<LifecycleEvent>(LIFECYCLE_QUEUE);
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
        let negotiated = ready.session.api_version.is_feature_negotiated();
        if notification.method == "$/cancelRequest" && negotiated {
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
        if let Some(lifecycle) = &ready.lifecycle {
            if ready
                .session
                .lifecycle_events
                .contains(&notification.method)
            {
                let event = LifecycleEvent {
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
mod tests {
    use super::*;
    use crate::sdk::{Extension, ToolOutput};
    use parking_lot::Mutex;
    use std::io::Cursor;

    /// An output the test can read after `serve` returns.
    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl Write for Captured {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn serve_answers_until_shutdown_and_ignores_what_follows() {
        let input = concat!(
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"api_version":"0.1"}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":2,"method":"shutdown","params":{}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":3,"method":"tool/call","params":{"name":"t"}}"#,
            "\n",
        );
        let output = Captured::default();
        let ext = Extension::new().api_version(ApiVersion::V0_1).tool(
            "t",
            "d",
            json!({"type": "object"}),
            |_: Value, _: &Context| Ok(ToolOutput::text("x")),
        );
        ext.serve(Cursor::new(input), output.clone()).unwrap();
        let text = String::from_utf8(output.0.lock().clone()).unwrap();
        let frames: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(frames.len(), 2, "{text}");
        assert_eq!(frames[0]["result"]["api_version"], "0.1");
        assert_eq!(frames[0]["result"]["tools"][0]["name"], "t");
        assert_eq!(frames[1], json!({"jsonrpc": "2.0", "id": 2, "result": {}}));
    }

    #[test]
    fn api_0_3_is_refused_before_reading() {
        let ext = Extension::new().api_version(ApiVersion::V0_3);
        let outcome = ext.serve(Cursor::new(Vec::new()), std::io::sink());
        assert!(matches!(
            outcome,
            Err(RunError::UnsupportedApiVersion(ApiVersion::V0_3))
        ));
    }
}
