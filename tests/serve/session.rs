//! The session around the calls: bad control lines, stdin's end, reload, host events
//! and the other operations, start errors, the ready line, clients without a person,
//! and the schema of every line.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use octet_host::serve::{ServeOptions, MAX_CONTROL_LINE_BYTES};
use serde_json::{json, Value};

use super::support::serve_harness::*;
use super::support::*;

#[test]
fn bad_control_lines_each_get_one_error_reply_and_the_session_continues() {
    let mut serve = Serve::fixture();
    serve.start_extension("fixture");
    // An active call, so a duplicate id can be tried.
    serve.send(
        json!({"id": "busy", "op": "call", "extension": "fixture", "tool": "confirm",
                      "arguments": {"prompt": "Hold?"}, "call_id": "busy"}),
    );
    let question = serve.until("the confirmation", |l| l["type"] == "confirmation_request");

    let overlong = format!(
        "{{\"op\":\"status\",\"pad\":\"{}\"}}\n",
        "x".repeat(MAX_CONTROL_LINE_BYTES)
    );
    let bad: Vec<(Vec<u8>, Value, &str)> = vec![
        (b"this is not json\n".to_vec(), Value::Null, "invalid_json"),
        (b"\xff\xfe{}\n".to_vec(), Value::Null, "invalid_json"),
        (b"[1, 2]\n".to_vec(), Value::Null, "not_an_object"),
        (b"{\"id\": 1.5, \"op\": \"status\"}\n".to_vec(), Value::Null, "invalid_id"),
        (b"{\"id\": 1}\n".to_vec(), json!(1), "missing_field"),
        (b"{\"id\": 2, \"op\": \"fly\"}\n".to_vec(), json!(2), "unknown_op"),
        (b"{\"id\": 3, \"op\": \"call\", \"extension\": \"fixture\", \"tool\": \"echo\"}\n".to_vec(), json!(3), "missing_field"),
        (b"{\"id\": 4, \"op\": \"start\", \"extension\": 5}\n".to_vec(), json!(4), "wrong_type"),
        (b"{\"id\": 5, \"op\": \"call\", \"extension\": \"fixture\", \"tool\": \"echo\", \"call_id\": \"busy\"}\n".to_vec(), json!(5), "duplicate_call_id"),
        (b"{\"id\": 6, \"op\": \"cancel\", \"call_id\": \"nobody\"}\n".to_vec(), json!(6), "unknown_call_id"),
        (b"{\"id\": 7, \"op\": \"answer_confirmation\", \"request_id\": 12345, \"confirmed\": true}\n".to_vec(), json!(7), "unknown_request_id"),
        (b"{\"id\": 8, \"op\": \"reload\", \"extension\": \"ghost\"}\n".to_vec(), json!(8), "not_started"),
        (b"{\"id\": 9, \"op\": \"call\", \"extension\": \"ghost\", \"tool\": \"echo\", \"call_id\": 1}\n".to_vec(), json!(9), "not_started"),
        (b"{\"id\": 10, \"op\": \"call\", \"extension\": \"fixture\", \"tool\": \"echo\", \"call_id\": 2, \"arguments\": [1]}\n".to_vec(), json!(10), "wrong_type"),
        (b"{\"id\": 11, \"op\": \"status_collect\", \"extension\": \"fixture\", \"call_id\": 3, \"surface\": \"sidebar\"}\n".to_vec(), json!(11), "invalid_value"),
        (b"{\"id\": 12, \"op\": \"stop\", \"extension\": \"ghost\"}\n".to_vec(), json!(12), "not_started"),
        (overlong.into_bytes(), Value::Null, "line_too_long"),
    ];
    for (line, _, _) in &bad {
        serve.send_raw(line);
    }
    // Blank lines are skipped without a reply.
    serve.send_raw(b"\n   \n");
    let status = serve.request(json!({"id": "after", "op": "status"}));
    assert_eq!(status["ok"], true);
    assert_eq!(status["extensions"][0]["extension"], "fixture");
    assert_eq!(status["extensions"][0]["state"], "ready");

    let replies: Vec<&Value> = serve
        .seen
        .iter()
        .filter(|l| {
            l["type"] == "reply"
                && !["start-fixture", "busy", "after"].contains(&l["id"].as_str().unwrap_or(""))
        })
        .collect();
    assert_eq!(
        replies.len(),
        bad.len(),
        "one reply per bad line: {replies:#?}"
    );
    for (reply, (_, id, code)) in replies.iter().zip(&bad) {
        assert_eq!(reply["ok"], false, "{reply}");
        assert_eq!(&reply["id"], id, "{reply}");
        assert_eq!(reply["error"]["code"], *code, "{reply}");
        assert!(reply["error"]["message"].is_string());
    }
    let rpc = |i: usize| replies[i]["error"]["rpc_code"].clone();
    assert_eq!(rpc(0), -32700);
    assert_eq!(rpc(5), -32601);
    assert_eq!(rpc(6), -32602);
    assert_eq!(replies[6]["error"]["field"], "call_id");

    // The held call is unharmed.
    serve.send(
        json!({"op": "answer_confirmation", "request_id": question["request_id"],
                      "confirmed": true}),
    );
    assert_eq!(text_of(&serve.result(json!("busy"))), "confirmed");
    assert_eq!(serve.close_input().unwrap(), 0);
}

