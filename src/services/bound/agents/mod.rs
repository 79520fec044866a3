//! The `agent_sessions` kind's types (sections 2.13-2.18): the params the runtime checks
//! before the service sees them, what the service answers, what it reports of its
//! children, and the records the runtime answers with. The runtime's records of the
//! children themselves are a runtime-served feature's (`features/agents/`), which the
//! service reports into through [`AgentReports`].

mod params;
mod records;
mod report;
mod results;

pub use params::{
    AgentEventsQuery, AgentModelsQuery, AgentPolicy, AgentSend, AgentSpawn, AgentTarget, AgentTool,
    AgentWait, ModelSelection,
};
pub use records::{
    AgentEventBatch, AgentEventRecord, AgentFollowUpResult, AgentInterruptResult, AgentList,
    AgentMessageResult, AgentPhaseLabel, AgentProvenance, AgentRecord, AgentSpawnResult,
    AgentStopResult, AgentWaited,
};
pub(crate) use report::ReportSink;
pub use report::{
    AgentEvent, AgentPhase, AgentReport, AgentReports, AgentStatus, AgentUsage, EventText,
    OutputChannel, RecentTool, ReportError, RunFinish,
};
pub(crate) use results::{closed_answer, parse_spawn_answer, SpawnEcho, TargetAnswer};
pub use results::{
    AgentModelRow, AgentModels, AgentSnapshot, AgentSpawned, FollowUpDelivered, FollowUpDelivery,
    InterruptRequested, MessageDelivered, MessageDelivery, ResolvedModel, StopRequested,
};
