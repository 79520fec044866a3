//! The services `serve` binds to its client: for an extension started with
//! `"services": [..]`, each validated request for one of those services becomes a
//! `service_request` line, and the client's `service_answer` operation answers it. The
//! runtime has checked the request (feature, params, bounds, parent and owner) before
//! the line is written, and checks the client's result before the extension sees it.
//! A request the host no longer wants (its parent settled, the extension cancelled it,
//! the generation ended) gets a `request_cancelled` line, from one watcher thread, and
//! always before the `result` of the call whose end withdrew it.
//!
//! Forwarding a request costs no thread: the dispatcher registers it and queues its
//! line without waiting (`RawService::inline`), and the watcher writes the queued lines,
//! in order and always before any `request_cancelled` of theirs. The dispatcher never
//! waits for serve's output, so a client that stops reading holds up only its lines.
//!
//! Besides the request services by kind, the client may answer for the host's brokers
//! ([`Broker`]): the policy engine, the approver, the secret broker and the credential
//! resolver. Their lines follow the same contract (`super::brokers`).

use std::collections::HashMap;
use std::sync::{Arc, Weak};
use std::time::Duration;

use parking_lot::Mutex;
use serde_json::{json, Map, Value};

use super::bindings::Broker;
use super::control::ServiceAnswerSpec;
use super::error::{ErrorCode, ServeError};
use super::frontend::{cancelled_line, CancelCause, ServeFrontend};
use super::io::Emitter;
use crate::host::CancelFlag;
use crate::model::events::GenerationRef;
use crate::services::bound::{
    RawReply, RawService, ServiceBindings, ServiceCall, ServiceKind, ServiceRefusal, ServiceRequest,
};
use crate::services::ResourceOwner;

/// How often the watcher looks for requests that are no longer wanted while some wait.
const CANCEL_POLL: Duration = Duration::from_millis(20);

/// How long the watcher sleeps while nothing waits (a new request wakes it at once).
const IDLE_WAIT: Duration = Duration::from_secs(1);

/// Who waits for a `service_answer`.
enum Answerer {
    /// A request service's reply.
    Raw(RawReply),
    /// A broker's forwarder, blocked on its thread until the answer comes.
    Broker {
        broker: Broker,
        answer: crossbeam_channel::Sender<Result<Value, ServiceRefusal>>,
    },
}

/// A `service_request` waiting for the client.
struct Waiting {
    answerer: Answerer,
    cancelled: CancelFlag,
}

/// The client-answered services of one session.
pub(crate) struct ServeServices {
    out: Emitter,
    /// Shares its request ids, so `request_cancelled` names one request only.
    frontend: Arc<ServeFrontend>,
    /// Never held while a line is written, so registering never waits for the output.
    waiting: Mutex<HashMap<u64, Waiting>>,
    /// Wakes the watcher when a request starts waiting.
    wake: crossbeam_channel::Sender<()>,
    /// The `service_request` lines queued and not yet written (unbounded: the
    /// protocol bounds the requests in flight).
    queued: crossbeam_channel::Sender<Value>,
    unwritten: crossbeam_channel::Receiver<Value>,
    /// Held while queued lines and withdrawals are written, so that they keep their
    /// order whichever thread writes them.
    writing: Mutex<()>,
}

/// One `service_request` line: every service, request or broker, asks with this shape.
fn request_line(
    request_id: u64,
    source: &GenerationRef,
    (kind, method): (&str, &str),
    params: Value,
    owner: &ResourceOwner,
    parent_request_id: Option<u64>,
    independent: bool,
) -> Value {
    let mut line = Map::new();
    line.insert("type".into(), "service_request".into());
    line.insert("request_id".into(), request_id.into());
    source.insert_into(&mut line);
    line.insert("kind".into(), kind.into());
    line.insert("method".into(), method.into());
    line.insert("params".into(), params);
    line.insert("owner".into(), owner.to_value());
    if let Some(parent) = parent_request_id {
        line.insert("parent_request_id".into(), parent.into());
    }
    line.insert("independent".into(), independent.into());
    Value::Object(line)
}

