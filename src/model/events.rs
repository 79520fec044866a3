//! Host events: everything the host reports that is not the answer to a call.
//!
//! Events travel on a bounded channel. The dispatcher never blocks on it: when the
//! embedder does not keep up, events are dropped and counted, and the count is reported
//! with the next event that fits ([`HostEvent::EventsDropped`]).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crossbeam_channel::{Receiver, Sender, TrySendError};

use crate::transport::InboundFrame;
use crate::wire::{FrameError, RequestId};

/// Capacity of the host event channel.
pub const EVENT_CHANNEL_CAPACITY: usize = 4096;

pub use crate::generation::GenerationRef;

/// Something the host observed that is not fatal, reported instead of failing.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Diagnostic {
    /// A frame that is not a usable JSON-RPC message was ignored.
    InvalidFrame {
        /// What is wrong with it.
        error: FrameError,
        /// Its size, LF included.
        bytes: usize,
    },
    /// A frame larger than the frame bound was discarded up to its LF.
    OversizedFrame {
        /// Its size, LF included.
        bytes: usize,
    },
    /// The stream ended inside a frame; the partial frame was dropped.
    UnterminatedFrame {
        /// Bytes dropped.
        bytes: usize,
    },
    /// A response named an id the host never issued or already settled.
    UnknownResponseId {
        /// The id in the response.
        id: RequestId,
    },
    /// A response arrived for a cancelled (tombstoned) request and was ignored.
    LateResponse {
        /// The tombstoned id.
        id: RequestId,
    },
    /// An extension-originated message was refused or ignored.
    Refused {
        /// The method involved.
        method: String,
        /// Why.
        reason: String,
    },
    /// A line the extension wrote on stderr (bounded, rate-limited).
    Stderr {
        /// The line, lossily decoded, cut at the per-line bound.
        line: String,
    },
    /// stderr lines that were not reported because of the rate bound.
    StderrSuppressed {
        /// How many lines were not reported.
        lines: u64,
    },
    /// The transport to the child was lost.
    TransportLost {
        /// What happened.
        reason: String,
    },
    /// A cancelled host request was still not settled when its grace period ended, so
    /// the generation was degraded and terminated (section 1.9).
    CancellationUnsettled {
        /// The request's id.
        id: RequestId,
        /// The grace period it had ([`crate::limits::CANCELLATION_GRACE`]).
        grace: std::time::Duration,
    },
}

impl std::fmt::Display for Diagnostic {
    /// One line a person can read, such as `late response for cancelled id 7`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Diagnostic::InvalidFrame { error, bytes } => {
                write!(f, "ignored an invalid frame of {bytes} bytes: {error}")?;
                // A line that is not JSON at all is almost always a stray log line.
                if matches!(error, crate::wire::FrameError::Parse { .. }) {
                    f.write_str(" (print diagnostics to stderr, not stdout)")?;
                }
                Ok(())
            }
            Diagnostic::OversizedFrame { bytes } => {
                write!(f, "discarded an oversized frame of {bytes} bytes")
            }
            Diagnostic::UnterminatedFrame { bytes } => {
                write!(f, "dropped {bytes} bytes of an unterminated frame")
            }
            Diagnostic::UnknownResponseId { id } => write!(f, "response for unknown id {id}"),
            Diagnostic::LateResponse { id } => write!(f, "late response for cancelled id {id}"),
            Diagnostic::Refused { method, reason } => write!(f, "refused `{method}`: {reason}"),
            Diagnostic::Stderr { line } => write!(f, "stderr: {line}"),
            Diagnostic::StderrSuppressed { lines } => {
                write!(f, "{lines} stderr lines suppressed")
            }
            Diagnostic::TransportLost { reason } => write!(f, "transport lost: {reason}"),
            Diagnostic::CancellationUnsettled { id, grace } => write!(
                f,
                "request {id} did not settle within {} ms of its cancellation; \
                 the generation was terminated",
                grace.as_millis()
            ),
        }
    }
}

