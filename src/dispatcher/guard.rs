//! The trait behind a kind's host state (`super::guards` registers one per kind):
//! what a guard is told of each request of its kind, and how it answers.

use std::any::Any;

use serde_json::Value;

use crate::services::bound::{ServiceRefusal, ServiceRequest};

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

    /// The request holding `key` settled: `result` is the checked result when its
    /// service answered (the guard may add to it before the extension sees it), `None`
    /// when it refused, failed or the request was dropped.
    fn settled(&mut self, key: String, result: Option<&mut Value>);

    /// The host request `parent` settled (its children are being dropped).
    fn parent_settled(&mut self, _parent: u64) {}

    /// `initialize` settled; `negotiated` when the kind's feature was negotiated.
    fn initialize_settled(&mut self, negotiated: bool);
}
