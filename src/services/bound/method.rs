//! The methods bound services serve (sections 2.19-2.23; API 0.3 `provider_auth`,
//! `provider_catalog`, `session_lifecycle`): their names and kinds, and the rules
//! their results must keep.

use super::kind::ServiceKind;

/// An extension-to-host request served by a bound service: the ten Wave-1 requests
/// (section 2, "Optional Wave-1 resource_owner") and the API 0.3 `provider_auth`,
/// `provider_catalog` and `session_lifecycle` methods.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ServiceMethod {
    /// `composer/get` (section 2.19).
    ComposerGet,
    /// `composer/set` (section 2.19).
    ComposerSet,
    /// `composer/insert` (section 2.19).
    ComposerInsert,
    /// `shortcut/register` (section 2.20).
    ShortcutRegister,
    /// `session/append_entry` (section 2.21).
    SessionAppendEntry,
    /// `session/set_name` (section 2.21).
    SessionSetName,
    /// `session/set_label` (section 2.21).
    SessionSetLabel,
    /// `session/send_message` (section 2.22).
    SessionSendMessage,
    /// `session/send_user_message` (section 2.22).
    SessionSendUserMessage,
    /// `tools/set_active` (section 2.23).
    ToolsSetActive,
    /// API 0.3 `provider/auth/request`.
    ProviderAuthRequest,
    /// API 0.3 `provider/auth/revoke`.
    ProviderAuthRevoke,
    /// API 0.3 `providers/register`.
    ProvidersRegister,
    /// API 0.3 `providers/update`.
    ProvidersUpdate,
    /// API 0.3 `providers/unregister`.
    ProvidersUnregister,
    /// API 0.3 `providers/complete` (a notification).
    ProvidersComplete,
    /// API 0.3 `session/create`.
    SessionCreate,
    /// API 0.3 `session/fork`.
    SessionFork,
    /// API 0.3 `session/reload`.
    SessionReload,
    /// API 0.3 `session/switch`.
    SessionSwitch,
}

impl ServiceMethod {
    /// Every method: the ten Wave-1 requests, then the API 0.3 ones.
    pub const ALL: [ServiceMethod; 20] = [
        ServiceMethod::ComposerGet,
        ServiceMethod::ComposerSet,
        ServiceMethod::ComposerInsert,
        ServiceMethod::ShortcutRegister,
        ServiceMethod::SessionAppendEntry,
        ServiceMethod::SessionSetName,
        ServiceMethod::SessionSetLabel,
        ServiceMethod::SessionSendMessage,
        ServiceMethod::SessionSendUserMessage,
        ServiceMethod::ToolsSetActive,
        ServiceMethod::ProviderAuthRequest,
        ServiceMethod::ProviderAuthRevoke,
        ServiceMethod::ProvidersRegister,
        ServiceMethod::ProvidersUpdate,
        ServiceMethod::ProvidersUnregister,
        ServiceMethod::ProvidersComplete,
        ServiceMethod::SessionCreate,
        ServiceMethod::SessionFork,
        ServiceMethod::SessionReload,
        ServiceMethod::SessionSwitch,
    ];

    /// The wire method name.
    pub fn name(self) -> &'static str {
        match self {
            ServiceMethod::ComposerGet => "composer/get",
            ServiceMethod::ComposerSet => "composer/set",
            ServiceMethod::ComposerInsert => "composer/insert",
            ServiceMethod::ShortcutRegister => "shortcut/register",
            ServiceMethod::SessionAppendEntry => "session/append_entry",
            ServiceMethod::SessionSetName => "session/set_name",
            ServiceMethod::SessionSetLabel => "session/set_label",
            ServiceMethod::SessionSendMessage => "session/send_message",
            ServiceMethod::SessionSendUserMessage => "session/send_user_message",
            ServiceMethod::ToolsSetActive => "tools/set_active",
            ServiceMethod::ProviderAuthRequest => "provider/auth/request",
            ServiceMethod::ProviderAuthRevoke => "provider/auth/revoke",
            ServiceMethod::ProvidersRegister => "providers/register",
            ServiceMethod::ProvidersUpdate => "providers/update",
            ServiceMethod::ProvidersUnregister => "providers/unregister",
            ServiceMethod::ProvidersComplete => "providers/complete",
            ServiceMethod::SessionCreate => "session/create",
            ServiceMethod::SessionFork => "session/fork",
            ServiceMethod::SessionReload => "session/reload",
            ServiceMethod::SessionSwitch => "session/switch",
        }
    }

    /// True for the ten Wave-1 requests (API 0.2 and 0.4, with parent and owner), the
    /// only ones that accept an explicit `resource_owner`: the first ten of
    /// [`ServiceMethod::ALL`].
    pub fn is_wave1(self) -> bool {
        self.kind().feature().is_some()
    }

    /// True for the one notification, `providers/complete`: nothing is answered.
    pub fn is_notification(self) -> bool {
        self == ServiceMethod::ProvidersComplete
    }

    /// The method a wire name names.
    pub fn from_name(name: &str) -> Option<ServiceMethod> {
        ServiceMethod::ALL.into_iter().find(|m| m.name() == name)
    }

    /// The service that serves it (its feature or API 0.3 capability).
    pub fn kind(self) -> ServiceKind {
        match self {
            ServiceMethod::ComposerGet
            | ServiceMethod::ComposerSet
            | ServiceMethod::ComposerInsert => ServiceKind::Composer,
            ServiceMethod::ShortcutRegister => ServiceKind::Shortcuts,
            ServiceMethod::SessionAppendEntry
            | ServiceMethod::SessionSetName
            | ServiceMethod::SessionSetLabel => ServiceKind::SessionEntries,
            ServiceMethod::SessionSendMessage | ServiceMethod::SessionSendUserMessage => {
                ServiceKind::MessageInjection
            }
            ServiceMethod::ToolsSetActive => ServiceKind::ActiveTools,
            ServiceMethod::ProviderAuthRequest | ServiceMethod::ProviderAuthRevoke => {
                ServiceKind::ProviderAuth
            }
            ServiceMethod::ProvidersRegister
            | ServiceMethod::ProvidersUpdate
            | ServiceMethod::ProvidersUnregister
            | ServiceMethod::ProvidersComplete => ServiceKind::ProviderCatalog,
            ServiceMethod::SessionCreate
            | ServiceMethod::SessionFork
            | ServiceMethod::SessionReload
            | ServiceMethod::SessionSwitch => ServiceKind::SessionLifecycle,
        }
    }
}

impl std::fmt::Display for ServiceMethod {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
