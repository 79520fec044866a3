//! Calls in flight: [`PendingCall`]. The call's data types live in
//! [`crate::model::call`] and are re-exported here.

use std::fmt;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvError, RecvTimeoutError, Sender};

use crate::dispatcher::Command;
pub use crate::model::call::*;

/// Turns the dispatcher's reply into the call's outcome: validates and types an
/// answer, and may turn a failure into an outcome too (the menu fallback).
type Convert<T> = Box<dyn FnOnce(CallReply) -> Result<T, CallError> + Send>;

/// A call in flight. Wait for it, poll it, or cancel it from any thread.
///
/// Dropping a `PendingCall` that has not settled cancels the request (reason
/// `"dropped"`).
pub struct PendingCall<T> {
    call: CallId,
    reply: Receiver<CallReply>,
    commands: Sender<Command>,
    /// How long [`PendingCall::wait`] spins before it sleeps (see `crate::spin`).
    spin: Duration,
    convert: Option<Convert<T>>,
    settled: bool,
}

impl<T> PendingCall<T> {
    pub(crate) fn new(
        call: CallId,
        reply: Receiver<CallReply>,
        commands: Sender<Command>,
        spin: Duration,
        convert: Convert<T>,
    ) -> PendingCall<T> {
        PendingCall {
            call,
            reply,
            commands,
            spin,
            convert: Some(convert),
            settled: false,
        }
    }

    /// The call's host-wide id.
    pub fn id(&self) -> CallId {
        self.call
    }

    /// Blocks until the call settles.
    pub fn wait(mut self) -> Result<T, CallError> {
        crate::spin::spin_until(self.spin, || !self.reply.is_empty());
        let reply = self.reply.recv().unwrap_or(Err(CallError::HostShutDown));
        self.finish(reply)
    }

    /// Waits at most `timeout`; `None` means the call is still in flight.
    pub fn wait_timeout(&mut self, timeout: Duration) -> Option<Result<T, CallError>> {
        if self.settled {
            return Some(Err(CallError::Cancelled {
                reason: CancelReason::User,
            }));
        }
        // The spin counts toward the timeout: the whole wait ends by one deadline.
        let deadline = Instant::now().checked_add(timeout);
        crate::spin::spin_until(self.spin.min(timeout), || !self.reply.is_empty());
        let received = match deadline {
            Some(deadline) => self.reply.recv_deadline(deadline),
            None => self
                .reply
                .recv()
                .map_err(|_| RecvTimeoutError::Disconnected),
        };
        match received {
            Ok(reply) => Some(self.finish(reply)),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => Some(self.finish(Err(CallError::HostShutDown))),
        }
    }

    /// The channel the call's answer arrives on: one message, after which it is
    /// closed. It lets a caller wait for many calls, and for channels of its own, at
    /// once with `crossbeam_channel::select!` or `Select`; hand the outcome of a
    /// receive on it to [`PendingCall::settle`]. To wait for this call alone, use
    /// [`PendingCall::wait`].
    ///
    /// ```no_run
    /// # use octet_host::host::{CallOptions, ExtensionHandle};
    /// # fn two(ext: &ExtensionHandle) {
    /// let a = ext.call_tool_async("echo", serde_json::json!({"n": 1}), CallOptions::default());
    /// let b = ext.call_tool_async("echo", serde_json::json!({"n": 2}), CallOptions::default());
    /// crossbeam_channel::select! {
    ///     recv(a.answer()) -> received => println!("a first: {:?}", a.settle(received)),
    ///     recv(b.answer()) -> received => println!("b first: {:?}", b.settle(received)),
    /// }
    /// # }
    /// ```
    pub fn answer(&self) -> &Receiver<CallReply> {
        &self.reply
    }

    /// Settles the call with the outcome of a receive on [`PendingCall::answer`] (a
    /// closed channel means the host shut down), validating and converting the answer
    /// as [`PendingCall::wait`] does.
    pub fn settle(mut self, received: Result<CallReply, RecvError>) -> Result<T, CallError> {
        self.finish(received.unwrap_or(Err(CallError::HostShutDown)))
    }

    /// Asks the host to cancel the call (reason `"user"`). The waiter then receives
    /// [`CallError::Cancelled`] unless the answer already arrived.
    pub fn cancel(&self) {
        let _ = self.commands.send(Command::Cancel {
            call: self.call,
            reason: CancelReason::User,
        });
    }

    fn finish(&mut self, reply: CallReply) -> Result<T, CallError> {
        self.settled = true;
        let convert = self.convert.take().expect("a call settles once");
        convert(reply)
    }
}

impl<T> Drop for PendingCall<T> {
    fn drop(&mut self) {
        if !self.settled {
            let _ = self.commands.send(Command::Cancel {
                call: self.call,
                reason: CancelReason::Dropped,
            });
        }
    }
}

impl<T> fmt::Debug for PendingCall<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PendingCall")
            .field("call", &self.call)
            .finish_non_exhaustive()
    }
}
