//! The fault suite: real extension processes (tests/fixtures/fault_peer.py) failing in
//! every way a child can, each beside a well-behaved bystander extension.
//!
//! Every scenario asserts the typed error or diagnostic the fault must produce, that the
//! bystander keeps answering during and after the fault, that no extension process is
//! left running (or unreaped), and that every `octet-*` thread ends. Scenarios run one
//! at a time (see `harness::Scene`) because thread and memory figures are process-wide.
//! Timeouts are generous liveness bounds; the assertions are about outcomes.

mod support;

#[path = "faults/floods.rs"]
mod floods;
#[path = "faults/harness.rs"]
mod harness;
#[path = "faults/processes.rs"]
mod processes;

use std::time::{Duration, Instant};

use harness::*;
use octet_host::host::{
    CallError, CallOptions, CancelReason, Diagnostic, HostEvent, LifecycleState, PendingCall,
};
use octet_host::validate::ToolResult;
use octet_host::wire::{FrameError, IdError, RequestId};
use serde_json::{json, Value};
use support::process_alive;

#[test]
fn fault_crash_mid_call() {
    let scene = Scene::new();
    let dir = scene.fault("crasher", &["crash"], &["crash", "echo", "hold"], &[]);
    // The default supervisor policy: the crashed extension is restarted.
    let (host, bystander) = scene.supervised_host(&[dir]);
    let crasher = host.start("crasher").unwrap();
    let threads_with_crasher = octet_threads().len();
    let pid = crasher.info().pid;
    let mut log = EventLog::default();

    // One call is pending (never answered) when another makes the process exit.
    let held = crasher.call_tool_async("hold", json!({}), CallOptions::default());
    bystander.ping("while a call to the crasher is pending");
    let start = Instant::now();
    let crash = crasher.call_tool("crash", json!({}), CallOptions::default());
    assert!(transport_lost(&crash), "{crash:?}");
    // At once: the 30 s request deadline did not have to fire.
    assert!(start.elapsed() < PROMPT, "{:?}", start.elapsed());
    let held = settle(held, "the held call");
    assert!(transport_lost(&held), "{held:?}");

    let crashed = |log: &EventLog| {
        log.seen.iter().any(|e| {
            matches!(e, HostEvent::StateChanged { source, state: LifecycleState::Crashed }
                if source.extension == "crasher" && source.generation == 1)
        })
    };
    assert!(log.wait_until(&host, LIVENESS, crashed));
    assert!(log.has_diagnostic("crasher", |d| matches!(d, Diagnostic::TransportLost { .. })));
    assert_child_gone(pid, "the crashed extension");
    bystander.ping("after the crash");

    // The supervisor starts a fresh generation, which answers through the same handle.
    let start = Instant::now();
    let restarted = loop {
        let entry = host
            .status()
            .into_iter()
            .find(|s| s.extension == "crasher" && s.state == LifecycleState::Ready);
        if let Some(entry) = entry {
            break entry;
        }
        assert!(start.elapsed() < LIVENESS, "{:?}", host.status());
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(restarted.generation >= 2, "{restarted:?}");
    assert_ne!(restarted.pid, Some(pid));
    let out = crasher.call_tool("echo", json!({"again": true}), CallOptions::default());
    assert_eq!(out.unwrap().text(), r#"{"again":true}"#);
    // The crashed generation's threads ended; the new one has the same number.
    assert_octet_threads_settle(threads_with_crasher, "after the restart");

    bystander.finish();
    let report = scene.finish(host);
    let entry = report
        .extensions
        .iter()
        .find(|e| e.extension == "bystander")
        .unwrap();
    assert!(entry.acknowledged && !entry.forced, "{entry:?}");
}

#[test]
fn fault_hang_forever() {
    let scene = Scene::new();
    let dir = scene.fault("hang", &["hang"], &["echo"], &[]);
    let (host, bystander) = scene.host(&[dir]);
    let threads_without_hang = octet_threads().len();
    let hang = host.start("hang").unwrap();
    let pid = hang.info().pid;
    let mut log = EventLog::default();

    let deadline = Duration::from_millis(300);
    let start = Instant::now();
    let result = hang.call_tool("echo", json!({}), CallOptions::with_deadline(deadline));
    assert_eq!(
        result.unwrap_err(),
        CallError::DeadlineExceeded { after: deadline }
    );
    bystander.ping("during the cancellation grace");

    // The request was written, so it was cancelled on the wire (section 1.9) ...
    assert!(log.wait_until(&host, LIVENESS, |log| log.has_diagnostic(
        "hang",
        |d| matches!(
            d,
            Diagnostic::Stderr { line } if line.starts_with("cancel ") && line.ends_with(" timeout")
        )
    )));
    // ... and, never settled, degrades the generation once the 2 s grace is over.
    assert!(log.wait_until(&host, LIVENESS, |log| log
        .states("hang")
        .contains(&LifecycleState::Degraded)));
    let degraded_after = start.elapsed();
    assert!(
        degraded_after >= Duration::from_millis(2200),
        "degraded {degraded_after:?} after the call, before the deadline plus the grace"
    );
    assert_child_gone(pid, "the hung extension");
    let entry = wait_parked(&host, "hang");
    assert_eq!(entry.state, LifecycleState::Stopped, "{entry:?}");
    assert_parked_call(&hang, "echo");
    assert_octet_threads_settle(threads_without_hang, "after the degraded generation ended");

    bystander.ping("after the hang");
    bystander.finish();
    scene.finish(host);
}

#[test]
fn fault_ignores_sigterm_and_shutdown() {
    let scene = Scene::new();
    let dir = scene.fault("deaf", &["deaf"], &["echo"], &[]);
    let (host, bystander) = scene.host(&[dir]);
    let deaf = host.start("deaf").unwrap();
    let pid = deaf.info().pid;

    // SIGTERM really is ignored, so only SIGKILL on the group can end it.
    // SAFETY: kill takes plain integers; `pid` is our live child.
    assert_eq!(unsafe { libc::kill(pid as libc::pid_t, libc::SIGTERM) }, 0);
    std::thread::sleep(Duration::from_millis(300));
    assert!(process_alive(pid), "the fixture did not ignore SIGTERM");
    let out = deaf.call_tool("echo", json!({"still": "here"}), CallOptions::default());
    assert_eq!(out.unwrap().text(), r#"{"still":"here"}"#);
    bystander.ping("beside the deaf extension");
    bystander.finish();

    let start = Instant::now();
    let report = bounded_shutdown(&host);
    assert!(start.elapsed() < SHUTDOWN_BOUND, "{:?}", start.elapsed());
    let entry = |name: &str| {
        report
            .extensions
            .iter()
            .find(|e| e.extension == name)
            .unwrap_or_else(|| panic!("{name} missing from {report:?}"))
            .clone()
    };
    let deaf_end = entry("deaf");
    assert!(!deaf_end.acknowledged && deaf_end.forced, "{deaf_end:?}");
    let bystander_end = entry("bystander");
    assert!(
        bystander_end.acknowledged && !bystander_end.forced,
        "{bystander_end:?}"
    );
    assert_child_gone(pid, "the deaf extension");
    scene.finish(host);
}

#[test]
fn fault_never_reads_stdin() {
    let scene = Scene::new();
    let concurrency = [("OCTET_PEER_CONCURRENCY", "64")];
    let dirs = vec![
        scene.fault("no-read", &["no-read"], &["echo"], &concurrency),
        scene.fault("stuck", &["no-read"], &["echo"], &concurrency),
    ];
    let (host, bystander) = scene.host(&dirs);
    let stuck = host.start("stuck").unwrap();
    let stuck_pid = stuck.info().pid;
    let threads_without_it = octet_threads().len();
    let ext = host.start("no-read").unwrap();
    let pid = ext.info().pid;
    let mut log = EventLog::default();
    let rss_before = rss_kb();

    // 200 calls of 200 KiB each: the pipe (64 KiB) is full after the first frame.
    let pad = "x".repeat(200 * 1024);
    let deadline = Duration::from_millis(300);
    let first = Instant::now();
    let calls: Vec<(Duration, PendingCall<ToolResult>)> = (0..200)
        .map(|i| {
            let at = first.elapsed();
            let args = json!({"i": i, "pad": pad});
            (
                at,
                ext.call_tool_async("echo", args, CallOptions::with_deadline(deadline)),
            )
        })
        .collect();
    // The host answers while its writer is stuck on the full pipe.
    bystander.ping("while the writer is stuck");
    assert!(host.status().iter().any(|s| s.extension == "no-read"));
    for (i, (submitted, call)) in calls.into_iter().enumerate() {
        let result = settle(call, "a call to the extension that never reads");
        let timed_out = result == Err(CallError::DeadlineExceeded { after: deadline });
        // Only a call submitted after the first deadline plus the grace could find the
        // generation already terminated.
        let late = submitted > Duration::from_millis(2000) && transport_lost(&result);
        assert!(
            timed_out || late,
            "call {i} (submitted at {submitted:?}): {result:?}"
        );
    }
    let rss_during = rss_kb();

    // The started frame can never complete, so the request never settles: degraded,
    // killed, and the writer blocked on the full pipe is stopped.
    assert!(log.wait_until(&host, LIVENESS, |log| log
        .states("no-read")
        .contains(&LifecycleState::Degraded)));
    assert_child_gone(pid, "the extension that never reads");
    wait_parked(&host, "no-read");
    assert_parked_call(&ext, "echo");
    assert_octet_threads_settle(threads_without_it, "after the stuck generation ended");
    assert!(
        rss_during < rss_before + RSS_SLACK_KB,
        "RSS grew from {rss_before} KiB to {rss_during} KiB"
    );

    bystander.ping("after the stuck generation ended");

    // A host shutdown while the writer is stuck: the pending calls are cancelled, the
    // `shutdown` request can never be read, and the group is killed within the bounds.
    let pending: Vec<PendingCall<ToolResult>> = (0..20)
        .map(|i| stuck.call_tool_async("echo", json!({"i": i, "pad": pad}), CallOptions::default()))
        .collect();
    let entry = host
        .status()
        .into_iter()
        .find(|s| s.extension == "stuck")
        .unwrap();
    assert!(entry.pending > 0, "{entry:?}");
    bystander.finish();
    let report = bounded_shutdown(&host);
    for call in pending {
        let result = settle(call, "a call pending at shutdown");
        assert_eq!(
            result.unwrap_err(),
            CallError::Cancelled {
                reason: CancelReason::Shutdown
            }
        );
    }
    let stuck_end = report
        .extensions
        .iter()
        .find(|e| e.extension == "stuck")
        .unwrap();
    assert!(!stuck_end.acknowledged && stuck_end.forced, "{stuck_end:?}");
    assert_child_gone(stuck_pid, "the stuck extension");
    scene.finish(host);
}

#[test]
fn fault_closes_stdout() {
    let scene = Scene::new();
    let dir = scene.fault("mute", &["close-stdout"], &["echo"], &[]);
    let (host, bystander) = scene.host(&[dir]);
    let threads_without_it = octet_threads().len();
    let mute = host.start("mute").unwrap();
    let pid = mute.info().pid;
    let mut log = EventLog::default();

    let start = Instant::now();
    let result = mute.call_tool("echo", json!({}), CallOptions::default());
    match &result {
        Err(CallError::TransportLost { reason }) => assert!(reason.contains("stdout"), "{reason}"),
        other => panic!("expected a lost transport, got {other:?}"),
    }
    assert!(start.elapsed() < PROMPT, "{:?}", start.elapsed());
    bystander.ping("after the stdout closed");

    // The process stays alive by itself; the host kills it.
    assert!(log.wait_until(&host, LIVENESS, |log| log
        .states("mute")
        .contains(&LifecycleState::Crashed)));
    assert!(log.has_diagnostic("mute", |d| matches!(d, Diagnostic::TransportLost { .. })));
    assert_child_gone(pid, "the extension that closed its stdout");
    wait_parked(&host, "mute");
    assert_parked_call(&mute, "echo");
    assert_octet_threads_settle(threads_without_it, "after the mute generation ended");

    bystander.finish();
    scene.finish(host);
}

#[test]
fn fault_slow_frame() {
    let scene = Scene::new();
    let dir = scene.fault("slow", &["slow-frame", "2"], &["echo"], &[]);
    let (host, bystander) = scene.host(&[dir]);
    let slow = host.start("slow").unwrap();

    // Multi-byte characters are split across writes; the frame is about 300 bytes.
    let args = json!({"word": "héllo wörld € ✓", "pad": "p".repeat(150)});
    let start = Instant::now();
    let call = slow.call_tool_async("echo", args.clone(), CallOptions::default());
    bystander.ping("while the answer trickles in");
    let out = settle(call, "the slow call").unwrap();
    assert!(
        start.elapsed() >= Duration::from_millis(500),
        "the fixture did not write slowly: {:?}",
        start.elapsed()
    );
    assert_eq!(serde_json::from_str::<Value>(&out.text()).unwrap(), args);
    // The stream is still in step: the next answer is the next call's.
    let next = slow.call_tool("echo", json!({"next": 1}), CallOptions::default());
    assert_eq!(next.unwrap().text(), r#"{"next":1}"#);
    let mut log = EventLog::default();
    log.pump(&host);
    assert!(
        log.diagnostics("slow").is_empty(),
        "{:?}",
        log.diagnostics("slow")
    );

    bystander.finish();
    let report = scene.finish(host);
    assert!(
        report
            .extensions
            .iter()
            .all(|e| e.acknowledged && !e.forced),
        "{report:?}"
    );
}

#[test]
fn fault_bad_response_ids() {
    let scene = Scene::new();
    let dir = scene.fault("bad-ids", &["bad-ids"], &["echo"], &[]);
    let (host, bystander) = scene.host(&[dir]);
    let ext = host.start("bad-ids").unwrap();
    let mut log = EventLog::default();

    let out = ext
        .call_tool("echo", json!({"k": 1}), CallOptions::default())
        .unwrap();
    let answer: Value = serde_json::from_str(&out.text()).unwrap();
    assert_eq!(answer["args"], json!({"k": 1}), "{answer}");
    let id = answer["id"]
        .as_u64()
        .expect("the peer reports the request id");

    let number = |n: u64| RequestId::Number(n);
    let string = |s: &str| RequestId::String(s.to_string());
    let unknown = [
        number(id + 100_000),
        string("ghost"),
        string(&id.to_string()),
        // The second answer to an id that was already settled.
        number(id),
    ];
    let bad_ids = [
        (IdError::NotUnsigned64, 2), // -1, and the float id.0
        (IdError::WrongType, 3),     // an object, an array, true
        (IdError::Null, 1),
    ];
    let complete = |log: &EventLog| {
        let diags = log.diagnostics("bad-ids");
        let unknown_seen = unknown.iter().all(|want| {
            diags
                .iter()
                .any(|d| matches!(d, Diagnostic::UnknownResponseId { id } if id == want))
        });
        let bad_seen = bad_ids.iter().all(|(kind, count)| {
            diags
                .iter()
                .filter(|d| {
                    matches!(d, Diagnostic::InvalidFrame { error: FrameError::BadId(e), .. } if e == kind)
                })
                .count()
                == *count
        });
        unknown_seen && bad_seen
    };
    assert!(
        log.wait_until(&host, LIVENESS, complete),
        "{:#?}",
        log.diagnostics("bad-ids")
    );

    // The duplicate did not answer the next request, which has the next id.
    let out = ext
        .call_tool("echo", json!({"k": 2}), CallOptions::default())
        .unwrap();
    let answer: Value = serde_json::from_str(&out.text()).unwrap();
    assert_eq!(answer, json!({"id": id + 1, "args": {"k": 2}}));

    // An answer after the deadline goes to a tombstone.
    let late = ext.call_tool(
        "echo",
        json!({"sleep_ms": 500}),
        CallOptions::with_deadline(Duration::from_millis(100)),
    );
    assert_eq!(
        late.unwrap_err(),
        CallError::DeadlineExceeded {
            after: Duration::from_millis(100)
        }
    );
    let late_id = number(id + 2);
    assert!(log.wait_until(&host, LIVENESS, |log| log.has_diagnostic(
        "bad-ids",
        |d| matches!(d, Diagnostic::LateResponse { id } if *id == late_id)
    )));
    bystander.ping("after the bad ids");

    // Nothing was closed: the extension is ready and answers correctly.
    let out = ext
        .call_tool("echo", json!({"k": 3}), CallOptions::default())
        .unwrap();
    let answer: Value = serde_json::from_str(&out.text()).unwrap();
    assert_eq!(answer["args"], json!({"k": 3}));
    log.pump(&host);
    assert_eq!(
        log.states("bad-ids"),
        vec![LifecycleState::Initializing, LifecycleState::Ready]
    );
    assert!(!log.has_diagnostic("bad-ids", |d| matches!(d, Diagnostic::TransportLost { .. })));
    let status = host.status();
    let entry = status.iter().find(|s| s.extension == "bad-ids").unwrap();
    assert_eq!(entry.state, LifecycleState::Ready);

    bystander.finish();
    let report = scene.finish(host);
    assert!(
        report.extensions.iter().all(|e| e.acknowledged),
        "{report:?}"
    );
}

#[test]
fn fault_oversized_line() {
    let scene = Scene::new();
    let dir = scene.fault("oversized", &["oversized"], &["echo"], &[]);
    let (host, bystander) = scene.host(&[dir]);
    let ext = host.start("oversized").unwrap();
    let mut log = EventLog::default();

    for k in 1..=2 {
        // A 2 MiB answer to the very request, a notification and a second answer, in
        // one write: the oversized line is dropped up to its LF, but its id can still be
        // read, so the call fails at once with a protocol error; the rest is delivered
        // and the second answer is a late response.
        let start = Instant::now();
        let refused = ext
            .call_tool("echo", json!({"k": k}), CallOptions::default())
            .unwrap_err();
        assert!(start.elapsed() < PROMPT, "{:?}", start.elapsed());
        let reason = match &refused {
            CallError::RefusedResponse { reason } => reason.clone(),
            other => panic!("expected a refused response, got {other:?}"),
        };
        assert!(reason.contains("exceeds the"), "{reason}");
        let wanted = k;
        assert!(log.wait_until(&host, LIVENESS, |log| {
            let oversized = log
                .diagnostics("oversized")
                .iter()
                .filter(|d| matches!(d, Diagnostic::OversizedFrame { bytes: b } if *b > 2 * 1024 * 1024))
                .count();
            let late = log
                .diagnostics("oversized")
                .iter()
                .filter(|d| matches!(d, Diagnostic::LateResponse { .. }))
                .count();
            let notes = log
                .seen
                .iter()
                .filter(|e| matches!(
                    e,
                    HostEvent::Notification { source, notification }
                        if source.extension == "oversized" && notification.message == "after oversized"
                ))
                .count();
            oversized == wanted && notes == wanted && late == wanted
        }));
    }
    bystander.ping("after the oversized lines");
    log.pump(&host);
    assert_eq!(
        log.states("oversized"),
        vec![LifecycleState::Initializing, LifecycleState::Ready]
    );

    bystander.finish();
    let report = scene.finish(host);
    assert!(
        report
            .extensions
            .iter()
            .all(|e| e.acknowledged && !e.forced),
        "{report:?}"
    );
}
