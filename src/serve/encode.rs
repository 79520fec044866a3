//! The JSON shapes of everything `serve` writes: typed call outputs, host events,
//! status snapshots, shutdown reports and the discovery catalog.
//!
//! Outputs keep the wire's member names (section 1 of the reference) so a client that
//! knows the extension protocol can read them without a second vocabulary; optional
//! members are `null` when absent rather than left out, so every line of one kind has
//! the same members.

use serde_json::{json, Map, Value};

use super::error::ServeError;
use crate::host::CallError;
use crate::host::{
    Diagnostic, ExtensionShutdown, ExtensionStatus, GenerationRef, HostEvent, MenuFallbackReason,
    MenuOutcome, Progress, ShutdownReport, StartedExtension,
};
use crate::manifest::Catalog;
use crate::services::autocomplete::CompletionReply;
use crate::services::presentation::PresentationOwner;
use crate::validate::{
    CommandResult, ContextContribution, HookResult, Notification, RenderOutput, StatusContribution,
    ToolResult,
};

/// A `tool/call` result: `content` parts, `is_error`, `structured_content`, `metadata`.
pub(crate) fn tool_output(output: &ToolResult) -> Value {
    output.to_value()
}

/// A `command/execute` result.
pub(crate) fn command_output(output: &CommandResult) -> Value {
    output.to_value()
}

/// A `hook/run` result, with the disposition the host acts on.
pub(crate) fn hook_output(output: &HookResult) -> Value {
    output.to_value()
}

/// A `context/collect` result.
pub(crate) fn context_output(contributions: &[ContextContribution]) -> Value {
    json!({
        "contributions": contributions.iter().map(context_contribution).collect::<Vec<_>>(),
    })
}

/// A `status/collect` result (`contribution` is `null` when there is none).
pub(crate) fn status_output(contribution: Option<&StatusContribution>) -> Value {
    json!({"contribution": contribution.map(status_contribution)})
}

/// A `tool/render` result.
pub(crate) fn render_output(output: &RenderOutput) -> Value {
    output.to_value()
}

/// A `menu/collect` outcome: the menu to show and, when the generated fallback replaced
/// the extension's menu, why.
pub(crate) fn menu_output(outcome: &MenuOutcome) -> Value {
    let fallback_reason = match &outcome.fallback_reason {
        None => Value::Null,
        Some(MenuFallbackReason::Call(error)) => {
            json!({"kind": "call_failed", "error": ServeError::from(error).to_value()})
        }
        Some(MenuFallbackReason::Invalid(error)) => json!({
            "kind": "invalid_menu", "path": error.path(), "message": error.to_string(),
        }),
    };
    json!({"menu": outcome.menu.to_value(), "fallback_reason": fallback_reason})
}

fn notification(n: &Notification) -> Value {
    n.to_value()
}

fn context_contribution(c: &ContextContribution) -> Value {
    c.to_value()
}

fn status_contribution(c: &StatusContribution) -> Value {
    c.to_value()
}

/// One progress event of a call: the wire's `event` object, with output bytes as
/// `utf8` text when they are valid UTF-8 and as `base64` otherwise.
pub(crate) fn progress(progress: &Progress) -> Value {
    json!({
        "request_id": progress.request_id, "sequence": progress.sequence,
        "progress": progress.event.to_value(),
    })
}

/// A host event as an `event` line, or `None` for progress, which `serve` emits from
/// each call's own channel so the line can carry the call's `call_id`.
pub(crate) fn host_event(event: &HostEvent) -> Option<Value> {
    let mut line = Map::new();
    line.insert("type".into(), "event".into());
    let (name, source, fields) = match event {
        HostEvent::Diagnostic { source, diagnostic } => {
            ("diagnostic", Some(source), diagnostic_fields(diagnostic))
        }
        HostEvent::Notification {
            source,
            notification: n,
        } => ("notification", Some(source), notification(n)),
        HostEvent::ContextContribution {
            source,
            contribution,
        } => (
            "context_contribution",
            Some(source),
            json!({"contribution": context_contribution(contribution)}),
        ),
        HostEvent::StatusContribution {
            source,
            contribution,
        } => (
            "status_contribution",
            Some(source),
            json!({"contribution": status_contribution(contribution)}),
        ),
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
        HostEvent::Progress { .. } => return None,
    };
    line.insert("event".into(), name.into());
    if let Some(source) = source {
        insert_source(&mut line, source);
    }
    if let Value::Object(fields) = fields {
        line.extend(fields);
    }
    Some(Value::Object(line))
}

/// Adds `extension` and `generation` members.
pub(crate) fn insert_source(line: &mut Map<String, Value>, source: &GenerationRef) {
    line.insert("extension".into(), source.extension.as_str().into());
    line.insert("generation".into(), source.generation.into());
}