/// Forwards one feature's requests to the client.
struct Forward(Arc<ServeServices>);

impl RawService for Forward {
    fn serve(&self, call: ServiceCall, request: ServiceRequest, reply: RawReply) {
        self.0.forward(call, request, reply);
    }

    /// Forwarding only registers the request and queues its line: it never blocks.
    fn inline(&self) -> bool {
        true
    }
}

impl ServeServices {
    /// Services writing through `out`, with a watcher thread that ends with them.
    pub fn new(out: Emitter, frontend: Arc<ServeFrontend>) -> std::io::Result<Arc<ServeServices>> {
        let (wake, woken) = crossbeam_channel::bounded(1);
        let (queued, unwritten) = crossbeam_channel::unbounded();
        let services = Arc::new(ServeServices {
            out,
            frontend,
            waiting: Mutex::new(HashMap::new()),
            wake,
            queued,
            unwritten,
            writing: Mutex::new(()),
        });
        let watched: Weak<ServeServices> = Arc::downgrade(&services);
        std::thread::Builder::new()
            .name("octet-serve-services".into())
            .spawn(move || loop {
                // Write what was queued and poll while requests wait; sleep while none
                // does. A queued line wakes it either way.
                let idle = match watched.upgrade() {
                    Some(services) => services.withdraw_unwanted(),
                    None => return,
                };
                let _ = woken.recv_timeout(if idle { IDLE_WAIT } else { CANCEL_POLL });
            })?;
        Ok(services)
    }

    /// `bindings` with the requests of `kind` forwarded to the client.
    pub fn bind_kind(
        self: &Arc<Self>,
        bindings: ServiceBindings,
        kind: ServiceKind,
    ) -> ServiceBindings {
        bindings.bind(kind, Arc::new(Forward(self.clone())))
    }

    /// Asks the client for a broker's answer and waits for it on the calling thread
    /// (a broker runs on a thread of its own, never the dispatcher's). `None` when the
    /// answer is no longer wanted, or serve is closing; the refusal the client sent, or
    /// its checked result.
    pub fn ask_broker(
        &self,
        broker: Broker,
        source: &GenerationRef,
        params: Value,
        owner: &ResourceOwner,
        parent_request_id: u64,
        cancelled: Option<&CancelFlag>,
    ) -> Option<Result<Value, ServiceRefusal>> {
        let request_id = self.frontend.next_request_id()?;
        let line = request_line(
            request_id,
            source,
            (broker.name(), broker.method()),
            params,
            owner,
            Some(parent_request_id),
            false,
        );
        let cancelled = cancelled.cloned().unwrap_or_default();
        let (answer, answered) = crossbeam_channel::bounded(1);
        self.wait_for(
            request_id,
            line,
            Waiting {
                answerer: Answerer::Broker { broker, answer },
                cancelled: cancelled.clone(),
            },
        );
        crossbeam_channel::select! {
            recv(answered) -> answer => answer.ok(),
            // Withdrawn by the watcher (or by the calls thread before a result).
            recv(cancelled.receiver()) -> _ => None,
        }
    }

    /// Runs on the dispatcher's thread: registers the request and queues its line for
    /// the watcher, without waiting for serve's output.
    fn forward(&self, call: ServiceCall, request: ServiceRequest, reply: RawReply) {
        // Once serve is closing nobody answers: the dropped reply tells the extension.
        let Some(request_id) = self.frontend.next_request_id() else {
            return;
        };
        let line = request_line(
            request_id,
            &call.source,
            (call.method.kind().name(), call.method.name()),
            request.params(),
            &call.owner,
            call.parent_request_id,
            call.independent,
        );
        // A notification (`providers/complete`) is shown but never answered.
        if call.method.is_notification() {
            drop(reply);
            self.queue(line);
            return;
        }
        self.wait_for(
            request_id,
            line,
            Waiting {
                answerer: Answerer::Raw(reply),
                cancelled: call.cancelled,
            },
        );
    }

    /// Registers `waiting` under `request_id` and queues `line`: registered first, so
    /// an answer to the line always finds it.
    fn wait_for(&self, request_id: u64, line: Value, waiting: Waiting) {
        self.waiting.lock().insert(request_id, waiting);
        self.queue(line);
    }

