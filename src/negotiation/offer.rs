//! What the host offers in `initialize`: optional features, the concurrency limit and
//! service configuration the offer carries (section 1.1).

use std::path::PathBuf;

use serde::Serialize;

use super::contract::{Capability, ContractError, ContractLimits, ContractMethod, ContractOffer};
use super::error::{path_string, NegotiationError};
use super::feature::Feature;
use crate::limits;
use crate::manifest::{ApiVersion, LocatedManifest, Manifest};

/// The host's side of feature negotiation.
///
/// Start from [`InitializeOffer::default_for`], which gives the reference's default
/// offer, and append conditional services the embedder actually binds with
/// [`InitializeOffer::with_feature`]. Feature names alone grant nothing: append a
/// feature only when its service is bound. On API 0.3 the offer is the `contract`
/// instead: optional capabilities, optional methods and the three limits
/// ([`InitializeOffer::with_contract_method`] and friends). [`InitializeOffer::check`] (run by both
/// [`initialize_params`](super::initialize_params) and
/// [`validate_initialize_result`](super::validate_initialize_result)) rejects offers the
/// reference forbids.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InitializeOffer {
    optional_features: Vec<Feature>,
    max_concurrent_requests: u32,
    bulk_objects: Option<BulkObjectsOffer>,
    /// The API 0.3 contract offer (empty lists unless the manifest selects API 0.3).
    pub(super) contract: ContractOffer,
}

impl Default for InitializeOffer {
    /// An offer without optional features, at the host's concurrency bound.
    fn default() -> InitializeOffer {
        InitializeOffer {
            optional_features: Vec::new(),
            max_concurrent_requests: limits::MAX_CONCURRENT_REQUESTS,
            bulk_objects: None,
            contract: ContractOffer::empty(),
        }
    }
}

impl InitializeOffer {
    /// The reference's default offer for `api` and `manifest` (section 1.1).
    ///
    /// API 0.2 offers `request_progress`, `artifacts`, `lifecycle_events`,
    /// `policy_intents`, `dynamic_tools` and `runtime_commands`, in that order; API 0.4
    /// adds `tool_prompt_metadata_v1`. Either appends `provider_credentials` when the
    /// manifest declares `[capabilities].provider_credentials = true`. API 0.1 offers
    /// no features. API 0.3 offers no features but a `contract`: the optional
    /// capabilities the host serves itself (`lifecycle_events`, `migration.adapter.v1`,
    /// `provider_stream`) with the methods they gate, at the host's limits (see
    /// [`super::contract`]); the launch adds those of the bound services.
    pub fn default_for(api: ApiVersion, manifest: &Manifest) -> InitializeOffer {
        let mut offer = InitializeOffer::default();
        if api == ApiVersion::V0_3 {
            offer.contract = ContractOffer::for_manifest(&manifest.contributes);
            return offer;
        }
        if !api.is_feature_negotiated() {
            return offer;
        }
        offer.optional_features = vec![
            Feature::RequestProgress,
            Feature::ProgressDecoration,
            Feature::Artifacts,
            Feature::LifecycleEvents,
            Feature::PolicyIntents,
            Feature::DynamicTools,
            Feature::RuntimeCommands,
        ];
        if api == ApiVersion::V0_4 {
            offer.optional_features.push(Feature::ToolPromptMetadataV1);
        }
        if manifest.capabilities.provider_credentials {
            offer.optional_features.push(Feature::ProviderCredentials);
        }
        offer
    }

    /// Appends an optional feature whose service the embedder binds; a feature already
    /// offered stays where it is.
    ///
    /// The reference bundles some offers: with `agent_sessions` the host also offers
    /// `agent_model_selection_v1`, and on API 0.4 also `agent_session_events_v1` and
    /// `agent_session_lifetime_v1`. Append each one. `bulk_objects_v1` is appended by
    /// [`InitializeOffer::with_bulk_objects`], which also carries its storage context.
    pub fn with_feature(mut self, feature: Feature) -> InitializeOffer {
        if !self.optional_features.contains(&feature) {
            self.optional_features.push(feature);
        }
        self
    }

    /// Offers `max_concurrent_requests`; it must lie within
    /// 1..=[`limits::MAX_CONCURRENT_REQUESTS`].
    pub fn with_max_concurrent_requests(mut self, max: u32) -> InitializeOffer {
        self.max_concurrent_requests = max;
        self
    }

