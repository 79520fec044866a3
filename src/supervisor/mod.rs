//! Supervision (section 5): restart backoff, the retry budget, and the bookkeeping
//! behind "parked". The decisions themselves are taken on the dispatcher thread, which
//! owns this state, so a manual reload and a scheduled restart can never race.

pub mod backoff;

use std::fmt;
use std::time::{Duration, Instant};

use crate::limits::{
    MAX_RESTART_ATTEMPTS, RESTART_BACKOFF_BASE, RESTART_BACKOFF_CAP, RESTART_BUDGET_RESET,
};

use crate::manifest::LocatedManifest;
use crate::negotiation::{CommandDefinition, ToolDefinition};

/// How the supervisor restarts extensions after unexpected exits (section 5). The
/// defaults are the reference's; embedders and tests may tighten them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SupervisorPolicy {
    /// Base of the full-jitter exponential backoff.
    pub backoff_base: Duration,
    /// Cap of the backoff.
    pub backoff_cap: Duration,
    /// Failed attempts after which the extension is parked.
    pub max_attempts: u32,
    /// Continuous readiness that resets the budget.
    pub budget_reset: Duration,
}

impl Default for SupervisorPolicy {
    fn default() -> SupervisorPolicy {
        SupervisorPolicy {
            backoff_base: RESTART_BACKOFF_BASE,
            backoff_cap: RESTART_BACKOFF_CAP,
            max_attempts: MAX_RESTART_ATTEMPTS,
            budget_reset: RESTART_BUDGET_RESET,
        }
    }
}

/// Why an extension is parked: no automatic restart happens until a manual reload.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParkReason {
    /// The first start failed; the supervisor only restarts extensions that were ready
    /// once (section 5: "generation-0 parked discovery entries").
    InitialFailure {
        /// The start error.
        error: String,
    },
    /// The restart budget is spent: this many restarts in a row did not give 30 s of
    /// continuous readiness. Each one either failed to start (spawn or `initialize`
    /// failed) or started and then exited before the budget reset.
    RetryBudgetExhausted {
        /// Restart attempts made since the budget was last reset.
        attempts: u32,
        /// Of those, the ones that failed to start.
        failed_starts: u32,
        /// Of those, the ones that initialized and then exited unexpectedly.
        early_exits: u32,
        /// What ended the last attempt (a start error, or the exit status).
        last: String,
    },
    /// A permanent manifest, version or re-registration error.
    Permanent {
        /// The error.
        error: String,
    },
}

impl fmt::Display for ParkReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParkReason::InitialFailure { error } => write!(f, "initial start failed: {error}"),
            ParkReason::RetryBudgetExhausted {
                attempts,
                failed_starts,
                early_exits,
                last,
            } => {
                write!(
                    f,
                    "{attempts} restarts in a row did not stay ready for {} s: ",
                    crate::limits::RESTART_BUDGET_RESET.as_secs()
                )?;
                match (*failed_starts, *early_exits) {
                    (_, 0) => write!(f, "each failed to start")?,
                    (0, _) => write!(f, "each initialized, then exited")?,
                    (failed, exited) => write!(
                        f,
                        "{failed} failed to start, {exited} initialized then exited"
                    )?,
                }
                write!(f, " (last: {last})")
            }
            ParkReason::Permanent { error } => write!(f, "permanent error: {error}"),
        }
    }
}

/// What the supervisor keeps about one extension.
pub(crate) struct Supervision {
    /// The manifest its generations are launched from.
    pub located: LocatedManifest,
    /// The catalog of the last generation that was ready (the re-registration check).
    pub catalog: Option<(Vec<ToolDefinition>, Vec<CommandDefinition>)>,
    /// Restart attempts since the budget was last reset.
    pub attempts: u32,
    /// Of those, the ones that failed to start.
    pub failed_starts: u32,
    /// Of those, the ones that became ready and then exited unexpectedly.
    pub early_exits: u32,
    /// What ended the last restart attempt.
    pub last_failure: String,
    /// When the current generation became ready.
    pub ready_since: Option<Instant>,
    /// Set while automatic restarts are stopped.
    pub parked: Option<ParkReason>,
    /// The sequence of the live restart timer; older timers are stale.
    pub restart_seq: u64,
    /// A restart is scheduled.
    pub restart_pending: bool,
    /// Explicitly stopped: no supervision.
    pub stopped: bool,
}

impl Supervision {
    /// Starts a fresh restart budget.
    pub fn reset_budget(&mut self) {
        self.attempts = 0;
        self.failed_starts = 0;
        self.early_exits = 0;
        self.last_failure.clear();
    }

    /// Records that the last restart attempt failed to start.
    pub fn failed_start(&mut self, error: String) {
        self.failed_starts += 1;
        self.last_failure = error;
    }
}

impl Supervision {
    /// Supervision of an extension whose generation just became ready.
    pub fn new(located: LocatedManifest) -> Supervision {
        Supervision {
            located,
            catalog: None,
            attempts: 0,
            failed_starts: 0,
            early_exits: 0,
            last_failure: String::new(),
            ready_since: None,
            parked: None,
            restart_seq: 0,
            restart_pending: false,
            stopped: false,
        }
    }
}
