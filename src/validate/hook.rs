//! `hook/run` (sections 1.4 and 1.4b): typed payloads for the request, and the validated
//! hook envelope of the result.
//!
//! The result envelope: `disposition` is required (`{"action":"continue"}` or
//! `{"action":"deny","reason"?:string}`); `context` and `notifications` are optional arrays,
//! empty when absent; `session_operation` is optional and its absence means continue.
//!
//! Which answers count:
//! - deny is honoured only for `before_prompt` and `before_tool_call`. Every other hook,
//!   legacy or API 0.2, may answer deny, but the operation continues regardless
//!   ([`HookResult::effective_disposition`], [`HookResult::denial_ignored`]).
//! - `model_turn_start` and `model_turn_end` (API 0.4) are observations: deny, a non-empty
//!   `context`, and the session operations `cancel` and `replace_compaction` are invalid.
//! - No hook a manifest can declare performs the session operations `cancel` or
//!   `replace_compaction`, so those are rejected for every hook; `continue` is accepted
//!   everywhere, since it means the same as absence.

use serde_json::{json, Map, Value};

use super::command::{notifications_member, Notification};
use super::context::{context_member, ContextContribution};
use super::error::{ResultError, ResultErrorKind};
use super::field::{as_object, keyword, member, optional_string, required, Keyword, ResultPath};
use super::hook_advice::{
    advice, BeforePersistencePayload, HookAdvice, PostMutationPayload, ProviderRetryPayload,
};
pub use super::names::HookName;
use super::path::Path;

/// A hook's decision about the intercepted operation.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Disposition {
    /// Proceed normally.
    #[default]
    Continue,
    /// Deny the operation.
    Deny {
        /// Why, when the extension said.
        reason: Option<String>,
    },
}

/// The session operation a hook answers with (section 1.4b; SUPPLEMENT "compaction
/// hooks"). A model-turn hook may only `continue`; a compaction hook may `cancel`; only
/// `session_before_compact` may `replace_compaction`.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SessionOperation {
    /// Proceed with the session operation.
    Continue,
    /// Cancel the compaction (a `deny` disposition of a compaction hook counts as this).
    Cancel,
    /// Compact with this summary instead of the prepared one (`session_before_compact`).
    ReplaceCompaction {
        /// The replacement summary, not empty.
        summary: String,
        /// The entry kept first: an assistant entry or a turn-start user entry of the
        /// branch (the embedder checks it against its branch).
        first_kept: String,
    },
}

/// Wire names of `disposition.action`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum DispositionAction {
    Continue,
    Deny,
}

impl Keyword for DispositionAction {
    const ALL: &'static [DispositionAction] =
        &[DispositionAction::Continue, DispositionAction::Deny];
    const NAMES: &'static [&'static str] = &["continue", "deny"];
}

/// Wire names of `session_operation.action`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SessionAction {
    Continue,
    Cancel,
    ReplaceCompaction,
}

impl Keyword for SessionAction {
    const ALL: &'static [SessionAction] = &[
        SessionAction::Continue,
        SessionAction::Cancel,
        SessionAction::ReplaceCompaction,
    ];
    const NAMES: &'static [&'static str] = &["continue", "cancel", "replace_compaction"];
}

/// A validated `hook/run` result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HookResult {
    /// The hook this answers.
    pub hook: HookName,
    /// The disposition as the extension returned it.
    pub disposition: Disposition,
    /// Prompt context to add (always empty for model-turn hooks).
    pub context: Vec<ContextContribution>,
    /// Notifications to raise.
    pub notifications: Vec<Notification>,
    /// The session operation, when the result carried one.
    pub session_operation: Option<SessionOperation>,
    /// The advice of a typed API 0.2 hook (`provider_retry`, `persistence_metadata`,
    /// `post_mutation`), when the result carried one ([`crate::validate::hook_advice`]).
    pub advice: Option<HookAdvice>,
}

/// The disposition of every hook that does not honour deny.
static CONTINUE: Disposition = Disposition::Continue;

impl HookResult {
    /// The disposition the host acts on: the returned one for hooks that honour deny,
    /// [`Disposition::Continue`] for every other hook.
    pub fn effective_disposition(&self) -> &Disposition {
        if self.hook.honors_deny() {
            &self.disposition
        } else {
            &CONTINUE
        }
    }

    /// True when the extension denied but the hook continues regardless, so the host can
    /// report the ignored denial.
    pub fn denial_ignored(&self) -> bool {
        matches!(self.disposition, Disposition::Deny { .. })
            && !self.hook.honors_deny()
            && !self.hook.is_compaction()
    }
}

