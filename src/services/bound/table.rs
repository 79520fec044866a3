//! The method table: every extension-to-host method a bound service serves, one row
//! each, and every service kind, one row each. Everything else about a method follows
//! from its row: the enums and their name lookups, which API versions carry it, how
//! the dispatcher admits it ([`Admission`]), which error vocabulary answers it
//! ([`ErrorFamily`]), whether it is a notification, whether its answer is sensitive,
//! the feature or capability that offers it, serve's `service_request` lines and the
//! JSON Schema's method list (a test holds the schema equal to this table).
//!
//! Adding a method: a row here, its typed params and result rules in
//! `request.rs`, and its trait method (with a default body that refuses
//! `unsupported_feature`, so bindings written before it keep compiling) in its kind's
//! module.

use std::fmt;

use crate::manifest::ApiVersion;
use crate::negotiation::{Capability, Feature, FeatureSet};

/// How the dispatcher admits a method's request before a service sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Admission {
    /// Nothing beyond the negotiated capability and the closed params (the API 0.3
    /// methods, which name no parent).
    None,
    /// A live host request as `parent_request_id` (its owner is the request's), or,
    /// once that parent has settled, an explicit `resource_owner` equal to the triple
    /// issued to this generation, answered independently; anything else is
    /// `not_foreground_owner` (section 2, "Optional Wave-1 resource_owner").
    LiveParentOrIssuedOwner,
    /// Only inside the `initialize` request, which must be the parent
    /// (`shortcut/register`, section 2.20).
    InsideInitialize,
}

/// Which error vocabulary answers a method's refusals.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorFamily {
    /// The Wave-1 contract names first in `error.message` (section 3).
    Wave1Tokens,
    /// API 0.3's fixed error table, the contract name and detail in `data`
    /// (SUPPLEMENT "Error table").
    V0_3Table,
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

/// The API versions a row carries.
const WAVE1_APIS: &[ApiVersion] = &[ApiVersion::V0_2, ApiVersion::V0_4];
const V0_3_APIS: &[ApiVersion] = &[ApiVersion::V0_3];

macro_rules! count {
    () => { 0 };
    ($head:tt $($tail:tt)*) => { 1 + count!($($tail)*) };
}

