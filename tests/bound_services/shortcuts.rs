//! Shortcuts: registered inside `initialize`, bounded, triggered only when admitted.

use octet_host::host::{BoundNotification, NotifyError};
use octet_host::limits::MAX_SHORTCUTS;
use octet_host::services::bound::Refusal;
use serde_json::{json, Value};

use super::support::tool_json as tool;
use super::world::{assert_refused, seen_until, world};

fn shortcuts_env(shortcuts: Value) -> String {
    format!("OCTET_PEER_SHORTCUTS = {:?}", shortcuts.to_string())
}

fn shortcut(id: &str) -> Value {
    json!({"id": id, "key": "ctrl+k", "description": "d"})
}

#[test]
fn shortcuts_register_inside_initialize_and_trigger_only_when_admitted() {
    let mut list: Vec<Value> = vec![
        shortcut("open"),
        shortcut("refused"),
        shortcut("twice"),
        shortcut("twice"),
    ];
    list.push(json!({"id": "i".repeat(129), "key": "k", "description": ""}));
    let env = format!(
        "{}, OCTET_PEER_LATE_SHORTCUT = \"late\"",
        shortcuts_env(json!(list))
    );
    let w = world(true, "0.2", &env);
    let ext = w.host.start("peer").unwrap();
    // The late registration is sent, and answered, after initialize settled.
    let seen = seen_until(&ext, "the late registration", |seen| {
        seen["registrations"].get("late").is_some()
    });
    let regs = &seen["registrations"];
    assert_eq!(regs["open"]["result"], json!({}));
    assert_refused(&regs["refused"], -32602, "invalid_request");
    assert_refused(&regs["twice"], -32602, "invalid_request");
    assert_refused(&regs["i".repeat(129)], -32602, "bounds_exceeded");
    assert_refused(&regs["late"], -32002, "not_foreground_owner");

    ext.trigger_shortcut("open").unwrap();
    for id in ["refused", "twice", "late", "unknown"] {
        match ext.trigger_shortcut(id) {
            Err(NotifyError::Refused(r)) => assert_eq!(r.refusal, Refusal::InvalidRequest, "{id}"),
            other => panic!("{id}: {other:?}"),
        }
    }
    let notifications = seen_until(&ext, "the trigger", |seen| {
        !seen["notifications"].as_array().unwrap().is_empty()
    })["notifications"]
        .clone();
    assert_eq!(
        notifications,
        json!([{"method": "shortcut/trigger", "params": {"id": "open"}}])
    );

    // A new generation does not inherit the old one's admissions unless it registers.
    let generation = ext.info().generation;
    ext.reload().unwrap();
    match ext.notify_generation(
        generation,
        BoundNotification::ShortcutTrigger { id: "open".into() },
    ) {
        Err(NotifyError::Refused(r)) => assert!(r.detail.contains("stale"), "{r}"),
        other => panic!("{other:?}"),
    }
    ext.trigger_shortcut("open").unwrap();
}

#[test]
fn at_most_64_shortcuts_per_process() {
    let list: Vec<Value> = (0..=MAX_SHORTCUTS)
        .map(|i| shortcut(&format!("s{i}")))
        .collect();
    let w = world(true, "0.2", &shortcuts_env(json!(list)));
    let ext = w.host.start("peer").unwrap();
    let seen = tool(&ext, "seen", json!({}));
    let regs = &seen["registrations"];
    assert_eq!(regs[format!("s{}", MAX_SHORTCUTS - 1)]["result"], json!({}));
    assert_refused(
        &regs[format!("s{MAX_SHORTCUTS}")],
        -32602,
        "bounds_exceeded",
    );
}

#[test]
fn shortcuts_need_the_negotiated_feature() {
    let w = world(false, "0.2", &shortcuts_env(json!([shortcut("open")])));
    let ext = w.host.start("peer").unwrap();
    let seen = tool(&ext, "seen", json!({}));
    assert_refused(
        &seen["registrations"]["open"],
        -32601,
        "unsupported_feature",
    );
    match ext.trigger_shortcut("open") {
        Err(NotifyError::Refused(r)) => assert_eq!(r.refusal, Refusal::UnsupportedFeature),
        other => panic!("{other:?}"),
    }
}
