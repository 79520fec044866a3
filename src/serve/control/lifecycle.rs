//! A `lifecycle` line as the notification it reports (section 1.10): which of the
//! params beside `event` each event requires.

use super::super::error::ServeError;
use super::wire::Lifecycle;
use crate::host::{LifecycleNotification, Outcome, Settlement};

/// Every outcome, for parsing.
const OUTCOMES: [Outcome; 7] = [
    Outcome::Completed,
    Outcome::Failed,
    Outcome::Cancelled,
    Outcome::Interrupted,
    Outcome::FrontendDisconnected,
    Outcome::Shutdown,
    Outcome::LimitReached,
];

/// The lifecycle event names, as `event` takes them (the notification methods).
const LIFECYCLE_EVENTS: &[&str] = &[
    "session/started",
    "session/settled",
    "turn/started",
    "turn/settled",
    "tool/started",
    "tool/settled",
];

/// `event` plus the notification's params, flattened as on the wire (section 1.10).
pub(super) fn lifecycle(line: Lifecycle) -> Result<LifecycleNotification, ServeError> {
    let Lifecycle {
        event,
        session_id,
        run_id,
        turn_id,
        tool_call_id,
        tool_name,
        outcome,
        duration_ms,
        reason,
    } = line;
    let required =
        |value: Option<String>, name: &str| value.ok_or_else(|| ServeError::missing(name));
    let settlement = |outcome: Option<String>| -> Result<Settlement, ServeError> {
        let outcome = required(outcome, "outcome")?;
        let outcome = OUTCOMES
            .into_iter()
            .find(|o| o.as_str() == outcome)
            .ok_or_else(|| {
                let names: Vec<&str> = OUTCOMES.iter().map(|o| o.as_str()).collect();
                ServeError::invalid_value("outcome", &names)
            })?;
        Ok(Settlement {
            outcome,
            duration_ms: duration_ms.ok_or_else(|| ServeError::missing("duration_ms"))?,
            reason,
        })
    };
    Ok(match event.as_str() {
        "session/started" => LifecycleNotification::SessionStarted { session_id },
        "session/settled" => LifecycleNotification::SessionSettled {
            session_id,
            settlement: settlement(outcome)?,
        },
        "turn/started" => LifecycleNotification::TurnStarted {
            session_id,
            run_id: required(run_id, "run_id")?,
            turn_id: required(turn_id, "turn_id")?,
        },
        "turn/settled" => LifecycleNotification::TurnSettled {
            session_id,
            run_id: required(run_id, "run_id")?,
            turn_id: required(turn_id, "turn_id")?,
            settlement: settlement(outcome)?,
        },
        "tool/started" => LifecycleNotification::ToolStarted {
            session_id,
            run_id: required(run_id, "run_id")?,
            turn_id: required(turn_id, "turn_id")?,
            tool_call_id: required(tool_call_id, "tool_call_id")?,
            tool_name: required(tool_name, "tool_name")?,
        },
        "tool/settled" => LifecycleNotification::ToolSettled {
            session_id,
            run_id: required(run_id, "run_id")?,
            turn_id: required(turn_id, "turn_id")?,
            tool_call_id: required(tool_call_id, "tool_call_id")?,
            tool_name: required(tool_name, "tool_name")?,
            settlement: settlement(outcome)?,
        },
        _ => return Err(ServeError::invalid_value("event", LIFECYCLE_EVENTS)),
    })
}