#[doc(hidden)]
/// Validates the `result` of one `hook/run` for `hook` (a `post_mutation` rescan is
/// checked for its shape only; [`hook_output_for`] checks it against the payload).
pub fn hook_output(result: &Value, hook: HookName) -> Result<HookResult, ResultError> {
    checked_output(result, hook, None)
}

#[doc(hidden)]
/// Validates the `result` of the `hook/run` that sent `payload`.
pub fn hook_output_for(result: &Value, payload: &HookPayload) -> Result<HookResult, ResultError> {
    let affected = match payload {
        HookPayload::PostMutation(mutation) => Some(mutation.affected_resources.as_slice()),
        _ => None,
    };
    checked_output(result, payload.hook(), affected)
}

fn checked_output(
    result: &Value,
    hook: HookName,
    affected: Option<&[String]>,
) -> Result<HookResult, ResultError> {
    let root = Path::Root;
    let object = as_object(result, &root)?;
    let disposition = disposition(
        required(object, "disposition", &root)?,
        &root.key("disposition"),
        hook,
    )?;
    let context = context_member(object, &root)?;
    if hook.is_session_operation() && !context.is_empty() {
        return Err(root
            .key("context")
            .error(ResultErrorKind::ContextNotAllowed { hook }));
    }
    let notifications = notifications_member(object, &root)?;
    let session_operation = match member(object, "session_operation") {
        Some(value) => Some(session_operation(
            value,
            &root.key("session_operation"),
            hook,
        )?),
        // A compaction hook's deny counts as cancel.
        None if hook.is_compaction() && matches!(disposition, Disposition::Deny { .. }) => {
            Some(SessionOperation::Cancel)
        }
        None => None,
    };
    let advice = advice(object, &root, hook, affected)?;
    Ok(HookResult {
        hook,
        disposition,
        context,
        notifications,
        session_operation,
        advice,
    })
}

/// The `disposition` object at `path`.
fn disposition(value: &Value, path: &Path, hook: HookName) -> Result<Disposition, ResultError> {
    let object = as_object(value, path)?;
    let action_path = path.key("action");
    match keyword(required(object, "action", path)?, &action_path)? {
        DispositionAction::Continue => Ok(Disposition::Continue),
        DispositionAction::Deny if hook.is_model_turn() => {
            Err(action_path.error(ResultErrorKind::DenyNotAllowed { hook }))
        }
        DispositionAction::Deny => Ok(Disposition::Deny {
            reason: optional_string(object, "reason", path)?,
        }),
    }
}

/// The `session_operation` object at `path`.
fn session_operation(
    value: &Value,
    path: &Path,
    hook: HookName,
) -> Result<SessionOperation, ResultError> {
    let object = as_object(value, path)?;
    let action_path = path.key("action");
    let action: SessionAction = keyword(required(object, "action", path)?, &action_path)?;
    let rejected = match action {
        SessionAction::Continue => return Ok(SessionOperation::Continue),
        SessionAction::Cancel if hook.is_compaction() => return Ok(SessionOperation::Cancel),
        SessionAction::ReplaceCompaction if hook == HookName::SessionBeforeCompact => {
            let replacement = path.key("replacement");
            let fields = as_object(required(object, "replacement", path)?, &replacement)?;
            let text = |name: &str| -> Result<String, ResultError> {
                let at = replacement.key(name);
                match required(fields, name, &replacement)? {
                    Value::String(text) if !text.is_empty() => Ok(text.clone()),
                    Value::String(_) => Err(at.error(ResultErrorKind::Empty)),
                    _ => Err(at.error(ResultErrorKind::WrongType {
                        expected: super::error::Expected::String,
                    })),
                }
            };
            return Ok(SessionOperation::ReplaceCompaction {
                summary: text("summary")?,
                first_kept: text("first_kept")?,
            });
        }
        SessionAction::Cancel => "cancel",
        SessionAction::ReplaceCompaction => "replace_compaction",
    };
    Err(
        action_path.error(ResultErrorKind::SessionOperationNotAllowed {
            hook,
            action: rejected,
        }),
    )
}

