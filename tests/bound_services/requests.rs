//! What the runtime checks around a bound service: offers, params and answers,
//! owners, and a settled parent.

use std::time::Duration;

use octet_host::limits::{MAX_COMPOSER_TEXT_BYTES, MAX_ENTRY_DATA_BYTES, MAX_INJECTED_TEXT_BYTES};
use octet_host::CallOptions;
use serde_json::{json, Value};

use super::support::{self, tool_json as tool};
use super::world::{ask, assert_refused, error, request, world, WAVE1};

#[test]
fn features_are_offered_only_when_bound() {
    let unbound = world(false, "0.2", "");
    let ext = unbound.host.start("peer").unwrap();
    let seen = tool(&ext, "seen", json!({}));
    let offered = support::offered(&seen);
    for feature in WAVE1 {
        assert!(
            !offered.iter().any(|f| f == feature),
            "{feature} offered unbound: {offered:?}"
        );
    }
    let answers = ask(&ext, json!([request("1", "composer/get", json!({}))]));
    assert_refused(&answers["1"], -32601, "unsupported_feature");

    for api in ["0.2", "0.4"] {
        let bound = world(true, api, "");
        let ext = bound.host.start("peer").unwrap();
        let seen = tool(&ext, "seen", json!({}));
        let offered = support::offered(&seen);
        for feature in WAVE1 {
            assert!(
                offered.iter().any(|f| f == feature),
                "{feature} not offered on {api}: {offered:?}"
            );
        }
    }
}

#[test]
fn composer_round_trip_and_bounds() {
    let w = world(true, "0.2", "");
    let ext = w.host.start("peer").unwrap();
    let at = "x".repeat(MAX_COMPOSER_TEXT_BYTES);
    let past = "x".repeat(MAX_COMPOSER_TEXT_BYTES + 1);
    let answers = ask(
        &ext,
        json!([
            request("set", "composer/set", json!({"text": "hello"})),
            request("insert", "composer/insert", json!({"text": " world"})),
            request("get", "composer/get", json!({})),
            request("at", "composer/set", json!({"text": at})),
            request("past", "composer/set", json!({"text": past})),
            request("control", "composer/insert", json!({"text": "\u{1b}[2J"})),
            request("extra", "composer/get", json!({"cursor": 3})),
            request("no-text", "composer/set", json!({})),
        ]),
    );
    assert_eq!(answers["set"]["result"], json!({}));
    assert_eq!(answers["insert"]["result"], json!({}));
    assert_eq!(answers["get"]["result"], json!({"text": "hello world"}));
    assert_eq!(answers["at"]["result"], json!({}));
    assert_refused(&answers["past"], -32602, "bounds_exceeded");
    assert_refused(&answers["control"], -32602, "invalid_request");
    assert_refused(&answers["extra"], -32602, "invalid_request");
    assert_refused(&answers["no-text"], -32602, "invalid_request");
    // Refused requests never reached the service.
    let journal = w.composer.journal.entries();
    assert_eq!(
        journal,
        vec![
            "set 5 independent=false".to_string(),
            "insert  world".into(),
            "get independent=false".into(),
            format!("set {MAX_COMPOSER_TEXT_BYTES} independent=false"),
        ]
    );
}

#[test]
fn answers_that_break_the_rules_never_reach_the_extension() {
    let w = world(true, "0.2", "");
    let ext = w.host.start("peer").unwrap();
    *w.composer.answer_with.lock().unwrap() = Some("bell \u{7}".into());
    let answers = ask(
        &ext,
        json!([
            request("get", "composer/get", json!({})),
            request("drop", "composer/set", json!({"text": "drop"})),
        ]),
    );
    let (code, message) = error(&answers["get"]);
    assert_eq!(code, -32603);
    assert!(!message.contains('\u{7}'), "{message}");
    assert_eq!(error(&answers["drop"]).0, -32603);
    // The host learns why.
    let events = support::collect_events(&w.host, Duration::from_secs(10), |events| {
        support::diagnostics(events).len() >= 2
    });
    let reasons: Vec<String> = support::diagnostics(&events)
        .iter()
        .map(|d| d.to_string())
        .collect();
    assert!(
        reasons
            .iter()
            .any(|r| r.contains("broke the method's rules")),
        "{reasons:?}"
    );
    assert!(
        reasons.iter().any(|r| r.contains("dropped the request")),
        "{reasons:?}"
    );
}

