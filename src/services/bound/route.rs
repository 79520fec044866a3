//! How a validated request reaches the service bound for its kind: the JSON-level
//! [`RawService`] the runtime drives (serve forwards through it to its client), and the
//! [`Routed`] wrapper that hands each request to the right method of an embedder's
//! trait.

use std::sync::Arc;

use super::call::{RawReply, ServiceCall};
use super::methods::ServiceRequest;
use super::refusal::Refusal;

/// A bound kind as the runtime drives it: one validated request and its reply. The
/// embedder's traits are routed through it; `serve` forwards through it to its client.
pub(crate) trait RawService: Send + Sync + 'static {
    fn serve(&self, call: ServiceCall, request: ServiceRequest, reply: RawReply);

    /// True when [`RawService::serve`] never blocks and must run on the dispatcher's
    /// thread, in admission order (the serial lane only enqueues).
    fn inline(&self) -> bool {
        false
    }
}

/// Routes the requests of one kind to the methods of its trait (`S` is the trait
/// object, such as `dyn ComposerService`).
pub(crate) struct Routed<S: ?Sized>(pub Arc<S>);

/// A request that reached a binding of another kind: the runtime never routes one
/// there, so this refuses instead of guessing.
pub(crate) fn misrouted(request: &ServiceRequest, reply: RawReply) {
    reply.refuse(
        Refusal::UnsupportedFeature.because(format!("{} is not bound here", request.method())),
    );
}
