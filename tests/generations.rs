//! A dead generation leaves nothing behind: after many generations come and go, the
//! host's own tables, this process's threads and its open descriptors are back where
//! they were. The only test of its binary, so that no other test's threads or
//! descriptors share the process it counts.

mod support;

use std::time::Duration;

use octet_host::host::CallOptions;
use octet_host::ExtensionHost;
use serde_json::json;
use support::*;

/// The number of threads and open file descriptors of this process.
fn threads_and_fds() -> (usize, usize) {
    let count = |dir: &str| std::fs::read_dir(dir).unwrap().count();
    (count("/proc/self/task"), count("/proc/self/fd"))
}

/// Waits until no call, request or launch is in flight and every finished generation's
/// threads were joined, then returns the tables.
fn quiet_tables(host: &ExtensionHost, generations: usize) -> octet_host::host::HostTables {
    let mut tables = host.tables();
    eventually("the host is quiet", || {
        tables = host.tables();
        tables.generations == generations
            && tables.calls == 0
            && tables.pending_requests == 0
            && tables.child_requests == 0
            && tables.launching == 0
            && tables.unjoined_io == 0
            && tables.tombstones == 0
    });
    tables
}

/// The routed generation of `name`, once it is ready.
fn ready_generation(host: &ExtensionHost, name: &str) -> u64 {
    let mut generation = 0;
    eventually(&format!("{name} is ready"), || {
        host.status().iter().any(|s| {
            generation = s.generation;
            s.extension == name && s.routed && s.state == octet_host::host::LifecycleState::Ready
        })
    });
    generation
}

#[test]
fn dead_generations_leave_nothing_in_the_host_tables() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let churn = peer_extension(root.path(), "churn", "0.4", &[], &["echo"]);
    let circuits = resource_extension(root.path(), "circuits", "");
    let host = host_builder(workspace.path(), &[churn, circuits])
        .resource_refs(true)
        .supervisor_policy(octet_host::host::SupervisorPolicy {
            backoff_base: Duration::from_millis(5),
            backoff_cap: Duration::from_millis(40),
            ..octet_host::host::SupervisorPolicy::default()
        })
        .build()
        .unwrap();
    let churn = host.start("churn").unwrap();
    let circuits = host.start("circuits").unwrap();
    let options = || CallOptions::with_deadline(Duration::from_secs(60));

    // One generation's worth of everything: a call the generation never answers, a
    // cancelled call (a tombstone), 50 lines of stderr, resource records. Then the
    // generation goes away by reload, crash or stop and start.
    let round = |n: u32| {
        // On a reload the old generation drains: a call in flight finishes there. A
        // crash or a stop ends a call the generation never answers.
        let in_flight = if n % 3 == 0 {
            json!({"sleep_ms": 200})
        } else {
            json!({"wait_cancel": true})
        };
        let in_flight = churn.call_tool_async("echo", in_flight, options());
        let cancelled = churn.call_tool_async("echo", json!({"wait_cancel": true}), options());
        cancelled.cancel();
        assert!(matches!(
            cancelled.wait(),
            Err(octet_host::CallError::Cancelled { .. })
        ));
        churn
            .call_tool("echo", json!({"stderr_lines": 50}), options())
            .unwrap();
        let made = circuits
            .call_tool("make", json!({"count": 3}), options())
            .unwrap();
        assert!(!made.is_error, "{}", made.text());
        let before = ready_generation(&host, "churn");
        match n % 3 {
            0 => {
                churn.reload().unwrap();
            }
            1 => {
                let crashed = churn.call_tool("echo", json!({"crash": true}), options());
                assert!(crashed.is_err(), "{crashed:?}");
            }
            _ => {
                churn.shutdown().unwrap();
                host.start("churn").unwrap();
            }
        }
        let settled = in_flight.wait();
        assert_eq!(settled.is_ok(), n % 3 == 0, "{settled:?}");
        assert!(ready_generation(&host, "churn") > before);
        circuits.reload().unwrap();
    };

    round(0);
    let baseline = quiet_tables(&host, 2);
    let (threads, fds) = threads_and_fds();
    for n in 1..=30 {
        round(n);
    }
    let after = quiet_tables(&host, 2);
    assert_eq!(after, baseline, "the tables after 30 rounds of churn");
    assert_eq!(after.routes, 2);
    assert_eq!(
        after.resource_records, 0,
        "the live generations made nothing"
    );
    assert_eq!(
        after.stop_waiters + after.restart_timers + after.open_scopes,
        0
    );
    assert_eq!(after.bulk_transfers + after.compositions, 0);
    // The two live generations' health polls, at most one each and one stale.
    assert!(after.timers <= 4, "{after:?}");
    let status = host.status();
    for s in &status {
        assert!(
            s.stderr_tail.len() <= octet_host::limits::STDERR_TAIL_LINES,
            "{s:?}"
        );
    }
    eventually("threads and descriptors are back to the baseline", || {
        threads_and_fds() == (threads, fds)
    });
    host.shutdown();
    assert_eq!(
        host.tables(),
        octet_host::host::HostTables::default(),
        "after shutdown"
    );
}
