//! The host's tool policy (section 2.11): which tools an extension may add to the
//! catalog at run time.
//!
//! `tools/register` "applies the active host tool policy", and its answer is
//! authoritative: "policy may omit requested tools". The embedder binds a
//! [`ToolPolicy`] in [`crate::host::HostServices::tool_policy`]; without one every valid
//! registration is accepted.

use crate::negotiation::ToolDefinition;

/// Decides which tools an extension may register with `tools/register`.
///
/// A refused tool is left out of the registration, and so of the authoritative answer
/// and of what the model is offered; the rest of the request stands. A refused
/// replacement leaves the earlier definition of that name in place. The policy is asked
/// on the dispatcher thread for every tool of every registration: answer quickly, and
/// without calling into the host.
pub trait ToolPolicy: Send + Sync {
    /// Whether `extension` may add (or replace) `tool`.
    fn allows(&self, extension: &str, tool: &ToolDefinition) -> bool;
}

impl<F> ToolPolicy for F
where
    F: Fn(&str, &ToolDefinition) -> bool + Send + Sync,
{
    fn allows(&self, extension: &str, tool: &ToolDefinition) -> bool {
        self(extension, tool)
    }
}
