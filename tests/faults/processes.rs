//! Processes: grandchildren in and out of the extension's process group, and
//! extensions that die before `initialize` is answered.

use std::time::{Duration, Instant};

use octet_host::host::{CallOptions, Diagnostic, LifecycleState, StartError};
use octet_host::supervisor::ParkReason;
use serde_json::json;

use super::harness::*;
use crate::support::wait_gone;

#[test]
fn fault_grandchildren() {
    let scene = Scene::new();
    // Whatever the host fails to remove is killed when the test ends, pass or fail.
    let mut escapees = Escapees::default();
    let exit_pids = scene.path("exit-pids");
    let stay_pids = scene.path("stay-pids");
    std::fs::create_dir_all(&exit_pids).unwrap();
    std::fs::create_dir_all(&stay_pids).unwrap();
    let dirs = vec![
        scene.fault(
            "grand-exit",
            &["grandchildren", &exit_pids.to_string_lossy()],
            &["echo", "exit"],
            &[],
        ),
        scene.fault(
            "grand-stay",
            &["grandchildren", &stay_pids.to_string_lossy()],
            &["echo"],
            &[],
        ),
    ];
    let (host, bystander) = scene.host(&dirs);
    let stay = host.start("grand-stay").unwrap();
    let stay_pid = stay.info().pid;
    let stay_in_group = read_pid(&stay_pids.join("ingroup.pid"));
    let stay_setsid = read_pid(&stay_pids.join("setsid.pid"));
    escapees.0.extend([stay_in_group, stay_setsid]);
    let threads_without_exit = octet_threads().len();
    let exiting = host.start("grand-exit").unwrap();
    let exit_pid = exiting.info().pid;
    let exit_in_group = read_pid(&exit_pids.join("ingroup.pid"));
    let exit_setsid = read_pid(&exit_pids.join("setsid.pid"));
    escapees.0.extend([exit_in_group, exit_setsid]);
    let mut log = EventLog::default();

    // The host can reach what stays in the extension's process group; a grandchild that
    // called setsid() leads a group (and session) of its own, out of reach of killpg
    // (the generation fence reaches it: see below).
    let start = Instant::now();
    while (process_group(exit_setsid) != Some(exit_setsid)
        || process_group(stay_setsid) != Some(stay_setsid))
        && start.elapsed() < LIVENESS
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(process_group(exit_in_group), Some(exit_pid));
    assert_eq!(process_group(exit_setsid), Some(exit_setsid));
    assert_eq!(process_group(stay_in_group), Some(stay_pid));
    assert_eq!(process_group(stay_setsid), Some(stay_setsid));

    // The extension exits while both grandchildren keep its stdout and stderr open, so
    // no EOF ever comes: the host must notice the exit itself.
    let start = Instant::now();
    let result = exiting.call_tool("exit", json!({}), CallOptions::default());
    assert!(transport_lost(&result), "{result:?}");
    assert!(start.elapsed() < PROMPT, "{:?}", start.elapsed());
    assert!(log.wait_until(&host, LIVENESS, |log| log
        .states("grand-exit")
        .contains(&LifecycleState::Crashed)));
    assert_child_gone(exit_pid, "the exited extension");
    wait_parked(&host, "grand-exit");
    assert!(
        wait_gone(exit_in_group, LIVENESS),
        "the in-group grandchild {exit_in_group} survived its extension"
    );
    // The setsid grandchild left the group, but it carries the generation's fence
    // marker in its environment, so the teardown found and killed it too.
    assert!(
        wait_gone(exit_setsid, LIVENESS),
        "the setsid grandchild {exit_setsid} survived its extension"
    );
    // Its reader and stderr threads were stopped although the setsid grandchild still
    // holds the pipes open: the host does not wedge on them.
    assert_octet_threads_settle(threads_without_exit, "after grand-exit ended");
    bystander.ping("after grand-exit ended");

    // An orderly shutdown: acknowledged, the process exits, its group is killed.
    bystander.finish();
    let report = bounded_shutdown(&host);
    let stay_end = report
        .extensions
        .iter()
        .find(|e| e.extension == "grand-stay")
        .unwrap_or_else(|| panic!("{report:?}"));
    assert!(stay_end.acknowledged, "{stay_end:?}");
    assert_child_gone(stay_pid, "grand-stay");
    assert!(
        wait_gone(stay_in_group, LIVENESS),
        "the in-group grandchild {stay_in_group} survived the shutdown"
    );
    assert!(
        wait_gone(stay_setsid, LIVENESS),
        "the setsid grandchild {stay_setsid} survived the shutdown"
    );
    scene.finish(host);
    escapees.kill_all();
}

#[test]
fn fault_exit_during_initialize() {
    let scene = Scene::new();
    let mut escapees = Escapees::default();
    // (extension, scenario, leaves an unterminated frame, leaves a grandchild holding
    // the pipes open so that no EOF comes)
    let cases = [
        ("exit-before-read", "exit-before-read", false, false),
        ("exit-after-read", "exit-after-read", false, false),
        ("partial-initialize", "partial-initialize", true, false),
        ("exit-holding-pipes", "exit-after-read", false, true),
    ];
    let dirs: Vec<_> = cases
        .iter()
        .map(|(name, scenario, _, sleeper)| {
            let pid_file = scene.path(&format!("{name}.pid"));
            let sleeper_file = scene.path(&format!("{name}.sleeper"));
            let mut env = vec![(
                "OCTET_FAULT_PID_FILE",
                pid_file.to_string_lossy().into_owned(),
            )];
            if *sleeper {
                env.push((
                    "OCTET_FAULT_SLEEPER_PID_FILE",
                    sleeper_file.to_string_lossy().into_owned(),
                ));
            }
            let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
            scene.fault(name, &[scenario], &["echo"], &env)
        })
        .collect();
    let (host, bystander) = scene.host(&dirs);
    let threads_before = octet_threads().len();
    let mut log = EventLog::default();
    for (name, _, unterminated, sleeper) in cases {
        let start = Instant::now();
        match host.start(name) {
            Err(StartError::TransportLost { .. }) => {}
            other => panic!("{name}: expected a lost transport, got {other:?}"),
        }
        // Not the 30 s initialize deadline: the exit itself was noticed.
        assert!(start.elapsed() < PROMPT, "{name}: {:?}", start.elapsed());
        let sleeper = sleeper.then(|| {
            let pid = read_pid(&scene.path(&format!("{name}.sleeper")));
            escapees.0.push(pid);
            pid
        });
        let pid = read_pid(&scene.path(&format!("{name}.pid")));
        assert_child_gone(pid, name);
        if let Some(sleeper) = sleeper {
            assert!(
                wait_gone(sleeper, LIVENESS),
                "{name}: the grandchild {sleeper} survived"
            );
        }
        bystander.ping(&format!("after {name}"));
        if unterminated {
            assert!(log.wait_until(&host, LIVENESS, |log| log.has_diagnostic(
                name,
                |d| matches!(
                    d,
                    Diagnostic::UnterminatedFrame { bytes } if *bytes > 0
                )
            )));
        }
        // A first start that failed is parked as generation 0, with no process.
        let entry = wait_parked(&host, name);
        assert_eq!(entry.generation, 0, "{entry:?}");
        assert!(
            matches!(entry.parked, Some(ParkReason::InitialFailure { .. })),
            "{entry:?}"
        );
    }
    assert_octet_threads_settle(threads_before, "after the failed starts");
    bystander.finish();
    scene.finish(host);
}
