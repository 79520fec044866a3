//! The features the runtime serves itself, each a module of its own: tool composition
//! (section 2.25), resource refs and operation descriptors (2.26), operation discovery
//! (2.26), bulk objects (2.27). What they act on is the host's own (its extensions'
//! tools, their native resources, files in a host-owned directory), so no embedder
//! service is bound for them; [`offers`] says who they are offered to. `agents` holds
//! the runtime's own part of child agent sessions (2.13-2.18): the records of every
//! child, which the embedder's `agent_sessions` service reports into, and the
//! companions the runtime serves when the embedder binds none.
//!
//! The traits an embedder implements to bind a frontend or a broker are in
//! [`crate::services`].

pub(crate) mod agents;
pub mod bulk;
pub mod composition;
pub mod offers;
pub mod operation_discovery;
pub mod options;
pub mod resources;

pub use options::RuntimeOptions;

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

/// What the runtime-served features keep for the whole host, beside every
/// generation's own state.
pub(crate) struct HostFeatures {
    /// The composing tools' stores (section 2.25).
    pub composition: composition::CompositionSettings,
    /// The bulk store, once the embedder configured one (section 2.27): on the builder,
    /// or once at run time ([`crate::ExtensionHost::configure_bulk_storage`]).
    pub bulk: OnceLock<Arc<bulk::store::BulkStore>>,
    /// Who composition, resource refs and bulk objects are offered to.
    pub runtime_offers: offers::RuntimeOffers,
    /// `get_applicable_operations` is a host tool (section 2.26).
    pub operation_discovery: AtomicBool,
    /// The records of every child agent session spawned through the host (sections
    /// 2.13-2.18).
    pub agents: Arc<agents::hub::AgentHub>,
    /// The extensions a host-wide `agent_sessions` binding is offered to (the builder's
    /// `allow_agent_sessions`).
    pub agent_delegates: HashSet<String>,
}

impl HostFeatures {
    /// True when `name` is a tool a runtime-served feature adds to the host's own.
    pub fn is_host_tool(&self, name: &str) -> bool {
        name == operation_discovery::TOOL_NAME && self.operation_discovery.load(Ordering::Relaxed)
    }

    /// Becomes ready whenever a feature's host-wide state changed in a way the
    /// dispatcher acts on (a child agent session's record changed).
    pub fn wakeups(&self) -> &crossbeam_channel::Receiver<()> {
        self.agents.changes()
    }
}
