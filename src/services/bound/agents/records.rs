//! The records the runtime answers with (sections 2.13, 2.16, 2.17): built by the
//! runtime from its own state and read back by the SDK, so both sides share one shape.

use serde::{Deserialize, Serialize};

use super::params::AgentPolicy;
use super::report::{AgentPhase, AgentStatus, AgentUsage, RecentTool};
use super::results::{FollowUpDelivery, MessageDelivery, ResolvedModel};

/// The `agent/spawn` result (section 2.13).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AgentSpawnResult {
    /// The child's id.
    pub agent_id: String,
    /// Its path within the owner's trees.
    pub agent_path: String,
    /// The caller-visible task name.
    pub task_name: String,
    /// The profile, if one was asked for.
    pub profile: Option<String>,
    /// The fingerprint, if one was given.
    pub fingerprint: Option<String>,
    /// The idempotency key, if one was given.
    pub idempotency_key: Option<String>,
    /// Its status when the result was made.
    pub status: AgentStatus,
    /// The model the host confirmed for it, when the service resolved one (also in
    /// `policy.resolved_model`).
    pub resolved_model: Option<ResolvedModel>,
    /// The effective policy.
    pub policy: AgentPolicy,
    /// When the host recorded it, in milliseconds since the Unix epoch.
    pub created_at_ms: u64,
    /// When it first ran.
    pub started_at_ms: Option<u64>,
    /// When it settled.
    pub completed_at_ms: Option<u64>,
    /// When its wall-time ceiling passes, if it has one.
    pub deadline_at_ms: Option<u64>,
    /// The path-free extension principal.
    pub principal: String,
    /// The durable session owner.
    pub resource_owner: String,
}

/// The `agent/message` result (section 2.14): the service's delivery, to the child the
/// runtime resolved.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentMessageResult {
    /// The child the message went to (its id).
    pub delivered_to: String,
    /// How it was delivered.
    pub delivery: MessageDelivery,
}

/// The `agent/follow_up` result (section 2.15).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentFollowUpResult {
    /// The child.
    pub agent_id: String,
    /// Its path.
    pub agent_path: String,
    /// How the message reached it.
    pub delivery: FollowUpDelivery,
}

/// The `agent/interrupt` result (section 2.18).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentInterruptResult {
    /// The child.
    pub agent_id: String,
    /// Its path.
    pub agent_path: String,
    /// The status label it had when the interrupt was admitted.
    pub previous_status: String,
    /// True when an active child was asked to stop.
    pub interrupt_requested: bool,
}

/// The `agent/stop` result (`agent_session_lifetime_v1`, section 2.18).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentStopResult {
    /// The child whose tree is asked to shut down.
    pub agent_id: String,
    /// Always true: a stop that cannot be requested is refused instead.
    pub shutdown_requested: bool,
}

/// Where a record came from (section 2.16).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentProvenance {
    /// Always `extension_agent_session`.
    pub kind: String,
    /// The owning extension principal.
    pub principal: String,
    /// The owning session owner.
    pub resource_owner: String,
}

/// One child in `agent/list` (section 2.16).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AgentRecord {
    /// The child's id.
    pub agent_id: String,
    /// Its path.
    pub agent_path: String,
    /// Its parent child's id; `null` for a root.
    pub parent_id: Option<String>,
    /// The caller-visible task name.
    pub task_name: String,
    /// The profile, if any.
    pub profile: Option<String>,
    /// The idempotency key, if any.
    pub idempotency_key: Option<String>,
    /// The fingerprint, if any.
    pub fingerprint: Option<String>,
    /// 1 for a root.
    pub depth: u64,
    /// The opaque `agent-session:*` transcript reference, if any.
    pub session: Option<String>,
    /// Its status.
    pub status: AgentStatus,
    /// The host-confirmed model, when model selection resolved one.
    pub resolved_model: Option<ResolvedModel>,
    /// The effective policy.
    pub policy: AgentPolicy,
    /// When the host recorded it.
    pub created_at_ms: u64,
    /// When its current run started.
    pub started_at_ms: Option<u64>,
    /// When it settled.
    pub completed_at_ms: Option<u64>,
    /// When its wall-time ceiling passes.
    pub deadline_at_ms: Option<u64>,
    /// Model turns so far.
    pub turn_count: u64,
    /// Tool calls the host observed.
    pub tool_call_count: u64,
    /// What it is doing, or (settled) its status label.
    pub phase: AgentPhaseLabel,
    /// The tool it runs, while it runs one.
    pub tool_name: Option<String>,
    /// Its last tool calls, at most six.
    pub recent_tools: Vec<RecentTool>,
    /// Cumulative usage.
    pub usage: AgentUsage,
    /// Exact cost, when known.
    pub cost_microdollars: Option<u64>,
    /// Who owns it.
    pub provenance: AgentProvenance,
}

/// A record's `phase`: what a running child is doing, or a settled child's status
/// label.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum AgentPhaseLabel {
    /// A running child's phase.
    Phase(AgentPhase),
    /// The status label (`pending`, `completed`, ...).
    Status(String),
}

/// The `agent/list` result, and the `snapshot` of `agent/wait` (sections 2.16, 2.17).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AgentList {
    /// The path-free extension principal.
    pub principal: String,
    /// The durable session owner.
    pub resource_owner: String,
    /// The owner's children, in spawn order.
    pub agents: Vec<AgentRecord>,
    /// Why the records could not be persisted, if they could not (this host keeps them
    /// in memory: always `null`).
    pub persistence_error: Option<String>,
}

/// The `agent/wait` result (section 2.17).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AgentWaited {
    /// True when the deadline passed with a child still pending or running.
    pub timed_out: bool,
    /// The owner's children when the wait ended.
    pub snapshot: AgentList,
}

/// One record of an `agent/events` batch (section 2.18).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AgentEventRecord {
    /// Its place in the child's log, from 1.
    pub sequence: u64,
    /// The observation, with the host's `timestamp` beside its `kind`.
    pub event: serde_json::Value,
}

/// The `agent/events` result (section 2.18).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AgentEventBatch {
    /// The child.
    pub agent_id: String,
    /// Its native session, when it has one.
    pub session_id: Option<String>,
    /// The records after the cursor, in order.
    pub events: Vec<AgentEventRecord>,
    /// The cursor for the next request: the last sequence returned (or the one asked
    /// for, when none was).
    pub next_sequence: u64,
    /// True when more records follow in the log.
    pub has_more: bool,
    /// The child's status now.
    pub status: AgentStatus,
}
