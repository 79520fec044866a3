//! The API 0.3 `contract`: the host's offer in `initialize` and the extension's
//! selection in the response (SUPPLEMENT "API 0.3 (canonical wire)").
//!
//! The offer is
//! `{"schema":"octet.extension.api/0.3","encoding":"octet-canonical-json-v1",
//! "required_capabilities":[...],"optional_capabilities":[...],"required_methods":[...],
//! "optional_methods":[...],"limits":{"max_frame_bytes":..,"max_concurrent_requests":..,
//! "max_tools":..}}`; the selection is `{"schema","encoding","capabilities","methods",
//! "limits"}`. Lists are written in byte order of their names.
//!
//! # What this host offers
//!
//! Exactly upstream's 0.3 vocabulary (SUPPLEMENT "Capabilities"), nothing of the
//! feature-negotiated wire: upstream's 0.3 extensions check the offer strictly and
//! answer -32011 `capability_mismatch` for any other name (`request_progress`,
//! `$/progress`, `input/request`, `menu`...).
//!
//! Required, always: capabilities `content_parts`, `core`, `request_cancellation`,
//! `tool_call`; methods `$/cancelRequest`, `initialize`, `shutdown`, `tool/call`.
//!
//! Optional: a capability is offered only when the host serves it, and a method only
//! together with the capability that gates it ([`ContractMethod::capability`];
//! [`InitializeOffer::check`] refuses anything else). The host serves the host-driven
//! ones itself, so it always offers `lifecycle_events` (with `hook/run`, sent from the
//! embedder's lifecycle reports), `migration.adapter.v1` (with `migration/detect` and
//! `migration/import`) and `provider_stream` (with `provider/stream`, `provider/cancel`
//! and `provider/event`). `provider_auth`, `provider_catalog` and `session_lifecycle`
//! need a service the embedder binds: each is offered, with its methods, when its
//! kind is bound (`ServiceBindings::provider_auth`, `provider_catalog`,
//! `session_lifecycle`, or serve's `start` `"services"`).
//! `dynamic_tools`, `context/collect`, `tools/register` and `tools/unregister` are
//! deferred by upstream and never offered.
//!
//! [`InitializeOffer::check`]: super::InitializeOffer::check
//! [`InitializeOffer::default_for`]: super::InitializeOffer::default_for

mod error;
mod select;

use std::collections::BTreeSet;
use std::fmt;

use serde::{Serialize, Serializer};

pub use error::ContractError;
pub(super) use select::validate_v0_3;

use super::feature::{Feature, FeatureSet};
use crate::limits;
use crate::wire::canonical::ENCODING_NAME;
use crate::wire::codec::canonical_frame_limit;

/// The contract schema of API 0.3, offered and echoed as `contract.schema`.
pub const CONTRACT_SCHEMA: &str = "octet.extension.api/0.3";

/// The wire encoding of API 0.3, offered and echoed as `contract.encoding`.
pub const CONTRACT_ENCODING: &str = ENCODING_NAME;

/// An API 0.3 capability (SUPPLEMENT "Capabilities"). Declared in byte order of the
/// wire names, so sets iterate in wire order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Capability {
    /// `content_parts`: required; types the `tool/call` result content.
    ContentParts,
    /// `core`: required; `initialize` and `shutdown`.
    Core,
    /// `lifecycle_events`: optional; `hook/run` with `session_start`/`session_end`.
    LifecycleEvents,
    /// `migration.adapter.v1`: optional; `migration/detect`, `migration/import`.
    MigrationAdapterV1,
    /// `provider_auth`: optional; `provider/auth/request`, `provider/auth/revoke`.
    ProviderAuth,
    /// `provider_catalog`: optional; `providers/register|update|unregister`,
    /// `providers/complete`.
    ProviderCatalog,
    /// `provider_stream`: optional; `provider/stream`, `provider/cancel`,
    /// `provider/event`.
    ProviderStream,
    /// `request_cancellation`: required; `$/cancelRequest` both ways.
    RequestCancellation,
    /// `session_lifecycle`: optional; `session/create|fork|reload|switch`.
    SessionLifecycle,
    /// `tool_call`: required; `tool/call`.
    ToolCall,
}

