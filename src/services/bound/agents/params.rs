//! The params of the `agent_sessions` methods (sections 2.13-2.18): closed types whose
//! bounds [`ServiceParams::check`] checks before the runtime's ownership rules and the
//! service see them.

use serde::{Deserialize, Serialize};

use super::super::params::{text, ServiceParams};
use super::super::refusal::{Refusal, ServiceRefusal};
use crate::limits::{
    AGENT_COST_MICRODOLLARS, AGENT_MAX_TOKENS, AGENT_MODELS_LIMIT, AGENT_OUTPUT_BYTES,
    AGENT_TIMEOUT_MS, AGENT_TURNS, MAX_AGENT_EVENTS_TIMEOUT_MS, MAX_AGENT_IDEMPOTENCY_KEY_BYTES,
    MAX_AGENT_MESSAGE_BYTES, MAX_AGENT_MODELS_QUERY_BYTES, MAX_AGENT_MODEL_ID_BYTES,
    MAX_AGENT_NAME_BYTES, MAX_AGENT_TEXT_BYTES, MAX_AGENT_WORKERS,
};

/// A tool a child may be granted (section 2.13).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AgentTool {
    /// Read files.
    Read,
    /// Edit files in place.
    Edit,
    /// Write whole files.
    Write,
    /// Run shell commands (content search uses it too; it can mutate).
    Bash,
}

impl AgentTool {
    /// The tool's wire name.
    pub fn name(self) -> &'static str {
        match self {
            AgentTool::Read => "read",
            AgentTool::Edit => "edit",
            AgentTool::Write => "write",
            AgentTool::Bash => "bash",
        }
    }
}

/// A child's mandatory policy (section 2.13). A `null` ceiling inherits the parent
/// session's ceiling.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentPolicy {
    /// A non-empty, duplicate-free subset of `read`, `edit`, `write`, `bash`.
    pub tools: Vec<AgentTool>,
    /// Exactly 1: a child spawns no children.
    pub max_depth: u64,
    /// 1 to [`MAX_AGENT_WORKERS`].
    pub max_concurrent_children: u64,
    /// UTF-8 bytes the child may return: [`AGENT_OUTPUT_BYTES`].
    pub max_output_bytes: u64,
    /// `null` or [`AGENT_TURNS`].
    #[serde(default)]
    pub max_turns: Option<u64>,
    /// `null` or [`AGENT_TOKENS`](AGENT_MAX_TOKENS).
    #[serde(default)]
    pub max_tokens: Option<u64>,
    /// `null` or [`AGENT_COST_MICRODOLLARS`].
    #[serde(default)]
    pub max_cost_microdollars: Option<u64>,
    /// `null` or [`AGENT_TIMEOUT_MS`].
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// Child model selection (`agent_model_selection_v1`): absent or `null` inherits
    /// everything; refused unless the feature was negotiated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_selection: Option<ModelSelection>,
    /// The model the host confirmed for the child (section 2.13: "also included in
    /// effective policy.resolved_model"): present in the effective policy of spawn
    /// and list records when the service resolved one; a spawn's own policy cannot
    /// carry it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved_model: Option<Box<super::ResolvedModel>>,
}

/// `policy.model_selection` (section 2.13, `agent_model_selection_v1`): each member
/// `inherit` (the default) or an explicit identifier the host's inventory resolves.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelSelection {
    /// `inherit` or a provider id; an explicit provider needs an explicit model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// `inherit` or a model id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// `inherit` or a reasoning label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<String>,
}

impl ModelSelection {
    /// True when `member` is absent or `inherit`.
    fn inherits(member: &Option<String>) -> bool {
        member.as_deref().is_none_or(|m| m == "inherit")
    }

    fn check(&self) -> Result<(), ServiceRefusal> {
        for (name, member) in [
            ("provider", &self.provider),
            ("model", &self.model),
            ("reasoning", &self.reasoning),
        ] {
            if let Some(value) = member {
                check_label(&format!("policy.model_selection.{name}"), value)?;
            }
        }
        if !Self::inherits(&self.provider) && Self::inherits(&self.model) {
            return Err(Refusal::InvalidRequest
                .because("policy.model_selection: an explicit provider needs an explicit model"));
        }
        Ok(())
    }
}

impl AgentPolicy {
    /// A policy granting only `read`, one child, `max_output_bytes` of output (512 to
    /// 16,384) and every other ceiling inherited: hard read-only work.
    pub fn read_only(max_output_bytes: u64) -> AgentPolicy {
        AgentPolicy {
            tools: vec![AgentTool::Read],
            max_depth: 1,
            max_concurrent_children: 1,
            max_output_bytes,
            max_turns: None,
            max_tokens: None,
            max_cost_microdollars: None,
            timeout_ms: None,
            model_selection: None,
            resolved_model: None,
        }
    }

