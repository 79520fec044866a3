//! `serve` binds the Wave-1 services to its client (docs/serve-protocol.md): a `start`
//! names the services the client answers, each checked request becomes a
//! `service_request` line answered by `service_answer`, and `notify`, `message_delta`
//! and `message_settled` send the section 1.11 notifications. Against the raw Wave-1
//! peer (`tests/fixtures/services_peer.py`).

mod support;

use serde_json::{json, Value};
use support::serve_harness::*;
use support::*;

const ALL: [&str; 5] = [
    "composer",
    "shortcuts",
    "session_entries",
    "message_injection",
    "active_tools",
];

/// `serve` over the Wave-1 peer installed as `peer`, with extra entrypoint env.
fn serve_with_peer(env: &str) -> Serve {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dir = services_extension(root.path(), "peer", "0.2", env);
    Serve::over(workspace, root, vec![dir])
}

/// Calls the peer's `tool` and returns the JSON its text result holds.
fn tool(serve: &mut Serve, call_id: &str, tool: &str, arguments: Value) -> Value {
    serve.send(json!({"op": "call", "call_id": call_id, "extension": "peer", "tool": tool, "arguments": arguments}));
    let result = serve.result(json!(call_id));
    assert_eq!(result["ok"], true, "{result}");
    serde_json::from_str(text_of(&result)).unwrap()
}

/// Sends `ask` with one request and no waiting for its answer in the call.
fn ask_async(serve: &mut Serve, call_id: &str, id: &str, method: &str, params: Value) {
    let requests = json!([{"id": id, "method": method, "params": params, "wait": false}]);
    tool(serve, call_id, "ask", json!({ "requests": requests }));
}

/// The next `service_request` line.
fn service_request(serve: &mut Serve) -> Value {
    serve.until("service_request", |l| l["type"] == "service_request")
}

fn answers(serve: &mut Serve, call_id: &str, ids: &[&str]) -> Value {
    tool(serve, call_id, "answers", json!({ "ids": ids }))
}

#[test]
fn only_the_named_services_are_offered_and_requests_reach_the_client() {
    let mut serve = serve_with_peer("");
    let reply = serve.request(json!({"id": 1, "op": "start", "extension": "peer", "services": ["composer", "session_entries"]}));
    assert_eq!(reply["ok"], true, "{reply}");
    let seen = tool(&mut serve, "seen", "seen", json!({}));
    let offered = offered(&seen);
    assert!(
        offered.iter().any(|f| f == "composer") && offered.iter().any(|f| f == "session_entries"),
        "{offered:?}"
    );
    for other in ["shortcuts", "message_injection", "active_tools"] {
        assert!(
            !offered.iter().any(|f| f == other),
            "{other} offered: {offered:?}"
        );
    }

    // Parent 0 was never issued: refused before any line.
    let refused = tool(
        &mut serve,
        "c1",
        "ask",
        json!({"requests": [
        {"id": "set", "method": "composer/set", "params": {"text": "hi"}, "parent": 0}]}),
    );
    assert_eq!(refused["set"]["error"]["code"], -32002, "{refused}");

    // A live parent: the request reaches the client with its validated params and owner.
    serve.send(
        json!({"op": "call", "call_id": "c2", "extension": "peer", "tool": "ask",
        "arguments": {"requests": [{"id": "append", "method": "session/append_entry",
            "params": {"entry_type": "note", "data": {"n": 1}}}]}}),
    );
    let request = service_request(&mut serve);
    assert_eq!(request["method"], "session/append_entry");
    assert_eq!(request["extension"], "peer");
    assert_eq!(
        request["params"],
        json!({"entry_type": "note", "data": {"n": 1}})
    );
    assert_eq!(
        request["owner"]["process_generation"],
        request["generation"]
    );
    let request_id = request["request_id"].clone();
    let reply = serve.request(json!({"id": 2, "op": "service_answer", "request_id": request_id, "result": {"entry_id": "e-1"}}));
    assert_eq!(reply["ok"], true, "{reply}");
    let result = serve.result(json!("c2"));
    let report: Value = serde_json::from_str(text_of(&result)).unwrap();
    assert_eq!(report["append"]["result"], json!({"entry_id": "e-1"}));

    // An unbound feature is refused by the runtime; no line is written for it.
    let report = tool(
        &mut serve,
        "c3",
        "ask",
        json!({"requests": [
        {"id": "inject", "method": "session/send_message", "params": {"role": "system", "text": "x"}}]}),
    );
    assert_eq!(report["inject"]["error"]["code"], -32601);
    assert!(report["inject"]["error"]["message"]
        .as_str()
        .unwrap()
        .starts_with("unsupported_feature"));
    serve.close_input().unwrap();
}

