//! One `serve` session: the host, the started extensions, the active calls, and the
//! handling of each control line. Starting, reloading and stopping generations is in
//! `generations.rs`, and starting the host request of each call kind in `jobs.rs`.

mod generations;
mod jobs;

use generations::not_started;
use jobs::start_job;

use std::collections::HashMap;
use std::io;
use std::sync::Arc;
use std::thread::JoinHandle;

use crossbeam_channel::{Receiver, Sender};
use parking_lot::Mutex;
use serde_json::{json, Map, Value};

use super::calls::{Calls, FailedJob, Waiting, PROGRESS_QUEUE};
use super::control::{self, CallKind, CallSpec, ClientId, ControlError, ControlLine, Op};
use super::encode;
use super::error::{ErrorCode, ServeError};
use super::frontend::{Answer, ServeFrontend};
use super::io::Emitter;
use super::services::ServeServices;
use super::Wakeups;
use crate::host::{CallError, CallOptions, CancelFlag, ExtensionHandle, ExtensionHost, HostEvent};
use crate::services::autocomplete::CompletionQuery;
use crate::validate::ExtensionMenuItem;

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
    /// SIGINT, SIGTERM or SIGHUP arrived (this signal number).
    Signal(i32),
}

/// The state shared by the control loop and the threads it starts.
pub(crate) struct Session {
    host: Arc<ExtensionHost>,
    out: Emitter,
    frontend: Arc<ServeFrontend>,
    /// The services the client answers.
    services: Arc<ServeServices>,
    /// The handles of extensions started in this session, by name.
    started: Arc<Mutex<HashMap<String, ExtensionHandle>>>,
    /// Starts in progress, by extension: the ids of the `start` lines that came while
    /// one was already starting, answered with its outcome.
    starting: Arc<Mutex<HashMap<String, Vec<Option<ClientId>>>>>,
    calls: Calls,
    /// Start, stop and reload threads; finished ones are pruned as new ones start.
    threads: Vec<JoinHandle<()>>,
    /// Stops the event forwarder (after it drains what is queued).
    stop_events: Sender<()>,
    events_thread: Option<JoinHandle<()>>,
    /// The wire trace's forwarder, when the session streams it.
    tracer: Option<super::trace::Tracer>,
}

