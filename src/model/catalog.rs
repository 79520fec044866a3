//! The tools an extension offers now.

use std::sync::Arc;

/// The tools an extension offers now: its routed generation's authoritative catalog
/// (sections 2.11, 2.12), which restarts, reloads and `tools/register` change.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ToolCatalog {
    /// The generation it belongs to.
    pub generation: u64,
    /// The catalog epoch; 0 is the `initialize` catalog.
    pub revision: u64,
    /// The tool definitions, in catalog order.
    pub tools: Arc<Vec<crate::negotiation::ToolDefinition>>,
}
