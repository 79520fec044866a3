//! The cooperative cancellation signal a handler sees for its request (section 1.9):
//! the host's [`CancelFlag`] under the SDK's name, so both sides share one mechanism.

use std::time::Duration;

use crossbeam_channel::Receiver;

use crate::model::frontend::CancelFlag;

/// A cooperative cancellation signal for one host request (section 1.9).
///
/// It is set by `$/cancelRequest` for the request's id (API 0.2/0.4) and when the
/// connection ends. Clones share the signal.
#[derive(Clone, Debug)]
pub struct CancellationToken {
    flag: CancelFlag,
}

impl CancellationToken {
    pub(crate) fn new() -> CancellationToken {
        CancellationToken {
            flag: CancelFlag::default(),
        }
    }

    /// Whether cancellation was requested.
    pub fn is_cancelled(&self) -> bool {
        self.flag.is_cancelled()
    }

    /// Sleeps until cancellation or `timeout`; true when cancelled.
    pub fn wait_timeout(&self, timeout: Duration) -> bool {
        self.flag.wait_timeout(timeout)
    }

    /// A receiver that becomes ready (disconnected) on cancellation, for use in
    /// `crossbeam_channel::select!`. It never carries a message.
    pub fn receiver(&self) -> &Receiver<()> {
        self.flag.receiver()
    }

    pub(crate) fn cancel(&self) {
        self.flag.cancel();
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