#[test]
fn a_cancelled_parent_admits_no_child_even_with_the_issued_owner() {
    let w = world(true, "0.2", "");
    let ext = w.host.start("peer").unwrap();
    // The first call waits on a composer/set the service holds until the parent
    // settles; the host cancels the call at its deadline and tombstones its id.
    let blocked = ext.call_tool(
        "ask",
        json!({"requests": [request("blocked", "composer/set", json!({"text": "block"}))]}),
        CallOptions::with_deadline(Duration::from_millis(500)),
    );
    assert!(blocked.is_err(), "{blocked:?}");
    let mut late = request("late", "composer/get", json!({}));
    late["parent"] = json!("cancelled");
    late["owner"] = json!("issued");
    let answers = ask(&ext, json!([late]));
    assert_refused(&answers["late"], -32002, "not_foreground_owner");
    let message = answers["late"]["error"]["message"].as_str().unwrap();
    assert!(message.contains("was cancelled"), "{message}");
    assert!(
        !w.composer
            .journal
            .entries()
            .iter()
            .any(|e| e.starts_with("get")),
        "{:?}",
        w.composer.journal.entries()
    );
}

#[test]
fn owner_precedence() {
    let w = world(true, "0.2", "");
    let ext = w.host.start("peer").unwrap();
    // A first call settles, so "previous" names a settled parent.
    ask(&ext, json!([]));
    let get = |id: &str, parent: Value, owner: Value| {
        let mut r = request(id, "composer/get", json!({}));
        r["parent"] = parent;
        r["owner"] = owner;
        r
    };
    let answers = ask(
        &ext,
        json!([
            // A live parent wins; the explicit field is ignored, even a foreign one.
            get("live-foreign", json!("live"), json!("foreign")),
            // A settled parent with the issued triple: admitted, answered independently.
            get("settled-issued", json!("previous"), json!("issued")),
            get("settled-foreign", json!("previous"), json!("foreign")),
            get("settled-absent", json!("previous"), Value::Null),
            get(
                "settled-malformed",
                json!("previous"),
                json!({"session_id": 1})
            ),
            get("never-issued", json!(999_999), json!("issued")),
            get("no-parent", json!("none"), Value::Null),
        ]),
    );
    assert_eq!(answers["live-foreign"]["result"], json!({"text": ""}));
    assert_eq!(answers["settled-issued"]["result"], json!({"text": ""}));
    for id in [
        "settled-foreign",
        "settled-absent",
        "settled-malformed",
        "never-issued",
    ] {
        assert_refused(&answers[id], -32002, "not_foreground_owner");
    }
    assert_refused(&answers["no-parent"], -32602, "invalid_request");
    assert_eq!(
        w.composer.journal.entries(),
        vec!["get independent=false", "get independent=true"]
    );
}

#[test]
fn a_settled_parent_cancels_the_service_call() {
    let w = world(true, "0.2", "");
    let ext = w.host.start("peer").unwrap();
    let mut blocked = request("blocked", "composer/set", json!({"text": "block"}));
    blocked["wait"] = json!(false);
    // The call returns at once, settling the parent while the service still blocks.
    ask(&ext, json!([blocked]));
    let answers = tool(&ext, "answers", json!({"ids": ["blocked"]}));
    let (code, _) = error(&answers["blocked"]);
    assert_eq!(code, -32800);
    // The service observed the cancellation; its late reply went nowhere.
    w.composer.journal.wait_for("cancelled=true");
}

