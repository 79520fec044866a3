//! The `agent_sessions` kind's types (sections 2.13-2.18): the params the runtime checks
//! before the service sees them, what the service answers, and what it reports of its
//! children, and the runtime's records of them ([`hub`]: ownership, the worker bound,
//! idempotency, the event logs), which each connection's guard in the dispatcher
//! (`dispatcher/agents.rs`) admits requests against and answers waits from.

pub(crate) mod defaults;
pub(crate) mod hub;
mod params;
mod record;
mod records;
mod report;
mod results;
pub(crate) mod spawned;

pub use params::{
    AgentEventsQuery, AgentModelsQuery, AgentPolicy, AgentSend, AgentSpawn, AgentTarget, AgentTool,
    AgentWait, ModelSelection,
};
pub use records::{
    AgentEventBatch, AgentEventRecord, AgentFollowUpResult, AgentInterruptResult, AgentList,
    AgentMessageResult, AgentPhaseLabel, AgentProvenance, AgentRecord, AgentSpawnResult,
    AgentStopResult, AgentWaited,
};
pub use report::{
    AgentEvent, AgentPhase, AgentReport, AgentReports, AgentStatus, AgentUsage, EventText,
    OutputChannel, RecentTool, ReportError, RunFinish,
};
pub(crate) use results::{closed_answer, parse_spawn_answer, SpawnEcho, TargetAnswer};
pub use results::{
    AgentModelRow, AgentModels, AgentSnapshot, AgentSpawned, FollowUpDelivered, FollowUpDelivery,
    InterruptRequested, MessageDelivered, MessageDelivery, ResolvedModel, StopRequested,
};
