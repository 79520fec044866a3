//! `delegate`: child agent sessions from an extension (sections 2.13-2.18).
//!
//! Its tool `delegate {"task", "script"}` spawns one read-only child with the script as
//! its message, waits for it (at most 20 s) and answers what the child returned, with
//! the children the host lists for this extension. Its tool `observe {"task", "script"}`
//! (API 0.4, with the models, events and lifetime features) lists the child models,
//! spawns a child, follows its `agent/events` until its run finished, then stops it.
//! The manifest needs `contributes.tools = ["delegate"]` (and `"observe"`); the host
//! binds `agent_sessions` for it (the demo
//! binds the example [`ScriptedAgents`](crate::examples::scripted_agents::ScriptedAgents)
//! service, which runs the script against the workspace).

use serde::Deserialize;
use serde_json::json;

use crate::sdk::{ChildRequestError, Context, Extension, HandlerError, ToolOutput};
use crate::sdk::{
    FEATURE_AGENT_MODEL_SELECTION, FEATURE_AGENT_SESSIONS, FEATURE_AGENT_SESSION_EVENTS,
    FEATURE_AGENT_SESSION_LIFETIME,
};
use crate::services::bound::{AgentPolicy, AgentSpawn, AgentSpawnResult, AgentStatus};

/// The tool's arguments.
#[derive(Deserialize)]
struct Delegation {
    task: String,
    script: String,
}

/// The `delegate` example.
pub fn delegate() -> Extension {
    let parameters = json!({
        "type": "object",
        "properties": {"task": {"type": "string"}, "script": {"type": "string"}},
        "required": ["task", "script"],
        "additionalProperties": false
    });
    Extension::new()
        .feature(FEATURE_AGENT_SESSIONS)
        .feature(FEATURE_AGENT_MODEL_SELECTION)
        .feature(FEATURE_AGENT_SESSION_EVENTS)
        .feature(FEATURE_AGENT_SESSION_LIFETIME)
        .tool(
            "delegate",
            "Run a task in a read-only child session and return what it found",
            parameters.clone(),
            |args: Delegation, cx: &Context| {
                delegate_once(cx, args).map_err(|e| HandlerError::internal(e.to_string()))
            },
        )
        .tool(
            "observe",
            "Run a task in a child session and report what the host observed of it",
            parameters,
            |args: Delegation, cx: &Context| {
                observe(cx, args).map_err(|e| HandlerError::internal(e.to_string()))
            },
        )
}

/// Lists the models, spawns, follows the child's events to the end of its run, stops it.
fn observe(cx: &Context, args: Delegation) -> Result<ToolOutput, ChildRequestError> {
    let models = cx.agent_models(None, None)?;
    let child = spawn(cx, args)?;
    let mut kinds = Vec::new();
    let mut cursor = 0;
    while !kinds.iter().any(|k| k == "run_finished") {
        let batch = cx.agent_events(&child.agent_id, cursor, Some(20_000))?;
        if batch.events.is_empty() && !batch.status.is_unsettled() {
            break;
        }
        cursor = batch.next_sequence;
        kinds.extend(batch.events.iter().map(|record| {
            let kind = record.event.get("kind").and_then(|k| k.as_str());
            kind.unwrap_or("?").to_string()
        }));
    }
    let stopped = cx.stop_agent(&child.agent_id)?;
    Ok(ToolOutput::text(format!(
        "models: {}\nevents: {}\nstop requested: {stopped}",
        models.models.len(),
        kinds.join(", ")
    )))
}

/// One read-only child running the delegation's script.
fn spawn(cx: &Context, args: Delegation) -> Result<AgentSpawnResult, ChildRequestError> {
    cx.spawn_agent(AgentSpawn {
        task_name: args.task,
        profile: None,
        fingerprint: None,
        message: args.script,
        idempotency_key: None,
        policy: AgentPolicy::read_only(4096),
    })
}

fn delegate_once(cx: &Context, args: Delegation) -> Result<ToolOutput, ChildRequestError> {
    let child = spawn(cx, args)?;
    let waited = cx.wait_agents(Some(20_000))?;
    let record = waited
        .snapshot
        .agents
        .iter()
        .find(|a| a.agent_id == child.agent_id);
    let found = match record.map(|r| &r.status) {
        Some(AgentStatus::Completed { output }) => output.trim_end().to_string(),
        Some(other) => format!("the child is {}", other.label()),
        None => "the child is not listed".into(),
    };
    let listed: Vec<String> = cx
        .list_agents()?
        .agents
        .iter()
        .map(|a| format!("{} {} ({})", a.agent_id, a.agent_path, a.status.label()))
        .collect();
    Ok(ToolOutput::text(format!(
        "{found}\nchildren: {}",
        listed.join(", ")
    )))
}