impl Capability {
    /// Every capability, in wire order.
    pub const ALL: [Capability; 10] = [
        Capability::ContentParts,
        Capability::Core,
        Capability::LifecycleEvents,
        Capability::MigrationAdapterV1,
        Capability::ProviderAuth,
        Capability::ProviderCatalog,
        Capability::ProviderStream,
        Capability::RequestCancellation,
        Capability::SessionLifecycle,
        Capability::ToolCall,
    ];

    /// The capabilities every API 0.3 contract requires, in wire order.
    pub const REQUIRED: [Capability; 4] = [
        Capability::ContentParts,
        Capability::Core,
        Capability::RequestCancellation,
        Capability::ToolCall,
    ];

    /// The wire name, such as `"tool_call"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Capability::ContentParts => "content_parts",
            Capability::Core => "core",
            Capability::LifecycleEvents => "lifecycle_events",
            Capability::MigrationAdapterV1 => "migration.adapter.v1",
            Capability::ProviderAuth => "provider_auth",
            Capability::ProviderCatalog => "provider_catalog",
            Capability::ProviderStream => "provider_stream",
            Capability::RequestCancellation => "request_cancellation",
            Capability::SessionLifecycle => "session_lifecycle",
            Capability::ToolCall => "tool_call",
        }
    }

    /// Parses a wire name exactly.
    pub fn parse(text: &str) -> Option<Capability> {
        Capability::ALL.into_iter().find(|c| c.as_str() == text)
    }

    /// True for the four required capabilities.
    pub fn is_required(self) -> bool {
        Capability::REQUIRED.contains(&self)
    }

    /// The feature of the feature-negotiated model this capability grants, so code
    /// shared with API 0.2/0.4 can ask [`FeatureSet`] either way.
    pub fn feature(self) -> Option<Feature> {
        match self {
            Capability::ContentParts => Some(Feature::ContentParts),
            Capability::RequestCancellation => Some(Feature::RequestCancellation),
            _ => None,
        }
    }
}

impl fmt::Display for Capability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Capability {
    /// Serializes as the wire name.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// A method of the API 0.3 vocabulary, in either direction (SUPPLEMENT
/// "Capabilities"). Declared in byte order of the wire names, so sets iterate in wire
/// order. Each is gated by one capability ([`ContractMethod::capability`]) and may be
/// offered only together with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ContractMethod {
    /// `$/cancelRequest`: required, both directions.
    CancelRequest,
    /// `hook/run`: host to extension (`lifecycle_events`).
    HookRun,
    /// `initialize`: required.
    Initialize,
    /// `migration/detect`: host to extension (`migration.adapter.v1`).
    MigrationDetect,
    /// `migration/import`: host to extension (`migration.adapter.v1`).
    MigrationImport,
    /// `provider/auth/request`: extension to host (`provider_auth`).
    ProviderAuthRequest,
    /// `provider/auth/revoke`: extension to host (`provider_auth`).
    ProviderAuthRevoke,
    /// `provider/cancel`: host to extension notification (`provider_stream`).
    ProviderCancel,
    /// `provider/event`: extension to host notification (`provider_stream`).
    ProviderEvent,
    /// `provider/stream`: host to extension (`provider_stream`).
    ProviderStream,
    /// `providers/complete`: extension to host notification (`provider_catalog`).
    ProvidersComplete,
    /// `providers/register`: extension to host (`provider_catalog`).
    ProvidersRegister,
    /// `providers/unregister`: extension to host (`provider_catalog`).
    ProvidersUnregister,
    /// `providers/update`: extension to host (`provider_catalog`).
    ProvidersUpdate,
    /// `session/create`: extension to host (`session_lifecycle`).
    SessionCreate,
    /// `session/fork`: extension to host (`session_lifecycle`).
    SessionFork,
    /// `session/reload`: extension to host (`session_lifecycle`).
    SessionReload,
    /// `session/switch`: extension to host (`session_lifecycle`).
    SessionSwitch,
    /// `shutdown`: required.
    Shutdown,
    /// `tool/call`: required.
    ToolCall,
}

