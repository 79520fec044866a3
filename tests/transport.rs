//! The transport against real processes: environment, working directory, process
//! groups, scratch directories, command resolution, and the reader, writer and stderr
//! threads. Fixtures are stdlib-only Python 3 scripts in `tests/fixtures/`.

#![cfg(unix)]

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
use std::time::{Duration, Instant};

use octet_host::manifest::{
    ApiVersion, Capabilities, Contributes, Entrypoint, LocatedManifest, Manifest, Source,
};
use octet_host::transport::{
    child_environment, has_exited, kill_group, resolve_command, spawn, FrameState, InboundFrame,
    IoConfig, OutboundFrame, ScratchDir, SpawnError, SpawnSpec, StderrEvent, TransportEvent,
    TrySendFrameError,
};
use octet_host::wire::FrameError;
use parking_lot::Mutex;
use serde_json::Value;

use support::*;

// ---------------------------------------------------------------------------
// Spawning: environment, working directory, process group, scratch, resolution.
// ---------------------------------------------------------------------------

fn located(dir: &Path) -> LocatedManifest {
    LocatedManifest {
        manifest: Manifest {
            name: "env-probe".into(),
            version: semver::Version::new(1, 2, 3),
            api_version: ApiVersion::V0_2,
            requires_octet: None,
            description: None,
            entrypoint: Entrypoint {
                command: "python3".into(),
                args: vec![],
                env: BTreeMap::from([("EXTRA_VAR".to_string(), "from manifest".to_string())]),
            },
            capabilities: Capabilities {
                environment: vec!["SSH_AUTH_SOCK".into()],
                ..Capabilities::default()
            },
            contributes: Contributes::default(),
        },
        manifest_path: dir.join("extension.toml"),
        dir: dir.to_path_buf(),
        source: Source::Explicit,
    }
}

/// Runs `report_env.py` as the extension of `located`, in `workspace`, and returns its
/// report plus the child's pid.
fn report(spec: &SpawnSpec) -> (Value, u32) {
    let running = start(spec);
    let pid = running.process.pid();
    let outcome = running.read_until_closed();
    let params = outcome
        .seen
        .iter()
        .find_map(|s| notification(s).filter(|(m, _)| *m == "report"))
        .map(|(_, p)| p.clone())
        .expect("a report notification");
    let (mut process, _) = running.stop_and_join();
    assert!(process.finish().expect("finish").success());
    (params, pid)
}

#[test]
fn child_environment_is_sanitized_in_a_real_child() {
    let ext_dir = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let scratch = ScratchDir::new().unwrap();
    let located = located(ext_dir.path());
    let host_env = |name: &str| -> Option<OsString> {
        match name {
            "PATH" => host_path(),
            "HOME" => Some("/home/probe".into()),
            "SSH_AUTH_SOCK" => Some("/tmp/agent.sock".into()),
            "AWS_SECRET_ACCESS_KEY" => Some("do-not-leak".into()),
            "GITHUB_TOKEN" => Some("do-not-leak".into()),
            _ => None,
        }
    };
    let env = child_environment(&located, workspace.path(), scratch.path(), &host_env);
    let mut spec = python_spec("report_env.py", &[], workspace.path());
    spec.env = env;
    let (report, _) = report(&spec);

    let env: BTreeMap<String, String> =
        serde_json::from_value(report["env"].clone()).expect("env is a string map");
    let keys: BTreeSet<&str> = env.keys().map(String::as_str).collect();
    let mut expected = BTreeSet::from([
        "HOME",
        "SSH_AUTH_SOCK",
        "EXTRA_VAR",
        "OCTET_EXTENSION_API_VERSION",
        "OCTET_EXTENSION_NAME",
        "OCTET_EXTENSION_DIR",
        "OCTET_EXTENSION_MANIFEST",
        "OCTET_WORKSPACE",
        "OCTET_EXTENSION_SCRATCH",
    ]);
    if host_path().is_some() {
        expected.insert("PATH");
    }
    // Nothing of the test process's own environment (CARGO_*, RUST_*, ...) and no
    // secret reaches the child.
    assert_eq!(keys, expected);
    assert!(env.values().all(|v| v != "do-not-leak"));
    assert_eq!(env["HOME"], "/home/probe");
    assert_eq!(env["SSH_AUTH_SOCK"], "/tmp/agent.sock");
    assert_eq!(env["EXTRA_VAR"], "from manifest");
    assert_eq!(env["OCTET_EXTENSION_API_VERSION"], "0.2");
    assert_eq!(env["OCTET_EXTENSION_NAME"], "env-probe");
    assert_eq!(Path::new(&env["OCTET_EXTENSION_DIR"]), ext_dir.path());
    assert_eq!(
        Path::new(&env["OCTET_EXTENSION_MANIFEST"]),
        ext_dir.path().join("extension.toml")
    );
    assert_eq!(Path::new(&env["OCTET_WORKSPACE"]), workspace.path());
    assert_eq!(Path::new(&env["OCTET_EXTENSION_SCRATCH"]), scratch.path());
}

