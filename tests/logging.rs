//! The `log` facade: diagnostics always, and every frame with `wire_trace`.

mod support;

use std::sync::Mutex;

use octet_host::host::CallOptions;
use serde_json::json;
use support::*;

/// Records every log line of this test process.
struct Recorder(Mutex<Vec<(log::Level, String, String)>>);

impl log::Log for Recorder {
    fn enabled(&self, _: &log::Metadata) -> bool {
        true
    }

    fn log(&self, record: &log::Record) {
        self.0.lock().unwrap().push((
            record.level(),
            record.target().to_string(),
            record.args().to_string(),
        ));
    }

    fn flush(&self) {}
}

static RECORDER: Recorder = Recorder(Mutex::new(Vec::new()));

#[test]
fn diagnostics_and_the_wire_trace_reach_the_log_facade() {
    log::set_logger(&RECORDER).unwrap();
    log::set_max_level(log::LevelFilter::Trace);
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dir = peer_extension(root.path(), "noisy", "0.2", &["noisy"], &["echo"]);
    let host = host_builder(workspace.path(), &[dir])
        .wire_trace(true)
        .build()
        .unwrap();
    let ext = host.start("noisy").unwrap();
    ext.call_tool("echo", json!({"k": 1}), CallOptions::default())
        .unwrap();
    host.shutdown();
    let lines = RECORDER.0.lock().unwrap();
    let wire = |direction: &str, needle: &str| {
        lines.iter().any(|(level, target, text)| {
            *level == log::Level::Trace
                && target == "octet_host::wire"
                && text.starts_with(&format!("noisy#1 {direction} "))
                && text.contains(needle)
        })
    };
    assert!(wire("->", "\"method\":\"tool/call\""), "{lines:?}");
    assert!(wire("<-", "{\\\"k\\\":1}"), "{lines:?}");
    assert!(
        lines
            .iter()
            .any(|(level, target, text)| *level == log::Level::Warn
                && target == "octet_host"
                && text.contains("ignored an invalid frame")),
        "{lines:?}"
    );
}
