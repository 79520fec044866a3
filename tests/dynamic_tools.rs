//! Dynamic tools against a raw Python peer (sections 2.11, 2.12): a call's result is
//! validated against the catalog epoch the call named, one identifier rule holds for
//! every tool name, and tool names are reserved across the host from `initialize` on.

mod support;

use octet_host::host::{CallError, CallOptions, StartError};
use octet_host::negotiation::{NameProblem, NegotiationError};
use serde_json::{json, Value};
use support::*;

#[test]
fn a_result_is_validated_against_the_epoch_its_call_named() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dir = peer_extension(root.path(), "shaper", "0.2", &["dynamic"], &["shape"]);
    let host = host(workspace.path(), &[dir]);
    let ext = host.start("shaper").unwrap();
    // Epoch 0 requires `old`. The handler re-registers `shape` to require `new`, then
    // answers per the old schema: right for the epoch its call named.
    let out = ext
        .call_tool("shape", json!({}), CallOptions::default())
        .unwrap();
    assert_eq!(out.structured_content, Some(json!({"old": 1})));
    let registered: Value = serde_json::from_str(&out.text()).unwrap();
    assert_eq!(registered["revision"], 1, "{registered}");
    // The next call names epoch 1, which requires `new`: the same answer is refused.
    match ext.call_tool("shape", json!({}), CallOptions::default()) {
        Err(CallError::InvalidResult(e)) => {
            assert!(e.to_string().contains("new"), "{e}")
        }
        other => panic!("expected an invalid result, got {other:?}"),
    }
}

#[test]
fn one_identifier_rule_holds_for_every_tool_name() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    // `initialize` offers a name the manifest rule would refuse.
    let bad = peer_extension_with(
        root.path(),
        "spaced",
        "0.2",
        &[
            "bad-initialize",
            r#"{"$merge": true, "tools": [{"name": "x y/z", "description": "d", "parameters": {"type": "object"}}]}"#,
        ],
        &[],
        "",
        "",
    );
    let dynamic = peer_extension(root.path(), "adder", "0.2", &["dynamic"], &["register"]);
    let host = host(workspace.path(), &[bad, dynamic]);
    match host.start("spaced").err().unwrap() {
        StartError::Negotiation(NegotiationError::InvalidName { field, problem }) => {
            assert_eq!(field, "tools[0].name");
            assert_eq!(problem, NameProblem::NotIdentifier { ch: ' ' });
        }
        other => panic!("expected an invalid name, got {other:?}"),
    }
    let ext = host.start("adder").unwrap();
    let register = |name: &str| -> Value {
        let tools = json!([{"name": name, "description": "d", "parameters": {"type": "object"}}]);
        let out = ext
            .call_tool("register", json!({"tools": tools}), CallOptions::default())
            .unwrap();
        serde_json::from_str(&out.text()).unwrap()
    };
    assert_eq!(register("bad name!"), json!(-32602));
    assert_eq!(
        register("good_name")["tools"],
        json!(["register", "good_name"])
    );
}

#[test]
fn tool_names_are_reserved_across_the_host_from_initialize_on() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let first = peer_extension(root.path(), "first", "0.2", &["good"], &["t1"]);
    let second = peer_extension(root.path(), "second", "0.2", &["dynamic"], &["t1"]);
    let own = peer_extension(root.path(), "own", "0.2", &["good"], &["read_file"]);
    let host = host_builder(workspace.path(), &[first, second, own])
        .host_tools(["read_file"])
        .build()
        .unwrap();
    let running = host.start("first").unwrap();
    let error = host.start("second").err().unwrap();
    match &error {
        StartError::ToolConflict { tool, owner } => {
            assert_eq!(tool, "t1");
            assert_eq!(owner, "extension `first`");
        }
        other => panic!("expected a tool conflict, got {other:?}"),
    }
    assert!(
        error.to_string().contains("unique across the host"),
        "{error}"
    );
    match host.start("own").err().unwrap() {
        StartError::ToolConflict { owner, .. } => assert_eq!(owner, "the host"),
        other => panic!("expected a tool conflict, got {other:?}"),
    }
    // The refused generations are gone (parked generation-0 entries remain); the
    // first extension keeps its tool.
    let status = host.status();
    assert!(
        status
            .iter()
            .all(|s| s.extension == "first" || s.pid.is_none()),
        "{status:?}"
    );
    running
        .call_tool("t1", json!({}), CallOptions::default())
        .unwrap();
}

#[test]
fn the_current_catalog_and_its_changes_are_visible_to_the_embedder() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dir = peer_extension(root.path(), "adder", "0.2", &["dynamic"], &["register"]);
    let host = host(workspace.path(), &[dir]);
    let ext = host.start("adder").unwrap();
    let initial = ext.tools().unwrap();
    assert_eq!((initial.generation, initial.revision), (1, 0));
    let tools = json!([{"name": "added", "description": "d", "parameters": {"type": "object"}}]);
    ext.call_tool("register", json!({"tools": tools}), CallOptions::default())
        .unwrap();
    let now = ext.tools().unwrap();
    assert_eq!(now.revision, 1);
    let names: Vec<&str> = now.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["register", "added"]);
    // The handle's own start-time description does not follow; `tools` does.
    assert_eq!(ext.info().negotiated.tools.len(), 1);
    let changes: Vec<(u64, Vec<String>)> = host
        .events()
        .try_iter()
        .filter_map(|e| match e {
            octet_host::HostEvent::ToolsChanged {
                revision, names, ..
            } => Some((revision, names)),
            _ => None,
        })
        .collect();
    assert_eq!(
        changes,
        [
            (0, vec!["register".to_string()]),
            (1, vec!["register".to_string(), "added".to_string()])
        ]
    );
    host.shutdown();
    assert!(ext.tools().is_none());
}
