//! Child agent sessions' host state (sections 2.13-2.18): the runtime owns the protocol,
//! the bound service owns the model.
//!
//! One [`AgentHub`] per host keeps the records of every child spawned through it
//! ([`AgentTable`](super::spawned::AgentTable)): who owns it (the extension principal
//! plus the durable session owner, so a restarted or reloaded generation resumes its
//! tree), its path, policy, status and counters with host-owned timestamps, and the
//! idempotency keys. Each connection's `AgentGuard` (`dispatcher/agents.rs`) admits
//! its requests against the hub: a target is resolved within the owner's trees (and
//! handed to the service as its `agent_id`),
//! the eight-worker bound counts spawns still in flight, an identical retry is answered
//! from the record, and follow-ups respect shut-down targets, interrupts in flight and
//! a full queue. `agent/list` and `agent/wait` never reach the service: the guard
//! answers them from the hub, and holds a wait (without a thread) until every owned
//! child settled or its deadline passed. The service reports each change with
//! [`AgentReports`](crate::services::bound::AgentReports), which wakes the dispatcher.

use crossbeam_channel::{Receiver, Sender};
use parking_lot::{Mutex, MutexGuard};

pub(crate) use super::record::{now_ms, OwnerKey};
use super::spawned::AgentTable;
use crate::services::bound::agents::ReportSink;
use crate::services::bound::{AgentEvent, AgentReport, ReportError};

/// The host's child-session records and the wake-up channel of its reports.
pub(crate) struct AgentHub {
    table: Mutex<AgentTable>,
    changed: (Sender<()>, Receiver<()>),
}

impl AgentHub {
    /// An empty hub.
    pub fn new() -> AgentHub {
        AgentHub {
            table: Mutex::new(AgentTable::default()),
            changed: crossbeam_channel::bounded(1),
        }
    }

    /// Wakes the dispatcher (coalesced: one pending wake-up is enough).
    pub fn wake(&self) {
        let _ = self.changed.0.try_send(());
    }

    /// Where the dispatcher hears that records changed.
    pub fn changes(&self) -> &Receiver<()> {
        &self.changed.1
    }

    /// The records.
    pub fn table(&self) -> MutexGuard<'_, AgentTable> {
        self.table.lock()
    }
}

impl ReportSink for AgentHub {
    /// Records a service's report and wakes the dispatcher, which answers the waits it
    /// settled.
    fn report(&self, report: AgentReport) -> Result<(), ReportError> {
        self.table.lock().apply(report, now_ms())?;
        self.wake();
        Ok(())
    }

    /// Appends a service's event to its child's log and wakes the dispatcher.
    fn event(&self, agent_id: &str, event: AgentEvent) -> Result<u64, ReportError> {
        let sequence = self.table.lock().event(agent_id, event, now_ms())?;
        self.wake();
        Ok(sequence)
    }
}
