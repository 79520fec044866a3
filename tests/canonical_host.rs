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

/// What the host makes of the API 0.3 peer whose tool results are patched with `patch`.
fn patched_result(patch: &str) -> Result<String, CallError> {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let env = format!("OCTET_PEER_RESULT_PATCH = {patch:?}");
    let dir = peer03_extension(root.path(), "patched03", "good", &["echo"], &env);
    let host = host(workspace.path(), &[dir]);
    let ext = host.start("patched03").unwrap();
    ext.call_tool("echo", json!({}), CallOptions::default())
        .map(|out| out.text())
}

#[test]
fn api_0_3_tool_results_are_closed_and_carry_is_error_and_metadata() {
    // SUPPLEMENT "API 0.3": every model is closed; a tool/call result requires
    // `is_error` and `metadata` (nullable).
    assert_eq!(patched_result("{}").unwrap(), "{}");
    assert_eq!(
        patched_result(r#"{"metadata": {"m": 1}, "structured_content": null}"#).unwrap(),
        "{}"
    );
    for (patch, member) in [
        (r#"{"trace": "t-1"}"#, "trace"),
        (r#"{"is_error": null}"#, "is_error"),
        (r#"{"metadata": null}"#, "metadata"),
    ] {
        match patched_result(patch) {
            Err(CallError::InvalidResult(error)) => {
                assert!(error.to_string().contains(member), "{patch}: {error}")
            }
            other => panic!("{patch}: expected an invalid result, got {other:?}"),
        }
    }
}

#[test]
fn api_0_3_tool_descriptions_are_at_most_4096_bytes() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dirs = vec![
        peer03_extension(
            root.path(),
            "fits03",
            "good",
            &["echo"],
            "OCTET_PEER_DESCRIPTION_BYTES = \"4096\"",
        ),
        peer03_extension(
            root.path(),
            "long03",
            "good",
            &["echo"],
            "OCTET_PEER_DESCRIPTION_BYTES = \"4097\"",
        ),
    ];
    let host = host(workspace.path(), &dirs);
    host.start("fits03").unwrap();
    match host.start("long03") {
        Err(StartError::Negotiation(NegotiationError::DescriptionTooLong { field, bytes })) => {
            assert_eq!((field.as_str(), bytes), ("tools[0].description", 4097))
        }
        other => panic!("expected the long description to be refused, got {other:?}"),
    }
}

#[test]
fn an_api_0_3_request_with_an_empty_string_id_is_refused() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dir = peer03_extension(root.path(), "asker03", "good", &["ask"], "");
    let host = host(workspace.path(), &[dir]);
    let ext = host.start("asker03").unwrap();
    // The peer sends `{"id":"","method":"session/create",...}`: the canonical wire has
    // no empty string id, so the host answers -32600 with a null id.
    let out = ext
        .call_tool(
            "ask",
            json!({"requests": [{"id": "", "method": "session/create", "params": {}}]}),
            CallOptions::default(),
        )
        .unwrap();
    let report: serde_json::Value = serde_json::from_str(&out.text()).unwrap();
    assert_eq!(report[""]["error"]["code"], -32600, "{report}");
    assert_eq!(report[""]["null_id"], true, "{report}");
    let events: Vec<_> = host.events().try_iter().collect();
    assert!(
        diagnostics(&events).iter().any(|d| matches!(
            d,
            Diagnostic::InvalidFrame {
                error: FrameError::BadId(octet_host::wire::IdError::EmptyString),
                ..
            }
        )),
        "{events:?}"
    );
}
