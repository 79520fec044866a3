//! Child agent sessions (sections 2.13-2.18) against raw Python peers: the runtime's
//! rules through the example scripted service and through a deliberately naive one
//! that checks nothing.

mod support;

use std::time::Duration;

use octet_host::host::ServiceBindings;
use octet_host::limits::{MAX_AGENT_MESSAGE_BYTES, MAX_AGENT_NAME_BYTES, MAX_AGENT_WORKERS};
use octet_host::model::lifecycle::{LifecycleNotification, Outcome, Settlement};
use octet_host::services::bound::{
    AgentSessionService, AgentSpawn, AgentSpawned, Reply, ServiceCall,
};
use octet_host::CallOptions;
use serde_json::{json, Value};
use support::agents::*;

#[test]
fn a_child_is_spawned_waited_on_and_listed_with_host_owned_records() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "the notes\n").unwrap();
    let (_host, exts) = scripted(dir.path(), &["peer"]);
    let ext = &exts[0];
    let spawned = one(
        ext,
        "agent/spawn",
        spawn_params("read-notes", "read notes.txt\nall read"),
    );
    let result = &spawned["result"];
    let agent_id = result["agent_id"]
        .as_str()
        .expect("an agent_id")
        .to_string();
    assert_eq!(result["agent_path"], "/read-notes");
    assert_eq!(result["task_name"], "read-notes");
    assert_eq!(result["policy"], policy());
    assert!(result["created_at_ms"].as_u64().unwrap() > 1_600_000_000_000);
    assert_eq!(result["deadline_at_ms"], Value::Null);
    let principal = result["principal"].as_str().unwrap();
    assert!(principal.starts_with("peer:sha256:"), "{principal}");
    assert!(
        !principal.contains('/'),
        "the manifest path never reaches the extension"
    );
    assert!(result["resource_owner"]
        .as_str()
        .unwrap()
        .starts_with("agent-owner:"));

    let waited = one(ext, "agent/wait", json!({"timeout_ms": 8000}));
    assert_eq!(waited["result"]["timed_out"], false, "{waited}");
    let record = &waited["result"]["snapshot"]["agents"][0];
    assert_eq!(record["agent_id"], agent_id.as_str());
    assert_eq!(record["status"]["state"], "completed", "{record}");
    assert_eq!(record["status"]["output"], "the notes\nall read\n");
    assert_eq!(record["recent_tools"][0]["name"], "read");
    assert_eq!(record["recent_tools"][0]["args"], "notes.txt");
    assert_eq!(record["tool_call_count"], 1);
    assert_eq!(record["phase"], "completed");
    assert_eq!(record["provenance"]["kind"], "extension_agent_session");
    let created = record["created_at_ms"].as_u64().unwrap();
    let started = record["started_at_ms"].as_u64().unwrap();
    let completed = record["completed_at_ms"].as_u64().unwrap();
    assert!(created <= started && started <= completed);

    let listed = one(ext, "agent/list", json!({}));
    assert_eq!(listed["result"], waited["result"]["snapshot"]);
    // Nothing pending or running: a wait answers at once.
    let again = one(ext, "agent/wait", json!({"timeout_ms": 60000}));
    assert_eq!(again["result"]["timed_out"], false);
}