#[test]
fn stdin_eof_shuts_down_cleanly_and_settles_everything() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let fixture = fixture_extension(root.path());
    // Tool names are unique across the host: the peer's tool is not the fixture's `echo`.
    let peer = peer_extension(root.path(), "peer", "0.2", &["good"], &["peer_echo"]);
    let mut serve = Serve::over(workspace, root, vec![fixture, peer]);
    let fixture_pid = serve.start_extension("fixture");
    let peer_pid = serve.start_extension("peer");
    serve.send(
        json!({"op": "call", "extension": "fixture", "tool": "sleep",
                      "arguments": {"ms": 600_000}, "call_id": "sleeping"}),
    );
    serve.send(
        json!({"op": "call", "extension": "fixture", "tool": "confirm",
                      "arguments": {"prompt": "Never answered"}, "call_id": "asking"}),
    );
    let question = serve.until("the confirmation", |l| l["type"] == "confirmation_request");

    assert_eq!(serve.close_input().unwrap(), 0);

    let position = |pred: &dyn Fn(&Value) -> bool| serve.seen.iter().position(pred);
    let cancelled = position(&|l| {
        l["type"] == "request_cancelled" && l["request_id"] == question["request_id"]
    })
    .expect("the open question was cancelled");
    assert_eq!(serve.seen[cancelled]["reason"], "shutdown");
    // The denial races the host's shutdown, which cancels whatever is still in flight.
    let asking = position(&|l| l["type"] == "result" && l["call_id"] == "asking").unwrap();
    let asking_line = &serve.seen[asking];
    assert!(
        asking_line["output"]["content"][0]["text"] == "denied"
            || asking_line["error"]["reason"] == "shutdown",
        "{asking_line}"
    );
    let sleeping = position(&|l| l["type"] == "result" && l["call_id"] == "sleeping").unwrap();
    assert_eq!(serve.seen[sleeping]["ok"], false);
    let last = serve.seen.last().unwrap();
    assert_eq!(last["type"], "shutdown", "{last}");
    assert_eq!(last["reason"], "input_closed");
    let mut names: Vec<&str> = last["report"]["extensions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["extension"].as_str().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["fixture", "peer"]);
    assert!(cancelled.max(asking).max(sleeping) < serve.seen.len() - 1);
    for pid in [fixture_pid, peer_pid] {
        assert!(wait_gone(pid, LIVENESS), "process {pid} is gone");
    }
}

