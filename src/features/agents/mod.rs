//! The runtime's own part of child agent sessions (sections 2.13-2.18): the protocol is
//! the runtime's, the model the bound service's.
//!
//! [`hub`] keeps the host's records of every child ([`spawned`]: ownership, the worker
//! bound, idempotency, the event logs), which each connection's guard in the dispatcher
//! (`dispatcher/features/agents.rs`) admits requests against and answers waits from, and
//! which the service reports into through
//! [`AgentReports`](crate::services::bound::AgentReports). [`defaults`] are the
//! `agent_sessions` companions the runtime serves when the embedder binds none. The
//! types on the wire (params, results, reports) are the service kind's, in
//! [`crate::services::bound::agents`].

pub(crate) mod defaults;
pub(crate) mod hub;
mod record;
pub(crate) mod spawned;
