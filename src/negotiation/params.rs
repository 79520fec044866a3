//! Building the `initialize` request params (section 1.1).
//!
//! The params are plain `#[derive(Serialize)]` structs whose field order is the order of
//! the reference's example, so the encoded request has the example's member order
//! (a `serde_json::Value` would sort the keys).

use std::path::Path;

use serde::Serialize;

use super::contract::ContractParams;
use super::error::{path_string, NegotiationError};
use super::feature::Feature;
use super::offer::{BulkLimits, BulkObjectsOffer, InitializeOffer};
use crate::limits;
use crate::manifest::{ApiVersion, LocatedManifest};
use crate::wire::canonical::encode_canonical;

#[doc(hidden)]
/// The `protocol.version` the host sends for `api`, or `None` for versions without a
/// `protocol` member.
///
/// API 0.2 sends `"0.2"` as in the reference. The reference is silent about API 0.4,
/// which reuses the feature-negotiated 0.2 wire; this host sends `"0.4"`, the manifest's
/// own version, so the echo check also confirms that both sides agree on the 0.4
/// additions. API 0.1 sends no `protocol`, and API 0.3 is a different wire.
pub fn protocol_version(api: ApiVersion) -> Option<&'static str> {
    match api {
        ApiVersion::V0_2 => Some("0.2"),
        ApiVersion::V0_4 => Some("0.4"),
        ApiVersion::V0_1 | ApiVersion::V0_3 => None,
    }
}

/// The `host` object of `initialize` and of execution contexts (section 1.1, section 4
/// `ExtensionHostState`).
///
/// It serializes exactly like the reference's example, absent values as `null`:
/// `{"session_id": null, "session_name": null, "model": ..., "reasoning": null,
/// "active_skills": []}`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct HostContext {
    /// The current session, when there is one.
    pub session_id: Option<String>,
    /// The session's name, when it has one.
    pub session_name: Option<String>,
    /// The selected model.
    pub model: Option<String>,
    /// The selected reasoning setting, as the host represents it.
    pub reasoning: Option<serde_json::Value>,
    /// The active skills (section 4 `ActiveSkill`).
    pub active_skills: Vec<serde_json::Value>,
}

/// The params of an `initialize` request, ready to encode with
/// [`crate::wire::encode_request`] (API 0.1, 0.2, 0.4; members serialize in the order
/// of the reference's example) or, as [`InitializeParams::to_value`], with
/// [`crate::wire::codec::Codec::Canonical`] (API 0.3, which sorts the members).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct InitializeParams {
    api_version: &'static str,
    octet_version: &'static str,
    extension: ExtensionParams,
    workspace: String,
    capabilities: CapabilitiesParams,
    contributes: ContributesParams,
    host: HostContext,
    #[serde(skip_serializing_if = "Option::is_none")]
    protocol: Option<ProtocolOffer>,
    /// API 0.3 only: always present, an array.
    #[serde(skip_serializing_if = "Option::is_none")]
    flag_values: Option<Vec<serde_json::Value>>,
    /// API 0.3 only: the contract offer.
    #[serde(skip_serializing_if = "Option::is_none")]
    contract: Option<ContractParams>,
}