#[test]
fn malformed_params_are_32602_at_and_past_every_bound() {
    let dir = tempfile::tempdir().unwrap();
    let (_host, exts) = scripted(dir.path(), &["peer"]);
    let ext = &exts[0];
    let name = "n".repeat(MAX_AGENT_NAME_BYTES);
    let at = one(ext, "agent/spawn", spawn_params(&name, "at the bound"));
    assert!(at["result"]["agent_id"].is_string(), "{at}");
    let past = one(ext, "agent/spawn", spawn_params(&(name + "n"), "x"));
    assert_eq!(code(&past), -32602);
    let message = "m".repeat(MAX_AGENT_MESSAGE_BYTES);
    let at = one(ext, "agent/spawn", spawn_params("big", &message));
    assert!(at["result"]["agent_id"].is_string(), "{at}");
    let past = one(ext, "agent/spawn", spawn_params("big", &(message + "m")));
    assert_eq!(code(&past), -32602);
    for (member, bad) in [
        ("max_output_bytes", json!(16_385)),
        ("max_depth", json!(2)),
        ("max_concurrent_children", json!(9)),
        ("timeout_ms", json!(4_999)),
        ("tools", json!([])),
        ("tools", json!(["read", "read"])),
    ] {
        let mut params = spawn_params("t", "x");
        params["policy"][member] = bad;
        let answer = one(ext, "agent/spawn", params);
        assert_eq!(code(&answer), -32602, "{member}: {answer}");
    }
    let mut no_policy = spawn_params("t", "x");
    no_policy.as_object_mut().unwrap().remove("policy");
    assert_eq!(code(&one(ext, "agent/spawn", no_policy)), -32602);
    let mut unknown = spawn_params("t", "x");
    unknown["surprise"] = json!(1);
    assert_eq!(code(&one(ext, "agent/spawn", unknown)), -32602);
    let empty_target = one(ext, "agent/message", json!({"target": "", "message": "x"}));
    assert_eq!(code(&empty_target), -32602);
    // The API 0.4 methods are unsupported on 0.2, not unknown. agent/models comes with
    // agent_sessions (section 2.13), served by the runtime when no resolver is bound:
    // only the inherited model, and a selection of another is refused.
    for method in ["agent/events", "agent/stop"] {
        assert_eq!(code(&one(ext, method, json!({}))), -32601, "{method}");
    }
    let models = one(ext, "agent/models", json!({}));
    assert_eq!(
        models["result"]["models"][0]["provider"], "inherit",
        "{models}"
    );
    let mut picked = spawn_params("t", "x");
    picked["policy"]["model_selection"] = json!({"model": "m"});
    assert_eq!(code(&one(ext, "agent/spawn", picked)), -32002);
}

#[test]
fn an_identical_retry_returns_the_same_child_and_other_input_is_32002() {
    let dir = tempfile::tempdir().unwrap();
    let (_host, exts) = scripted(dir.path(), &["peer"]);
    let ext = &exts[0];
    let mut params = spawn_params("audit", "sleep 100\naudited");
    params["idempotency_key"] = json!("audit-2026-12-06");
    let first = one(ext, "agent/spawn", params.clone());
    let retry = one(ext, "agent/spawn", params.clone());
    assert_eq!(
        first["result"], retry["result"],
        "the same result while retained"
    );
    params["message"] = json!("another task");
    let other = one(ext, "agent/spawn", params);
    assert_eq!(code(&other), -32002, "{other}");
    let listed = one(ext, "agent/list", json!({}));
    assert_eq!(listed["result"]["agents"].as_array().unwrap().len(), 1);
}

#[test]
fn another_extension_can_never_see_or_touch_a_tree_it_does_not_own() {
    let dir = tempfile::tempdir().unwrap();
    let (_host, exts) = scripted(dir.path(), &["owner", "intruder"]);
    let (owner, intruder) = (&exts[0], &exts[1]);
    let spawned = one(owner, "agent/spawn", spawn_params("long", "sleep 30000"));
    let agent_id = spawned["result"]["agent_id"].as_str().unwrap().to_string();
    let path = spawned["result"]["agent_path"]
        .as_str()
        .unwrap()
        .to_string();
    let listed = one(intruder, "agent/list", json!({}));
    assert_eq!(listed["result"]["agents"], json!([]));
    assert_ne!(
        listed["result"]["principal"],
        spawned["result"]["principal"]
    );
    // Nothing of its own is running: the intruder's wait answers at once.
    let waited = one(intruder, "agent/wait", json!({"timeout_ms": 60000}));
    assert_eq!(waited["result"]["timed_out"], false);
    for target in [&agent_id, &path] {
        for method in ["agent/message", "agent/follow_up"] {
            let answer = one(intruder, method, json!({"target": target, "message": "hi"}));
            assert_eq!(code(&answer), -32002, "{method} {target}: {answer}");
        }
        let answer = one(intruder, "agent/interrupt", json!({ "target": target }));
        assert_eq!(code(&answer), -32002, "{answer}");
    }
    // The owner reaches it by path, and the service is handed the id.
    let interrupted = one(owner, "agent/interrupt", json!({ "target": path }));
    assert_eq!(interrupted["result"]["agent_id"], agent_id.as_str());
    assert_eq!(interrupted["result"]["previous_status"], "running");
    assert_eq!(interrupted["result"]["interrupt_requested"], true);
    let waited = one(owner, "agent/wait", json!({"timeout_ms": 8000}));
    let record = &waited["result"]["snapshot"]["agents"][0];
    assert_eq!(record["status"]["state"], "interrupted", "{waited}");
}