#[test]
fn reload_replaces_the_generation_and_calls_follow() {
    let mut serve = Serve::fixture();
    let old_pid = serve.start_extension("fixture");
    let reloaded = serve.request(json!({"id": "r", "op": "reload", "extension": "fixture"}));
    assert_eq!(reloaded["ok"], true, "{reloaded}");
    assert_eq!(reloaded["generation"], 2);
    let new_pid = reloaded["pid"].as_u64().unwrap() as u32;
    assert_ne!(new_pid, old_pid);
    assert!(
        wait_gone(old_pid, LIVENESS),
        "the old generation drained and exited"
    );
    serve.send(json!({"op": "call", "extension": "fixture", "tool": "echo",
                      "arguments": {"after": "reload"}, "call_id": 1}));
    assert_eq!(text_of(&serve.result(json!(1))), r#"{"after":"reload"}"#);
    let status = serve.request(json!({"id": "s", "op": "status"}));
    let live: Vec<&Value> = status["extensions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["routed"] == true)
        .collect();
    assert_eq!(live.len(), 1, "{status}");
    assert_eq!(live[0]["generation"], 2);
    assert_eq!(live[0]["pid"], new_pid);
    assert_eq!(serve.close_input().unwrap(), 0);
    assert!(wait_gone(new_pid, LIVENESS));
}

#[test]
fn host_events_and_the_remaining_operations_are_lines() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let fixture = fixture_extension(root.path());
    let noisy = peer_extension(root.path(), "noisy", "0.2", &["noisy"], &["noisy_echo"]);
    let bad = peer_extension(root.path(), "bad", "0.2", &["bad-result"], &["bad_echo"]);
    let mut serve = Serve::over(workspace, root, vec![fixture, noisy, bad]);

    let discovered = serve.request(json!({"id": "d", "op": "discover"}));
    let names: Vec<&str> = discovered["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["bad", "fixture", "noisy"]);
    serve.start_extension("fixture");
    serve.until("the ready state", |l| {
        l["event"] == "state" && l["extension"] == "fixture" && l["state"] == "ready"
    });

    // A notification from the extension is an event line.
    serve.send(
        json!({"op": "call", "extension": "fixture", "tool": "notify",
                      "arguments": {"level": "warning", "message": "careful"}, "call_id": 1}),
    );
    let note = serve.until("the notification", |l| l["event"] == "notification");
    assert_eq!(note["level"], "warning");
    assert_eq!(note["message"], "careful");
    assert_eq!(note["extension"], "fixture");
    serve.result(json!(1));

    // Every other call kind, uniformly with a call_id.
    let calls = [
        (
            json!({"op": "hook", "extension": "fixture", "hook": "before_prompt",
                "payload": {"prompt": "hello"}, "call_id": "h"}),
            "h",
        ),
        (
            json!({"op": "context", "extension": "fixture", "prompt": "p", "call_id": "ctx"}),
            "ctx",
        ),
        (
            json!({"op": "status_collect", "extension": "fixture", "call_id": "st"}),
            "st",
        ),
        (
            json!({"op": "render", "extension": "fixture", "tool": "echo", "arguments": {},
                "output": "{}", "call_id": "r"}),
            "r",
        ),
        (
            json!({"op": "menu", "extension": "fixture", "call_id": "m"}),
            "m",
        ),
    ];
    for (line, _) in &calls {
        serve.send(line.clone());
    }
    let mut outputs = HashMap::new();
    for (_, call_id) in &calls {
        let result = serve.result(json!(call_id));
        assert_eq!(result["ok"], true, "{result}");
        outputs.insert(*call_id, result["output"].clone());
    }
    assert_eq!(outputs["h"]["disposition"]["action"], "continue");
    assert_eq!(outputs["h"]["context"][0]["content"], "prompt length 5");
    assert_eq!(
        outputs["ctx"]["contributions"][0]["placement"],
        "system_suffix"
    );
    assert_eq!(outputs["st"]["contribution"]["text"], "fixture ok");
    assert!(outputs["r"]["segments"]
        .as_array()
        .is_some_and(|s| !s.is_empty()));
    assert!(
        outputs["m"]["menu"]["title"].is_string(),
        "{}",
        outputs["m"]
    );

    // A menu can be cancelled like every other kind; its result is then the generated
    // fallback menu.
    serve.send(json!({"op": "menu", "extension": "fixture", "call_id": "m2"}));
    let cancelled = serve.request(json!({"id": "c", "op": "cancel", "call_id": "m2"}));
    // The menu may already have settled, which frees the id.
    assert!(
        cancelled["ok"] == true || cancelled["error"]["code"] == "unknown_call_id",
        "{cancelled}"
    );
    let menu = serve.result(json!("m2"));
    assert_eq!(menu["ok"], true, "{menu}");

    // Lifecycle notifications reach the subscribed extension.
    let lifecycle = serve.request(
        json!({"id": "l", "op": "lifecycle", "event": "session/started",
                                         "session_id": "s-1"}),
    );
    assert_eq!(lifecycle["ok"], true, "{lifecycle}");
    let start = Instant::now();
    loop {
        let call_id = format!("events-{}", start.elapsed().as_millis());
        serve.send(
            json!({"op": "call", "extension": "fixture", "tool": "events",
                          "call_id": call_id}),
        );
        let result = serve.result(json!(call_id));
        if text_of(&result).contains("session/started") {
            break;
        }
        assert!(start.elapsed() < LIVENESS, "{result}");
        std::thread::sleep(Duration::from_millis(50));
    }

    // A raw peer's bad frames are diagnostic events; its call still settles.
    serve.start_extension("noisy");
    serve.send(
        json!({"op": "call", "extension": "noisy", "tool": "noisy_echo",
                      "arguments": {"a": 1}, "call_id": "noisy"}),
    );
    assert_eq!(text_of(&serve.result(json!("noisy"))), r#"{"a":1}"#);
    serve.until("an invalid frame diagnostic", |l| {
        l["event"] == "diagnostic" && l["extension"] == "noisy" && l["kind"] == "invalid_frame"
    });
    serve.until("an oversized frame diagnostic", |l| {
        l["event"] == "diagnostic" && l["kind"] == "oversized_frame"
    });

    // An answer that breaks a rule is a typed result error with its JSON-RPC code.
    serve.start_extension("bad");
    serve.send(json!({"op": "call", "extension": "bad", "tool": "bad_echo", "call_id": "bad"}));
    let bad = serve.result(json!("bad"));
    assert_eq!(bad["ok"], false);
    assert_eq!(bad["error"]["code"], "invalid_result");
    assert_eq!(bad["error"]["rpc_code"], -32602);
    assert_eq!(bad["error"]["path"], "content");

    // Stopping one extension reports it; calls to it are then refused.
    let stopped = serve.request(json!({"id": "s", "op": "stop", "extension": "bad"}));
    assert_eq!(
        stopped["report"]["extensions"][0]["extension"], "bad",
        "{stopped}"
    );
    let refused = serve.request(json!({"id": "x", "op": "call", "extension": "bad",
                                       "tool": "bad_echo", "call_id": "late"}));
    assert_eq!(refused["error"]["code"], "not_started");

    let unknown = serve.request(json!({"id": "u", "op": "start", "extension": "ghost"}));
    assert_eq!(unknown["error"]["code"], "unknown_extension");
    assert_eq!(serve.close_input().unwrap(), 0);
}

#[test]
fn start_errors_carry_what_names_their_cause() {
    let workspace = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    let dies = peer_extension(
        root.path(),
        "dies",
        "0.2",
        &["noisy-exit-during-initialize"],
        &["echo"],
    );
    let mute = peer_extension(
        root.path(),
        "mute",
        "0.2",
        &["never-answer-initialize"],
        &["echo"],
    );
    let mut serve = Serve::over(workspace, root, vec![dies, mute]);
    let died = serve.request(json!({"id": 1, "op": "start", "extension": "dies"}));
    let error = &died["error"];
    assert_eq!(error["code"], "transport_lost", "{died}");
    assert_eq!(error["exit_status"], "exit status: 7", "{died}");
    assert_eq!(error["non_json_stdout_lines"], 3, "{died}");
    assert_eq!(error["first_non_json_line"], "starting up, step 0");
    assert_eq!(
        error["stderr_tail"][1], "RuntimeError: missing configuration file",
        "{died}"
    );
    let timed_out = serve
        .request(json!({"id": 2, "op": "start", "extension": "mute", "startup_timeout_ms": 400}));
    assert_eq!(
        timed_out["error"]["code"], "initialize_timeout",
        "{timed_out}"
    );
    let message = timed_out["error"]["message"].as_str().unwrap();
    assert!(message.contains("within 400 ms"), "{message}");
    let unknown = serve.request(json!({"id": 3, "op": "start", "extension": "nobody"}));
    assert_eq!(
        unknown["error"]["discovered"],
        json!(["dies", "mute"]),
        "{unknown}"
    );
    assert_eq!(serve.close_input().unwrap(), 0);
}

#[test]
fn a_rejected_initialize_ends_once_and_leaves_nothing_running() {
    let workspace = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    let refuses = peer_extension(root.path(), "refuses", "0.2", &["initialize-error"], &[]);
    let mut serve = Serve::over(workspace, root, vec![refuses]);
    let refused = serve.request(json!({"id": 1, "op": "start", "extension": "refuses"}));
    assert_eq!(refused["error"]["code"], "initialize_rejected", "{refused}");
    // Right after the refusal, no process of it runs.
    let status = serve.request(json!({"id": 2, "op": "status"}));
    let entries = status["extensions"].as_array().unwrap();
    assert!(entries.iter().all(|e| e["pid"].is_null()), "{status}");
    assert_eq!(serve.close_input().unwrap(), 0);
    let terminal: Vec<&Value> = serve
        .seen
        .iter()
        .filter(|l| {
            l["event"] == "state"
                && l["extension"] == "refuses"
                && matches!(
                    l["state"].as_str(),
                    Some("stopped" | "crashed" | "degraded")
                )
        })
        .collect();
    assert_eq!(terminal.len(), 1, "one terminal state event: {terminal:?}");
}

/// A session with the menu-actions extension started, and its destructive `wipe`
/// item as `menu` shows it.

#[test]
fn the_ready_line_names_the_version_and_pipelined_starts_share_one_outcome() {
    let workspace = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    let refuses = peer_extension(root.path(), "refuses", "0.2", &["initialize-error"], &[]);
    let marker = root.path().join("first-run");
    let flaky = peer_extension(
        root.path(),
        "flaky",
        "0.2",
        &["fail-first", &marker.to_string_lossy()],
        &["echo"],
    );
    let mut serve = Serve::over(workspace, root, vec![refuses, flaky]);
    let ready = &serve.seen[0];
    assert_eq!(ready["type"], "ready");
    assert_eq!(ready["version"], env!("CARGO_PKG_VERSION"));
    // Both starts are sent before either is answered: the second gets the first's
    // failure, not `already_running`.
    serve.send(json!({"id": 1, "op": "start", "extension": "refuses"}));
    serve.send(json!({"id": 2, "op": "start", "extension": "refuses"}));
    for id in [1, 2] {
        let reply = serve.reply(json!(id));
        assert_eq!(reply["error"]["code"], "initialize_rejected", "{reply}");
    }
    // A first start that failed is parked; `reload` revives it.
    let failed = serve.request(json!({"id": 3, "op": "start", "extension": "flaky"}));
    assert_eq!(failed["error"]["code"], "transport_lost", "{failed}");
    let revived = serve.request(json!({"id": 4, "op": "reload", "extension": "flaky"}));
    assert_eq!(revived["ok"], true, "{revived}");
    assert_eq!(serve.close_input().unwrap(), 0);
}

#[test]
fn a_headless_client_is_never_asked() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dir = fixture_extension(root.path());
    let options = ServeOptions::new(workspace.path())
        .no_global_extensions()
        .extension_dir(dir)
        .no_input();
    let mut serve = Serve::start(options, vec![workspace, root]);
    serve.start_extension("fixture");
    serve.send(
        json!({"op": "call", "extension": "fixture", "tool": "confirm",
                      "arguments": {"prompt": "Proceed?"}, "call_id": "c"}),
    );
    assert_eq!(text_of(&serve.result(json!("c"))), "denied");
    assert!(!serve
        .seen
        .iter()
        .any(|l| l["type"] == "confirmation_request"));
    assert_eq!(serve.close_input().unwrap(), 0);
}

#[test]
fn the_schema_refuses_lines_serve_never_writes() {
    let schema = crate::support::serve_harness::output_schema();
    for bad in [
        json!({"type": "result", "call_id": 1, "op": "call", "extension": "x", "ok": true}),
        json!({"type": "reply", "id": 1, "ok": false}),
        json!({"type": "event", "event": "weather"}),
        json!({"type": "shutdown", "reason": "bored", "report": {"extensions": []}}),
        json!({"type": "unknown"}),
    ] {
        assert!(schema.validate(&bad).is_err(), "{bad}");
    }
    assert!(schema
        .validate(&json!({"type": "reply", "id": null, "ok": true}))
        .is_ok());
}
