//! JSON forms of the library's types, for `--json` output.
//!
//! The library's result types are validated Rust values without a wire serialization of
//! their own; these functions give each a stable JSON shape with the protocol's member
//! names.

use serde_json::{json, Value};

use crate::host::{
    Diagnostic, ExtensionShutdown, ExtensionStatus, HostEvent, ProgressEvent, ShutdownReport,
};
use crate::negotiation::Negotiated;
use crate::validate::{
    CommandResult, ContextContribution, HookResult, Notification, RenderOutput, StatusContribution,
    ToolResult,
};

/// What `initialize` settled.
pub(crate) fn negotiated(n: &Negotiated) -> Value {
    let mut negotiated = json!({
        "api_version": n.api_version.as_str(),
        "features": n.features,
        "max_concurrent_requests": n.max_concurrent_requests,
        "lifecycle_subscriptions": n
            .lifecycle_subscriptions
            .iter()
            .map(|e| e.method())
            .collect::<Vec<_>>(),
        "tools": n.tools,
        "commands": n.commands,
    });
    // API 0.3: the capabilities and methods its contract selected.
    if let Some(contract) = &n.contract {
        negotiated["contract"] = contract.to_value();
    }
    negotiated
}

/// A tool result: its wire form plus the joined text.
pub(crate) fn tool_output(output: &ToolResult) -> Value {
    let mut value = output.to_value();
    value["text"] = json!(output.text());
    value
}

/// A notification.
pub(crate) fn notification(n: &Notification) -> Value {
    n.to_value()
}

/// A context contribution.
pub(crate) fn context(c: &ContextContribution) -> Value {
    c.to_value()
}

/// A command result.
pub(crate) fn command_output(output: &CommandResult) -> Value {
    output.to_value()
}

/// A hook result, with the disposition the host acts on.
pub(crate) fn hook_output(output: &HookResult) -> Value {
    output.to_value()
}

/// A status, header or footer contribution.
pub(crate) fn status_contribution(s: &StatusContribution) -> Value {
    s.to_value()
}

/// A `tool/render` result.
pub(crate) fn render_output(output: &RenderOutput) -> Value {
    output.to_value()
}

/// A status snapshot of one generation.
pub(crate) fn status(s: &ExtensionStatus) -> Value {
    json!({
        "extension": s.extension,
        "generation": s.generation,
        "state": s.state.as_str(),
        "api_version": s.api_version.as_str(),
        "pid": s.pid,
        "features": s.features,
        "max_concurrent_requests": s.max_concurrent_requests,
        "pending": s.pending,
        "queued": s.queued,
        "routed": s.routed,
        "last_error": s.last_error,
        "stderr_tail": s.stderr_tail,
    })
}

/// How one generation ended.
pub(crate) fn extension_shutdown(s: &ExtensionShutdown) -> Value {
    json!({
        "extension": s.extension,
        "generation": s.generation,
        "acknowledged": s.acknowledged,
        "forced": s.forced,
        "exit_status": s.exit_status,
        "final_state": s.final_state.as_str(),
    })
}

/// A shutdown report.
pub(crate) fn shutdown_report(report: &ShutdownReport) -> Value {
    Value::Array(report.extensions.iter().map(extension_shutdown).collect())
}

/// The stable name and detail of a runtime diagnostic.
pub(crate) fn runtime_diagnostic(d: &Diagnostic) -> Value {
    match d {
        Diagnostic::InvalidFrame { error, bytes } => {
            json!({"kind": "invalid_frame", "message": error.to_string(), "bytes": bytes})
        }
        Diagnostic::OversizedFrame { bytes } => json!({"kind": "oversized_frame", "bytes": bytes}),
        Diagnostic::UnterminatedFrame { bytes } => {
            json!({"kind": "unterminated_frame", "bytes": bytes})
        }
        Diagnostic::UnknownResponseId { id } => {
            json!({"kind": "unknown_response_id", "id": id.to_string()})
        }
        Diagnostic::LateResponse { id } => json!({"kind": "late_response", "id": id.to_string()}),
        Diagnostic::Refused { method, reason } => {
            json!({"kind": "refused", "method": method, "reason": reason})
        }
        Diagnostic::Stderr { line } => json!({"kind": "stderr", "line": line}),
        Diagnostic::StderrSuppressed { lines } => {
            json!({"kind": "stderr_suppressed", "lines": lines})
        }
        Diagnostic::TransportLost { reason } => {
            json!({"kind": "transport_lost", "reason": reason})
        }
        Diagnostic::CancellationUnsettled { id, grace } => json!({
            "kind": "cancellation_unsettled", "id": id.to_string(),
            "grace_ms": grace.as_millis() as u64,
        }),
    }
}

/// A host event.
pub(crate) fn event(event: &HostEvent) -> Value {
    let source = |s: &crate::host::GenerationRef| json!({"extension": s.extension, "generation": s.generation});
    match event {
        HostEvent::Diagnostic {
            source: s,
            diagnostic,
        } => json!({
            "type": "diagnostic", "source": source(s), "diagnostic": runtime_diagnostic(diagnostic)
        }),
        HostEvent::Notification {
            source: s,
            notification: n,
        } => json!({"type": "notification", "source": source(s), "notification": notification(n)}),
        HostEvent::ContextContribution {
            source: s,
            contribution,
        } => json!({
            "type": "context_contribution", "source": source(s), "contribution": context(contribution)
        }),
        HostEvent::StatusContribution {
            source: s,
            contribution,
        } => json!({
            "type": "status_contribution", "source": source(s),
            "contribution": status_contribution(contribution)
        }),
        HostEvent::Progress {
            source: s,
            progress,
        } => json!({
            "type": "progress", "source": source(s), "request_id": progress.request_id,
            "sequence": progress.sequence, "event": progress_event(&progress.event)
        }),
        HostEvent::Presentation {
            source: s,
            owner,
            snapshot,
        } => json!({
            "type": "presentation", "source": source(s),
            "owner": match owner {
                crate::services::presentation::PresentationOwner::Process => json!("process"),
                crate::services::presentation::PresentationOwner::Resource(triple) => triple.to_value(),
            },
            "snapshot": snapshot.to_value()
        }),
        HostEvent::StateChanged { source: s, state } => {
            json!({"type": "state_changed", "source": source(s), "state": state.as_str()})
        }
        HostEvent::ToolsChanged {
            source: s,
            revision,
            names,
        } => json!({"type": "tools_changed", "source": source(s), "revision": revision,
                    "tools": names}),
        HostEvent::TerminalGrantLost {
            source: s,
            grant_id,
            reason,
        } => json!({"type": "terminal_grant_lost", "source": source(s), "grant_id": grant_id,
                    "reason": reason}),
        HostEvent::EventsDropped { count } => json!({"type": "events_dropped", "count": count}),
    }
}

/// A typed progress event as JSON (section 2.6 shapes).
pub(crate) fn progress_event(event: &ProgressEvent) -> Value {
    event.to_value()
}
