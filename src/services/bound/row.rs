//! The values in a method table row: [`Admission`], [`Lane`], [`Shape`], [`Offer`],
//! and the API version sets the rows name. The row's error family is
//! [`ErrorFamily`](super::ErrorFamily), in `family.rs`.

use crate::manifest::ApiVersion;
use crate::negotiation::{Capability, Feature};

/// The API versions of the features the reference calls Wave-1 (0.2 and 0.4).
pub(super) const V0_2_AND_V0_4_APIS: &[ApiVersion] = &[ApiVersion::V0_2, ApiVersion::V0_4];
/// The API version of the canonical-wire capabilities.
pub(super) const V0_3_APIS: &[ApiVersion] = &[ApiVersion::V0_3];
/// The API version of the API 0.4-only features (section 1.1: "API 0.1, 0.2 and
/// canonical 0.3 cannot select it").
pub(super) const V0_4_APIS: &[ApiVersion] = &[ApiVersion::V0_4];

/// How the dispatcher admits a method's request before a service sees it (section 2,
/// "Optional Wave-1 resource_owner"). Every kind but [`Admission::None`] names its
/// parent in `parent_request_id`; a parent the host cancelled (a known tombstone) is
/// always refused with `not_foreground_owner`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Admission {
    /// Nothing beyond the negotiated capability and the closed params (the API 0.3
    /// methods, which name no parent).
    None,
    /// A live host request as `parent_request_id` (its owner is the request's), or,
    /// once that parent has settled, an explicit `resource_owner` equal to the triple
    /// issued to this generation, answered independently; anything else is
    /// `not_foreground_owner`.
    LiveParentOrIssuedOwner,
    /// Only a live `tool/call` host request as the parent; any other parent, or one
    /// that settled, is `not_foreground_owner` (a terminal grant lives no longer than
    /// the tool call it serves).
    LiveToolCall,
    /// Only a live model `tool/call` or declared `command/execute` as the parent (section
    /// 2.13: prompt and context handlers are not parents of child sessions). An explicit
    /// `resource_owner` needs `agent_session_lifetime_v1`, which this host does not
    /// offer: it is `unsupported_feature`.
    LiveToolOrCommand,
    /// Only once the parent has settled, with the explicit `resource_owner` issued to
    /// this generation (section 2.21c, `session/compact`): a live parent is
    /// `invalid_request`, a missing or foreign owner `not_foreground_owner`.
    SettledOwnerOnly,
    /// Only inside the `initialize` request, which must be the parent
    /// (`shortcut/register`, section 2.20).
    InsideInitialize,
    /// Only while a session-operation hook is awaited (section 1.4b, the private
    /// `session/append_entry` lane): the parent is that live `hook/run`, and
    /// `session_leaf` names its current grant, which the request spends. A request of
    /// this admission is told from a row of the same name by its `session_leaf` member.
    InvocationGrant,
}

impl Admission {
    /// True when the request names its parent in `parent_request_id` (and may carry
    /// `resource_owner`); both belong to admission, not to the method's params.
    pub fn names_parent(self) -> bool {
        self != Admission::None
    }

    /// The params member that marks a request of this admission among rows of the same
    /// name: `session_leaf` for [`Admission::InvocationGrant`].
    pub fn marker(self) -> Option<&'static str> {
        match self {
            Admission::InvocationGrant => Some("session_leaf"),
            _ => None,
        }
    }
}

/// How the requests of one kind reach its service.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Lane {
    /// Each request on a thread of its own, concurrently, in no set order.
    Concurrent,
    /// One at a time, in the order the dispatcher admitted them, through a bounded
    /// queue shared by every serial kind of one [`ServiceBindings`](super::ServiceBindings)
    /// (section 2.21b: "The bounded queue preserves operation order"). The next request
    /// starts only once the one before it was answered (or cancelled); a full queue is
    /// refused at once with [`Refusal::ResourceExhausted`](super::Refusal::ResourceExhausted).
    Serial,
}

/// Whether the extension waits for an answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Shape {
    /// A request: answered exactly once.
    Request,
    /// A notification: never answered.
    Notification,
}

/// What offers a kind in `initialize`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Offer {
    /// An API 0.2/0.4 optional feature.
    Feature(Feature),
    /// An API 0.3 contract capability, offered with its methods.
    Capability(Capability),
}
