//! The host against real child processes: the raw Python peer (tests/fixtures/peer.py)
//! for exact and misbehaving wire traffic.

mod support;

use std::time::{Duration, Instant};

use octet_host::host::{CallError, CallOptions, Diagnostic, LifecycleState, StartError};
use octet_host::negotiation::NegotiationError;
use octet_host::wire::{FrameError, RequestId};
use serde_json::json;
use support::*;

const LIVENESS: Duration = Duration::from_secs(20);

#[test]
fn tool_call_round_trip_on_every_feature_wire() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dirs = vec![
        peer_extension(root.path(), "peer-one", "0.1", &["good"], &["echo"]),
        peer_extension(root.path(), "peer-two", "0.2", &["good"], &["echo"]),
        peer_extension(root.path(), "peer-four", "0.4", &["good"], &["echo"]),
    ];
    let host = host(workspace.path(), &dirs);
    for name in ["peer-one", "peer-two", "peer-four"] {
        let ext = host.start(name).unwrap();
        let out = ext
            .call_tool("echo", json!({"b": 2, "a": "x"}), CallOptions::default())
            .unwrap();
        assert_eq!(out.text(), r#"{"a":"x","b":2}"#, "{name}");
        assert!(!out.is_error);
    }
    let report = host.shutdown();
    assert_eq!(report.extensions.len(), 3);
    for ext in &report.extensions {
        assert!(ext.acknowledged, "{ext:?}");
        assert!(!ext.forced, "{ext:?}");
        assert_eq!(ext.final_state, LifecycleState::Stopped);
    }
}

#[test]
fn malformed_frames_are_diagnostics_and_the_answer_still_arrives() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dir = peer_extension(root.path(), "noisy", "0.2", &["noisy"], &["echo"]);
    let host = host(workspace.path(), &[dir]);
    let ext = host.start("noisy").unwrap();
    let out = ext
        .call_tool("echo", json!({"n": 1}), CallOptions::default())
        .unwrap();
    assert_eq!(out.text(), r#"{"n":1}"#);
    // The garbage came before the answer, so its diagnostics are already queued.
    let events: Vec<_> = host.events().try_iter().collect();
    let diags = diagnostics(&events);
    let has = |pred: &dyn Fn(&Diagnostic) -> bool| diags.iter().any(|d| pred(d));
    assert!(has(&|d| matches!(
        d,
        Diagnostic::InvalidFrame {
            error: FrameError::Parse { .. },
            ..
        }
    )));
    assert!(has(&|d| matches!(
        d,
        Diagnostic::InvalidFrame {
            error: FrameError::NotObject,
            ..
        }
    )));
    assert!(has(&|d| matches!(
        d,
        Diagnostic::InvalidFrame {
            error: FrameError::BadVersion,
            ..
        }
    )));
    assert!(has(&|d| matches!(
        d,
        Diagnostic::UnknownResponseId {
            id: RequestId::Number(999999)
        }
    )));
    assert!(has(
        &|d| matches!(d, Diagnostic::UnknownResponseId { id: RequestId::String(s) } if s == "nobody")
    ));
    assert!(has(
        &|d| matches!(d, Diagnostic::OversizedFrame { bytes } if *bytes > 2 * 1024 * 1024)
    ));
    // The blank line is a parse error too, never silently skipped.
    let parse_errors = diags
        .iter()
        .filter(|d| {
            matches!(
                d,
                Diagnostic::InvalidFrame {
                    error: FrameError::Parse { .. },
                    ..
                }
            )
        })
        .count();
    assert_eq!(parse_errors, 2, "{diags:?}");
    // And the connection is still fine.
    let again = ext
        .call_tool("echo", json!({"n": 2}), CallOptions::default())
        .unwrap();
    assert_eq!(again.text(), r#"{"n":2}"#);
}

#[test]
fn a_rejected_initialize_names_the_rule_and_kills_the_process_group() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let pid_file = root.path().join("grandchild.pid");
    let dirs = vec![
        peer_extension(
            root.path(),
            "wrong-version",
            "0.2",
            &[
                "bad-initialize",
                r#"{"$merge": true, "api_version": "0.4"}"#,
            ],
            &["echo"],
        ),
        peer_extension(
            root.path(),
            "missing-tool",
            "0.1",
            &["bad-initialize", r#"{"$merge": true, "tools": []}"#],
            &["echo"],
        ),
    ];
    let host = host(workspace.path(), &dirs);
    match host.start("wrong-version") {
        Err(StartError::Negotiation(NegotiationError::ApiVersionMismatch { .. })) => {}
        other => panic!("expected a version mismatch, got {other:?}"),
    }
    match host.start("missing-tool") {
        Err(StartError::Negotiation(NegotiationError::ToolSetMismatch {
            missing,
            unexpected,
        })) => {
            assert_eq!(missing, vec!["echo".to_string()]);
            assert!(unexpected.is_empty());
        }
        other => panic!("expected a tool set mismatch, got {other:?}"),
    }
    let _ = pid_file;
    // Nothing is left running.
    let deadline = Instant::now() + LIVENESS;
    let live = || host.status().iter().any(|s| s.pid.is_some());
    while live() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!live(), "{:?}", host.status());
    // Both are parked generation-0 entries: an initial failure is never retried.
    let status = host.status();
    assert_eq!(status.len(), 2);
    for entry in status {
        assert_eq!(entry.generation, 0);
        assert!(matches!(
            entry.parked,
            Some(octet_host::supervisor::ParkReason::InitialFailure { .. })
        ));
    }
}

