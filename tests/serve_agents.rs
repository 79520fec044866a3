//! `serve` binds `agent_sessions` to its client (docs/serve-protocol.md, "Child agent
//! sessions"): the checked spawn, message, follow-up and interrupt requests become
//! `service_request` lines, the client reports its children with `agent_report`, and
//! the runtime answers `agent/list` and `agent/wait` itself. Against the raw Wave-1 peer.

mod support;

use serde_json::{json, Value};
use support::serve_harness::*;
use support::*;

fn serve_with_peer() -> Serve {
    serve_with_peer_on("0.2")
}

fn serve_with_peer_on(api: &str) -> Serve {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dir = services_extension(root.path(), "peer", api, "");
    Serve::over(workspace, root, vec![dir])
}

/// Answers the next `service_request` (which must be for `method`) with `result`.
fn answer_next(serve: &mut Serve, id: u64, method: &str, result: Value) -> Value {
    let request = serve.until(method, |l| l["type"] == "service_request");
    assert_eq!(request["method"], method, "{request}");
    serve.request(json!({"id": id, "op": "service_answer",
        "request_id": request["request_id"], "result": result}))
}

/// Sends the peer's `ask` with `requests` as call `call_id`, without waiting for it.
fn ask(serve: &Serve, call_id: &str, requests: Value) {
    serve.send(
        json!({"op": "call", "call_id": call_id, "extension": "peer", "tool": "ask",
                      "arguments": {"requests": requests}}),
    );
}

/// The answers the `ask` call `call_id` reported.
fn answers(serve: &mut Serve, call_id: &str) -> Value {
    let result = serve.result(json!(call_id));
    assert_eq!(result["ok"], true, "{result}");
    serde_json::from_str(text_of(&result)).unwrap()
}

fn spawn_params(task: &str) -> Value {
    json!({"task_name": task, "message": "look around", "policy": {
        "tools": ["read"], "max_depth": 1, "max_concurrent_children": 8,
        "max_output_bytes": 512, "max_turns": null, "max_tokens": null,
        "max_cost_microdollars": null, "timeout_ms": 60000}})
}

