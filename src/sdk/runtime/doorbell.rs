//! Sleeping until a crossbeam channel has a message, without crossbeam's own yields.
//!
//! A blocking receive on an empty crossbeam channel first tries again four times with
//! `sched_yield` before it parks (`crossbeam_utils::Backoff::snooze`). The SDK's
//! workers and writer have already spun within their bound (`spin.rs`) when they go
//! to sleep, so those yields only hand the CPU to other runnable threads. On a crowded
//! machine each one is a switch to another thread: in a busy fleet of 200 extensions
//! they were two thirds of every yield (`benches/README.md`, history, 2026-12-05).
//!
//! A [`Doorbell`] beside the channel lets its receivers park at once: a receiver puts
//! itself on the bell's list before it looks at the channel a last time, and every
//! send through the channel's [`BellSender`] rings the bell, which wakes one listed
//! receiver. Dropping the sender rings every receiver, so each also sees the channel
//! disconnect.

use std::sync::atomic::{fence, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::{self, Thread};
use std::time::Instant;

use crossbeam_channel::{Receiver, RecvError, Sender, TryRecvError};
use parking_lot::Mutex;

/// The one sending side of a channel whose receivers sleep on a [`Doorbell`]: every
/// send rings the bell, and dropping it disconnects the channel and rings every
/// receiver.
pub(crate) struct BellSender<T> {
    /// `None` only while dropping.
    tx: Option<Sender<T>>,
    bell: Arc<Doorbell>,
}

impl<T> BellSender<T> {
    /// The sender for `tx`, whose receivers sleep on `bell`. `tx` must be the channel's
    /// only sender, or dropping this one would not disconnect it.
    pub(crate) fn new(tx: Sender<T>, bell: Arc<Doorbell>) -> BellSender<T> {
        BellSender { tx: Some(tx), bell }
    }

    /// Sends `message`, blocking while the channel is full, at most until `deadline`
    /// when there is one; false when it was not sent (no receiver, or the deadline).
    pub(crate) fn send(&self, message: T, deadline: Option<Instant>) -> bool {
        let Some(tx) = &self.tx else {
            return false;
        };
        let sent = match deadline {
            Some(deadline) => tx.send_deadline(message, deadline).is_ok(),
            None => tx.send(message).is_ok(),
        };
        self.bell.ring();
        sent
    }
}

impl<T> Drop for BellSender<T> {
    fn drop(&mut self) {
        drop(self.tx.take());
        self.bell.ring_all();
    }
}

/// Wakes the threads that sleep until one channel has a message.
#[derive(Debug, Default)]
pub(crate) struct Doorbell {
    /// The receivers asleep, or about to be.
    sleepers: Mutex<Vec<Thread>>,
    /// How many receivers are listed in `sleepers`: a ring with none skips the lock.
    listed: AtomicUsize,
}

impl Doorbell {
    /// A bell with no receiver listed.
    pub(crate) fn new() -> Doorbell {
        Doorbell::default()
    }

    /// Wakes one listed receiver, if any: [`BellSender`] calls it after each send.
    fn ring(&self) {
        // Pairs with the fence in `recv`: either this sees the receiver listed, or
        // the receiver's last look sees the message sent before it.
        fence(Ordering::SeqCst);
        if self.listed.load(Ordering::Relaxed) == 0 {
            return;
        }
        if let Some(sleeper) = self.sleepers.lock().pop() {
            sleeper.unpark();
        }
    }

    /// Wakes every listed receiver: [`BellSender`] calls it once it is gone.
    fn ring_all(&self) {
        fence(Ordering::SeqCst);
        for sleeper in self.sleepers.lock().drain(..) {
            sleeper.unpark();
        }
    }

    /// Receives from `rx`, parking while it is empty; an error once it is empty and
    /// disconnected. Its sender must be a [`BellSender`] on this bell.
    pub(crate) fn recv<T>(&self, rx: &Receiver<T>) -> Result<T, RecvError> {
        let me = thread::current();
        let mut listed = false;
        // Whether this thread parked since it last put itself on the list: a ring that
        // takes it off the list while it did not park was meant for a sleeper.
        let mut parked_since_listed = false;
        let received = loop {
            match rx.try_recv() {
                Ok(message) => break Ok(message),
                Err(TryRecvError::Disconnected) => break Err(RecvError),
                Err(TryRecvError::Empty) => {}
            }
            if listed {
                thread::park();
                parked_since_listed = true;
            }
            // A ring takes the thread it wakes off the list: back on it before the
            // next look, or a later send could find nobody to wake.
            let mut sleepers = self.sleepers.lock();
            if !sleepers.iter().any(|t| t.id() == me.id()) {
                sleepers.push(me.clone());
                parked_since_listed = false;
            }
            drop(sleepers);
            if !listed {
                self.listed.fetch_add(1, Ordering::Relaxed);
                listed = true;
            }
            fence(Ordering::SeqCst);
        };
        if listed {
            let mut sleepers = self.sleepers.lock();
            let before = sleepers.len();
            sleepers.retain(|t| t.id() != me.id());
            let taken_off = sleepers.len() == before;
            drop(sleepers);
            self.listed.fetch_sub(1, Ordering::Relaxed);
            // A ring took this thread off the list while it was awake and received by
            // itself (its last look): that wake was meant for another receiver, which
            // would otherwise sleep beside a waiting message. Pass it on.
            if taken_off && !parked_since_listed {
                self.ring();
            }
        }
        received
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossbeam_channel::unbounded;
    use std::sync::Arc;
    use std::time::Duration;

    #[test]
    fn every_message_reaches_a_sleeping_receiver() {
        let bell = Arc::new(Doorbell::new());
        let (tx, rx) = unbounded::<u32>();
        let tx = BellSender::new(tx, Arc::clone(&bell));
        let (done_tx, done_rx) = unbounded();
        let receivers: Vec<_> = (0..4)
            .map(|_| {
                let (bell, rx, done_tx) = (Arc::clone(&bell), rx.clone(), done_tx.clone());
                thread::spawn(move || {
                    while let Ok(n) = bell.recv(&rx) {
                        done_tx.send(n).unwrap();
                    }
                })
            })
            .collect();
        // Sends now and then, so that the receivers are asleep for some of them.
        for n in 0..2000 {
            assert!(tx.send(n, None));
            if n % 100 == 0 {
                thread::sleep(Duration::from_millis(2));
            }
        }
        let mut seen: Vec<u32> = (0..2000)
            .map(|_| done_rx.recv_timeout(Duration::from_secs(30)).unwrap())
            .collect();
        seen.sort_unstable();
        assert_eq!(seen, (0..2000).collect::<Vec<_>>());
        drop(tx);
        for receiver in receivers {
            receiver.join().unwrap();
        }
        assert_eq!(bell.listed.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn a_sleeping_receiver_hears_the_senders_go() {
        let bell = Arc::new(Doorbell::new());
        let (tx, rx) = unbounded::<u32>();
        let tx = BellSender::new(tx, Arc::clone(&bell));
        let receiver = {
            let bell = Arc::clone(&bell);
            thread::spawn(move || bell.recv(&rx))
        };
        thread::sleep(Duration::from_millis(20));
        drop(tx);
        assert_eq!(receiver.join().unwrap(), Err(RecvError));
    }
}
