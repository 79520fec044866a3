//! Lifecycle notifications (section 1.10): best-effort, bounded, never blocking.

use std::time::Instant;

use super::timers::Timer;
use super::Dispatcher;
use crate::limits::LIFECYCLE_SESSION_TURN_DEADLINE;
use crate::model::events::Diagnostic;
use crate::model::lifecycle::{LifecycleNotification, Outcome, Settlement};
use crate::model::status::LifecycleState;
use crate::negotiation::{Capability, Feature};
use crate::transport::{ConnId, FrameState, OutboundFrame};
use serde_json::json;

/// A session, turn or tool that started and has not settled. New generations are
/// seeded with it; a generation that goes away first gets its terminal (section 5:
/// reload "emits remaining lifecycle terminals" and "seeds lifecycle state").
pub(super) struct OpenScope {
    pub started: LifecycleNotification,
    pub at: Instant,
}

impl Dispatcher {
    /// Sends `notification` to every ready generation subscribed to it. A notification
    /// that finds the writer queue full is dropped with a diagnostic; a session or turn
    /// notification the writer has not started within 250 ms is skipped the same way.
    ///
    /// A session's start and settlement also go to every runtime-served feature's
    /// hooks.
    pub(super) fn on_lifecycle(&mut self, notification: LifecycleNotification) {
        match &notification {
            LifecycleNotification::SessionStarted { session_id } => {
                self.each_feature(|f, d| f.session_started(d, session_id))
            }
            LifecycleNotification::SessionSettled { session_id, .. } => {
                self.each_feature(|f, d| f.session_settled(d, session_id))
            }
            _ => {}
        }
        let probe = Settlement {
            outcome: Outcome::Completed,
            duration_ms: 0,
            reason: None,
        };
        if notification.settled_with(probe).is_some() {
            self.open_scopes.push(OpenScope {
                started: notification.clone(),
                at: Instant::now(),
            });
        } else {
            self.open_scopes
                .retain(|scope| !notification.settles(&scope.started));
        }
        let conns: Vec<ConnId> = self
            .conns
            .values()
            .filter(|c| c.state == LifecycleState::Ready || c.state == LifecycleState::Draining)
            .map(|c| c.conn)
            .collect();
        for conn in conns {
            self.send_lifecycle(conn, &notification);
        }
    }

    /// Sends the terminal of every open scope to a generation that is going away,
    /// innermost first, with outcome `shutdown`.
    pub(super) fn emit_lifecycle_terminals(&mut self, conn: ConnId, reason: &str) {
        let terminals: Vec<LifecycleNotification> = self
            .open_scopes
            .iter()
            .rev()
            .filter_map(|scope| {
                scope.started.settled_with(Settlement {
                    outcome: Outcome::Shutdown,
                    duration_ms: scope.at.elapsed().as_millis() as u64,
                    reason: Some(reason.to_string()),
                })
            })
            .collect();
        for terminal in terminals {
            self.send_lifecycle(conn, &terminal);
        }
    }

    /// Tells a new generation which sessions, turns and tools are open.
    pub(super) fn seed_lifecycle(&mut self, conn: ConnId) {
        let open: Vec<LifecycleNotification> = self
            .open_scopes
            .iter()
            .map(|scope| scope.started.clone())
            .collect();
        for started in open {
            self.send_lifecycle(conn, &started);
        }
    }

    /// Sends one lifecycle notification to `conn` if it subscribed to it.
    fn send_lifecycle(&mut self, conn: ConnId, notification: &LifecycleNotification) {
        let event = notification.event();
        let now = Instant::now();
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        if let Some(contract) = c.negotiated.as_ref().and_then(|n| n.contract.as_ref()) {
            if contract.has_capability(Capability::LifecycleEvents) && contract.allows("hook/run") {
                self.send_lifecycle_hook(conn, notification);
            }
            return;
        }
        let subscribed = c.negotiated.as_ref().is_some_and(|n| {
            n.features.contains(Feature::LifecycleEvents)
                && n.lifecycle_subscriptions.contains(&event)
        });
        if !subscribed || !c.transport_alive() {
            return;
        }
        let params = notification.params();
        let Ok(bytes) = c.encode_notification(event.method(), &params) else {
            return;
        };
        if !c.writer_has_room() {
            let source = c.source.clone();
            self.shared.events.diagnostic(
                &source,
                Diagnostic::Refused {
                    method: event.method().into(),
                    reason: "the writer queue is full; the lifecycle notification was dropped"
                        .into(),
                },
            );
            return;
        }
        if notification.is_session_or_turn() {
            let state = FrameState::new();
            c.lifecycle_seq += 1;
            let seq = c.lifecycle_seq;
            c.lifecycle_frames.insert(seq, state.clone());
            c.push_frame(OutboundFrame {
                bytes,
                state: Some(state),
                wipe: false,
            });
            self.timers.schedule(
                now + LIFECYCLE_SESSION_TURN_DEADLINE,
                Timer::LifecycleDeadline { conn, seq },
            );
        } else {
            c.push_frame(OutboundFrame {
                bytes,
                state: None,
                wipe: false,
            });
        }
    }