#[test]
fn a_client_serves_child_sessions_and_the_runtime_answers_waits_and_lists() {
    let mut serve = serve_with_peer();
    let reply = serve.request(json!({"id": 1, "op": "start", "extension": "peer",
                                     "services": ["agent_sessions"]}));
    assert_eq!(reply["ok"], true, "{reply}");
    assert!(reply["features"]
        .as_array()
        .unwrap()
        .contains(&json!("agent_sessions")));

    ask(
        &serve,
        "c1",
        json!([{"id": "spawn", "method": "agent/spawn", "params": spawn_params("survey")}]),
    );
    let request = serve.until("service_request", |l| l["type"] == "service_request");
    assert_eq!(request["method"], "agent/spawn");
    assert_eq!(request["params"]["task_name"], "survey");
    assert_eq!(request["params"]["policy"]["timeout_ms"], 60000);
    // A report before the spawn's answer is kept until the answer arrives.
    let early = serve.request(json!({"id": 2, "op": "agent_report",
        "report": {"agent_id": "child-1", "status": {"state": "running"}, "turn_count": 1}}));
    assert_eq!(early["ok"], true, "{early}");
    let reply = serve.request(json!({"id": 3, "op": "service_answer",
        "request_id": request["request_id"], "result": {"agent_id": "child-1", "session": null}}));
    assert_eq!(reply["ok"], true, "{reply}");
    let spawned = answers(&mut serve, "c1");
    let result = &spawned["spawn"]["result"];
    assert_eq!(result["agent_id"], "child-1", "{spawned}");
    assert_eq!(result["agent_path"], "/survey");
    let created = result["created_at_ms"].as_u64().unwrap();
    assert_eq!(result["deadline_at_ms"].as_u64().unwrap(), created + 60000);

    // The wait is held by the runtime: no line reaches the client for it.
    ask(
        &serve,
        "c2",
        json!([{"id": "wait", "method": "agent/wait", "params": {"timeout_ms": 9000}}]),
    );
    std::thread::sleep(std::time::Duration::from_millis(200));
    let output = "x".repeat(600);
    let reply = serve.request(json!({"id": 4, "op": "agent_report", "report": {
        "agent_id": "child-1", "status": {"state": "completed", "output": output},
        "turn_count": 1, "tool_call_count": 1,
        "recent_tools": [{"name": "read", "args": "a\nb", "started_at_ms": created}]}}));
    assert_eq!(reply["ok"], true, "{reply}");
    let waited = answers(&mut serve, "c2");
    let snapshot = &waited["wait"]["result"]["snapshot"];
    assert_eq!(waited["wait"]["result"]["timed_out"], false, "{waited}");
    let record = &snapshot["agents"][0];
    assert_eq!(record["status"]["state"], "completed");
    assert_eq!(
        record["status"]["output"].as_str().unwrap().len(),
        512,
        "the output is cut to max_output_bytes"
    );
    assert_eq!(record["recent_tools"][0]["args"], "a b");
    assert_eq!(record["turn_count"], 1);

    // A follow-up reaches the client with the resolved id; the runtime adds the rest.
    ask(
        &serve,
        "c3",
        json!([{"id": "more", "method": "agent/follow_up",
                "params": {"target": "/survey", "message": "and more"}}]),
    );
    let request = serve.until("service_request", |l| l["type"] == "service_request");
    assert_eq!(request["method"], "agent/follow_up");
    assert_eq!(
        request["params"],
        json!({"target": "child-1", "message": "and more"})
    );
    serve.request(json!({"id": 5, "op": "service_answer",
        "request_id": request["request_id"], "result": {"delivery": "new_run"}}));
    let followed = answers(&mut serve, "c3");
    assert_eq!(
        followed["more"]["result"],
        json!({"agent_id": "child-1", "agent_path": "/survey", "delivery": "new_run"})
    );

    // Reports the protocol does not allow are refused with the reason.
    let unknown = serve.request(json!({"id": 6, "op": "agent_report",
        "report": {"agent_id": "nobody", "status": {"state": "running"}}}));
    assert_eq!(unknown["error"]["code"], "report_refused", "{unknown}");
    let malformed = serve.request(json!({"id": 7, "op": "agent_report",
        "report": {"agent_id": "child-1", "status": {"state": "flying"}}}));
    assert_eq!(malformed["error"]["code"], "invalid_value", "{malformed}");
    let resumed = serve.request(json!({"id": 8, "op": "agent_report",
        "report": {"agent_id": "child-1", "status": {"state": "shutdown"}}}));
    assert_eq!(resumed["ok"], true, "{resumed}");
    let after = serve.request(json!({"id": 9, "op": "agent_report",
        "report": {"agent_id": "child-1", "status": {"state": "running"}}}));
    assert_eq!(after["error"]["code"], "report_refused", "{after}");

    // A malformed spawn answer never reaches the extension.
    ask(
        &serve,
        "c4",
        json!([{"id": "bad", "method": "agent/spawn", "params": spawn_params("bad")}]),
    );
    let request = serve.until("service_request", |l| l["type"] == "service_request");
    let refused = serve.request(json!({"id": 10, "op": "service_answer",
        "request_id": request["request_id"], "result": {"agent_id": ""}}));
    assert_eq!(refused["error"]["code"], "invalid_result", "{refused}");
    let bad = answers(&mut serve, "c4");
    assert_eq!(bad["bad"]["error"]["code"], -32603, "{bad}");
    serve.close_input().unwrap();
}

#[test]
fn a_client_feeds_the_event_log_the_runtime_answers_from() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dir = services_extension(root.path(), "peer", "0.4", "");
    let mut serve = Serve::over(workspace, root, vec![dir]);
    let reply = serve.request(json!({"id": 1, "op": "start", "extension": "peer",
        "services": ["agent_sessions", "agent_session_events_v1"]}));
    assert_eq!(reply["ok"], true, "{reply}");
    let features = reply["features"].as_array().unwrap();
    assert!(
        features.contains(&json!("agent_session_events_v1")),
        "{reply}"
    );
    // The lifetime feature comes with agent_sessions, served by the runtime (section 2.13).
    assert!(
        features.contains(&json!("agent_session_lifetime_v1")),
        "{reply}"
    );
    ask(
        &serve,
        "c1",
        json!([{"id": "spawn", "method": "agent/spawn", "params": spawn_params("watch")}]),
    );
    let request = serve.until("service_request", |l| l["type"] == "service_request");
    serve.request(json!({"id": 2, "op": "service_answer",
        "request_id": request["request_id"], "result": {"agent_id": "w-1"}}));
    answers(&mut serve, "c1");
    // A long poll held by the runtime, then the record that answers it.
    ask(
        &serve,
        "c2",
        json!([{"id": "poll", "method": "agent/events",
                "params": {"target": "w-1", "after_sequence": 0, "timeout_ms": 9000}}]),
    );
    std::thread::sleep(std::time::Duration::from_millis(200));
    let appended = serve.request(json!({"id": 3, "op": "agent_event", "agent_id": "w-1",
        "event": {"kind": "output_delta", "channel": "text", "text": "hello"}}));
    assert_eq!(appended["sequence"], 1, "{appended}");
    let polled = answers(&mut serve, "c2");
    let batch = &polled["poll"]["result"];
    assert_eq!(batch["events"][0]["sequence"], 1, "{polled}");
    assert_eq!(batch["events"][0]["event"]["text"], "hello");
    assert_eq!(batch["next_sequence"], 1);
    let big = "x".repeat(300 * 1024);
    let oversized = serve.request(json!({"id": 4, "op": "agent_event", "agent_id": "w-1",
        "event": {"kind": "output_delta", "channel": "text", "text": big}}));
    assert_eq!(oversized["sequence"], 2, "{oversized}");
    ask(
        &serve,
        "c3",
        json!([{"id": "read", "method": "agent/events",
                "params": {"target": "/watch", "after_sequence": 1}}]),
    );
    let read = answers(&mut serve, "c3");
    let event = &read["read"]["result"]["events"][0]["event"];
    assert_eq!(event["kind"], "observation_error", "{read}");
    let closed = serve.request(json!({"id": 5, "op": "agent_event", "agent_id": "w-1",
        "event": {"kind": "turn_started", "extra": 1}}));
    assert_eq!(closed["error"]["code"], "invalid_value", "{closed}");
    serve.close_input().unwrap();
}