#[test]
fn answers_are_checked_and_refusals_carry_their_contract_name() {
    let mut serve = serve_with_peer("");
    let reply =
        serve.request(json!({"id": 1, "op": "start", "extension": "peer", "services": ALL}));
    assert_eq!(reply["ok"], true, "{reply}");
    serve.send(json!({"op": "call", "call_id": "c", "extension": "peer", "tool": "ask",
        "arguments": {"requests": [
            {"id": "get", "method": "composer/get", "params": {}},
            {"id": "set", "method": "composer/set", "params": {"text": "x"}},
            {"id": "big", "method": "composer/set", "params": {"text": "x".repeat(256 * 1024 + 1)}}]}}));
    // composer/get answered with a text holding a terminal control character.
    let get = service_request(&mut serve);
    assert_eq!(get["method"], "composer/get");
    let reply = serve.request(json!({"id": 2, "op": "service_answer", "request_id": get["request_id"], "result": {"text": "\u{7}"}}));
    assert_eq!(reply["ok"], false);
    assert_eq!(reply["error"]["code"], "invalid_result", "{reply}");
    // The same request cannot be answered twice.
    let reply = serve.request(json!({"id": 3, "op": "service_answer", "request_id": get["request_id"], "result": {"text": ""}}));
    assert_eq!(reply["error"]["code"], "unknown_request_id", "{reply}");
    let set = service_request(&mut serve);
    let reply = serve.request(
        json!({"id": 4, "op": "service_answer", "request_id": set["request_id"],
        "refusal": "invalid_request", "message": "a remote editor owns the composer"}),
    );
    assert_eq!(reply["ok"], true, "{reply}");
    let result = serve.result(json!("c"));
    let report: Value = serde_json::from_str(text_of(&result)).unwrap();
    assert_eq!(report["get"]["error"]["code"], -32603);
    assert_eq!(
        report["set"]["error"],
        json!({"code": -32602, "message": "invalid_request: a remote editor owns the composer"})
    );
    // The oversized text never became a line.
    assert_eq!(report["big"]["error"]["code"], -32602);
    assert!(report["big"]["error"]["message"]
        .as_str()
        .unwrap()
        .starts_with("bounds_exceeded"));
    let requests = serve
        .seen
        .iter()
        .filter(|l| l["type"] == "service_request")
        .count();
    assert_eq!(requests, 2);
    let reply = serve
        .request(json!({"id": 5, "op": "service_answer", "request_id": 1, "refusal": "denied"}));
    assert_eq!(reply["error"]["code"], "invalid_value", "{reply}");
    serve.close_input().unwrap();
}

#[test]
fn a_settled_parent_cancels_the_client_request() {
    let mut serve = serve_with_peer("");
    serve.request(json!({"id": 1, "op": "start", "extension": "peer", "services": ["composer"]}));
    ask_async(
        &mut serve,
        "c1",
        "blocked",
        "composer/set",
        json!({"text": "x"}),
    );
    let request = service_request(&mut serve);
    let request_id = request["request_id"].clone();
    let cancelled = serve.until("request_cancelled", |l| {
        l["type"] == "request_cancelled" && l["request_id"] == request_id
    });
    assert_eq!(cancelled["reason"], "no_longer_wanted");
    let report = answers(&mut serve, "a", &["blocked"]);
    assert_eq!(report["blocked"]["error"]["code"], -32800);
    let reply = serve
        .request(json!({"id": 2, "op": "service_answer", "request_id": request_id, "result": {}}));
    assert_eq!(reply["error"]["code"], "unknown_request_id");
    serve.close_input().unwrap();
}

