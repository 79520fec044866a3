//! Calls in flight: the table of caller ids, and one waiter thread per call that
//! forwards the call's progress (tagged with its `call_id`), relays `cancel`, and writes
//! the final `result` line after every progress line of the call.

use std::collections::HashMap;

use crossbeam_channel::{Receiver, RecvError, Sender};
use parking_lot::Mutex;
use serde_json::{Map, Value};

use super::control::ClientId;
use super::encode;
use super::error::{ErrorCode, ServeError};
use super::io::Emitter;
use crate::host::{CallError, CallReply, PendingCall, Progress};

/// Progress events buffered per call. The host never blocks on this channel: when the
/// client reads too slowly, further events of the call are dropped (their `sequence`
/// numbers show the gap).
pub(crate) const PROGRESS_QUEUE: usize = 1024;

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

/// How a waiter learns that its call settled.
pub(crate) enum Job {
    /// A cancellable call the host gave a handle for.
    Pending(Box<dyn PendingJob>),
    /// A call running to completion on a thread of its own, which sends its outcome.
    Blocking(Receiver<CallOutcome>),
}

impl Job {
    /// True when `cancel` can reach the call.
    pub fn is_cancellable(&self) -> bool {
        matches!(self, Job::Pending(_))
    }
}

/// One active call's entry: how to reach its waiter with a cancellation.
struct ActiveCall {
    cancel: Option<Sender<()>>,
}

/// The caller ids of every active call. An id is active from admission until its
/// `result` line is queued, and may be reused after that.
#[derive(Default)]
pub(crate) struct ActiveCalls {
    calls: Mutex<HashMap<ClientId, ActiveCall>>,
}

impl ActiveCalls {
    /// Registers `call_id`; for a cancellable call, returns the receiver its waiter
    /// watches for `cancel`.
    pub fn admit(
        &self,
        call_id: &ClientId,
        cancellable: bool,
    ) -> Result<Option<Receiver<()>>, ServeError> {
        let mut calls = self.calls.lock();
        if calls.contains_key(call_id) {
            return Err(ServeError::new(
                ErrorCode::DuplicateCallId,
                "`call_id` is already used by an active call",
            )
            .with("call_id", call_id.to_value()));
        }
        let (cancel, cancels) = match cancellable {
            true => {
                let (tx, rx) = crossbeam_channel::bounded(1);
                (Some(tx), Some(rx))
            }
            false => (None, None),
        };
        calls.insert(call_id.clone(), ActiveCall { cancel });
        Ok(cancels)
    }

    /// Relays a cancellation to the call's waiter.
    pub fn cancel(&self, call_id: &ClientId) -> Result<(), ServeError> {
        let calls = self.calls.lock();
        let Some(call) = calls.get(call_id) else {
            return Err(ServeError::new(
                ErrorCode::UnknownCallId,
                "`call_id` names no active call",
            )
            .with("call_id", call_id.to_value()));
        };
        match &call.cancel {
            // A full channel means a cancellation is already on its way.
            Some(cancel) => {
                let _ = cancel.try_send(());
                Ok(())
            }
            None => Err(ServeError::new(
                ErrorCode::NotCancellable,
                "this kind of call runs to completion or to its deadline once admitted",
            )
            .with("call_id", call_id.to_value())),
        }
    }

    /// Frees `call_id`.
    fn finish(&self, call_id: &ClientId) {
        self.calls.lock().remove(call_id);
    }
}

/// Everything one waiter thread needs.
pub(crate) struct Waiter {
    pub call_id: ClientId,
    pub op: &'static str,
    pub extension: String,
    pub job: Job,
    pub progress: Receiver<Progress>,
    pub cancels: Option<Receiver<()>>,
    pub calls: std::sync::Arc<ActiveCalls>,
    pub out: Emitter,
}

impl Waiter {
    /// Waits for the call, forwarding progress and cancellations, then writes the
    /// remaining progress and the `result` line.
    pub fn run(self) {
        let Waiter {
            call_id,
            op,
            extension,
            job,
            mut progress,
            cancels,
            calls,
            out,
        } = self;
        let emit_progress = |p: Progress| {
            let mut line = Map::new();
            line.insert("type".into(), "event".into());
            line.insert("event".into(), "progress".into());
            line.insert("call_id".into(), call_id.to_value());
            line.insert("extension".into(), extension.as_str().into());
            if let Value::Object(fields) = encode::progress(&p) {
                line.extend(fields);
            }
            out.emit(Value::Object(line));
        };
        // The outcome, the progress and cancellations all arrive on channels.
        let outcome = match job {
            Job::Pending(pending) => {
                let mut cancels = cancels.unwrap_or_else(crossbeam_channel::never);
                loop {
                    crossbeam_channel::select! {
                        recv(progress) -> event => match event {
                            Ok(event) => emit_progress(event),
                            Err(_) => progress = crossbeam_channel::never(),
                        },
                        recv(cancels) -> cancel => match cancel {
                            Ok(()) => pending.cancel(),
                            Err(_) => cancels = crossbeam_channel::never(),
                        },
                        recv(pending.answer()) -> received => break pending.settle(received),
                    }
                }
            }
            Job::Blocking(done) => loop {
                crossbeam_channel::select! {
                    recv(progress) -> event => match event {
                        Ok(event) => emit_progress(event),
                        Err(_) => progress = crossbeam_channel::never(),
                    },
                    recv(done) -> outcome => {
                        break outcome.unwrap_or(Err(CallError::HostShutDown))
                    }
                }
            },
        };
        // Progress is queued before the answer that settles the call, so whatever is
        // still buffered belongs before the result.
        for event in progress.try_iter() {
            emit_progress(event);
        }
        calls.finish(&call_id);
        out.emit(result_line(&call_id, op, &extension, outcome));
    }
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
        let calls = ActiveCalls::default();
        let id = ClientId::Text("a".into());
        let cancels = calls.admit(&id, true).unwrap().unwrap();
        assert_eq!(
            calls.admit(&id, true).unwrap_err().code,
            ErrorCode::DuplicateCallId
        );
        calls.cancel(&id).unwrap();
        calls.cancel(&id).unwrap();
        assert_eq!(cancels.try_iter().count(), 1);
        calls.finish(&id);
        assert_eq!(
            calls.cancel(&id).unwrap_err().code,
            ErrorCode::UnknownCallId
        );
        let blocking = ClientId::Int(1);
        assert!(calls.admit(&blocking, false).unwrap().is_none());
        assert_eq!(
            calls.cancel(&blocking).unwrap_err().code,
            ErrorCode::NotCancellable
        );
        assert!(calls.admit(&id, true).is_ok());
    }
}
