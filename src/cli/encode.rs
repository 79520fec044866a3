//! JSON forms of the library's types, for `--json` output. Statuses, reports and
//! events are the model's one encoding ([`crate::model::encode`]), the same JSON serve
//! prints.

use serde_json::{json, Value};

use crate::negotiation::Negotiated;
use crate::validate::{
    CommandResult, ContextContribution, HookResult, RenderOutput, StatusContribution, ToolResult,
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
