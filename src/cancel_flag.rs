//! The flag that tells whoever answers a question, or serves a request, that its
//! answer is no longer wanted.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Set when the question no longer needs an answer (its parent settled, or the
/// generation ended). Clones share it. Poll [`CancelFlag::is_cancelled`], or wait for
/// it with [`CancelFlag::wait_timeout`] or in a `select!` on [`CancelFlag::receiver`].
#[derive(Clone, Debug)]
pub struct CancelFlag(Arc<CancelInner>);

#[derive(Debug)]
struct CancelInner {
    cancelled: AtomicBool,
    /// Dropped on cancellation, which disconnects `signal` and wakes every waiter.
    trigger: parking_lot::Mutex<Option<crossbeam_channel::Sender<()>>>,
    signal: crossbeam_channel::Receiver<()>,
}

impl Default for CancelFlag {
    fn default() -> CancelFlag {
        let (trigger, signal) = crossbeam_channel::bounded(0);
        CancelFlag(Arc::new(CancelInner {
            cancelled: AtomicBool::new(false),
            trigger: parking_lot::Mutex::new(Some(trigger)),
            signal,
        }))
    }
}

/// Two flags are equal when they are the same flag (clones of one another).
impl PartialEq for CancelFlag {
    fn eq(&self, other: &CancelFlag) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for CancelFlag {}

impl CancelFlag {
    /// True once the answer is no longer wanted.
    pub fn is_cancelled(&self) -> bool {
        self.0.cancelled.load(Ordering::Acquire)
    }

    /// Sleeps until the answer is no longer wanted or `timeout` passes; true when it is
    /// no longer wanted.
    pub fn wait_timeout(&self, timeout: std::time::Duration) -> bool {
        if self.is_cancelled() {
            return true;
        }
        let _ = self.0.signal.recv_timeout(timeout);
        self.is_cancelled()
    }

    /// A receiver that becomes ready (disconnected) once the answer is no longer
    /// wanted, for `octet_host::channel::select!` beside your own channels. It never
    /// carries a message.
    pub fn receiver(&self) -> &crossbeam_channel::Receiver<()> {
        &self.0.signal
    }

    pub(crate) fn cancel(&self) {
        self.0.cancelled.store(true, Ordering::Release);
        self.0.trigger.lock().take();
    }
}
