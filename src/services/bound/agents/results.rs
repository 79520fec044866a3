//! What an `agent_sessions` service answers with (sections 2.13-2.18). A service
//! answers only what it alone knows (the child's id, how a message was delivered,
//! whether an interrupt was requested); the runtime completes every result from its
//! own records (path, task, policy, host-owned timestamps, principal and owner) before
//! the extension sees it, so a service cannot answer a malformed one.
//!
//! A service written from the reference may answer with the reference's whole result
//! instead (the [`AgentSpawnResult`](super::AgentSpawnResult) record of section 2.13,
//! `{delivered_to, delivery}`, `{agent_id, agent_path, delivery}`, `{agent_id,
//! agent_path, previous_status, interrupt_requested}`, `{agent_id,
//! shutdown_requested}`): that is always acceptable. The members the runtime owns
//! still come from its records. Those that name the child or echo the request (the
//! target's `agent_id` and `agent_path`, `delivered_to`, the spawn's `task_name`,
//! `profile`, `fingerprint` and `idempotency_key`, the `principal` and
//! `resource_owner`) must agree with them, and a copy that contradicts them is refused
//! with the reason. Those the runtime observes itself (`status`, `previous_status`,
//! the timestamps, the effective `policy`, a new child's `agent_path`) are checked for
//! their shape only, since the service saw them a moment apart. A member the reference
//! does not define is refused as before.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::super::results::ClosedResult;
use crate::limits::{
    MAX_AGENT_MODEL_DISPLAY_BYTES, MAX_AGENT_MODEL_ID_BYTES, MAX_AGENT_MODEL_REASONING_LABELS,
    MAX_AGENT_TEXT_BYTES,
};

/// The service's answer to `agent/spawn`: the new child's id and its opaque session
/// reference. The id must be new to the host: an id the runtime already records is
/// refused as a broken answer.
///
/// It reads the reference's whole result too (the members the runtime owns are dropped
/// here; the agent guard holds them to its records).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "SpawnAnswer")]
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

impl ClosedResult for AgentSpawned {
    fn check_bounds(&self) -> Result<(), String> {
        check_text("agent_id", &self.agent_id)?;
        match &self.session {
            Some(session) if !session.starts_with("agent-session:") => {
                Err("`session` must be null or an `agent-session:*` reference".into())
            }
            Some(session) => check_text("session", session),
            None => Ok(()),
        }
    }
}

impl TryFrom<SpawnAnswer> for AgentSpawned {
    type Error = String;
    fn try_from(answer: SpawnAnswer) -> Result<AgentSpawned, String> {
        answer.split().map(|(spawned, _)| spawned)
    }
}

/// The members of the reference's `agent/spawn` result (section 2.13) beyond
/// [`AgentSpawned`]'s, as a service copied them: the runtime's own. An outer `None` is
/// an absent member; `Some(None)` one present as `null`.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct SpawnEcho {
    pub agent_path: Option<String>,
    pub task_name: Option<String>,
    pub profile: Option<Option<String>>,
    pub fingerprint: Option<Option<String>>,
    pub idempotency_key: Option<Option<String>>,
    pub principal: Option<String>,
    pub resource_owner: Option<String>,
}

/// An `agent/spawn` answer: [`AgentSpawned`], or the reference's whole result.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SpawnAnswer {
    agent_id: String,
    #[serde(default)]
    session: Option<String>,
    #[serde(default)]
    resolved_model: Option<ResolvedModel>,
    #[serde(default)]
    agent_path: Option<String>,
    #[serde(default)]
    task_name: Option<String>,
    #[serde(default, deserialize_with = "present")]
    profile: Option<Option<String>>,
    #[serde(default, deserialize_with = "present")]
    fingerprint: Option<Option<String>>,
    #[serde(default, deserialize_with = "present")]
    idempotency_key: Option<Option<String>>,
    #[serde(default)]
    principal: Option<String>,
    #[serde(default)]
    resource_owner: Option<String>,
    /// What the runtime observes itself: a copy is checked for its shape only.
    #[serde(default)]
    #[allow(dead_code)]
    status: Option<super::AgentStatus>,
    #[serde(default)]
    #[allow(dead_code)]
    policy: Option<super::AgentPolicy>,
    #[serde(default)]
    #[allow(dead_code)]
    created_at_ms: Option<u64>,
    #[serde(default)]
    #[allow(dead_code)]
    started_at_ms: Option<u64>,
    #[serde(default)]
    #[allow(dead_code)]
    completed_at_ms: Option<u64>,
    #[serde(default)]
    #[allow(dead_code)]
    deadline_at_ms: Option<u64>,
}