    /// Queues `line` for the watcher and wakes it.
    fn queue(&self, line: Value) {
        let _ = self.queued.send(line);
        let _ = self.wake.try_send(());
    }

    /// Writes the queued lines; the caller holds `writing`.
    fn write_queued(&self) {
        for line in self.unwritten.try_iter() {
            self.out.emit(line);
        }
    }

    /// The client's `service_answer`: a result that breaks the method's rules is
    /// refused here and the extension gets -32603.
    pub fn answer(&self, request_id: u64, answer: ServiceAnswerSpec) -> Result<Value, ServeError> {
        let Some(waiting) = self.waiting.lock().remove(&request_id) else {
            return Err(ServeError::new(
                ErrorCode::UnknownRequestId,
                format!("no service request {request_id} is waiting for an answer"),
            ));
        };
        // Withdrawn by the host, though its line may not be written yet: it is now.
        if waiting.cancelled.is_cancelled() {
            self.out
                .emit(cancelled_line(request_id, CancelCause::NoLongerWanted));
            return Err(ServeError::new(
                ErrorCode::UnknownRequestId,
                format!("service request {request_id} was withdrawn; the host no longer wants its answer"),
            ));
        }
        match (waiting.answerer, answer) {
            (Answerer::Raw(reply), ServiceAnswerSpec::Result(result)) => {
                let method = reply.method();
                if let Err(why) = reply.answer(result) {
                    return Err(ServeError::new(
                        ErrorCode::InvalidResult,
                        format!("the answer breaks {method}'s result rules: {why}; the extension got -32603"),
                    )
                    .with("request_id", request_id));
                }
            }
            (Answerer::Raw(reply), ServiceAnswerSpec::Refusal(refusal)) => reply.refuse(refusal),
            (Answerer::Broker { broker, answer }, ServiceAnswerSpec::Result(mut result)) => {
                if let Err(why) = broker.check_result(&result) {
                    // Dropping `answer` fails the broker: the extension gets its error.
                    crate::services::wipe_json(&mut result);
                    return Err(ServeError::new(
                        ErrorCode::InvalidResult,
                        format!(
                            "the answer breaks {}'s result rules: {why}",
                            broker.method()
                        ),
                    )
                    .with("request_id", request_id));
                }
                let _ = answer.send(Ok(result));
            }
            (Answerer::Broker { answer, .. }, ServiceAnswerSpec::Refusal(refusal)) => {
                let _ = answer.send(Err(refusal));
            }
        }
        Ok(json!({ "request_id": request_id }))
    }

    /// Ends every request the host no longer wants with a `request_cancelled` line;
    /// true when none is left waiting. The watcher calls it, and so does the calls
    /// thread before each `result` line: the host cancels a call's children before it
    /// answers the call, so their withdrawal is always written first.
    ///
    /// The queued `service_request` lines are written first, so a request's
    /// `request_cancelled` never comes before it.
    pub fn withdraw_unwanted(&self) -> bool {
        let _writing = self.writing.lock();
        self.write_queued();
        let (ids, idle) = {
            let mut waiting = self.waiting.lock();
            let mut ids: Vec<u64> = waiting
                .iter()
                .filter(|(_, w)| w.cancelled.is_cancelled())
                .map(|(id, _)| *id)
                .collect();
            ids.sort_unstable();
            for id in &ids {
                waiting.remove(id);
            }
            (ids, waiting.is_empty())
        };
        for id in ids {
            self.out
                .emit(cancelled_line(id, CancelCause::NoLongerWanted));
        }
        idle
    }

    /// Serve is closing: every waiting request ends with a `request_cancelled` line
    /// (its extension is answered with an internal error, and is shutting down).
    pub fn close(&self) {
        let _writing = self.writing.lock();
        self.write_queued();
        let mut ids: Vec<u64> = self.waiting.lock().drain().map(|(id, _)| id).collect();
        ids.sort_unstable();
        for id in ids {
            self.out.emit(cancelled_line(id, CancelCause::Shutdown));
        }
    }
}
