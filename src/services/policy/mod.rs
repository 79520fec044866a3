//! `policy/evaluate` (section 2.9): intents, host-owned classification, and the flow
//! that answers the request, with the optional single-use approval tokens of
//! [`crate::services::approvals`].
//!
//! Everything denies by default: the default engine is [`DenyAll`], the
//! [`RulesEngine`] denies operations it has no rule for, no [`Approver`] is bound
//! unless the embedder binds one, and a token that does not match exactly is a `deny`.

mod engine;
mod evaluate;
mod intent;

pub use engine::{Approval, Approver, Decision, DenyAll, PolicyEngine, PolicyRequest, RulesEngine};
pub use evaluate::{policy_evaluate, PolicyService};
pub use intent::{AdapterHints, Intent};
