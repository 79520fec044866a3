//! The read gate: backpressure from the dispatcher to one generation's reader.
//!
//! Whatever an extension writes is read, decoded and queued for the dispatcher, and
//! whatever the dispatcher answers waits to be written. Neither may grow without
//! bound, so the reader stops reading while either side is full:
//!
//! - **Batches in flight.** At most [`MAX_INFLIGHT_BATCHES`] of the generation's
//!   batches wait in the dispatcher's channel; the reader counts each one it hands
//!   over, the dispatcher each one it has handled.
//! - **Answers not written.** The dispatcher *holds* the gate while the generation's
//!   outbound backlog (frames waiting behind the writer's queue) is over its bound
//!   ([`crate::limits::MAX_OUTBOUND_BACKLOG_BYTES`]): an extension that does not read
//!   its answers is not read either.
//!
//! While the gate is closed the reader leaves the pipe alone. The kernel's pipe buffer
//! fills and the extension's own writes block: the flood stops at its source. The
//! reader sleeps in its `Poll`; whoever opens the gate wakes it, and only when it
//! sleeps, so the gate costs two atomic operations per batch on the hot path.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use mio::Waker;

pub use crate::limits::MAX_INFLIGHT_BATCHES;

/// One generation's read gate, shared by its reader and the dispatcher.
#[derive(Clone, Debug)]
pub struct ReadGate(Arc<Inner>);

#[derive(Debug)]
struct Inner {
    inflight: AtomicUsize,
    held: AtomicBool,
    sleeping: AtomicBool,
    waker: Arc<Waker>,
}

impl ReadGate {
    /// A gate that wakes the reader through `waker` (its `Poll`'s).
    pub(crate) fn new(waker: Arc<Waker>) -> ReadGate {
        ReadGate(Arc::new(Inner {
            inflight: AtomicUsize::new(0),
            held: AtomicBool::new(false),
            sleeping: AtomicBool::new(false),
            waker,
        }))
    }

    /// True when the reader may read and hand over another batch.
    pub fn is_open(&self) -> bool {
        self.0.inflight.load(Ordering::SeqCst) < MAX_INFLIGHT_BATCHES
            && !self.0.held.load(Ordering::SeqCst)
    }

    /// True while the dispatcher holds the gate.
    pub fn is_held(&self) -> bool {
        self.0.held.load(Ordering::SeqCst)
    }

    /// The reader handed a batch over.
    pub(crate) fn batch_sent(&self) {
        self.0.inflight.fetch_add(1, Ordering::SeqCst);
    }

    /// The dispatcher handled one of the generation's batches.
    pub fn batch_handled(&self) {
        let before = self.0.inflight.fetch_sub(1, Ordering::SeqCst);
        if before == MAX_INFLIGHT_BATCHES {
            self.wake_if_sleeping();
        }
    }

    /// Holds the gate closed (the outbound backlog is full) or releases it.
    pub fn hold(&self, held: bool) {
        let was = self.0.held.swap(held, Ordering::SeqCst);
        if was && !held {
            self.wake_if_sleeping();
        }
    }

    /// The reader is about to sleep because the gate is closed: true when it may, false
    /// when the gate opened meanwhile (then it reads on). Paired with
    /// [`ReadGate::woke`] after the sleep.
    pub(crate) fn may_sleep(&self) -> bool {
        self.0.sleeping.store(true, Ordering::SeqCst);
        if self.is_open() {
            self.0.sleeping.store(false, Ordering::SeqCst);
            return false;
        }
        true
    }

    /// The reader woke up.
    pub(crate) fn woke(&self) {
        self.0.sleeping.store(false, Ordering::SeqCst);
    }

    fn wake_if_sleeping(&self) {
        if self.0.sleeping.load(Ordering::SeqCst) {
            // A failed wake leaves the reader to its next wake-up (a stop, or the pipe).
            let _ = self.0.waker.wake();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mio::{Events, Poll, Token};
    use std::time::Duration;

    #[test]
    fn the_gate_closes_when_full_or_held_and_wakes_a_sleeping_reader() {
        let mut poll = Poll::new().unwrap();
        let waker = Arc::new(Waker::new(poll.registry(), Token(1)).unwrap());
        let gate = ReadGate::new(waker);
        assert!(gate.is_open());
        for _ in 0..MAX_INFLIGHT_BATCHES {
            gate.batch_sent();
        }
        assert!(!gate.is_open());
        assert!(gate.may_sleep());
        gate.batch_handled();
        let mut events = Events::with_capacity(4);
        poll.poll(&mut events, Some(Duration::from_secs(20)))
            .unwrap();
        assert!(!events.is_empty(), "the reader was woken");
        gate.woke();
        assert!(gate.is_open());
        gate.hold(true);
        assert!(!gate.is_open() && gate.is_held());
        assert!(gate.may_sleep());
        gate.hold(false);
        poll.poll(&mut events, Some(Duration::from_secs(20)))
            .unwrap();
        assert!(!events.is_empty(), "released and woken");
        gate.woke();
        assert!(gate.is_open());
        assert!(!gate.may_sleep(), "an open gate is not slept on");
    }
}
