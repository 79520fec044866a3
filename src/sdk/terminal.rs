//! The extension side of the terminal handoff (section 2.24): acquire and release the
//! host's foreground terminal from a handler, and hear when the host takes it back or,
//! with `terminal_input`, what the person types and how the terminal is sized while the
//! extension does not hold it.

use std::sync::Arc;

use serde_json::Value;

use super::context::Context;
use super::error::ChildRequestError;
use super::extension::Extension;
use crate::services::bound::{NoParams, ServiceRequest, TerminalGrant};

/// The feature of `terminal/acquire`, `terminal/release` and `terminal/grant-lost`.
pub const FEATURE_TERMINAL_HANDOFF: &str = "terminal_handoff";

/// The feature of the observe-only `ui/terminal-input` and `ui/resize` notifications.
pub const FEATURE_TERMINAL_INPUT: &str = "terminal_input";

/// A terminal notification from the host.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TerminalNotice {
    /// `terminal/grant-lost`: the host took the terminal back; stop writing to it.
    GrantLost {
        /// Why.
        reason: String,
    },
    /// `ui/terminal-input`: what the person typed (observe only).
    Input {
        /// The input, at most 256 bytes.
        data: String,
    },
    /// `ui/resize`: the terminal's new size.
    Resize {
        /// Width in columns.
        columns: u16,
        /// Height in rows.
        rows: u16,
    },
}

impl TerminalNotice {
    /// The notice a host notification carries, if it is one.
    pub(crate) fn parse(method: &str, params: &Value) -> Option<TerminalNotice> {
        let text = |name: &str| params.get(name).and_then(Value::as_str).map(str::to_string);
        let size = |name: &str| {
            params
                .get(name)
                .and_then(Value::as_u64)
                .and_then(|n| u16::try_from(n).ok())
        };
        match method {
            "terminal/grant-lost" => Some(TerminalNotice::GrantLost {
                reason: text("reason").unwrap_or_default(),
            }),
            "ui/terminal-input" => Some(TerminalNotice::Input {
                data: text("data")?,
            }),
            "ui/resize" => Some(TerminalNotice::Resize {
                columns: size("columns")?,
                rows: size("rows")?,
            }),
            _ => None,
        }
    }
}

/// The handler of terminal notices.
pub(crate) type TerminalFn = dyn Fn(TerminalNotice, &Context) + Send + Sync;

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
