//! The one JSON encoding of the model's values: the CLI's `--json` and serve print
//! exactly these for a diagnostic, an event, a status and a shutdown report.
//!
//! Outputs keep the wire's member names (section 1 of the reference) so a client that
//! knows the extension protocol reads them without a second vocabulary; optional
//! members are `null` when absent rather than left out, so every value of one kind has
//! the same members. Request ids keep their JSON type (a number stays a number).

use serde_json::{json, Map, Value};

use super::events::{Diagnostic, GenerationRef, HostEvent};
use super::progress::Progress;
use super::status::{ExtensionShutdown, ExtensionStatus, ShutdownReport};
use crate::services::presentation::PresentationOwner;

impl GenerationRef {
    /// Adds the `extension` and `generation` members to `object`.
    pub fn insert_into(&self, object: &mut Map<String, Value>) {
        object.insert("extension".into(), self.extension.as_str().into());
        object.insert("generation".into(), self.generation.into());
    }
}

impl Diagnostic {
    /// `kind` (a stable name such as `invalid_frame`) and the diagnostic's own members.
    pub fn to_value(&self) -> Value {
        match self {
            Diagnostic::InvalidFrame { error, bytes } => json!({
                "kind": "invalid_frame", "bytes": bytes, "message": error.to_string(),
            }),
            Diagnostic::OversizedFrame { bytes } => {
                json!({"kind": "oversized_frame", "bytes": bytes})
            }
            Diagnostic::UnterminatedFrame { bytes } => {
                json!({"kind": "unterminated_frame", "bytes": bytes})
            }
            Diagnostic::UnknownResponseId { id } => {
                json!({"kind": "unknown_response_id", "id": id.to_value()})
            }
            Diagnostic::LateResponse { id } => {
                json!({"kind": "late_response", "id": id.to_value()})
            }
            Diagnostic::Refused { method, reason } => {
                json!({"kind": "refused", "method": method, "message": reason})
            }
            Diagnostic::Stderr { line } => json!({"kind": "stderr", "line": line}),
            Diagnostic::StderrSuppressed { lines } => {
                json!({"kind": "stderr_suppressed", "lines": lines})
            }
            Diagnostic::TransportLost { reason } => {
                json!({"kind": "transport_lost", "message": reason})
            }
            Diagnostic::CancellationUnsettled { id, grace } => json!({
                "kind": "cancellation_unsettled", "id": id.to_value(),
                "grace_ms": grace.as_millis() as u64,
            }),
        }
    }
}

impl Progress {
    /// `request_id`, `sequence` and the wire's `event` object as `progress`, with
    /// output bytes as `utf8` text when they are valid UTF-8 and as `base64` otherwise.
    pub fn to_value(&self) -> Value {
        json!({
            "request_id": self.request_id, "sequence": self.sequence,
            "progress": self.event.to_value(),
        })
    }
}

impl HostEvent {
    /// The event as one object: `"type": "event"`, `event` (its name, such as
    /// `diagnostic` or `state`), the source's `extension` and `generation`, and the
    /// event's own members. serve writes it as an output line.
    pub fn to_value(&self) -> Value {
        let (name, source, fields) = match self {
            HostEvent::Diagnostic { source, diagnostic } => {
                ("diagnostic", Some(source), diagnostic.to_value())
            }
            HostEvent::Notification {
                source,
                notification,
            } => ("notification", Some(source), notification.to_value()),
            HostEvent::ContextContribution {
                source,
                contribution,
            } => (
                "context_contribution",
                Some(source),
                json!({"contribution": contribution.to_value()}),
            ),
            HostEvent::StatusContribution {
                source,
                contribution,
            } => (
                "status_contribution",
                Some(source),
                json!({"contribution": contribution.to_value()}),
            ),
            HostEvent::Progress { source, progress } => {
                ("progress", Some(source), progress.to_value())
            }
            HostEvent::Presentation {
                source,
                owner,
                snapshot,
            } => {
                let owner = match owner {
                    PresentationOwner::Process => Value::from("process"),
                    PresentationOwner::Resource(triple) => triple.to_value(),
                };
                (
                    "presentation",
                    Some(source),
                    json!({"owner": owner, "snapshot": snapshot.to_value()}),
                )
            }
            HostEvent::StateChanged { source, state } => {
                ("state", Some(source), json!({"state": state.as_str()}))
            }
            HostEvent::ToolsChanged {
                source,
                revision,
                names,
            } => (
                "tools_changed",
                Some(source),
                json!({"revision": revision, "tools": names}),
            ),
            HostEvent::TerminalGrantLost {
                source,
                grant_id,
                reason,
            } => (
                "terminal_grant_lost",
                Some(source),
                json!({"grant_id": grant_id, "reason": reason}),
            ),
            HostEvent::EventsDropped { count } => ("events_dropped", None, json!({"count": count})),
        };
        let mut line = Map::new();
        line.insert("type".into(), "event".into());
        line.insert("event".into(), name.into());
        if let Some(source) = source {
            source.insert_into(&mut line);
        }
        if let Value::Object(fields) = fields {
            line.extend(fields);
        }
        Value::Object(line)
    }
}

