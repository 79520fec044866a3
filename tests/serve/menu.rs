//! Menu actions through `serve`: a destructive one confirmed through the client once,
//! and withdrawn when cancelled.

use serde_json::{json, Value};

use super::support::serve_harness::*;
use super::support::*;

fn serve_with_wipe_action() -> (Serve, Value) {
    let workspace = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    let dir = menu_actions_extension(root.path());
    let mut serve = Serve::over(workspace, root, vec![dir]);
    serve.start_extension("actions");
    serve.send(json!({"op": "menu", "extension": "actions", "call_id": "m"}));
    let menu = serve.result(json!("m"));
    let wipe = menu["output"]["menu"]["items"][1].clone();
    assert_eq!(wipe["id"], "wipe", "{menu}");
    (serve, wipe)
}

#[test]
fn a_destructive_menu_action_is_confirmed_through_the_client_once() {
    let (mut serve, wipe) = serve_with_wipe_action();
    let admitted = serve.request(json!({"id": 1, "op": "menu_action", "extension": "actions",
                                        "call_id": "w", "item": wipe}));
    assert_eq!(admitted["ok"], true, "{admitted}");
    let question = serve.until("the host's confirmation", |l| {
        l["type"] == "confirmation_request"
    });
    assert!(
        question["prompt"]
            .as_str()
            .unwrap()
            .starts_with("Run \u{201c}Wipe\u{201d}"),
        "{question}"
    );
    serve.send(
        json!({"op": "answer_confirmation", "request_id": question["request_id"],
                      "confirmed": true}),
    );
    let result = serve.result(json!("w"));
    assert_eq!(result["ok"], true, "{result}");
    assert_eq!(result["op"], "menu_action");
    let report: Value = serde_json::from_str(result["output"]["text"].as_str().unwrap()).unwrap();
    assert_eq!(
        report,
        json!({"arguments": ["wipe", "--all"], "confirmation": {"confirmed": true}})
    );
    let questions = serve
        .seen
        .iter()
        .filter(|l| l["type"] == "confirmation_request")
        .count();
    assert_eq!(
        questions, 1,
        "the action's own confirmation was pre-approved"
    );
    assert_eq!(serve.close_input().unwrap(), 0);
}

#[test]
fn a_cancel_while_a_destructive_menu_action_is_being_confirmed_withdraws_the_question() {
    let (mut serve, wipe) = serve_with_wipe_action();
    serve.send(
        json!({"op": "menu_action", "extension": "actions", "call_id": "w",
                      "item": wipe}),
    );
    let question = serve.until("the host's confirmation", |l| {
        l["type"] == "confirmation_request"
    });
    let cancelled = serve.request(json!({"id": 2, "op": "cancel", "call_id": "w"}));
    assert_eq!(cancelled["ok"], true, "{cancelled}");
    let withdrawn = serve.until("the withdrawn question", |l| {
        l["type"] == "request_cancelled" && l["request_id"] == question["request_id"]
    });
    assert_eq!(withdrawn["reason"], "no_longer_wanted");
    let result = serve.result(json!("w"));
    assert_eq!(result["ok"], false, "{result}");
    assert_eq!(result["error"]["code"], "cancelled", "{result}");
    assert_eq!(result["error"]["reason"], "user");
    let late = serve.request(json!({"id": 3, "op": "answer_confirmation",
                                    "request_id": question["request_id"], "confirmed": true}));
    assert_eq!(late["error"]["code"], "unknown_request_id");
    // The id is free again once the result is written.
    let again = serve.request(json!({"id": 4, "op": "menu", "extension": "actions",
                                     "call_id": "w"}));
    assert_eq!(again["ok"], true, "{again}");
    assert_eq!(serve.result(json!("w"))["ok"], true);
    assert_eq!(serve.close_input().unwrap(), 0);
}
