//! What an `agent_sessions` service answers with (sections 2.13-2.18). A service
//! answers only what it alone knows (the child's id, how a message was delivered,
//! whether an interrupt was requested); the runtime completes every result from its
//! own records (path, task, policy, host-owned timestamps, principal and owner) before
//! the extension sees it, so a service cannot answer a malformed one.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::super::results::ServiceResult;
use crate::limits::{
    MAX_AGENT_MODEL_DISPLAY_BYTES, MAX_AGENT_MODEL_ID_BYTES, MAX_AGENT_MODEL_REASONING_LABELS,
    MAX_AGENT_TEXT_BYTES,
};

/// The service's answer to `agent/spawn`: the new child's id and its opaque session
/// reference. The id must be new to the host: an id the runtime already records is
/// refused as a broken answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentSpawned {
    /// 1 to [`MAX_AGENT_TEXT_BYTES`] printable bytes.
    pub agent_id: String,
    /// An opaque `agent-session:*` reference to the child's transcript, when it has one.
    #[serde(default)]
    pub session: Option<String>,
    /// The model the host confirmed for the child, when it resolved one
    /// (`agent_model_selection_v1`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved_model: Option<ResolvedModel>,
}

impl ServiceResult for AgentSpawned {
    fn into_result(self) -> Value {
        serde_json::to_value(self).expect("answers serialize")
    }
    fn check(result: &Value) -> Result<(), String> {
        let spawned: AgentSpawned =
            serde_json::from_value(result.clone()).map_err(|e| e.to_string())?;
        check_text("agent_id", &spawned.agent_id)?;
        match &spawned.session {
            Some(session) if !session.starts_with("agent-session:") => {
                Err("`session` must be null or an `agent-session:*` reference".into())
            }
            Some(session) => check_text("session", session),
            None => Ok(()),
        }
    }
}

/// How `agent/message` reached the child (section 2.14).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MessageDelivery {
    /// The running child reads it as steering input.
    Steering,
    /// The child is between runs; it reads it when it next runs.
    Queued,
}

/// The service's answer to `agent/message`; the runtime adds `delivered_to`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MessageDelivered {
    /// How it was delivered.
    pub delivery: MessageDelivery,
}

impl ServiceResult for MessageDelivered {
    fn into_result(self) -> Value {
        serde_json::to_value(self).expect("answers serialize")
    }
    fn check(result: &Value) -> Result<(), String> {
        parses::<MessageDelivered>(result)
    }
}

/// How `agent/follow_up` reached the child (section 2.15).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FollowUpDelivery {
    /// The child is active: the message is queued on its running session.
    FollowUp,
    /// The child had settled: its durable session resumes as a new run.
    NewRun,
}

/// The service's answer to `agent/follow_up`; the runtime adds `agent_id` and
/// `agent_path`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FollowUpDelivered {
    /// How it was delivered.
    pub delivery: FollowUpDelivery,
}

impl ServiceResult for FollowUpDelivered {
    fn into_result(self) -> Value {
        serde_json::to_value(self).expect("answers serialize")
    }
    fn check(result: &Value) -> Result<(), String> {
        parses::<FollowUpDelivered>(result)
    }
}

/// The service's answer to `agent/interrupt` (section 2.18); the runtime adds
/// `agent_id`, `agent_path` and `previous_status`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InterruptRequested {
    /// True when an active child was asked to stop (its tree is being cancelled);
    /// false when there was nothing to interrupt.
    pub interrupt_requested: bool,
}

impl ServiceResult for InterruptRequested {
    fn into_result(self) -> Value {
        serde_json::to_value(self).expect("answers serialize")
    }
    fn check(result: &Value) -> Result<(), String> {
        parses::<InterruptRequested>(result)
    }
}

/// One configured child model (`agent/models`, section 2.13): secret-free route
/// metadata.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentModelRow {
    /// The model id, 1 to [`MAX_AGENT_MODEL_ID_BYTES`] bytes.
    pub model: String,
    /// The provider id, 1 to [`MAX_AGENT_MODEL_ID_BYTES`] bytes.
    pub provider: String,
    /// A display name, at most [`MAX_AGENT_MODEL_DISPLAY_BYTES`] bytes.
    pub display_name: Option<String>,
    /// Supported reasoning labels: at most [`MAX_AGENT_MODEL_REASONING_LABELS`], each 1
    /// to [`MAX_AGENT_MODEL_ID_BYTES`] bytes.
    pub reasoning: Vec<String>,
    /// The context window, in tokens.
    pub context_window: u64,
    /// The largest output, in tokens.
    pub max_output_tokens: u64,
}

