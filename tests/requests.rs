//! The request engine against real child processes: cancellation races, tombstones,
//! grace-period termination, FIFO admission under a concurrency bound, progress,
//! extension-originated requests and the frontend.

mod support;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use octet_host::host::{
    CallError, CallOptions, ConfirmationRequest, Diagnostic, Frontend, HostEvent, InputRequest,
    LifecycleState, ProgressEvent,
};
use octet_host::ExtensionHost;
use serde_json::{json, Value};
use support::*;

const LIVENESS: Duration = Duration::from_secs(30);

/// A frontend that answers from a script and records what it was asked.
#[derive(Clone, Default)]
struct ScriptedFrontend {
    confirm: bool,
    input: Option<String>,
    /// Wait until the question is cancelled instead of answering.
    hold: bool,
    asked: Arc<Mutex<Vec<String>>>,
    saw_cancel: Arc<Mutex<bool>>,
}

impl ScriptedFrontend {
    fn hold_until_cancelled(&self, cancelled: &octet_host::host::CancelFlag) {
        let start = Instant::now();
        while !cancelled.is_cancelled() && start.elapsed() < LIVENESS {
            std::thread::sleep(Duration::from_millis(5));
        }
        *self.saw_cancel.lock().unwrap() = cancelled.is_cancelled();
    }
}

impl Frontend for ScriptedFrontend {
    fn is_interactive(&self) -> bool {
        true
    }

    fn confirm(&self, request: ConfirmationRequest) -> bool {
        self.asked
            .lock()
            .unwrap()
            .push(format!("confirm:{}", request.prompt));
        if self.hold {
            self.hold_until_cancelled(&request.cancelled);
        }
        self.confirm
    }

    fn input(&self, request: InputRequest) -> Option<String> {
        self.asked
            .lock()
            .unwrap()
            .push(format!("input:{}:{}", request.prompt, request.secret));
        if self.hold {
            self.hold_until_cancelled(&request.cancelled);
        }
        self.input.clone()
    }
}

const TEST_EXTENSION_CONTRIBUTES: &str =
    "tools = [\"echo\", \"sleep\", \"progress\", \"confirm\", \"ask\", \
     \"notify\", \"crash\", \"big\", \"fail\", \"panic\", \"env\", \"events\"]\n\
     commands = [\"fixture\"]\nhooks = [\"before_prompt\"]\ncontext = true\nui = [\"status\"]\n\
     tool_renderers = [\"echo\"]\nnotifications = true\nconfirmations = true\n";

fn sdk_host(
    frontend: Option<ScriptedFrontend>,
    api: &str,
) -> (ExtensionHost, tempfile::TempDir, tempfile::TempDir) {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dir = sdk_extension(
        root.path(),
        "fixture",
        api,
        "test-extension",
        TEST_EXTENSION_CONTRIBUTES,
    );
    let mut builder = ExtensionHost::builder(workspace.path())
        .no_global_extensions()
        .extension_dir(dir);
    if let Some(frontend) = frontend {
        builder = builder.frontend(frontend);
    }
    (builder.build().unwrap(), root, workspace)
}

#[test]
fn progress_reaches_the_caller_in_order_before_the_result() {
    let (host, _root, _ws) = sdk_host(None, "0.4");
    let ext = host.start("fixture").unwrap();
    let (tx, rx) = crossbeam_channel::unbounded();
    let out = ext
        .call_tool(
            "progress",
            json!({"steps": 20}),
            CallOptions::default().with_progress(tx),
        )
        .unwrap();
    assert_eq!(out.text(), "progress sent=20");
    let received: Vec<_> = rx.try_iter().collect();
    assert_eq!(received.len(), 20, "every event arrived before the result");
    for pair in received.windows(2) {
        assert!(pair[0].sequence < pair[1].sequence);
    }
    assert!(received
        .iter()
        .all(|p| matches!(p.event, ProgressEvent::Status { .. })));
    let events: Vec<_> = host.events().try_iter().collect();
    let progress_events = events
        .iter()
        .filter(|e| matches!(e, HostEvent::Progress { .. }))
        .count();
    assert_eq!(progress_events, 20);
}

