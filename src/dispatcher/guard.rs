//! The trait behind a kind's host state (`super::guards` registers one per kind):
//! what a guard is told of each request of its kind, and how it answers.

use std::any::Any;
use std::time::Instant;

use serde_json::Value;

use crate::services::bound::{ServiceRefusal, ServiceRequest};
use crate::services::ResourceOwner;

/// What a guard decided for a request the generic checks passed.
#[derive(Debug, PartialEq)]
pub(crate) enum Verdict {
    /// The service serves it; the request holds the key (if any) until it settles.
    Serve(Option<String>),
    /// The runtime answers it at once with this result, from its own state; no
    /// service sees it (an idempotent retry, a snapshot).
    Answer(Value),
    /// The runtime answers it later, when [`KindGuard::ready`] hands its key back
    /// (a wait); the request holds the key meanwhile.
    Hold(String),
}

/// How the generic admission placed a request, for a guard to judge.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Placed {
    /// The request's `parent_request_id`, when its admission names one.
    pub parent: Option<u64>,
    /// The request's parent is live (for `InsideInitialize`: it is the `initialize`).
    pub live: bool,
    /// The parent had settled and the explicit owner was admitted.
    pub independent: bool,
}

/// Any guard as its own type again (`KindGuards::get`).
pub(crate) trait AsAny: Any {
    fn as_any(&self) -> &dyn Any;
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

impl<T: Any> AsAny for T {
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

/// A kind's host state on one connection.
pub(crate) trait KindGuard: Send + AsAny {
    /// Admits `request` after the generic checks; `pending` are the keys held by this
    /// kind's requests still waiting for their service. The key returned (if any) is
    /// held by the request until it settles.
    fn admit(
        &mut self,
        request: &ServiceRequest,
        placed: Placed,
        pending: &[&str],
    ) -> Result<Option<String>, ServiceRefusal>;

    /// Decides `request`: by default the service serves it, with the key
    /// [`KindGuard::admit`] gives. A kind that answers some requests from its own state
    /// (a `guarded` row, an idempotent retry) decides here; `owner` is the one the
    /// generic admission derived.
    fn decide(
        &mut self,
        request: &mut ServiceRequest,
        placed: Placed,
        _owner: &ResourceOwner,
        pending: &[&str],
    ) -> Result<Verdict, ServiceRefusal> {
        self.admit(request, placed, pending).map(Verdict::Serve)
    }

    /// The service answered the request holding `key` with `result`, which keeps the
    /// method's result rules: the guard returns the result the extension gets (by
    /// default `result` itself), completed from the runtime's own state as the
    /// method's typed result, or finds it broken (why, in words), which fails the
    /// request as a broken answer. Called before [`KindGuard::settled`].
    fn complete_answer(&mut self, _key: &str, result: Value) -> Result<Value, String> {
        Ok(result)
    }

    /// The held requests the runtime can answer now (or whose deadline passed at
    /// `now`): their keys and results, or the refusal that ends them. Asked after the
    /// kind's state changed and when [`KindGuard::next_deadline`] comes.
    fn ready(&mut self, _now: Instant) -> Vec<(String, Result<Value, ServiceRefusal>)> {
        Vec::new()
    }

    /// The earliest deadline of a held request, if one is held.
    fn next_deadline(&self) -> Option<Instant> {
        None
    }

    /// The request holding `key` settled: `result` is the checked result when its
    /// service answered (the guard may add to it before the extension sees it), `None`
    /// when it refused, failed or the request was dropped.
    fn settled(&mut self, key: String, result: Option<&mut Value>);

    /// The host request `parent` settled (its children are being dropped).
    fn parent_settled(&mut self, _parent: u64) {}

    /// `initialize` settled; `negotiated` when the kind's feature was negotiated.
    fn initialize_settled(&mut self, negotiated: bool);

    /// `initialize` settled with `features`: for a guard whose rules depend on other
    /// features than its kind's (a member a companion feature admits).
    fn features_negotiated(&mut self, _features: crate::negotiation::FeatureSet) {}
}