#[test]
fn a_settled_session_retires_the_owner_and_stops_its_children_through_the_client() {
    let mut serve = serve_with_peer();
    let session_id = serve.seen[0]["session_id"].clone();
    assert!(session_id.is_string(), "{}", serve.seen[0]);
    let reply = serve.request(json!({"id": 1, "op": "start", "extension": "peer",
                                     "services": ["agent_sessions"]}));
    assert_eq!(reply["ok"], true, "{reply}");
    ask(
        &serve,
        "c1",
        json!([{"id": "spawn", "method": "agent/spawn", "params": spawn_params("survey")}]),
    );
    let request = serve.until("service_request", |l| l["type"] == "service_request");
    serve.request(json!({"id": 2, "op": "service_answer",
        "request_id": request["request_id"], "result": {"agent_id": "child-1"}}));
    answers(&mut serve, "c1");
    serve.request(json!({"id": 3, "op": "agent_report",
        "report": {"agent_id": "child-1", "status": {"state": "running"}}}));

    let reply = serve.request(
        json!({"id": 4, "op": "lifecycle", "event": "session/settled",
        "session_id": session_id, "outcome": "completed", "duration_ms": 5}),
    );
    assert_eq!(reply["ok"], true, "{reply}");
    // The client is asked to end the running child, detached from any parent.
    let stop = serve.until("the retirement's interrupt", |l| {
        l["type"] == "service_request" && l["method"] == "agent/interrupt"
    });
    assert_eq!(stop["params"]["target"], "child-1", "{stop}");
    assert_eq!(stop["independent"], true, "{stop}");
    // Changes are refused by the runtime without a line; listing still works.
    ask(
        &serve,
        "c2",
        json!([{"id": "again", "method": "agent/spawn", "params": spawn_params("again")},
               {"id": "list", "method": "agent/list", "params": {}}]),
    );
    let refused = answers(&mut serve, "c2");
    assert_eq!(refused["again"]["error"]["code"], -32002, "{refused}");
    assert_eq!(
        refused["list"]["result"]["agents"][0]["agent_id"], "child-1",
        "{refused}"
    );
    let spawns = serve
        .seen
        .iter()
        .filter(|l| l["type"] == "service_request" && l["method"] == "agent/spawn")
        .count();
    assert_eq!(spawns, 1, "the refused spawn never reached the client");
    assert_lines_follow_the_schema(&serve.seen);
    serve.close_input().unwrap();
}

#[test]
fn agent_sessions_alone_offers_its_companions_on_api_0_4() {
    let mut serve = serve_with_peer_on("0.4");
    let reply = serve.request(json!({"id": 1, "op": "start", "extension": "peer",
                                     "services": ["agent_sessions"]}));
    assert_eq!(reply["ok"], true, "{reply}");
    for feature in support::agents::AGENT_FEATURES {
        assert!(
            reply["features"]
                .as_array()
                .unwrap()
                .contains(&json!(feature)),
            "{feature}: {reply}"
        );
    }
    ask(
        &serve,
        "c1",
        json!([{"id": "models", "method": "agent/models", "params": {}},
               {"id": "spawn", "method": "agent/spawn", "params": spawn_params("survey")}]),
    );
    answer_next(&mut serve, 2, "agent/spawn", json!({"agent_id": "child-1"}));
    let first = answers(&mut serve, "c1");
    assert_eq!(
        first["models"]["result"]["models"][0]["provider"], "inherit",
        "{first}"
    );
    serve.request(json!({"id": 3, "op": "agent_report",
        "report": {"agent_id": "child-1", "status": {"state": "running"}}}));
    // agent/stop reaches the client as an interrupt of the tree, acknowledged at once.
    ask(
        &serve,
        "c2",
        json!([{"id": "stop", "method": "agent/stop", "params": {"target": "child-1"}}]),
    );
    let interrupt = serve.until("the stop's interrupt", |l| {
        l["type"] == "service_request" && l["method"] == "agent/interrupt"
    });
    assert_eq!(interrupt["params"]["target"], "child-1", "{interrupt}");
    let stopped = answers(&mut serve, "c2");
    assert_eq!(
        stopped["stop"]["result"],
        json!({"agent_id": "child-1", "shutdown_requested": true})
    );
    let forwarded: Vec<&Value> = serve
        .seen
        .iter()
        .filter(|l| l["type"] == "service_request")
        .map(|l| &l["method"])
        .collect();
    assert_eq!(
        forwarded,
        [&json!("agent/spawn"), &json!("agent/interrupt")]
    );
    assert_lines_follow_the_schema(&serve.seen);
    serve.close_input().unwrap();
}