    /// Offers `bulk_objects_v1` with its storage context (section 2.27).
    pub fn with_bulk_objects(mut self, storage: BulkObjectsOffer) -> InitializeOffer {
        self.bulk_objects = Some(storage);
        self.with_feature(Feature::BulkObjectsV1)
    }

    /// API 0.3: offers an optional capability; a required one is always offered and
    /// stays out of the optional list.
    pub fn with_contract_capability(mut self, capability: Capability) -> InitializeOffer {
        if !capability.is_required() {
            self.contract.optional_capabilities.insert(capability);
        }
        self
    }

    /// API 0.3: offers an optional method; a required one is always offered and stays
    /// out of the optional list.
    pub fn with_contract_method(mut self, method: ContractMethod) -> InitializeOffer {
        if !method.is_required() {
            self.contract.optional_methods.insert(method);
        }
        self
    }

    /// API 0.3: offers `max_frame_bytes` (LF excluded); it must lie within
    /// 1..=[`limits::CANONICAL_MAX_FRAME_BYTES`].
    pub fn with_max_frame_bytes(mut self, max: usize) -> InitializeOffer {
        self.contract.max_frame_bytes = max;
        self
    }

    /// API 0.3: offers `max_tools`; it must lie within 1..=[`limits::MAX_TOOLS`].
    pub fn with_max_tools(mut self, max: usize) -> InitializeOffer {
        self.contract.max_tools = max;
        self
    }

    /// API 0.3: the optional capabilities, in wire order.
    pub fn optional_capabilities(&self) -> impl Iterator<Item = Capability> + '_ {
        self.contract.optional_capabilities.iter().copied()
    }

    /// API 0.3: the optional methods, in wire order.
    pub fn optional_methods(&self) -> impl Iterator<Item = ContractMethod> + '_ {
        self.contract.optional_methods.iter().copied()
    }

    /// API 0.3: the offered `contract.limits`.
    pub fn contract_limits(&self) -> ContractLimits {
        ContractLimits {
            max_frame_bytes: self.contract.max_frame_bytes,
            max_concurrent_requests: self.max_concurrent_requests,
            max_tools: self.contract.max_tools,
        }
    }

    /// The optional features, in request order.
    pub fn optional_features(&self) -> &[Feature] {
        &self.optional_features
    }

    /// Whether a response may select `feature`: it is required or offered (on API
    /// 0.3: granted by a required or offered contract capability, see
    /// [`Capability::feature`]).
    pub fn offers(&self, feature: Feature) -> bool {
        feature.is_required()
            || self.optional_features.contains(&feature)
            || self
                .contract
                .optional_capabilities
                .iter()
                .any(|c| c.feature() == Some(feature))
    }

    /// The offered `max_concurrent_requests`.
    pub fn max_concurrent_requests(&self) -> u32 {
        self.max_concurrent_requests
    }

    /// The bulk storage context, when `bulk_objects_v1` is offered.
    pub fn bulk_objects(&self) -> Option<&BulkObjectsOffer> {
        self.bulk_objects.as_ref()
    }

    /// Checks the offer against the manifest it is made to.
    ///
    /// Rejects: a concurrency limit outside 1..=[`limits::MAX_CONCURRENT_REQUESTS`];
    /// required features listed as optional; features the API version cannot carry
    /// (every feature on API 0.1, API 0.4 features on 0.2); `secrets` with an empty
    /// allowlist and `provider_credentials` without the manifest's declaration;
    /// features offered without a feature they require (the response could never
    /// select them); `bulk_objects_v1` without storage context; contract capabilities
    /// or methods on any version but API 0.3; and a contract `max_frame_bytes` outside
    /// 1..=[`limits::CANONICAL_MAX_FRAME_BYTES`] or `max_tools` outside
    /// 1..=[`limits::MAX_TOOLS`].
    pub fn check(&self, located: &LocatedManifest) -> Result<(), NegotiationError> {
        let manifest = &located.manifest;
        let api = manifest.api_version;
        if !(1..=limits::MAX_CONCURRENT_REQUESTS).contains(&self.max_concurrent_requests) {
            return Err(NegotiationError::OfferInvalidConcurrency {
                value: self.max_concurrent_requests,
            });
        }
        if api != ApiVersion::V0_3 && self.contract.has_optional_items() {
            return Err(NegotiationError::Contract(ContractError::OfferedOnApi {
                api,
            }));
        }
        if let Some(method) = self.contract.optional_methods.iter().find(|m| {
            let capability = m.capability();
            !capability.is_required() && !self.contract.optional_capabilities.contains(&capability)
        }) {
            return Err(NegotiationError::Contract(
                ContractError::OfferMethodWithoutCapability {
                    method: *method,
                    capability: method.capability(),
                },
            ));
        }
        let contract_limits = [
            (
                "max_frame_bytes",
                self.contract.max_frame_bytes,
                limits::CANONICAL_MAX_FRAME_BYTES,
            ),
            ("max_tools", self.contract.max_tools, limits::MAX_TOOLS),
        ];
        if let Some((name, value, _)) = contract_limits
            .into_iter()
            .find(|(_, value, max)| !(1..=*max).contains(value))
        {
            return Err(NegotiationError::Contract(
                ContractError::OfferInvalidLimit {
                    name,
                    value: value as u64,
                },
            ));
        }
        for &feature in &self.optional_features {
            if feature.is_required() {
                return Err(NegotiationError::OfferRequiredFeature { feature });
            }
            if !feature.available_on(api) {
                return Err(NegotiationError::OfferFeatureUnavailable { feature, api });
            }
            let declared = match feature {
                Feature::Secrets => !manifest.capabilities.secrets.is_empty(),
                Feature::ProviderCredentials => manifest.capabilities.provider_credentials,
                _ => true,
            };
            if !declared {
                return Err(NegotiationError::OfferFeatureUndeclared { feature });
            }
            if let Some(&requires) = feature.requires().iter().find(|r| !self.offers(**r)) {
                return Err(NegotiationError::OfferFeatureRequires { feature, requires });
            }
        }
        let bulk_offered = self.optional_features.contains(&Feature::BulkObjectsV1);
        match (&self.bulk_objects, bulk_offered) {
            (None, false) => Ok(()),
            (Some(storage), true) => storage.check(),
            _ => Err(NegotiationError::OfferBulkStorageMismatch),
        }
    }
}

