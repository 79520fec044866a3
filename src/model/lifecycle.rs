//! Lifecycle notifications the embedder reports (section 1.10).

use serde_json::{json, Value};

use crate::limits::MAX_LIFECYCLE_REASON_BYTES;
use crate::negotiation::LifecycleEvent;

/// How a session, turn or tool ended (section 1.10).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// It finished normally.
    Completed,
    /// It failed.
    Failed,
    /// It was cancelled.
    Cancelled,
    /// It was interrupted.
    Interrupted,
    /// The frontend went away.
    FrontendDisconnected,
    /// The host shut down.
    Shutdown,
    /// A limit (turns, tokens, cost, time) was reached.
    LimitReached,
}

impl Outcome {
    /// The outcome as sent on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Completed => "completed",
            Outcome::Failed => "failed",
            Outcome::Cancelled => "cancelled",
            Outcome::Interrupted => "interrupted",
            Outcome::FrontendDisconnected => "frontend_disconnected",
            Outcome::Shutdown => "shutdown",
            Outcome::LimitReached => "limit_reached",
        }
    }
}

/// The end of a session, turn or tool.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settlement {
    /// How it ended.
    pub outcome: Outcome,
    /// How long it took.
    pub duration_ms: u64,
    /// Why, if known; clipped to 4 KiB on a UTF-8 boundary when sent.
    pub reason: Option<String>,
}

/// One lifecycle observation, sent to every generation that subscribed to it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LifecycleNotification {
    /// `session/started`.
    SessionStarted {
        /// The session.
        session_id: String,
    },
    /// `session/settled`.
    SessionSettled {
        /// The session.
        session_id: String,
        /// How it ended.
        settlement: Settlement,
    },
    /// `turn/started`.
    TurnStarted {
        /// The session.
        session_id: String,
        /// The owning run.
        run_id: String,
        /// The turn.
        turn_id: String,
    },
    /// `turn/settled`.
    TurnSettled {
        /// The session.
        session_id: String,
        /// The owning run.
        run_id: String,
        /// The turn.
        turn_id: String,
        /// How it ended.
        settlement: Settlement,
    },
    /// `tool/started`.
    ToolStarted {
        /// The session.
        session_id: String,
        /// The owning run.
        run_id: String,
        /// The turn.
        turn_id: String,
        /// The tool call.
        tool_call_id: String,
        /// The tool's name.
        tool_name: String,
    },
    /// `tool/settled`.
    ToolSettled {
        /// The session.
        session_id: String,
        /// The owning run.
        run_id: String,
        /// The turn.
        turn_id: String,
        /// The tool call.
        tool_call_id: String,
        /// The tool's name.
        tool_name: String,
        /// How it ended.
        settlement: Settlement,
    },
}

impl LifecycleNotification {
    /// The event kind, for subscription checks.
    pub fn event(&self) -> LifecycleEvent {
        match self {
            LifecycleNotification::SessionStarted { .. } => LifecycleEvent::SessionStarted,
            LifecycleNotification::SessionSettled { .. } => LifecycleEvent::SessionSettled,
            LifecycleNotification::TurnStarted { .. } => LifecycleEvent::TurnStarted,
            LifecycleNotification::TurnSettled { .. } => LifecycleEvent::TurnSettled,
            LifecycleNotification::ToolStarted { .. } => LifecycleEvent::ToolStarted,
            LifecycleNotification::ToolSettled { .. } => LifecycleEvent::ToolSettled,
        }
    }

    /// True for session and turn events, which must be delivered within 250 ms; tool
    /// events only use the bounded writer queue.
    pub fn is_session_or_turn(&self) -> bool {
        !matches!(
            self,
            LifecycleNotification::ToolStarted { .. } | LifecycleNotification::ToolSettled { .. }
        )
    }