impl ContractMethod {
    /// Every method, in wire order.
    pub const ALL: [ContractMethod; 20] = [
        ContractMethod::CancelRequest,
        ContractMethod::HookRun,
        ContractMethod::Initialize,
        ContractMethod::MigrationDetect,
        ContractMethod::MigrationImport,
        ContractMethod::ProviderAuthRequest,
        ContractMethod::ProviderAuthRevoke,
        ContractMethod::ProviderCancel,
        ContractMethod::ProviderEvent,
        ContractMethod::ProviderStream,
        ContractMethod::ProvidersComplete,
        ContractMethod::ProvidersRegister,
        ContractMethod::ProvidersUnregister,
        ContractMethod::ProvidersUpdate,
        ContractMethod::SessionCreate,
        ContractMethod::SessionFork,
        ContractMethod::SessionReload,
        ContractMethod::SessionSwitch,
        ContractMethod::Shutdown,
        ContractMethod::ToolCall,
    ];

    /// The methods every API 0.3 contract requires, in wire order.
    pub const REQUIRED: [ContractMethod; 4] = [
        ContractMethod::CancelRequest,
        ContractMethod::Initialize,
        ContractMethod::Shutdown,
        ContractMethod::ToolCall,
    ];

    /// The method name, such as `"tool/call"`.
    pub fn as_str(self) -> &'static str {
        match self {
            ContractMethod::CancelRequest => "$/cancelRequest",
            ContractMethod::HookRun => "hook/run",
            ContractMethod::Initialize => "initialize",
            ContractMethod::MigrationDetect => "migration/detect",
            ContractMethod::MigrationImport => "migration/import",
            ContractMethod::ProviderAuthRequest => "provider/auth/request",
            ContractMethod::ProviderAuthRevoke => "provider/auth/revoke",
            ContractMethod::ProviderCancel => "provider/cancel",
            ContractMethod::ProviderEvent => "provider/event",
            ContractMethod::ProviderStream => "provider/stream",
            ContractMethod::ProvidersComplete => "providers/complete",
            ContractMethod::ProvidersRegister => "providers/register",
            ContractMethod::ProvidersUnregister => "providers/unregister",
            ContractMethod::ProvidersUpdate => "providers/update",
            ContractMethod::SessionCreate => "session/create",
            ContractMethod::SessionFork => "session/fork",
            ContractMethod::SessionReload => "session/reload",
            ContractMethod::SessionSwitch => "session/switch",
            ContractMethod::Shutdown => "shutdown",
            ContractMethod::ToolCall => "tool/call",
        }
    }

    /// The capability that gates this method: it must be offered (and selected) with
    /// the method.
    pub fn capability(self) -> Capability {
        match self {
            ContractMethod::CancelRequest => Capability::RequestCancellation,
            ContractMethod::Initialize | ContractMethod::Shutdown => Capability::Core,
            ContractMethod::ToolCall => Capability::ToolCall,
            ContractMethod::HookRun => Capability::LifecycleEvents,
            ContractMethod::MigrationDetect | ContractMethod::MigrationImport => {
                Capability::MigrationAdapterV1
            }
            ContractMethod::ProviderAuthRequest | ContractMethod::ProviderAuthRevoke => {
                Capability::ProviderAuth
            }
            ContractMethod::ProviderCancel
            | ContractMethod::ProviderEvent
            | ContractMethod::ProviderStream => Capability::ProviderStream,
            ContractMethod::ProvidersComplete
            | ContractMethod::ProvidersRegister
            | ContractMethod::ProvidersUnregister
            | ContractMethod::ProvidersUpdate => Capability::ProviderCatalog,
            ContractMethod::SessionCreate
            | ContractMethod::SessionFork
            | ContractMethod::SessionReload
            | ContractMethod::SessionSwitch => Capability::SessionLifecycle,
        }
    }

    /// Parses a method name exactly.
    pub fn parse(text: &str) -> Option<ContractMethod> {
        ContractMethod::ALL.into_iter().find(|m| m.as_str() == text)
    }

    /// True for the four required methods.
    pub fn is_required(self) -> bool {
        ContractMethod::REQUIRED.contains(&self)
    }
}