    /// API 0.3 `lifecycle_events`: sessions are reported as `hook/run` requests,
    /// `session_start {binding}` and `session_end {binding, outcome, reason,
    /// duration_ms}`, `binding` being the owner triple (SUPPLEMENT "Methods in
    /// brief"). Turns and tools have no 0.3 form.
    fn send_lifecycle_hook(&mut self, conn: ConnId, notification: &LifecycleNotification) {
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        let binding = |session_id: &str| {
            json!({
                "session_id": session_id,
                "extension_instance_id": c.owner.extension_instance_id,
                "process_generation": c.owner.process_generation,
            })
        };
        let params = match notification {
            LifecycleNotification::SessionStarted { session_id } => {
                json!({"hook": "session_start", "payload": {"binding": binding(session_id)}})
            }
            LifecycleNotification::SessionSettled {
                session_id,
                settlement,
            } => json!({"hook": "session_end", "payload": {
                "binding": binding(session_id),
                "outcome": settlement.outcome.as_str(),
                "reason": session_end_reason(settlement),
                "duration_ms": settlement.duration_ms,
            }}),
            _ => return,
        };
        if !c.transport_alive() {
            return;
        }
        let id = c.next_request_id();
        if let Ok(bytes) = c.encode_request(id, "hook/run", &params) {
            c.send_request(id, super::connection::PendingKind::LifecycleHook, bytes);
            self.timers.schedule(
                Instant::now() + self.shared.timeouts.request,
                Timer::RequestDeadline { conn, id },
            );
        }
    }

    /// The answer to a 0.3 lifecycle `hook/run`: a disposition that never vetoes, so
    /// only a malformed one is worth a diagnostic.
    pub(super) fn on_lifecycle_hook_answer(
        &mut self,
        conn: ConnId,
        outcome: Result<serde_json::Value, crate::wire::ResponseError>,
    ) {
        let Some(c) = self.conns.get(&conn) else {
            return;
        };
        let problem = match outcome {
            Ok(value) => crate::validate::host_driven::lifecycle_disposition(&value)
                .err()
                .map(|e| e.to_string()),
            Err(error) => Some(format!("the extension answered with an error: {error}")),
        };
        if let Some(reason) = problem {
            self.shared.events.diagnostic(
                &c.source,
                Diagnostic::Refused {
                    method: "hook/run".into(),
                    reason,
                },
            );
        }
    }

    /// A session or turn notification's 250 ms passed: if it has not started, skip it.
    pub(super) fn on_lifecycle_deadline(&mut self, conn: ConnId, seq: u64) {
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        let Some(state) = c.lifecycle_frames.remove(&seq) else {
            return;
        };
        if state.try_skip() {
            let source = c.source.clone();
            self.shared.events.diagnostic(
                &source,
                Diagnostic::Refused {
                    method: "lifecycle".into(),
                    reason: "not delivered within 250 ms; dropped".into(),
                },
            );
        }
    }
}

/// The 0.3 `session_end` reason, one of `shutdown`, `reload`, `crash`, `cancelled`: the
/// embedder's reason when it is one of those, otherwise the one the outcome implies.
fn session_end_reason(settlement: &Settlement) -> &'static str {
    const REASONS: [&str; 4] = ["shutdown", "reload", "crash", "cancelled"];
    if let Some(reason) = settlement
        .reason
        .as_deref()
        .and_then(|r| REASONS.into_iter().find(|known| *known == r))
    {
        return reason;
    }
    match settlement.outcome {
        Outcome::Failed => "crash",
        Outcome::Cancelled | Outcome::Interrupted => "cancelled",
        Outcome::Completed
        | Outcome::FrontendDisconnected
        | Outcome::Shutdown
        | Outcome::LimitReached => "shutdown",
    }
}
