//! The client's side of child agent sessions (docs/serve-protocol.md, "Child agent
//! sessions"): `agent_report` and `agent_event` lines, parsed and handed to the host's
//! records.

use serde::de::DeserializeOwned;
use serde_json::{json, Value};

use super::error::{ErrorCode, ServeError};
use crate::host::ExtensionHost;
use crate::services::bound::{AgentEvent, AgentReport};

/// What a client tells the host of a child its `agent_sessions` serves.
#[derive(Debug, PartialEq)]
pub(crate) enum AgentOp {
    /// `agent_report {report}`: one change of the child.
    Report(AgentReport),
    /// `agent_event {agent_id, event}`: one observation for its `agent/events` log.
    Event { agent_id: String, event: AgentEvent },
}

/// Parses `agent_report`'s `report`.
pub(super) fn report(report: Value) -> Result<AgentOp, ServeError> {
    closed(report, "report").map(AgentOp::Report)
}

/// Parses `agent_event`'s `event` of the child `agent_id`.
pub(super) fn event(agent_id: String, event: Value) -> Result<AgentOp, ServeError> {
    closed(event, "event").map(|event| AgentOp::Event { agent_id, event })
}

/// Records `op`: the reply's members, or `report_refused` with the runtime's reason.
pub(super) fn run(host: &ExtensionHost, op: AgentOp) -> Result<Value, ServeError> {
    let reports = host.agent_reports();
    let refused = |e: crate::services::bound::ReportError| {
        ServeError::new(ErrorCode::ReportRefused, e.to_string())
    };
    match op {
        AgentOp::Report(report) => reports.report(report).map(|()| json!({})).map_err(refused),
        AgentOp::Event { agent_id, event } => reports
            .event(&agent_id, event)
            .map(|sequence| json!({ "sequence": sequence }))
            .map_err(refused),
    }
}

/// Member `name`'s `value` as the closed type `T`; the error names the rule that broke.
fn closed<T: DeserializeOwned>(value: Value, name: &str) -> Result<T, ServeError> {
    serde_json::from_value(value).map_err(|e| {
        ServeError::new(ErrorCode::InvalidValue, format!("`{name}`: {e}")).with("field", name)
    })
}