impl Session {
    /// A session over `host`, forwarding its events as `event` lines; its calls thread
    /// asks for `wakeups`.
    pub fn new(
        host: ExtensionHost,
        out: Emitter,
        frontend: Arc<ServeFrontend>,
        wakeups: Wakeups,
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
        let services = ServeServices::new(out.clone(), frontend.clone())?;
        let withdraw = services.clone();
        Ok(Session {
            host: Arc::new(host),
            calls: Calls::start(
                out.clone(),
                Box::new(move || {
                    withdraw.withdraw_unwanted();
                }),
                wakeups,
            )?,
            services,
            out,
            frontend,
            started: Arc::default(),
            starting: Arc::default(),
            threads: Vec::new(),
            stop_events,
            events_thread: Some(events_thread),
            tracer: None,
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
            Op::Start {
                extension,
                startup_timeout,
                services,
                mut features,
                bulk_storage,
            } => {
                let configured = match bulk_storage {
                    None => Ok(()),
                    Some(dir) => {
                        features.push(crate::negotiation::Feature::BulkObjectsV1);
                        self.host.configure_bulk_storage(
                            crate::features::bulk::BulkStorage::in_directory(dir),
                        )
                    }
                };
                if let Err(error) = configured {
                    let error = ServeError::new(ErrorCode::InvalidValue, error.to_string())
                        .with("field", "bulk_storage");
                    self.reply_error(id, error);
                } else if features.contains(&crate::negotiation::Feature::BulkObjectsV1)
                    && !self.host.has_bulk_storage()
                {
                    let error = ServeError::new(
                        ErrorCode::InvalidValue,
                        "`bulk_objects_v1` needs bulk storage: start serve with --bulk-storage DIR",
                    )
                    .with("field", "features");
                    self.reply_error(id, error);
                } else {
                    for feature in features {
                        self.host.allow_feature(&extension, feature);
                    }
                    self.start(id, extension, startup_timeout, services)
                }
            }
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
            Op::ServiceAnswer { request_id, answer } => {
                match self.services.answer(request_id, answer) {
                    Ok(reply) => self.reply_ok(id, reply),
                    Err(error) => self.reply_error(id, error),
                }
            }
            Op::Notify {
                extension,
                generation,
                notification,
            } => self.notify(id, &extension, generation, notification),
            Op::Autocomplete { extension, query } => self.autocomplete(id, extension, query),
            Op::Agent(op) => match super::agents::run(&self.host, op) {
                Ok(reply) => self.reply_ok(id, reply),
                Err(error) => self.reply_error(id, error),
            },
            Op::Artifact {
                extension,
                artifact_id,
            } => match self.host.artifact(&extension, &artifact_id) {
                Some(artifact) => {
                    use base64::Engine;
                    let data = base64::engine::general_purpose::STANDARD.encode(artifact.bytes());
                    self.reply_ok(
                        id,
                        json!({
                            "artifact_id": artifact_id,
                            "mime_type": artifact.mime_type(),
                            "size": artifact.size(),
                            "sha256": artifact.sha256(),
                            "data": data,
                        }),
                    );
                }
                None => self.reply_error(
                    id,
                    ServeError::new(
                        ErrorCode::InvalidValue,
                        "no live generation of the extension holds an artifact of this id \
                         (an artifact goes with the generation that published it)",
                    )
                    .with("field", "artifact_id"),
                ),
            },
            Op::Status => {
                let extensions: Vec<Value> = self
                    .host
                    .status()
                    .iter()
                    .map(crate::host::ExtensionStatus::to_value)
                    .collect();
                self.reply_ok(id, json!({"extensions": extensions}));
            }
            Op::ApplicableOperations { arguments } => {
                match self.host.get_applicable_operations(&arguments) {
                    Ok(page) => self.reply_ok(id, page.to_value()),
                    Err(error) => self.reply_error(
                        id,
                        ServeError::new(ErrorCode::DiscoveryRefused, error.to_string())
                            .with("reason", error.name()),
                    ),
                }
            }
            Op::Lifecycle(notification) => {
                self.host.lifecycle(notification);
                self.reply_ok(id, json!({}));
            }
            Op::Shutdown => return Flow::Shutdown(id.cloned()),
        }
        Flow::Continue
    }

    /// Completes a snapshot on a thread of its own (it may take the whole aggregate
    /// deadline) and replies with the claiming chain's checked items, each with its
    /// edit, or `claimed_by: null`.
    fn autocomplete(
        &self,
        id: Option<&ClientId>,
        extension: Option<String>,
        query: CompletionQuery,
    ) {
        let handle = match &extension {
            Some(name) => match self.started.lock().get(name).cloned() {
                Some(handle) => Some(handle),
                None => {
                    let error = ServeError::new(
                        ErrorCode::NotStarted,
                        format!("extension `{name}` was not started in this session"),
                    );
                    return self.reply_error(id, error);
                }
            },
            None => None,
        };
        let host = Arc::clone(&self.host);
        let out = self.out.clone();
        let id = id.cloned();
        let job = move || {
            let outcome = match handle {
                Some(handle) => handle
                    .autocomplete(&query, crate::host::CallOptions::default())
                    .map(|reply| {
                        let claimed =
                            (!reply.is_unclaimed()).then(|| (handle.name().to_string(), reply));
                        (claimed, Vec::new())
                    }),
                None => host
                    .autocomplete(&query)
                    .map(|outcome| (outcome.claimed, outcome.failures)),
            };
            let line = match outcome {
                Ok((claimed, failures)) => reply_ok_line(
                    id.as_ref(),
                    encode::autocomplete(claimed.as_ref(), &failures),
                ),
                Err(error) => reply_error_line(id.as_ref(), &ServeError::from(&error)),
            };
            out.emit(line);
        };
        if let Err(error) = std::thread::Builder::new()
            .name("octet-serve-autocomplete".into())
            .spawn(job)
        {
            log::warn!("no thread for an autocomplete query: {error}");
        }
    }

    /// Sends a Wave-1 notification through the extension's handle.
    fn notify(
        &self,
        id: Option<&ClientId>,
        extension: &str,
        generation: Option<u64>,
        notification: crate::host::BoundNotification,
    ) {
        let Some(handle) = self.started.lock().get(extension).cloned() else {
            let error = ServeError::new(
                ErrorCode::NotStarted,
                format!("extension `{extension}` was not started in this session"),
            );
            return self.reply_error(id, error);
        };
        let sent = match generation {
            Some(generation) => handle.notify_generation(generation, notification),
            None => handle.notify(notification),
        };
        match sent {
            Ok(()) => self.reply_ok(id, json!({})),
            Err(crate::host::NotifyError::Refused(refusal)) => {
                self.reply_error(id, super::members::refused_notification(refusal))
            }
            Err(error) => self.reply_error(
                id,
                ServeError::new(ErrorCode::NotStarted, error.to_string()),
            ),
        }
    }

    fn answer(&self, id: Option<&ClientId>, request_id: u64, answer: Answer) {
        match self.frontend.answer(request_id, answer) {
            Ok(()) => self.reply_ok(id, json!({"request_id": request_id})),
            Err(error) => self.reply_error(id, error),
        }
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
        if let Err(error) = self.calls.reserve(&call_id) {
            self.reply_error(id, error);
            return;
        }
        let (progress_sink, progress) = crossbeam_channel::bounded(PROGRESS_QUEUE);
        let mut options = CallOptions::default().with_progress(progress_sink);
        options.deadline = timeout;
        let op = kind.op();
        let confirms_first = matches!(
            &kind,
            CallKind::MenuAction(ExtensionMenuItem::Action {
                destructive: true,
                ..
            })
        );
        self.reply_ok(id, json!({"call_id": call_id.to_value()}));
        if !confirms_first {
            let job = start_job(&handle, kind, options, &CancelFlag::default());
            self.calls.admit(Waiting {
                call_id,
                op,
                extension,
                job,
                progress,
            });
            return;
        }
        // A destructive menu action asks its confirmation first, which waits for the
        // client: on a thread of its own, never on the control loop.
        self.threads.retain(|thread| !thread.is_finished());
        // A `cancel` meanwhile withdraws the question, and nothing is sent.
        let (withdrawn, admitter) = self.calls.confirming(&call_id);
        let started = {
            let asker = admitter.clone();
            let (call_id, extension) = (call_id.clone(), extension.clone());
            std::thread::Builder::new()
                .name("octet-serve-menu-action".into())
                .spawn(move || {
                    let job = start_job(&handle, kind, options, &withdrawn);
                    asker.admit(Waiting {
                        call_id,
                        op,
                        extension,
                        job,
                        progress,
                    });
                })
        };
        match started {
            Ok(thread) => self.threads.push(thread),
            Err(error) => {
                let (_, answer) = crossbeam_channel::bounded(1);
                admitter.admit(Waiting {
                    call_id,
                    op,
                    extension,
                    job: Box::new(FailedJob::new(CallError::InvalidRequest {
                        reason: format!("cannot start a thread for the action: {error}"),
                    })),
                    progress: answer,
                });
            }
        }
    }

    fn reply_ok(&self, id: Option<&ClientId>, fields: Value) {
        self.out.emit(reply_ok_line(id, fields));
    }

    fn reply_error(&self, id: Option<&ClientId>, error: ServeError) {
        self.out.emit(reply_error_line(id, &error));
    }

    /// Streams the wire trace through `tracer` (see [`super::ServeOptions::wire_trace`]).
    pub fn traced_by(mut self, tracer: Option<super::trace::Tracer>) -> Session {
        self.tracer = tracer;
        self
    }

    /// Ends the session: pending questions end, the host shuts down, every call settles
    /// and its `result` is written, then the final line carries the shutdown report.
    ///
    /// After a signal the shutdown is the coordinated-signal one of section 1.8 (1.4 s,
    /// then every process group is killed), and a further signal on `signals` kills
    /// every group at once.
    pub fn finish(mut self, end: End, signals: &Receiver<i32>) -> Result<(), io::Error> {
        self.frontend.close();
        self.services.close();
        let report = match end {
            End::Signal(_) => self.shutdown_for_signal(signals),
            _ => self.host.shutdown(),
        };
        let report = report.to_value();
        // Every call settled when its extension went away: wait for the result lines.
        self.calls.finish();
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
        let _ = self.stop_events.try_send(());
        if let Some(thread) = self.events_thread.take() {
            let _ = thread.join();
        }
        self.started.lock().clear();
        // Every frame was traced by now: the trace's last lines come before the final
        // line.
        if let Some(tracer) = self.tracer.take() {
            tracer.finish();
        }
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
            End::Signal(signal) => (
                Some(json!({
                    "type": "shutdown", "reason": "signal",
                    "signal": crate::transport::process::signal_name(signal), "report": report,
                })),
                Ok(()),
            ),
        };
        if let Some(last) = last {
            self.out.emit_final(last);
        }
        result
    }
}

impl Session {
    /// The coordinated-signal shutdown, with a watcher that turns a second signal into
    /// an immediate kill of every process group.
    fn shutdown_for_signal(&self, signals: &Receiver<i32>) -> crate::host::ShutdownReport {
        let (done, finished) = crossbeam_channel::bounded::<()>(1);
        let host = self.host.clone();
        let signals = signals.clone();
        let watcher = std::thread::Builder::new()
            .name("octet-serve-signals".into())
            .spawn(move || {
                crossbeam_channel::select! {
                    recv(signals) -> signal => if signal.is_ok() { host.kill_all() },
                    recv(finished) -> _ => {}
                }
            });
        let report = self.host.shutdown_for_signal();
        drop(done);
        if let Ok(watcher) = watcher {
            let _ = watcher.join();
        }
        report
    }
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