/// The `payload` of a `hook/run` request, typed per hook (sections 1.4 and 1.4b).
#[derive(Clone, Debug, PartialEq)]
pub enum HookPayload {
    /// `{"prompt": string}`.
    BeforePrompt {
        /// The user's current input text.
        prompt: String,
    },
    /// `{"response": string}`.
    AfterResponse {
        /// The complete assistant response.
        response: String,
    },
    /// `{"name": string, "arguments": {...}}`.
    BeforeToolCall {
        /// The tool's name.
        name: String,
        /// The call's arguments.
        arguments: Value,
    },
    /// `{"name": string, "arguments": {...}, "output": string, "is_error": bool}`.
    AfterToolCall {
        /// The tool's name.
        name: String,
        /// The call's arguments.
        arguments: Value,
        /// The tool's text output.
        output: String,
        /// True when the call failed.
        is_error: bool,
    },
    /// `{"kind":"model_turn_start","run_id","turn_index","timestamp_ms"}`.
    ModelTurnStart {
        /// `run:<initiating durable user entry id>`.
        run_id: String,
        /// Zero-based iteration within the run.
        turn_index: u64,
        /// Host wall-clock Unix milliseconds at the boundary.
        timestamp_ms: u64,
    },
    /// `{"kind":"model_turn_end",...,"assistant_entry","tool_result_entries"}`.
    ModelTurnEnd {
        /// `run:<initiating durable user entry id>`.
        run_id: String,
        /// Zero-based iteration within the run.
        turn_index: u64,
        /// Host wall-clock Unix milliseconds at the boundary.
        timestamp_ms: u64,
        /// The committed native assistant entry.
        assistant_entry: Value,
        /// Its paired tool-result entries, in durable commit order.
        tool_result_entries: Vec<Value>,
    },
    /// `provider_retry` (API 0.2).
    ProviderRetry(ProviderRetryPayload),
    /// `before_persistence` (API 0.2).
    BeforePersistence(BeforePersistencePayload),
    /// `post_mutation` (API 0.2).
    PostMutation(PostMutationPayload),
    /// A payload this module does not type (the compaction hooks, whose payloads the
    /// embedder's session writer builds), sent as it is.
    Other {
        /// The hook it is for.
        hook: HookName,
        /// The payload.
        payload: Value,
    },
}

impl HookPayload {
    /// The hook this payload is sent to.
    pub fn hook(&self) -> HookName {
        match self {
            HookPayload::BeforePrompt { .. } => HookName::BeforePrompt,
            HookPayload::AfterResponse { .. } => HookName::AfterResponse,
            HookPayload::BeforeToolCall { .. } => HookName::BeforeToolCall,
            HookPayload::AfterToolCall { .. } => HookName::AfterToolCall,
            HookPayload::ModelTurnStart { .. } => HookName::ModelTurnStart,
            HookPayload::ModelTurnEnd { .. } => HookName::ModelTurnEnd,
            HookPayload::ProviderRetry(_) => HookName::ProviderRetry,
            HookPayload::BeforePersistence(_) => HookName::BeforePersistence,
            HookPayload::PostMutation(_) => HookName::PostMutation,
            HookPayload::Other { hook, .. } => *hook,
        }
    }

    /// The payload as sent in `params.payload`.
    pub fn to_value(&self) -> Value {
        match self {
            HookPayload::BeforePrompt { prompt } => json!({ "prompt": prompt }),
            HookPayload::AfterResponse { response } => json!({ "response": response }),
            HookPayload::BeforeToolCall { name, arguments } => {
                json!({ "name": name, "arguments": arguments })
            }
            HookPayload::AfterToolCall {
                name,
                arguments,
                output,
                is_error,
            } => json!({
                "name": name,
                "arguments": arguments,
                "output": output,
                "is_error": is_error,
            }),
            HookPayload::ModelTurnStart {
                run_id,
                turn_index,
                timestamp_ms,
            } => json!({
                "kind": "model_turn_start",
                "run_id": run_id,
                "turn_index": turn_index,
                "timestamp_ms": timestamp_ms,
            }),
            HookPayload::ModelTurnEnd {
                run_id,
                turn_index,
                timestamp_ms,
                assistant_entry,
                tool_result_entries,
            } => json!({
                "kind": "model_turn_end",
                "run_id": run_id,
                "turn_index": turn_index,
                "timestamp_ms": timestamp_ms,
                "assistant_entry": assistant_entry,
                "tool_result_entries": tool_result_entries,
            }),
            HookPayload::ProviderRetry(payload) => {
                serde_json::to_value(payload).expect("payloads serialize")
            }
            HookPayload::BeforePersistence(payload) => {
                serde_json::to_value(payload).expect("payloads serialize")
            }
            HookPayload::PostMutation(payload) => {
                serde_json::to_value(payload).expect("payloads serialize")
            }
            HookPayload::Other { payload, .. } => payload.clone(),
        }
    }
}

