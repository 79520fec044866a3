//! The host's tool policy (section 2.11): which tools an extension may add to the
//! catalog at run time.
//!
//! `tools/register` "applies the active host tool policy", and its answer is
//! authoritative: "policy may omit requested tools". The embedder binds a
//! [`ToolPolicy`] with [`crate::services::bound::ServiceBindings::tool_policy`]; without
//! one every valid registration is accepted.

use std::sync::Arc;
use std::time::Duration;

use crate::negotiation::ToolDefinition;

/// Decides which tools an extension may register with `tools/register`.
///
/// A refused tool is left out of the registration, and so of the authoritative answer
/// and of what the model is offered; the rest of the request stands. A refused
/// replacement leaves the earlier definition of that name in place. The policy is asked
/// for every tool of a registration on a thread of its own while the registration
/// waits, at most [`crate::limits::TOOL_POLICY_TIMEOUT`]: a policy that has not
/// answered by then refuses every tool of that registration (fail closed), and the
/// late answer is ignored. Answer quickly, and without calling into the host.
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

/// Asks `policy` about each of `tools` on a thread of its own and waits at most
/// `within`: one answer per tool, in order, or every tool refused when the policy did
/// not answer in time (or could not be asked).
pub(crate) fn allowed_within(
    policy: &Arc<dyn ToolPolicy>,
    extension: &str,
    tools: &[ToolDefinition],
    within: Duration,
) -> Vec<bool> {
    let (answer, answered) = crossbeam_channel::bounded(1);
    let (policy, extension, asked) = (policy.clone(), extension.to_string(), tools.to_vec());
    let spawned = std::thread::Builder::new()
        .name("octet-tool-policy".into())
        .spawn(move || {
            let allowed: Vec<bool> = asked.iter().map(|t| policy.allows(&extension, t)).collect();
            let _ = answer.send(allowed);
        });
    match spawned
        .ok()
        .and_then(|_| answered.recv_timeout(within).ok())
    {
        Some(allowed) => allowed,
        None => vec![false; tools.len()],
    }
}