#[test]
fn confirmations_go_to_the_frontend_and_headless_denies() {
    let frontend = ScriptedFrontend {
        confirm: true,
        ..Default::default()
    };
    let (host, _root, _ws) = sdk_host(Some(frontend.clone()), "0.4");
    let ext = host.start("fixture").unwrap();
    let out = ext
        .call_tool(
            "confirm",
            json!({"prompt": "Push?"}),
            CallOptions::default(),
        )
        .unwrap();
    assert_eq!(out.text(), "confirmed");
    assert_eq!(frontend.asked.lock().unwrap().as_slice(), ["confirm:Push?"]);

    let (headless, _root, _ws) = sdk_host(None, "0.4");
    let ext = headless.start("fixture").unwrap();
    let out = ext
        .call_tool(
            "confirm",
            json!({"prompt": "Push?"}),
            CallOptions::default(),
        )
        .unwrap();
    assert_eq!(out.text(), "denied");
    // API 0.1 has no parent correlation and still works.
    let (old, _root, _ws) = sdk_host(Some(frontend), "0.1");
    let ext = old.start("fixture").unwrap();
    let out = ext
        .call_tool("confirm", json!({"prompt": "Old?"}), CallOptions::default())
        .unwrap();
    assert_eq!(out.text(), "confirmed");
}

#[test]
fn secret_input_is_answered_and_never_appears_in_diagnostics() {
    let frontend = ScriptedFrontend {
        input: Some("s3cret-value".into()),
        ..Default::default()
    };
    let (host, _root, _ws) = sdk_host(Some(frontend.clone()), "0.4");
    let ext = host.start("fixture").unwrap();
    let out = ext
        .call_tool(
            "ask",
            json!({"prompt": "Password:", "secret": true}),
            CallOptions::default(),
        )
        .unwrap();
    assert_eq!(out.text(), "answer=s3cret-value");
    assert_eq!(
        frontend.asked.lock().unwrap().as_slice(),
        ["input:Password::true"]
    );
    let events: Vec<_> = host.events().try_iter().collect();
    assert!(!format!("{events:?}").contains("s3cret-value"));

    let (headless, _root, _ws) = sdk_host(None, "0.4");
    let ext = headless.start("fixture").unwrap();
    let out = ext
        .call_tool("ask", json!({"prompt": "Name?"}), CallOptions::default())
        .unwrap();
    assert_eq!(
        out.text(),
        "answer=null",
        "headless input is cancelled, not guessed"
    );
}

#[test]
fn parent_settlement_cancels_a_pending_confirmation() {
    let frontend = ScriptedFrontend {
        hold: true,
        ..Default::default()
    };
    let (host, _root, _ws) = sdk_host(Some(frontend.clone()), "0.4");
    let ext = host.start("fixture").unwrap();
    let err = ext
        .call_tool(
            "confirm",
            json!({"prompt": "Hold?"}),
            CallOptions::with_deadline(Duration::from_millis(300)),
        )
        .unwrap_err();
    assert!(matches!(err, CallError::DeadlineExceeded { .. }), "{err:?}");
    let start = Instant::now();
    while !*frontend.saw_cancel.lock().unwrap() && start.elapsed() < LIVENESS {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(
        *frontend.saw_cancel.lock().unwrap(),
        "the frontend learns the question is moot"
    );
    // The extension got the dropped answer, settled, and is still healthy.
    let out = ext
        .call_tool("echo", json!({"after": 1}), CallOptions::default())
        .unwrap();
    assert_eq!(out.text(), r#"{"after":1}"#);
}

#[test]
fn cancelling_a_frame_the_writer_has_not_started_sends_nothing() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    // The peer reads nothing for 2 s, so the writer blocks inside the first big frame.
    let dir = peer_extension(
        root.path(),
        "stalled",
        "0.2",
        &["stall", "2"],
        &["echo", "seen"],
    );
    let host = host(workspace.path(), &[dir]);
    let ext = host.start("stalled").unwrap();
    let big = "x".repeat(900 * 1024);
    let first = ext.call_tool_async(
        "echo",
        json!({"marker": "A", "pad": big}),
        CallOptions::default(),
    );
    std::thread::sleep(Duration::from_millis(300));
    let second = ext.call_tool_async("echo", json!({"marker": "B"}), CallOptions::default());
    std::thread::sleep(Duration::from_millis(100));
    second.cancel();
    assert!(matches!(second.wait(), Err(CallError::Cancelled { .. })));
    assert!(first.wait().is_ok());
    let seen: Value = serde_json::from_str(
        &ext.call_tool("seen", json!({}), CallOptions::default())
            .unwrap()
            .text(),
    )
    .unwrap();
    assert_eq!(
        seen["markers"],
        json!(["A"]),
        "the skipped frame never reached the extension"
    );
    assert_eq!(
        seen["cancels"],
        json!([]),
        "and no cancel notification was needed"
    );
}

#[test]
fn cancel_after_write_sends_one_notification_and_a_late_result_is_only_a_diagnostic() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dir = peer_extension(root.path(), "stubborn", "0.2", &["good"], &["echo", "seen"]);
    let host = host(workspace.path(), &[dir]);
    let ext = host.start("stubborn").unwrap();
    let pending = ext.call_tool_async("echo", json!({"sleep_ms": 500}), CallOptions::default());
    std::thread::sleep(Duration::from_millis(150));
    pending.cancel();
    assert_eq!(
        pending.wait().unwrap_err(),
        CallError::Cancelled {
            reason: octet_host::host::CancelReason::User
        }
    );
    let events = collect_events(&host, LIVENESS, |e| {
        diagnostics(e)
            .iter()
            .any(|d| matches!(d, Diagnostic::LateResponse { .. }))
    });
    assert!(diagnostics(&events)
        .iter()
        .any(|d| matches!(d, Diagnostic::LateResponse { .. })));
    let seen: Value = serde_json::from_str(
        &ext.call_tool("seen", json!({}), CallOptions::default())
            .unwrap()
            .text(),
    )
    .unwrap();
    assert_eq!(
        seen["cancels"].as_array().unwrap().len(),
        1,
        "exactly one cancel notification"
    );
    // The normal result won the race within the grace period: the generation is healthy.
    std::thread::sleep(Duration::from_millis(2500));
    let status = host.status();
    assert_eq!(status.len(), 1);
    assert_eq!(status[0].state, LifecycleState::Ready);
}