#[test]
fn a_call_past_its_deadline_withdraws_its_service_requests_before_its_result() {
    let mut serve = serve_with_peer("");
    serve.request(json!({"id": 1, "op": "start", "extension": "peer", "services": ["composer"]}));
    // The call waits inside `ask` for an answer the client never gives in time.
    let requests = json!([{"id": "waits", "method": "composer/set", "params": {"text": "x"}}]);
    serve.send(
        json!({"op": "call", "call_id": "late", "extension": "peer", "tool": "ask",
                      "arguments": {"requests": requests}, "timeout_ms": 300}),
    );
    let request = service_request(&mut serve);
    let request_id = request["request_id"].clone();
    // The withdrawal is written before the call's result: every line in order.
    let mut withdrawn = false;
    loop {
        let line = serve.next();
        if line["type"] == "request_cancelled" && line["request_id"] == request_id {
            withdrawn = true;
        }
        if line["type"] == "result" && line["call_id"] == "late" {
            assert!(withdrawn, "the result came before the withdrawal: {line}");
            break;
        }
    }
    // So an answer sent after the result is always refused.
    let reply = serve
        .request(json!({"id": 2, "op": "service_answer", "request_id": request_id, "result": {}}));
    assert_eq!(reply["error"]["code"], "unknown_request_id", "{reply}");
    serve.close_input().unwrap();
}

#[test]
fn shortcuts_register_through_the_client_and_trigger_with_notify() {
    let env = format!(
        "OCTET_PEER_SHORTCUTS = {:?}",
        json!([{"id": "open", "key": "ctrl+o", "description": "Open"}]).to_string()
    );
    let mut serve = serve_with_peer(&env);
    serve.send(json!({"id": 1, "op": "start", "extension": "peer", "services": ["shortcuts"]}));
    // The registration arrives inside initialize, before the start is answered.
    let register = service_request(&mut serve);
    assert_eq!(register["method"], "shortcut/register");
    assert_eq!(
        register["params"],
        json!({"id": "open", "key": "ctrl+o", "description": "Open"})
    );
    serve.request(json!({"id": 2, "op": "service_answer", "request_id": register["request_id"], "result": {}}));
    let started = serve.reply(json!(1));
    assert_eq!(started["ok"], true, "{started}");

    let reply = serve.request(json!({"id": 3, "op": "notify", "extension": "peer", "method": "shortcut/trigger", "params": {"id": "open"}}));
    assert_eq!(reply["ok"], true, "{reply}");
    let reply = serve.request(json!({"id": 4, "op": "notify", "extension": "peer", "method": "shortcut/trigger", "params": {"id": "other"}}));
    assert_eq!(reply["error"]["code"], "notification_refused", "{reply}");
    assert_eq!(reply["error"]["refusal"], "invalid_request");
    let reply = serve.request(json!({"id": 5, "op": "notify", "extension": "peer", "method": "shortcut/trigger", "generation": 9, "params": {"id": "open"}}));
    assert_eq!(reply["error"]["code"], "notification_refused", "{reply}");
    let reply = serve.request(json!({"id": 6, "op": "notify", "extension": "peer", "method": "message/updated", "params": {}}));
    assert_eq!(reply["error"]["code"], "invalid_value", "{reply}");
    // The params are closed and bounded (section 1.11): neither is ever sent.
    let reply = serve.request(json!({"id": 7, "op": "notify", "extension": "peer", "method": "shortcut/trigger", "params": {"id": "open", "extra": 1}}));
    assert_eq!(reply["error"]["code"], "notification_refused", "{reply}");
    assert_eq!(reply["error"]["refusal"], "invalid_request", "{reply}");
    let big = "x".repeat(1_100_000);
    let reply = serve.request(json!({"id": 8, "op": "notify", "extension": "peer", "method": "shortcut/trigger", "params": {"id": "open", "pad": big}}));
    assert_eq!(reply["error"]["code"], "notification_refused", "{reply}");
    assert_eq!(reply["error"]["refusal"], "bounds_exceeded", "{reply}");
    let seen = tool(&mut serve, "seen", "seen", json!({}));
    assert_eq!(seen["registrations"]["open"]["result"], json!({}));
    assert_eq!(
        seen["notifications"],
        json!([{"method": "shortcut/trigger", "params": {"id": "open"}}])
    );
    serve.close_input().unwrap();
}

