//! Calls in flight: the table of caller ids, and one thread that waits for every call
//! at once.
//!
//! However many calls are in flight, waiting costs one thread: the *calls thread*
//! selects across every call's answer channel and progress channel (and its own
//! mailbox, for new calls and cancellations). It forwards a call's progress tagged with
//! its `call_id`, relays `cancel`, and writes the final `result` line after every
//! progress line of the call. The control loop never waits for a call.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::thread::JoinHandle;

use crossbeam_channel::{Receiver, RecvError, Select, Sender};
use parking_lot::Mutex;
use serde_json::{Map, Value};

use super::control::ClientId;
use super::error::{ErrorCode, ServeError};
use super::io::Emitter;
use super::Wakeups;
use crate::host::{CallError, CallReply, CancelFlag, PendingCall, Progress};

/// Progress events buffered per call. The host never blocks on this channel: when the
/// client reads too slowly, further events of the call are dropped (their `sequence`
/// numbers show the gap). The buffer is allocated when the call is admitted, so this
/// bound is also what a call in flight costs in memory.
pub(crate) const PROGRESS_QUEUE: usize = 64;

/// A call's outcome as JSON: the typed output, or the error.
pub(crate) type CallOutcome = Result<Value, CallError>;

/// A call the host offers a [`PendingCall`] for: selectable and cancellable.
pub(crate) trait PendingJob: Send {
    /// The channel the call's answer arrives on ([`PendingCall::answer`]).
    fn answer(&self) -> &Receiver<CallReply>;

    /// The outcome, from a receive on [`PendingJob::answer`].
    fn settle(self: Box<Self>, received: Result<CallReply, RecvError>) -> CallOutcome;

    /// Asks the host to cancel the call.
    fn cancel(&self);
}

/// A [`PendingCall`] and the encoder of its typed output.
pub(crate) struct TypedPending<T> {
    pub pending: PendingCall<T>,
    pub encode: fn(&T) -> Value,
}

impl<T: Send> PendingJob for TypedPending<T> {
    fn answer(&self) -> &Receiver<CallReply> {
        self.pending.answer()
    }

    fn settle(self: Box<Self>, received: Result<CallReply, RecvError>) -> CallOutcome {
        let encode = self.encode;
        self.pending.settle(received).map(|output| encode(&output))
    }

    fn cancel(&self) {
        self.pending.cancel();
    }
}

/// A call that failed before anything was sent (a declined menu action): it settles at
/// once with its error, through the same path as every other call.
pub(crate) struct FailedJob {
    answer: Receiver<CallReply>,
}

impl FailedJob {
    /// A job whose answer is `error`.
    pub fn new(error: CallError) -> FailedJob {
        let (reply, answer) = crossbeam_channel::bounded(1);
        let _ = reply.send(Err(error));
        FailedJob { answer }
    }
}

impl PendingJob for FailedJob {
    fn answer(&self) -> &Receiver<CallReply> {
        &self.answer
    }

    fn settle(self: Box<Self>, received: Result<CallReply, RecvError>) -> CallOutcome {
        match received {
            Ok(Err(error)) => Err(error),
            _ => Err(CallError::HostShutDown),
        }
    }

    fn cancel(&self) {}
}

/// One admitted call, as the calls thread keeps it.
pub(crate) struct Waiting {
    pub call_id: ClientId,
    pub op: &'static str,
    pub extension: String,
    pub job: Box<dyn PendingJob>,
    pub progress: Receiver<Progress>,
}

/// What the control loop tells the calls thread.
enum Mail {
    /// Wait for this call too.
    Admit(Waiting),
    /// Cancel the call with this id.
    Cancel(ClientId),
}

/// The calls of one session: ids are checked here, on the control loop, and the
/// waiting happens on the calls thread.
pub(crate) struct Calls {
    /// The caller ids of every active call: active from admission until the `result`
    /// line is queued, reusable after that.
    active: Arc<Mutex<HashSet<ClientId>>>,
    /// The calls still waiting for a person's confirmation before anything is sent
    /// (destructive menu actions), with the flag that withdraws the question.
    confirming: Confirming,
    mail: Option<Sender<Mail>>,
    thread: Option<JoinHandle<()>>,
}