impl fmt::Display for ContractMethod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for ContractMethod {
    /// Serializes as the method name.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// The three `contract.limits`, offered as upper bounds and selected at or below them.
/// Selected limits apply to both directions at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct ContractLimits {
    /// Largest frame in bytes, the LF excluded.
    pub max_frame_bytes: usize,
    /// Requests in flight at once, per direction.
    pub max_concurrent_requests: u32,
    /// Most tools the extension defines.
    pub max_tools: usize,
}

impl Default for ContractLimits {
    /// The host's bounds: 1048576-byte frames (LF excluded), 64 requests, 256 tools.
    fn default() -> ContractLimits {
        ContractLimits {
            max_frame_bytes: limits::CANONICAL_MAX_FRAME_BYTES,
            max_concurrent_requests: limits::MAX_CONCURRENT_REQUESTS,
            max_tools: limits::MAX_TOOLS,
        }
    }
}

impl ContractLimits {
    /// The transport frame limit these limits imply: `max_frame_bytes` plus the LF.
    /// Store it in the reader's frame limit and pass it to every encoder.
    pub fn transport_frame_limit(&self) -> usize {
        canonical_frame_limit(self.max_frame_bytes)
    }
}

/// What an API 0.3 generation selected: the validated `contract` of the response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Contract {
    /// The selected capabilities (all four required ones included).
    pub capabilities: BTreeSet<Capability>,
    /// The selected methods (all four required ones included). Only these may be sent,
    /// either way; anything else is answered -32601 "unknown or unnegotiated method".
    pub methods: BTreeSet<ContractMethod>,
    /// The selected limits, each at most the offer.
    pub limits: ContractLimits,
}

impl Contract {
    /// The selection as JSON: `{"capabilities": [..], "methods": [..]}`, in wire order.
    pub fn to_value(&self) -> serde_json::Value {
        serde_json::json!({
            "capabilities": self.capabilities.iter().map(|c| c.as_str()).collect::<Vec<_>>(),
            "methods": self.methods.iter().map(|m| m.as_str()).collect::<Vec<_>>(),
        })
    }
}

impl Contract {
    /// Whether `method` (a wire name) was selected.
    pub fn allows(&self, method: &str) -> bool {
        ContractMethod::parse(method).is_some_and(|m| self.methods.contains(&m))
    }

    /// Whether `capability` was selected.
    pub fn has_capability(&self, capability: Capability) -> bool {
        self.capabilities.contains(&capability)
    }

    /// The features the selected capabilities grant (see [`Capability::feature`]).
    pub fn features(&self) -> FeatureSet {
        self.capabilities
            .iter()
            .filter_map(|c| c.feature())
            .collect()
    }

    /// The transport frame limit, LF included: `limits.max_frame_bytes + 1`.
    pub fn transport_frame_limit(&self) -> usize {
        self.limits.transport_frame_limit()
    }
}

/// The host's side of the contract, part of [`super::InitializeOffer`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct ContractOffer {
    /// Optional capabilities, kept in wire order without repeats.
    pub(super) optional_capabilities: BTreeSet<Capability>,
    /// Optional methods, kept in wire order without repeats.
    pub(super) optional_methods: BTreeSet<ContractMethod>,
    /// Offered `max_frame_bytes` (LF excluded).
    pub(super) max_frame_bytes: usize,
    /// Offered `max_tools`.
    pub(super) max_tools: usize,
}

