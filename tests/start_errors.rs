//! Start and call errors that name their cause, against real child processes: an
//! extension that dies during `initialize`, one that never answers, entrypoints that
//! cannot run, unknown and rejected names, and frames the host refuses.

mod support;

use std::time::Duration;

use octet_host::host::{CallOptions, StartError, StartOptions};
use serde_json::{json, Value};
use support::*;

#[test]
fn an_extension_that_exits_during_initialize_is_reported_with_its_status_and_output() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dir = peer_extension(
        root.path(),
        "dies",
        "0.2",
        &["noisy-exit-during-initialize"],
        &["echo"],
    );
    let host = host(workspace.path(), &[dir]);
    let error = host.start("dies").unwrap_err();
    let StartError::TransportLost { evidence, .. } = &error else {
        panic!("expected a lost transport, got {error:?}");
    };
    assert_eq!(evidence.exit_status.as_deref(), Some("exit status: 7"));
    assert_eq!(evidence.non_json_lines, 3);
    assert_eq!(
        evidence.first_non_json.as_deref(),
        Some("starting up, step 0")
    );
    assert_eq!(
        evidence.stderr_tail,
        vec![
            "Traceback (most recent call last):".to_string(),
            "RuntimeError: missing configuration file".to_string(),
        ]
    );
    let text = error.to_string();
    for part in [
        "exit status: 7",
        "3 stdout lines were not JSON",
        "write logs to stderr",
        "RuntimeError: missing configuration file",
    ] {
        assert!(text.contains(part), "{text:?} lacks {part:?}");
    }
}

/// The deadline a start that timed out names, and its message.
fn timed_out_after(
    result: Result<octet_host::host::ExtensionHandle, StartError>,
) -> (Duration, String) {
    let error = result.err().unwrap();
    let text = error.to_string();
    match error {
        StartError::InitializeTimeout { after, .. } => (after, text),
        other => panic!("expected a timeout, got {other:?}"),
    }
}

#[test]
fn no_answer_to_initialize_says_how_long_it_waited_and_what_to_check() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dir = peer_extension(
        root.path(),
        "mute",
        "0.2",
        &["never-answer-initialize"],
        &["echo"],
    );
    // The builder sets every start's deadline; one start may set its own.
    let host = host_builder(workspace.path(), &[dir])
        .startup_timeout(Duration::from_millis(300))
        .build()
        .unwrap();
    let (after, _) = timed_out_after(host.start("mute"));
    assert_eq!(after, Duration::from_millis(300));
    let options = StartOptions::default().startup_timeout(Duration::from_millis(700));
    let (after, text) = timed_out_after(host.start_with("mute", options));
    assert_eq!(after, Duration::from_millis(700));
    assert!(text.contains("within 700 ms"), "{text}");
    assert!(text.contains("flush stdout"), "{text}");
}

#[test]
fn entrypoints_that_cannot_run_say_what_they_are() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let plain = write_manifest(
        root.path(),
        "plain",
        "name = \"plain\"\nversion = \"0.1.0\"\napi_version = \"0.1\"\n\n[entrypoint]\ncommand = \"run.py\"\n",
    );
    std::fs::write(plain.join("run.py"), "print('hi')\n").unwrap();
    let folder = write_manifest(
        root.path(),
        "folder",
        "name = \"folder\"\nversion = \"0.1.0\"\napi_version = \"0.1\"\n\n[entrypoint]\ncommand = \"./bin\"\n",
    );
    std::fs::create_dir(folder.join("bin")).unwrap();
    let host = host(workspace.path(), &[plain, folder]);
    let text = host.start("plain").err().unwrap().to_string();
    assert!(
        text.contains("run.py exists but is not executable: chmod +x"),
        "{text}"
    );
    let text = host.start("folder").err().unwrap().to_string();
    assert!(text.contains("is a directory"), "{text}");
}

#[test]
fn unknown_names_list_what_was_discovered_and_rejected_manifests_say_why() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let good = peer_extension(root.path(), "good-one", "0.2", &["good"], &["echo"]);
    let broken = write_manifest(
        root.path(),
        "broken",
        "name = \"broken\"\nversion = \"0.1.0\"\napi_version = \"0.2\"\n",
    );
    let host = host(workspace.path(), &[good, broken]);
    match host.start("broken").err().unwrap() {
        StartError::ManifestRejected { name, diagnostics } => {
            assert_eq!(name, "broken");
            assert!(
                diagnostics.iter().any(|d| d.contains("entrypoint")),
                "{diagnostics:?}"
            );
        }
        other => panic!("expected a rejected manifest, got {other:?}"),
    }
    let error = host.start("nobody").err().unwrap();
    match &error {
        StartError::UnknownExtension { discovered, .. } => {
            assert_eq!(discovered, &vec!["good-one".to_string()])
        }
        other => panic!("expected an unknown extension, got {other:?}"),
    }
    assert!(
        error.to_string().contains("discovered: good-one"),
        "{error}"
    );
}

#[test]
fn a_request_with_an_unusable_id_gets_an_error_reply_with_a_null_id() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dir = peer_extension(root.path(), "odd", "0.2", &["bad-request-id"], &["echo"]);
    let host = host(workspace.path(), &[dir]);
    let ext = host.start("odd").unwrap();
    let out = ext
        .call_tool("echo", json!({}), CallOptions::default())
        .unwrap();
    let reply: Value = serde_json::from_str(&out.text()).unwrap();
    assert_eq!(reply["id"], Value::Null, "{reply}");
    assert_eq!(reply["error"]["code"], -32600, "{reply}");
    assert_eq!(reply["jsonrpc"], "2.0");
}

#[test]
fn a_refused_initialize_shows_the_extensions_error_data() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dir = peer_extension(
        root.path(),
        "strict",
        "0.2",
        &["initialize-refusal-with-data"],
        &["echo"],
    );
    let host = host(workspace.path(), &[dir]);
    let error = host.start("strict").err().unwrap();
    match &error {
        StartError::InitializeRejected(e) => {
            assert_eq!(e.code, -32011);
            assert_eq!(e.data, Some(json!({"features": ["menu"]})));
        }
        other => panic!("expected a rejected initialize, got {other:?}"),
    }
    let text = error.to_string();
    assert!(text.contains(r#"data: {"features":["menu"]}"#), "{text}");
}