impl SpawnAnswer {
    /// The service's part and the runtime's members it copied (a copied `agent_path`
    /// held to the shape of an identifier).
    fn split(self) -> Result<(AgentSpawned, SpawnEcho), String> {
        if let Some(path) = &self.agent_path {
            check_text("agent_path", path)?;
        }
        let spawned = AgentSpawned {
            agent_id: self.agent_id,
            session: self.session,
            resolved_model: self.resolved_model,
        };
        let echo = SpawnEcho {
            agent_path: self.agent_path,
            task_name: self.task_name,
            profile: self.profile,
            fingerprint: self.fingerprint,
            idempotency_key: self.idempotency_key,
            principal: self.principal,
            resource_owner: self.resource_owner,
        };
        Ok((spawned, echo))
    }
}

/// `result`, an `agent/spawn` answer the method's result rules already passed, as the
/// service's part and the runtime's members it copied.
pub(crate) fn parse_spawn_answer(result: &Value) -> Result<(AgentSpawned, SpawnEcho), String> {
    closed_answer::<SpawnAnswer>(result)?.split()
}

/// A member that may be present as `null`: `Some(None)`, unlike an absent one.
fn present<'de, D, T>(deserializer: D) -> Result<Option<Option<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(deserializer).map(Some)
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
#[serde(try_from = "TargetAnswer")]
pub struct MessageDelivered {
    /// How it was delivered.
    pub delivery: MessageDelivery,
}

impl ClosedResult for MessageDelivered {}