/// The service's answer to `agent/models`: the matching rows (the runtime cuts them to
/// the request's `limit` and then sets `truncated`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentModels {
    /// The matching models.
    pub models: Vec<AgentModelRow>,
    /// True when more matched than are listed.
    pub truncated: bool,
}

impl ServiceResult for AgentModels {
    fn into_result(self) -> Value {
        serde_json::to_value(self).expect("rows serialize")
    }
    fn check(result: &Value) -> Result<(), String> {
        let models: AgentModels =
            serde_json::from_value(result.clone()).map_err(|e| e.to_string())?;
        for row in &models.models {
            check_id("model", &row.model)?;
            check_id("provider", &row.provider)?;
            if let Some(name) = &row.display_name {
                if name.len() > MAX_AGENT_MODEL_DISPLAY_BYTES || name.chars().any(char::is_control)
                {
                    return Err(format!(
                        "`display_name` must be at most {MAX_AGENT_MODEL_DISPLAY_BYTES} bytes without controls"
                    ));
                }
            }
            if row.reasoning.len() > MAX_AGENT_MODEL_REASONING_LABELS {
                return Err(format!(
                    "`reasoning` has {} labels; at most {MAX_AGENT_MODEL_REASONING_LABELS}",
                    row.reasoning.len()
                ));
            }
            for label in &row.reasoning {
                check_id("reasoning", label)?;
            }
        }
        Ok(())
    }
}

/// The model a service confirms for a child (section 2.13): secret-free identity.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResolvedModel {
    /// The provider id.
    pub provider: String,
    /// The model id.
    pub model: String,
    /// The resolved reasoning configuration (for example `{"type":"off"}`).
    pub reasoning: Value,
}

/// A model-inventory identifier: 1 to [`MAX_AGENT_MODEL_ID_BYTES`] bytes, no controls.
fn check_id(what: &str, id: &str) -> Result<(), String> {
    match id.is_empty() || id.len() > MAX_AGENT_MODEL_ID_BYTES || id.chars().any(char::is_control) {
        true => Err(format!(
            "`{what}` must be 1 to {MAX_AGENT_MODEL_ID_BYTES} bytes without controls"
        )),
        false => Ok(()),
    }
}

/// The result of `agent/list`, `agent/wait` and `agent/events`, which the runtime
/// answers from its own records (their rows are `guarded`): no service answers it, so
/// a service answer for it is always broken.
#[derive(Clone, Debug, PartialEq)]
pub struct AgentSnapshot(pub Value);

impl ServiceResult for AgentSnapshot {
    fn into_result(self) -> Value {
        self.0
    }
    fn check(_result: &Value) -> Result<(), String> {
        Err("the runtime answers this method from its own records; no service does".into())
    }
}

/// `result` has the closed shape of `T`.
fn parses<T: serde::de::DeserializeOwned>(result: &Value) -> Result<(), String> {
    serde_json::from_value::<T>(result.clone())
        .map(drop)
        .map_err(|e| e.to_string())
}

/// A host-visible identifier: 1 to [`MAX_AGENT_TEXT_BYTES`] bytes without controls.
fn check_text(what: &str, text: &str) -> Result<(), String> {
    if text.is_empty() || text.len() > MAX_AGENT_TEXT_BYTES {
        return Err(format!(
            "`{what}` must be 1 to {MAX_AGENT_TEXT_BYTES} bytes"
        ));
    }
    match text.chars().any(char::is_control) {
        true => Err(format!("`{what}` must not hold control characters")),
        false => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn service_answers_are_closed_and_bounded() {
        assert!(AgentSpawned::check(&json!({"agent_id": "a-1", "session": null})).is_ok());
        assert!(AgentSpawned::check(&json!({"agent_id": "a-1"})).is_ok());
        assert!(AgentSpawned::check(&json!({"agent_id": ""})).is_err());
        assert!(AgentSpawned::check(&json!({"agent_id": "a\n"})).is_err());
        let long = "a".repeat(MAX_AGENT_TEXT_BYTES + 1);
        assert!(AgentSpawned::check(&json!({ "agent_id": long })).is_err());
        assert!(AgentSpawned::check(&json!({"agent_id": "a", "session": "x"})).is_err());
        assert!(AgentSpawned::check(&json!({"agent_id": "a", "extra": 1})).is_err());
        assert!(MessageDelivered::check(&json!({"delivery": "steering"})).is_ok());
        assert!(MessageDelivered::check(&json!({"delivery": "follow_up"})).is_err());
        assert!(FollowUpDelivered::check(&json!({"delivery": "new_run"})).is_ok());
        assert!(InterruptRequested::check(&json!({"interrupt_requested": 1})).is_err());
        assert!(AgentSnapshot::check(&json!({})).is_err());
    }
}