/// See [`Calls::confirming`]. A call leaves this table and reaches the calls thread
/// under its lock, so a `cancel` either finds it here or reaches the calls thread
/// after the call does.
type Confirming = Arc<Mutex<HashMap<ClientId, CancelFlag>>>;

impl Calls {
    /// Starts the calls thread, which writes to `out`. `before_result` runs before
    /// each `result` line is queued: serve withdraws there the service requests the
    /// call's end cancelled, so their `request_cancelled` lines come first. The thread
    /// asks for `wakeups`.
    pub fn start(
        out: Emitter,
        before_result: Box<dyn Fn() + Send>,
        wakeups: Wakeups,
    ) -> std::io::Result<Calls> {
        let active = Arc::new(Mutex::new(HashSet::new()));
        let (mail, mailbox) = crossbeam_channel::unbounded();
        let thread = {
            let active = active.clone();
            std::thread::Builder::new()
                .name("octet-serve-calls".into())
                .spawn(move || {
                    let _prompt = wakeups.hold();
                    wait_for_calls(mailbox, active, out, before_result)
                })?
        };
        Ok(Calls {
            active,
            confirming: Confirming::default(),
            mail: Some(mail),
            thread: Some(thread),
        })
    }

    /// Reserves `call_id` for a new call, or says why it cannot be used.
    pub fn reserve(&self, call_id: &ClientId) -> Result<(), ServeError> {
        if !self.active.lock().insert(call_id.clone()) {
            return Err(ServeError::new(
                ErrorCode::DuplicateCallId,
                "`call_id` is already used by an active call",
            )
            .with("call_id", call_id.to_value()));
        }
        Ok(())
    }

    /// Hands a call whose id was reserved to the calls thread.
    pub fn admit(&self, waiting: Waiting) {
        if let Some(mail) = &self.mail {
            let _ = mail.send(Mail::Admit(waiting));
        }
    }

    /// Marks the reserved `call_id` as waiting for a confirmation before it can be
    /// admitted, and returns the flag a `cancel` sets meanwhile and the handle that
    /// admits the call from the thread that asks.
    pub fn confirming(&self, call_id: &ClientId) -> (CancelFlag, Admitter) {
        let withdrawn = CancelFlag::default();
        self.confirming
            .lock()
            .insert(call_id.clone(), withdrawn.clone());
        let admitter = Admitter {
            mail: self.mail.clone(),
            confirming: self.confirming.clone(),
        };
        (withdrawn, admitter)
    }

    /// Relays a cancellation to the call's waiter.
    pub fn cancel(&self, call_id: &ClientId) -> Result<(), ServeError> {
        if !self.active.lock().contains(call_id) {
            return Err(ServeError::new(
                ErrorCode::UnknownCallId,
                "`call_id` names no active call",
            )
            .with("call_id", call_id.to_value()));
        }
        let confirming = self.confirming.lock();
        if let Some(withdrawn) = confirming.get(call_id) {
            withdrawn.cancel();
        } else if let Some(mail) = &self.mail {
            let _ = mail.send(Mail::Cancel(call_id.clone()));
        }
        Ok(())
    }

