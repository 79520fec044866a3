//! Calls through `serve`: results under the caller's ids, progress, confirmations,
//! questions and secret input, and cancellation.

use std::collections::HashMap;

use serde_json::{json, Value};

use super::support::serve_harness::*;
use super::support::*;

#[test]
fn start_call_and_result_then_shutdown_leaves_no_child() {
    let mut serve = Serve::fixture();
    let start = serve.request(json!({"id": 1, "op": "start", "extension": "fixture"}));
    assert_eq!(start["ok"], true, "{start}");
    assert_eq!(start["extension"], "fixture");
    assert_eq!(start["api_version"], "0.4");
    let tools: Vec<&str> = start["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        tools.contains(&"echo") && tools.contains(&"sleep"),
        "{start}"
    );
    let pid = start["pid"].as_u64().unwrap() as u32;
    assert!(process_alive(pid));

    let admitted = serve.request(json!({
        "id": "call-1", "op": "call", "extension": "fixture", "tool": "echo",
        "arguments": {"greeting": "hi"}, "call_id": "c1",
    }));
    assert_eq!(
        admitted,
        json!({"type": "reply", "id": "call-1", "ok": true, "call_id": "c1"})
    );
    let result = serve.result(json!("c1"));
    assert_eq!(result["ok"], true, "{result}");
    assert_eq!(result["op"], "call");
    assert_eq!(result["extension"], "fixture");
    assert_eq!(text_of(&result), r#"{"greeting":"hi"}"#);
    assert_eq!(result["output"]["is_error"], false);

    let command = serve.request(json!({
        "id": 2, "op": "command", "extension": "fixture", "name": "fixture",
        "arguments": ["a", "b"], "call_id": 2,
    }));
    assert_eq!(command["ok"], true, "{command}");
    let result = serve.result(json!(2));
    assert_eq!(result["output"]["text"], "fixture: a b", "{result}");
    assert_eq!(result["output"]["notifications"][0]["title"], "fixture");

    serve.send(json!({"id": "bye", "op": "shutdown"}));
    let report = serve.reply(json!("bye"));
    assert_eq!(report["ok"], true);
    let extensions = report["report"]["extensions"].as_array().unwrap();
    assert_eq!(extensions.len(), 1, "{report}");
    assert_eq!(extensions[0]["extension"], "fixture");
    assert_eq!(extensions[0]["acknowledged"], true);
    assert_eq!(serve.join().unwrap(), 0);
    assert_eq!(
        serve.seen.last(),
        Some(&report),
        "the report is the last line"
    );
    assert!(wait_gone(pid, LIVENESS), "the extension process is gone");
}

#[test]
fn concurrent_calls_are_answered_under_their_caller_ids() {
    let mut serve = Serve::fixture();
    serve.start_extension("fixture");
    // A call that cannot finish until the client answers it...
    serve.send(
        json!({"op": "call", "extension": "fixture", "tool": "confirm",
                      "arguments": {"prompt": "Hold?"}, "call_id": "held"}),
    );
    let question = serve.until("the confirmation", |l| l["type"] == "confirmation_request");
    // ...does not stop other calls, which settle under their own ids.
    let ids = [json!(7), json!("seven"), json!(-3), json!("x-9")];
    for (n, call_id) in ids.iter().enumerate() {
        serve.send(json!({"op": "call", "extension": "fixture", "tool": "echo",
                          "arguments": {"n": n}, "call_id": call_id}));
    }
    let mut results = HashMap::new();
    while results.len() < ids.len() {
        let line = serve.until("a result", |l| l["type"] == "result");
        assert_ne!(
            line["call_id"], "held",
            "the held call settled early: {line}"
        );
        results.insert(line["call_id"].to_string(), line);
    }
    for (n, call_id) in ids.iter().enumerate() {
        let result = &results[&call_id.to_string()];
        assert_eq!(text_of(result), format!("{{\"n\":{n}}}"), "{result}");
    }
    serve.send(json!({"op": "answer_confirmation",
                      "request_id": question["request_id"], "confirmed": true}));
    assert_eq!(text_of(&serve.result(json!("held"))), "confirmed");
    assert_eq!(serve.close_input().unwrap(), 0);
}

#[test]
fn concurrent_calls_to_a_raw_peer_keep_their_ids() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dir = peer_extension(root.path(), "peer", "0.2", &["concurrent"], &["echo"]);
    let mut serve = Serve::over(workspace, root, vec![dir]);
    let pid = serve.start_extension("peer");
    for n in 0..24 {
        let call_id = if n % 2 == 0 {
            json!(n)
        } else {
            json!(format!("s{n}"))
        };
        serve.send(json!({"op": "call", "extension": "peer", "tool": "echo",
                          "arguments": {"n": n}, "call_id": call_id}));
    }
    for n in 0..24 {
        let call_id = if n % 2 == 0 {
            json!(n)
        } else {
            json!(format!("s{n}"))
        };
        let result = serve.result(call_id);
        assert_eq!(text_of(&result), format!("{{\"n\":{n}}}"), "{result}");
    }
    assert_eq!(serve.close_input().unwrap(), 0);
    assert!(wait_gone(pid, LIVENESS));
}

