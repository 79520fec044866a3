//! Child agent sessions' host state (sections 2.13-2.18): the runtime owns the protocol,
//! the bound service owns the model.
//!
//! One [`AgentHub`] per host keeps the records of every child spawned through it
//! ([`table::AgentTable`]): who owns it (the extension principal plus the durable session
//! owner, so a restarted or reloaded generation resumes its tree), its path, policy,
//! status and counters with host-owned timestamps, and the idempotency keys. Each
//! connection's [`AgentGuard`] admits its requests against the hub: a target is
//! resolved within the owner's trees (and handed to the service as its `agent_id`),
//! the eight-worker bound counts spawns still in flight, an identical retry is answered
//! from the record, and follow-ups respect shut-down targets, interrupts in flight and
//! a full queue. `agent/list` and `agent/wait` never reach the service: the guard
//! answers them from the hub, and holds a wait (without a thread) until every owned
//! child settled or its deadline passed. The service reports each change with
//! [`AgentReports`](crate::services::bound::AgentReports), which wakes the dispatcher.

mod guard;
mod record;
mod table;

use std::path::Path;

use crossbeam_channel::{Receiver, Sender};
use parking_lot::{Mutex, MutexGuard};
use sha2::{Digest, Sha256};

pub(crate) use guard::AgentGuard;
pub(crate) use table::AgentTable;

use crate::services::bound::{AgentEvent, AgentReport, ReportError};
use crate::services::ResourceOwner;

/// Who owns a child tree: the extension principal and the durable session owner.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct OwnerKey {
    /// `<manifest name>:sha256:<digest of the manifest's path>`: stable across
    /// restarts and reloads, and path-free (section 2.18).
    pub principal: String,
    /// The session and host build the owner was issued in, without the process
    /// generation.
    pub resource_owner: String,
}

impl OwnerKey {
    /// The owner of the requests of a generation of the manifest at `manifest_path`
    /// named `name`, issued `owner`.
    pub fn new(name: &str, manifest_path: &Path, owner: &ResourceOwner) -> OwnerKey {
        let digest = Sha256::digest(manifest_path.as_os_str().as_encoded_bytes());
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        OwnerKey {
            principal: format!("{name}:sha256:{hex}"),
            resource_owner: format!(
                "agent-owner:{}/{}",
                owner.session_id, owner.extension_instance_id
            ),
        }
    }
}

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

    /// Records a service's report and wakes the dispatcher, which answers the waits it
    /// settled.
    pub fn report(&self, report: AgentReport) -> Result<(), ReportError> {
        self.table.lock().apply(report, now_ms())?;
        self.wake();
        Ok(())
    }

    /// Appends a service's event to its child's log and wakes the dispatcher.
    pub fn event(&self, agent_id: &str, event: AgentEvent) -> Result<u64, ReportError> {
        let sequence = self.table.lock().event(agent_id, event, now_ms())?;
        self.wake();
        Ok(sequence)
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

/// Milliseconds since the Unix epoch: the host-owned timestamps of the records.
pub(crate) fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

impl super::Dispatcher {
    /// Records changed: every connection's held `agent/wait` requests that can be
    /// answered now are.
    pub(super) fn on_agents_changed(&mut self) {
        let conns: Vec<_> = self.conns.keys().copied().collect();
        for conn in conns {
            self.answer_held(conn, crate::services::bound::ServiceKind::AgentSessions);
        }
    }
}