#[test]
fn initialize_failures_are_typed() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dirs = vec![
        peer_extension(root.path(), "dies", "0.2", &["exit-during-initialize"], &[]),
        peer_extension(root.path(), "refuses", "0.2", &["initialize-error"], &[]),
    ];
    let host = host(workspace.path(), &dirs);
    match host.start("dies") {
        Err(StartError::TransportLost { .. }) => {}
        other => panic!("expected a lost transport, got {other:?}"),
    }
    match host.start("refuses") {
        Err(StartError::InitializeRejected(e)) => assert_eq!(e.code, -32603),
        other => panic!("expected a rejection, got {other:?}"),
    }
    match host.start("nobody") {
        Err(StartError::UnknownExtension { name, .. }) => assert_eq!(name, "nobody"),
        other => panic!("expected unknown extension, got {other:?}"),
    }
}

#[test]
fn requires_octet_is_checked_before_any_process_starts() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let marker = root.path().join("started");
    let manifest = format!(
        "name = \"old\"\nversion = \"1.0.0\"\napi_version = \"0.1\"\nrequires_octet = \"=0.7.0\"\n\n\
         [entrypoint]\ncommand = \"python3\"\nargs = [{:?}, \"spawn-grandchild\", {:?}]\n",
        peer_script().to_string_lossy(),
        marker.to_string_lossy(),
    );
    let dir = write_manifest(root.path(), "old", &manifest);
    let host = host(workspace.path(), &[dir]);
    match host.start("old") {
        Err(StartError::Manifest(e)) => assert!(e.to_string().contains("0.7.0"), "{e}"),
        other => panic!("expected a requires_octet error, got {other:?}"),
    }
    std::thread::sleep(Duration::from_millis(200));
    assert!(!marker.exists(), "the entrypoint must not have run");
}

#[test]
fn a_crash_mid_call_fails_the_call_at_once() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dir = peer_extension(root.path(), "crasher", "0.2", &["crash-on-call"], &["echo"]);
    let host = host(workspace.path(), &[dir]);
    let ext = host.start("crasher").unwrap();
    let start = Instant::now();
    let err = ext
        .call_tool("echo", json!({}), CallOptions::default())
        .unwrap_err();
    assert!(matches!(err, CallError::TransportLost { .. }), "{err:?}");
    assert!(start.elapsed() < LIVENESS);
    // The supervisor restarts it as generation 2 (it had been ready once).
    let deadline = Instant::now() + LIVENESS;
    let restarted = || {
        host.status()
            .iter()
            .any(|s| s.generation == 2 && s.state == LifecycleState::Ready)
    };
    while !restarted() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(restarted(), "{:?}", host.status());
    assert_eq!(host.status()[0].restart_attempts, 1);
}