    /// Waits until every admitted call has settled and its `result` line is queued,
    /// then ends the calls thread. Calls settle by themselves once the host is shut
    /// down, so call this after the host's shutdown.
    pub fn finish(&mut self) {
        self.mail = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Calls {
    fn drop(&mut self) {
        self.finish();
    }
}

/// Admits one call that waited for its confirmation, from the thread that asked
/// ([`Calls::confirming`]).
#[derive(Clone)]
pub(crate) struct Admitter {
    mail: Option<Sender<Mail>>,
    confirming: Confirming,
}

impl Admitter {
    /// Hands the call to the calls thread. A `cancel` that came after the question
    /// was answered but before this cancels the call now.
    pub fn admit(&self, waiting: Waiting) {
        let mut confirming = self.confirming.lock();
        if let Some(withdrawn) = confirming.remove(&waiting.call_id) {
            if withdrawn.is_cancelled() {
                waiting.job.cancel();
            }
        }
        if let Some(mail) = &self.mail {
            let _ = mail.send(Mail::Admit(waiting));
        }
    }
}

/// What one turn of the calls thread found.
enum Turn {
    Mail(Result<Mail, RecvError>),
    Answer(usize, Result<CallReply, RecvError>),
    Progress(usize, Result<Progress, RecvError>),
}

/// The calls thread: waits on the mailbox and on every call's answer and progress at
/// once, until the mailbox is closed and no call is left.
fn wait_for_calls(
    mut mailbox: Receiver<Mail>,
    active: Arc<Mutex<HashSet<ClientId>>>,
    out: Emitter,
    before_result: Box<dyn Fn() + Send>,
) {
    let mut calls: Vec<Waiting> = Vec::new();
    let mut open = true;
    while open || !calls.is_empty() {
        let turn = {
            let mut select = Select::new();
            select.recv(&mailbox);
            for call in &calls {
                select.recv(call.job.answer());
                select.recv(&call.progress);
            }
            let operation = select.select();
            match operation.index() {
                0 => Turn::Mail(operation.recv(&mailbox)),
                n if n % 2 == 1 => {
                    let k = (n - 1) / 2;
                    Turn::Answer(k, operation.recv(calls[k].job.answer()))
                }
                n => {
                    let k = (n - 2) / 2;
                    Turn::Progress(k, operation.recv(&calls[k].progress))
                }
            }
        };
        match turn {
            Turn::Mail(Ok(Mail::Admit(waiting))) => calls.push(waiting),
            Turn::Mail(Ok(Mail::Cancel(call_id))) => {
                if let Some(call) = calls.iter().find(|c| c.call_id == call_id) {
                    call.job.cancel();
                }
            }
            Turn::Mail(Err(_)) => {
                open = false;
                mailbox = crossbeam_channel::never();
            }
            Turn::Progress(k, Ok(progress)) => emit_progress(&out, &calls[k], &progress),
            // The host dropped the progress sink: the answer follows.
            Turn::Progress(k, Err(_)) => calls[k].progress = crossbeam_channel::never(),
            Turn::Answer(k, received) => {
                let call = calls.swap_remove(k);
                // Progress is queued before the answer that settles the call, so
                // whatever is still buffered belongs before the result.
                for progress in call.progress.try_iter() {
                    emit_progress(&out, &call, &progress);
                }
                let outcome = call.job.settle(received);
                // The host withdrew the call's children before it answered the call.
                before_result();
                active.lock().remove(&call.call_id);
                out.emit(result_line(
                    &call.call_id,
                    call.op,
                    &call.extension,
                    outcome,
                ));
            }
        }
    }
}

/// One `progress` event line of `call`.
fn emit_progress(out: &Emitter, call: &Waiting, progress: &Progress) {
    let mut line = Map::new();
    line.insert("type".into(), "event".into());
    line.insert("event".into(), "progress".into());
    line.insert("call_id".into(), call.call_id.to_value());
    line.insert("extension".into(), call.extension.as_str().into());
    if let Value::Object(fields) = progress.to_value() {
        line.extend(fields);
    }
    out.emit(Value::Object(line));
}

/// The `result` line of one call.
fn result_line(call_id: &ClientId, op: &str, extension: &str, outcome: CallOutcome) -> Value {
    let mut line = Map::new();
    line.insert("type".into(), "result".into());
    line.insert("call_id".into(), call_id.to_value());
    line.insert("op".into(), op.into());
    line.insert("extension".into(), extension.into());
    match outcome {
        Ok(output) => {
            line.insert("ok".into(), true.into());
            line.insert("output".into(), output);
        }
        Err(error) => {
            line.insert("ok".into(), false.into());
            line.insert("error".into(), ServeError::from(&error).to_value());
        }
    }
    Value::Object(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_while_active_and_reusable_after() {
        let (out, _writer) =
            super::super::io::start_writer(std::io::sink(), Wakeups::default()).unwrap();
        let calls = Calls::start(out, Box::new(|| {}), Wakeups::default()).unwrap();
        let id = ClientId::Text("a".into());
        calls.reserve(&id).unwrap();
        assert_eq!(
            calls.reserve(&id).unwrap_err().code,
            ErrorCode::DuplicateCallId
        );
        calls.cancel(&id).unwrap();
        assert_eq!(
            calls.cancel(&ClientId::Int(9)).unwrap_err().code,
            ErrorCode::UnknownCallId
        );
        calls.active.lock().remove(&id);
        assert!(calls.reserve(&id).is_ok());
    }
}
