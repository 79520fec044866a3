//! Lifecycle states, status snapshots and shutdown reports (sections 1.8 and 5).

use std::fmt;

use crate::manifest::ApiVersion;

/// The lifecycle of one generation (section 5):
/// `starting -> initializing -> ready -> draining -> stopped`, plus `degraded` and
/// `crashed`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LifecycleState {
    /// The process is being spawned.
    Starting,
    /// `initialize` is in flight.
    Initializing,
    /// Negotiated and accepting calls.
    Ready,
    /// Admitting nothing new; shutting down.
    Draining,
    /// Gone after an orderly end (or a rejected initialization).
    Stopped,
    /// Unhealthy (for example a cancelled request that never settled); being terminated.
    Degraded,
    /// The process or its transport died unexpectedly.
    Crashed,
}

impl LifecycleState {
    /// The state's name in lower case, as section 5 writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            LifecycleState::Starting => "starting",
            LifecycleState::Initializing => "initializing",
            LifecycleState::Ready => "ready",
            LifecycleState::Draining => "draining",
            LifecycleState::Stopped => "stopped",
            LifecycleState::Degraded => "degraded",
            LifecycleState::Crashed => "crashed",
        }
    }
}

impl fmt::Display for LifecycleState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A snapshot of one live generation (section 5, status inspection).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ExtensionStatus {
    /// The extension's name.
    pub extension: String,
    /// Its process generation.
    pub generation: u64,
    /// Its lifecycle state.
    pub state: LifecycleState,
    /// The wire version.
    pub api_version: ApiVersion,
    /// The child's process id (also its process group id); `None` while no process
    /// runs (backing off before a restart, or parked).
    pub pid: Option<u32>,
    /// Negotiated features (empty for API 0.1 or before negotiation).
    pub features: Vec<String>,
    /// Negotiated concurrency bound, once negotiated.
    pub max_concurrent_requests: Option<u32>,
    /// Host requests written or queued for the writer and not yet settled.
    pub pending: usize,
    /// Calls waiting for a concurrency slot.
    pub queued: usize,
    /// True when calls to this extension go to this generation.
    pub routed: bool,
    /// The last error, bounded.
    pub last_error: Option<String>,
    /// The last lines the extension wrote on stderr.
    pub stderr_tail: Vec<String>,
    /// Restart attempts used from the budget of
    /// [`MAX_RESTART_ATTEMPTS`](crate::limits::MAX_RESTART_ATTEMPTS).
    pub restart_attempts: u32,
    /// A restart is scheduled (the extension is backing off).
    pub restart_scheduled: bool,
    /// Why automatic restarts stopped, if they did.
    pub parked: Option<crate::supervisor::ParkReason>,
}

/// How one generation ended during a shutdown.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ExtensionShutdown {
    /// The extension's name.
    pub extension: String,
    /// Its process generation.
    pub generation: u64,
    /// The extension acknowledged the `shutdown` request.
    pub acknowledged: bool,
    /// The process group had to be killed.
    pub forced: bool,
    /// The child's exit status as the OS reported it.
    pub exit_status: Option<String>,
    /// The generation's final state.
    pub final_state: LifecycleState,
}

/// The outcome of a shutdown.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ShutdownReport {
    /// Every generation that ended, sorted by name and generation.
    pub extensions: Vec<ExtensionShutdown>,
}

/// How many entries the host's own tables hold at one moment: the generations it still
/// holds and what they hold, and the host-wide books kept beside them.
///
/// A long-running host is expected to come back to the same counts whenever it is
/// quiet, however many generations came and went: a dead generation leaves nothing
/// behind. [`crate::ExtensionHost::tables`] reads it; deadlines of calls and requests
/// that already settled, and timers of generations that are gone, are dropped before
/// counting.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct HostTables {
    /// Generations the host holds: running, starting or going away.
    pub generations: usize,
    /// Extension names that route calls to a generation.
    pub routes: usize,
    /// Embedder calls that have not settled (queued or sent).
    pub calls: usize,
    /// Requests sent to extensions and not answered yet, over every generation.
    pub pending_requests: usize,
    /// Calls queued for a concurrency slot, over every generation.
    pub queued_calls: usize,
    /// Tombstones of cancelled or timed-out requests, over every generation.
    pub tombstones: usize,
    /// Extension-to-host requests not answered yet, over every generation.
    pub child_requests: usize,
    /// Resource records (section 2.26), over every generation.
    pub resource_records: usize,
    /// Compositions in progress (section 2.25), over every generation.
    pub compositions: usize,
    /// Entries in the dispatcher's timer heap.
    pub timers: usize,
    /// Callers waiting for a generation to stop.
    pub stop_waiters: usize,
    /// Pending supervisor restarts.
    pub restart_timers: usize,
    /// Sessions, turns and tools that started and have not settled (section 1.10).
    pub open_scopes: usize,
    /// Launches in progress.
    pub launching: usize,
    /// Extension catalogs held by the last frozen composition registry.
    pub frozen_catalogs: usize,
    /// Finished generations whose I/O threads (and stderr tail) wait to be joined.
    pub unjoined_io: usize,
    /// Bulk write tickets, read leases and per-call grants (section 2.27); retained
    /// blobs outlive generations by design and are not counted.
    pub bulk_transfers: usize,
}
