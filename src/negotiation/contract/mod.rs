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
//! Required, as the SUPPLEMENT fixes them: capabilities `content_parts`, `core`,
//! `request_cancellation`, `tool_call`; methods `$/cancelRequest`, `initialize`,
//! `shutdown`, `tool/call`.
//!
//! Optional capabilities: only `request_progress` (the `$/progress` semantics of
//! section 2.6). Progress is usable only when both the capability and the `$/progress`
//! method are selected. Nothing else the feature-negotiated wire offers is offered:
//! the SUPPLEMENT excludes `dynamic_tools`, and the other services have no 0.3 binding
//! in this host.
//!
//! Optional methods, each offered only when the host implements it and the manifest
//! declares the matching contribution ([`InitializeOffer::default_for`]):
//! - `$/progress` (extension to host): always.
//! - `confirmation/request` (extension to host): with `contributes.confirmations`.
//! - `hook/run` (host to extension): with at least one `contributes.hooks` entry.
//! - `input/request` (extension to host): always, as on API 0.2.
//! - `notification` (extension to host): with `contributes.notifications`.
//! - `status/collect` (host to extension) and `status/contribution` (extension to
//!   host): with at least one `contributes.ui` surface.
//! - `tool/render` (host to extension): with at least one `contributes.tool_renderers`
//!   entry.
//!
//! Not offered: `context/collect` (excluded by the SUPPLEMENT) and with it
//! `context/contribution`; `tools/register` and `tools/unregister` (excluded);
//! `command/execute` and `menu/collect`, because the 0.3 selection carries no
//! `commands` member, so there is no negotiated command catalog to execute from or
//! build menus on.
//!
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

/// An API 0.3 capability. Declared in byte order of the wire names, so sets iterate in
/// wire order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Capability {
    /// `content_parts`: required; structured tool results (section 1.2).
    ContentParts,
    /// `core`: required; the envelope, initialize and shutdown.
    Core,
    /// `request_cancellation`: required; `$/cancelRequest` (section 1.9).
    RequestCancellation,
    /// `request_progress`: optional; `$/progress` events (section 2.6).
    RequestProgress,
    /// `tool_call`: required; `tool/call` (section 1.2).
    ToolCall,
}

impl Capability {
    /// Every capability, in wire order.
    pub const ALL: [Capability; 5] = [
        Capability::ContentParts,
        Capability::Core,
        Capability::RequestCancellation,
        Capability::RequestProgress,
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
            Capability::RequestCancellation => "request_cancellation",
            Capability::RequestProgress => "request_progress",
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
            Capability::RequestProgress => Some(Feature::RequestProgress),
            Capability::Core | Capability::ToolCall => None,
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

/// A method an API 0.3 contract can carry, in either direction. Declared in byte order
/// of the wire names, so sets iterate in wire order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ContractMethod {
    /// `$/cancelRequest`: required.
    CancelRequest,
    /// `$/progress`: extension to host.
    Progress,
    /// `confirmation/request`: extension to host.
    ConfirmationRequest,
    /// `hook/run`: host to extension.
    HookRun,
    /// `initialize`: required.
    Initialize,
    /// `input/request`: extension to host.
    InputRequest,
    /// `notification`: extension to host.
    Notification,
    /// `shutdown`: required.
    Shutdown,
    /// `status/collect`: host to extension.
    StatusCollect,
    /// `status/contribution`: extension to host.
    StatusContribution,
    /// `tool/call`: required.
    ToolCall,
    /// `tool/render`: host to extension.
    ToolRender,
}

impl ContractMethod {
    /// Every method, in wire order.
    pub const ALL: [ContractMethod; 12] = [
        ContractMethod::CancelRequest,
        ContractMethod::Progress,
        ContractMethod::ConfirmationRequest,
        ContractMethod::HookRun,
        ContractMethod::Initialize,
        ContractMethod::InputRequest,
        ContractMethod::Notification,
        ContractMethod::Shutdown,
        ContractMethod::StatusCollect,
        ContractMethod::StatusContribution,
        ContractMethod::ToolCall,
        ContractMethod::ToolRender,
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
            ContractMethod::Progress => "$/progress",
            ContractMethod::ConfirmationRequest => "confirmation/request",
            ContractMethod::HookRun => "hook/run",
            ContractMethod::Initialize => "initialize",
            ContractMethod::InputRequest => "input/request",
            ContractMethod::Notification => "notification",
            ContractMethod::Shutdown => "shutdown",
            ContractMethod::StatusCollect => "status/collect",
            ContractMethod::StatusContribution => "status/contribution",
            ContractMethod::ToolCall => "tool/call",
            ContractMethod::ToolRender => "tool/render",
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
    /// The offer of this host for a manifest that contributes what `contributes` says
    /// (see the module documentation).
    pub(super) fn for_manifest(contributes: &crate::manifest::Contributes) -> ContractOffer {
        let mut methods = BTreeSet::from([ContractMethod::Progress, ContractMethod::InputRequest]);
        if contributes.confirmations {
            methods.insert(ContractMethod::ConfirmationRequest);
        }
        if !contributes.hooks.is_empty() {
            methods.insert(ContractMethod::HookRun);
        }
        if contributes.notifications {
            methods.insert(ContractMethod::Notification);
        }
        if !contributes.ui.is_empty() {
            methods.insert(ContractMethod::StatusCollect);
            methods.insert(ContractMethod::StatusContribution);
        }
        if !contributes.tool_renderers.is_empty() {
            methods.insert(ContractMethod::ToolRender);
        }
        ContractOffer {
            optional_capabilities: BTreeSet::from([Capability::RequestProgress]),
            optional_methods: methods,
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
        assert!(!Capability::RequestProgress.is_required());
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
        assert!(features.contains(Feature::RequestProgress));
        assert_eq!(features.len(), 3);
        assert!(contract.allows("tool/call"));
        assert!(!contract.allows("hook/run"));
        assert!(!contract.allows("context/collect"));
        assert_eq!(contract.transport_frame_limit(), 1_048_577);
    }
}