impl TryFrom<TargetAnswer> for MessageDelivered {
    type Error = String;
    fn try_from(answer: TargetAnswer) -> Result<MessageDelivered, String> {
        answer.only(&["delivery", "delivered_to"])?;
        Ok(MessageDelivered {
            delivery: delivery(answer.delivery)?,
        })
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
#[serde(try_from = "TargetAnswer")]
pub struct FollowUpDelivered {
    /// How it was delivered.
    pub delivery: FollowUpDelivery,
}

impl ClosedResult for FollowUpDelivered {}

impl TryFrom<TargetAnswer> for FollowUpDelivered {
    type Error = String;
    fn try_from(answer: TargetAnswer) -> Result<FollowUpDelivered, String> {
        answer.only(&["delivery", "agent_id", "agent_path"])?;
        Ok(FollowUpDelivered {
            delivery: delivery(answer.delivery)?,
        })
    }
}

/// The service's answer to `agent/interrupt` (section 2.18); the runtime adds
/// `agent_id`, `agent_path` and `previous_status`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "TargetAnswer")]
pub struct InterruptRequested {
    /// True when an active child was asked to stop (its tree is being cancelled);
    /// false when there was nothing to interrupt.
    pub interrupt_requested: bool,
}

impl ClosedResult for InterruptRequested {}

impl TryFrom<TargetAnswer> for InterruptRequested {
    type Error = String;
    fn try_from(answer: TargetAnswer) -> Result<InterruptRequested, String> {
        answer.only(&[
            "interrupt_requested",
            "agent_id",
            "agent_path",
            "previous_status",
        ])?;
        Ok(InterruptRequested {
            interrupt_requested: answer
                .interrupt_requested
                .ok_or("missing field `interrupt_requested`")?,
        })
    }
}

/// The service's answer to `agent/stop` (section 2.18): `{}`, or the reference's
/// `{agent_id, shutdown_requested: true}`; the runtime answers the extension with
/// `agent_id` and `shutdown_requested`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "NoMembers", try_from = "TargetAnswer")]
pub struct StopRequested;

impl ClosedResult for StopRequested {}

impl TryFrom<TargetAnswer> for StopRequested {
    type Error = String;
    fn try_from(answer: TargetAnswer) -> Result<StopRequested, String> {
        answer.only(&["agent_id", "shutdown_requested"])?;
        match answer.shutdown_requested {
            Some(false) => Err("`shutdown_requested` can only be true; refuse a stop you \
                                cannot request"
                .into()),
            _ => Ok(StopRequested),
        }
    }
}

/// `{}`: what [`StopRequested`] serializes as.
#[derive(Serialize)]
struct NoMembers {}

impl From<StopRequested> for NoMembers {
    fn from(_: StopRequested) -> NoMembers {
        NoMembers {}
    }
}

/// Any of the target methods' answers (`agent/message`, `agent/follow_up`,
/// `agent/interrupt`, `agent/stop`) in the reference's shape: each member typed, and
/// which of them a method allows checked by [`TargetAnswer::only`].
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct TargetAnswer {
    #[serde(default)]
    pub delivery: Option<Value>,
    #[serde(default)]
    pub delivered_to: Option<String>,
    #[serde(default)]
    pub agent_id: Option<String>,
    #[serde(default)]
    pub agent_path: Option<String>,
    #[serde(default)]
    pub previous_status: Option<Value>,
    #[serde(default)]
    pub interrupt_requested: Option<bool>,
    #[serde(default)]
    pub shutdown_requested: Option<bool>,
}

impl TargetAnswer {
    /// Refuses a member outside `allowed`, and a `previous_status` or identifier of the
    /// wrong shape (each method reads its own `delivery`).
    fn only(&self, allowed: &[&str]) -> Result<(), String> {
        let present = [
            ("delivery", self.delivery.is_some()),
            ("delivered_to", self.delivered_to.is_some()),
            ("agent_id", self.agent_id.is_some()),
            ("agent_path", self.agent_path.is_some()),
            ("previous_status", self.previous_status.is_some()),
            ("interrupt_requested", self.interrupt_requested.is_some()),
            ("shutdown_requested", self.shutdown_requested.is_some()),
        ];
        if let Some((name, _)) = present
            .iter()
            .find(|(name, there)| *there && !allowed.contains(name))
        {
            return Err(format!("unknown field `{name}`"));
        }
        if let Some(status) = &self.previous_status {
            if !is_status(status) {
                return Err("`previous_status` must be a status label or a tagged status".into());
            }
        }
        for (name, id) in [
            ("delivered_to", &self.delivered_to),
            ("agent_id", &self.agent_id),
            ("agent_path", &self.agent_path),
        ] {
            if let Some(id) = id {
                check_text(name, id)?;
            }
        }
        Ok(())
    }

    /// The first member that names another child than `agent_id` (at `agent_path`),
    /// in words: a copy that contradicts the runtime's records.
    pub(crate) fn contradiction(&self, agent_id: &str, agent_path: &str) -> Option<String> {
        if let Some(id) = self.agent_id.as_deref().filter(|id| *id != agent_id) {
            return Some(format!(
                "the answer names child `{id}`, but the request's target is `{agent_id}`"
            ));
        }
        if let Some(path) = self.agent_path.as_deref().filter(|p| *p != agent_path) {
            return Some(format!(
                "the answer gives the path `{path}`, but child `{agent_id}` is at `{agent_path}`"
            ));
        }
        match self.delivered_to.as_deref() {
            Some(to) if to != agent_id && to != agent_path => Some(format!(
                "`delivered_to` is `{to}`, but the request's target is `{agent_id}` \
                 (`{agent_path}`)"
            )),
            _ => None,
        }
    }
}

/// A required `delivery`, read as the method's own delivery enum.
fn delivery<T: serde::de::DeserializeOwned>(delivery: Option<Value>) -> Result<T, String> {
    let delivery = delivery.ok_or("missing field `delivery`")?;
    serde_json::from_value(delivery).map_err(|e| format!("`delivery`: {e}"))
}

/// A status as the reference writes one: a bare label, or `{"state": label, ..}`.
fn is_status(value: &Value) -> bool {
    const LABELS: [&str; 7] = [
        "pending",
        "running",
        "completed",
        "interrupted",
        "timed_out",
        "failed",
        "shutdown",
    ];
    match value {
        Value::String(label) => LABELS.contains(&label.as_str()),
        Value::Object(_) => serde_json::from_value::<super::AgentStatus>(value.clone()).is_ok(),
        _ => false,
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

impl ClosedResult for AgentModels {
    fn check_bounds(&self) -> Result<(), String> {
        for row in &self.models {
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
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct AgentSnapshot(pub Value);

impl ClosedResult for AgentSnapshot {
    fn check_bounds(&self) -> Result<(), String> {
        Err("the runtime answers this method from its own records; no service does".into())
    }
}

/// `result` in the closed shape of `T`.
pub(crate) fn closed_answer<T: serde::de::DeserializeOwned>(result: &Value) -> Result<T, String> {
    serde_json::from_value::<T>(result.clone()).map_err(|e| e.to_string())
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
    use crate::services::bound::ServiceResult;
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
