//! Drives the bundled example extensions (`octet-host __extension <name>`) over real
//! pipes with hand-written JSON-RPC frames, as a host would.

mod support;

use std::thread;
use std::time::{Duration, Instant};

use serde_json::json;
use support::driver::*;

#[test]
fn initialize_on_api_0_1_has_no_protocol() {
    let (_ext, result) = Ext::start("test-extension", "0.1");
    assert_eq!(result["api_version"], "0.1");
    assert!(result.get("protocol").is_none(), "{result}");
    let tools: Vec<&str> = result["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        tools,
        [
            "echo", "sleep", "progress", "confirm", "ask", "notify", "crash", "big", "fail",
            "panic", "env", "events"
        ]
    );
    assert_eq!(
        result["commands"],
        json!([{"name": "fixture", "description": "Echo the arguments; `fixture confirm <prompt>` asks first",
            "usage": "/fixture [confirm] [args..]"}])
    );
}

#[test]
fn initialize_on_api_0_4_negotiates_protocol() {
    let (_ext, result) = Ext::start("test-extension", "0.4");
    assert_eq!(result["api_version"], "0.4");
    assert_eq!(
        result["protocol"],
        json!({
            "version": "0.2",
            "features": ["request_cancellation", "content_parts", "request_progress",
                "lifecycle_events"],
            "limits": {"max_concurrent_requests": 64}
        })
    );
    let mut ext = Ext::spawn("hello-world", "0.2");
    ext.send(&initialize("0.2", 4));
    let result = ext.result(1);
    assert_eq!(
        result["protocol"],
        json!({"version": "0.2", "features": ["request_cancellation", "content_parts"],
            "limits": {"max_concurrent_requests": 4}})
    );
}

#[test]
fn version_mismatch_is_refused() {
    let mut ext = Ext::spawn("hello-world", "0.2");
    ext.send(&initialize("0.4", 64));
    assert_eq!(ext.error_code(1), -32602);
    // API 0.3 is served on its canonical wire: see tests/api03.rs.
}

#[test]
fn echo_shape_follows_the_api_version() {
    let (mut ext, _) = Ext::start("test-extension", "0.1");
    ext.call(2, "echo", json!({"a": 1}));
    assert_eq!(
        ext.result(2),
        json!({"content": "{\"a\":1}", "is_error": false})
    );

    let (mut ext, _) = Ext::start("test-extension", "0.2");
    ext.call(2, "echo", json!({"a": 1}));
    assert_eq!(
        ext.result(2),
        json!({"content": [{"type": "text", "text": "{\"a\":1}"}], "is_error": false})
    );
}

#[test]
fn unknown_methods_and_bad_params_are_refused() {
    let (mut ext, _) = Ext::start("test-extension", "0.4");
    ext.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "no/such", "params": {}}));
    assert_eq!(ext.error_code(2), -32601);
    ext.call(3, "sleep", json!({"ms": "soon"}));
    assert_eq!(ext.error_code(3), -32602);
    ext.call(4, "no_such_tool", json!({}));
    assert_eq!(ext.error_code(4), -32602);
    ext.send(&json!({"jsonrpc": "2.0", "id": 5, "method": "status/collect", "params": {"surface": "sidebar"}}));
    assert_eq!(ext.error_code(5), -32602);
    // menu/collect does not exist on API 0.1.
    let (mut old, _) = Ext::start("test-extension", "0.1");
    old.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "menu/collect", "params": {}}));
    assert_eq!(old.error_code(2), -32601);
}

#[test]
fn api_0_4_answers_concurrent_calls_out_of_order() {
    let (mut ext, _) = Ext::start("test-extension", "0.4");
    ext.call(2, "sleep", json!({"ms": 2000}));
    ext.call(3, "echo", json!({"fast": true}));
    assert_eq!(text_of(&ext.result(3)), "{\"fast\":true}");
    assert_eq!(text_of(&ext.result(2)), "slept 2000 ms");
    // The same ordering without any timing assumption: the sleep cannot finish before
    // it is cancelled, so the echo must be answered while it runs.
    ext.call(4, "sleep", json!({"ms": 600_000}));
    ext.call(5, "echo", json!({}));
    assert_eq!(text_of(&ext.result(5)), "{}");
    ext.send(&json!({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 4}}));
    assert_eq!(ext.error_code(4), -32800);
}