#[test]
fn message_deltas_are_batched_and_bounded() {
    let mut serve = serve_with_peer("");
    serve.request(
        json!({"id": 1, "op": "start", "extension": "peer", "services": ["message_injection"]}),
    );
    let reply = serve.request(json!({"id": 2, "op": "message_delta", "extension": "peer", "message_id": "m", "delta": "Hel"}));
    assert_eq!(reply["ok"], true, "{reply}");
    let reply = serve.request(json!({"id": 3, "op": "message_delta", "extension": "peer", "message_id": "m", "updates": ["lo", " world"]}));
    assert_eq!(reply["ok"], true, "{reply}");
    let too_many: Vec<&str> = vec!["x"; 1025];
    let reply = serve.request(json!({"id": 4, "op": "message_delta", "extension": "peer", "message_id": "m", "deltas": too_many}));
    assert_eq!(reply["error"]["refusal"], "bounds_exceeded", "{reply}");
    let reply = serve
        .request(json!({"id": 5, "op": "message_settled", "extension": "peer", "message_id": "m"}));
    assert_eq!(reply["ok"], true, "{reply}");
    let seen = tool(&mut serve, "seen", "seen", json!({}));
    let batches = seen["notifications"].as_array().unwrap();
    let text: String = batches
        .iter()
        .map(|b| b["params"]["delta"].as_str().unwrap())
        .collect();
    let deltas: u64 = batches
        .iter()
        .map(|b| b["params"]["deltas"].as_u64().unwrap())
        .sum();
    assert_eq!((text.as_str(), deltas), ("Hello world", 3), "{batches:?}");
    let reply = serve.request(json!({"id": 6, "op": "message_delta", "extension": "nobody", "message_id": "m", "delta": "x"}));
    assert_eq!(reply["error"]["code"], "not_started", "{reply}");
    serve.close_input().unwrap();
}

/// A `message_delta` line is sent whole or refused whole: against an extension that
/// stops reading its stdin, the lines answered `ok` are exactly the deltas it gets
/// once it reads again, and a refused line sends none of its deltas.
#[test]
fn a_refused_message_delta_line_sends_nothing() {
    const LINES: usize = 60;
    const DELTAS: usize = 30;
    const DELTA_BYTES: usize = 60_000;
    let flag = tempfile::tempdir().unwrap();
    let resume = flag.path().join("resume");
    let mut serve = serve_with_peer(&format!("OCTET_PEER_PAUSE_FILE = {resume:?}"));
    let reply = serve.request(
        json!({"id": "s", "op": "start", "extension": "peer", "services": ["message_injection"]}),
    );
    assert_eq!(reply["ok"], true, "{reply}");
    let deltas = vec!["x".repeat(DELTA_BYTES); DELTAS];
    for line in 0..LINES {
        serve.send(json!({"id": line, "op": "message_delta", "extension": "peer", "message_id": "m", "deltas": deltas}));
    }
    let mut accepted = 0;
    for line in 0..LINES {
        let reply = serve.reply(json!(line));
        match reply["ok"] == true {
            true => accepted += 1,
            false => assert_eq!(reply["error"]["refusal"], "bounds_exceeded", "{reply}"),
        }
    }
    assert!(
        accepted > 0 && accepted < LINES,
        "{accepted} of {LINES} lines accepted"
    );
    std::fs::write(&resume, "").unwrap();
    let seen = tool(&mut serve, "seen", "seen", json!({}));
    assert_eq!(
        (
            seen["message_deltas"]["m"].as_u64(),
            seen["message_bytes"]["m"].as_u64()
        ),
        (
            Some((accepted * DELTAS) as u64),
            Some((accepted * DELTAS * DELTA_BYTES) as u64)
        ),
        "{accepted} lines accepted"
    );
    serve.close_input().unwrap();
}