impl InitializeParams {
    /// The `api_version` sent.
    pub fn api_version(&self) -> &'static str {
        self.api_version
    }

    /// The `protocol.version` sent, or `None` for API 0.1 and 0.3.
    pub fn protocol_version(&self) -> Option<&'static str> {
        self.protocol.as_ref().map(|p| p.version)
    }

    /// The params as a JSON value, for [`crate::wire::codec::Codec`]'s encoders.
    pub fn to_value(&self) -> serde_json::Value {
        // Every member serializes to JSON with string keys, which cannot fail.
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
struct ExtensionParams {
    name: String,
    version: String,
    manifest_path: String,
    source: &'static str,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
struct CapabilitiesParams {
    filesystem: &'static str,
    process: bool,
    network: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    secrets: Vec<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    provider_credentials: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
struct ContributesParams {
    tools: Vec<String>,
    commands: Vec<String>,
    hooks: Vec<String>,
    ui: Vec<&'static str>,
    context: bool,
    tool_renderers: Vec<String>,
    notifications: bool,
    confirmations: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    presentation: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    menu: Option<bool>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
struct ProtocolOffer {
    version: &'static str,
    required_features: [Feature; 2],
    optional_features: Vec<Feature>,
    limits: LimitsOffer,
    #[serde(skip_serializing_if = "Option::is_none")]
    bulk_objects_v1: Option<BulkObjectsParams>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
struct LimitsOffer {
    max_concurrent_requests: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    resource_refs_v1: Option<ResourceRefsLimits>,
}

/// `protocol.limits.resource_refs_v1`, advertised with `resource_refs_v1` (section 2.26).
#[derive(Clone, Debug, PartialEq, Serialize)]
struct ResourceRefsLimits {
    max_records: u32,
    max_registrations_per_parent: u32,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
struct BulkObjectsParams {
    profile: &'static str,
    transfer_directory: String,
    limits: BulkLimits,
}

#[doc(hidden)]
/// Builds the `initialize` params for `located`, exactly as section 1.1 shows them.
///
/// Every version sends `api_version`, `octet_version`, `extension`, `workspace`,
/// `capabilities` (with `secrets` only when the allowlist is non-empty and
/// `provider_credentials: true` only when an API 0.2+ manifest declares it; the brokered
/// `environment` allowlist is never sent), `contributes` (with `presentation` from API
/// 0.2 on and `menu` on API 0.2 and 0.4, never on 0.3) and `host`. API 0.2 and 0.4 add `protocol` from `offer`; API 0.1
/// has none. API 0.3 adds `flag_values` (always `[]`: this host has no extension
/// flags) and the `contract` offer from `offer` instead of `protocol`.
///
/// Fails when the offer breaks [`InitializeOffer::check`], a path is not absolute
/// UTF-8, or, on API 0.3, the params have no canonical encoding
/// ([`NegotiationError::NotCanonical`]: a float in the host context, for example).
pub fn initialize_params(
    located: &LocatedManifest,
    workspace: &Path,
    host: &HostContext,
    offer: &InitializeOffer,
) -> Result<InitializeParams, NegotiationError> {
    let manifest = &located.manifest;
    let api = manifest.api_version;
    offer.check(located)?;

    let caps = &manifest.capabilities;
    let capabilities = CapabilitiesParams {
        filesystem: caps.filesystem.as_str(),
        process: caps.process,
        network: caps.network,
        secrets: caps.secrets.clone(),
        provider_credentials: api.has_v0_2_fields() && caps.provider_credentials,
    };

    let contrib = &manifest.contributes;
    let v0_2_flag = |flag: bool| api.has_v0_2_fields().then_some(flag);
    let contributes = ContributesParams {
        tools: contrib.tools.clone(),
        commands: contrib.commands.clone(),
        hooks: contrib.hooks.clone(),
        ui: contrib.ui.iter().map(|s| s.as_str()).collect(),
        context: contrib.context,
        tool_renderers: contrib.tool_renderers.clone(),
        notifications: contrib.notifications,
        confirmations: contrib.confirmations,
        presentation: v0_2_flag(contrib.presentation),
        // API 0.3 has no menus: its `contributes` is closed, and upstream's extensions
        // refuse a `menu` member with -32011.
        menu: v0_2_flag(contrib.menu).filter(|_| api != ApiVersion::V0_3),
    };

    let protocol = match protocol_version(api) {
        Some(version) => Some(protocol_offer(version, offer)?),
        None => None,
    };

    let canonical = api == ApiVersion::V0_3;
    let params = InitializeParams {
        api_version: api.as_str(),
        octet_version: limits::OCTET_VERSION,
        extension: ExtensionParams {
            name: manifest.name.clone(),
            version: manifest.version.to_string(),
            manifest_path: path_string(&located.manifest_path, "extension.manifest_path")?,
            source: located.source.as_str(),
        },
        workspace: path_string(workspace, "workspace")?,
        capabilities,
        contributes,
        host: host.clone(),
        protocol,
        flag_values: canonical.then(Vec::new),
        contract: canonical.then(|| ContractParams::new(&offer.contract, offer.contract_limits())),
    };
    if canonical {
        encode_canonical(&params.to_value(), &mut Vec::new())
            .map_err(NegotiationError::NotCanonical)?;
    }
    Ok(params)
}

fn protocol_offer(
    version: &'static str,
    offer: &InitializeOffer,
) -> Result<ProtocolOffer, NegotiationError> {
    let offers_resource_refs = offer.offers(Feature::ResourceRefsV1);
    let bulk_objects_v1 = match offer.bulk_objects() {
        Some(storage) => Some(bulk_objects_params(storage)?),
        None => None,
    };
    Ok(ProtocolOffer {
        version,
        required_features: Feature::REQUIRED,
        optional_features: offer.optional_features().to_vec(),
        limits: LimitsOffer {
            max_concurrent_requests: offer.max_concurrent_requests(),
            resource_refs_v1: offers_resource_refs.then_some(ResourceRefsLimits {
                max_records: limits::RESOURCE_REFS_MAX_RECORDS,
                max_registrations_per_parent: limits::RESOURCE_REFS_MAX_REGISTRATIONS_PER_PARENT,
            }),
        },
        bulk_objects_v1,
    })
}

fn bulk_objects_params(storage: &BulkObjectsOffer) -> Result<BulkObjectsParams, NegotiationError> {
    Ok(BulkObjectsParams {
        profile: BulkObjectsOffer::PROFILE,
        transfer_directory: path_string(
            &storage.transfer_directory,
            "protocol.bulk_objects_v1.transfer_directory",
        )?,
        limits: storage.limits,
    })
}