#[test]
fn a_result_that_breaks_the_rules_fails_only_that_call() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dirs = vec![
        peer_extension(root.path(), "liar", "0.2", &["bad-result"], &["echo"]),
        peer_extension(root.path(), "honest", "0.2", &["good"], &["echo"]),
    ];
    let host = host(workspace.path(), &dirs);
    let liar = host.start("liar").unwrap();
    let honest = host.start("honest").unwrap();
    let err = liar
        .call_tool("echo", json!({}), CallOptions::default())
        .unwrap_err();
    assert!(matches!(err, CallError::InvalidResult(_)), "{err:?}");
    assert_eq!(
        honest
            .call_tool("echo", json!({"k": 1}), CallOptions::default())
            .unwrap()
            .text(),
        r#"{"k":1}"#
    );
    let states: Vec<_> = host
        .status()
        .into_iter()
        .map(|s| (s.extension, s.state))
        .collect();
    assert!(
        states.contains(&("liar".to_string(), LifecycleState::Ready)),
        "{states:?}"
    );
}

#[test]
fn undeclared_tools_are_refused_without_a_round_trip() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dir = peer_extension(root.path(), "small", "0.1", &["good"], &["echo"]);
    let host = host(workspace.path(), &[dir]);
    let ext = host.start("small").unwrap();
    let err = ext
        .call_tool("nope", json!({}), CallOptions::default())
        .unwrap_err();
    assert_eq!(
        err,
        CallError::NotDeclared {
            kind: "tool",
            name: "nope".into()
        }
    );
}

#[test]
fn a_deadline_cancels_the_call_and_the_late_answer_is_a_diagnostic() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dir = peer_extension(root.path(), "slow", "0.1", &["good"], &["echo"]);
    let host = host(workspace.path(), &[dir]);
    let ext = host.start("slow").unwrap();
    let err = ext
        .call_tool(
            "echo",
            json!({"sleep_ms": 600}),
            CallOptions::with_deadline(Duration::from_millis(100)),
        )
        .unwrap_err();
    assert_eq!(
        err,
        CallError::DeadlineExceeded {
            after: Duration::from_millis(100)
        }
    );
    let events = collect_events(&host, LIVENESS, |events| {
        diagnostics(events)
            .iter()
            .any(|d| matches!(d, Diagnostic::LateResponse { .. }))
    });
    assert!(diagnostics(&events)
        .iter()
        .any(|d| matches!(d, Diagnostic::LateResponse { .. })));
    // The late answer settled the request within the grace period: still usable.
    let out = ext
        .call_tool("echo", json!({"after": true}), CallOptions::default())
        .unwrap();
    assert_eq!(out.text(), r#"{"after":true}"#);
}

#[test]
fn wait_timeout_returns_none_while_the_call_runs_then_its_answer() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dir = peer_extension(root.path(), "slow", "0.1", &["good"], &["echo"]);
    let host = host(workspace.path(), &[dir]);
    let ext = host.start("slow").unwrap();
    let mut call = ext.call_tool_async("echo", json!({"sleep_ms": 400}), CallOptions::default());
    // The peer sleeps 400 ms before it answers: a wait of 1 ms times out, and the
    // call is still in flight afterwards.
    assert!(call.wait_timeout(Duration::from_millis(1)).is_none());
    let out = call
        .wait_timeout(LIVENESS)
        .expect("the answer came within the liveness bound")
        .unwrap();
    assert_eq!(out.text(), r#"{"sleep_ms":400}"#);
}

#[test]
fn shutdown_removes_background_grandchildren() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let pid_file = root.path().join("grandchild.pid");
    let dir = peer_extension(
        root.path(),
        "parent",
        "0.1",
        &["spawn-grandchild", &pid_file.to_string_lossy()],
        &["echo"],
    );
    let host = host(workspace.path(), &[dir]);
    let ext = host.start("parent").unwrap();
    let child_pid = ext.info().pid;
    let grandchild: u32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(process_alive(grandchild));
    let report = host.shutdown();
    assert!(report.extensions[0].acknowledged);
    assert!(
        wait_gone(grandchild, LIVENESS),
        "grandchild {grandchild} survived"
    );
    assert!(!process_alive(child_pid), "child {child_pid} survived");
}