impl ExtensionStatus {
    /// Every member, the restart books included (`parked` as its reason's text).
    pub fn to_value(&self) -> Value {
        json!({
            "extension": self.extension,
            "generation": self.generation,
            "state": self.state.as_str(),
            "api_version": self.api_version.as_str(),
            "pid": self.pid,
            "features": self.features,
            "max_concurrent_requests": self.max_concurrent_requests,
            "pending": self.pending,
            "queued": self.queued,
            "routed": self.routed,
            "last_error": self.last_error,
            "stderr_tail": self.stderr_tail,
            "restart_attempts": self.restart_attempts,
            "restart_scheduled": self.restart_scheduled,
            "parked": self.parked.as_ref().map(|reason| reason.to_string()),
        })
    }
}

impl ExtensionShutdown {
    /// Every member, `final_state` as its name.
    pub fn to_value(&self) -> Value {
        json!({
            "extension": self.extension,
            "generation": self.generation,
            "acknowledged": self.acknowledged,
            "forced": self.forced,
            "exit_status": self.exit_status,
            "final_state": self.final_state.as_str(),
        })
    }
}

impl ShutdownReport {
    /// `{"extensions": [...]}`, each as [`ExtensionShutdown::to_value`].
    pub fn to_value(&self) -> Value {
        json!({
            "extensions": self.extensions.iter().map(ExtensionShutdown::to_value).collect::<Vec<_>>(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::progress::{OutputStream, ProgressEvent};
    use crate::wire::RequestId;

    #[test]
    fn output_progress_is_text_or_base64() {
        let text = Progress {
            request_id: 4,
            sequence: 1,
            event: ProgressEvent::Output {
                stream: OutputStream::Stdout,
                data: b"hi".to_vec(),
            },
        };
        assert_eq!(
            text.to_value(),
            json!({"request_id": 4, "sequence": 1, "progress":
                   {"type": "output", "stream": "stdout", "encoding": "utf8", "data": "hi"}})
        );
        let bytes = Progress {
            request_id: 4,
            sequence: 2,
            event: ProgressEvent::Output {
                stream: OutputStream::Stderr,
                data: vec![0xff, 0x00],
            },
        };
        assert_eq!(bytes.to_value()["progress"]["encoding"], "base64");
        assert_eq!(bytes.to_value()["progress"]["data"], "/wA=");
    }

    #[test]
    fn ids_keep_their_json_type_and_refusals_carry_a_message() {
        let late = Diagnostic::LateResponse {
            id: RequestId::Number(7),
        };
        assert_eq!(late.to_value(), json!({"kind": "late_response", "id": 7}));
        let refused = Diagnostic::Refused {
            method: "x/y".into(),
            reason: "no".into(),
        };
        assert_eq!(
            refused.to_value(),
            json!({"kind": "refused", "method": "x/y", "message": "no"})
        );
        let report = ShutdownReport::default();
        assert_eq!(report.to_value(), json!({"extensions": []}));
    }
}
