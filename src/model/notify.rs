//! Host-to-extension notifications of the bound kinds (section 1.11): what the embedder sends, and
//! why one is refused.

use std::fmt;

use crate::services::bound::{HostNotification, ServiceRefusal};

/// A notification of a bound kind the embedder asks the host to send.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum BoundNotification {
    /// `shortcut/trigger {"id"}`: only for a shortcut admitted in the current
    /// generation's `initialize`.
    ShortcutTrigger {
        /// The shortcut's id.
        id: String,
    },
    /// Assistant-message deltas, coalesced by the host into `message/updated`
    /// batches.
    MessageDeltas {
        /// The message, at most [`crate::limits::MAX_MESSAGE_ID_BYTES`].
        message_id: String,
        /// Deltas in order, at most [`crate::limits::MAX_MESSAGE_BATCH_DELTAS`] at
        /// once, each at most [`crate::limits::MAX_MESSAGE_DELTA_BYTES`].
        deltas: Vec<String>,
    },
    /// The message settled: its last batch is sent now.
    MessageSettled {
        /// The message.
        message_id: String,
    },
    /// Takes the terminal grant back (section 2.24): sent as `terminal/grant-lost
    /// {"reason"}`, only to the holder of the live grant, which ends at once.
    TerminalGrantLost {
        /// Why, at most [`crate::limits::MAX_GRANT_LOST_REASON_BYTES`].
        reason: String,
    },
    /// `ui/terminal-input {"data"}`: observe-only editor input (feature
    /// `terminal_input`), never to the holder of the live terminal grant.
    TerminalInput {
        /// At most [`crate::limits::MAX_TERMINAL_INPUT_BYTES`].
        data: String,
    },
    /// `ui/resize {"columns","rows"}` (feature `terminal_input`), never to the holder of
    /// the live terminal grant.
    Resize {
        /// Width in columns.
        columns: u16,
        /// Height in rows.
        rows: u16,
    },
}

impl BoundNotification {
    /// The row of the notification table it is sent as.
    pub fn notification(&self) -> HostNotification {
        match self {
            BoundNotification::ShortcutTrigger { .. } => HostNotification::ShortcutTrigger,
            BoundNotification::MessageDeltas { .. } | BoundNotification::MessageSettled { .. } => {
                HostNotification::MessageUpdated
            }
            BoundNotification::TerminalGrantLost { .. } => HostNotification::TerminalGrantLost,
            BoundNotification::TerminalInput { .. } => HostNotification::TerminalInput,
            BoundNotification::Resize { .. } => HostNotification::Resize,
        }
    }

    /// The wire method it is sent as.
    pub fn method(&self) -> &'static str {
        self.notification().name()
    }
}

/// Why a notification of a bound kind was not sent. Nothing of a refused notification reaches
/// the extension; the host also reports it as a diagnostic.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum NotifyError {
    /// No generation of the extension is running.
    NotRunning {
        /// The extension.
        extension: String,
    },
    /// The notification breaks a rule: its feature was not negotiated
    /// (`unsupported_feature`), a payload bound (`bounds_exceeded`), or it names a
    /// shortcut or generation that is not current (`invalid_request`).
    Refused(ServiceRefusal),
}

impl fmt::Display for NotifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NotifyError::NotRunning { extension } => {
                write!(f, "extension `{extension}` is not running")
            }
            NotifyError::Refused(refusal) => refusal.fmt(f),
        }
    }
}

impl std::error::Error for NotifyError {}
