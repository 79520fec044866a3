//! Shutdown (section 1.8), termination and the end of a generation.
//!
//! The per-connection sequence: drain (no new admissions, remaining calls cancelled),
//! send `shutdown` and wait the acknowledgement timeout (2 s by default) for the
//! acknowledgement, close stdin (the final-teardown fallback) and wait the exit timeout
//! (2 s) for the exit,
//! then kill the process group. A host-wide shutdown runs every sequence at once under
//! one aggregate deadline, after which every remaining group is killed.

use std::time::{Duration, Instant};

use serde_json::json;

use super::connection::{FailedStart, PendingKind, ShutdownStage};
use super::timers::Timer;
use super::{Dispatcher, HostShutdown, EXIT_POLL_INTERVAL, HEALTH_POLL_INTERVAL};
use crate::model::call::{CallError, CancelReason};
use crate::model::start::StartError;
use crate::model::status::ExtensionShutdown;
use crate::model::status::LifecycleState;
use crate::model::status::ShutdownReport;

/// How long the dispatcher waits, at most, for a child that failed to start to have
/// its last stderr lines read, so the start error can show them. Only a start that
/// already failed ever waits, and only this long.
const STARTUP_STDERR_SETTLE: Duration = Duration::from_millis(100);
use crate::transport::ConnId;

impl Dispatcher {
    /// Shuts one extension's generations down; `reply` gets the report when they are gone.
    pub(super) fn on_stop(
        &mut self,
        extension: &str,
        reply: crossbeam_channel::Sender<Option<ShutdownReport>>,
    ) {
        let conns: Vec<ConnId> = self
            .conns
            .values()
            .filter(|c| c.source.extension == extension)
            .map(|c| c.conn)
            .collect();
        if let Some(supervision) = self.supervision.get_mut(extension) {
            // An explicit stop ends supervision: nothing restarts it.
            supervision.stopped = true;
            supervision.restart_pending = false;
        }
        let Some(&last) = conns.iter().max() else {
            let _ = reply.send(None);
            return;
        };
        // A generation that a reload replaced may still be draining: the stop waits
        // for it too, so no process of the extension is left when it answers.
        self.stop_waiters.push(super::StopWaiter {
            remaining: conns.clone(),
            report: ShutdownReport::default(),
            reply,
        });
        self.stop_owned_trees(last);
        for conn in conns {
            self.begin_shutdown(conn);
        }
    }

    /// Starts a host-wide shutdown capped at `cap`.
    pub(super) fn begin_host_shutdown(
        &mut self,
        cap: Duration,
        reply: Option<crossbeam_channel::Sender<ShutdownReport>>,
    ) {
        if let Some(shutdown) = &mut self.shutdown {
            shutdown.waiters.extend(reply);
            return;
        }
        self.shutdown = Some(HostShutdown {
            waiters: reply.into_iter().collect(),
            report: ShutdownReport::default(),
        });
        let conns: Vec<ConnId> = self.conns.keys().copied().collect();
        for conn in conns {
            self.stop_owned_trees(conn);
            self.begin_shutdown(conn);
        }
        self.timers
            .schedule(Instant::now() + cap, Timer::ShutdownAggregate);
    }

