//! The API 0.4 additions to child agent sessions (section 2.18) and child model
//! selection (section 2.13) against the raw Wave-1 peer on API 0.4, through the example
//! scripted service: `agent/events` cursors and long polls, `agent/stop`, the retained
//! `resource_owner`, and `agent/models` with `policy.model_selection`.

mod support;

use octet_host::examples::scripted_agents::ScriptedAgents;
use octet_host::limits::MAX_AGENT_EVENTS_TIMEOUT_MS;
use serde_json::{json, Value};
use support::agents::*;

fn host(dir: &std::path::Path) -> (octet_host::ExtensionHost, Vec<octet_host::ExtensionHandle>) {
    let workspace = dir.to_path_buf();
    host_on(dir, "0.4", &["peer"], || {
        ScriptedAgents::new(workspace.clone()).bindings()
    })
}

fn kinds(batch: &Value) -> Vec<String> {
    batch["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["event"]["kind"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn events_are_ordered_non_consuming_and_cursors_ahead_of_the_log_fail() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap();
    let (_host, exts) = host(dir.path());
    let ext = &exts[0];
    let spawned = one(
        ext,
        "agent/spawn",
        spawn_params("events", "read a.txt\nsaid"),
    );
    let agent_id = spawned["result"]["agent_id"].as_str().unwrap().to_string();
    one(ext, "agent/wait", json!({"timeout_ms": 8000}));
    let all = one(
        ext,
        "agent/events",
        json!({"target": agent_id, "after_sequence": 0}),
    );
    let batch = &all["result"];
    assert_eq!(
        kinds(batch),
        [
            "turn_started",
            "tool_started",
            "tool_finished",
            "output_delta",
            "run_finished"
        ],
        "{all}"
    );
    let sequences: Vec<u64> = batch["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["sequence"].as_u64().unwrap())
        .collect();
    assert_eq!(sequences, [1, 2, 3, 4, 5]);
    assert_eq!(batch["next_sequence"], 5);
    assert_eq!(batch["has_more"], false);
    assert_eq!(batch["status"]["state"], "completed");
    assert_eq!(batch["agent_id"], agent_id.as_str());
    assert!(batch["events"][0]["event"]["timestamp"].as_u64().unwrap() > 0);
    assert_eq!(batch["events"][2]["event"]["content"][0]["text"], "alpha\n");
    // Non-consuming: the same cursor reads the same records.
    let again = one(
        ext,
        "agent/events",
        json!({"target": agent_id, "after_sequence": 3}),
    );
    assert_eq!(kinds(&again["result"]), ["output_delta", "run_finished"]);
    // At the end of a settled child's log a long poll answers at once, empty.
    let end = one(
        ext,
        "agent/events",
        json!({"target": agent_id, "after_sequence": 5, "timeout_ms": 25000}),
    );
    assert_eq!(end["result"]["events"], json!([]), "{end}");
    let future = one(
        ext,
        "agent/events",
        json!({"target": agent_id, "after_sequence": 6}),
    );
    assert_eq!(code(&future), -32002, "{future}");
    // timeout_ms is bounded, not clamped; after_sequence is required.
    let at = one(
        ext,
        "agent/events",
        json!({"target": agent_id, "after_sequence": 0, "timeout_ms": MAX_AGENT_EVENTS_TIMEOUT_MS}),
    );
    assert!(at["result"].is_object(), "{at}");
    let past = one(
        ext,
        "agent/events",
        json!({"target": agent_id, "after_sequence": 0, "timeout_ms": MAX_AGENT_EVENTS_TIMEOUT_MS + 1}),
    );
    assert_eq!(code(&past), -32602, "{past}");
    let missing = one(ext, "agent/events", json!({ "target": agent_id }));
    assert_eq!(code(&missing), -32602, "{missing}");
    let foreign = one(
        ext,
        "agent/events",
        json!({"target": "agent-nobody", "after_sequence": 0}),
    );
    assert_eq!(code(&foreign), -32002, "{foreign}");
}

#[test]
fn a_long_poll_is_held_until_the_next_record() {
    let dir = tempfile::tempdir().unwrap();
    let (_host, exts) = host(dir.path());
    let ext = &exts[0];
    let spawned = one(ext, "agent/spawn", spawn_params("slow", "sleep 1500\nwoke"));
    let agent_id = spawned["result"]["agent_id"].as_str().unwrap().to_string();
    // The first record (turn_started) may or may not be in yet: read past it.
    support::eventually("the turn started", || {
        let batch = one(
            ext,
            "agent/events",
            json!({"target": agent_id, "after_sequence": 0}),
        );
        batch["result"]["next_sequence"] == 1
    });
    let polled = one(
        ext,
        "agent/events",
        json!({"target": agent_id, "after_sequence": 1, "timeout_ms": 9000}),
    );
    assert_eq!(kinds(&polled["result"])[0], "output_delta", "{polled}");
    assert_eq!(polled["result"]["events"][0]["event"]["text"], "woke\n");
}

#[test]
fn stop_shuts_down_only_its_tree_and_a_retained_owner_is_admitted() {
    let dir = tempfile::tempdir().unwrap();
    let (_host, exts) = host(dir.path());
    let ext = &exts[0];
    let a = one(ext, "agent/spawn", spawn_params("a", "sleep 30000"));
    let b = one(ext, "agent/spawn", spawn_params("b", "sleep 30000"));
    let a_id = a["result"]["agent_id"].clone();
    let stopped = one(ext, "agent/stop", json!({ "target": a_id }));
    assert_eq!(
        stopped["result"],
        json!({"agent_id": a_id, "shutdown_requested": true})
    );
    support::eventually("the stopped child shuts down", || {
        let list = one(ext, "agent/list", json!({}));
        list["result"]["agents"][0]["status"]["state"] == "shutdown"
    });
    let list = one(ext, "agent/list", json!({}));
    assert_eq!(list["result"]["agents"][1]["status"]["state"], "running");
    // A shut-down child takes no follow-up.
    let follow = one(
        ext,
        "agent/follow_up",
        json!({"target": a_id, "message": "more"}),
    );
    assert_eq!(code(&follow), -32002, "{follow}");
    // With agent_session_lifetime_v1 the issued owner is admitted once the parent
    // settled, and a live parent's owner must match.
    let settled = ask(
        ext,
        json!([{"id": id("o"), "method": "agent/list", "params": {}, "parent": "previous",
                "owner": "issued"}]),
    );
    let answer = settled.as_object().unwrap().values().next().unwrap();
    assert_eq!(
        answer["result"]["agents"].as_array().unwrap().len(),
        2,
        "{answer}"
    );
    let mismatch = ask(
        ext,
        json!([{"id": id("m"), "method": "agent/list", "params": {}, "owner": "foreign"}]),
    );
    let answer = mismatch.as_object().unwrap().values().next().unwrap();
    assert_eq!(code(answer), -32002, "{answer}");
    let b_id = b["result"]["agent_id"].clone();
    one(ext, "agent/interrupt", json!({ "target": b_id }));
}

#[test]
fn models_and_model_selection_need_their_feature_and_keep_their_bounds() {
    let dir = tempfile::tempdir().unwrap();
    let (_host, exts) = host(dir.path());
    let ext = &exts[0];
    let models = one(
        ext,
        "agent/models",
        json!({"query": "scripted", "limit": 1}),
    );
    assert_eq!(
        models["result"]["models"][0]["model"], "inherit",
        "{models}"
    );
    assert_eq!(models["result"]["truncated"], false);
    let none = one(ext, "agent/models", json!({"query": "sonnet"}));
    assert_eq!(none["result"]["models"], json!([]));
    for bad in [
        json!({"limit": 0}),
        json!({"limit": 101}),
        json!({"query": "q".repeat(129)}),
    ] {
        assert_eq!(
            code(&one(ext, "agent/models", bad.clone())),
            -32602,
            "{bad}"
        );
    }
    let mut params = spawn_params("picked", "done");
    params["policy"]["model_selection"] = json!({"model": "inherit", "reasoning": "inherit"});
    let spawned = one(ext, "agent/spawn", params.clone());
    assert!(spawned["result"]["agent_id"].is_string(), "{spawned}");
    params["policy"]["model_selection"] = json!({"provider": "anthropic"});
    assert_eq!(code(&one(ext, "agent/spawn", params)), -32602);
}

#[test]
fn agent_sessions_alone_offers_its_companions_served_by_the_runtime() {
    // Section 2.13: "When agent_sessions is offered, the host also offers
    // agent_model_selection_v1 ... API 0.4 additionally offers agent_session_events_v1
    // and agent_session_lifetime_v1". Only the child-session service is bound here.
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().to_path_buf();
    let (_host, exts) = host_on(dir.path(), "0.4", &["peer"], || {
        octet_host::host::ServiceBindings::new()
            .agent_sessions(ScriptedAgents::new(workspace.clone()))
    });
    let ext = &exts[0];
    let features = &ext.info().negotiated.features;
    for feature in AGENT_FEATURES {
        assert!(
            features.iter().any(|f| f.as_str() == feature),
            "{feature} offered and negotiated: {features:?}"
        );
    }
    // "Without a configured resolver, only the inherited binding is available."
    let models = one(ext, "agent/models", json!({}));
    let rows = models["result"]["models"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{models}");
    assert_eq!(rows[0]["provider"], "inherit");
    assert_eq!(models["result"]["truncated"], false);
    let none = one(ext, "agent/models", json!({"query": "no-such-model"}));
    assert_eq!(none["result"]["models"], json!([]), "{none}");
    let mut explicit = spawn_params("picked", "done");
    explicit["policy"]["model_selection"] = json!({"model": "m"});
    let refused = one(ext, "agent/spawn", explicit);
    assert_eq!(code(&refused), -32002, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("inherited"),
        "{refused}"
    );
    let mut inherits = spawn_params("inherits", "done");
    inherits["policy"]["model_selection"] =
        json!({"provider": "inherit", "model": "inherit", "reasoning": "inherit"});
    let spawned = one(ext, "agent/spawn", inherits);
    let agent_id = spawned["result"]["agent_id"].clone();
    assert!(agent_id.is_string(), "{spawned}");
    one(ext, "agent/wait", json!({"timeout_ms": 8000}));
    // The runtime answers agent/events from its log: the service's events, with
    // exactly one run_finished for the run.
    let events = one(
        ext,
        "agent/events",
        json!({"target": agent_id, "after_sequence": 0}),
    );
    let finished = kinds(&events["result"])
        .iter()
        .filter(|k| *k == "run_finished")
        .count();
    assert_eq!(finished, 1, "{events}");
    // agent/stop goes to the service as an interrupt of the tree, acknowledged at once.
    let long = one(ext, "agent/spawn", spawn_params("long", "sleep 30000"));
    let long_id = long["result"]["agent_id"].clone();
    let stopped = one(ext, "agent/stop", json!({ "target": long_id }));
    assert_eq!(
        stopped["result"],
        json!({"agent_id": long_id, "shutdown_requested": true})
    );
    support::eventually("the stopped child is interrupted", || {
        let list = one(ext, "agent/list", json!({}));
        list["result"]["agents"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["agent_id"] == long_id && a["status"]["state"] == "interrupted")
    });
}

#[test]
fn without_agent_sessions_its_companions_are_not_offered() {
    let dir = tempfile::tempdir().unwrap();
    let (_host, exts) = host_on(
        dir.path(),
        "0.4",
        &["peer"],
        octet_host::host::ServiceBindings::new,
    );
    let ext = &exts[0];
    for method in ["agent/events", "agent/stop", "agent/models", "agent/spawn"] {
        let answer = one(ext, method, json!({"target": "x", "after_sequence": 0}));
        assert_eq!(code(&answer), -32601, "{method}: {answer}");
    }
}

#[test]
fn the_sdk_follows_a_childs_events_and_stops_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "n\n").unwrap();
    let ext = support::sdk_extension(
        dir.path(),
        "delegate",
        "0.4",
        "delegate",
        "tools = [\"delegate\", \"observe\"]",
    );
    let workspace = dir.path().to_path_buf();
    let host = support::host_builder(dir.path(), &[ext])
        .bind_for("delegate", ScriptedAgents::new(workspace).bindings())
        .build()
        .unwrap();
    let delegate = host.start("delegate").unwrap();
    let out = delegate
        .call_tool(
            "observe",
            json!({"task": "observed", "script": "read notes.txt\nseen"}),
            octet_host::CallOptions::with_deadline(std::time::Duration::from_secs(60)),
        )
        .unwrap();
    assert!(!out.is_error, "{}", out.text());
    assert_eq!(
        out.text(),
        "models: 1\nevents: turn_started, tool_started, tool_finished, output_delta, run_finished\nstop requested: true"
    );
}

#[test]
fn an_explicit_stop_shuts_the_owners_children_down_with_the_lifetime_service() {
    let dir = tempfile::tempdir().unwrap();
    let (host, exts) = host(dir.path());
    let spawned = one(&exts[0], "agent/spawn", spawn_params("long", "sleep 60000"));
    let agent_id = spawned["result"]["agent_id"].clone();
    exts[0].shutdown();
    let again = host.start("peer").unwrap();
    support::eventually("the stopped extension's child is shut down", || {
        let listed = one(&again, "agent/list", json!({}));
        let record = &listed["result"]["agents"][0];
        record["agent_id"] == agent_id && record["status"]["state"] == "shutdown"
    });
}
