//! What a generation is offered and bound with for the runtime-served features, and
//! what its service calls carry for them.

use crate::negotiation::Feature;

/// The services `manifest`'s generation is bound with once the runtime-served features
/// had their say, and the bound features it must not be offered; `own` are the
/// bindings of this extension alone, if it has any.
///
/// `agent_sessions` is conditional (section 2.13): offered to an extension it was bound
/// for, or that the embedder allowed to use the host-wide binding; the features that
/// require it go with it. With it go its companions: those the embedder did not bind,
/// the runtime serves itself.
pub(in crate::dispatcher) fn bind_runtime_services(
    shared: &crate::dispatcher::Shared,
    manifest: &crate::manifest::Manifest,
    services: crate::services::bound::ServiceBindings,
    own: Option<&crate::services::bound::ServiceBindings>,
) -> (crate::services::bound::ServiceBindings, Vec<Feature>) {
    use crate::services::bound::ServiceKind;
    let bound_for_it = own.is_some_and(|own| own.is_bound(ServiceKind::AgentSessions));
    if bound_for_it || shared.features.agent_delegates.contains(&manifest.name) {
        let services =
            crate::features::agents::defaults::with_agent_defaults(services, &shared.host_context);
        (services, Vec::new())
    } else {
        (services, vec![Feature::AgentSessions])
    }
}

/// `offer` with the features the runtime serves itself: on API 0.4 only, to the
/// extensions the embedder enabled them for (sections 2.25-2.27); bulk objects only
/// with configured storage.
pub(in crate::dispatcher) fn offer_runtime_features(
    shared: &crate::dispatcher::Shared,
    manifest: &crate::manifest::Manifest,
    mut offer: crate::negotiation::InitializeOffer,
) -> crate::negotiation::InitializeOffer {
    if manifest.api_version != crate::manifest::ApiVersion::V0_4 {
        return offer;
    }
    let offered = shared.features.runtime_offers.offered_to(&manifest.name);
    for feature in crate::features::offers::RuntimeOffers::FEATURES {
        if offered.contains(feature) && feature != Feature::BulkObjectsV1 {
            offer = offer.with_feature(feature);
        }
    }
    if let (Some(store), true) = (
        shared.features.bulk.get(),
        offered.contains(Feature::BulkObjectsV1),
    ) {
        offer = offer.with_bulk_objects(store.offer());
    }
    offer
}

/// What a service call carries for the runtime-served features: the report handle of
/// the agent guard, for every kind it decides.
pub(in crate::dispatcher) type CallReports = Option<crate::services::bound::AgentReports>;

/// The report handle a service call of `method` carries: for every kind the
/// `agent_sessions` guard decides (the sessions and their companions), none for the
/// others.
pub(in crate::dispatcher) fn call_reports(
    shared: &crate::dispatcher::Shared,
    guards: &crate::dispatcher::guards::KindGuards,
    method: crate::services::bound::ServiceMethod,
) -> CallReports {
    use crate::services::bound::{AgentReports, ServiceKind};
    (guards.decided_by(method.kind()) == ServiceKind::AgentSessions)
        .then(|| AgentReports(shared.features.agents.clone()))
}

/// The feature that brings the retained-owner contract: an explicit `resource_owner`
/// may outlive its parent (section 2).
pub(in crate::dispatcher) const RETAINED_OWNER: Feature = Feature::AgentSessionLifetimeV1;

/// True when `features` bring the retained-owner contract ([`RETAINED_OWNER`]).
pub(in crate::dispatcher) fn retains_owner(features: &crate::negotiation::FeatureSet) -> bool {
    features.contains(RETAINED_OWNER)
}
