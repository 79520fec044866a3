//! The stop signal shared by one generation's I/O threads, and event delivery that a
//! stop interrupts.
//!
//! A thread can wait in two places: in `mio::Poll::poll` for its pipe (woken through a
//! [`mio::Waker`]) or in a crossbeam operation (a full event channel, an empty frame
//! queue), woken because the stop channel disconnects. [`StopSignal::stop`] does both,
//! after setting a flag, so a stop is never lost whatever the thread is doing.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crossbeam_channel::{Receiver, Select, Sender};
use mio::Waker;
use parking_lot::Mutex;

use super::TransportMessage;

/// A one-shot, shareable stop request for a generation's threads.
#[derive(Clone, Debug)]
pub(crate) struct StopSignal(Arc<Inner>);

#[derive(Debug)]
struct Inner {
    stopped: AtomicBool,
    wakers: Mutex<Vec<Arc<Waker>>>,
    /// Dropped on stop, which disconnects `receiver` and wakes every `select`.
    sender: Mutex<Option<Sender<()>>>,
    receiver: Receiver<()>,
}

impl StopSignal {
    pub(crate) fn new() -> StopSignal {
        let (sender, receiver) = crossbeam_channel::bounded(0);
        StopSignal(Arc::new(Inner {
            stopped: AtomicBool::new(false),
            wakers: Mutex::new(Vec::new()),
            sender: Mutex::new(Some(sender)),
            receiver,
        }))
    }

    /// Registers the waker of a thread's `Poll`; it is woken on stop (at once when
    /// the stop already happened).
    pub(crate) fn add_waker(&self, waker: Arc<Waker>) {
        let mut wakers = self.0.wakers.lock();
        if self.is_stopped() {
            let _ = waker.wake();
        }
        wakers.push(waker);
    }

    /// Requests the stop: sets the flag, then wakes every waiting thread. Idempotent.
    pub(crate) fn stop(&self) {
        self.0.stopped.store(true, Ordering::Release);
        self.0.sender.lock().take();
        for waker in self.0.wakers.lock().iter() {
            // A failed wake leaves the thread to notice the flag on its next wake-up;
            // there is nothing better to do with the error.
            let _ = waker.wake();
        }
    }

    pub(crate) fn is_stopped(&self) -> bool {
        self.0.stopped.load(Ordering::Acquire)
    }

    /// A receiver that becomes ready (disconnected) once the stop is requested.
    pub(crate) fn receiver(&self) -> &Receiver<()> {
        &self.0.receiver
    }
}

/// What became of an event handed to [`deliver`].
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Delivery {
    /// The dispatcher's channel took it.
    Delivered,
    /// The generation is stopped and the channel had no room; the event was dropped.
    Stopped,
    /// The dispatcher's receiver is gone; nothing more can be delivered.
    Disconnected,
}

/// Sends `message` on the bounded event channel, waiting for room unless the
/// generation is stopped. Once stopped, the message is still delivered when the
/// channel has room at once, so a final event reaches a dispatcher that keeps reading.
pub(crate) fn deliver(
    events: &Sender<TransportMessage>,
    stop: &StopSignal,
    message: TransportMessage,
) -> Delivery {
    if !stop.is_stopped() {
        let mut select = Select::new();
        let send = select.send(events);
        let stopped = select.recv(stop.receiver());
        let operation = select.select();
        if operation.index() == send {
            return match operation.send(events, message) {
                Ok(()) => Delivery::Delivered,
                Err(_) => Delivery::Disconnected,
            };
        }
        debug_assert_eq!(operation.index(), stopped);
        let _ = operation.recv(stop.receiver());
    }
    match events.try_send(message) {
        Ok(()) => Delivery::Delivered,
        Err(crossbeam_channel::TrySendError::Full(_)) => Delivery::Stopped,
        Err(crossbeam_channel::TrySendError::Disconnected(_)) => Delivery::Disconnected,
    }
}
