//! What a child-session service reports of its children (sections 2.16-2.18): the
//! runtime keeps every child's record and answers `agent/list` and `agent/wait` from
//! it, so a service tells it each change with [`AgentReports::report`]. The runtime
//! normalizes what it is told (host-owned timestamps, the output cut to the child's
//! `max_output_bytes`, the error, tool names and argument summaries cut to their
//! bounds, the last six tool calls) and refuses a report that breaks the protocol (an
//! unknown child, a settled child that was not resumed, a child after `shutdown`).

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// A child's status (SUPPLEMENT "2.13-2.18 agent records"), internally tagged by
/// `state`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case", deny_unknown_fields)]
pub enum AgentStatus {
    /// Admitted, not yet running.
    Pending,
    /// Running a turn.
    Running,
    /// Finished; `output` is cut to the child's `max_output_bytes`.
    Completed {
        /// What the child returned.
        output: String,
    },
    /// Stopped by `agent/interrupt`.
    Interrupted,
    /// Its wall-time ceiling passed.
    TimedOut,
    /// Failed; `error` is cut to [`crate::limits::MAX_AGENT_ERROR_BYTES`].
    Failed {
        /// Why, in words.
        error: String,
    },
    /// Shut down; it never runs again.
    Shutdown,
}

impl AgentStatus {
    /// True for pending and running: what `agent/wait` waits for.
    pub fn is_unsettled(&self) -> bool {
        matches!(self, AgentStatus::Pending | AgentStatus::Running)
    }

    /// The `state` label.
    pub fn label(&self) -> &'static str {
        match self {
            AgentStatus::Pending => "pending",
            AgentStatus::Running => "running",
            AgentStatus::Completed { .. } => "completed",
            AgentStatus::Interrupted => "interrupted",
            AgentStatus::TimedOut => "timed_out",
            AgentStatus::Failed { .. } => "failed",
            AgentStatus::Shutdown => "shutdown",
        }
    }
}

/// What a running child is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AgentPhase {
    /// Waiting for the model.
    Thinking,
    /// Running a tool (`tool_name` names it).
    UsingTool,
    /// A follow-up is queued.
    Queued,
    /// Between runs.
    Idle,
}

/// One of the last tool calls of a child (section 2.16).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecentTool {
    /// The tool's name.
    pub name: String,
    /// A one-line summary of its arguments; the runtime flattens it and cuts it to
    /// [`crate::limits::MAX_AGENT_TOOL_ARGS_BYTES`].
    pub args: String,
    /// When it started, in milliseconds since the Unix epoch.
    pub started_at_ms: u64,
    /// When it finished, if it has.
    #[serde(default)]
    pub finished_at_ms: Option<u64>,
    /// True when it failed.
    #[serde(default)]
    pub error: bool,
}

/// A child's cumulative usage (section 2.16): disjoint token counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentUsage {
    /// Input tokens, cache reads excluded.
    #[serde(default)]
    pub input_tokens: u64,
    /// Output tokens.
    #[serde(default)]
    pub output_tokens: u64,
    /// Tokens read from the prompt cache.
    #[serde(default)]
    pub cache_read_tokens: u64,
    /// Tokens written to the prompt cache.
    #[serde(default)]
    pub cache_write_tokens: u64,
}

/// One change of a child, as its service reports it. Counters only grow: a smaller
/// `turn_count` or `tool_call_count` than the runtime recorded keeps the recorded one.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentReport {
    /// The child, as the service's `agent/spawn` answer named it.
    pub agent_id: String,
    /// Its status now.
    pub status: AgentStatus,
    /// Model turns so far.
    #[serde(default)]
    pub turn_count: u64,
    /// Tool calls the host observed so far.
    #[serde(default)]
    pub tool_call_count: u64,
    /// What it is doing; for a settled child the runtime uses the status label.
    #[serde(default)]
    pub phase: Option<AgentPhase>,
    /// The tool it is running, with [`AgentPhase::UsingTool`].
    #[serde(default)]
    pub tool_name: Option<String>,
    /// Its latest tool calls, oldest first; the runtime keeps the last six.
    #[serde(default)]
    pub recent_tools: Vec<RecentTool>,
    /// Cumulative usage.
    #[serde(default)]
    pub usage: AgentUsage,
    /// Exact cost so far, when known.
    #[serde(default)]
    pub cost_microdollars: Option<u64>,
    /// Follow-ups queued on it that no run has started for, when the service counts
    /// them. Otherwise the runtime counts each accepted follow-up as queued until a
    /// settled child runs again; it refuses more once
    /// [`crate::limits::MAX_AGENT_QUEUED_FOLLOW_UPS`] are queued.
    #[serde(default)]
    pub queued_follow_ups: Option<u32>,
}

