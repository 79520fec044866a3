//! API 0.3's host-driven capabilities against a stdlib-only Python peer that checks the
//! offer as strictly as upstream's extensions: `lifecycle_events` (`hook/run` with
//! `session_start`/`session_end`), `migration.adapter.v1` and `provider_stream`.

mod support;

use std::path::{Path, PathBuf};
use std::time::Duration;

use octet_host::host::{
    CallError, CallOptions, Diagnostic, HostEvent, LifecycleNotification, Outcome,
    ProviderStreamRequest, Settlement,
};
use octet_host::validate::host_driven::{ProviderEventKind, Severity};
use serde_json::{json, Value};
use support::*;

const LIVENESS: Duration = Duration::from_secs(30);

/// The 0.3 peer, taking the optional capabilities in `select`.
fn peer03(root: &Path, name: &str, scenario: &str, select: &str) -> PathBuf {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/peer03.py");
    let manifest = format!(
        "name = {name:?}\nversion = \"0.1.0\"\napi_version = \"0.3\"\n\n\
         [entrypoint]\ncommand = \"python3\"\nargs = [{:?}, {scenario:?}]\n\
         env = {{ OCTET_PEER_TOOLS = \"echo,seen\", OCTET_PEER_SELECT = {select:?} }}\n\n\
         [contributes]\ntools = [\"echo\", \"seen\"]\n",
        script.to_string_lossy(),
    );
    write_manifest(root, name, &manifest)
}

fn seen(ext: &octet_host::host::ExtensionHandle) -> Value {
    let out = ext
        .call_tool("seen", json!({}), CallOptions::default())
        .unwrap();
    serde_json::from_str(&out.text()).unwrap()
}

fn refused(events: &[HostEvent], method: &str) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            HostEvent::Diagnostic {
                diagnostic: Diagnostic::Refused { method: m, reason },
                ..
            } if m == method => Some(reason.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn sessions_reach_a_0_3_extension_as_lifecycle_hooks() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dirs = [
        peer03(root.path(), "hooked", "good", "lifecycle_events"),
        peer03(root.path(), "plain", "good", ""),
        peer03(root.path(), "rude", "bad-disposition", "lifecycle_events"),
    ];
    let host = host(workspace.path(), &dirs);
    let hooked = host.start("hooked").unwrap();
    let plain = host.start("plain").unwrap();
    host.start("rude").unwrap();
    host.lifecycle(LifecycleNotification::SessionStarted {
        session_id: "s-1".into(),
    });
    host.lifecycle(LifecycleNotification::SessionSettled {
        session_id: "s-1".into(),
        settlement: Settlement {
            outcome: Outcome::Failed,
            duration_ms: 42,
            reason: Some("the model gave up".into()),
        },
    });
    let events = collect_events(&host, LIVENESS, |events| {
        refused(events, "hook/run").len() >= 2
    });
    let hooks = seen(&hooked)["hooks"].clone();
    let generation = hooked.info().generation;
    assert_eq!(hooks[0]["hook"], "session_start", "{hooks}");
    assert_eq!(hooks[0]["payload"]["binding"]["session_id"], "s-1");
    assert_eq!(
        hooks[0]["payload"]["binding"]["process_generation"],
        generation
    );
    assert_eq!(
        hooks[1],
        json!({"hook": "session_end", "payload": {
            "binding": hooks[0]["payload"]["binding"],
            "outcome": "failed", "reason": "crash", "duration_ms": 42}})
    );
    // Not selected: nothing is sent.
    assert!(seen(&plain).get("hooks").is_none());
    // A deny without a reason breaks the closed model: diagnosed, never a veto.
    let problems = refused(&events, "hook/run");
    assert!(
        problems.iter().all(|p| p.contains("disposition.reason")),
        "{problems:?}"
    );
}

#[test]
fn migration_detects_and_imports_with_closed_models() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dirs = [
        peer03(root.path(), "migrator", "good", "migration.adapter.v1"),
        peer03(root.path(), "sloppy", "open-import", "migration.adapter.v1"),
        peer03(root.path(), "plain", "good", ""),
    ];
    let host = host(workspace.path(), &dirs);
    let migrator = host.start("migrator").unwrap();
    let detection = migrator
        .migration_detect("/old/tool", CallOptions::default())
        .unwrap();
    assert!(detection.detected);
    assert_eq!(detection.config_paths, ["/old/tool/config.toml"]);
    assert_eq!(detection.diagnostics[0].severity, Severity::Warning);
    let import = migrator
        .migration_import(
            "/old/tool",
            detection.config_paths.clone(),
            CallOptions::default(),
        )
        .unwrap();
    assert_eq!(import.models[0].provider, "acme");
    // Bounds are checked before anything is sent.
    assert!(matches!(
        migrator.migration_detect(&"x".repeat(4097), CallOptions::default()),
        Err(CallError::InvalidRequest { .. })
    ));
    let sloppy = host.start("sloppy").unwrap();
    match sloppy.migration_import("/r", vec![], CallOptions::default()) {
        Err(CallError::InvalidResult(e)) => assert!(e.to_string().contains("extra"), "{e}"),
        other => panic!("expected an invalid result, got {other:?}"),
    }
    let plain = host.start("plain").unwrap();
    assert!(matches!(
        plain.migration_detect("/r", CallOptions::default()),
        Err(CallError::NotDeclared { kind: "method", .. })
    ));
}

#[test]
fn provider_streams_deliver_ordered_events_and_can_be_cancelled() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dir = peer03(root.path(), "streamer", "good", "provider_stream");
    let host = host(workspace.path(), &[dir]);
    let ext = host.start("streamer").unwrap();
    let stream = ext
        .provider_stream(
            ProviderStreamRequest::new("acme", "m1", json!({"prompt": "hi"})),
            CallOptions::default(),
        )
        .unwrap();
    assert!(stream.acceptance.accepted);
    // Every event in order until `finished`, after which the channel closes; the
    // repeated sequence number was dropped.
    let events: Vec<_> = stream.events().iter().collect();
    let kinds: Vec<ProviderEventKind> = events.iter().map(|e| e.kind).collect();
    assert_eq!(
        kinds,
        [
            ProviderEventKind::Started,
            ProviderEventKind::TextDelta,
            ProviderEventKind::TextDelta,
            ProviderEventKind::Finished
        ]
    );
    let text: String = events
        .iter()
        .filter_map(|e| e.payload["text"].as_str())
        .collect();
    assert_eq!(text, "hello");

    // A held stream is ended by the host with provider/cancel.
    let held = ext
        .provider_stream(
            ProviderStreamRequest::new("acme", "m1", json!({"hold": true})),
            CallOptions::default(),
        )
        .unwrap();
    let first = held.events().recv_timeout(LIVENESS).unwrap();
    assert_eq!(first.kind, ProviderEventKind::Started);
    let stream_id = held.acceptance.stream_id.clone();
    held.cancel();
    assert!(
        held.events().recv_timeout(LIVENESS).is_err(),
        "the channel closes"
    );
    let start = std::time::Instant::now();
    loop {
        let cancels = seen(&ext)["stream_cancels"].clone();
        if cancels == json!([stream_id]) {
            break;
        }
        assert!(start.elapsed() < LIVENESS, "{cancels}");
        std::thread::sleep(Duration::from_millis(20));
    }
    let events = collect_events(&host, Duration::from_millis(100), |_| false);
    let dropped = refused(&events, "provider/event");
    assert!(
        dropped
            .iter()
            .any(|r| r.contains("sequence 2 does not increase")),
        "{dropped:?}"
    );
}
