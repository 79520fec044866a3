//! One `serve` session: the host, the started extensions, the active calls, and the
//! handling of each control line.

use std::collections::HashMap;
use std::io;
use std::sync::Arc;
use std::thread::JoinHandle;

use crossbeam_channel::Sender;
use parking_lot::Mutex;
use serde_json::{json, Map, Value};

use super::calls::{self, ActiveCalls, CallOutcome, Job, TypedPending, Waiter, PROGRESS_QUEUE};
use super::control::{self, CallKind, CallSpec, ClientId, ControlError, ControlLine, Op};
use super::encode;
use super::error::{ErrorCode, ServeError};
use super::frontend::{Answer, ServeFrontend};
use super::io::Emitter;
use crate::host::{CallOptions, Extension, ExtensionHost, HostEvent};

/// What the control loop does after a line.
pub(crate) enum Flow {
    /// Read the next line.
    Continue,
    /// The client asked to shut down; the reply carries this id.
    Shutdown(Option<ClientId>),
}

/// Why the session ends.
pub(crate) enum End {
    /// The `shutdown` operation.
    Requested(Option<ClientId>),
    /// The client's input ended.
    InputClosed,
    /// Reading the input failed.
    InputFailed(io::Error),
    /// The client's output is gone.
    OutputClosed,
}

/// The state shared by the control loop and the threads it starts.
pub(crate) struct Session {
    host: Arc<ExtensionHost>,
    out: Emitter,
    frontend: Arc<ServeFrontend>,
    /// The handles of extensions started in this session, by name.
    started: Arc<Mutex<HashMap<String, Extension>>>,
    calls: Arc<ActiveCalls>,
    /// Waiter, call and start/stop threads; finished ones are pruned as new ones start.
    threads: Vec<JoinHandle<()>>,
    /// Stops the event forwarder (after it drains what is queued).
    stop_events: Sender<()>,
    events_thread: Option<JoinHandle<()>>,
}

impl Session {
    /// A session over `host`, forwarding its events as `event` lines.
    pub fn new(
        host: ExtensionHost,
        out: Emitter,
        frontend: Arc<ServeFrontend>,
    ) -> io::Result<Session> {
        let (stop_events, stopped) = crossbeam_channel::bounded::<()>(1);
        let events = host.events().clone();
        let events_out = out.clone();
        let events_thread = std::thread::Builder::new()
            .name("octet-serve-events".into())
            .spawn(move || {
                let forward = |event: HostEvent| {
                    if let Some(line) = encode::host_event(&event) {
                        events_out.emit(line);
                    }
                };
                loop {
                    crossbeam_channel::select! {
                        recv(events) -> event => match event {
                            Ok(event) => forward(event),
                            Err(_) => return,
                        },
                        recv(stopped) -> _ => break,
                    }
                }
                events.try_iter().for_each(forward);
            })?;
        Ok(Session {
            host: Arc::new(host),
            out,
            frontend,
            started: Arc::default(),
            calls: Arc::default(),
            threads: Vec::new(),
            stop_events,
            events_thread: Some(events_thread),
        })
    }

    /// True once the client's output is gone.
    pub fn output_closed(&self) -> bool {
        self.out.is_broken()
    }

    /// Handles one control line.
    pub fn handle_line(&mut self, line: &[u8]) -> Flow {
        match control::parse(line) {
            Ok(ControlLine { id, op }) => self.handle(id, op),
            Err(ControlError { id, error }) => {
                self.reply_error(id.as_ref(), error);
                Flow::Continue
            }
        }
    }

    /// Answers a line that exceeded the bound.
    pub fn line_too_long(&self, bytes: usize, limit: usize) {
        let error = ServeError::new(
            ErrorCode::LineTooLong,
            format!("a control line of {bytes} bytes exceeds the {limit}-byte bound"),
        )
        .with("bytes", bytes)
        .with("limit", limit);
        self.reply_error(None, error);
    }

    fn handle(&mut self, id: Option<ClientId>, op: Op) -> Flow {
        let id = id.as_ref();
        match op {
            Op::Discover => {
                let catalog = self.host.discover();
                self.reply_ok(id, encode::catalog(&catalog));
            }
            Op::Start { extension } => self.start(id, extension),
            Op::Stop { extension } => self.stop(id, extension),
            Op::Reload { extension } => self.reload(id, extension),
            Op::Call(spec) => self.call(id, spec),
            Op::Cancel { call_id } => match self.calls.cancel(&call_id) {
                Ok(()) => self.reply_ok(id, json!({"call_id": call_id.to_value()})),
                Err(error) => self.reply_error(id, error),
            },
            Op::AnswerConfirmation {
                request_id,
                confirmed,
            } => self.answer(id, request_id, Answer::Confirmed(confirmed)),
            Op::AnswerInput { request_id, value } => {
                self.answer(id, request_id, Answer::Input(value))
            }
            Op::Status => {
                let extensions: Vec<Value> =
                    self.host.status().iter().map(encode::status).collect();
                self.reply_ok(id, json!({"extensions": extensions}));
            }
            Op::Lifecycle(notification) => {
                self.host.lifecycle(notification);
                self.reply_ok(id, json!({}));
            }
            Op::Shutdown => return Flow::Shutdown(id.cloned()),
        }
        Flow::Continue
    }

