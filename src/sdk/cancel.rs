//! The cooperative cancellation signal a handler sees for its request (section 1.9).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crossbeam_channel::{bounded, Receiver, RecvTimeoutError, Sender};
use parking_lot::Mutex;

/// A cooperative cancellation signal for one host request (section 1.9).
///
/// It is set by `$/cancelRequest` for the request's id (API 0.2/0.4) and when the
/// connection ends. Clones share the signal.
#[derive(Clone, Debug)]
pub struct CancellationToken {
    inner: Arc<TokenInner>,
}

#[derive(Debug)]
struct TokenInner {
    cancelled: AtomicBool,
    /// Dropped on cancellation, which disconnects `signal` and wakes every waiter.
    trigger: Mutex<Option<Sender<()>>>,
    signal: Receiver<()>,
}

impl CancellationToken {
    pub(crate) fn new() -> CancellationToken {
        let (trigger, signal) = bounded(0);
        CancellationToken {
            inner: Arc::new(TokenInner {
                cancelled: AtomicBool::new(false),
                trigger: Mutex::new(Some(trigger)),
                signal,
            }),
        }
    }

    /// Whether cancellation was requested.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancelled.load(Ordering::Acquire)
    }

    /// Sleeps until cancellation or `timeout`; true when cancelled.
    pub fn wait_timeout(&self, timeout: Duration) -> bool {
        if self.is_cancelled() {
            return true;
        }
        match self.inner.signal.recv_timeout(timeout) {
            Err(RecvTimeoutError::Timeout) => self.is_cancelled(),
            _ => true,
        }
    }

    /// A receiver that becomes ready (disconnected) on cancellation, for use in
    /// `crossbeam_channel::select!`. It never carries a message.
    pub fn receiver(&self) -> &Receiver<()> {
        &self.inner.signal
    }

    pub(crate) fn cancel(&self) {
        self.inner.cancelled.store(true, Ordering::Release);
        self.inner.trigger.lock().take();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_wakes_waiters_on_cancel() {
        let token = CancellationToken::new();
        assert!(!token.wait_timeout(Duration::from_millis(1)));
        let clone = token.clone();
        let waiter = std::thread::spawn(move || clone.wait_timeout(Duration::from_secs(60)));
        token.cancel();
        assert!(waiter.join().unwrap());
        assert!(token.is_cancelled());
        assert!(token.receiver().recv().is_err());
    }
}
