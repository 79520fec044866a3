//! `turns`: the session and frontend services from an extension (sections 1.4b,
//! 2.21b, 2.24, 2.24b), on API 0.4.
//!
//! Its `model_turn_start` and `model_turn_end` hooks each append one private entry
//! through the hook's `session_leaf` grant ([`Context::append_private_entry`]). Its
//! tool `fullscreen` acquires the host's terminal, holds it, and releases it; its tool
//! `wait_idle` waits for the active session's idle boundary (`session/wait_for_idle`).
//! It registers an autocomplete chain that completes slash commands. The manifest needs
//! API 0.4, `contributes.tools = ["fullscreen", "wait_idle"]` and `contributes.hooks =
//! ["model_turn_start", "model_turn_end"]`; the host binds `session_entries`,
//! `terminal_handoff`, `autocomplete` and `session_control_v1`.

use serde_json::{json, Value};

use crate::sdk::{
    CompletionItem, Completions, Context, Extension, HandlerError, HookOutput, ToolOutput,
    FEATURE_SESSION_CONTROL, FEATURE_SESSION_ENTRIES,
};

/// The slash commands the chain completes.
pub const COMMANDS: [&str; 3] = ["/help", "/history", "/turns"];

/// The `turns` example.
pub fn turns() -> Extension {
    let no_arguments = json!({"type": "object", "additionalProperties": false});
    Extension::new()
        .feature(FEATURE_SESSION_ENTRIES)
        .feature(FEATURE_SESSION_CONTROL)
        .hook("model_turn_start", |payload: Value, cx: &Context| {
            note(cx, "model_turn_start", &payload)
        })
        .hook("model_turn_end", |payload: Value, cx: &Context| {
            note(cx, "model_turn_end", &payload)
        })
        .tool(
            "fullscreen",
            "Take over the terminal for a moment, then give it back",
            no_arguments.clone(),
            |_: Value, cx: &Context| fullscreen(cx),
        )
        .tool(
            "wait_idle",
            "Wait until the active session is idle",
            no_arguments,
            |_: Value, cx: &Context| {
                let session = cx
                    .wait_for_idle()
                    .map_err(|e| HandlerError::internal(e.to_string()))?;
                Ok(ToolOutput::text(format!("session {session} is idle")))
            },
        )
        .on_terminal(|_notice, _cx| {})
        .autocomplete(1, |query, _cx| Ok(complete(&query.text[..query.cursor])))
}

/// Appends one private entry for the turn through the hook's grant.
fn note(cx: &Context, hook: &str, payload: &Value) -> Result<HookOutput, HandlerError> {
    let turn = payload.get("turn_index").cloned().unwrap_or(Value::Null);
    cx.append_private_entry("turn-note", json!({"hook": hook, "turn_index": turn}))
        .map_err(|e| HandlerError::internal(e.to_string()))?;
    Ok(HookOutput::continue_())
}

/// Holds the terminal and gives it back.
fn fullscreen(cx: &Context) -> Result<ToolOutput, HandlerError> {
    let host = |e: crate::sdk::ChildRequestError| HandlerError::internal(e.to_string());
    let grant = cx.terminal_acquire().map_err(host)?;
    cx.terminal_release().map_err(host)?;
    Ok(ToolOutput::text(format!(
        "held the terminal ({}x{}, grant {}) and gave it back",
        grant.columns, grant.rows, grant.grant_id
    )))
}

/// Completes the slash command the text before the cursor ends with.
fn complete(before: &str) -> Completions {
    let prefix = before.rsplit(' ').next().unwrap_or_default();
    if !prefix.starts_with('/') {
        return Completions::default();
    }
    Completions {
        prefix: prefix.to_string(),
        items: COMMANDS
            .iter()
            .filter(|c| c.starts_with(prefix))
            .map(|c| CompletionItem::new(*c, *c))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completes_the_slash_command_before_the_cursor() {
        let items = complete("see /h").items;
        let values: Vec<&str> = items.iter().map(|i| i.value.as_str()).collect();
        assert_eq!(values, ["/help", "/history"]);
        assert_eq!(complete("see /h").prefix, "/h");
        assert!(complete("plain").items.is_empty());
    }
}
