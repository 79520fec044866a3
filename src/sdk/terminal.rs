//! The extension side of the terminal handoff (section 2.24): acquire and release the
//! host's foreground terminal from a handler, and hear when the host takes it back or,
//! with `terminal_input`, what the person types and how the terminal is sized while the
//! extension does not hold it.

use std::sync::Arc;

use super::context::Context;
use super::error::ChildRequestError;
use super::extension::Extension;
use super::request::TerminalNotice;
use crate::negotiation::Feature;
use crate::services::bound::{NoParams, ServiceRequest, TerminalGrant};

/// The feature of `terminal/acquire`, `terminal/release` and `terminal/grant-lost`.
pub const FEATURE_TERMINAL_HANDOFF: &str = Feature::TerminalHandoff.as_str();

/// The feature of the observe-only `ui/terminal-input` and `ui/resize` notifications.
pub const FEATURE_TERMINAL_INPUT: &str = Feature::TerminalInput.as_str();

impl Extension {
    /// Receives terminal notices (section 2.24) and enables `terminal_handoff`; they
    /// arrive in order, one at a time, on the thread that runs shortcut handlers.
    /// Enable [`FEATURE_TERMINAL_INPUT`] too to receive input and resizes.
    pub fn on_terminal<F>(mut self, handler: F) -> Extension
    where
        F: Fn(TerminalNotice, &Context) + Send + Sync + 'static,
    {
        self.terminal = Some(Arc::new(handler));
        self.feature(FEATURE_TERMINAL_HANDOFF)
    }
}

impl Context {
    /// `terminal/acquire`: waits until the frontend ceded the foreground terminal and
    /// returns its grant. Refused while another grant is live. Write to the terminal
    /// only until [`Context::terminal_release`] or a
    /// [`TerminalNotice::GrantLost`].
    pub fn terminal_acquire(&self) -> Result<TerminalGrant, ChildRequestError> {
        let answer = self.service(ServiceRequest::TerminalAcquire(NoParams {}))?;
        serde_json::from_value(answer).map_err(|_| ChildRequestError::MalformedAnswer {
            method: "terminal/acquire",
        })
    }

    /// `terminal/release`: gives the terminal back; returns once the frontend re-entered
    /// its own terminal.
    pub fn terminal_release(&self) -> Result<(), ChildRequestError> {
        self.service(ServiceRequest::TerminalRelease(NoParams {}))
            .map(|_| ())
    }
}