    /// The notification's params.
    pub fn params(&self) -> Value {
        let settled = |mut v: Value, s: &Settlement| {
            v["outcome"] = json!(s.outcome.as_str());
            v["duration_ms"] = json!(s.duration_ms);
            v["reason"] = json!(s.reason.as_deref().map(clip_reason));
            v
        };
        match self {
            LifecycleNotification::SessionStarted { session_id } => {
                json!({"session_id": session_id})
            }
            LifecycleNotification::SessionSettled {
                session_id,
                settlement,
            } => settled(json!({"session_id": session_id}), settlement),
            LifecycleNotification::TurnStarted {
                session_id,
                run_id,
                turn_id,
            } => {
                json!({"session_id": session_id, "run_id": run_id, "turn_id": turn_id})
            }
            LifecycleNotification::TurnSettled {
                session_id,
                run_id,
                turn_id,
                settlement,
            } => settled(
                json!({"session_id": session_id, "run_id": run_id, "turn_id": turn_id}),
                settlement,
            ),
            LifecycleNotification::ToolStarted {
                session_id,
                run_id,
                turn_id,
                tool_call_id,
                tool_name,
            } => json!({
                "session_id": session_id, "run_id": run_id, "turn_id": turn_id,
                "tool_call_id": tool_call_id, "tool_name": tool_name,
            }),
            LifecycleNotification::ToolSettled {
                session_id,
                run_id,
                turn_id,
                tool_call_id,
                tool_name,
                settlement,
            } => settled(
                json!({
                    "session_id": session_id, "run_id": run_id, "turn_id": turn_id,
                    "tool_call_id": tool_call_id, "tool_name": tool_name,
                }),
                settlement,
            ),
        }
    }
}

/// Clips a reason to [`MAX_LIFECYCLE_REASON_BYTES`] on a UTF-8 boundary.
pub fn clip_reason(reason: &str) -> &str {
    crate::text::head(reason, MAX_LIFECYCLE_REASON_BYTES)
}

impl LifecycleNotification {
    /// For a started event, the settled event that ends the same scope with
    /// `settlement`; `None` for settled events.
    pub fn settled_with(&self, settlement: Settlement) -> Option<LifecycleNotification> {
        match self.clone() {
            LifecycleNotification::SessionStarted { session_id } => {
                Some(LifecycleNotification::SessionSettled {
                    session_id,
                    settlement,
                })
            }
            LifecycleNotification::TurnStarted {
                session_id,
                run_id,
                turn_id,
            } => Some(LifecycleNotification::TurnSettled {
                session_id,
                run_id,
                turn_id,
                settlement,
            }),
            LifecycleNotification::ToolStarted {
                session_id,
                run_id,
                turn_id,
                tool_call_id,
                tool_name,
            } => Some(LifecycleNotification::ToolSettled {
                session_id,
                run_id,
                turn_id,
                tool_call_id,
                tool_name,
                settlement,
            }),
            _ => None,
        }
    }

    /// True when `self`, a settled event, ends the scope that `started` opened.
    pub fn settles(&self, started: &LifecycleNotification) -> bool {
        use LifecycleNotification as L;
        match (self, started) {
            (L::SessionSettled { session_id: a, .. }, L::SessionStarted { session_id: b }) => {
                a == b
            }
            (
                L::TurnSettled {
                    session_id: a,
                    run_id: r,
                    turn_id: t,
                    ..
                },
                L::TurnStarted {
                    session_id: b,
                    run_id: s,
                    turn_id: u,
                },
            ) => a == b && r == s && t == u,
            (
                L::ToolSettled {
                    session_id: a,
                    tool_call_id: c,
                    ..
                },
                L::ToolStarted {
                    session_id: b,
                    tool_call_id: d,
                    ..
                },
            ) => a == b && c == d,
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_are_clipped_on_a_char_boundary() {
        let long = "€".repeat(2000); // 3 bytes each
        let clipped = clip_reason(&long);
        assert!(clipped.len() <= MAX_LIFECYCLE_REASON_BYTES);
        assert!(clipped.len() > MAX_LIFECYCLE_REASON_BYTES - 3);
        assert_eq!(clip_reason("short"), "short");
    }

    #[test]
    fn settled_params_match_the_reference_example() {
        let n = LifecycleNotification::TurnSettled {
            session_id: "abc123".into(),
            run_id: "extension-run-7".into(),
            turn_id: "extension-turn-7".into(),
            settlement: Settlement {
                outcome: Outcome::Completed,
                duration_ms: 942,
                reason: None,
            },
        };
        assert_eq!(
            n.params(),
            json!({"session_id": "abc123", "run_id": "extension-run-7", "turn_id": "extension-turn-7",
                   "outcome": "completed", "duration_ms": 942, "reason": null})
        );
        assert_eq!(n.event().method(), "turn/settled");
    }
}