#[test]
fn a_client_may_answer_with_the_references_shapes() {
    let mut serve = serve_with_peer_on("0.4");
    let reply = serve.request(json!({"id": 1, "op": "start", "extension": "peer",
        "services": ["agent_sessions", "agent_session_lifetime_v1"]}));
    assert_eq!(reply["ok"], true, "{reply}");
    ask(
        &serve,
        "c1",
        json!([{"id": "spawn", "method": "agent/spawn", "params": spawn_params("survey")}]),
    );
    let record = json!({
        "agent_id": "child-1", "agent_path": "/survey", "task_name": "survey",
        "profile": null, "fingerprint": null, "idempotency_key": null,
        "status": {"state": "pending"}, "policy": spawn_params("survey")["policy"],
        "created_at_ms": 1, "started_at_ms": null, "completed_at_ms": null,
        "deadline_at_ms": 60001, "session": null,
        "resolved_model": {"provider": "p", "model": "m", "reasoning": {"type": "off"}}});
    let reply = answer_next(&mut serve, 2, "agent/spawn", record);
    assert_eq!(reply["ok"], true, "{reply}");
    let spawned = answers(&mut serve, "c1");
    let result = &spawned["spawn"]["result"];
    assert_eq!(result["agent_id"], "child-1", "{spawned}");
    assert_ne!(result["created_at_ms"], 1, "the runtime's own timestamp");
    assert_eq!(result["policy"]["resolved_model"]["model"], "m", "{result}");
    serve.request(json!({"id": 3, "op": "agent_report",
        "report": {"agent_id": "child-1", "status": {"state": "running"}}}));

    ask(
        &serve,
        "c2",
        json!([{"id": "msg", "method": "agent/message",
                "params": {"target": "child-1", "message": "hi"}},
               {"id": "int", "method": "agent/interrupt", "params": {"target": "child-1"}},
               {"id": "stop", "method": "agent/stop", "params": {"target": "/survey"}}]),
    );
    answer_next(
        &mut serve,
        4,
        "agent/message",
        json!({"delivered_to": "/survey", "delivery": "steering"}),
    );
    answer_next(
        &mut serve,
        5,
        "agent/interrupt",
        json!({"agent_id": "child-1",
        "agent_path": "/survey", "previous_status": "pending", "interrupt_requested": true}),
    );
    answer_next(
        &mut serve,
        6,
        "agent/stop",
        json!({"agent_id": "child-1", "shutdown_requested": true}),
    );
    let answered = answers(&mut serve, "c2");
    assert_eq!(
        answered["msg"]["result"],
        json!({"delivered_to": "child-1", "delivery": "steering"})
    );
    assert_eq!(
        answered["int"]["result"],
        json!({"agent_id": "child-1", "agent_path": "/survey",
               "previous_status": "running", "interrupt_requested": true})
    );
    assert_eq!(
        answered["stop"]["result"],
        json!({"agent_id": "child-1", "shutdown_requested": true})
    );

    // A copy that names another child is refused: the extension gets -32603 and the
    // client a diagnostic with the reason.
    ask(
        &serve,
        "c3",
        json!([{"id": "other", "method": "agent/spawn", "params": spawn_params("other")},
               {"id": "more", "method": "agent/follow_up",
                "params": {"target": "child-2", "message": "again"}}]),
    );
    answer_next(&mut serve, 8, "agent/spawn", json!({"agent_id": "child-2"}));
    answer_next(
        &mut serve,
        7,
        "agent/follow_up",
        json!({"agent_id": "child-9", "agent_path": "/survey", "delivery": "follow_up"}),
    );
    let refused = answers(&mut serve, "c3");
    assert_eq!(refused["more"]["error"]["code"], -32603, "{refused}");
    // The client is told why, in an event (events travel apart from results).
    let said = serve.until("the refusal's diagnostic", |l| {
        l["type"] == "event" && l.to_string().contains("child-9")
    });
    assert!(said.to_string().contains("names child"), "{said}");
    assert_lines_follow_the_schema(&serve.seen);
    serve.close_input().unwrap();
}