#[test]
fn progress_lines_carry_the_call_id_in_order_before_the_result() {
    let mut serve = Serve::fixture();
    serve.start_extension("fixture");
    serve.send(
        json!({"id": 1, "op": "call", "extension": "fixture", "tool": "progress",
                      "arguments": {"steps": 6}, "call_id": 42}),
    );
    let result = serve.result(json!(42));
    assert_eq!(text_of(&result), "progress sent=6");
    let progress: Vec<&Value> = serve
        .seen
        .iter()
        .filter(|l| l["type"] == "event" && l["event"] == "progress")
        .collect();
    assert_eq!(
        progress.len(),
        6,
        "every event before the result: {progress:#?}"
    );
    for (i, line) in progress.iter().enumerate() {
        assert_eq!(line["call_id"], 42);
        assert_eq!(line["extension"], "fixture");
        assert_eq!(line["progress"]["type"], "status");
        assert_eq!(line["progress"]["message"], format!("step {} of 6", i + 1));
        assert_eq!(line["progress"]["current"], i + 1);
    }
    for pair in progress.windows(2) {
        assert!(pair[0]["sequence"].as_u64() < pair[1]["sequence"].as_u64());
    }
    assert_eq!(serve.close_input().unwrap(), 0);
}

#[test]
fn confirmation_round_trips() {
    let mut serve = Serve::fixture();
    serve.start_extension("fixture");
    for (call_id, confirmed, expected) in [("yes", true, "confirmed"), ("no", false, "denied")] {
        serve.send(
            json!({"op": "call", "extension": "fixture", "tool": "confirm",
                          "arguments": {"prompt": format!("Proceed {call_id}?")},
                          "call_id": call_id}),
        );
        let question = serve.until("the confirmation", |l| l["type"] == "confirmation_request");
        assert_eq!(question["extension"], "fixture");
        assert_eq!(question["prompt"], format!("Proceed {call_id}?"));
        assert_eq!(question["destructive"], false);
        let request_id = question["request_id"].clone();
        // The wrong kind of answer is refused and the question stays open.
        let mismatch = serve.request(json!({"id": "m", "op": "answer_input",
                                            "request_id": request_id, "value": "x"}));
        assert_eq!(mismatch["error"]["code"], "request_kind_mismatch");
        let answered = serve.request(json!({"id": "a", "op": "answer_confirmation",
                                            "request_id": request_id, "confirmed": confirmed}));
        assert_eq!(answered["ok"], true, "{answered}");
        assert_eq!(text_of(&serve.result(json!(call_id))), expected);
        // A second answer finds no question.
        let again = serve.request(json!({"id": "b", "op": "answer_confirmation",
                                         "request_id": request_id, "confirmed": true}));
        assert_eq!(again["error"]["code"], "unknown_request_id");
    }
    assert_eq!(serve.close_input().unwrap(), 0);
}