    fn check(&self) -> Result<(), ServiceRefusal> {
        if self.resolved_model.is_some() {
            return Err(Refusal::InvalidRequest
                .because("policy.resolved_model is confirmed by the host; a spawn cannot set it"));
        }
        if self.tools.is_empty() {
            return Err(Refusal::InvalidRequest.because("policy.tools must not be empty"));
        }
        let mut seen = self.tools.clone();
        seen.sort();
        seen.dedup();
        if seen.len() != self.tools.len() {
            return Err(Refusal::InvalidRequest.because("policy.tools names a tool twice"));
        }
        if self.max_depth != 1 {
            return Err(Refusal::InvalidRequest.because("policy.max_depth must be exactly 1"));
        }
        within(
            "policy.max_concurrent_children",
            Some(self.max_concurrent_children),
            &(1..=u64::from(MAX_AGENT_WORKERS)),
        )?;
        within(
            "policy.max_output_bytes",
            Some(self.max_output_bytes),
            &AGENT_OUTPUT_BYTES,
        )?;
        within("policy.max_turns", self.max_turns, &AGENT_TURNS)?;
        within("policy.max_tokens", self.max_tokens, &AGENT_MAX_TOKENS)?;
        within(
            "policy.max_cost_microdollars",
            self.max_cost_microdollars,
            &AGENT_COST_MICRODOLLARS,
        )?;
        within("policy.timeout_ms", self.timeout_ms, &AGENT_TIMEOUT_MS)?;
        match &self.model_selection {
            Some(selection) => selection.check(),
            None => Ok(()),
        }
    }
}

/// `agent/spawn` (section 2.13): one bounded child session.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentSpawn {
    /// 1 to [`MAX_AGENT_NAME_BYTES`] of `[a-z0-9_-]`.
    pub task_name: String,
    /// Like `task_name`, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// One lowercase SHA-256 digest: opaque recovery metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<String>,
    /// The task, at most [`MAX_AGENT_MESSAGE_BYTES`].
    pub message: String,
    /// 1 to [`MAX_AGENT_IDEMPOTENCY_KEY_BYTES`]: a retry with the same key and input
    /// returns the same child; with other input it is refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotency_key: Option<String>,
    /// The child's policy.
    pub policy: AgentPolicy,
}

impl ServiceParams for AgentSpawn {
    fn check(&self) -> Result<(), ServiceRefusal> {
        check_name("task_name", &self.task_name)?;
        if let Some(profile) = &self.profile {
            check_name("profile", profile)?;
        }
        if let Some(fingerprint) = &self.fingerprint {
            let digest = fingerprint.len() == 64
                && fingerprint
                    .bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
            if !digest {
                return Err(Refusal::InvalidRequest
                    .because("fingerprint must be one lowercase SHA-256 digest (64 hex digits)"));
            }
        }
        check_message(&self.message)?;
        if let Some(key) = &self.idempotency_key {
            if key.is_empty() || key.len() > MAX_AGENT_IDEMPOTENCY_KEY_BYTES {
                return Err(Refusal::InvalidRequest.because(format!(
                    "idempotency_key must be 1 to {MAX_AGENT_IDEMPOTENCY_KEY_BYTES} bytes"
                )));
            }
        }
        self.policy.check()
    }
}

/// `agent/message` and `agent/follow_up` (sections 2.14, 2.15): a message for an owned
/// child, named by its id or path.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentSend {
    /// The child's `agent_id` or `agent_path`. The runtime resolves it within the
    /// owner's trees and hands the service the `agent_id`.
    pub target: String,
    /// At most [`MAX_AGENT_MESSAGE_BYTES`].
    pub message: String,
}

impl ServiceParams for AgentSend {
    fn check(&self) -> Result<(), ServiceRefusal> {
        check_target(&self.target)?;
        check_message(&self.message)
    }
}

/// `agent/interrupt` (section 2.18): an owned child, by id or path.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentTarget {
    /// The child's `agent_id` or `agent_path`; the service is handed the `agent_id`.
    pub target: String,
}

impl ServiceParams for AgentTarget {
    fn check(&self) -> Result<(), ServiceRefusal> {
        check_target(&self.target)
    }
}

/// `agent/wait` (section 2.17).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentWait {
    /// Milliseconds; default 30 s, clamped to 1..=60,000.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
}

impl ServiceParams for AgentWait {}