#[test]
fn session_entries_bounds_and_answers() {
    let w = world(true, "0.2", "");
    let ext = w.host.start("peer").unwrap();
    let data_at = json!("d".repeat(MAX_ENTRY_DATA_BYTES - 2));
    let data_past = json!("d".repeat(MAX_ENTRY_DATA_BYTES - 1));
    let answers = ask(
        &ext,
        json!([
            request(
                "append",
                "session/append_entry",
                json!({"entry_type": "note", "data": {"n": 1}})
            ),
            request(
                "at",
                "session/append_entry",
                json!({"entry_type": "t".repeat(128), "data": data_at})
            ),
            request(
                "past",
                "session/append_entry",
                json!({"entry_type": "note", "data": data_past})
            ),
            request(
                "type-past",
                "session/append_entry",
                json!({"entry_type": "t".repeat(129), "data": 1})
            ),
            request(
                "name",
                "session/set_name",
                json!({"name": "n".repeat(4096)})
            ),
            request(
                "name-past",
                "session/set_name",
                json!({"name": "n".repeat(4097)})
            ),
            request("clear", "session/set_name", json!({"name": ""})),
            request(
                "label",
                "session/set_label",
                json!({"entry_id": "e".repeat(256), "label": "x"})
            ),
            request(
                "label-id-past",
                "session/set_label",
                json!({"entry_id": "e".repeat(257), "label": "x"})
            ),
            request(
                "label-past",
                "session/set_label",
                json!({"entry_id": "e", "label": "l".repeat(4097)})
            ),
        ]),
    );
    assert_eq!(answers["append"]["result"], json!({"entry_id": "entry-1"}));
    assert!(answers["at"]["result"]["entry_id"].is_string());
    for id in [
        "past",
        "type-past",
        "name-past",
        "label-id-past",
        "label-past",
    ] {
        assert_refused(&answers[id], -32602, "bounds_exceeded");
    }
    for id in ["name", "clear", "label"] {
        assert_eq!(answers[id]["result"], json!({}), "{id}");
    }
    assert_eq!(w.entries.0.entries()[0], "append note {\"n\":1}");
}

#[test]
fn message_injection_roles_are_never_coerced() {
    let w = world(true, "0.2", "");
    let ext = w.host.start("peer").unwrap();
    let at = "m".repeat(MAX_INJECTED_TEXT_BYTES);
    let past = "m".repeat(MAX_INJECTED_TEXT_BYTES + 1);
    let answers = ask(
        &ext,
        json!([
            request(
                "assistant",
                "session/send_message",
                json!({"role": "assistant", "text": "hi"})
            ),
            request(
                "system",
                "session/send_message",
                json!({"role": "system", "text": at})
            ),
            request(
                "user-role",
                "session/send_message",
                json!({"role": "user", "text": "hi"})
            ),
            request("past", "session/send_user_message", json!({"text": past})),
            request(
                "user",
                "session/send_user_message",
                json!({"text": "typed"})
            ),
        ]),
    );
    for id in ["assistant", "system", "user"] {
        assert_eq!(answers[id]["result"], json!({}), "{id}");
    }
    assert_refused(&answers["user-role"], -32602, "invalid_request");
    assert_refused(&answers["past"], -32602, "bounds_exceeded");
    assert_eq!(
        w.messages.0.entries(),
        vec![
            "assistant 2".to_string(),
            format!("system {MAX_INJECTED_TEXT_BYTES}"),
            "user 5".into()
        ]
    );
}

#[test]
fn active_tools_are_bounded_and_a_host_that_cannot_apply_them_refuses() {
    let w = world(true, "0.2", "");
    let ext = w.host.start("peer").unwrap();
    let at: Vec<String> = (0..256).map(|i| format!("t{i}")).collect();
    let past: Vec<String> = (0..257).map(|i| format!("t{i}")).collect();
    let answers = ask(
        &ext,
        json!([
            request("at", "tools/set_active", json!({ "names": at })),
            request("past", "tools/set_active", json!({ "names": past })),
            request(
                "long",
                "tools/set_active",
                json!({"names": ["n".repeat(129)]})
            ),
        ]),
    );
    // Within bounds the service decides: this one cannot apply a set.
    assert_refused(&answers["at"], -32601, "unsupported_feature");
    assert_refused(&answers["past"], -32602, "bounds_exceeded");
    assert_refused(&answers["long"], -32602, "bounds_exceeded");
}