/// One host event.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum HostEvent {
    /// A non-fatal observation about one generation.
    Diagnostic {
        /// The generation concerned.
        source: GenerationRef,
        /// What was observed.
        diagnostic: Diagnostic,
    },
    /// A user-visible `notification` from an extension (section 2.1).
    Notification {
        /// The generation that sent it.
        source: GenerationRef,
        /// The notification's params, validated.
        notification: crate::validate::Notification,
    },
    /// A `context/contribution` pushed by an extension (section 2.3).
    ContextContribution {
        /// The generation that sent it.
        source: GenerationRef,
        /// The contribution.
        contribution: crate::validate::ContextContribution,
    },
    /// A `status/contribution` pushed by an extension (section 2.4).
    StatusContribution {
        /// The generation that sent it.
        source: GenerationRef,
        /// The contribution.
        contribution: crate::validate::StatusContribution,
    },
    /// `$/progress` for a host request (section 2.6).
    Progress {
        /// The generation that sent it.
        source: GenerationRef,
        /// The accepted event.
        progress: crate::model::progress::Progress,
    },
    /// An accepted `presentation/update` snapshot (section 2.5), after throttling.
    Presentation {
        /// The generation that published it.
        source: GenerationRef,
        /// Whose state it is.
        owner: crate::services::presentation::PresentationOwner,
        /// The complete, validated snapshot.
        snapshot: Box<crate::services::presentation::PresentationSnapshot>,
    },
    /// An extension generation changed lifecycle state (section 5).
    StateChanged {
        /// The generation concerned.
        source: GenerationRef,
        /// Its new state.
        state: crate::model::status::LifecycleState,
    },
    /// The tools an extension offers changed: a generation became the routed one
    /// (its `initialize` catalog, revision 0), or `tools/register`/`tools/unregister`
    /// published a new epoch (sections 2.11, 2.12). [`crate::host::ExtensionHandle::tools`]
    /// returns the whole catalog.
    ToolsChanged {
        /// The generation whose catalog it is.
        source: GenerationRef,
        /// The catalog epoch.
        revision: u64,
        /// The tool names, in catalog order.
        names: Vec<String>,
    },
    /// The terminal grant ended without the embedder asking (section 2.24): its holder's
    /// generation ended (crashed, stopped or was replaced). Restore the terminal the
    /// grant had ceded.
    TerminalGrantLost {
        /// The generation that held it.
        source: GenerationRef,
        /// The grant the frontend had minted.
        grant_id: String,
        /// Why it ended.
        reason: String,
    },
    /// Events were dropped because the embedder did not keep up.
    EventsDropped {
        /// How many events were dropped since the last report.
        count: u64,
    },
}

/// The sending side of the event channel; never blocks.
#[derive(Clone, Debug)]
pub struct EventSink {
    sender: Sender<HostEvent>,
    dropped: Arc<AtomicU64>,
}

impl EventSink {
    /// A new bounded event channel.
    pub fn new(capacity: usize) -> (EventSink, Receiver<HostEvent>) {
        let (sender, receiver) = crossbeam_channel::bounded(capacity);
        (
            EventSink {
                sender,
                dropped: Arc::new(AtomicU64::new(0)),
            },
            receiver,
        )
    }

    /// Sends `event` if there is room; otherwise counts it as dropped.
    pub fn emit(&self, event: HostEvent) {
        let dropped = self.dropped.swap(0, Ordering::AcqRel);
        if dropped > 0 {
            if let Err(TrySendError::Full(_)) = self
                .sender
                .try_send(HostEvent::EventsDropped { count: dropped })
            {
                self.dropped.fetch_add(dropped + 1, Ordering::AcqRel);
                return;
            }
        }
        if let Err(TrySendError::Full(_)) = self.sender.try_send(event) {
            self.dropped.fetch_add(1, Ordering::AcqRel);
        }
    }

    /// Reports a diagnostic about `source`.
    ///
    /// Every diagnostic also goes to the `log` facade (target `octet_host`): stderr
    /// lines at `debug`, everything else at `warn`, so embedders route them with
    /// env_logger, tracing-log or the like even when they do not read events.
    pub fn diagnostic(&self, source: &GenerationRef, diagnostic: Diagnostic) {
        let level = match diagnostic {
            Diagnostic::Stderr { .. } | Diagnostic::StderrSuppressed { .. } => log::Level::Debug,
            _ => log::Level::Warn,
        };
        log::log!(target: "octet_host", level, "{source}: {diagnostic}");
        self.emit(HostEvent::Diagnostic {
            source: source.clone(),
            diagnostic,
        });
    }

    /// Reports a frame the reader could not use, if `frame` is one.
    pub(crate) fn frame_diagnostic(&self, source: &GenerationRef, frame: &InboundFrame) {
        match frame {
            InboundFrame::Invalid { error, bytes, .. } => self.diagnostic(
                source,
                Diagnostic::InvalidFrame {
                    error: error.clone(),
                    bytes: *bytes,
                },
            ),
            InboundFrame::Oversized { bytes, .. } => {
                self.diagnostic(source, Diagnostic::OversizedFrame { bytes: *bytes })
            }
            InboundFrame::Message(_) | InboundFrame::Undecoded(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_that_is_not_json_hints_at_stderr() {
        let parse = crate::wire::parse_json(b"starting up").unwrap_err();
        let text = Diagnostic::InvalidFrame {
            error: parse,
            bytes: 12,
        }
        .to_string();
        assert!(
            text.ends_with("(print diagnostics to stderr, not stdout)"),
            "{text}"
        );
        let envelope = Diagnostic::InvalidFrame {
            error: crate::wire::FrameError::BadVersion,
            bytes: 40,
        }
        .to_string();
        assert!(!envelope.contains("stderr"), "{envelope}");
    }

    #[test]
    fn a_full_channel_drops_and_counts() {
        let (sink, rx) = EventSink::new(2);
        for _ in 0..5 {
            sink.emit(HostEvent::EventsDropped { count: 0 });
        }
        assert_eq!(rx.try_iter().count(), 2);
        sink.emit(HostEvent::EventsDropped { count: 0 });
        let events: Vec<_> = rx.try_iter().collect();
        assert_eq!(events[0], HostEvent::EventsDropped { count: 3 });
        assert_eq!(events.len(), 2);
    }
}
