//! What the host keeps for one composing `tool/call` and each of its nested calls.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use crate::features::composition::params::CallParams;
use crate::features::composition::{FrozenTool, Registry};
use crate::negotiation::ToolDefinition;
use crate::wire::RequestId;

/// What the host keeps for one composing `tool/call`.
pub(in crate::dispatcher) struct CompositionParent {
    /// The frozen outer-call snapshot.
    pub(super) registry: Arc<Registry>,
    /// The composing tool's host-derived name, `<extension>/<tool>`: its store's scope.
    pub(super) store: String,
    /// The one deadline of every nested call.
    pub(super) deadline: Instant,
    /// Nested calls admitted so far.
    pub(super) calls: u32,
    /// The one store commit was made (or is being made).
    pub(super) committed: bool,
    /// The nested call running now.
    pub(super) running: Option<Nested>,
    /// Nested calls waiting for it, in order.
    pub(super) queued: VecDeque<Nested>,
    /// Sidecar files answered and perhaps not read yet.
    pub(super) sidecars: Vec<PathBuf>,
}

/// One admitted nested call.
pub(super) struct Nested {
    /// The `composition/call` request.
    pub(super) id: RequestId,
    /// The frozen tool it calls.
    pub(super) tool: Arc<FrozenTool>,
    /// What it asked for.
    pub(super) params: CallParams,
    /// Its host-issued nested id, `<parent>/<n>`.
    pub(super) nested_id: String,
}

/// The last frozen registry, with the catalogs (by extension name) it was made of.
pub(in crate::dispatcher) struct Frozen {
    /// The catalogs, in name order; holding them keeps their identity unambiguous.
    pub(super) made_of: Vec<(String, Arc<Vec<ToolDefinition>>)>,
    /// The registry made of them.
    pub(super) registry: Arc<Registry>,
}

impl Frozen {
    /// How many extensions' catalogs it holds.
    pub(in crate::dispatcher) fn catalogs(&self) -> usize {
        self.made_of.len()
    }

    /// True when it holds `catalog` (by identity).
    pub(super) fn holds(&self, catalog: &Arc<Vec<ToolDefinition>>) -> bool {
        self.made_of
            .iter()
            .any(|(_, held)| Arc::ptr_eq(held, catalog))
    }
}