macro_rules! service_kinds {
    ($($(#[$doc:meta])* $kind:ident = $name:literal, offered by $offer:expr;)*) => {
        /// A service an embedder can bind, named by its feature or capability.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum ServiceKind {
            $($(#[$doc])* $kind,)*
        }

        impl ServiceKind {
            /// Every kind, in the table's order.
            pub const ALL: [ServiceKind; count!($($kind)*)] = [$(ServiceKind::$kind,)*];

            /// The feature or capability name, such as `composer` or `provider_auth`.
            pub fn name(self) -> &'static str {
                match self {
                    $(ServiceKind::$kind => $name,)*
                }
            }

            /// What offers it in `initialize`.
            pub fn offer(self) -> Offer {
                match self {
                    $(ServiceKind::$kind => $offer,)*
                }
            }
        }
    };
}

macro_rules! service_methods {
    ($($(#[$doc:meta])* $method:ident = $name:literal, $kind:ident, $apis:expr,
        $admission:ident, $family:ident, $shape:ident, sensitive: $sensitive:literal;)*) => {
        /// An extension-to-host method served by a bound service, one per row of the
        /// method table.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum ServiceMethod {
            $($(#[$doc])* $method,)*
        }

        impl ServiceMethod {
            /// Every method, in the table's order.
            pub const ALL: [ServiceMethod; count!($($method)*)] = [$(ServiceMethod::$method,)*];

            /// The wire method name.
            pub fn name(self) -> &'static str {
                match self {
                    $(ServiceMethod::$method => $name,)*
                }
            }

            /// The service that serves it.
            pub fn kind(self) -> ServiceKind {
                match self {
                    $(ServiceMethod::$method => ServiceKind::$kind,)*
                }
            }

            /// The API versions that carry it.
            pub fn apis(self) -> &'static [ApiVersion] {
                match self {
                    $(ServiceMethod::$method => $apis,)*
                }
            }

            /// How the dispatcher admits its requests.
            pub fn admission(self) -> Admission {
                match self {
                    $(ServiceMethod::$method => Admission::$admission,)*
                }
            }

            /// The error vocabulary of its refusals.
            pub fn family(self) -> ErrorFamily {
                match self {
                    $(ServiceMethod::$method => ErrorFamily::$family,)*
                }
            }

            /// Request or notification.
            pub fn shape(self) -> Shape {
                match self {
                    $(ServiceMethod::$method => Shape::$shape,)*
                }
            }

            /// True when its answer may carry a secret: the frame is wiped after
            /// writing and the answer never reaches a trace.
            pub fn is_sensitive(self) -> bool {
                match self {
                    $(ServiceMethod::$method => $sensitive,)*
                }
            }
        }
    };
}

service_kinds! {
    /// `composer` (section 2.19).
    Composer = "composer", offered by Offer::Feature(Feature::Composer);
    /// `shortcuts` (section 2.20).
    Shortcuts = "shortcuts", offered by Offer::Feature(Feature::Shortcuts);
    /// `session_entries` (section 2.21).
    SessionEntries = "session_entries", offered by Offer::Feature(Feature::SessionEntries);
    /// `message_injection` (section 2.22; also `message/updated`, section 1.11).
    MessageInjection = "message_injection", offered by Offer::Feature(Feature::MessageInjection);
    /// `active_tools` (section 2.23).
    ActiveTools = "active_tools", offered by Offer::Feature(Feature::ActiveTools);
    /// API 0.3 `provider_auth`: `provider/auth/request` and `provider/auth/revoke`.
    ProviderAuth = "provider_auth", offered by Offer::Capability(Capability::ProviderAuth);
    /// API 0.3 `provider_catalog`: `providers/register|update|unregister` and the
    /// `providers/complete` notification.
    ProviderCatalog = "provider_catalog", offered by Offer::Capability(Capability::ProviderCatalog);
    /// API 0.3 `session_lifecycle`: `session/create|fork|reload|switch`.
    SessionLifecycle = "session_lifecycle", offered by Offer::Capability(Capability::SessionLifecycle);
}

service_methods! {
    /// `composer/get` (section 2.19).
    ComposerGet = "composer/get", Composer, WAVE1_APIS,
        LiveParentOrIssuedOwner, Wave1Tokens, Request, sensitive: false;
    /// `composer/set` (section 2.19).
    ComposerSet = "composer/set", Composer, WAVE1_APIS,
        LiveParentOrIssuedOwner, Wave1Tokens, Request, sensitive: false;
    /// `composer/insert` (section 2.19).
    ComposerInsert = "composer/insert", Composer, WAVE1_APIS,
        LiveParentOrIssuedOwner, Wave1Tokens, Request, sensitive: false;
    /// `shortcut/register` (section 2.20).
    ShortcutRegister = "shortcut/register", Shortcuts, WAVE1_APIS,
        InsideInitialize, Wave1Tokens, Request, sensitive: false;
    /// `session/append_entry` (section 2.21).
    SessionAppendEntry = "session/append_entry", SessionEntries, WAVE1_APIS,
        LiveParentOrIssuedOwner, Wave1Tokens, Request, sensitive: false;
    /// `session/set_name` (section 2.21).
    SessionSetName = "session/set_name", SessionEntries, WAVE1_APIS,
        LiveParentOrIssuedOwner, Wave1Tokens, Request, sensitive: false;
    /// `session/set_label` (section 2.21).
    SessionSetLabel = "session/set_label", SessionEntries, WAVE1_APIS,
        LiveParentOrIssuedOwner, Wave1Tokens, Request, sensitive: false;
    /// `session/send_message` (section 2.22).
    SessionSendMessage = "session/send_message", MessageInjection, WAVE1_APIS,
        LiveParentOrIssuedOwner, Wave1Tokens, Request, sensitive: false;
    /// `session/send_user_message` (section 2.22).
    SessionSendUserMessage = "session/send_user_message", MessageInjection, WAVE1_APIS,
        LiveParentOrIssuedOwner, Wave1Tokens, Request, sensitive: false;
    /// `tools/set_active` (section 2.23).
    ToolsSetActive = "tools/set_active", ActiveTools, WAVE1_APIS,
        LiveParentOrIssuedOwner, Wave1Tokens, Request, sensitive: false;
    /// API 0.3 `provider/auth/request`.
    ProviderAuthRequest = "provider/auth/request", ProviderAuth, V0_3_APIS,
        None, V0_3Table, Request, sensitive: false;
    /// API 0.3 `provider/auth/revoke`.
    ProviderAuthRevoke = "provider/auth/revoke", ProviderAuth, V0_3_APIS,
        None, V0_3Table, Request, sensitive: false;
    /// API 0.3 `providers/register`.
    ProvidersRegister = "providers/register", ProviderCatalog, V0_3_APIS,
        None, V0_3Table, Request, sensitive: false;
    /// API 0.3 `providers/update`.
    ProvidersUpdate = "providers/update", ProviderCatalog, V0_3_APIS,
        None, V0_3Table, Request, sensitive: false;
    /// API 0.3 `providers/unregister`.
    ProvidersUnregister = "providers/unregister", ProviderCatalog, V0_3_APIS,
        None, V0_3Table, Request, sensitive: false;
    /// API 0.3 `providers/complete` (a notification).
    ProvidersComplete = "providers/complete", ProviderCatalog, V0_3_APIS,
        None, V0_3Table, Notification, sensitive: false;
    /// API 0.3 `session/create`.
    SessionCreate = "session/create", SessionLifecycle, V0_3_APIS,
        None, V0_3Table, Request, sensitive: false;
    /// API 0.3 `session/fork`.
    SessionFork = "session/fork", SessionLifecycle, V0_3_APIS,
        None, V0_3Table, Request, sensitive: false;
    /// API 0.3 `session/reload`.
    SessionReload = "session/reload", SessionLifecycle, V0_3_APIS,
        None, V0_3Table, Request, sensitive: false;
    /// API 0.3 `session/switch`.
    SessionSwitch = "session/switch", SessionLifecycle, V0_3_APIS,
        None, V0_3Table, Request, sensitive: false;
}

macro_rules! host_notifications {
    ($($(#[$doc:meta])* $notification:ident = $name:literal, $kind:ident,
        members $members:expr, from the client: $client:literal;)*) => {
        /// A host-to-extension notification of a bound kind (section 1.11), one per row:
        /// its name, the kind whose negotiated feature gates it, its closed params, and
        /// whether a `serve` client sends it with `notify` (or the host composes it).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum HostNotification {
            $($(#[$doc])* $notification,)*
        }

        impl HostNotification {
            /// Every notification, in the table's order.
            pub const ALL: [HostNotification; count!($($notification)*)] =
                [$(HostNotification::$notification,)*];

            /// The wire method name.
            pub fn name(self) -> &'static str {
                match self {
                    $(HostNotification::$notification => $name,)*
                }
            }

            /// The kind whose feature must be negotiated before it is sent.
            pub fn kind(self) -> ServiceKind {
                match self {
                    $(HostNotification::$notification => ServiceKind::$kind,)*
                }
            }

            /// The members of its closed params.
            pub fn members(self) -> &'static [&'static str] {
                match self {
                    $(HostNotification::$notification => $members,)*
                }
            }

            /// True when `serve`'s `notify` sends it as the client gives it; false when
            /// the host composes it (`message/updated` batches).
            pub fn from_client(self) -> bool {
                match self {
                    $(HostNotification::$notification => $client,)*
                }
            }
        }
    };
}

host_notifications! {
    /// `shortcut/trigger {"id"}`, for a shortcut admitted inside `initialize`.
    ShortcutTrigger = "shortcut/trigger", Shortcuts,
        members &["id"], from the client: true;
    /// `message/updated {"message_id","delta","deltas"}`: one coalesced batch of
    /// assistant-message deltas.
    MessageUpdated = "message/updated", MessageInjection,
        members &["message_id", "delta", "deltas"], from the client: false;
}

impl HostNotification {
    /// The notification a wire name names.
    pub fn from_name(name: &str) -> Option<HostNotification> {
        HostNotification::ALL.into_iter().find(|n| n.name() == name)
    }
}

impl ServiceKind {
    /// The kind a name names.
    pub fn from_name(name: &str) -> Option<ServiceKind> {
        ServiceKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// The API 0.2/0.4 feature it is offered as, for the feature-offered kinds.
    pub fn feature(self) -> Option<Feature> {
        match self.offer() {
            Offer::Feature(feature) => Some(feature),
            Offer::Capability(_) => None,
        }
    }

    /// The API 0.3 contract capability it is offered as, for the API 0.3 kinds.
    pub fn capability(self) -> Option<Capability> {
        match self.offer() {
            Offer::Capability(capability) => Some(capability),
            Offer::Feature(_) => None,
        }
    }
}

impl fmt::Display for ServiceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl ServiceMethod {
    /// The method a wire name names on `api`, with `features` negotiated: a name two
    /// rows share (on different API versions, or the same one under different
    /// features) resolves to the row this connection speaks. `None` when no row of
    /// that name is carried by `api`.
    pub fn resolve(name: &str, api: ApiVersion, features: &FeatureSet) -> Option<ServiceMethod> {
        let mut rows = ServiceMethod::ALL
            .into_iter()
            .filter(|m| m.name() == name && m.apis().contains(&api));
        let first = rows.next()?;
        let negotiated = |m: &ServiceMethod| match m.kind().offer() {
            Offer::Feature(feature) => features.contains(feature),
            Offer::Capability(_) => true,
        };
        if negotiated(&first) {
            return Some(first);
        }
        Some(rows.find(negotiated).unwrap_or(first))
    }

    /// The method a wire name names on any API version (the first row of that name).
    pub fn from_name(name: &str) -> Option<ServiceMethod> {
        ServiceMethod::ALL.into_iter().find(|m| m.name() == name)
    }

    /// True for a notification: nothing is answered.
    pub fn is_notification(self) -> bool {
        self.shape() == Shape::Notification
    }
}

impl fmt::Display for ServiceMethod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_every_row_is_consistent() {
        for method in ServiceMethod::ALL {
            assert_eq!(ServiceMethod::from_name(method.name()), Some(method));
            // A method's family follows the API versions of its kind's offer.
            match method.kind().offer() {
                Offer::Feature(_) => assert_eq!(method.family(), ErrorFamily::Wave1Tokens),
                Offer::Capability(_) => assert_eq!(method.family(), ErrorFamily::V0_3Table),
            }
        }
        for kind in ServiceKind::ALL {
            assert_eq!(ServiceKind::from_name(kind.name()), Some(kind));
            assert!(
                ServiceMethod::ALL.iter().any(|m| m.kind() == kind),
                "{kind}"
            );
        }
        assert_eq!(ServiceMethod::from_name("composer/clear"), None);
    }

    #[test]
    fn every_host_notification_is_gated_by_a_feature() {
        for notification in HostNotification::ALL {
            assert_eq!(
                HostNotification::from_name(notification.name()),
                Some(notification)
            );
            assert!(notification.kind().feature().is_some(), "{notification:?}");
            assert!(!notification.members().is_empty(), "{notification:?}");
        }
        assert!(HostNotification::ShortcutTrigger.from_client());
        assert!(!HostNotification::MessageUpdated.from_client());
    }

    #[test]
    fn a_name_resolves_by_api_version() {
        let none = FeatureSet::default();
        assert_eq!(
            ServiceMethod::resolve("session/create", ApiVersion::V0_3, &none),
            Some(ServiceMethod::SessionCreate)
        );
        assert_eq!(
            ServiceMethod::resolve("session/create", ApiVersion::V0_4, &none),
            None
        );
        assert_eq!(
            ServiceMethod::resolve("composer/get", ApiVersion::V0_3, &none),
            None
        );
        assert_eq!(
            ServiceMethod::resolve("composer/get", ApiVersion::V0_2, &none),
            Some(ServiceMethod::ComposerGet)
        );
    }
}