    fn answer(&self, id: Option<&ClientId>, request_id: u64, answer: Answer) {
        match self.frontend.answer(request_id, answer) {
            Ok(()) => self.reply_ok(id, json!({"request_id": request_id})),
            Err(error) => self.reply_error(id, error),
        }
    }

    /// Starts on a thread of its own: `initialize` may take seconds, and the control
    /// loop must keep answering meanwhile.
    fn start(&mut self, id: Option<&ClientId>, extension: String) {
        let host = self.host.clone();
        let started = self.started.clone();
        let out = self.out.clone();
        let id = id.cloned();
        self.spawn("octet-serve-start", move || {
            match host.start(&extension) {
                Ok(handle) => {
                    let info = encode::started(handle.info());
                    started.lock().insert(extension, handle);
                    out.emit(reply_ok_line(id.as_ref(), info));
                }
                Err(error) => {
                    out.emit(reply_error_line(id.as_ref(), &ServeError::from(&error)));
                }
            };
        });
    }

    /// Reloads candidate-first on a thread of its own (section 5): the current
    /// generation keeps serving until the new one is ready, and the session's handle
    /// routes to the new one from then on.
    fn reload(&mut self, id: Option<&ClientId>, extension: String) {
        if !self.started.lock().contains_key(&extension) {
            self.reply_error(id, not_started(&extension));
            return;
        }
        let host = self.host.clone();
        let out = self.out.clone();
        let id = id.cloned();
        self.spawn("octet-serve-reload", move || {
            let line = match host.reload(&extension) {
                Ok(info) => reply_ok_line(id.as_ref(), encode::started(&info)),
                Err(error) => reply_error_line(id.as_ref(), &ServeError::from(&error)),
            };
            out.emit(line);
        });
    }

    /// Stops on a thread of its own (the bounded shutdown sequence of section 1.8).
    fn stop(&mut self, id: Option<&ClientId>, extension: String) {
        let Some(handle) = self.started.lock().remove(&extension) else {
            self.reply_error(id, not_started(&extension));
            return;
        };
        let out = self.out.clone();
        let id = id.cloned();
        self.spawn("octet-serve-stop", move || {
            let report = handle.shutdown().unwrap_or_default();
            out.emit(reply_ok_line(
                id.as_ref(),
                json!({"report": encode::shutdown_report(&report)}),
            ));
        });
    }

    /// Admits a call: the reply acknowledges it, the `result` line follows.
    fn call(&mut self, id: Option<&ClientId>, spec: CallSpec) {
        let CallSpec {
            call_id,
            extension,
            timeout,
            kind,
        } = spec;
        let Some(handle) = self.started.lock().get(&extension).cloned() else {
            self.reply_error(id, not_started(&extension));
            return;
        };
        // Every kind but `menu` (whose fallback needs the whole wait) is a
        // `PendingCall`, and so cancellable.
        let cancellable = !matches!(kind, CallKind::Menu);
        let cancels = match self.calls.admit(&call_id, cancellable) {
            Ok(cancels) => cancels,
            Err(error) => {
                self.reply_error(id, error);
                return;
            }
        };
        let (progress_sink, progress) = crossbeam_channel::bounded(PROGRESS_QUEUE);
        let mut options = CallOptions::default().with_progress(progress_sink);
        options.deadline = timeout;
        let op = kind.op();
        let (job, blocking) = start_job(&handle, kind, options);
        debug_assert_eq!(job.is_cancellable(), cancellable);
        self.reply_ok(id, json!({"call_id": call_id.to_value()}));
        if let Some((name, body)) = blocking {
            self.spawn(name, body);
        }
        let waiter = Waiter {
            call_id,
            op,
            extension,
            job,
            progress,
            cancels,
            calls: self.calls.clone(),
            out: self.out.clone(),
        };
        self.spawn("octet-serve-call", move || waiter.run());
    }

    /// Runs `body` on a named thread. When no thread can be started, it runs inline on
    /// the control loop: every call is bounded by its deadline, so this is slower, never
    /// stuck, and loses nothing.
    fn spawn(&mut self, name: &str, body: impl FnOnce() + Send + 'static) {
        self.threads.retain(|thread| !thread.is_finished());
        let body = Arc::new(Mutex::new(Some(body)));
        let run = {
            let body = body.clone();
            move || {
                if let Some(body) = body.lock().take() {
                    body();
                }
            }
        };
        match std::thread::Builder::new().name(name.into()).spawn(run) {
            Ok(thread) => self.threads.push(thread),
            Err(_) => {
                if let Some(body) = body.lock().take() {
                    body();
                }
            }
        }
    }