/// The storage context offered with `bulk_objects_v1` (section 2.27).
///
/// It is sent as `protocol.bulk_objects_v1`:
/// `{"profile": "local-file.v1", "transfer_directory": ..., "limits": {...}}`. The
/// reference names the profile, the absolute host-owned transfer directory and the
/// limit names; the member names `transfer_directory` and `limits` follow its wording.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BulkObjectsOffer {
    /// The absolute host-owned transfer directory.
    pub transfer_directory: PathBuf,
    /// The finite bulk limits.
    pub limits: BulkLimits,
}

impl BulkObjectsOffer {
    /// The only bulk profile the reference defines.
    pub const PROFILE: &'static str = "local-file.v1";

    fn check(&self) -> Result<(), NegotiationError> {
        path_string(
            &self.transfer_directory,
            "protocol.bulk_objects_v1.transfer_directory",
        )?;
        self.limits.check()
    }
}

/// The finite limits of bulk storage (section 2.27), serialized in this member order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct BulkLimits {
    /// Largest object, in bytes.
    pub object_bytes: u64,
    /// Bytes per owner, reservations included.
    pub owner_bytes: u64,
    /// Write tickets per process generation.
    pub write_tickets_per_generation: u64,
    /// Read leases per process generation.
    pub read_leases_per_generation: u64,
    /// Blobs per owner.
    pub blobs_per_owner: u64,
}

impl Default for BulkLimits {
    /// The reference's default limits.
    fn default() -> BulkLimits {
        BulkLimits {
            object_bytes: limits::BULK_OBJECT_BYTES,
            owner_bytes: limits::BULK_OWNER_BYTES,
            write_tickets_per_generation: limits::BULK_WRITE_TICKETS_PER_GENERATION,
            read_leases_per_generation: limits::BULK_READ_LEASES_PER_GENERATION,
            blobs_per_owner: limits::BULK_BLOBS_PER_OWNER,
        }
    }
}

impl BulkLimits {
    /// Checks that every limit is at least 1 and at most 2^53 - 1.
    pub fn check(&self) -> Result<(), NegotiationError> {
        let named = [
            ("object_bytes", self.object_bytes),
            ("owner_bytes", self.owner_bytes),
            (
                "write_tickets_per_generation",
                self.write_tickets_per_generation,
            ),
            (
                "read_leases_per_generation",
                self.read_leases_per_generation,
            ),
            ("blobs_per_owner", self.blobs_per_owner),
        ];
        match named
            .into_iter()
            .find(|(_, value)| !(1..=limits::MAX_SAFE_INTEGER).contains(value))
        {
            Some((name, value)) => Err(NegotiationError::OfferInvalidBulkLimit { name, value }),
            None => Ok(()),
        }
    }
}
