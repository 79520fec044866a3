//! What a `start` line's `services` may name: the request services by kind, and the
//! host's brokers the client can answer for. A leaf: the control parser, the services
//! and the broker forwarders all read it.

use serde_json::Value;

use crate::negotiation::Feature;
use crate::services::bound::ServiceKind;

/// What a `start` line's `services` may name: a request service by its kind, or one
/// of the host's brokers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ServeBinding {
    /// A request service (`composer`, `provider_auth`, ...).
    Kind(ServiceKind),
    /// A broker the client answers for.
    Broker(Broker),
    /// A frontend feature without a service of its own (`autocomplete_edit_v1`,
    /// `terminal_input`): the client promises what it needs (the edit fields at
    /// display and acceptance, `notify` with terminal input).
    Frontend(Feature),
}

/// The frontend features a `start` line may name.
const FRONTEND: [Feature; 2] = [Feature::AutocompleteEditV1, Feature::TerminalInput];

impl ServeBinding {
    /// Every name a `start` line may give, kinds first.
    pub fn names() -> Vec<&'static str> {
        let kinds = ServiceKind::ALL.iter().map(|k| k.name());
        let frontend = FRONTEND.iter().map(|f| f.as_str());
        let brokers = Broker::ALL.iter().map(|b| b.name());
        kinds.chain(frontend).chain(brokers).collect()
    }

    /// The binding `name` names.
    pub fn from_name(name: &str) -> Option<ServeBinding> {
        ServiceKind::from_name(name)
            .map(ServeBinding::Kind)
            .or_else(|| {
                FRONTEND
                    .into_iter()
                    .find(|f| f.as_str() == name)
                    .map(ServeBinding::Frontend)
            })
            .or_else(|| {
                Broker::ALL
                    .into_iter()
                    .find(|b| b.name() == name)
                    .map(ServeBinding::Broker)
            })
    }
}

/// A host broker the client can answer for; each asks with its own `method`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Broker {
    /// `policy`: classifies `policy/evaluate` intents (`method` `policy/evaluate`).
    Policy,
    /// `approvals`: approves intents classified `ask` (`method` `policy/approve`).
    Approvals,
    /// `secrets`: answers `secret/get` (`method` `secret/get`).
    Secrets,
    /// `provider_credentials`: answers `provider/credentials`.
    ProviderCredentials,
}

impl Broker {
    /// Every broker.
    pub const ALL: [Broker; 4] = [
        Broker::Policy,
        Broker::Approvals,
        Broker::Secrets,
        Broker::ProviderCredentials,
    ];

    /// The name a `start` line binds it by.
    pub fn name(self) -> &'static str {
        match self {
            Broker::Policy => "policy",
            Broker::Approvals => "approvals",
            Broker::Secrets => "secrets",
            Broker::ProviderCredentials => "provider_credentials",
        }
    }

    /// The `method` of its `service_request` lines.
    pub fn method(self) -> &'static str {
        match self {
            Broker::Policy => "policy/evaluate",
            Broker::Approvals => "policy/approve",
            Broker::Secrets => "secret/get",
            Broker::ProviderCredentials => "provider/credentials",
        }
    }

    /// Checks the client's `result`: a closed object with exactly one member.
    pub fn check_result(self, result: &Value) -> Result<(), String> {
        let (member, valid): (&str, fn(&Value) -> bool) = match self {
            Broker::Policy => ("decision", |v| {
                matches!(v.as_str(), Some("allow" | "ask" | "deny"))
            }),
            Broker::Approvals => ("approved", Value::is_boolean),
            Broker::Secrets => ("value", |v| v.is_string() || v.is_null()),
            Broker::ProviderCredentials => ("credential", |v| v.is_string() || v.is_null()),
        };
        let expected = match self {
            Broker::Policy => "\"allow\", \"ask\" or \"deny\"",
            Broker::Approvals => "a boolean",
            Broker::Secrets | Broker::ProviderCredentials => "a string or null",
        };
        match result.as_object() {
            Some(map) if map.len() == 1 && map.get(member).is_some_and(valid) => Ok(()),
            _ => Err(format!(
                "{} answers {{\"{member}\": {expected}}} and nothing else",
                self.method()
            )),
        }
    }
}