    fn reply_ok(&self, id: Option<&ClientId>, fields: Value) {
        self.out.emit(reply_ok_line(id, fields));
    }

    fn reply_error(&self, id: Option<&ClientId>, error: ServeError) {
        self.out.emit(reply_error_line(id, &error));
    }

    /// Ends the session: pending questions end, the host shuts down, every call settles
    /// and its `result` is written, then the final line carries the shutdown report.
    pub fn finish(mut self, end: End) -> Result<(), io::Error> {
        self.frontend.close();
        let report = encode::shutdown_report(&self.host.shutdown());
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
        let _ = self.stop_events.try_send(());
        if let Some(thread) = self.events_thread.take() {
            let _ = thread.join();
        }
        self.started.lock().clear();
        let (last, result) = match end {
            End::Requested(id) => (
                Some(reply_ok_line(id.as_ref(), json!({"report": report}))),
                Ok(()),
            ),
            End::InputClosed => (
                Some(json!({"type": "shutdown", "reason": "input_closed", "report": report})),
                Ok(()),
            ),
            End::InputFailed(error) => (
                Some(json!({
                    "type": "shutdown", "reason": "input_failed",
                    "message": error.to_string(), "report": report,
                })),
                Err(error),
            ),
            End::OutputClosed => (
                None,
                Err(io::Error::new(
                    io::ErrorKind::BrokenPipe,
                    "the client closed serve's output",
                )),
            ),
        };
        if let Some(last) = last {
            self.out.emit_final(last);
        }
        result
    }
}

/// Starts the host request of `kind`. Cancellable kinds return a [`PendingCall`]
/// handle; the others (the host offers them only as blocking calls) return the body of
/// a thread that runs the call and sends its outcome.
///
/// [`PendingCall`]: crate::host::PendingCall
#[allow(clippy::type_complexity)]
fn start_job(
    handle: &Extension,
    kind: CallKind,
    options: CallOptions,
) -> (Job, Option<(&'static str, Box<dyn FnOnce() + Send>)>) {
    let pending = |job: Box<dyn calls::PendingJob>| (Job::Pending(job), None);
    let blocking = |body: Box<dyn FnOnce() -> CallOutcome + Send>| {
        let (done, outcome) = crossbeam_channel::bounded(1);
        let run: Box<dyn FnOnce() + Send> = Box::new(move || {
            let _ = done.send(body());
        });
        (
            Job::Blocking(outcome),
            Some(("octet-serve-blocking-call", run)),
        )
    };
    let handle = handle.clone();
    match kind {
        CallKind::Tool { tool, arguments } => pending(Box::new(TypedPending {
            pending: handle.call_tool_async(&tool, arguments, options),
            encode: encode::tool_output,
        })),
        CallKind::Command { name, arguments } => pending(Box::new(TypedPending {
            pending: handle.execute_command_async(&name, arguments, options),
            encode: encode::command_output,
        })),
        CallKind::Hook(payload) => pending(Box::new(TypedPending {
            pending: handle.run_hook_async(payload, options),
            encode: encode::hook_output,
        })),
        CallKind::Context { prompt } => pending(Box::new(TypedPending {
            pending: handle.collect_context_async(prompt.as_deref(), options),
            encode: |c| encode::context_output(c),
        })),
        CallKind::StatusCollect { surface } => pending(Box::new(TypedPending {
            pending: handle.collect_status_async(surface, options),
            encode: |c| encode::status_output(c.as_ref()),
        })),
        CallKind::Render {
            tool,
            arguments,
            output,
            is_error,
        } => pending(Box::new(TypedPending {
            pending: handle.render_tool_async(&tool, arguments, &output, is_error, options),
            encode: encode::render_output,
        })),
        CallKind::Menu => blocking(Box::new(move || {
            handle
                .collect_menu(options)
                .map(|m| encode::menu_output(&m))
        })),
    }
}

fn not_started(extension: &str) -> ServeError {
    ServeError::new(
        ErrorCode::NotStarted,
        format!("extension `{extension}` is not started in this session"),
    )
    .with("extension", extension)
}

/// `{"type": "reply", "id": .., "ok": true, ..fields}`.
pub(crate) fn reply_ok_line(id: Option<&ClientId>, fields: Value) -> Value {
    let mut line = reply_head(id, true);
    if let Value::Object(fields) = fields {
        line.extend(fields);
    }
    Value::Object(line)
}

/// `{"type": "reply", "id": .., "ok": false, "error": {..}}`.
pub(crate) fn reply_error_line(id: Option<&ClientId>, error: &ServeError) -> Value {
    let mut line = reply_head(id, false);
    line.insert("error".into(), error.to_value());
    Value::Object(line)
}

fn reply_head(id: Option<&ClientId>, ok: bool) -> Map<String, Value> {
    let mut line = Map::new();
    line.insert("type".into(), "reply".into());
    line.insert("id".into(), id.map_or(Value::Null, ClientId::to_value));
    line.insert("ok".into(), ok.into());
    line
}