/// `agent/events` (section 2.18, `agent_session_events_v1`): the child's observations
/// after a cursor, long-polled for at most `timeout_ms`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentEventsQuery {
    /// The child's `agent_id` or `agent_path`.
    pub target: String,
    /// The last sequence already seen; 0 for the start of the log.
    pub after_sequence: u64,
    /// How long to wait for a new record, 0 (the default) to
    /// [`MAX_AGENT_EVENTS_TIMEOUT_MS`]; more is refused, not clamped.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
}

impl ServiceParams for AgentEventsQuery {
    fn check(&self) -> Result<(), ServiceRefusal> {
        check_target(&self.target)?;
        match self.timeout_ms {
            Some(ms) if ms > MAX_AGENT_EVENTS_TIMEOUT_MS => Err(Refusal::InvalidRequest.because(
                format!("timeout_ms is {ms}; at most {MAX_AGENT_EVENTS_TIMEOUT_MS}"),
            )),
            _ => Ok(()),
        }
    }
}

/// `agent/models` (section 2.13, `agent_model_selection_v1`): the host's configured
/// child models.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentModelsQuery {
    /// A case-insensitive model, provider or display-name search, at most
    /// [`MAX_AGENT_MODELS_QUERY_BYTES`] without control characters.
    #[serde(default)]
    pub query: Option<String>,
    /// [`AGENT_MODELS_LIMIT`]; the default is 50.
    #[serde(default)]
    pub limit: Option<u64>,
}

impl ServiceParams for AgentModelsQuery {
    fn check(&self) -> Result<(), ServiceRefusal> {
        if let Some(query) = &self.query {
            if query.len() > MAX_AGENT_MODELS_QUERY_BYTES || query.chars().any(char::is_control) {
                return Err(Refusal::InvalidRequest.because(format!(
                    "query must be at most {MAX_AGENT_MODELS_QUERY_BYTES} bytes without control characters"
                )));
            }
        }
        match self.limit {
            Some(limit) if !AGENT_MODELS_LIMIT.contains(&limit) => Err(Refusal::InvalidRequest
                .because(format!("limit is {limit}; it must be null or 1..=100"))),
            _ => Ok(()),
        }
    }
}

/// A model-selection member: non-empty, at most [`MAX_AGENT_MODEL_ID_BYTES`], no
/// control characters.
fn check_label(what: &str, value: &str) -> Result<(), ServiceRefusal> {
    let valid = !value.is_empty()
        && value.len() <= MAX_AGENT_MODEL_ID_BYTES
        && !value.chars().any(char::is_control);
    match valid {
        true => Ok(()),
        false => Err(Refusal::InvalidRequest.because(format!(
            "{what} must be 1 to {MAX_AGENT_MODEL_ID_BYTES} bytes without control characters"
        ))),
    }
}

/// A `task_name` or `profile`: 1 to [`MAX_AGENT_NAME_BYTES`] of `[a-z0-9_-]`.
fn check_name(what: &str, name: &str) -> Result<(), ServiceRefusal> {
    let valid = !name.is_empty()
        && name.len() <= MAX_AGENT_NAME_BYTES
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-');
    match valid {
        true => Ok(()),
        false => Err(Refusal::InvalidRequest.because(format!(
            "{what} must be 1 to {MAX_AGENT_NAME_BYTES} of lowercase ASCII letters, digits, `_` or `-`"
        ))),
    }
}

fn check_message(message: &str) -> Result<(), ServiceRefusal> {
    text("message", message, 0, MAX_AGENT_MESSAGE_BYTES)
}

fn check_target(target: &str) -> Result<(), ServiceRefusal> {
    match target.is_empty() || target.len() > MAX_AGENT_TEXT_BYTES {
        true => Err(Refusal::InvalidRequest.because(format!(
            "target must be an agent_id or agent_path of 1 to {MAX_AGENT_TEXT_BYTES} bytes"
        ))),
        false => Ok(()),
    }
}