#[test]
fn a_request_that_never_settles_after_cancel_degrades_and_ends_the_generation() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dir = peer_extension(root.path(), "hung", "0.2", &["good"], &["echo"]);
    let host = host(workspace.path(), &[dir]);
    let ext = host.start("hung").unwrap();
    let pid = ext.info().pid;
    let err = ext
        .call_tool(
            "echo",
            json!({"sleep_ms": 20000}),
            CallOptions::with_deadline(Duration::from_millis(100)),
        )
        .unwrap_err();
    assert!(matches!(err, CallError::DeadlineExceeded { .. }));
    let events = collect_events(&host, LIVENESS, |events| {
        events.iter().any(|e| {
            matches!(
                e,
                HostEvent::StateChanged {
                    state: LifecycleState::Degraded,
                    ..
                }
            )
        })
    });
    assert!(events.iter().any(|e| matches!(
        e,
        HostEvent::StateChanged {
            state: LifecycleState::Degraded,
            ..
        }
    )));
    assert!(
        wait_gone(pid, LIVENESS),
        "the degraded generation is terminated"
    );
}

#[test]
fn a_thousand_calls_through_a_concurrency_of_four_all_come_back_right() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dir = peer_extension_with(
        root.path(),
        "narrow",
        "0.2",
        &["concurrent"],
        &["echo", "seen"],
        "",
        "OCTET_PEER_CONCURRENCY = \"4\"",
    );
    let host = host(workspace.path(), &[dir]);
    let ext = host.start("narrow").unwrap();
    assert_eq!(ext.info().negotiated.max_concurrent_requests, 4);
    let calls: Vec<_> = (0..1000)
        .map(|i| ext.call_tool_async("echo", json!({"i": i}), CallOptions::default()))
        .collect();
    for (i, call) in calls.into_iter().enumerate() {
        assert_eq!(call.wait().unwrap().text(), format!("{{\"i\":{i}}}"));
    }
    let seen: Value = serde_json::from_str(
        &ext.call_tool("seen", json!({}), CallOptions::default())
            .unwrap()
            .text(),
    )
    .unwrap();
    let max = seen["max_in_flight"].as_u64().unwrap();
    assert!(
        (1..=4).contains(&max),
        "at most 4 requests in flight, saw {max}"
    );
}