#[test]
fn api_0_1_answers_in_order() {
    let (mut ext, _) = Ext::start("test-extension", "0.1");
    ext.call(2, "sleep", json!({"ms": 200}));
    ext.call(3, "echo", json!({}));
    assert_eq!(text_of(&ext.result(2)), "slept 200 ms");
    assert_eq!(text_of(&ext.result(3)), "{}");
}

#[test]
fn cancel_request_makes_sleep_answer_cancelled() {
    let (mut ext, _) = Ext::start("test-extension", "0.4");
    ext.call(2, "sleep", json!({"ms": 600_000}));
    ext.send(&json!({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 2, "reason": "user"}}));
    assert_eq!(ext.error_code(2), -32800);
    // The process carries on.
    ext.call(3, "echo", json!({}));
    assert_eq!(text_of(&ext.result(3)), "{}");
}

#[test]
fn progress_sequences_increase_before_the_response() {
    let (mut ext, _) = Ext::start("test-extension", "0.4");
    ext.call(2, "progress", json!({"steps": 5}));
    let mut sequences = Vec::new();
    loop {
        let frame = ext.next();
        if frame.get("id").is_some() {
            assert_eq!(frame["id"], 2);
            assert_eq!(text_of(&frame["result"]), "progress sent=5");
            break;
        }
        assert_eq!(frame["method"], "$/progress");
        assert_eq!(frame["params"]["request_id"], 2);
        let event = &frame["params"]["event"];
        assert_eq!(event["type"], "status");
        assert_eq!(event["total"], 5);
        assert_eq!(event["unit"], "steps");
        sequences.push(frame["params"]["sequence"].as_u64().unwrap());
    }
    assert_eq!(sequences.len(), 5);
    assert!(sequences.windows(2).all(|w| w[0] < w[1]), "{sequences:?}");
}

#[test]
fn progress_is_not_sent_on_api_0_1() {
    let (mut ext, _) = Ext::start("test-extension", "0.1");
    ext.call(2, "progress", json!({"steps": 3}));
    assert_eq!(text_of(&ext.result(2)), "progress sent=0");
}

#[test]
fn confirm_round_trip_carries_the_parent_on_api_0_4() {
    let (mut ext, _) = Ext::start("test-extension", "0.4");
    for (call, answer, expected) in [(2, true, "confirmed"), (3, false, "denied")] {
        ext.call(call, "confirm", json!({"prompt": "Push?"}));
        let request = ext.next();
        assert_eq!(request["method"], "confirmation/request");
        let id = request["id"].clone();
        assert!(
            id.as_str().is_some_and(|s| s.starts_with("sdk-")),
            "{request}"
        );
        assert_eq!(
            request["params"],
            json!({"parent_request_id": call, "prompt": "Push?", "destructive": false, "default": false})
        );
        ext.send(&json!({"jsonrpc": "2.0", "id": id, "result": {"confirmed": answer}}));
        assert_eq!(text_of(&ext.result(call)), expected);
    }
}

#[test]
fn confirm_on_api_0_1_omits_the_parent() {
    let (mut ext, _) = Ext::start("test-extension", "0.1");
    ext.call(2, "confirm", json!({"prompt": "Go?"}));
    let request = ext.next();
    assert_eq!(request["method"], "confirmation/request");
    assert!(
        request["params"].get("parent_request_id").is_none(),
        "{request}"
    );
    ext.send(&json!({"jsonrpc": "2.0", "id": request["id"], "result": {"confirmed": true}}));
    assert_eq!(
        ext.result(2),
        json!({"content": "confirmed", "is_error": false})
    );
}

#[test]
fn child_request_ids_are_unique_and_input_round_trips() {
    let (mut ext, _) = Ext::start("test-extension", "0.4");
    ext.call(2, "ask", json!({"prompt": "Name?"}));
    let first = ext.next();
    assert_eq!(first["method"], "input/request");
    assert_eq!(
        first["params"],
        json!({"parent_request_id": 2, "prompt": "Name?", "secret": false})
    );
    ext.send(&json!({"jsonrpc": "2.0", "id": first["id"], "result": {"value": "tinkerer"}}));
    assert_eq!(text_of(&ext.result(2)), "answer=tinkerer");
    ext.call(3, "ask", json!({"prompt": "Token?", "secret": true}));
    let second = ext.next();
    assert_ne!(first["id"], second["id"]);
    ext.send(&json!({"jsonrpc": "2.0", "id": second["id"], "result": {"value": null}}));
    assert_eq!(text_of(&ext.result(3)), "answer=null");
}

