//! `octet-host serve` as a sidecar process, the way Node or Python would run it: ended
//! by signals, and holding a thousand calls in flight on a bounded number of threads.

mod support;

use std::time::Duration;

use support::sidecar::*;
use support::*;

const LIVENESS: Duration = Duration::from_secs(60);

/// A sidecar with `stubborn` started: it ignores `shutdown` and stdin EOF, so only the
/// process-group kill ends it. Returns the temporary directories (keep them), the
/// sidecar and the extension's pid.
fn stubborn_sidecar() -> ([tempfile::TempDir; 2], Sidecar, u32) {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dir = peer_extension(
        root.path(),
        "stubborn",
        "0.2",
        &["ignore-shutdown"],
        &["echo"],
    );
    let mut sidecar = Sidecar::start(workspace.path(), &[dir]);
    let pid = start(&mut sidecar, 1, "stubborn");
    ([root, workspace], sidecar, pid)
}

#[test]
fn sigterm_ends_serve_in_order_with_every_result_and_no_process_left() {
    for (signal, name, code) in [
        (libc::SIGTERM, "SIGTERM", 143),
        (libc::SIGINT, "SIGINT", 130),
        (libc::SIGHUP, "SIGHUP", 129),
    ] {
        let (_dirs, mut sidecar, pid) = stubborn_sidecar();
        sidecar.send(
            r#"{"id":2,"op":"call","extension":"stubborn","tool":"echo","arguments":{"sleep_ms":20000},"call_id":"c1"}"#,
        );
        assert_eq!(sidecar.until(is_reply(2))["ok"], true);
        sidecar.signal(signal);
        let rest = sidecar.rest();
        let result = rest
            .iter()
            .find(|l| l["type"] == "result" && l["call_id"] == "c1")
            .unwrap_or_else(|| panic!("no result for the call in flight: {rest:?}"));
        assert_eq!(result["ok"], false, "{result}");
        let last = rest.last().unwrap();
        assert_eq!(last["type"], "shutdown", "{last}");
        assert_eq!(last["reason"], "signal");
        assert_eq!(last["signal"], name);
        let report = &last["report"]["extensions"][0];
        assert_eq!(report["extension"], "stubborn", "{last}");
        assert_eq!(report["forced"], true, "{last}");
        assert_eq!(sidecar.wait(), Some(code));
        assert!(wait_gone(pid, LIVENESS), "extension {pid} survived {name}");
    }
}

#[test]
fn a_second_signal_kills_at_once_and_still_ends_in_order() {
    let (_dirs, mut sidecar, pid) = stubborn_sidecar();
    sidecar.signal(libc::SIGTERM);
    sidecar.signal(libc::SIGTERM);
    let rest = sidecar.rest();
    let last = rest.last().unwrap();
    assert_eq!(last["reason"], "signal", "{last}");
    assert_eq!(last["report"]["extensions"][0]["forced"], true, "{last}");
    assert_eq!(sidecar.wait(), Some(143));
    assert!(wait_gone(pid, LIVENESS), "extension {pid} survived");
}

#[test]
fn a_thousand_calls_in_flight_cost_no_thread_each() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    // It never reads again after `initialize`, so every call stays in flight.
    let dir = peer_extension(root.path(), "deaf", "0.2", &["deaf"], &["echo"]);
    let mut sidecar = Sidecar::start(workspace.path(), &[dir]);
    start(&mut sidecar, 0, "deaf");
    let before = sidecar.threads();
    for i in 1..=1000 {
        sidecar.send(&format!(
            r#"{{"id":{i},"op":"call","extension":"deaf","tool":"echo","call_id":{i}}}"#
        ));
    }
    sidecar.until(is_reply(1000));
    // The control loop still answers at once while all of them wait.
    sidecar.send(r#"{"id":"s","op":"status"}"#);
    let status = sidecar.until(|l| l["type"] == "reply" && l["id"] == "s");
    assert_eq!(status["ok"], true);
    let during = sidecar.threads();
    assert!(
        during <= before + 2,
        "threads grew from {before} to {during} with 1000 calls in flight"
    );
    sidecar.send(r#"{"id":"end","op":"shutdown"}"#);
    let rest = sidecar.rest();
    let results = rest.iter().filter(|l| l["type"] == "result").count();
    assert_eq!(results, 1000, "every call gets its result line");
    assert_eq!(rest.last().unwrap()["id"], "end");
    assert_eq!(sidecar.wait(), Some(0));
}

#[test]
fn prompt_wakeups_give_the_threads_on_a_calls_path_the_short_slice_by_default() {
    // The test's own thread tells whether this kernel lets a thread choose its slice.
    let supported = octet_host::host::PromptWakeups::for_this_thread().applied();
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dir = peer_extension(root.path(), "echo", "0.2", &["good"], &["echo"]);
    // On by default; `--prompt-wakeups`, the flag of before it was, still works.
    let runs: [(&[&str], bool); 3] = [
        (&[], true),
        (&["--prompt-wakeups"], true),
        (&["--no-prompt-wakeups"], false),
    ];
    for (args, prompt) in runs {
        let mut sidecar =
            Sidecar::start_with_serve_args(workspace.path(), std::slice::from_ref(&dir), args);
        start(&mut sidecar, 1, "echo");
        sidecar.send(
            r#"{"id":2,"op":"call","extension":"echo","tool":"echo","arguments":{"n":1},"call_id":"c"}"#,
        );
        let result = sidecar.until(|l| l["type"] == "result" && l["call_id"] == "c");
        assert_eq!(result["ok"], true, "{result}");
        let slices = sidecar.slices();
        let short = |name: &str| {
            let (_, slice) = slices
                .iter()
                .find(|(thread, _)| thread == name)
                .unwrap_or_else(|| panic!("no thread {name} in {slices:?}"));
            *slice == Some(100_000)
        };
        // The main thread handles control lines; the host's own threads and the event
        // forwarder keep the slice the runtime gives them.
        for thread in [
            "octet-host",
            "octet-serve-inp",
            "octet-serve-cal",
            "octet-serve-wri",
        ] {
            assert_eq!(short(thread), prompt && supported, "{thread}: {slices:?}");
        }
        assert!(!short("octet-serve-eve"), "{slices:?}");
        sidecar.send(r#"{"id":"end","op":"shutdown"}"#);
        sidecar.rest();
        assert_eq!(sidecar.wait(), Some(0));
    }
}