#[doc(hidden)]
/// The `params` of a `hook/run` request: `{"hook", "payload", "context"}`. Callers add
/// further members (such as the private `session_leaf` grant of section 1.4b) to the
/// returned object.
pub fn hook_run_params(payload: &HookPayload, context: Value) -> Value {
    let mut params = Map::new();
    params.insert("hook".into(), Value::from(payload.hook().as_str()));
    params.insert("payload".into(), payload.to_value());
    params.insert("context".into(), context);
    Value::Object(params)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::validate::context::Placement;

    #[test]
    fn reference_example_hook_run_result() {
        let result = json!({
            "disposition": { "action": "continue" },
            "context": [
                {
                    "label": "local-model-workflow",
                    "content": "Local-model workflow is active...",
                    "placement": "system_suffix"
                }
            ],
            "notifications": []
        });
        let output = hook_output(&result, HookName::BeforePrompt).unwrap();
        assert_eq!(
            output,
            HookResult {
                hook: HookName::BeforePrompt,
                disposition: Disposition::Continue,
                context: vec![ContextContribution {
                    label: "local-model-workflow".into(),
                    content: "Local-model workflow is active...".into(),
                    placement: Placement::SystemSuffix,
                }],
                notifications: Vec::new(),
                session_operation: None,
                advice: None,
            }
        );
    }

    #[test]
    fn reference_example_model_turn_result() {
        let result = json!({"disposition":{"action":"continue"},"notifications":[],"session_operation":{"action":"continue"}});
        for hook in [HookName::ModelTurnStart, HookName::ModelTurnEnd] {
            let output = hook_output(&result, hook).unwrap();
            assert_eq!(output.disposition, Disposition::Continue);
            assert_eq!(output.session_operation, Some(SessionOperation::Continue));
            assert!(output.context.is_empty());
        }
    }

    #[test]
    fn reference_example_request_params() {
        let params = hook_run_params(
            &HookPayload::BeforePrompt {
                prompt: "the user's current input text...".into(),
            },
            json!({"workspace": "/home/user/project", "execution_scope": null, "host": {}}),
        );
        assert_eq!(
            params,
            json!({
                "hook": "before_prompt",
                "payload": { "prompt": "the user's current input text..." },
                "context": {
                    "workspace": "/home/user/project",
                    "execution_scope": null,
                    "host": {}
                }
            })
        );
    }

    #[test]
    fn reference_example_model_turn_payloads() {
        let start = HookPayload::ModelTurnStart {
            run_id: "run:001".into(),
            turn_index: 0,
            timestamp_ms: 1791129600000,
        };
        assert_eq!(
            start.to_value(),
            json!({"kind":"model_turn_start","run_id":"run:001","turn_index":0,"timestamp_ms":1791129600000u64})
        );
        let entry = json!({"id":"002","parent":"001","timestamp_unix_ms":1791129600110u64,"value":{"type":"message","Assistant":{"content":[{"Text":"Done."}],"model":"local-model","protocol":"open_ai_chat"}}});
        let end = HookPayload::ModelTurnEnd {
            run_id: "run:001".into(),
            turn_index: 0,
            timestamp_ms: 1791129600123,
            assistant_entry: entry.clone(),
            tool_result_entries: Vec::new(),
        };
        assert_eq!(
            end.to_value(),
            json!({"kind":"model_turn_end","run_id":"run:001","turn_index":0,"timestamp_ms":1791129600123u64,"assistant_entry":entry,"tool_result_entries":[]})
        );
        assert_eq!(end.hook(), HookName::ModelTurnEnd);
    }

    #[test]
    fn compaction_hooks_may_cancel_and_the_before_hook_may_replace() {
        let replace = json!({"disposition": {"action": "continue"}, "session_operation":
            {"action": "replace_compaction", "replacement": {"summary": "S", "first_kept": "e3"}}});
        let before = hook_output(&replace, HookName::SessionBeforeCompact).unwrap();
        assert_eq!(
            before.session_operation,
            Some(SessionOperation::ReplaceCompaction {
                summary: "S".into(),
                first_kept: "e3".into()
            })
        );
        assert!(hook_output(&replace, HookName::SessionCompact).is_err());
        assert!(hook_output(&replace, HookName::ModelTurnEnd).is_err());
        let empty = json!({"disposition": {"action": "continue"}, "session_operation":
            {"action": "replace_compaction", "replacement": {"summary": "", "first_kept": "e3"}}});
        assert!(hook_output(&empty, HookName::SessionBeforeCompact).is_err());
        let cancel = json!({"disposition": {"action": "continue"}, "session_operation": {"action": "cancel"}});
        for hook in [HookName::SessionBeforeCompact, HookName::SessionCompact] {
            let out = hook_output(&cancel, hook).unwrap();
            assert_eq!(out.session_operation, Some(SessionOperation::Cancel));
        }
        assert!(hook_output(&cancel, HookName::ModelTurnStart).is_err());
        let context = json!({"disposition": {"action": "continue"},
            "context": [{"label": "l", "content": "c", "placement": "system_suffix"}]});
        assert!(hook_output(&context, HookName::SessionCompact).is_err());
    }

    #[test]
    fn hook_names_round_trip() {
        for hook in HookName::ALL {
            assert_eq!(HookName::parse(hook.as_str()), Some(hook));
        }
        assert_eq!(HookName::parse("session_start"), None);
    }
}