impl AgentReport {
    /// A report of `status` with nothing else observed.
    pub fn new(agent_id: impl Into<String>, status: AgentStatus) -> AgentReport {
        AgentReport {
            agent_id: agent_id.into(),
            status,
            turn_count: 0,
            tool_call_count: 0,
            phase: None,
            tool_name: None,
            recent_tools: Vec::new(),
            usage: AgentUsage::default(),
            cost_microdollars: None,
            queued_follow_ups: None,
        }
    }
}

/// The channel of an `output_delta` event.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutputChannel {
    /// Visible text.
    Text,
    /// Reasoning.
    Reasoning,
}

/// Why a run finished (`run_finished`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunFinish {
    /// It completed.
    Completed,
    /// It was interrupted.
    Interrupted,
    /// A ceiling was reached.
    LimitReached,
    /// It failed.
    Failed,
}

/// One text part of a finished tool call.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EventText {
    /// Always `text`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The text.
    pub text: String,
}

/// One native observation of a child (section 2.18, `agent_session_events_v1`; SUPPLEMENT
/// "2.13-2.18 agent records"), as its service reports it. The runtime stamps it with
/// the host's `timestamp` and its `sequence`, and records a body over
/// [`crate::limits::MAX_AGENT_EVENT_BYTES`] as an `observation_error` instead.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum AgentEvent {
    /// A model turn started.
    TurnStarted {},
    /// Output arrived.
    OutputDelta {
        /// Text or reasoning.
        channel: OutputChannel,
        /// The delta.
        text: String,
    },
    /// Output so far was discarded.
    OutputDiscarded {},
    /// A tool call started.
    ToolStarted {
        /// The call's id.
        id: String,
        /// The tool's name.
        name: String,
        /// Its arguments.
        arguments: serde_json::Value,
    },
    /// A tool call finished.
    ToolFinished {
        /// The call's id.
        id: String,
        /// Its text content, when it succeeded.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content: Option<Vec<EventText>>,
        /// Its metadata, when it succeeded.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        metadata: Option<serde_json::Value>,
        /// Why it failed, when it did.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
        /// True when it failed.
        is_error: bool,
    },
    /// A model turn finished.
    TurnFinished {
        /// The turn's message.
        message: serde_json::Value,
        /// Why it stopped.
        stop_reason: String,
        /// Its usage.
        usage: serde_json::Value,
        /// Its cost.
        cost: serde_json::Value,
    },
    /// The run finished.
    RunFinished {
        /// Why.
        reason: RunFinish,
    },
    /// Something the service could not observe faithfully (unsupported media, an
    /// uncertain usage, a compaction-mirror replacement).
    ObservationError {
        /// What, in words.
        error: String,
    },
}

/// Why the runtime refused a report.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReportError {
    /// No child of this id was spawned through this host (or its record was pruned).
    UnknownAgent(String),
    /// The transition breaks the protocol (for example a settled child reported
    /// running without a follow-up that resumed it).
    Transition {
        /// The child.
        agent_id: String,
        /// What the runtime recorded.
        from: &'static str,
        /// What the report said.
        to: &'static str,
    },
}

impl fmt::Display for ReportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReportError::UnknownAgent(id) => write!(
                f,
                "no child `{id}` was spawned through this host (or its record was pruned)"
            ),
            ReportError::Transition { agent_id, from, to } => write!(
                f,
                "child `{agent_id}` is {from}; it cannot become {to} (only an accepted \
                 follow-up resumes a settled child, and a shut-down child never runs again)"
            ),
        }
    }
}

impl std::error::Error for ReportError {}

/// The host's handle for reporting children's changes: from
/// [`ServiceCall::agent_reports`](super::super::ServiceCall::agent_reports) inside a
/// service, or [`crate::ExtensionHost::agent_reports`]. Cheap to clone; every clone
/// reports into the same host. A report wakes the `agent/wait` requests it settles
/// without a thread per wait.
#[derive(Clone)]
pub struct AgentReports(pub(crate) Arc<dyn ReportSink>);

/// Where a service's reports of its children go: the runtime's records of them
/// (`features/agents/hub.rs`), which wake the dispatcher.
pub(crate) trait ReportSink: Send + Sync {
    /// Records `report` and wakes the waits it concerns.
    fn report(&self, report: AgentReport) -> Result<(), ReportError>;
    /// Appends `event` to the child's observation log: its sequence number.
    fn event(&self, agent_id: &str, event: AgentEvent) -> Result<u64, ReportError>;
}

impl AgentReports {
    /// Records `report` and wakes the waits it concerns.
    pub fn report(&self, report: AgentReport) -> Result<(), ReportError> {
        self.0.report(report)
    }

    /// Appends `event` to the child's observation log (`agent/events`, API 0.4) and
    /// wakes the long polls it concerns: its sequence number.
    pub fn event(&self, agent_id: &str, event: AgentEvent) -> Result<u64, ReportError> {
        self.0.event(agent_id, event)
    }
}

impl fmt::Debug for AgentReports {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("AgentReports")
    }
}
