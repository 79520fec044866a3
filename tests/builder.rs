//! The builder's settings against real child processes: deadlines, shutdown stages,
//! the event queue, per-extension environment, a command wrapper and a stderr sink.

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use octet_host::host::{CallError, CallOptions, HostEvent};
use serde_json::{json, Value};
use support::*;

#[test]
fn the_default_request_deadline_is_the_builders() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dir = peer_extension(root.path(), "slow", "0.2", &["good"], &["echo"]);
    let host = host_builder(workspace.path(), &[dir])
        .request_deadline(Duration::from_millis(300))
        .build()
        .unwrap();
    let ext = host.start("slow").unwrap();
    match ext.call_tool("echo", json!({"sleep_ms": 3000}), CallOptions::default()) {
        Err(CallError::DeadlineExceeded { after }) => {
            assert_eq!(after, Duration::from_millis(300))
        }
        other => panic!("expected the builder's deadline, got {other:?}"),
    }
}

#[test]
fn shutdown_stages_follow_the_builder() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dir = peer_extension(
        root.path(),
        "stubborn",
        "0.2",
        &["ignore-shutdown"],
        &["echo"],
    );
    let host = host_builder(workspace.path(), &[dir])
        .shutdown_timeouts(
            Duration::from_millis(100),
            Duration::from_millis(100),
            Duration::from_secs(20),
        )
        .build()
        .unwrap();
    let pid = host.start("stubborn").unwrap().info().pid;
    let report = host.shutdown();
    let entry = &report.extensions[0];
    assert!(!entry.acknowledged && entry.forced, "{report:?}");
    assert!(wait_gone(pid, Duration::from_secs(30)));
}

#[test]
fn a_small_event_queue_drops_and_counts() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dir = peer_extension(root.path(), "chatty", "0.2", &["good"], &["echo"]);
    let host = host_builder(workspace.path(), &[dir])
        .event_queue(1)
        .build()
        .unwrap();
    // Initializing, ready and the tools: more than one event, none read meanwhile.
    let ext = host.start("chatty").unwrap();
    assert_eq!(host.events().try_iter().count(), 1);
    ext.shutdown();
    let events = collect_events(&host, Duration::from_secs(5), |events| {
        events
            .iter()
            .any(|e| matches!(e, HostEvent::EventsDropped { .. }))
    });
    assert!(
        events
            .iter()
            .any(|e| matches!(e, HostEvent::EventsDropped { count } if *count >= 1)),
        "{events:?}"
    );
}

#[test]
fn extension_environment_and_a_command_wrapper_reach_only_their_children() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let one = peer_extension(root.path(), "one", "0.2", &["good"], &["echo"]);
    let two = peer_extension(root.path(), "two", "0.2", &["good"], &["echo"]);
    let host = host_builder(workspace.path(), &[one, two])
        .tool_namespace(octet_host::host::ToolNamespace::PerExtension)
        .extension_env("one", "ONLY_ONE", "yes")
        .command_wrapper(["env", "WRAPPED=by-env"])
        .build()
        .unwrap();
    let (one, two) = (host.start("one").unwrap(), host.start("two").unwrap());
    let read = |name: &str, var: &str| -> Value {
        let ext = if name == "one" { &one } else { &two };
        let out = ext
            .call_tool("echo", json!({"env": var}), CallOptions::default())
            .unwrap();
        serde_json::from_str(&out.text()).unwrap()
    };
    assert_eq!(read("one", "ONLY_ONE"), json!("yes"));
    assert_eq!(read("two", "ONLY_ONE"), Value::Null);
    assert_eq!(read("one", "WRAPPED"), json!("by-env"));
}

#[test]
fn the_stderr_sink_sees_the_lines() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dir = peer_extension(
        root.path(),
        "dies",
        "0.2",
        &["noisy-exit-during-initialize"],
        &["echo"],
    );
    let lines = Arc::new(Mutex::new(Vec::new()));
    let seen = lines.clone();
    let host = host_builder(workspace.path(), &[dir])
        .stderr_sink(move |source, line| {
            seen.lock()
                .unwrap()
                .push(format!("{}: {line}", source.extension))
        })
        .build()
        .unwrap();
    assert!(host.start("dies").is_err());
    assert!(
        lines
            .lock()
            .unwrap()
            .contains(&"dies: RuntimeError: missing configuration file".to_string()),
        "{lines:?}"
    );
}
