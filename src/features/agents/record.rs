//! One child's record (sections 2.13-2.18): what the runtime keeps of it, its
//! observation log, and the records it answers with.

use std::collections::VecDeque;
use std::path::Path;

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::limits::{MAX_AGENT_EVENT_BYTES, MAX_AGENT_EVENT_LOG_BYTES, MAX_AGENT_EVENT_RECORDS};
use crate::services::bound::{
    AgentPhase, AgentPhaseLabel, AgentPolicy, AgentProvenance, AgentRecord, AgentSpawn,
    AgentSpawnResult, AgentStatus, AgentUsage, RecentTool, ResolvedModel,
};
use crate::services::ResourceOwner;

/// Who owns a child tree: the extension principal and the durable session owner.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct OwnerKey {
    /// `<manifest name>:sha256:<digest of the manifest's path>`: stable across
    /// restarts and reloads, and path-free (section 2.18).
    pub principal: String,
    /// The session and host build the owner was issued in, without the process
    /// generation.
    pub resource_owner: String,
}

impl OwnerKey {
    /// The owner of the requests of a generation of the manifest at `manifest_path`
    /// named `name`, issued `owner`.
    pub fn new(name: &str, manifest_path: &Path, owner: &ResourceOwner) -> OwnerKey {
        let digest = Sha256::digest(manifest_path.as_os_str().as_encoded_bytes());
        let hex = crate::services::artifacts::hex(&digest);
        OwnerKey {
            principal: format!("{name}:sha256:{hex}"),
            resource_owner: OwnerKey::resource_owner_of(
                &owner.session_id,
                &owner.extension_instance_id,
            ),
        }
    }

    /// The durable `resource_owner` string of session `session_id` in host build
    /// `extension_instance_id`: what every principal's owner in that session shares,
    /// and what the embedder retires.
    pub fn resource_owner_of(session_id: &str, extension_instance_id: &str) -> String {
        format!("agent-owner:{session_id}/{extension_instance_id}")
    }
}

/// Milliseconds since the Unix epoch: the host-owned timestamps of the records.
pub(crate) fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// One child's record.
pub(super) struct Record {
    pub(super) owner: OwnerKey,
    pub(super) agent_id: String,
    pub(super) agent_path: String,
    pub(super) spawn: AgentSpawn,
    /// The `agent/spawn` result the extension got: an identical retry gets it again.
    pub(super) spawned: Value,
    pub(super) session: Option<String>,
    pub(super) status: AgentStatus,
    pub(super) created_at_ms: u64,
    pub(super) started_at_ms: Option<u64>,
    pub(super) completed_at_ms: Option<u64>,
    pub(super) deadline_at_ms: Option<u64>,
    pub(super) turn_count: u64,
    pub(super) tool_call_count: u64,
    pub(super) phase: Option<AgentPhase>,
    pub(super) tool_name: Option<String>,
    pub(super) recent_tools: VecDeque<RecentTool>,
    pub(super) usage: AgentUsage,
    pub(super) cost_microdollars: Option<u64>,
    /// Follow-ups the service accepted that have not started a run yet: the queue
    /// [`MAX_AGENT_QUEUED_FOLLOW_UPS`] bounds, and what lets a settled child run again.
    pub(super) follow_ups: u32,
    /// Follow-ups admitted that the service has not answered yet.
    pub(super) follow_ups_in_flight: u32,
    /// An accepted `agent/interrupt` whose child has not settled yet.
    pub(super) interrupting: bool,
    /// The model the service confirmed, if any.
    pub(super) resolved_model: Option<ResolvedModel>,
    /// Its observations (`agent/events`).
    pub(super) events: EventLog,
    /// No event service feeds this child's log: the runtime logs its `run_finished`
    /// transitions itself.
    pub(super) log_transitions: bool,
    /// The current run's `run_finished` is in the log (the service's or the
    /// runtime's): with `log_transitions`, a second one is not logged.
    pub(super) run_finished: bool,
}

/// One child's observation log (section 2.18): sequence numbers from 1, bounded to
/// [`MAX_AGENT_EVENT_RECORDS`] records and [`MAX_AGENT_EVENT_LOG_BYTES`] of bodies, the
/// oldest dropped first.
#[derive(Default)]
pub(super) struct EventLog {
    /// `(sequence, event with its timestamp, body bytes)`.
    pub(super) records: VecDeque<(u64, Value, usize)>,
    pub(super) bytes: usize,
    /// The last sequence assigned; 0 before the first.
    pub(super) last: u64,
}

