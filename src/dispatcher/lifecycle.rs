//! Lifecycle notifications (section 1.10): best-effort, bounded, never blocking.

use std::time::Instant;

use super::timers::Timer;
use super::Dispatcher;
use crate::host::events::Diagnostic;
use crate::host::lifecycle::LifecycleNotification;
use crate::host::LifecycleState;
use crate::limits::LIFECYCLE_SESSION_TURN_DEADLINE;
use crate::negotiation::Feature;
use crate::transport::{ConnId, FrameState, OutboundFrame};

impl Dispatcher {
    /// Sends `notification` to every ready generation subscribed to it. A notification
    /// that finds the writer queue full is dropped with a diagnostic; a session or turn
    /// notification the writer has not started within 250 ms is skipped the same way.
    pub(super) fn on_lifecycle(&mut self, notification: LifecycleNotification) {
        let event = notification.event();
        let params = notification.params();
        let conns: Vec<ConnId> = self
            .conns
            .values()
            .filter(|c| c.state == LifecycleState::Ready || c.state == LifecycleState::Draining)
            .filter(|c| {
                c.negotiated.as_ref().is_some_and(|n| {
                    n.features.contains(Feature::LifecycleEvents)
                        && n.lifecycle_subscriptions.contains(&event)
                })
            })
            .map(|c| c.conn)
            .collect();
        let now = Instant::now();
        for conn in conns {
            let c = self
                .conns
                .get_mut(&conn)
                .expect("listed connection is live");
            let Ok(bytes) = c.encode_notification(event.method(), &params) else {
                continue;
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
                continue;
            }
            if notification.is_session_or_turn() {
                let state = FrameState::new();
                c.lifecycle_seq += 1;
                let seq = c.lifecycle_seq;
                c.lifecycle_frames.insert(seq, state.clone());
                c.push_frame(OutboundFrame {
                    bytes,
                    state: Some(state),
                });
                self.timers.schedule(
                    now + LIFECYCLE_SESSION_TURN_DEADLINE,
                    Timer::LifecycleDeadline { conn, seq },
                );
            } else {
                c.push_frame(OutboundFrame { bytes, state: None });
            }
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