fn diagnostic_fields(diagnostic: &Diagnostic) -> Value {
    match diagnostic {
        Diagnostic::InvalidFrame { error, bytes } => json!({
            "kind": "invalid_frame", "bytes": bytes, "message": error.to_string(),
        }),
        Diagnostic::OversizedFrame { bytes } => json!({"kind": "oversized_frame", "bytes": bytes}),
        Diagnostic::UnterminatedFrame { bytes } => {
            json!({"kind": "unterminated_frame", "bytes": bytes})
        }
        Diagnostic::UnknownResponseId { id } => {
            json!({"kind": "unknown_response_id", "id": id.to_value()})
        }
        Diagnostic::LateResponse { id } => json!({"kind": "late_response", "id": id.to_value()}),
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

/// What `start` settled: the generation, its pid, the negotiated catalog.
pub(crate) fn started(info: &StartedExtension) -> Value {
    let negotiated = &info.negotiated;
    let mut started = json!({
        "extension": info.name,
        "generation": info.generation,
        "api_version": info.api_version.as_str(),
        "pid": info.pid,
        "features": negotiated.features.iter().map(|f| f.as_str()).collect::<Vec<_>>(),
        "max_concurrent_requests": negotiated.max_concurrent_requests,
        "lifecycle_subscriptions": negotiated
            .lifecycle_subscriptions
            .iter()
            .map(|e| e.method())
            .collect::<Vec<_>>(),
        "tools": serde_json::to_value(&negotiated.tools).unwrap_or(Value::Null),
        "commands": serde_json::to_value(&negotiated.commands).unwrap_or(Value::Null),
    });
    // API 0.3: what the contract selected (its features are the required two).
    if let Some(contract) = &negotiated.contract {
        started["contract"] = contract.to_value();
    }
    started
}

/// One live generation's status.
/// An autocomplete outcome: the claiming chain (or `null`), its prefix and items, each
/// item with the edit it makes, and the chains that failed with why.
pub(crate) fn autocomplete(
    claimed: Option<&(String, CompletionReply)>,
    failures: &[(String, CallError)],
) -> Value {
    let failures: Vec<Value> = failures
        .iter()
        .map(|(extension, error)| json!({"extension": extension, "error": error.to_string()}))
        .collect();
    let Some((extension, reply)) = claimed else {
        return json!({"claimed_by": null, "items": [], "failures": failures});
    };
    let items: Vec<Value> = reply
        .items
        .iter()
        .map(|(item, edit)| {
            let mut value = serde_json::to_value(item).expect("plain data serializes");
            value["edit"] = json!({
                "start": edit.replaced.start,
                "end": edit.replaced.end,
                "text": edit.text,
                "cursor": edit.cursor,
            });
            value
        })
        .collect();
    json!({"claimed_by": extension, "prefix": reply.prefix, "items": items, "failures": failures})
}

pub(crate) fn status(status: &ExtensionStatus) -> Value {
    json!({
        "extension": status.extension,
        "generation": status.generation,
        "state": status.state.as_str(),
        "api_version": status.api_version.as_str(),
        "pid": status.pid,
        "features": status.features,
        "max_concurrent_requests": status.max_concurrent_requests,
        "pending": status.pending,
        "queued": status.queued,
        "routed": status.routed,
        "last_error": status.last_error,
        "stderr_tail": status.stderr_tail,
        "restart_attempts": status.restart_attempts,
        "restart_scheduled": status.restart_scheduled,
        "parked": status.parked.as_ref().map(|reason| reason.to_string()),
    })
}

/// A shutdown report.
pub(crate) fn shutdown_report(report: &ShutdownReport) -> Value {
    json!({"extensions": report.extensions.iter().map(extension_shutdown).collect::<Vec<_>>()})
}

fn extension_shutdown(e: &ExtensionShutdown) -> Value {
    json!({
        "extension": e.extension,
        "generation": e.generation,
        "acknowledged": e.acknowledged,
        "forced": e.forced,
        "exit_status": e.exit_status,
        "final_state": e.final_state.as_str(),
    })
}

/// The discovery catalog: the same shape as the CLI's `--json discover`
/// ([`Catalog::to_value`]).
pub(crate) fn catalog(catalog: &Catalog) -> Value {
    catalog.to_value()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::{LifecycleState, OutputStream, ProgressEvent};

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
            progress(&text),
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
        assert_eq!(progress(&bytes)["progress"]["encoding"], "base64");
        assert_eq!(progress(&bytes)["progress"]["data"], "/wA=");
    }

    #[test]
    fn events_carry_their_source_and_progress_is_left_to_calls() {
        let source = GenerationRef {
            extension: "x".into(),
            generation: 2,
        };
        let state = host_event(&HostEvent::StateChanged {
            source: source.clone(),
            state: LifecycleState::Ready,
        });
        assert_eq!(
            state,
            Some(json!({"type": "event", "event": "state", "extension": "x",
                        "generation": 2, "state": "ready"}))
        );
        let progress = HostEvent::Progress {
            source,
            progress: Progress {
                request_id: 1,
                sequence: 1,
                event: ProgressEvent::Decoration {
                    label: "l".into(),
                    detail: None,
                },
            },
        };
        assert_eq!(host_event(&progress), None);
    }
}
