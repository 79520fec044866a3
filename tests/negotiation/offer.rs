//! The host's offer: which features, limits and capabilities it may offer.

use super::*;

// ---------------------------------------------------------------------------
// The offer.
// ---------------------------------------------------------------------------

fn offer_error(located: &LocatedManifest, offer: &InitializeOffer) -> NegotiationError {
    let built = initialize_params(located, workspace(), &example_host(), offer).unwrap_err();
    // Validation checks the same offer before looking at the response.
    let validated = reject(located, offer, &json!({}));
    assert_eq!(built, validated);
    built
}

#[test]
fn offer_features_must_exist_on_the_api_version() {
    let v0_1 = located(ApiVersion::V0_1);
    assert!(default_offer(&v0_1).optional_features().is_empty());
    let offer = default_offer(&v0_1).with_feature(Feature::RequestProgress);
    assert_eq!(
        offer_error(&v0_1, &offer),
        NegotiationError::OfferFeatureUnavailable {
            feature: Feature::RequestProgress,
            api: ApiVersion::V0_1
        }
    );

    let v0_2 = located(ApiVersion::V0_2);
    for feature in [
        Feature::ToolPromptMetadataV1,
        Feature::ToolCompositionV1,
        Feature::SessionControlV1,
        Feature::AgentSessionEventsV1,
        Feature::AutocompleteEditV1,
        Feature::BulkObjectsV1,
    ] {
        let offer = default_offer(&v0_2).with_feature(feature);
        assert_eq!(
            offer_error(&v0_2, &offer),
            NegotiationError::OfferFeatureUnavailable {
                feature,
                api: ApiVersion::V0_2
            }
        );
    }
}

#[test]
fn offer_may_not_list_required_features_as_optional() {
    let located = located(ApiVersion::V0_2);
    let offer = default_offer(&located).with_feature(Feature::ContentParts);
    assert_eq!(
        offer_error(&located, &offer),
        NegotiationError::OfferRequiredFeature {
            feature: Feature::ContentParts
        }
    );
}

#[test]
fn offer_dependencies_must_be_offered() {
    let v0_2 = located(ApiVersion::V0_2);
    let offer = InitializeOffer::default().with_feature(Feature::Approvals);
    assert_eq!(
        offer_error(&v0_2, &offer),
        NegotiationError::OfferFeatureRequires {
            feature: Feature::Approvals,
            requires: Feature::PolicyIntents
        }
    );
    let v0_4 = located(ApiVersion::V0_4);
    for (feature, requires) in [
        (Feature::SessionCompactionV1, Feature::SessionControlV1),
        (Feature::AgentModelSelectionV1, Feature::AgentSessions),
        (Feature::AgentSessionEventsV1, Feature::AgentSessions),
        (Feature::AgentSessionLifetimeV1, Feature::AgentSessions),
        (Feature::AutocompleteEditV1, Feature::Autocomplete),
    ] {
        let offer = default_offer(&v0_4).with_feature(feature);
        assert_eq!(
            offer_error(&v0_4, &offer),
            NegotiationError::OfferFeatureRequires { feature, requires }
        );
    }
}

#[test]
fn offer_of_secrets_and_provider_credentials_needs_the_manifest_declaration() {
    let mut located = located(ApiVersion::V0_2);
    for feature in [Feature::Secrets, Feature::ProviderCredentials] {
        let offer = default_offer(&located).with_feature(feature);
        assert_eq!(
            offer_error(&located, &offer),
            NegotiationError::OfferFeatureUndeclared { feature }
        );
    }
    located.manifest.capabilities.secrets = vec!["token".to_owned()];
    let offer = default_offer(&located).with_feature(Feature::Secrets);
    initialize_params(&located, workspace(), &example_host(), &offer).unwrap();
}

#[test]
fn offer_concurrency_must_be_within_the_host_bound() {
    let located = located(ApiVersion::V0_2);
    for value in [0, octet_host::limits::MAX_CONCURRENT_REQUESTS + 1] {
        let offer = default_offer(&located).with_max_concurrent_requests(value);
        assert_eq!(
            offer_error(&located, &offer),
            NegotiationError::OfferInvalidConcurrency { value }
        );
    }
}

#[test]
fn offer_bulk_objects_needs_valid_storage() {
    let located = located(ApiVersion::V0_4);
    let offer = default_offer(&located).with_feature(Feature::BulkObjectsV1);
    assert_eq!(
        offer_error(&located, &offer),
        NegotiationError::OfferBulkStorageMismatch
    );
    let offer = default_offer(&located).with_bulk_objects(BulkObjectsOffer {
        transfer_directory: PathBuf::from("/tmp/bulk"),
        limits: BulkLimits {
            blobs_per_owner: 0,
            ..BulkLimits::default()
        },
    });
    assert_eq!(
        offer_error(&located, &offer),
        NegotiationError::OfferInvalidBulkLimit {
            name: "blobs_per_owner",
            value: 0
        }
    );
    let offer = default_offer(&located).with_bulk_objects(BulkObjectsOffer {
        transfer_directory: PathBuf::from("bulk"),
        limits: BulkLimits::default(),
    });
    assert_eq!(
        offer_error(&located, &offer),
        NegotiationError::InvalidPath {
            field: "protocol.bulk_objects_v1.transfer_directory",
            problem: PathProblem::NotAbsolute
        }
    );
}

// ---------------------------------------------------------------------------
