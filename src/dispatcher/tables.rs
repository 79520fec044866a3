//! Counting what the host's tables hold ([`crate::ExtensionHost::tables`]), so that a
//! test or a long-running embedder can see that a dead generation left nothing behind.

use super::Dispatcher;
use crate::model::status::HostTables;

impl Dispatcher {
    /// Counts every table after dropping the timers that are already stale.
    pub(super) fn tables(&mut self) -> HostTables {
        self.drop_stale_timers();
        let mut tables = HostTables {
            generations: self.conns.len(),
            routes: self.routes.len(),
            calls: self.calls.len(),
            timers: self.timers.len(),
            stop_waiters: self.stop_waiters.len(),
            restart_timers: self.restart_timers.len(),
            open_scopes: self.open_scopes.len(),
            launching: self.launching.values().sum(),
            unjoined_io: self.janitor.len(),
            ..HostTables::default()
        };
        for c in self.conns.values() {
            tables.pending_requests += c.pending.len();
            tables.queued_calls += c.queued.len();
            tables.tombstones += c.tombstones.len();
            tables.child_requests += c.children.len();
        }
        self.count_features(&mut tables);
        tables
    }
}