    pub(super) fn finish_host_shutdown(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let mut report = shutdown.report;
            report
                .extensions
                .sort_by(|a, b| (&a.extension, a.generation).cmp(&(&b.extension, b.generation)));
            for waiter in shutdown.waiters {
                let _ = waiter.send(report.clone());
            }
        }
    }

    /// Begins the bounded shutdown sequence of one generation.
    pub(super) fn begin_shutdown(&mut self, conn: ConnId) {
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        if c.stage != ShutdownStage::None {
            return;
        }
        // Drain: nothing new is admitted, and what remains is cancelled.
        self.settle_all_children(conn);
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        let pending: Vec<u64> = c.pending.ids();
        let mut initializing = None;
        for id in pending {
            let c = self.conns.get_mut(&conn).expect("connection is live");
            let Some(p) = c.pending.remove(&id) else {
                continue;
            };
            match p.kind {
                PendingKind::Call { call, reply, .. } => {
                    self.calls.remove(&call);
                    let _ = reply.send(Err(CallError::Cancelled {
                        reason: CancelReason::Shutdown,
                    }));
                    if !p.frame.try_skip() {
                        c.send_cancel_notification(id, CancelReason::Shutdown);
                    }
                    // A late answer is then a late response, as after any other
                    // cancellation (section 1.9).
                    c.tombstones.insert(id, Instant::now(), false);
                }
                PendingKind::Initialize { role, .. } => {
                    initializing = Some(role);
                }
                PendingKind::Shutdown | PendingKind::LifecycleHook | PendingKind::Feature(_) => {}
            }
        }
        if let Some(role) = initializing {
            self.on_initialize_failed(conn, role, StartError::HostShutDown);
        }
        let c = self.conns.get_mut(&conn).expect("connection is live");
        for request in c.queued.drain(..) {
            self.calls.remove(&request.call);
            let _ = request.reply.send(Err(CallError::Cancelled {
                reason: CancelReason::Shutdown,
            }));
        }
        if c.state != LifecycleState::Crashed && c.state != LifecycleState::Degraded {
            self.set_state(conn, LifecycleState::Draining);
        }
        // Remaining lifecycle terminals go out before `shutdown` (section 5).
        let reason = if self.shutdown.is_some() {
            "the host is shutting down"
        } else {
            "this generation is ending"
        };
        self.emit_lifecycle_terminals(conn, reason);
        let c = self.conns.get_mut(&conn).expect("connection is live");
        if !c.transport_alive() {
            self.await_exit(conn);
            return;
        }
        let id = c.next_request_id();
        match c.encode_request(id, "shutdown", &json!({})) {
            Ok(bytes) => {
                c.send_request(id, PendingKind::Shutdown, bytes);
                c.stage = ShutdownStage::AwaitAck;
                self.timers.schedule(
                    Instant::now() + self.shared.timeouts.shutdown_ack,
                    Timer::ShutdownAck { conn },
                );
            }
            Err(_) => self.await_exit(conn),
        }
    }

    /// The extension acknowledged `shutdown`.
    pub(super) fn on_shutdown_ack(&mut self, conn: ConnId) {
        if let Some(c) = self.conns.get_mut(&conn) {
            c.acknowledged = true;
        }
        self.await_exit(conn);
    }

    pub(super) fn on_shutdown_ack_timeout(&mut self, conn: ConnId) {
        if self
            .conns
            .get(&conn)
            .is_some_and(|c| c.stage == ShutdownStage::AwaitAck)
        {
            self.await_exit(conn);
        }
    }

    /// The transport broke during shutdown: no acknowledgement can come any more.
    pub(super) fn on_shutdown_transport_lost(&mut self, conn: ConnId) {
        if self
            .conns
            .get(&conn)
            .is_some_and(|c| c.stage == ShutdownStage::AwaitAck)
        {
            self.await_exit(conn);
        }
    }

    /// Closes stdin once everything queued is written and waits for the exit.
    pub(super) fn await_exit(&mut self, conn: ConnId) {
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        if matches!(c.stage, ShutdownStage::AwaitExit | ShutdownStage::Killed) {
            return;
        }
        c.stage = ShutdownStage::AwaitExit;
        c.pending.remove_shutdown();
        c.io.writer.close();
        self.timers.schedule(
            Instant::now() + self.shared.timeouts.shutdown_exit,
            Timer::ShutdownExit { conn },
        );
        self.schedule_exit_poll(conn, EXIT_POLL_INTERVAL);
    }

    pub(super) fn on_shutdown_exit_timeout(&mut self, conn: ConnId) {
        if self
            .conns
            .get(&conn)
            .is_some_and(|c| c.stage == ShutdownStage::AwaitExit)
        {
            self.kill(conn);
        }
    }

    /// The aggregate deadline passed: kill every group still alive.
    pub(super) fn on_shutdown_aggregate(&mut self) {
        let conns: Vec<ConnId> = self.conns.keys().copied().collect();
        for conn in conns {
            self.kill(conn);
        }
    }

    /// Terminates a generation now: every waiter fails, the process group is killed
    /// and the generation ends once the child is reaped.
    pub(super) fn terminate(&mut self, conn: ConnId, state: LifecycleState) {
        let reason = match self.conns.get(&conn) {
            Some(c) => c
                .last_error
                .clone()
                .unwrap_or_else(|| "the generation was terminated".into()),
            None => return,
        };
        self.set_state(conn, state);
        self.fail_all(conn, CallError::TransportLost { reason });
        self.kill(conn);
    }

    /// Kills the process group with SIGKILL and polls for the exit.
    fn kill(&mut self, conn: ConnId) {
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        if c.stage == ShutdownStage::Killed {
            return;
        }
        c.stage = ShutdownStage::Killed;
        // Forced only when something was still running to be killed.
        c.forced = !c.child.has_exited().unwrap_or(false);
        // ESRCH (the group is already empty) is the only expected failure.
        let _ = c.child.kill_group(libc::SIGKILL);
        c.io.stop();
        self.schedule_exit_poll(conn, Duration::ZERO);
    }

    /// Schedules the next exit poll of `conn`, retiring any earlier one.
    pub(super) fn schedule_exit_poll(&mut self, conn: ConnId, after: Duration) {
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        c.poll_seq += 1;
        let seq = c.poll_seq;
        self.timers
            .schedule(Instant::now() + after, Timer::ExitPoll { conn, seq });
    }

    /// Schedules the next health poll of a ready generation on the host-wide grid of
    /// [`HEALTH_POLL_INTERVAL`] ticks, so the polls of a whole fleet fall due together
    /// and wake the dispatcher five times a second in all, not five times per
    /// generation.
    pub(super) fn schedule_health_poll(&mut self, conn: ConnId) {
        let interval = HEALTH_POLL_INTERVAL.as_nanos();
        let since = self.health_epoch.elapsed().as_nanos();
        let next_tick = (since / interval + 1) * interval;
        let after = Duration::from_nanos((next_tick - since) as u64);
        self.schedule_exit_poll(conn, after);
    }

    /// Checks whether the child exited. An exit nobody asked for is a crash.
    pub(super) fn on_exit_poll(&mut self, conn: ConnId, seq: u64) {
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        if c.poll_seq != seq {
            return;
        }
        let exited = c.child.exited_unreaped().unwrap_or(true);
        if !exited {
            if c.stage == ShutdownStage::None {
                self.schedule_health_poll(conn);
            } else {
                self.schedule_exit_poll(conn, EXIT_POLL_INTERVAL);
            }
            return;
        }
        if c.stage == ShutdownStage::None {
            let reason = "the extension process exited".to_string();
            c.last_error = Some(reason.clone());
            self.fail_all(conn, CallError::TransportLost { reason });
            self.set_state(conn, LifecycleState::Crashed);
        }
        self.finish(conn);
    }

    /// The child has exited: kill what is left of its group, reap it, stop its I/O
    /// threads and forget the generation.
    fn finish(&mut self, conn: ConnId) {
        self.fail_all(
            conn,
            CallError::TransportLost {
                reason: "the extension process exited".into(),
            },
        );
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        // The leader is a zombie until reaped, so its pid, which is the group id, cannot
        // have been reused: `finish` kills the group first, reaching only processes the
        // extension left behind in it (a background `cmd &`, for example), then reaps.
        let status = c.child.finish().ok();
        let failed_start = c.failed_start.take().map(|(role, failure)| match failure {
            FailedStart::Refused(error) => (role, error),
            FailedStart::Lost(reason) => {
                // The child is gone, so its stderr ends as soon as the drain has read
                // what it wrote last (unless a descendant holds the pipe: the wait is
                // bounded).
                c.io.wait_stderr_closed(STARTUP_STDERR_SETTLE);
                let evidence = c.startup_evidence(status.map(|s| s.to_string()));
                let error = StartError::TransportLost {
                    reason,
                    evidence: Box::new(evidence),
                };
                (role, error)
            }
        });
        if let Some((role, error)) = failed_start {
            // The dispatcher answers nothing else before the generation is forgotten
            // below, so whoever started it sees it gone.
            self.on_initialize_failed(conn, role, error);
        }
        self.terminal_closed(conn);
        self.each_feature(|f, d| f.generation_gone(d, conn));
        let Some(mut c) = self.conns.remove(&conn) else {
            return;
        };
        c.io.stop();
        let was_routed = self.routes.get(&c.source.extension) == Some(&conn);
        if was_routed {
            self.routes.remove(&c.source.extension);
        }
        // Crashed, degraded and refused (already stopped) generations reported their
        // final state: one terminal state event per generation.
        if !matches!(
            c.state,
            LifecycleState::Crashed | LifecycleState::Degraded | LifecycleState::Stopped
        ) {
            c.state = LifecycleState::Stopped;
            self.emit_state(&c);
        }
        let record = ExtensionShutdown {
            extension: c.source.extension.clone(),
            generation: c.source.generation,
            acknowledged: c.acknowledged,
            forced: c.forced,
            exit_status: status.map(|s| s.to_string()),
            final_state: c.state,
        };
        let _ = self.janitor.send(c.io);
        if let Some(shutdown) = &mut self.shutdown {
            shutdown.report.extensions.push(record.clone());
        }
        for waiter in &mut self.stop_waiters {
            if let Some(at) = waiter.remaining.iter().position(|c| *c == conn) {
                waiter.remaining.swap_remove(at);
                waiter.report.extensions.push(record.clone());
            }
        }
        self.stop_waiters.retain_mut(|waiter| {
            if !waiter.remaining.is_empty() {
                return true;
            }
            let mut report = std::mem::take(&mut waiter.report);
            report.extensions.sort_by_key(|e| e.generation);
            let _ = waiter.reply.send(Some(report));
            false
        });
        let crashed = matches!(
            record.final_state,
            LifecycleState::Crashed | LifecycleState::Degraded
        );
        if was_routed && crashed {
            let exit = match (&record.exit_status, &c.last_error) {
                (Some(status), Some(error)) => format!("{error}; {status}"),
                (Some(status), None) => status.clone(),
                (None, Some(error)) => error.clone(),
                (None, None) => "the generation ended".into(),
            };
            self.on_unexpected_exit(&record.extension, exit);
        }
    }
}
