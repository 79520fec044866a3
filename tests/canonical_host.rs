//! The host on the API 0.3 canonical wire against real processes: the SDK example and
//! a stdlib-only Python peer written from the SUPPLEMENT's description.

mod support;

use std::path::{Path, PathBuf};
use std::time::Duration;

use octet_host::host::{CallError, CallOptions, Diagnostic, LifecycleState, StartError};
use octet_host::negotiation::NegotiationError;
use octet_host::wire::FrameError;
use serde_json::json;
use support::*;

fn peer03(root: &Path, name: &str, scenario: &str) -> PathBuf {
    peer03_extension(root, name, scenario, &["echo", "seen"], "")
}

#[test]
fn the_sdk_example_speaks_the_canonical_wire_through_the_host() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dir = sdk_extension(
        root.path(),
        "hello-canonical",
        "0.3",
        "hello-world",
        "tools = [\"hello_world\"]",
    );
    let host = host(workspace.path(), &[dir]);
    let ext = host.start("hello-canonical").unwrap();
    let contract = ext
        .info()
        .negotiated
        .contract
        .clone()
        .expect("a 0.3 contract");
    assert!(contract.allows("tool/call"));
    let out = ext
        .call_tool(
            "hello_world",
            json!({"name": "canon"}),
            CallOptions::default(),
        )
        .unwrap();
    assert_eq!(out.text(), "Hello, canon!");
    let report = host.shutdown();
    assert!(report.extensions[0].acknowledged, "{report:?}");
    assert!(!report.extensions[0].forced);
}

#[test]
fn a_python_peer_written_from_the_description_works_and_misbehaviour_is_typed() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dirs = vec![
        peer03(root.path(), "good03", "good"),
        peer03(root.path(), "floaty03", "float-result"),
        peer03(root.path(), "commands03", "commands-member"),
    ];
    let host = host(workspace.path(), &dirs);
    let good = host.start("good03").unwrap();
    let out = good
        .call_tool("echo", json!({"b": 1, "a": "x"}), CallOptions::default())
        .unwrap();
    assert_eq!(out.text(), r#"{"a":"x","b":1}"#);
    // Cancellation reaches the peer as a canonical $/cancelRequest.
    let pending = good.call_tool_async("echo", json!({"sleep_ms": 2000}), CallOptions::default());
    std::thread::sleep(Duration::from_millis(200));
    pending.cancel();
    assert!(matches!(pending.wait(), Err(CallError::Cancelled { .. })));

    // A non-canonical answer is an invalid frame: the call never sees its result, but
    // its id can still be read, so the call fails at once (not at its 30 s deadline).
    let floaty = host.start("floaty03").unwrap();
    let err = floaty
        .call_tool("echo", json!({}), CallOptions::default())
        .unwrap_err();
    match &err {
        CallError::RefusedResponse { reason } => {
            assert!(reason.contains("not octet-canonical-json-v1"), "{reason}")
        }
        other => panic!("expected a refused response, got {other:?}"),
    }
    let events: Vec<_> = host.events().try_iter().collect();
    assert!(diagnostics(&events).iter().any(|d| matches!(
        d,
        Diagnostic::InvalidFrame {
            error: FrameError::NotCanonical(_),
            ..
        }
    )));

    // A `commands` member in the 0.3 initialize result is refused by name.
    match host.start("commands03") {
        Err(StartError::Negotiation(NegotiationError::UnknownMember { field })) => {
            assert!(field.contains("commands"), "{field}")
        }
        other => panic!("expected the commands member to be refused, got {other:?}"),
    }
    let states: Vec<_> = host
        .status()
        .into_iter()
        .filter(|s| s.pid.is_some())
        .map(|s| s.state)
        .collect();
    assert!(
        states.iter().all(|s| *s != LifecycleState::Crashed),
        "{states:?}"
    );
}
