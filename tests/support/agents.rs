//! Child agent sessions against the raw Wave-1 peer: a host with `agent_sessions` bound
//! per extension, and the peer's `ask` tool as the live parent of each request.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use octet_host::examples::scripted_agents::ScriptedAgents;
use octet_host::host::ServiceBindings;
use octet_host::{CallOptions, ExtensionHandle, ExtensionHost};
use serde_json::{json, Value};

/// Request ids are never reused within a generation.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

pub fn id(label: &str) -> String {
    format!("{label}-{}", NEXT_ID.fetch_add(1, Ordering::Relaxed))
}

/// Sends `requests` through the peer's `ask` tool (a live `tool/call` parent); the
/// answers by id.
pub fn ask(ext: &ExtensionHandle, requests: Value) -> Value {
    let out = ext
        .call_tool(
            "ask",
            json!({ "requests": requests }),
            CallOptions::with_deadline(Duration::from_secs(120)),
        )
        .unwrap();
    serde_json::from_str(&out.text()).unwrap()
}

/// One request through `ask`: its answer.
pub fn one(ext: &ExtensionHandle, method: &str, params: Value) -> Value {
    let id = id("r");
    let answers = ask(
        ext,
        json!([{ "id": id, "method": method, "params": params }]),
    );
    answers[&id].clone()
}

/// `agent_sessions` and the companions offered with it (section 2.13).
pub const AGENT_FEATURES: [&str; 4] = [
    "agent_sessions",
    "agent_model_selection_v1",
    "agent_session_events_v1",
    "agent_session_lifetime_v1",
];

pub fn policy() -> Value {
    json!({"tools": ["read", "write", "bash"], "max_depth": 1, "max_concurrent_children": 8,
           "max_turns": null, "max_tokens": null, "max_cost_microdollars": null,
           "max_output_bytes": 4096, "timeout_ms": null})
}

pub fn spawn_params(task: &str, message: &str) -> Value {
    json!({ "task_name": task, "message": message, "policy": policy() })
}

/// A host running one Wave-1 peer per name with `agent_sessions` bound for them.
pub fn host_with(
    dir: &Path,
    names: &[&str],
    bind: impl Fn() -> ServiceBindings,
) -> (ExtensionHost, Vec<ExtensionHandle>) {
    host_on(dir, "0.2", names, bind)
}

/// Like [`host_with`], the peers on API `api`.
pub fn host_on(
    dir: &Path,
    api: &str,
    names: &[&str],
    bind: impl Fn() -> ServiceBindings,
) -> (ExtensionHost, Vec<ExtensionHandle>) {
    let exts: Vec<_> = names
        .iter()
        .map(|name| super::services_extension(dir, name, api, ""))
        .collect();
    let mut builder = super::host_builder(dir, &exts)
        .tool_namespace(octet_host::host::ToolNamespace::PerExtension);
    for name in names {
        builder = builder.bind_for(*name, bind());
    }
    let host = builder.build().unwrap();
    let handles = names.iter().map(|name| host.start(name).unwrap()).collect();
    (host, handles)
}

pub fn scripted(dir: &Path, names: &[&str]) -> (ExtensionHost, Vec<ExtensionHandle>) {
    let workspace = dir.to_path_buf();
    host_with(dir, names, || {
        ServiceBindings::new().agent_sessions(ScriptedAgents::new(workspace.clone()))
    })
}

pub fn code(answer: &Value) -> i64 {
    answer["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("an error: {answer}"))
}