#[test]
fn start_refuses_services_serve_cannot_bind() {
    let mut serve = serve_with_peer("");
    let reply = serve
        .request(json!({"id": 1, "op": "start", "extension": "peer", "services": ["telepathy"]}));
    assert_eq!(reply["error"]["code"], "invalid_value", "{reply}");
    assert_eq!(reply["error"]["field"], "services");
    serve.close_input().unwrap();
}

#[test]
fn api_0_3_services_are_answered_by_the_client_too() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/peer03.py");
    let manifest = format!(
        "name = \"prov\"\nversion = \"0.1.0\"\napi_version = \"0.3\"\n\n\
         [entrypoint]\ncommand = \"python3\"\nargs = [{:?}, \"good\"]\n\
         env = {{ OCTET_PEER_TOOLS = \"ask\", OCTET_PEER_SELECT = \"session_lifecycle,provider_catalog\" }}\n\n\
         [contributes]\ntools = [\"ask\"]\n",
        script.to_string_lossy(),
    );
    let dir = write_manifest(root.path(), "prov", &manifest);
    let mut serve = Serve::over(workspace, root, vec![dir]);
    let reply = serve.request(json!({"id": 1, "op": "start", "extension": "prov", "services": ["session_lifecycle", "provider_catalog"]}));
    assert_eq!(reply["ok"], true, "{reply}");
    serve.send(json!({"op": "call", "call_id": "c", "extension": "prov", "tool": "ask", "arguments": {"requests": [
        {"id": "complete", "method": "providers/complete", "params": {}, "notify": true},
        {"id": "switch", "method": "session/switch", "params": {"session_id": "s-7"}}]}}));
    // Each request is served on a thread of its own: the lines may come in any order.
    let mut lines = [service_request(&mut serve), service_request(&mut serve)];
    lines.sort_by_key(|l| l["method"].as_str().unwrap().to_string());
    let [complete, switch] = lines;
    assert_eq!(complete["method"], "providers/complete");
    assert_eq!(switch["method"], "session/switch");
    assert_eq!(switch["params"], json!({"session_id": "s-7"}));
    // The notification waits for no answer.
    let reply = serve.request(json!({"id": 2, "op": "service_answer", "request_id": complete["request_id"], "result": {}}));
    assert_eq!(reply["error"]["code"], "unknown_request_id", "{reply}");
    let reply = serve.request(json!({"id": 3, "op": "service_answer", "request_id": switch["request_id"], "refusal": "invalid_request", "message": "no such session"}));
    assert_eq!(reply["ok"], true, "{reply}");
    let result = serve.result(json!("c"));
    let report: Value = serde_json::from_str(text_of(&result)).unwrap();
    assert_eq!(report["switch"]["error"]["code"], -32602, "{report}");
    assert_eq!(report["switch"]["error"]["message"], "invalid params");
    assert_eq!(
        report["switch"]["error"]["data"]["reason"],
        "invalid_request: no such session"
    );
    serve.close_input().unwrap();
}

/// The result a client gives each Wave-1 method.
fn result_for(method: &str) -> Value {
    match method {
        "composer/get" => json!({"text": "draft"}),
        "session/append_entry" => json!({"entry_id": "e-1"}),
        _ => json!({}),
    }
}

