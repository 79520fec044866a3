//! Section 5 in action: an unexpected exit that the supervisor restarts, and a
//! candidate-first reload.

use std::time::{Duration, Instant};

use serde_json::json;

use super::setup::{MORE_EXAMPLES, TEST_EXTENSION};
use super::steps::{state_chains, wait_gone, POLL_INTERVAL};
use super::Demo;
use crate::host::{
    CallError, CallOptions, ExtensionHandle, ExtensionStatus, GenerationRef, HostEvent,
    LifecycleState,
};
use crate::limits::{MAX_RESTART_ATTEMPTS, RESTART_BACKOFF_BASE, RESTART_BUDGET_RESET};

/// The most the demo waits for the supervisor to bring a crashed extension back.
const RESTART_WITHIN: Duration = Duration::from_secs(10);

/// How long a crashed or replaced generation's process may take to disappear.
const OLD_PROCESS_GONE_WITHIN: Duration = Duration::from_secs(5);

/// How long the demo waits for the replaced generation's `stopped` event.
const STOPPED_EVENT_WITHIN: Duration = Duration::from_secs(3);

/// The name hello_world greets after the reload.
const RELOADED_NAME: &str = "reloaded";

impl Demo<'_> {
    /// Starts the test-extension fixture, lets its `crash` tool kill the process, waits
    /// for generation 2 and calls it.
    pub(super) fn crash_and_restart(&mut self) {
        self.t.section("Supervision: crash and restart (section 5)");
        let Some(fixture) = self.start_example(&MORE_EXAMPLES[0], "supervised_start") else {
            return;
        };
        let first = fixture.info().clone();
        self.collect_events();
        let from = self.events.len();
        self.t
            .request("tool/call test-extension crash {} (the handler exits the process)");
        let crashed = match fixture.call_tool("crash", json!({}), CallOptions::default()) {
            Err(CallError::TransportLost { reason }) => {
                self.t.answer(format!(
                    "the call failed as expected · connection lost: {reason}"
                ));
                true
            }
            Err(other) => {
                self.t.failure(format!(
                    "expected the connection to be lost, the call failed with: {other}"
                ));
                false
            }
            Ok(output) => {
                self.t.failure(format!(
                    "expected the connection to be lost, the call answered: {}",
                    output.text()
                ));
                false
            }
        };
        self.t.record(
            "crash",
            crashed,
            json!({"extension": TEST_EXTENSION, "tool": "crash", "generation": first.generation}),
        );
        if !crashed {
            return;
        }
        self.t.detail(format!(
            "waiting up to {} s for the supervisor to restart it \
             (full jitter on a {} ms base, {} attempts at most)",
            RESTART_WITHIN.as_secs(),
            RESTART_BACKOFF_BASE.as_millis(),
            MAX_RESTART_ATTEMPTS
        ));
        let waited = Instant::now();
        let restarted = self.wait_status(RESTART_WITHIN, |s| {
            s.extension == TEST_EXTENSION
                && s.generation > first.generation
                && s.state == LifecycleState::Ready
                && s.routed
        });
        let status = match restarted {
            Ok(status) => status,
            Err(seen) => {
                self.t.failure(format!(
                    "no ready generation {} within {} s; status: {}",
                    first.generation + 1,
                    RESTART_WITHIN.as_secs(),
                    status_summary(&seen, TEST_EXTENSION)
                ));
                self.t
                    .record("restart", false, json!({"extension": TEST_EXTENSION}));
                return;
            }
        };
        let after = waited.elapsed();
        if let Some(pid) = status.pid {
            self.later_pids.push(pid);
        }
        let gone = wait_gone(first.pid, OLD_PROCESS_GONE_WITHIN);
        self.t.answer(format!(
            "{}#{} ready · pid {} · {} ms after the crash\n\
             restart attempts  {} of {} (reset after {} s continuously ready)\n\
             generation {} (pid {}) {}",
            status.extension,
            status.generation,
            pid_text(status.pid),
            after.as_millis(),
            status.restart_attempts,
            MAX_RESTART_ATTEMPTS,
            RESTART_BUDGET_RESET.as_secs(),
            first.generation,
            first.pid,
            if gone { "is gone" } else { "is still running" },
        ));
        self.collect_events();
        for (source, chain) in state_chains(&self.events[from..]) {
            if source.starts_with(&format!("{TEST_EXTENSION}#")) {
                self.t.detail(format!("lifecycle    {source} {chain}"));
            }
        }
        let ok = status.generation == first.generation + 1 && status.restart_attempts >= 1 && gone;
        if !gone {
            self.t
                .failure(format!("pid {} is still running", first.pid));
        }
        self.t.record(
            "restart",
            ok,
            json!({"extension": TEST_EXTENSION, "status": status.to_value(),
                   "restart_attempts": status.restart_attempts,
                   "waited_ms": u64::try_from(after.as_millis()).unwrap_or(u64::MAX)}),
        );
        let arguments = json!({"after": "restart"});
        self.t.request(format!(
            "tool/call test-extension echo {arguments} (generation {})",
            status.generation
        ));
        let result = fixture.call_tool("echo", arguments.clone(), CallOptions::default());
        let expected = arguments.to_string();
        let ok = result
            .as_ref()
            .is_ok_and(|o| !o.is_error && o.text() == expected);
        self.tool_answer("echo", TEST_EXTENSION, arguments, result, ok);
    }

    /// Reloads hello-world: the candidate negotiates first, then takes the calls, and the
    /// old generation drains and exits.
    pub(super) fn reload(&mut self, hello: &ExtensionHandle) {
        self.t.section("Reload (section 5, candidate-first)");
        let name = hello.name().to_owned();
        let (old_generation, old_pid) = self
            .session
            .host()
            .status()
            .into_iter()
            .find(|s| s.extension == name && s.routed)
            .map(|s| (s.generation, s.pid.unwrap_or(hello.info().pid)))
            .unwrap_or((hello.info().generation, hello.info().pid));
        self.collect_events();
        let from = self.events.len();
        self.t.request(format!(
            "reload {name} (generation {old_generation}, pid {old_pid})"
        ));
        let started = match self.session.host().reload(&name) {
            Ok(started) => started,
            Err(error) => {
                self.t.failure(format!("reload failed: {error}"));
                self.t.record(
                    "reload",
                    false,
                    json!({"extension": name, "error": error.to_string()}),
                );
                return;
            }
        };
        self.later_pids.push(started.pid);
        self.t.answer(format!(
            "generation {old_generation} → {} · the candidate (pid {}) negotiated while \
             generation {old_generation} kept serving",
            started.generation, started.pid
        ));
        let gone = wait_gone(old_pid, OLD_PROCESS_GONE_WITHIN);
        let old = GenerationRef {
            extension: name.clone(),
            generation: old_generation,
        };
        self.await_event(from, STOPPED_EVENT_WITHIN, |e| {
            matches!(e, HostEvent::StateChanged { source, state: LifecycleState::Stopped }
                     if *source == old)
        });
        let mut order: Vec<(String, LifecycleState)> = self.events[from..]
            .iter()
            .filter_map(|e| match e {
                HostEvent::StateChanged { source, state } if source.extension == name => {
                    Some((source.to_string(), *state))
                }
                _ => None,
            })
            .collect();
        order.dedup();
        let position = |generation: u64, state: LifecycleState| {
            let source = format!("{name}#{generation}");
            order
                .iter()
                .position(|(s, st)| *s == source && *st == state)
        };
        // Candidate-first: the new generation is ready before the old one drains.
        let candidate_first = match (
            position(started.generation, LifecycleState::Ready),
            position(old_generation, LifecycleState::Draining),
        ) {
            (Some(ready), Some(draining)) => ready < draining,
            _ => true,
        };
        let chain: Vec<String> = order
            .iter()
            .map(|(source, state)| format!("{source} {state}"))
            .collect();
        self.t.detail(format!("order        {}", chain.join(" → ")));
        if gone {
            self.t.detail(format!(
                "generation {old_generation} (pid {old_pid}) drained and exited"
            ));
        } else {
            self.t.failure(format!(
                "generation {old_generation} (pid {old_pid}) is still running"
            ));
        }
        if !candidate_first {
            self.t
                .failure("the old generation drained before the candidate was ready");
        }
        let ok = started.generation == old_generation + 1 && gone && candidate_first;
        self.t.record(
            "reload",
            ok,
            json!({"extension": name, "from_generation": old_generation,
                   "to_generation": started.generation, "old_pid": old_pid,
                   "new_pid": started.pid, "old_process_gone": gone,
                   "order": chain}),
        );
        let arguments = json!({ "name": RELOADED_NAME });
        self.t.request(format!(
            "tool/call {name} hello_world {arguments} (only generation {} is alive)",
            started.generation
        ));
        let result = hello.call_tool("hello_world", arguments.clone(), CallOptions::default());
        let ok = result
            .as_ref()
            .is_ok_and(|o| !o.is_error && o.text() == format!("Hello, {RELOADED_NAME}!"));
        self.tool_answer("hello_world", &name, arguments, result, ok);
        let live: Vec<String> = self
            .session
            .host()
            .status()
            .iter()
            .filter(|s| s.extension == name)
            .map(|s| {
                format!(
                    "{}#{} {} · pid {}{}",
                    s.extension,
                    s.generation,
                    s.state,
                    pid_text(s.pid),
                    if s.routed { " · routed" } else { "" }
                )
            })
            .collect();
        self.t.detail(format!("status       {}", live.join("; ")));
    }

    /// Polls the host status until an entry satisfies `found` or `within` passes; the
    /// error carries the last status seen.
    fn wait_status(
        &self,
        within: Duration,
        found: impl Fn(&ExtensionStatus) -> bool,
    ) -> Result<ExtensionStatus, Vec<ExtensionStatus>> {
        let deadline = Instant::now() + within;
        loop {
            let status = self.session.host().status();
            if let Some(entry) = status.iter().find(|s| found(s)) {
                return Ok(entry.clone());
            }
            if Instant::now() >= deadline {
                return Err(status);
            }
            std::thread::sleep(POLL_INTERVAL);
        }
    }
}

fn pid_text(pid: Option<u32>) -> String {
    pid.map_or_else(|| "none".to_owned(), |pid| pid.to_string())
}

/// `name`'s generations in `status`, one short item each.
fn status_summary(status: &[ExtensionStatus], name: &str) -> String {
    let items: Vec<String> = status
        .iter()
        .filter(|s| s.extension == name)
        .map(|s| {
            let parked = s
                .parked
                .as_ref()
                .map(|p| format!(", parked: {p}"))
                .unwrap_or_default();
            format!(
                "#{} {} (restart attempts {}{parked})",
                s.generation, s.state, s.restart_attempts
            )
        })
        .collect();
    if items.is_empty() {
        "no live generation".to_owned()
    } else {
        items.join("; ")
    }
}
