//! Host-owned classification of intents (section 2.9): the [`PolicyEngine`] trait, the
//! default [`DenyAll`] engine, the in-memory reference [`RulesEngine`], and the
//! [`Approver`] a trusted frontend binds to approve `ask` intents.

use std::collections::HashMap;
use std::fmt;

use super::intent::{AdapterHints, Intent};
use crate::services::owner::ResourceOwner;

/// A policy decision. The variants are ordered by caution: `Allow < Ask < Deny`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Decision {
    /// The action may proceed.
    Allow,
    /// The action needs a person's approval.
    Ask,
    /// The action must not proceed.
    Deny,
}

impl Decision {
    /// The wire name: `"allow"`, `"ask"` or `"deny"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Allow => "allow",
            Decision::Ask => "ask",
            Decision::Deny => "deny",
        }
    }

    /// The more cautious of two decisions.
    pub fn most_cautious(self, other: Decision) -> Decision {
        self.max(other)
    }

    /// Applies an intent's adapter hints, which can only raise caution (section 2.9).
    ///
    /// Exactly one hint raises anything: `destructive: true` raises `allow` to `ask`, so
    /// a destructive action always goes through a person. Every other hint leaves the
    /// decision as it is. `read_only: true` and `destructive: false` are claims the
    /// host does not trust, so they lower nothing. `read_only: false` restates the
    /// host's own assumption (every intent may have side effects unless the host
    /// classified it otherwise), so it changes nothing either. Because the result is
    /// the most cautious of `self` and the hints' floor, no hint can ever turn `ask` or
    /// `deny` into `allow`, or `deny` into `ask`.
    pub fn with_hints(self, hints: AdapterHints) -> Decision {
        let floor = if hints.destructive == Some(true) {
            Decision::Ask
        } else {
            Decision::Allow
        };
        self.most_cautious(floor)
    }
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One intent to classify, with the identity the host derived from the active parent
/// rather than from the request (section 2.9).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PolicyRequest<'a> {
    /// The requesting extension's name.
    pub extension: &'a str,
    /// The active parent's resource owner.
    pub owner: &'a ResourceOwner,
    /// The active parent's host request id.
    pub parent_request_id: u64,
    /// The validated intent.
    pub intent: &'a Intent,
    /// Set once the answer is no longer wanted (the parent settled, the extension
    /// cancelled the request): a service that waits, on a person or a remote client,
    /// can stop waiting then. `None` where nothing can cancel it.
    pub cancelled: Option<&'a crate::cancel_flag::CancelFlag>,
}

/// The host's classification of intents. The host owns classification; an engine sees
/// the intent's adapter hints but [`crate::services::policy_evaluate`] applies them
/// afterwards with [`Decision::with_hints`], so an engine cannot be talked into a
/// laxer answer by them.
pub trait PolicyEngine: Send + Sync {
    /// Classifies one intent.
    fn evaluate(&self, request: &PolicyRequest<'_>) -> Decision;
}

/// The default engine: denies everything, as the coding product's generic
/// `policy/evaluate` does (section 1.1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DenyAll;

impl PolicyEngine for DenyAll {
    fn evaluate(&self, _request: &PolicyRequest<'_>) -> Decision {
        Decision::Deny
    }
}

/// An in-memory reference engine for tests and demonstrations: one decision per exact
/// `operation` string; every other operation is denied. `kind`, `target` and
/// `data_classes` are not consulted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RulesEngine {
    rules: HashMap<String, Decision>,
}

impl RulesEngine {
    /// An engine without rules, which denies everything.
    pub fn new() -> RulesEngine {
        RulesEngine::default()
    }

    /// Adds (or replaces) the rule for the exact `operation`.
    pub fn with_rule(mut self, operation: impl Into<String>, decision: Decision) -> RulesEngine {
        self.rules.insert(operation.into(), decision);
        self
    }

    /// The rule for the exact `operation`, when there is one.
    pub fn rule(&self, operation: &str) -> Option<Decision> {
        self.rules.get(operation).copied()
    }
}

impl PolicyEngine for RulesEngine {
    fn evaluate(&self, request: &PolicyRequest<'_>) -> Decision {
        self.rule(request.intent.operation())
            .unwrap_or(Decision::Deny)
    }
}

/// A trusted frontend's answer to an `ask` intent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Approval {
    /// The person approved this exact intent.
    Approved,
    /// The person declined, or nobody could answer.
    Declined,
}

/// A trusted frontend that can approve an intent the host classified as `ask`
/// (section 2.9). Hosts bind none by default, and then no approval token is ever
/// issued.
///
/// It is consulted on the thread that runs [`crate::services::policy_evaluate`], so it
/// must answer promptly; anything else than an explicit approval must be
/// [`Approval::Declined`].
pub trait Approver: Send + Sync {
    /// Decides whether this exact intent, for this owner and parent, is approved.
    fn approve(&self, request: &PolicyRequest<'_>) -> Approval;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hints(read_only: Option<bool>, destructive: Option<bool>) -> AdapterHints {
        AdapterHints {
            read_only,
            destructive,
        }
    }

    #[test]
    fn hints_only_raise_caution() {
        let flags = [None, Some(false), Some(true)];
        for decision in [Decision::Allow, Decision::Ask, Decision::Deny] {
            for read_only in flags {
                for destructive in flags {
                    let hinted = decision.with_hints(hints(read_only, destructive));
                    assert!(hinted >= decision, "{decision} lowered to {hinted}");
                    let expected = if destructive == Some(true) && decision == Decision::Allow {
                        Decision::Ask
                    } else {
                        decision
                    };
                    assert_eq!(hinted, expected);
                }
            }
        }
    }

    #[test]
    fn decisions_are_ordered_by_caution() {
        assert!(Decision::Allow < Decision::Ask && Decision::Ask < Decision::Deny);
        assert_eq!(
            Decision::Allow.most_cautious(Decision::Deny),
            Decision::Deny
        );
        assert_eq!(Decision::Ask.to_string(), "ask");
    }
}
