//! The JSON shapes of everything `serve` writes: typed call outputs, host events,
//! status snapshots, shutdown reports and the discovery catalog.
//!
//! Outputs keep the wire's member names (section 1 of the reference) so a client that
//! knows the extension protocol can read them without a second vocabulary; optional
//! members are `null` when absent rather than left out, so every line of one kind has
//! the same members.

use serde_json::{json, Value};

use super::error::ServeError;
use crate::host::CallError;
use crate::host::{HostEvent, MenuFallbackReason, MenuOutcome, StartedExtension};
use crate::manifest::Catalog;
use crate::services::autocomplete::CompletionReply;
use crate::validate::{
    CommandResult, ContextContribution, HookResult, RenderOutput, StatusContribution, ToolResult,
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

fn context_contribution(c: &ContextContribution) -> Value {
    c.to_value()
}

fn status_contribution(c: &StatusContribution) -> Value {
    c.to_value()
}

/// A host event as an `event` line ([`HostEvent::to_value`]), or `None` for progress,
/// which `serve` emits from each call's own channel so the line can carry the call's
/// `call_id`.
pub(crate) fn host_event(event: &HostEvent) -> Option<Value> {
    match event {
        HostEvent::Progress { .. } => None,
        event => Some(event.to_value()),
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

/// The discovery catalog: the same shape as the CLI's `--json discover`
/// ([`Catalog::to_value`]).
pub(crate) fn catalog(catalog: &Catalog) -> Value {
    catalog.to_value()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::{GenerationRef, LifecycleState, Progress, ProgressEvent};

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
