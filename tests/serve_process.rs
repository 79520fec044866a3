//! `octet-host serve` as a sidecar process, the way Node or Python would run it: ended
//! by signals, and holding a thousand calls in flight on a bounded number of threads.

mod support;

use std::io::{BufRead, BufReader, Lines, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::*;

const LIVENESS: Duration = Duration::from_secs(60);

/// A running `octet-host serve` with its pipes.
struct Sidecar {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Lines<BufReader<ChildStdout>>,
}

impl Sidecar {
    fn start(workspace: &Path, dirs: &[PathBuf]) -> Sidecar {
        let mut command = Command::new(octet_binary());
        command.arg("--workspace").arg(workspace).arg("--no-global");
        for dir in dirs {
            command.arg("--extension-dir").arg(dir);
        }
        let mut child = command
            .arg("serve")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut sidecar = Sidecar {
            child,
            stdin,
            lines,
        };
        assert_eq!(sidecar.next().unwrap()["type"], "ready");
        sidecar
    }

    fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
    }

    /// The next output line; `None` at the end of the output.
    fn next(&mut self) -> Option<Value> {
        let line = self.lines.next()?.unwrap();
        Some(serde_json::from_str(&line).unwrap())
    }

    /// Lines until one matches `wanted`, which is returned.
    fn until(&mut self, wanted: impl Fn(&Value) -> bool) -> Value {
        loop {
            let line = self.next().expect("serve ended early");
            if wanted(&line) {
                return line;
            }
        }
    }

    /// Every remaining line, up to the end of the output.
    fn rest(&mut self) -> Vec<Value> {
        std::iter::from_fn(|| self.next()).collect()
    }

    fn signal(&self, signal: i32) {
        unsafe { libc::kill(self.child.id() as i32, signal) };
    }

    /// The exit code, waiting at most [`LIVENESS`].
    fn wait(mut self) -> Option<i32> {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            if start.elapsed() > LIVENESS {
                let _ = self.child.kill();
                panic!("serve did not exit");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn threads(&self) -> usize {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        status
            .lines()
            .find_map(|line| line.strip_prefix("Threads:"))
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    }
}

fn is_reply(id: i64) -> impl Fn(&Value) -> bool {
    move |line| line["type"] == "reply" && line["id"] == id
}

/// Starts `name` and returns its pid.
fn start(sidecar: &mut Sidecar, id: i64, name: &str) -> u32 {
    sidecar.send(&format!(
        r#"{{"id":{id},"op":"start","extension":"{name}"}}"#
    ));
    let started = sidecar.until(is_reply(id));
    assert_eq!(started["ok"], true, "{started}");
    started["pid"].as_u64().unwrap() as u32
}

#[test]
fn sigterm_ends_serve_in_order_with_every_result_and_no_process_left() {
    for (signal, name, code) in [
        (libc::SIGTERM, "SIGTERM", 143),
        (libc::SIGINT, "SIGINT", 130),
        (libc::SIGHUP, "SIGHUP", 129),
    ] {
        let root = tempfile::tempdir().unwrap();
        let workspace = tempfile::tempdir().unwrap();
        // It ignores `shutdown` and stdin EOF: only the process-group kill ends it.
        let dir = peer_extension(
            root.path(),
            "stubborn",
            "0.2",
            &["ignore-shutdown"],
            &["echo"],
        );
        let mut sidecar = Sidecar::start(workspace.path(), &[dir]);
        let pid = start(&mut sidecar, 1, "stubborn");
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
