//! The Wave-1 services (sections 2, 2.19-2.23, 3) and notifications (1.11) through the
//! library, against a raw Python peer (`tests/fixtures/services_peer.py`): offers follow
//! bindings, the runtime checks every request before a service sees it and every answer
//! before the extension sees it, owners follow the precedence rule, and a settled
//! parent cancels the service call.
//!
//! The modules live in `tests/bound_services/`: the recording services and the host
//! (`world`), the runtime's checks (`requests`), `shortcuts`, message updates
//! (`notifications`), and the SDK's side (`sdk`).

mod support;

#[path = "bound_services/notifications.rs"]
mod notifications;
#[path = "bound_services/requests.rs"]
mod requests;
#[path = "bound_services/sdk.rs"]
mod sdk;
#[path = "bound_services/shortcuts.rs"]
mod shortcuts;
#[path = "bound_services/world.rs"]
mod world;