impl ContractOffer {
    /// The offer of this host for any manifest: the required capabilities and methods
    /// only. An optional capability is offered only when the host serves it (see the
    /// module documentation), together with the methods it gates.
    pub(super) fn for_manifest(_contributes: &crate::manifest::Contributes) -> ContractOffer {
        let served = [
            Capability::LifecycleEvents,
            Capability::MigrationAdapterV1,
            Capability::ProviderStream,
        ];
        ContractOffer {
            optional_capabilities: served.into_iter().collect(),
            optional_methods: ContractMethod::ALL
                .into_iter()
                .filter(|m| served.contains(&m.capability()))
                .collect(),
            ..ContractOffer::empty()
        }
    }

    /// No optional capability or method, at the host's limits.
    pub(super) fn empty() -> ContractOffer {
        let limits = ContractLimits::default();
        ContractOffer {
            optional_capabilities: BTreeSet::new(),
            optional_methods: BTreeSet::new(),
            max_frame_bytes: limits.max_frame_bytes,
            max_tools: limits.max_tools,
        }
    }

    /// Whether the offer carries anything beyond [`ContractOffer::empty`]'s lists.
    pub(super) fn has_optional_items(&self) -> bool {
        !self.optional_capabilities.is_empty() || !self.optional_methods.is_empty()
    }
}

/// The `contract` member of the `initialize` params.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(super) struct ContractParams {
    schema: &'static str,
    encoding: &'static str,
    required_capabilities: [Capability; 4],
    optional_capabilities: Vec<Capability>,
    required_methods: [ContractMethod; 4],
    optional_methods: Vec<ContractMethod>,
    limits: ContractLimits,
}

impl ContractParams {
    /// The offer as sent, with `limits` from the offer.
    pub(super) fn new(offer: &ContractOffer, limits: ContractLimits) -> ContractParams {
        ContractParams {
            schema: CONTRACT_SCHEMA,
            encoding: CONTRACT_ENCODING,
            required_capabilities: Capability::REQUIRED,
            optional_capabilities: offer.optional_capabilities.iter().copied().collect(),
            required_methods: ContractMethod::REQUIRED,
            optional_methods: offer.optional_methods.iter().copied().collect(),
            limits,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_declaration_order_is_byte_order() {
        for c in Capability::ALL {
            assert_eq!(Capability::parse(c.as_str()), Some(c));
        }
        for m in ContractMethod::ALL {
            assert_eq!(ContractMethod::parse(m.as_str()), Some(m));
        }
        assert!(Capability::ALL
            .windows(2)
            .all(|w| w[0] < w[1] && w[0].as_str() < w[1].as_str()));
        assert!(ContractMethod::ALL
            .windows(2)
            .all(|w| w[0] < w[1] && w[0].as_str() < w[1].as_str()));
        assert!(Capability::REQUIRED.iter().all(|c| c.is_required()));
        assert!(!Capability::LifecycleEvents.is_required());
        // Every method's capability is part of the vocabulary, and the required methods
        // are gated by required capabilities.
        for m in ContractMethod::REQUIRED {
            assert!(m.capability().is_required(), "{m}");
        }
        for m in ContractMethod::ALL.into_iter().filter(|m| !m.is_required()) {
            assert!(!m.capability().is_required(), "{m}");
        }
    }

    #[test]
    fn contract_maps_capabilities_to_features() {
        let contract = Contract {
            capabilities: Capability::ALL.into_iter().collect(),
            methods: ContractMethod::REQUIRED.into_iter().collect(),
            limits: ContractLimits::default(),
        };
        let features = contract.features();
        assert!(features.contains(Feature::ContentParts));
        assert!(features.contains(Feature::RequestCancellation));
        assert!(!features.contains(Feature::RequestProgress));
        assert_eq!(features.len(), 2);
        assert!(contract.allows("tool/call"));
        assert!(!contract.allows("hook/run"));
        assert!(!contract.allows("context/collect"));
        assert_eq!(contract.transport_frame_limit(), 1_048_577);
    }
}
