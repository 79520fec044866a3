//! Bindings per extension, the SDK's side of the services, cancellation, and features
//! the host does not offer.

use std::path::PathBuf;
use std::time::Duration;

use octet_host::host::ServiceBindings;
use octet_host::CallOptions;
use serde_json::{json, Value};

use super::support::{self, tool_json as tool};
use super::world::{ask, assert_refused, error, request, world, Composer, Entries, Shortcuts};

#[test]
fn per_extension_bindings_come_with_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let a = support::services_extension(dir.path(), "bound", "0.2", "");
    let b = support::services_extension(dir.path(), "plain", "0.2", "");
    let host = support::host(dir.path(), &[a, b]);
    let composer = Composer::default();
    let options = octet_host::host::StartOptions::default()
        .services(ServiceBindings::new().composer(composer.clone()));
    let bound = host.start_with("bound", options).unwrap();
    let plain = host.start("plain").unwrap();
    let answers = ask(
        &bound,
        json!([request("1", "composer/set", json!({"text": "x"}))]),
    );
    assert_eq!(answers["1"]["result"], json!({}));
    let answers = ask(
        &plain,
        json!([request("1", "composer/set", json!({"text": "x"}))]),
    );
    assert_refused(&answers["1"], -32601, "unsupported_feature");
}

#[test]
fn the_sdk_side_registers_shortcuts_and_uses_the_services() {
    let dir = tempfile::tempdir().unwrap();
    let ext = support::sdk_extension(
        dir.path(),
        "notes",
        "0.2",
        "notes",
        "tools = [\"save_draft\"]\nnotifications = true",
    );
    let composer = Composer::default();
    *composer.text.lock().unwrap() = "Draft: fix the parser".into();
    let shortcuts = Shortcuts::default();
    let entries = Entries::default();
    let services = ServiceBindings::new()
        .composer(composer.clone())
        .shortcuts(shortcuts.clone())
        .session_entries(entries.clone());
    let host = support::host_builder(dir.path(), &[ext])
        .bind(services)
        .build()
        .unwrap();
    let notes = host.start("notes").unwrap();
    // The registration happened inside initialize.
    assert_eq!(shortcuts.0.entries(), vec!["register notes.save"]);

    let options = CallOptions::with_deadline(Duration::from_secs(60));
    let result = notes.call_tool("save_draft", json!({}), options).unwrap();
    assert!(
        result.text().contains("as entry entry-1 (draft)"),
        "{}",
        result.text()
    );
    assert_eq!(composer.text.lock().unwrap().as_str(), "");
    assert_eq!(
        entries.0.entries(),
        vec![
            "append draft {\"text\":\"Draft: fix the parser\"}".to_string(),
            "label entry-1 \"draft\"".into(),
        ]
    );

    notes.trigger_shortcut("notes.save").unwrap();
    let events = support::collect_events(&host, Duration::from_secs(20), |events| {
        events
            .iter()
            .any(|e| matches!(e, octet_host::HostEvent::Notification { .. }))
    });
    let notified = events.iter().any(|e| match e {
        octet_host::HostEvent::Notification { notification, .. } => {
            notification.message == "the save shortcut was pressed"
        }
        _ => false,
    });
    assert!(notified, "{events:?}");
}

#[test]
fn cancelling_the_parent_cancels_the_service_call() {
    let w = world(true, "0.2", "");
    let ext = w.host.start("peer").unwrap();
    let requests = json!([request("blocked", "composer/set", json!({"text": "block"}))]);
    let options = CallOptions::with_deadline(Duration::from_secs(60));
    let pending = ext.call_tool_async("ask", json!({ "requests": requests }), options);
    support::eventually("the service receiving the request", || {
        w.composer
            .journal
            .entries()
            .iter()
            .any(|e| e.starts_with("set 5"))
    });
    pending.cancel();
    assert!(matches!(
        pending.wait(),
        Err(octet_host::CallError::Cancelled { .. })
    ));
    w.composer.journal.wait_for("cancelled=true");
    // The extension got the cancellation for its request.
    let answers = tool(&ext, "answers", json!({"ids": ["blocked"]}));
    assert_eq!(error(&answers["blocked"]).0, -32800);
}

#[test]
fn methods_of_features_the_host_does_not_offer_are_unsupported_feature() {
    for api in ["0.2", "0.4"] {
        let w = world(true, api, "");
        let ext = w.host.start("peer").unwrap();
        let methods = [
            "session/wait_for_idle",
            "session/compact",
            "terminal/acquire",
            "ui/autocomplete/register",
            // The API 0.3 session_lifecycle row is not a method of this version.
            "session/create",
        ];
        let requests: Vec<Value> = methods.iter().map(|m| request(m, m, json!({}))).collect();
        let answers = ask(&ext, Value::Array(requests));
        for method in methods {
            assert_refused(&answers[method], -32601, "unsupported_feature");
        }
        // A method no feature names stays an unknown method.
        let answers = ask(&ext, json!([request("x", "nothing/here", json!({}))]));
        assert_eq!(
            error(&answers["x"]),
            (-32601, "unknown or unnegotiated method".to_string()),
            "on {api}"
        );
    }
}

/// An API 0.4 peer that declares `model_turn_start`, refusing the features listed.
fn model_turn_peer(root: &std::path::Path, name: &str, refuse: &str) -> PathBuf {
    let dir = support::services_extension(
        root,
        name,
        "0.4",
        &format!("OCTET_PEER_REFUSE_FEATURES = {refuse:?}"),
    );
    let manifest = dir.join("extension.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    let text = text.replace(
        "[contributes]\n",
        "[contributes]\nhooks = [\"model_turn_start\"]\n",
    );
    std::fs::write(&manifest, text).unwrap();
    dir
}

#[test]
fn model_turn_hooks_go_only_to_extensions_that_negotiated_session_entries() {
    let dir = tempfile::tempdir().unwrap();
    let with = model_turn_peer(dir.path(), "with", "");
    let without = model_turn_peer(dir.path(), "without", "session_entries");
    let host = support::host_builder(dir.path(), &[with, without])
        .tool_namespace(octet_host::host::ToolNamespace::PerExtension)
        .bind(ServiceBindings::new().session_entries(Entries::default()))
        .build()
        .unwrap();
    let payload = || octet_host::validate::HookPayload::ModelTurnStart {
        run_id: "run:e1".into(),
        turn_index: 0,
        timestamp_ms: 1,
    };
    let options = || CallOptions::with_deadline(Duration::from_secs(60));
    let with = host.start("with").unwrap();
    assert!(with.run_hook(payload(), options()).is_ok());
    let without = host.start("without").unwrap();
    match without.run_hook(payload(), options()) {
        Err(octet_host::CallError::NotDeclared { kind, name }) => {
            assert_eq!((kind, name.as_str()), ("feature", "session_entries"));
        }
        other => panic!("expected not declared, got {other:?}"),
    }
    let seen = tool(&without, "seen", json!({}));
    assert_eq!(seen["hooks"], json!([]), "nothing reached the extension");
    let seen = tool(&with, "seen", json!({}));
    assert_eq!(seen["hooks"], json!(["model_turn_start"]));
}
