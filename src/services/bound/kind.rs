//! Which service a binding serves: a Wave-1 feature (API 0.2 and 0.4) or an API 0.3
//! contract capability. A bound kind is offered; an unbound one never is.

use std::fmt;

use crate::negotiation::{Capability, Feature};

/// A service an embedder can bind, named by its feature or capability.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ServiceKind {
    /// `composer` (section 2.19).
    Composer,
    /// `shortcuts` (section 2.20).
    Shortcuts,
    /// `session_entries` (section 2.21).
    SessionEntries,
    /// `message_injection` (section 2.22; also `message/updated`, section 1.11).
    MessageInjection,
    /// `active_tools` (section 2.23).
    ActiveTools,
    /// API 0.3 `provider_auth`: `provider/auth/request` and `provider/auth/revoke`.
    ProviderAuth,
    /// API 0.3 `provider_catalog`: `providers/register|update|unregister` and the
    /// `providers/complete` notification.
    ProviderCatalog,
    /// API 0.3 `session_lifecycle`: `session/create|fork|reload|switch`.
    SessionLifecycle,
}

impl ServiceKind {
    /// Every kind.
    pub const ALL: [ServiceKind; 8] = [
        ServiceKind::Composer,
        ServiceKind::Shortcuts,
        ServiceKind::SessionEntries,
        ServiceKind::MessageInjection,
        ServiceKind::ActiveTools,
        ServiceKind::ProviderAuth,
        ServiceKind::ProviderCatalog,
        ServiceKind::SessionLifecycle,
    ];

    /// The feature or capability name, such as `composer` or `provider_auth`.
    pub fn name(self) -> &'static str {
        match self {
            ServiceKind::Composer => "composer",
            ServiceKind::Shortcuts => "shortcuts",
            ServiceKind::SessionEntries => "session_entries",
            ServiceKind::MessageInjection => "message_injection",
            ServiceKind::ActiveTools => "active_tools",
            ServiceKind::ProviderAuth => "provider_auth",
            ServiceKind::ProviderCatalog => "provider_catalog",
            ServiceKind::SessionLifecycle => "session_lifecycle",
        }
    }

    /// The kind a name names.
    pub fn from_name(name: &str) -> Option<ServiceKind> {
        ServiceKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// The API 0.2/0.4 feature it is offered as, for the Wave-1 kinds.
    pub fn feature(self) -> Option<Feature> {
        match self {
            ServiceKind::Composer => Some(Feature::Composer),
            ServiceKind::Shortcuts => Some(Feature::Shortcuts),
            ServiceKind::SessionEntries => Some(Feature::SessionEntries),
            ServiceKind::MessageInjection => Some(Feature::MessageInjection),
            ServiceKind::ActiveTools => Some(Feature::ActiveTools),
            _ => None,
        }
    }

    /// The API 0.3 contract capability it is offered as, for the API 0.3 kinds.
    pub fn capability(self) -> Option<Capability> {
        match self {
            ServiceKind::ProviderAuth => Some(Capability::ProviderAuth),
            ServiceKind::ProviderCatalog => Some(Capability::ProviderCatalog),
            ServiceKind::SessionLifecycle => Some(Capability::SessionLifecycle),
            _ => None,
        }
    }
}

impl fmt::Display for ServiceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