#[test]
fn a_restarted_generation_resumes_its_tree() {
    let dir = tempfile::tempdir().unwrap();
    let (_host, exts) = scripted(dir.path(), &["peer"]);
    let ext = &exts[0];
    let spawned = one(ext, "agent/spawn", spawn_params("kept", "done"));
    let agent_id = spawned["result"]["agent_id"].clone();
    one(ext, "agent/wait", json!({"timeout_ms": 8000}));
    let reloaded = ext.reload().unwrap();
    assert_eq!(reloaded.generation, 2);
    let listed = one(ext, "agent/list", json!({}));
    assert_eq!(listed["result"]["agents"][0]["agent_id"], agent_id);
    let follow = one(
        ext,
        "agent/follow_up",
        json!({"target": agent_id, "message": "more"}),
    );
    assert_eq!(follow["result"]["delivery"], "new_run", "{follow}");
    assert_eq!(follow["result"]["agent_id"], agent_id);
    let waited = one(ext, "agent/wait", json!({"timeout_ms": 8000}));
    let record = &waited["result"]["snapshot"]["agents"][0];
    assert_eq!(record["status"]["output"], "more\n", "{waited}");
    assert_eq!(record["turn_count"], 2);
}

#[test]
fn the_eight_worker_bound_holds_and_frees_when_a_child_settles() {
    let dir = tempfile::tempdir().unwrap();
    let (_host, exts) = scripted(dir.path(), &["peer"]);
    let ext = &exts[0];
    let requests: Vec<Value> = (0..MAX_AGENT_WORKERS + 1)
        .map(|n| {
            json!({"id": format!("w{n}"), "method": "agent/spawn",
                   "params": spawn_params("worker", "sleep 30000")})
        })
        .collect();
    let answers = ask(ext, Value::Array(requests));
    for n in 0..MAX_AGENT_WORKERS {
        assert!(answers[format!("w{n}")]["result"].is_object(), "{answers}");
    }
    let ninth = &answers[format!("w{MAX_AGENT_WORKERS}")];
    assert_eq!(code(ninth), -32002, "{ninth}");
    let first = answers["w0"]["result"]["agent_id"].clone();
    one(ext, "agent/interrupt", json!({ "target": first }));
    support::eventually("the interrupted child settles", || {
        let listed = one(ext, "agent/list", json!({}));
        listed["result"]["agents"][0]["status"]["state"] == "interrupted"
    });
    let tenth = one(ext, "agent/spawn", spawn_params("worker", "sleep 30000"));
    assert!(tenth["result"].is_object(), "{tenth}");
    let paths: Vec<_> = one(ext, "agent/list", json!({}))["result"]["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["agent_path"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(paths[0], "/worker");
    assert_eq!(paths[1], "/worker-2");
}

#[test]
fn parents_are_live_tool_calls_and_their_settlement_cancels_waits() {
    let dir = tempfile::tempdir().unwrap();
    let (_host, exts) = scripted(dir.path(), &["peer"]);
    let ext = &exts[0];
    one(ext, "agent/spawn", spawn_params("slow", "sleep 30000"));
    // A wait sent without waiting for it ends with its parent.
    let wait_id = id("wait");
    ask(
        ext,
        json!([{"id": wait_id, "method": "agent/wait", "params": {"timeout_ms": 60000},
                "wait": false}]),
    );
    let out = ext
        .call_tool(
            "answers",
            json!({ "ids": [wait_id] }),
            CallOptions::with_deadline(Duration::from_secs(60)),
        )
        .unwrap();
    let answers: Value = serde_json::from_str(&out.text()).unwrap();
    assert_eq!(code(&answers[&wait_id]), -32800, "{answers}");
    // A settled parent is not a parent; an explicit owner needs the lifetime feature.
    let settled = ask(
        ext,
        json!([{"id": id("p"), "method": "agent/list", "params": {}, "parent": "previous"}]),
    );
    let answer = settled.as_object().unwrap().values().next().unwrap();
    assert_eq!(code(answer), -32002, "{answer}");
    let explicit = ask(
        ext,
        json!([{"id": id("o"), "method": "agent/list", "params": {}, "owner": "issued"}]),
    );
    let answer = explicit.as_object().unwrap().values().next().unwrap();
    assert_eq!(code(answer), -32601, "{answer}");
    // A timed-out wait says so, with the snapshot.
    let waited = one(ext, "agent/wait", json!({"timeout_ms": 300}));
    assert_eq!(waited["result"]["timed_out"], true, "{waited}");
    assert_eq!(
        waited["result"]["snapshot"]["agents"][0]["status"]["state"],
        "running"
    );
}

#[test]
fn without_a_bound_service_agent_sessions_is_not_offered() {
    let dir = tempfile::tempdir().unwrap();
    let (_host, exts) = host_with(dir.path(), &["peer"], ServiceBindings::new);
    let answer = one(&exts[0], "agent/spawn", spawn_params("t", "x"));
    assert_eq!(code(&answer), -32601, "{answer}");
}

/// A service that checks nothing: every spawn answers the same id, and it never
/// reports.
struct Naive;

impl AgentSessionService for Naive {
    fn spawn(&self, _call: ServiceCall, _params: AgentSpawn, reply: Reply<AgentSpawned>) {
        reply.ok(AgentSpawned {
            agent_id: "the-one".into(),
            session: None,
            resolved_model: None,
        });
    }
}

#[test]
fn a_naive_service_still_gives_the_reference_behaviour() {
    let dir = tempfile::tempdir().unwrap();
    let (_host, exts) = host_with(dir.path(), &["peer", "other"], || {
        ServiceBindings::new().agent_sessions(Naive)
    });
    let first = one(&exts[0], "agent/spawn", spawn_params("a", "x"));
    assert_eq!(first["result"]["agent_id"], "the-one");
    assert_eq!(first["result"]["status"]["state"], "pending");
    // The same id again is a broken answer, never a second record.
    let second = one(&exts[0], "agent/spawn", spawn_params("b", "x"));
    assert_eq!(code(&second), -32603, "{second}");
    let other = one(&exts[1], "agent/spawn", spawn_params("c", "x"));
    assert_eq!(code(&other), -32603, "{other}");
    assert_eq!(
        one(&exts[1], "agent/list", json!({}))["result"]["agents"],
        json!([])
    );
    // It never reports: the wait is held by the runtime until its deadline.
    let waited = one(&exts[0], "agent/wait", json!({"timeout_ms": 500}));
    assert_eq!(waited["result"]["timed_out"], true, "{waited}");
    // Methods it does not implement are refused.
    let message = one(
        &exts[0],
        "agent/message",
        json!({"target": "the-one", "message": "x"}),
    );
    assert_eq!(code(&message), -32601, "{message}");
}

#[test]
fn a_host_wide_binding_is_offered_only_to_the_allowed_extensions() {
    let dir = tempfile::tempdir().unwrap();
    let exts: Vec<_> = ["first-party", "third-party"]
        .iter()
        .map(|name| support::services_extension(dir.path(), name, "0.2", ""))
        .collect();
    let host = support::host_builder(dir.path(), &exts)
        .tool_namespace(octet_host::host::ToolNamespace::PerExtension)
        .bind(ServiceBindings::new().agent_sessions(
            octet_host::examples::scripted_agents::ScriptedAgents::new(dir.path()),
        ))
        .allow_agent_sessions("first-party")
        .build()
        .unwrap();
    let allowed = host.start("first-party").unwrap();
    let other = host.start("third-party").unwrap();
    let negotiated = |ext: &octet_host::ExtensionHandle| {
        ext.info()
            .negotiated
            .features
            .contains(octet_host::negotiation::Feature::AgentSessions)
    };
    assert!(negotiated(&allowed));
    assert!(!negotiated(&other));
    let spawned = one(&allowed, "agent/spawn", spawn_params("t", "done"));
    assert!(spawned["result"].is_object(), "{spawned}");
    let refused = one(&other, "agent/spawn", spawn_params("t", "done"));
    assert_eq!(code(&refused), -32601, "{refused}");
}

#[test]
fn an_explicit_stop_asks_the_service_to_end_the_owners_children() {
    let dir = tempfile::tempdir().unwrap();
    let (host, exts) = scripted(dir.path(), &["peer"]);
    let spawned = one(&exts[0], "agent/spawn", spawn_params("long", "sleep 60000"));
    let agent_id = spawned["result"]["agent_id"].clone();
    // A reload resumes the tree: the child keeps running.
    exts[0].reload().unwrap();
    let listed = one(&exts[0], "agent/list", json!({}));
    assert_eq!(listed["result"]["agents"][0]["status"]["state"], "running");
    // An explicit stop does not: without agent_session_lifetime_v1 bound, each active
    // child is interrupted.
    exts[0].shutdown();
    let again = host.start("peer").unwrap();
    support::eventually("the stopped extension's child is interrupted", || {
        let listed = one(&again, "agent/list", json!({}));
        let record = &listed["result"]["agents"][0];
        record["agent_id"] == agent_id && record["status"]["state"] == "interrupted"
    });
}

fn settle_session(host: &octet_host::ExtensionHost) {
    host.lifecycle(LifecycleNotification::SessionSettled {
        session_id: host.session_id().into(),
        settlement: Settlement {
            outcome: Outcome::Completed,
            duration_ms: 1,
            reason: None,
        },
    });
}

#[test]
fn a_settled_session_wakes_the_waits_its_owner_holds() {
    let dir = tempfile::tempdir().unwrap();
    // The naive service never reports: only the owner's retirement (or the deadline,
    // after the peer gave up at 10 s) can answer the wait.
    let (host, exts) = host_with(dir.path(), &["peer"], || {
        ServiceBindings::new().agent_sessions(Naive)
    });
    let ext = exts[0].clone();
    one(&ext, "agent/spawn", spawn_params("a", "x"));
    let wait = id("wait");
    let requests = json!([
        {"id": wait, "method": "agent/wait", "params": {"timeout_ms": 60000}, "wait": false},
        // Answered after the wait reached the host, which holds it: then the peer says so.
        {"id": id("list"), "method": "agent/list", "params": {}, "announce": "wait-held"},
        {"await": wait, "timeout": 30.0},
    ]);
    let waiter = std::thread::spawn(move || ask(&ext, requests));
    support::eventually("the wait is held", || {
        host.status()
            .iter()
            .any(|s| s.stderr_tail.iter().any(|line| line == "wait-held"))
    });
    settle_session(&host);
    let answers = waiter.join().unwrap();
    let woken = &answers[&wait]["result"];
    assert_eq!(woken["timed_out"], true, "{answers}");
    assert_eq!(woken["snapshot"]["agents"][0]["agent_id"], "the-one");
}

#[test]
fn a_settled_session_stops_its_trees_and_refuses_changes_until_the_next_run() {
    let dir = tempfile::tempdir().unwrap();
    let (host, exts) = scripted(dir.path(), &["peer"]);
    let ext = &exts[0];
    let mut params = spawn_params("long", "sleep 60000");
    params["idempotency_key"] = json!("k-1");
    let first = one(ext, "agent/spawn", params.clone());
    let agent_id = first["result"]["agent_id"].clone();
    settle_session(&host);
    // Its children are asked to stop (interrupted: the lifetime feature is not bound).
    support::eventually("the retired owner's child is interrupted", || {
        let listed = one(ext, "agent/list", json!({}));
        listed["result"]["agents"][0]["status"]["state"] == "interrupted"
    });
    // Observation stays; a wait with nothing running answers at once.
    let waited = one(ext, "agent/wait", json!({"timeout_ms": 60000}));
    assert_eq!(waited["result"]["timed_out"], false, "{waited}");
    // Every change is refused, an identical retry too.
    for (method, params) in [
        ("agent/spawn", spawn_params("again", "done")),
        ("agent/spawn", params.clone()),
        (
            "agent/follow_up",
            json!({"target": agent_id, "message": "done"}),
        ),
        ("agent/message", json!({"target": agent_id, "message": "x"})),
        ("agent/interrupt", json!({"target": agent_id})),
    ] {
        let refused = one(ext, method, params);
        assert_eq!(code(&refused), -32002, "{method}: {refused}");
        let reason = refused["error"]["message"].as_str().unwrap_or("");
        assert!(reason.contains("retired"), "{method}: {refused}");
    }
    // The next owning run starts afresh: the old child and its key are gone.
    host.lifecycle(LifecycleNotification::SessionStarted {
        session_id: host.session_id().into(),
    });
    support::eventually("the next run admits spawns", || {
        let again = one(ext, "agent/spawn", params.clone());
        again["result"].is_object()
            && again["result"]["agent_id"] != agent_id
            && again["result"]["idempotency_key"] == "k-1"
    });
    let listed = one(ext, "agent/list", json!({}));
    let agents = listed["result"]["agents"].as_array().unwrap();
    assert_eq!(agents.len(), 1, "{listed}");
    assert_ne!(agents[0]["agent_id"], agent_id);
}