#[test]
fn child_runs_in_the_workspace_and_leads_its_own_process_group() {
    let workspace = tempfile::tempdir().unwrap();
    let (report, pid) = report(&python_spec(
        "report_env.py",
        &["a b", "$HOME"],
        workspace.path(),
    ));
    assert_eq!(
        fs::canonicalize(report["cwd"].as_str().unwrap()).unwrap(),
        fs::canonicalize(workspace.path()).unwrap()
    );
    assert_eq!(report["pid"], u64::from(pid));
    assert_eq!(report["pgid"], u64::from(pid), "the child leads its group");
    // SAFETY: getpgrp has no preconditions.
    let own_group = unsafe { libc::getpgrp() };
    assert_ne!(report["pgid"], i64::from(own_group));
    assert_eq!(
        report["args"],
        serde_json::json!(["a b", "$HOME"]),
        "no shell"
    );
}

#[test]
fn scratch_dir_is_private_usable_by_the_child_and_removed() {
    let scratch = ScratchDir::new().unwrap();
    let path = scratch.path().to_path_buf();
    let meta = fs::symlink_metadata(&path).unwrap();
    assert!(meta.is_dir());
    assert_eq!(meta.mode() & 0o7777, 0o700);
    // SAFETY: geteuid has no preconditions.
    assert_eq!(meta.uid(), unsafe { libc::geteuid() });

    let mut spec = command_spec(
        "sh",
        &["-c", r#"echo hi > "$OCTET_EXTENSION_SCRATCH/note""#],
        &path,
    );
    spec.env
        .push(("OCTET_EXTENSION_SCRATCH".into(), path.clone().into()));
    let running = start(&spec);
    running.read_until_closed();
    let (mut process, _) = running.stop_and_join();
    assert!(process.finish().unwrap().success());
    assert_eq!(fs::read_to_string(path.join("note")).unwrap(), "hi\n");

    drop(scratch);
    assert!(!path.exists(), "the scratch directory is removed on drop");
}

fn write_executable(path: &Path, mode: u32) {
    fs::write(path, "#!/bin/sh\nexit 0\n").unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
}

#[test]
fn resolve_command_prefers_the_manifest_dir_then_path() {
    let ext = tempfile::tempdir().unwrap();
    let bin = tempfile::tempdir().unwrap();
    write_executable(&ext.path().join("tool"), 0o755);
    write_executable(&bin.path().join("tool"), 0o755);
    write_executable(&bin.path().join("only-on-path"), 0o755);
    // Beside the manifest but not executable: skipped for a bare name.
    write_executable(&ext.path().join("plain"), 0o644);
    write_executable(&bin.path().join("plain"), 0o755);
    // A directory beside the manifest is not a command either.
    fs::create_dir(ext.path().join("dir-named")).unwrap();
    write_executable(&bin.path().join("dir-named"), 0o755);
    let path_var =
        std::env::join_paths(["", "relative/bin", bin.path().to_str().unwrap()]).unwrap();
    let resolve = |command: &str| resolve_command(command, ext.path(), Some(&path_var));

    assert_eq!(resolve("tool").unwrap(), ext.path().join("tool"));
    assert_eq!(
        resolve("only-on-path").unwrap(),
        bin.path().join("only-on-path")
    );
    assert_eq!(resolve("plain").unwrap(), bin.path().join("plain"));
    assert_eq!(resolve("dir-named").unwrap(), bin.path().join("dir-named"));

    match resolve("missing") {
        Err(SpawnError::NotFound { command, searched }) => {
            assert_eq!(command, "missing");
            // Empty and relative PATH entries are never searched.
            assert_eq!(
                searched,
                vec![ext.path().join("missing"), bin.path().join("missing")]
            );
        }
        other => panic!("expected NotFound, got {other:?}"),
    }
    assert!(matches!(
        resolve_command("tool", ext.path(), None),
        Ok(p) if p == ext.path().join("tool")
    ));
}

#[test]
fn resolve_command_treats_slashes_as_paths_relative_to_the_manifest() {
    let ext = tempfile::tempdir().unwrap();
    fs::create_dir(ext.path().join("bin")).unwrap();
    write_executable(&ext.path().join("bin/run"), 0o700);
    write_executable(&ext.path().join("bin/data"), 0o600);
    let path_var = host_path();
    let resolve = |command: &str| resolve_command(command, ext.path(), path_var.as_deref());

    assert_eq!(resolve("bin/run").unwrap(), ext.path().join("bin/run"));
    assert_eq!(resolve("./bin/run").unwrap(), ext.path().join("./bin/run"));
    let absolute = ext.path().join("bin/run");
    assert_eq!(resolve(absolute.to_str().unwrap()).unwrap(), absolute);
    assert!(matches!(
        resolve("bin/data"),
        Err(SpawnError::NotExecutable { path }) if path == ext.path().join("bin/data")
    ));
    assert!(matches!(
        resolve("bin"),
        Err(SpawnError::NotFound { .. }) | Err(SpawnError::NotExecutable { .. })
    ));
    // A path is never looked up through PATH, even when PATH has the name.
    assert!(matches!(
        resolve("./sh"),
        Err(SpawnError::NotFound { searched, .. }) if searched == vec![ext.path().join("./sh")]
    ));
}

#[test]
fn spawn_reports_a_program_that_cannot_start() {
    let dir = tempfile::tempdir().unwrap();
    let spec = SpawnSpec {
        program: dir.path().join("does-not-exist"),
        args: vec![],
        env: vec![],
        cwd: dir.path().to_path_buf(),
    };
    match spawn(&spec) {
        Err(SpawnError::Io { program, error }) => {
            assert_eq!(program, dir.path().join("does-not-exist"));
            assert_eq!(error.kind(), std::io::ErrorKind::NotFound);
        }
        other => panic!("expected Io, got {other:?}"),
    }
}

#[test]
fn spawned_pipes_are_nonblocking_and_close_on_exec() {
    use std::os::fd::AsRawFd;
    let dir = tempfile::tempdir().unwrap();
    let child = spawn(&command_spec("cat", &[], dir.path())).unwrap();
    let fds = [
        child.stdin.as_ref().unwrap().as_raw_fd(),
        child.stdout.as_ref().unwrap().as_raw_fd(),
        child.stderr.as_ref().unwrap().as_raw_fd(),
    ];
    for fd in fds {
        // SAFETY: F_GETFL/F_GETFD only read the flags of an open descriptor.
        let (fl, fd_flags) = unsafe {
            (
                libc::fcntl(fd, libc::F_GETFL),
                libc::fcntl(fd, libc::F_GETFD),
            )
        };
        assert_ne!(fl & libc::O_NONBLOCK, 0);
        assert_ne!(fd_flags & libc::FD_CLOEXEC, 0);
    }
    let mut process = child.into_process();
    // cat sees EOF (its pipes were closed with the SpawnedChild) and exits.
    assert!(process.wait_exited_timeout(LIVENESS).unwrap());
    assert!(process.finish().unwrap().success());
}

// ---------------------------------------------------------------------------
// Reader.
// ---------------------------------------------------------------------------

fn emit(args: &[&str]) -> ReadOutcome {
    emit_with(args, IoConfig::default())
}

fn emit_with(args: &[&str], config: IoConfig) -> ReadOutcome {
    let dir = tempfile::tempdir().unwrap();
    let running = start_with(
        &python_spec("emit.py", args, dir.path()),
        config,
        Box::new(|_| {}),
    );
    let outcome = running.read_until_closed();
    let (mut process, rest) = running.stop_and_join();
    assert!(process.finish().unwrap().success());
    assert!(
        !rest.iter().any(|e| matches!(
            e,
            TransportEvent::Frames(_) | TransportEvent::ReaderClosed { .. }
        )),
        "nothing follows ReaderClosed: {rest:?}"
    );
    outcome
}

fn methods(seen: &[Seen]) -> Vec<String> {
    seen.iter()
        .map(|s| match s {
            Seen::Frame(InboundFrame::Message(_)) => {
                notification(s).map_or("<message>".into(), |(m, _)| m.to_string())
            }
            Seen::Frame(InboundFrame::Invalid { error, .. }) => format!("<invalid {error:?}>"),
            Seen::Frame(InboundFrame::Oversized { bytes }) => format!("<oversized {bytes}>"),
            Seen::Closed {
                unterminated,
                error,
            } => {
                format!("<closed {unterminated:?} {}>", error.is_some())
            }
        })
        .collect()
}

#[test]
fn reader_joins_frames_split_across_reads() {
    let outcome = emit(&["split"]);
    assert_eq!(
        methods(&outcome.seen),
        ["one", "two", "<closed None false>"]
    );
    assert_eq!(notification(&outcome.seen[0]).unwrap().1["n"], 1);
}

#[test]
fn reader_splits_on_lf_only() {
    let outcome = emit(&["separators"]);
    let seen = &outcome.seen;
    assert_eq!(seen.len(), 6, "{:?}", methods(seen));
    assert_eq!(notification(&seen[0]).unwrap().0, "a\u{2028}b");
    assert_eq!(notification(&seen[0]).unwrap().1["s"], "x\u{2029}y");
    assert_eq!(
        notification(&seen[1]).unwrap().0,
        "cr",
        "CR before LF is whitespace"
    );
    for frame in &seen[2..4] {
        assert!(
            matches!(
                frame,
                Seen::Frame(InboundFrame::Invalid {
                    error: FrameError::Parse { .. },
                    ..
                })
            ),
            "CR and U+2028 do not end a frame: {frame:?}"
        );
    }
    assert_eq!(notification(&seen[4]).unwrap().0, "last");
}

#[test]
fn reader_discards_an_oversized_line_and_keeps_its_neighbours() {
    let outcome = emit(&["oversized"]);
    let big = r#"{"jsonrpc":"2.0","method":"big","params":{"pad":""}}"#.len() + 2 * 1024 * 1024 + 1;
    assert_eq!(
        methods(&outcome.seen),
        [
            "before".to_string(),
            format!("<oversized {big}>"),
            "after".to_string(),
            "<closed None false>".to_string()
        ]
    );
}

#[test]
fn reader_applies_the_shared_frame_limit() {
    let config = IoConfig {
        frame_limit: Arc::new(AtomicUsize::new(100)),
        ..IoConfig::default()
    };
    let outcome = emit_with(&["long", "100", "101", "99"], config);
    assert_eq!(
        methods(&outcome.seen),
        ["long", "<oversized 101>", "long", "<closed None false>"]
    );
}

#[test]
fn reader_classifies_invalid_frames() {
    let outcome = emit(&["invalid"]);
    let kinds: Vec<_> = outcome
        .seen
        .iter()
        .map(|s| match s {
            Seen::Frame(InboundFrame::Invalid { error, bytes }) => Some((error.clone(), *bytes)),
            _ => None,
        })
        .collect();
    assert!(
        matches!(kinds[0], Some((FrameError::Parse { .. }, 1))),
        "empty frame"
    );
    assert!(matches!(kinds[1], Some((FrameError::Parse { .. }, 9))));
    assert_eq!(kinds[2], Some((FrameError::NotObject, 6)));
    assert!(matches!(kinds[3], Some((FrameError::BadVersion, _))));
    assert!(matches!(kinds[4], Some((FrameError::MethodNotString, _))));
    assert!(matches!(
        kinds[5],
        Some((FrameError::ResultAndErrorMismatch, _))
    ));
    assert!(matches!(kinds[6], Some((FrameError::ErrorWithoutId(_), _))));
    assert_eq!(notification(&outcome.seen[7]).unwrap().0, "valid");
    assert!(matches!(
        outcome.seen[8],
        Seen::Closed {
            unterminated: None,
            error: None
        }
    ));
    assert_eq!(outcome.seen.len(), 9);
}

#[test]
fn reader_batches_the_frames_of_one_read() {
    let outcome = emit(&["batch"]);
    let frames = outcome.seen.len() - 1;
    assert_eq!(frames, 100);
    assert!(
        outcome.batches < 10,
        "100 frames written at once arrive in few batches, got {}",
        outcome.batches
    );
    for (i, frame) in outcome.seen[..100].iter().enumerate() {
        assert_eq!(notification(frame).unwrap().1["i"], i, "in order");
    }
}

#[test]
fn reader_reports_an_unterminated_tail_once_at_eof() {
    let outcome = emit(&["unterminated"]);
    assert_eq!(methods(&outcome.seen), ["whole", "<closed Some(10) false>"]);
}

// ---------------------------------------------------------------------------
// Writer.
// ---------------------------------------------------------------------------

fn frame(text: &str, state: Option<Arc<FrameState>>) -> OutboundFrame {
    OutboundFrame {
        bytes: format!("{text}\n").into_bytes(),
        state,
    }
}

fn wait_until(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + LIVENESS;
    while !condition() {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn writer_skips_a_frame_cancelled_before_it_started() {
    let dir = tempfile::tempdir().unwrap();
    let go = dir.path().join("go");
    let running = start(&python_spec(
        "stdin_echo.py",
        &[go.to_str().unwrap()],
        dir.path(),
    ));
    let writer = running.io.writer.clone();

    // A frame far larger than the pipe: the writer starts it and then waits, because
    // the child reads nothing until `go` exists.
    let big_state = FrameState::new();
    let mut big = vec![b'b'; 2 * 1024 * 1024];
    big.push(b'\n');
    writer
        .send(OutboundFrame {
            bytes: big,
            state: Some(big_state.clone()),
        })
        .unwrap();
    wait_until("the big frame started", || big_state.is_started());

    let cancelled = FrameState::new();
    writer
        .send(frame("cancelled", Some(cancelled.clone())))
        .unwrap();
    writer.send(frame("after", None)).unwrap();
    assert!(
        cancelled.try_skip(),
        "not started while the big frame is written"
    );
    assert!(!big_state.try_skip(), "a started frame cannot be skipped");

    fs::write(&go, b"").unwrap();
    writer.close();
    let outcome = running.read_until_closed();
    let lines: Vec<(u64, String)> = outcome
        .seen
        .iter()
        .filter_map(notification)
        .filter(|(m, _)| *m == "line")
        .map(|(_, p)| {
            (
                p["len"].as_u64().unwrap(),
                p["head"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(
        lines[0].0,
        2 * 1024 * 1024 + 1,
        "the started frame is whole"
    );
    assert_eq!(lines[1], (6, "after\n".to_string()));
    let eof = outcome
        .seen
        .iter()
        .filter_map(notification)
        .find(|(m, _)| *m == "eof");
    assert_eq!(eof.unwrap().1["lines"], 2);
    assert_eq!(outcome.written, 3, "written and skipped frames are counted");
    assert!(matches!(
        writer.send(frame("late", None)),
        Err(octet_host::transport::WriterClosed(_))
    ));
    let (mut process, _) = running.stop_and_join();
    assert!(process.finish().unwrap().success());
}

#[test]
fn writer_close_writes_the_queue_then_closes_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let running = start(&python_spec("stdin_echo.py", &[], dir.path()));
    for text in ["one", "two", "three"] {
        running.io.writer.send(frame(text, None)).unwrap();
    }
    running.io.writer.close();
    assert!(running.io.writer.is_closed());
    let outcome = running.read_until_closed();
    let heads: Vec<_> = outcome
        .seen
        .iter()
        .filter_map(notification)
        .map(|(m, p)| format!("{m}:{}", p.get("head").or(p.get("lines")).unwrap()))
        .collect();
    assert_eq!(
        heads,
        [
            r#"line:"one\n""#,
            r#"line:"two\n""#,
            r#"line:"three\n""#,
            "eof:3"
        ]
    );
    assert!(matches!(
        running.io.writer.try_send(frame("late", None)),
        Err(TrySendFrameError::Closed(_))
    ));
    let (mut process, _) = running.stop_and_join();
    assert!(process.finish().unwrap().success());
}

#[test]
fn writer_to_a_child_that_never_reads_stops_promptly() {
    let dir = tempfile::tempdir().unwrap();
    let running = start(&command_spec("sleep", &["1000"], dir.path()));
    let writer = running.io.writer.clone();
    let chunk = "x".repeat(16 * 1024);

    // The host keeps sending: the pipe fills, then the queue, then `send` blocks.
    let first = FrameState::new();
    let sender = std::thread::spawn({
        let writer = writer.clone();
        let chunk = chunk.clone();
        let first = first.clone();
        move || {
            let mut accepted = 0;
            let mut state = Some(first);
            while writer.send(frame(&chunk, state.take())).is_ok() {
                accepted += 1;
            }
            accepted
        }
    });
    wait_until("the writer took a frame and the queue is full", || {
        first.is_started() && writer.queued() == writer.capacity()
    });
    let (mut process, rest) = running.stop_and_join();
    let accepted = sender.join().expect("send() returned after the stop");
    assert!(accepted > writer.capacity(), "accepted {accepted}");
    assert!(!rest
        .iter()
        .any(|e| matches!(e, TransportEvent::WriterFailed { .. })));
    let written: usize = rest
        .iter()
        .map(|e| match e {
            TransportEvent::Written { frames } => *frames,
            _ => 0,
        })
        .sum();
    assert!(
        written < accepted,
        "not everything was written ({written} of {accepted})"
    );
    assert!(writer.send(frame("late", None)).is_err());
    process.terminate_and_reap().unwrap();
}

#[test]
fn writer_reports_a_broken_pipe_once() {
    let dir = tempfile::tempdir().unwrap();
    let running = start(&command_spec("true", &[], dir.path()));
    assert!(running.process.wait_exited_timeout(LIVENESS).unwrap());
    running
        .io
        .writer
        .send(frame("into the void", None))
        .unwrap();
    let error = loop {
        match running.next_event() {
            TransportEvent::WriterFailed { error } => break error,
            TransportEvent::Written { frames } => panic!("{frames} frames written to a dead child"),
            _ => {}
        }
    };
    assert_eq!(error.kind(), std::io::ErrorKind::BrokenPipe);
    // All three threads end by themselves: EOF on stdout and stderr, and the failure.
    wait_until("all I/O threads ended", || running.io.is_finished());
    assert!(running.io.writer.send(frame("late", None)).is_err());
    let (mut process, rest) = running.stop_and_join();
    assert!(!rest
        .iter()
        .any(|e| matches!(e, TransportEvent::WriterFailed { .. })));
    assert!(process.finish().unwrap().success());
}

// ---------------------------------------------------------------------------
// stderr drain.
// ---------------------------------------------------------------------------

#[test]
fn stderr_flood_never_blocks_the_child_and_events_are_rate_bounded() {
    const FLOOD: usize = 50_000_000;
    let dir = tempfile::tempdir().unwrap();
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = {
        let events = events.clone();
        Box::new(move |event: StderrEvent| {
            // A slow sink: the drain must keep reading regardless.
            std::thread::sleep(Duration::from_millis(2));
            events.lock().push(event);
        })
    };
    let started = Instant::now();
    let running = start_with(
        &python_spec("stderr_flood.py", &[&FLOOD.to_string()], dir.path()),
        IoConfig::default(),
        sink,
    );
    let outcome = running.read_until_closed();
    let done = outcome
        .seen
        .iter()
        .filter_map(notification)
        .find(|(m, _)| *m == "done");
    let lines = FLOOD / 100;
    assert_eq!(done.expect("the child finished").1["lines"], lines);
    running.io.writer.close();
    wait_until("the drain reached EOF", || running.io.is_finished());
    let elapsed = started.elapsed();
    let tail = running.io.stderr_tail.clone();
    let (mut process, _) = running.stop_and_join();
    assert!(process.finish().unwrap().success());

    let totals = tail.totals();
    assert_eq!(totals.bytes as usize, 10_000 + FLOOD + "final\n".len());
    assert_eq!(totals.lines as usize, 1 + lines + 1);
    assert_eq!(
        totals.cut_bytes as usize,
        9_999 - octet_host::limits::MAX_STDERR_LINE_BYTES
    );

    let snapshot = tail.snapshot();
    assert_eq!(snapshot.len(), octet_host::limits::STDERR_TAIL_LINES);
    assert_eq!(snapshot.last().unwrap(), "final");
    assert!(snapshot[snapshot.len() - 2].starts_with(&format!("line {:09} ", lines - 1)));

    let events = events.lock();
    match &events[0] {
        StderrEvent::Line { text, cut } => {
            assert_eq!(text.len(), octet_host::limits::MAX_STDERR_LINE_BYTES);
            assert_eq!(*cut, 9_999 - octet_host::limits::MAX_STDERR_LINE_BYTES);
        }
        other => panic!("first event {other:?}"),
    }
    let shown = events
        .iter()
        .filter(|e| matches!(e, StderrEvent::Line { .. }))
        .count();
    let suppressed: u64 = events
        .iter()
        .map(|e| match e {
            StderrEvent::Suppressed { count } => *count,
            _ => 0,
        })
        .sum();
    assert_eq!(
        shown as u64 + suppressed,
        totals.lines,
        "every line is accounted for"
    );
    assert_eq!(suppressed, totals.suppressed);
    let windows = elapsed.as_secs() + 2;
    let bound = windows * u64::from(octet_host::limits::STDERR_EVENTS_PER_SECOND);
    assert!(
        shown as u64 <= bound,
        "{shown} line events in {elapsed:?} exceed the rate bound"
    );
    let summaries = events.len() - shown;
    assert!(
        summaries as u64 <= windows,
        "one summary per window at most"
    );
}

// ---------------------------------------------------------------------------
// Process groups and shutdown.
// ---------------------------------------------------------------------------

/// A shell that starts `sleep 1000` in the background, reports its pid as a
/// notification, then runs `rest`.
fn background_sleeper(rest: &str, cwd: &Path) -> SpawnSpec {
    let script = format!(
        r#"sleep 1000 & printf '{{"jsonrpc":"2.0","method":"pid","params":[%d]}}\n' "$!"; {rest}"#
    );
    command_spec("sh", &["-c", &script], cwd)
}

fn grandchild_pid(running: &Running) -> u32 {
    loop {
        if let TransportEvent::Frames(frames) = running.next_event() {
            let seen = Seen::Frame(frames.into_iter().next().unwrap());
            let (method, params) = notification(&seen).expect("a notification");
            assert_eq!(method, "pid");
            return params[0].as_u64().unwrap() as u32;
        }
    }
}

#[test]
fn grandchild_holding_stdout_does_not_wedge_join_after_stop() {
    let dir = tempfile::tempdir().unwrap();
    let running = start(&background_sleeper("exit 0", dir.path()));
    let grandchild = grandchild_pid(&running);
    assert!(running.process.wait_exited_timeout(LIVENESS).unwrap());
    assert!(running.process.exited_unreaped().unwrap());
    assert_eq!(
        process_state(running.process.pid()),
        Some('Z'),
        "kept as a zombie"
    );
    // The grandchild still holds stdout: no EOF arrives.
    assert!(running
        .events
        .recv_timeout(Duration::from_millis(300))
        .is_err());

    let pid = running.process.pid();
    let (mut process, _) = running.stop_and_join();
    assert!(!is_gone(grandchild), "stopping the threads kills nothing");
    assert!(process.finish().unwrap().success());
    assert!(wait_gone(grandchild), "finish() killed the group");
    let reaped = has_exited(pid).unwrap_err();
    assert_eq!(
        reaped.raw_os_error(),
        Some(libc::ECHILD),
        "no zombie is left"
    );
    assert!(
        process.kill_group(libc::SIGKILL).is_err(),
        "a reaped group is not ours"
    );
}

#[test]
fn kill_group_kills_a_background_grandchild() {
    let dir = tempfile::tempdir().unwrap();
    let running = start(&background_sleeper("wait", dir.path()));
    let grandchild = grandchild_pid(&running);
    let pid = running.process.pid();
    assert!(!running.process.has_exited().unwrap());
    assert!(!is_gone(grandchild));

    kill_group(pid, libc::SIGKILL).unwrap();
    assert!(wait_gone(grandchild));
    assert!(running.process.wait_exited_timeout(LIVENESS).unwrap());
    let outcome = running.read_until_closed();
    assert!(matches!(
        outcome.seen.last(),
        Some(Seen::Closed { error: None, .. })
    ));
    let (mut process, _) = running.stop_and_join();
    let status = process.finish().unwrap();
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(libc::SIGKILL));
    assert!(kill_group(pid, 0).is_ok(), "ESRCH is not an error");
}

#[test]
fn terminate_and_drop_kill_the_group_and_leave_no_zombie() {
    let dir = tempfile::tempdir().unwrap();

    let running = start(&background_sleeper("wait", dir.path()));
    let grandchild = grandchild_pid(&running);
    let (mut process, _) = running.stop_and_join();
    let pid = process.pid();
    assert!(process.terminate_and_reap().is_ok());
    assert!(wait_gone(grandchild));
    assert_eq!(
        has_exited(pid).unwrap_err().raw_os_error(),
        Some(libc::ECHILD)
    );

    let running = start(&background_sleeper("wait", dir.path()));
    let grandchild = grandchild_pid(&running);
    let (process, _) = running.stop_and_join();
    let pid = process.pid();
    drop(process);
    assert!(wait_gone(grandchild), "dropping kills the group");
    assert_eq!(
        has_exited(pid).unwrap_err().raw_os_error(),
        Some(libc::ECHILD),
        "and reaps"
    );
}

mod support {

    use std::ffi::OsString;
    use std::path::{Path, PathBuf};
    use std::sync::OnceLock;
    use std::time::{Duration, Instant};

    use crossbeam_channel::{Receiver, Sender};
    use octet_host::transport::{
        resolve_command, spawn, start_io, ChildProcess, ConnId, GenerationIo, InboundFrame,
        IoConfig, SpawnSpec, StderrSink, TransportEvent, TransportMessage,
    };
    use octet_host::wire::Message;

    /// Generous bound for anything that should happen "soon" on a loaded machine.
    pub const LIVENESS: Duration = Duration::from_secs(60);

    /// Capacity of the test's event channel.
    pub const EVENTS: usize = 64;

    /// The path of a fixture script.
    pub fn fixture(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name)
    }

    /// The host's PATH as an `OsString`.
    pub fn host_path() -> Option<OsString> {
        std::env::var_os("PATH")
    }

    /// A spec running `command` (resolved through PATH) with `args` in `cwd`, with only
    /// PATH in its environment.
    pub fn command_spec(command: &str, args: &[&str], cwd: &Path) -> SpawnSpec {
        let program = resolve_command(command, cwd, host_path().as_deref()).expect("command found");
        SpawnSpec {
            program,
            args: args.iter().map(|s| s.to_string()).collect(),
            env: host_path()
                .map(|p| vec![("PATH".into(), p)])
                .unwrap_or_default(),
            cwd: cwd.to_path_buf(),
        }
    }

    /// The Python interpreter itself: `python3` on PATH may be a wrapper (pyenv's shim
    /// adds variables to the environment), which would blur what the host passed.
    pub fn python() -> &'static Path {
        static PYTHON: OnceLock<PathBuf> = OnceLock::new();
        PYTHON.get_or_init(|| {
            let output = std::process::Command::new("python3")
                .args(["-c", "import sys; sys.stdout.write(sys.executable)"])
                .output()
                .expect("python3 runs");
            assert!(output.status.success());
            PathBuf::from(String::from_utf8(output.stdout).unwrap())
        })
    }

    /// A spec running a fixture script with the Python interpreter.
    pub fn python_spec(script: &str, args: &[&str], cwd: &Path) -> SpawnSpec {
        let mut spec = command_spec("python3", args, cwd);
        spec.program = python().to_path_buf();
        spec.args
            .insert(0, fixture(script).to_str().unwrap().to_string());
        spec
    }

    /// A running child with its I/O threads and the test's end of the event channel.
    pub struct Running {
        pub io: GenerationIo,
        pub process: ChildProcess,
        pub events: Receiver<TransportMessage>,
        pub conn: ConnId,
    }

    /// Spawns `spec` and starts its I/O with `config` and `sink`.
    pub fn start_with(spec: &SpawnSpec, config: IoConfig, sink: StderrSink) -> Running {
        let (tx, rx): (Sender<TransportMessage>, _) = crossbeam_channel::bounded(EVENTS);
        let mut child = spawn(spec).expect("spawn");
        let conn = ConnId(u64::from(child.pid));
        let io = start_io(conn, &mut child, config, tx, sink).expect("start_io");
        Running {
            io,
            process: child.into_process(),
            events: rx,
            conn,
        }
    }

    /// Spawns `spec` with default I/O settings and a sink that discards stderr events.
    pub fn start(spec: &SpawnSpec) -> Running {
        start_with(spec, IoConfig::default(), Box::new(|_| {}))
    }

    /// What [`Running::read_until_closed`] collected.
    #[derive(Debug, Default)]
    pub struct ReadOutcome {
        pub seen: Vec<Seen>,
        pub batches: usize,
        pub written: usize,
    }

    /// What a reader reported, flattened in order.
    #[derive(Debug)]
    pub enum Seen {
        Frame(InboundFrame),
        Closed {
            unterminated: Option<usize>,
            error: Option<std::io::Error>,
        },
    }

    impl Running {
        /// The next event, failing the test after [`LIVENESS`].
        pub fn next_event(&self) -> TransportEvent {
            let message = self
                .events
                .recv_timeout(LIVENESS)
                .expect("an event within the liveness bound");
            assert_eq!(message.conn, self.conn);
            message.event
        }

        /// Reader output until `ReaderClosed` (included), with the number of `Frames`
        /// batches and the frames the writer reported as written or skipped meanwhile.
        pub fn read_until_closed(&self) -> ReadOutcome {
            let mut outcome = ReadOutcome::default();
            let deadline = Instant::now() + LIVENESS;
            loop {
                let left = deadline.saturating_duration_since(Instant::now());
                let message = self
                    .events
                    .recv_timeout(left)
                    .expect("ReaderClosed within the liveness bound");
                assert_eq!(message.conn, self.conn);
                match message.event {
                    TransportEvent::Frames(frames) => {
                        assert!(!frames.is_empty(), "a batch is never empty");
                        outcome.batches += 1;
                        outcome.seen.extend(frames.into_iter().map(Seen::Frame));
                    }
                    TransportEvent::ReaderClosed {
                        unterminated,
                        error,
                    } => {
                        outcome.seen.push(Seen::Closed {
                            unterminated,
                            error,
                        });
                        return outcome;
                    }
                    TransportEvent::Written { frames } => outcome.written += frames,
                    TransportEvent::WriterFailed { error } => panic!("writer failed: {error}"),
                }
            }
        }

        /// Stops the I/O threads, joins them (failing the test if that takes longer than
        /// [`LIVENESS`]), and returns every event still in the channel.
        pub fn stop_and_join(self) -> (ChildProcess, Vec<TransportEvent>) {
            let Running {
                io,
                process,
                events,
                ..
            } = self;
            io.stop();
            join_within(io, LIVENESS);
            let rest = events.try_iter().map(|m| m.event).collect();
            (process, rest)
        }
    }

    /// Joins `io` on a helper thread and fails the test if it does not finish in `limit`.
    pub fn join_within(io: GenerationIo, limit: Duration) {
        let (done_tx, done_rx) = crossbeam_channel::bounded(1);
        std::thread::spawn(move || {
            let outcome = io.join();
            let _ = done_tx.send(outcome.is_ok());
        });
        let ok = done_rx
            .recv_timeout(limit)
            .expect("join() returned within the liveness bound");
        assert!(ok, "no I/O thread panicked");
    }

    /// The method of a notification frame, if it is one.
    pub fn notification(frame: &Seen) -> Option<(&str, &serde_json::Value)> {
        match frame {
            Seen::Frame(InboundFrame::Message(Message::Notification(n))) => Some((
                n.method.as_str(),
                n.params.as_ref().unwrap_or(&serde_json::Value::Null),
            )),
            _ => None,
        }
    }

    /// True when no process has the id `pid` any more, or it is a zombie waiting for a
    /// parent that is not us (it is dead either way).
    pub fn is_gone(pid: u32) -> bool {
        // SAFETY: kill with signal 0 only checks for existence and permission.
        let rc = unsafe { libc::kill(pid as libc::pid_t, 0) };
        if rc != 0 {
            return std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
        }
        process_state(pid) == Some('Z')
    }

    /// The state letter of `/proc/<pid>/stat`.
    pub fn process_state(pid: u32) -> Option<char> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let after_name = stat.rsplit_once(')')?.1;
        after_name.trim_start().chars().next()
    }

    /// Waits until `pid` is gone (see [`is_gone`]), up to [`LIVENESS`].
    pub fn wait_gone(pid: u32) -> bool {
        let deadline = Instant::now() + LIVENESS;
        while Instant::now() < deadline {
            if is_gone(pid) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        false
    }
}