#[test]
fn an_extension_that_ignores_shutdown_is_killed_within_the_bounds() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dirs = vec![
        peer_extension(root.path(), "deaf", "0.1", &["ignore-shutdown"], &[]),
        peer_extension(root.path(), "lingers", "0.2", &["linger-after-ack"], &[]),
        peer_extension(root.path(), "polite", "0.4", &["good"], &[]),
    ];
    let host = host(workspace.path(), &dirs);
    let pids: Vec<u32> = ["deaf", "lingers", "polite"]
        .iter()
        .map(|n| host.start(n).unwrap().info().pid)
        .collect();
    let start = Instant::now();
    let report = host.shutdown();
    // All three run in parallel under the 3 s aggregate deadline (generous slack for
    // a loaded machine; the point is that it is bounded, not how fast).
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "{:?}",
        start.elapsed()
    );
    let by_name = |n: &str| {
        report
            .extensions
            .iter()
            .find(|e| e.extension == n)
            .unwrap()
            .clone()
    };
    let deaf = by_name("deaf");
    assert!(!deaf.acknowledged && deaf.forced, "{deaf:?}");
    let lingers = by_name("lingers");
    assert!(lingers.acknowledged && lingers.forced, "{lingers:?}");
    let polite = by_name("polite");
    assert!(polite.acknowledged && !polite.forced, "{polite:?}");
    for pid in pids {
        assert!(!process_alive(pid), "{pid} survived");
    }
}

#[test]
fn one_extension_stops_while_others_keep_working() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dirs = vec![
        peer_extension(root.path(), "first", "0.2", &["good"], &["echo"]),
        peer_extension(root.path(), "second", "0.2", &["good"], &["echo"]),
    ];
    let host = host(workspace.path(), &dirs);
    let first = host.start("first").unwrap();
    let second = host.start("second").unwrap();
    let report = first.shutdown().unwrap();
    assert!(report.extensions[0].acknowledged);
    assert!(matches!(
        first.call_tool("echo", json!({}), CallOptions::default()),
        Err(CallError::NotStarted { .. })
    ));
    assert_eq!(
        second
            .call_tool("echo", json!({"ok": 1}), CallOptions::default())
            .unwrap()
            .text(),
        r#"{"ok":1}"#
    );
    // A stopped extension can be started again, as a new generation.
    let again = host.start("first").unwrap();
    assert_eq!(again.info().generation, 2);
}

#[test]
fn the_execution_context_carries_the_owner_triple_from_api_0_2_on() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dirs = [
        peer_extension(root.path(), "ctx-one", "0.1", &["echo-context"], &["echo"]),
        peer_extension(root.path(), "ctx-two", "0.2", &["echo-context"], &["echo"]),
    ];
    let host = octet_host::ExtensionHost::builder(workspace.path())
        .no_global_extensions()
        .extension_dir(&dirs[0])
        .extension_dir(&dirs[1])
        .tool_namespace(octet_host::host::ToolNamespace::PerExtension)
        .session_id("durable-session")
        .build()
        .unwrap();
    let context = |name: &str| -> serde_json::Value {
        let ext = host.start(name).unwrap();
        let out = ext
            .call_tool("echo", json!({}), CallOptions::default())
            .unwrap();
        serde_json::from_str(&out.text()).unwrap()
    };
    let old = context("ctx-one");
    assert_eq!(old["workspace"], json!(host.workspace().to_string_lossy()));
    assert_eq!(old["execution_scope"], json!(null));
    assert!(
        old.get("resource_owner").is_none(),
        "API 0.1 omits the owner: {old}"
    );
    let new = context("ctx-two");
    let owner = &new["resource_owner"];
    assert_eq!(owner["session_id"], json!("durable-session"));
    assert_eq!(owner["process_generation"], json!(1));
    assert!(owner["extension_instance_id"]
        .as_str()
        .is_some_and(|s| !s.is_empty()));
    assert!(new["host"].is_object());
}