/// `value`, when given, lies in `range`.
fn within(
    what: &str,
    value: Option<u64>,
    range: &std::ops::RangeInclusive<u64>,
) -> Result<(), ServiceRefusal> {
    match value {
        Some(v) if !range.contains(&v) => Err(Refusal::InvalidRequest.because(format!(
            "{what} is {v}; it must be null or {}..={}",
            range.start(),
            range.end()
        ))),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn spawn(patch: Value) -> Result<AgentSpawn, String> {
        let mut value = json!({
            "task_name": "inspect-midi_tools", "message": "look",
            "policy": {"tools": ["read"], "max_depth": 1, "max_concurrent_children": 8,
                       "max_output_bytes": 8192, "max_turns": null, "max_tokens": null,
                       "max_cost_microdollars": null, "timeout_ms": null}
        });
        json_patch(&mut value, patch);
        let spawn: AgentSpawn = serde_json::from_value(value).map_err(|e| e.to_string())?;
        spawn.check().map_err(|e| e.to_string())?;
        Ok(spawn)
    }

    fn json_patch(value: &mut Value, patch: Value) {
        match (value, patch) {
            (Value::Object(into), Value::Object(patch)) => {
                for (key, member) in patch {
                    match into.get_mut(&key) {
                        Some(at) if member.is_object() => json_patch(at, member),
                        _ => {
                            into.insert(key, member);
                        }
                    }
                }
            }
            (value, patch) => *value = patch,
        }
    }

    #[test]
    fn every_policy_bound_is_checked_at_and_past_its_limit() {
        assert!(spawn(json!({})).is_ok());
        let at_and_past: [(&str, u64, u64); 7] = [
            ("max_concurrent_children", 8, 9),
            ("max_output_bytes", 16_384, 16_385),
            ("max_turns", 256, 257),
            ("max_tokens", 64_000, 64_001),
            ("max_cost_microdollars", 50_000_000, 50_000_001),
            ("timeout_ms", 86_400_000, 86_400_001),
            ("max_output_bytes", 512, 511),
        ];
        for (member, at, past) in at_and_past {
            assert!(
                spawn(json!({"policy": {member: at}})).is_ok(),
                "{member} {at}"
            );
            let error = spawn(json!({"policy": {member: past}})).unwrap_err();
            assert!(error.contains(member), "{member} {past}: {error}");
        }
        for (member, low) in [
            ("max_turns", 0),
            ("max_tokens", 999),
            ("timeout_ms", 4_999),
            ("max_concurrent_children", 0),
        ] {
            assert!(spawn(json!({"policy": {member: low}})).is_err(), "{member}");
        }
        assert!(spawn(json!({"policy": {"max_depth": 2}})).is_err());
        assert!(spawn(json!({"policy": {"tools": []}})).is_err());
        assert!(spawn(json!({"policy": {"tools": ["read", "read"]}})).is_err());
        assert!(spawn(json!({"policy": {"tools": ["read", "fly"]}})).is_err());
        assert!(spawn(json!({"policy": {"model_selection": null}})).is_ok());
        // The shape; whether the feature was negotiated is the runtime's to check.
        assert!(spawn(json!({"policy": {"model_selection": {"model": "x"}}})).is_ok());
        let explicit_provider = json!({"policy": {"model_selection": {"provider": "p"}}});
        assert!(spawn(explicit_provider).is_err());
        let both = json!({"policy": {"model_selection": {"provider": "p", "model": "m"}}});
        assert!(spawn(both).is_ok());
        assert!(spawn(json!({"policy": {"model_selection": {"model": ""}}})).is_err());
        assert!(spawn(json!({"policy": {"model_selection": {"model": "a\u{7}"}}})).is_err());
        assert!(spawn(json!({"policy": {"model_selection": {"speed": "x"}}})).is_err());
        assert!(spawn(json!({"policy": {"surprise": 1}})).is_err());
    }

    #[test]
    fn names_keys_fingerprints_and_messages_are_bounded() {
        let name = "a".repeat(MAX_AGENT_NAME_BYTES);
        assert!(spawn(json!({ "task_name": name, "profile": "review" })).is_ok());
        let long = "a".repeat(MAX_AGENT_NAME_BYTES + 1);
        assert!(spawn(json!({ "task_name": long })).is_err());
        for bad in ["", "Upper", "sp ace", "dot."] {
            assert!(spawn(json!({ "task_name": bad })).is_err(), "{bad:?}");
            assert!(spawn(json!({ "profile": bad })).is_err(), "{bad:?}");
        }
        assert!(spawn(json!({ "fingerprint": "0".repeat(64) })).is_ok());
        assert!(spawn(json!({ "fingerprint": "A".repeat(64) })).is_err());
        assert!(spawn(json!({ "fingerprint": "0".repeat(63) })).is_err());
        let key = "k".repeat(MAX_AGENT_IDEMPOTENCY_KEY_BYTES);
        assert!(spawn(json!({ "idempotency_key": key })).is_ok());
        assert!(spawn(json!({ "idempotency_key": key + "k" })).is_err());
        assert!(spawn(json!({ "idempotency_key": "" })).is_err());
        let message = "m".repeat(MAX_AGENT_MESSAGE_BYTES);
        assert!(spawn(json!({ "message": message })).is_ok());
        assert!(spawn(json!({ "message": message + "m" })).is_err());
        let send = AgentSend {
            target: String::new(),
            message: "x".into(),
        };
        assert!(send.check().is_err());
    }
}