impl EventLog {
    pub(super) fn push(&mut self, mut body: Value, now: u64) -> u64 {
        body["timestamp"] = Value::from(now);
        let mut size = serde_json::to_vec(&body).map_or(usize::MAX, |b| b.len());
        if size > MAX_AGENT_EVENT_BYTES {
            body = serde_json::json!({
                "kind": "observation_error",
                "error": format!(
                    "an event body of {size} bytes exceeds {MAX_AGENT_EVENT_BYTES}; it was not kept"
                ),
                "timestamp": now,
            });
            size = serde_json::to_vec(&body).map_or(0, |b| b.len());
        }
        self.last += 1;
        self.records.push_back((self.last, body, size));
        self.bytes += size;
        while self.records.len() > MAX_AGENT_EVENT_RECORDS || self.bytes > MAX_AGENT_EVENT_LOG_BYTES
        {
            let Some((_, _, dropped)) = self.records.pop_front() else {
                break;
            };
            self.bytes -= dropped;
        }
        self.last
    }

    /// The first sequence still retained.
    pub(super) fn first(&self) -> u64 {
        self.records
            .front()
            .map_or(self.last + 1, |(seq, _, _)| *seq)
    }
}

impl Record {
    /// Pending or running, or settled with an accepted follow-up whose run has not
    /// started yet.
    pub(super) fn is_active(&self) -> bool {
        self.status.is_unsettled() || self.follow_ups > 0
    }

    /// The effective policy: the spawn's, with the host-confirmed `resolved_model`
    /// (section 2.13).
    fn effective_policy(&self) -> AgentPolicy {
        AgentPolicy {
            resolved_model: self.resolved_model.clone().map(Box::new),
            ..self.spawn.policy.clone()
        }
    }

    /// The `agent/spawn` result (section 2.13).
    pub(super) fn spawn_result(&self) -> Value {
        let result = AgentSpawnResult {
            agent_id: self.agent_id.clone(),
            agent_path: self.agent_path.clone(),
            task_name: self.spawn.task_name.clone(),
            profile: self.spawn.profile.clone(),
            fingerprint: self.spawn.fingerprint.clone(),
            idempotency_key: self.spawn.idempotency_key.clone(),
            status: self.status.clone(),
            resolved_model: self.resolved_model.clone(),
            policy: self.effective_policy(),
            created_at_ms: self.created_at_ms,
            started_at_ms: self.started_at_ms,
            completed_at_ms: self.completed_at_ms,
            deadline_at_ms: self.deadline_at_ms,
            principal: self.owner.principal.clone(),
            resource_owner: self.owner.resource_owner.clone(),
        };
        serde_json::to_value(result).expect("records serialize")
    }

    /// The `agent/list` record (section 2.16).
    pub(super) fn list_record(&self) -> AgentRecord {
        let phase = match self.phase {
            Some(phase) => AgentPhaseLabel::Phase(phase),
            None => AgentPhaseLabel::Status(self.status.label().into()),
        };
        AgentRecord {
            agent_id: self.agent_id.clone(),
            agent_path: self.agent_path.clone(),
            parent_id: None,
            task_name: self.spawn.task_name.clone(),
            profile: self.spawn.profile.clone(),
            idempotency_key: self.spawn.idempotency_key.clone(),
            fingerprint: self.spawn.fingerprint.clone(),
            depth: 1,
            session: self.session.clone(),
            status: self.status.clone(),
            resolved_model: self.resolved_model.clone(),
            policy: self.effective_policy(),
            created_at_ms: self.created_at_ms,
            started_at_ms: self.started_at_ms,
            completed_at_ms: self.completed_at_ms,
            deadline_at_ms: self.deadline_at_ms,
            turn_count: self.turn_count,
            tool_call_count: self.tool_call_count,
            phase,
            tool_name: self.tool_name.clone(),
            recent_tools: self.recent_tools.iter().cloned().collect(),
            usage: self.usage,
            cost_microdollars: self.cost_microdollars,
            provenance: AgentProvenance {
                kind: "extension_agent_session".into(),
                principal: self.owner.principal.clone(),
                resource_owner: self.owner.resource_owner.clone(),
            },
        }
    }
}

/// True when a retry asks for exactly what the retained spawn did.
pub(super) fn same_input(kept: &AgentSpawn, retry: &AgentSpawn) -> bool {
    kept.task_name == retry.task_name
        && kept.profile == retry.profile
        && kept.fingerprint == retry.fingerprint
        && kept.message == retry.message
        && kept.policy == retry.policy
}

/// `text` on one line: every control character becomes a space.
pub(super) fn flatten(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

pub(super) use crate::text::head as cut;