#[test]
fn extension_requests_follow_the_id_parent_and_method_rules() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dir = peer_extension_with(
        root.path(),
        "prober",
        "0.2",
        &["child-requests"],
        &["echo"],
        "confirmations = true",
        "",
    );
    let frontend = ScriptedFrontend {
        confirm: true,
        input: Some("Ada".into()),
        ..Default::default()
    };
    let host = ExtensionHost::builder(workspace.path())
        .no_global_extensions()
        .extension_dir(dir)
        .frontend(frontend)
        .build()
        .unwrap();
    let ext = host.start("prober").unwrap();
    let out = ext
        .call_tool("echo", json!({}), CallOptions::default())
        .unwrap();
    let report: Value = serde_json::from_str(&out.text()).unwrap();
    assert_eq!(report["unknown_method"], json!(-32601));
    assert_eq!(report["no_parent"], json!(-32602));
    assert_eq!(report["stale_parent"], json!(-32002));
    assert_eq!(report["bad_params"], json!(-32602));
    assert_eq!(report["confirm"], json!({"confirmed": true}));
    assert_eq!(report["reused_id"], json!(-32600));
    assert_eq!(report["blank_input"], json!(-32602));
    assert_eq!(report["input"], json!({"value": "Ada"}));
}

#[test]
fn lifecycle_notifications_reach_subscribed_generations_only() {
    use octet_host::host::{LifecycleNotification, Outcome, Settlement};
    let (host, _root, _ws) = sdk_host(None, "0.4");
    let ext = host.start("fixture").unwrap();
    assert!(ext.info().negotiated.lifecycle_subscriptions.len() == 6);
    host.lifecycle(LifecycleNotification::TurnStarted {
        session_id: "s".into(),
        run_id: "r".into(),
        turn_id: "t".into(),
    });
    host.lifecycle(LifecycleNotification::TurnSettled {
        session_id: "s".into(),
        run_id: "r".into(),
        turn_id: "t".into(),
        settlement: Settlement {
            outcome: Outcome::Interrupted,
            duration_ms: 5,
            reason: Some("x".repeat(9000)),
        },
    });
    // The SDK handles notifications on its own threads, so poll until both arrived.
    let start = Instant::now();
    let mut text = String::new();
    while start.elapsed() < LIVENESS {
        text = ext
            .call_tool("events", json!({}), CallOptions::default())
            .unwrap()
            .text();
        if text.contains("turn/settled") {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        text.contains("turn/started") && text.contains("turn/settled"),
        "{text}"
    );

    let (old, _root, _ws) = sdk_host(None, "0.1");
    let ext = old.start("fixture").unwrap();
    old.lifecycle(LifecycleNotification::SessionStarted {
        session_id: "s".into(),
    });
    let out = ext
        .call_tool("events", json!({}), CallOptions::default())
        .unwrap();
    assert!(
        !out.text().contains("session/started"),
        "API 0.1 never negotiates lifecycle events"
    );
}

#[test]
fn a_late_answer_after_shutdown_began_breaks_nothing() {
    let (host, _root, _ws) = sdk_host(None, "0.4");
    let ext = host.start("fixture").unwrap();
    let err = ext
        .call_tool(
            "sleep",
            json!({"ms": 5000}),
            CallOptions::with_deadline(Duration::from_millis(200)),
        )
        .unwrap_err();
    assert!(matches!(err, CallError::DeadlineExceeded { .. }));
    // The cancelled request is still owed when shutdown starts; its late -32800 answer
    // must settle cleanly and the report must still arrive.
    let report = host.shutdown();
    assert_eq!(report.extensions.len(), 1, "{report:?}");
    assert!(report.extensions[0].acknowledged);
}

#[test]
fn dropping_a_pending_call_cancels_it() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dir = peer_extension(root.path(), "dropper", "0.2", &["good"], &["echo", "seen"]);
    let host = host(workspace.path(), &[dir]);
    let ext = host.start("dropper").unwrap();
    let pending = ext.call_tool_async("echo", json!({"sleep_ms": 300}), CallOptions::default());
    std::thread::sleep(Duration::from_millis(100));
    drop(pending);
    // The cancel notification was written before this call, on the same ordered writer.
    let start = Instant::now();
    let mut cancels = json!([]);
    while start.elapsed() < LIVENESS {
        let seen: Value = serde_json::from_str(
            &ext.call_tool("seen", json!({}), CallOptions::default())
                .unwrap()
                .text(),
        )
        .unwrap();
        cancels = seen["cancels"].clone();
        if cancels.as_array().is_some_and(|c| !c.is_empty()) {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(cancels.as_array().map(Vec::len), Some(1), "{cancels}");
}

/// Spinning before sleep only changes how threads wait, never what they deliver: with
/// it off, and with a budget long enough that every wait spins, overlapping calls on
/// an SDK extension all settle with their own answers.
#[test]
fn calls_settle_the_same_with_spinning_off_and_long() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dir = sdk_extension(
        root.path(),
        "spinner",
        "0.4",
        "test-extension",
        TEST_EXTENSION_CONTRIBUTES,
    );
    for budget in [Duration::ZERO, Duration::from_millis(5)] {
        let host = ExtensionHost::builder(workspace.path())
            .no_global_extensions()
            .extension_dir(&dir)
            .spin_before_sleep(budget)
            .build()
            .unwrap();
        let ext = host.start("spinner").unwrap();
        for n in 0..50 {
            let out = ext
                .call_tool("echo", json!({"n": n}), CallOptions::default())
                .unwrap();
            assert_eq!(out.text(), format!(r#"{{"n":{n}}}"#), "{budget:?}");
        }
        let pending: Vec<_> = (0..200)
            .map(|n| ext.call_tool_async("echo", json!({"n": n}), CallOptions::default()))
            .collect();
        for (n, call) in pending.into_iter().enumerate() {
            let out = call.wait().unwrap();
            assert_eq!(out.text(), format!(r#"{{"n":{n}}}"#), "{budget:?}");
        }
        // A wait that outlasts the spin still wakes for the answer.
        let slow = ext.call_tool("sleep", json!({"ms": 50}), CallOptions::default());
        assert!(slow.is_ok(), "{budget:?}: {slow:?}");
        assert!(host.shutdown().extensions.iter().all(|e| e.acknowledged));
    }
}

/// `PendingCall::answer` and `settle` let one thread wait for several calls at once:
/// the call that answers first is settled first, whatever the order of submission.
#[test]
fn calls_are_selectable_and_settle_in_answer_order() {
    let (host, _root, _ws) = sdk_host(None, "0.4");
    let ext = host.start("fixture").unwrap();
    let slow = ext.call_tool_async("sleep", json!({"ms": 1000}), CallOptions::default());
    let fast = ext.call_tool_async("echo", json!({"n": 1}), CallOptions::default());
    let mut calls = vec![("slow", slow), ("fast", fast)];
    let mut settled = Vec::new();
    while !calls.is_empty() {
        let mut select = crossbeam_channel::Select::new();
        for (_, call) in &calls {
            select.recv(call.answer());
        }
        let operation = select.select_timeout(LIVENESS).expect("an answer in time");
        let index = operation.index();
        let received = operation.recv(calls[index].1.answer());
        let (name, call) = calls.remove(index);
        let output = call.settle(received).unwrap();
        settled.push((name, output.text()));
    }
    assert_eq!(settled[0], ("fast", r#"{"n":1}"#.to_owned()));
    assert_eq!(settled[1].0, "slow");
}

#[test]
fn cancellation_grace_holds_past_the_tombstone_bound() {
    // A thousand calls to an extension that stopped reading stdin: their cancellations
    // outnumber the 512 remembered tombstones, yet the ones the extension still owes
    // are never forgotten, so the grace period still ends the generation. Each request
    // is large, so the pipe fills and most admitted frames are skipped, not written.
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dir = peer_extension_with(
        root.path(),
        "deaf",
        "0.2",
        &["deaf"],
        &["echo"],
        "",
        "OCTET_PEER_CONCURRENCY = \"64\"",
    );
    let host = host(workspace.path(), &[dir]);
    let ext = host.start("deaf").unwrap();
    let pid = ext.info().pid;
    let calls: Vec<_> = (0..1000)
        .map(|i| {
            ext.call_tool_async(
                "echo",
                json!({"n": i, "pad": "x".repeat(4000)}),
                CallOptions::with_deadline(Duration::from_secs(2)),
            )
        })
        .collect();
    for call in calls {
        let err = call.wait().unwrap_err();
        assert!(matches!(err, CallError::DeadlineExceeded { .. }), "{err:?}");
    }
    let degraded = |e: &HostEvent| {
        matches!(
            e,
            HostEvent::StateChanged {
                state: LifecycleState::Degraded,
                ..
            }
        )
    };
    let events = collect_events(&host, LIVENESS, |events| events.iter().any(degraded));
    assert!(events.iter().any(degraded), "{events:?}");
    assert!(
        wait_gone(pid, LIVENESS),
        "the generation that owes settlements is terminated"
    );
}