#[test]
fn input_does_not_exist_on_api_0_1() {
    let (mut ext, _) = Ext::start("test-extension", "0.1");
    ext.call(2, "ask", json!({"prompt": "Name?"}));
    assert_eq!(ext.error_code(2), -32603);
}

#[test]
fn cancelling_the_parent_or_the_child_ends_a_pending_confirmation() {
    let (mut ext, _) = Ext::start("test-extension", "0.4");
    ext.call(2, "confirm", json!({"prompt": "Wait?"}));
    assert_eq!(ext.next()["method"], "confirmation/request");
    ext.send(&json!({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 2}}));
    assert_eq!(ext.error_code(2), -32800);

    ext.call(3, "confirm", json!({"prompt": "Again?"}));
    let child = ext.next();
    ext.send(
        &json!({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": child["id"]}}),
    );
    assert_eq!(ext.error_code(3), -32800);
}

#[test]
fn host_errors_on_child_requests_reach_the_handler() {
    let (mut ext, _) = Ext::start("test-extension", "0.4");
    ext.call(2, "confirm", json!({"prompt": "?"}));
    let child = ext.next();
    ext.send(&json!({"jsonrpc": "2.0", "id": child["id"], "error": {"code": -32002, "message": "not_foreground_owner"}}));
    let frame = ext.response(2);
    assert_eq!(frame["error"]["code"], -32002);
}

#[test]
fn shutdown_is_acknowledged_and_the_process_exits() {
    let (mut ext, _) = Ext::start("test-extension", "0.4");
    ext.send(&json!({"jsonrpc": "2.0", "id": 9, "method": "shutdown", "params": {}}));
    assert_eq!(ext.result(9), json!({}));
    assert!(ext.wait_exit().success());
}

#[test]
fn stdin_eof_makes_the_process_exit() {
    let (mut ext, _) = Ext::start("test-extension", "0.1");
    ext.close_stdin();
    assert!(ext.wait_exit().success());
}

#[test]
fn malformed_lines_are_ignored() {
    let (mut ext, _) = Ext::start("test-extension", "0.2");
    ext.send_raw(b"not json\n");
    ext.send_raw(b"{\"jsonrpc\":\"1.0\",\"id\":7,\"method\":\"tool/call\"}\n");
    ext.send_raw(b"[1,2]\n\n");
    ext.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tool/");
    ext.send_raw(b"call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"s\":\"a\\u2028b\"}}}\n");
    assert_eq!(text_of(&ext.result(2)), "{\"s\":\"a\u{2028}b\"}");
    ext.close_stdin();
    assert!(ext.wait_exit().success());
    assert!(ext.stderr_text().contains("malformed frame"));
}

#[test]
fn requests_before_initialize_are_refused() {
    let mut ext = Ext::spawn("test-extension", "0.2");
    ext.call(2, "echo", json!({}));
    assert_eq!(ext.error_code(2), -32600);
    ext.send(&initialize("0.2", 8));
    ext.result(1);
    ext.send(&initialize("0.2", 8));
    assert_eq!(ext.error_code(1), -32600);
}

#[test]
fn a_panicking_handler_is_an_internal_error_not_a_crash() {
    let (mut ext, _) = Ext::start("test-extension", "0.4");
    ext.call(2, "panic", json!({}));
    assert_eq!(ext.error_code(2), -32603);
    ext.call(3, "fail", json!({"code": -32042, "message": "custom"}));
    let frame = ext.response(3);
    assert_eq!(frame["error"], json!({"code": -32042, "message": "custom"}));
    ext.call(4, "echo", json!({}));
    assert_eq!(text_of(&ext.result(4)), "{}");
}

#[test]
fn crash_exits_with_code_3() {
    let (mut ext, _) = Ext::start("test-extension", "0.2");
    ext.call(2, "crash", json!({}));
    assert_eq!(ext.wait_exit().code(), Some(3));
}

#[test]
fn big_results_fit_or_become_an_internal_error() {
    let (mut ext, _) = Ext::start("test-extension", "0.2");
    ext.call(2, "big", json!({"bytes": 100_000}));
    assert_eq!(text_of(&ext.result(2)).len(), 100_000);
    ext.call(3, "big", json!({"bytes": 2 * 1024 * 1024}));
    assert_eq!(ext.error_code(3), -32603);
}

#[test]
fn notifications_commands_hooks_and_collectors() {
    let (mut ext, _) = Ext::start("test-extension", "0.4");
    ext.call(
        2,
        "notify",
        json!({"level": "warning", "title": "T", "message": "M"}),
    );
    assert_eq!(
        ext.next(),
        json!({"jsonrpc": "2.0", "method": "notification",
            "params": {"level": "warning", "title": "T", "message": "M"}})
    );
    assert_eq!(text_of(&ext.result(2)), "notified");

    ext.send(
        &json!({"jsonrpc": "2.0", "id": 3, "method": "command/execute",
        "params": {"name": "fixture", "arguments": ["a", "b"], "context": {}}}),
    );
    assert_eq!(
        ext.result(3),
        json!({"text": "fixture: a b", "context": [],
            "notifications": [{"level": "info", "title": "fixture", "message": "ran with 2 arguments"}]})
    );

    ext.send(&json!({"jsonrpc": "2.0", "id": 4, "method": "hook/run",
        "params": {"hook": "before_prompt", "payload": {"prompt": "please deny"}, "context": {}}}));
    assert_eq!(ext.result(4)["disposition"]["action"], "deny");

    ext.send(
        &json!({"jsonrpc": "2.0", "id": 5, "method": "context/collect",
        "params": {"prompt": null, "context": {}}}),
    );
    assert_eq!(
        ext.result(5),
        json!([{"label": "test-extension", "content": "fixture context", "placement": "system_suffix"}])
    );

    ext.send(&json!({"jsonrpc": "2.0", "id": 6, "method": "tool/render",
        "params": {"name": "echo", "arguments": {}, "output": "{}", "is_error": false, "context": {}}}));
    assert_eq!(
        ext.result(6)["segments"][2],
        json!({"text": "{}", "style_role": null})
    );

    ext.send(
        &json!({"jsonrpc": "2.0", "id": 7, "method": "menu/collect", "params": {"context": {}}}),
    );
    assert_eq!(ext.result(7)["items"][0]["command"], "fixture");
}

#[test]
fn lifecycle_notifications_reach_the_subscriber() {
    let (mut ext, _) = Ext::start("test-extension", "0.4");
    ext.send(&json!({"jsonrpc": "2.0", "method": "turn/started",
        "params": {"session_id": "s", "run_id": "r", "turn_id": "t"}}));
    let deadline = Instant::now() + TIMEOUT;
    let mut id = 2;
    loop {
        ext.call(id, "events", json!({}));
        if text_of(&ext.result(id)) == "turn/started" {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the lifecycle event was not recorded"
        );
        thread::sleep(Duration::from_millis(20));
        id += 1;
    }
}

#[test]
fn examples_answer_their_reference_requests() {
    let (mut hello, _) = Ext::start("hello-world", "0.1");
    hello.call(2, "hello_world", json!({"name": "tinkerer"}));
    assert_eq!(
        hello.next(),
        json!({"jsonrpc": "2.0", "method": "notification",
            "params": {"level": "success", "title": "Hello", "message": "hello_world greeted tinkerer"}})
    );
    assert_eq!(
        hello.result(2),
        json!({"content": "Hello, tinkerer!", "is_error": false})
    );

    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().to_str().unwrap();
    let (mut git, _) = Ext::start("git-status", "0.4");
    git.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "tool/call",
        "params": {"name": "git_status", "arguments": {}, "context": {"workspace": workspace}}}));
    let result = git.result(2);
    // Either git is missing or the temporary directory is not a repository.
    assert_eq!(result["is_error"], true, "{result}");
    let text = text_of(&result);
    assert!(
        text.starts_with("not a git repository") || text == "git not found on PATH",
        "{text}"
    );

    let (mut checkpoint, _) = Ext::start("checkpoint", "0.2");
    checkpoint.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "command/execute",
        "params": {"name": "checkpoint", "arguments": ["release-v2"], "context": {"workspace": workspace}}}));
    let result = checkpoint.result(2);
    assert!(result["text"]
        .as_str()
        .unwrap()
        .starts_with("Checkpoint preview · release-v2\n"));
    assert_eq!(
        result["notifications"],
        json!([{"level": "info", "title": "Read-only checkpoint",
            "message": "No commit or filesystem mutation was performed."}])
    );
    checkpoint.send(
        &json!({"jsonrpc": "2.0", "id": 3, "method": "context/collect",
        "params": {"prompt": null, "context": {}}}),
    );
    assert_eq!(
        checkpoint.result(3)[0]["content"],
        "The last checkpoint preview was `release-v2`."
    );
}