#[test]
fn a_question_whose_call_ends_is_cancelled() {
    let mut serve = Serve::fixture();
    serve.start_extension("fixture");
    // Nobody answers; the call's own deadline ends it, and with it the question.
    serve.send(
        json!({"op": "call", "extension": "fixture", "tool": "confirm",
                      "arguments": {"prompt": "Too late?"}, "call_id": "late",
                      "timeout_ms": 300}),
    );
    let question = serve.until("the confirmation", |l| l["type"] == "confirmation_request");
    let result = serve.result(json!("late"));
    assert_eq!(result["error"]["code"], "deadline_exceeded", "{result}");
    assert_eq!(result["error"]["after_ms"], 300);
    let cancelled = serve.until("the cancellation", |l| l["type"] == "request_cancelled");
    assert_eq!(cancelled["request_id"], question["request_id"]);
    assert_eq!(cancelled["reason"], "no_longer_wanted");
    let late = serve.request(json!({"id": 1, "op": "answer_confirmation",
                                    "request_id": question["request_id"], "confirmed": true}));
    assert_eq!(late["error"]["code"], "unknown_request_id");
    assert_eq!(serve.close_input().unwrap(), 0);
}

#[test]
fn secret_input_is_delivered_and_never_echoed() {
    const SECRET: &str = "s3cr3t-hunter2";
    let mut serve = Serve::fixture();
    serve.start_extension("fixture");
    serve.send(json!({"op": "call", "extension": "fixture", "tool": "ask",
                      "arguments": {"prompt": "Token?", "secret": true}, "call_id": "ask"}));
    let question = serve.until("the input request", |l| l["type"] == "input_request");
    assert_eq!(question["secret"], true);
    assert_eq!(question["prompt"], "Token?");
    // Misdirected answers carrying the secret are refused without repeating it.
    let wrong = serve.request(json!({"id": "w1", "op": "answer_input",
                                     "request_id": 999_999, "value": SECRET}));
    assert_eq!(wrong["error"]["code"], "unknown_request_id");
    let wrong = serve.request(json!({"id": "w2", "op": "answer_input",
                                     "request_id": SECRET, "value": SECRET}));
    assert_eq!(wrong["error"]["code"], "wrong_type");
    let answered = serve.request(json!({"id": "a", "op": "answer_input",
                                        "request_id": question["request_id"], "value": SECRET}));
    assert_eq!(answered["ok"], true);
    // The fixture echoes what it received: the secret reached the extension.
    let result = serve.result(json!("ask"));
    assert_eq!(text_of(&result), format!("answer={SECRET}"));
    assert_eq!(serve.close_input().unwrap(), 0);
    let leaks: Vec<&Value> = serve
        .seen
        .iter()
        .filter(|l| l.to_string().contains(SECRET))
        .collect();
    assert_eq!(
        leaks,
        vec![&result],
        "only the extension's own result carries it"
    );
}

#[test]
fn cancel_of_a_sleeping_call_yields_a_cancelled_result() {
    let mut serve = Serve::fixture();
    serve.start_extension("fixture");
    let admitted = serve.request(json!({"id": 1, "op": "call", "extension": "fixture",
                                        "tool": "sleep", "arguments": {"ms": 600_000},
                                        "call_id": "long"}));
    assert_eq!(admitted["ok"], true);
    let cancelled = serve.request(json!({"id": 2, "op": "cancel", "call_id": "long"}));
    assert_eq!(
        cancelled,
        json!({"type": "reply", "id": 2, "ok": true, "call_id": "long"})
    );
    let result = serve.result(json!("long"));
    assert_eq!(result["ok"], false, "{result}");
    assert_eq!(result["error"]["code"], "cancelled");
    assert_eq!(result["error"]["reason"], "user");
    assert_eq!(result["error"]["rpc_code"], -32800);
    // The id is free again, and the extension still answers.
    serve.send(json!({"op": "call", "extension": "fixture", "tool": "echo",
                      "arguments": {}, "call_id": "long"}));
    assert_eq!(text_of(&serve.result(json!("long"))), "{}");
    let unknown = serve.request(json!({"id": 3, "op": "cancel", "call_id": "long"}));
    assert_eq!(unknown["error"]["code"], "unknown_call_id");
    assert_eq!(serve.close_input().unwrap(), 0);
}
