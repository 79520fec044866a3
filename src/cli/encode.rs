//! JSON forms of the library's types, for `--json` output.
//!
//! The library's result types are validated Rust values without a wire serialization of
//! their own; these functions give each a stable JSON shape with the protocol's member
//! names.

use serde_json::{json, Value};

use base64::Engine;

use crate::host::{
    Diagnostic, ExtensionShutdown, ExtensionStatus, HostEvent, OutputStream, ProgressEvent,
    ShutdownReport,
};
use crate::manifest::{Contributes, DiagnosticKind, DiscoveryDiagnostic, LocatedManifest};
use crate::negotiation::Negotiated;
use crate::validate::{
    CommandOutput, ContentPart, ContextContribution, Disposition, HookOutput, Notification,
    RenderOutput, StatusContribution, ToolOutput,
};

/// A catalog entry: name, version, api, source, dir, contributes.
pub(crate) fn entry(located: &LocatedManifest) -> Value {
    let manifest = &located.manifest;
    json!({
        "name": manifest.name,
        "version": manifest.version.to_string(),
        "api_version": manifest.api_version.as_str(),
        "source": located.source.as_str(),
        "dir": located.dir,
        "manifest_path": located.manifest_path,
        "description": manifest.description,
        "entrypoint": {
            "command": manifest.entrypoint.command,
            "args": manifest.entrypoint.args,
        },
        "contributes": contributes(&manifest.contributes),
    })
}

/// `[contributes]`, with every member present.
pub(crate) fn contributes(c: &Contributes) -> Value {
    json!({
        "tools": c.tools,
        "commands": c.commands,
        "tool_renderers": c.tool_renderers,
        "hooks": c.hooks,
        "ui": c.ui.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
        "context": c.context,
        "notifications": c.notifications,
        "confirmations": c.confirmations,
        "presentation": c.presentation,
        "menu": c.menu,
    })
}

/// The stable name of a discovery diagnostic's kind.
pub(crate) fn diagnostic_kind(kind: &DiagnosticKind) -> &'static str {
    match kind {
        DiagnosticKind::InvalidManifest(_) => "invalid_manifest",
        DiagnosticKind::NameMismatch { .. } => "name_mismatch",
        DiagnosticKind::Shadowed { .. } => "shadowed",
        DiagnosticKind::UnreadableDirectory(_) => "unreadable_directory",
        DiagnosticKind::UnreadableRoot(_) => "unreadable_root",
    }
}

/// A discovery diagnostic: kind, path, source, message, and the manifest field when the
/// manifest broke a rule.
pub(crate) fn discovery_diagnostic(d: &DiscoveryDiagnostic) -> Value {
    let mut value = json!({
        "kind": diagnostic_kind(&d.kind),
        "path": d.path,
        "source": d.source.as_str(),
        "message": d.kind.to_string(),
    });
    if let DiagnosticKind::InvalidManifest(crate::manifest::LoadError::Invalid(e)) = &d.kind {
        if let Some(field) = e.field() {
            value["field"] = json!(field);
        }
    }
    value
}

/// What `initialize` settled.
pub(crate) fn negotiated(n: &Negotiated) -> Value {
    json!({
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
    })
}

/// One content part of a tool result.
pub(crate) fn content_part(part: &ContentPart) -> Value {
    match part {
        ContentPart::Text { text } => json!({"type": "text", "text": text}),
        ContentPart::Image {
            artifact_id,
            mime_type,
            alt,
        } => json!({
            "type": "image", "artifact_id": artifact_id, "mime_type": mime_type, "alt": alt
        }),
        ContentPart::Audio {
            artifact_id,
            mime_type,
            transcript,
        } => json!({
            "type": "audio", "artifact_id": artifact_id, "mime_type": mime_type,
            "transcript": transcript
        }),
    }
}

/// A tool result: content, is_error, structured_content, metadata, and the joined text.
pub(crate) fn tool_output(output: &ToolOutput) -> Value {
    json!({
        "text": output.text(),
        "content": output.content.iter().map(content_part).collect::<Vec<_>>(),
        "is_error": output.is_error,
        "structured_content": output.structured_content,
        "metadata": output.metadata,
    })
}

/// A notification.
pub(crate) fn notification(n: &Notification) -> Value {
    json!({"level": n.level.as_str(), "title": n.title, "message": n.message})
}

/// A context contribution.
pub(crate) fn context(c: &ContextContribution) -> Value {
    json!({"label": c.label, "content": c.content, "placement": c.placement.as_str()})
}

/// A command result.
pub(crate) fn command_output(output: &CommandOutput) -> Value {
    json!({
        "text": output.text,
        "notifications": output.notifications.iter().map(notification).collect::<Vec<_>>(),
        "context": output.context.iter().map(context).collect::<Vec<_>>(),
    })
}

/// A disposition: `{"action": "continue"}` or `{"action": "deny", "reason": ..}`.
pub(crate) fn disposition(d: &Disposition) -> Value {
    match d {
        Disposition::Continue => json!({"action": "continue"}),
        Disposition::Deny { reason } => json!({"action": "deny", "reason": reason}),
    }
}

/// A hook result, with the disposition the host acts on.
pub(crate) fn hook_output(output: &HookOutput) -> Value {
    json!({
        "hook": output.hook.as_str(),
        "disposition": disposition(&output.disposition),
        "effective_disposition": disposition(output.effective_disposition()),
        "denial_ignored": output.denial_ignored(),
        "context": output.context.iter().map(context).collect::<Vec<_>>(),
        "notifications": output.notifications.iter().map(notification).collect::<Vec<_>>(),
        "session_operation": output.session_operation.map(|_| json!({"action": "continue"})),
    })
}

/// A status, header or footer contribution.
pub(crate) fn status_contribution(s: &StatusContribution) -> Value {
    json!({
        "surface": s.surface.as_str(),
        "text": s.text,
        "style_role": s.style_role,
        "priority": s.priority,
    })
}

/// A `tool/render` result.
pub(crate) fn render_output(output: &RenderOutput) -> Value {
    json!({
        "segments": output
            .segments
            .iter()
            .map(|s| json!({"text": s.text, "style_role": s.style_role}))
            .collect::<Vec<_>>(),
    })
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
        HostEvent::EventsDropped { count } => json!({"type": "events_dropped", "count": count}),
    }
}

/// A typed progress event as JSON (section 2.6 shapes; output data as UTF-8 text when it
/// is valid UTF-8, base64 otherwise).
pub(crate) fn progress_event(event: &ProgressEvent) -> Value {
    match event {
        ProgressEvent::Status {
            message,
            current,
            total,
            unit,
        } => json!({
            "type": "status", "message": message, "current": current, "total": total, "unit": unit
        }),
        ProgressEvent::Output { stream, data } => {
            let stream = match stream {
                OutputStream::Stdout => "stdout",
                OutputStream::Stderr => "stderr",
            };
            match std::str::from_utf8(data) {
                Ok(text) => {
                    json!({"type": "output", "stream": stream, "encoding": "utf8", "data": text})
                }
                Err(_) => json!({
                    "type": "output", "stream": stream, "encoding": "base64",
                    "data": base64::engine::general_purpose::STANDARD.encode(data)
                }),
            }
        }
        ProgressEvent::Decoration { label, detail } => {
            json!({"type": "decoration", "label": label, "detail": detail})
        }
    }
}
