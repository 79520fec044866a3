//! `--timeout` is a deadline for the person waiting: the CLI prints the call's error
//! when the deadline passes, before it shuts the extension down, says what it waits
//! for when that takes a moment, and a Ctrl-C during that wait kills at once.

mod support;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use support::*;

/// `octet-host call` of a tool that is still busy at its 200 ms deadline, on an
/// extension that never answers `shutdown`; returns the child and its stderr lines.
fn busy_call(
    root: &std::path::Path,
) -> (
    std::process::Child,
    std::io::Lines<BufReader<std::process::ChildStderr>>,
) {
    let dir = peer_extension(root, "busy", "0.2", &["ignore-shutdown"], &["echo"]);
    let mut child = Command::new(octet_binary())
        .arg("--workspace")
        .arg(root)
        .arg("--no-global")
        .arg("--extension-dir")
        .arg(&dir)
        .args([
            "call",
            "busy",
            "echo",
            r#"{"sleep_ms": 60000}"#,
            "--timeout",
            "200ms",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let lines = BufReader::new(child.stderr.take().unwrap()).lines();
    (child, lines)
}

#[test]
fn the_deadline_error_comes_before_the_shutdown_wait_and_ctrl_c_ends_it() {
    let root = tempfile::tempdir().unwrap();
    let (mut child, mut lines) = busy_call(root.path());
    let first = lines.next().unwrap().unwrap();
    assert!(
        first.starts_with("error: tool `echo` of `busy` failed: no answer within 200 ms"),
        "{first}"
    );
    // The extension is still being shut down when the error is already printed.
    let second = lines.next().unwrap().unwrap();
    assert!(
        second.starts_with("waiting up to 3 s for `busy` to exit"),
        "{second}"
    );
    assert!(
        child.try_wait().unwrap().is_none(),
        "the CLI waits for the shutdown"
    );
    // Ctrl-C ends the wait with the group kill.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert_eq!(
        status.code(),
        Some(1),
        "the call's failure decides the exit code"
    );
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    assert!(
        rest.iter().all(|l| !l.starts_with("error:")),
        "the error is printed once: {rest:?}"
    );
}

#[test]
fn without_a_signal_the_shutdown_finishes_and_the_error_is_printed_once() {
    let root = tempfile::tempdir().unwrap();
    let (mut child, lines) = busy_call(root.path());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(1));
    let all: Vec<String> = lines.map_while(Result::ok).collect();
    let errors = all.iter().filter(|l| l.starts_with("error:")).count();
    assert_eq!(errors, 1, "{all:?}");
    assert!(
        all[0].starts_with("error: "),
        "the error comes first: {all:?}"
    );
}
