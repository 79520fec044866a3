//! The frontend an embedder binds: confirmations and input for extension-originated
//! requests (sections 2.2 and 2.7).
//!
//! The dispatcher never waits for a person. An interactive frontend is asked on a
//! thread of its own, one per request (at most
//! [`MAX_OUTSTANDING_CHILD_REQUESTS`](crate::limits::MAX_OUTSTANDING_CHILD_REQUESTS) per
//! generation), and the answer travels back to the dispatcher as a message. When the
//! parent request settles first, the extension gets the "dropped" answer at once (denied,
//! or `null` input) and the frontend's later answer is ignored; the request's
//! [`CancelFlag`] tells the frontend it may close its prompt.

use std::fmt;

use super::events::GenerationRef;

pub use crate::cancel_flag::CancelFlag;

/// A yes/no question from an extension (`confirmation/request`, section 2.2).
#[derive(Clone, Debug)]
pub struct ConfirmationRequest {
    /// The generation asking.
    pub source: GenerationRef,
    /// The question.
    pub prompt: String,
    /// Optional detail.
    pub detail: Option<String>,
    /// The action is destructive.
    pub destructive: bool,
    /// The answer the extension suggests as default.
    pub default: bool,
    /// Set when the answer is no longer wanted.
    pub cancelled: CancelFlag,
}

/// A request for text (`input/request`, section 2.7).
#[derive(Clone)]
pub struct InputRequest {
    /// The generation asking.
    pub source: GenerationRef,
    /// The prompt: non-blank, at most 16 KiB.
    pub prompt: String,
    /// Suppress echo; the answer must never reach logs or diagnostics.
    pub secret: bool,
    /// Set when the answer is no longer wanted.
    pub cancelled: CancelFlag,
}

impl fmt::Debug for InputRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InputRequest")
            .field("source", &self.source)
            .field("prompt", &self.prompt)
            .field("secret", &self.secret)
            .finish_non_exhaustive()
    }
}

/// What the embedder implements to answer extensions' questions.
///
/// Both methods may block (a person is answering); each runs on its own thread.
pub trait Frontend: Send + Sync + 'static {
    /// False for a frontend that cannot ask anyone: the host then answers at once,
    /// denying confirmations and cancelling input, without starting a thread.
    fn is_interactive(&self) -> bool;

    /// Answers a confirmation. Returning `false` denies it.
    fn confirm(&self, request: ConfirmationRequest) -> bool;

    /// Answers an input request. `None` means cancelled or unanswerable.
    fn input(&self, request: InputRequest) -> Option<String>;
}

/// The default frontend: nobody to ask, so confirmations are denied and input is
/// cancelled (sections 2.2 and 2.7: "Headless/unavailable input is cancelled rather
/// than guessed").
#[derive(Clone, Copy, Debug, Default)]
pub struct HeadlessFrontend;

impl Frontend for HeadlessFrontend {
    fn is_interactive(&self) -> bool {
        false
    }

    fn confirm(&self, _request: ConfirmationRequest) -> bool {
        false
    }

    fn input(&self, _request: InputRequest) -> Option<String> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn cancelling_wakes_every_waiter() {
        let flag = CancelFlag::default();
        assert!(!flag.wait_timeout(Duration::from_millis(1)));
        let clone = flag.clone();
        let waiter = std::thread::spawn(move || clone.wait_timeout(Duration::from_secs(60)));
        flag.cancel();
        assert!(waiter.join().unwrap());
        assert!(flag.is_cancelled());
        assert!(flag.receiver().recv().is_err());
    }
}