#[test]
fn every_session_service_method_round_trips_through_the_client() {
    let mut serve = serve_with_peer("");
    let reply =
        serve.request(json!({"id": 1, "op": "start", "extension": "peer", "services": ALL}));
    assert_eq!(reply["ok"], true, "{reply}");
    let requests = json!([
        {"id": "get", "method": "composer/get", "params": {}},
        {"id": "set", "method": "composer/set", "params": {"text": "a"}},
        {"id": "insert", "method": "composer/insert", "params": {"text": "b"}},
        {"id": "append", "method": "session/append_entry", "params": {"entry_type": "t", "data": [1]}},
        {"id": "name", "method": "session/set_name", "params": {"name": "n"}},
        {"id": "label", "method": "session/set_label", "params": {"entry_id": "e-1", "label": ""}},
        {"id": "send", "method": "session/send_message", "params": {"role": "assistant", "text": "x"}},
        {"id": "user", "method": "session/send_user_message", "params": {"text": "y"}},
        {"id": "tools", "method": "tools/set_active", "params": {"names": ["ask"]}},
    ]);
    let count = requests.as_array().unwrap().len();
    serve.send(json!({"op": "call", "call_id": "c", "extension": "peer", "tool": "ask", "arguments": {"requests": requests}}));
    let mut methods = Vec::new();
    for i in 0..count {
        let request = service_request(&mut serve);
        let method = request["method"].as_str().unwrap().to_string();
        let reply = serve.request(json!({"id": format!("a{i}"), "op": "service_answer",
            "request_id": request["request_id"], "result": result_for(&method)}));
        assert_eq!(reply["ok"], true, "{method}: {reply}");
        methods.push(method);
    }
    let result = serve.result(json!("c"));
    let report: Value = serde_json::from_str(text_of(&result)).unwrap();
    for (id, method) in [
        "get", "set", "insert", "append", "name", "label", "send", "user", "tools",
    ]
    .iter()
    .zip(&methods)
    {
        assert_eq!(report[id]["result"], result_for(method), "{id}: {report}");
    }
    serve.close_input().unwrap();
}

#[test]
fn owner_precedence_holds_through_serve() {
    let mut serve = serve_with_peer("");
    serve.request(json!({"id": 1, "op": "start", "extension": "peer", "services": ["composer"]}));
    // A first call settles, so "previous" names a settled parent.
    tool(&mut serve, "c0", "ask", json!({"requests": []}));
    let get = |id: &str, parent: Value, owner: Value| json!({"id": id, "method": "composer/get", "params": {}, "parent": parent, "owner": owner});
    let requests = json!([
        get("live-foreign", json!("live"), json!("foreign")),
        get("settled-issued", json!("previous"), json!("issued")),
        get("settled-foreign", json!("previous"), json!("foreign")),
        get("settled-absent", json!("previous"), Value::Null),
    ]);
    serve.send(
        json!({"op": "call", "call_id": "c1", "extension": "peer", "tool": "ask",
        "arguments": {"requests": requests}}),
    );
    // Two requests are admitted; each line carries the issued owner, never the foreign one.
    for i in 0..2 {
        let request = service_request(&mut serve);
        assert_ne!(
            request["owner"]["extension_instance_id"], "someone-else",
            "{request}"
        );
        assert_eq!(
            request["owner"]["process_generation"],
            request["generation"]
        );
        let reply = serve.request(json!({"id": format!("a{i}"), "op": "service_answer",
            "request_id": request["request_id"], "result": {"text": format!("t{i}")}}));
        assert_eq!(reply["ok"], true, "{reply}");
    }
    let result = serve.result(json!("c1"));
    let report: Value = serde_json::from_str(text_of(&result)).unwrap();
    assert_eq!(report["live-foreign"]["result"]["text"], "t0", "{report}");
    assert_eq!(report["settled-issued"]["result"]["text"], "t1", "{report}");
    for id in ["settled-foreign", "settled-absent"] {
        assert_eq!(report[id]["error"]["code"], -32002, "{id}: {report}");
        let message = report[id]["error"]["message"].as_str().unwrap();
        assert!(message.starts_with("not_foreground_owner"), "{message}");
    }
    let lines = serve
        .seen
        .iter()
        .filter(|l| l["type"] == "service_request")
        .count();
    assert_eq!(lines, 2);
    serve.close_input().unwrap();
}
