//! Response validation: good responses, top-level rules, features and limits.

use super::*;

// Good responses.
// ---------------------------------------------------------------------------

#[test]
fn reference_v0_1_response_is_accepted() {
    let located = located(ApiVersion::V0_1);
    let negotiated = accept(
        &located,
        &default_offer(&located),
        &example_result(REFERENCE_V0_1_RESPONSE),
    );
    assert_eq!(negotiated.api_version, ApiVersion::V0_1);
    assert!(negotiated.features.is_empty());
    assert_eq!(negotiated.max_concurrent_requests, 64);
    assert!(negotiated.lifecycle_subscriptions.is_empty());
    assert_eq!(negotiated.tools.len(), 1);
    let tool = &negotiated.tools[0];
    assert_eq!(tool.name, "hello_world");
    assert_eq!(
        tool.description,
        "Greet someone from an executable extension"
    );
    assert_eq!(tool.parameters["required"], json!(["name"]));
    assert_eq!(tool.output_schema, None);
    assert_eq!(negotiated.commands.len(), 1);
    assert_eq!(negotiated.commands[0].name, "hello");
    assert_eq!(
        negotiated.commands[0].usage.as_deref(),
        Some("/hello [name]")
    );
}

#[test]
fn reference_v0_2_response_protocol_is_accepted() {
    let located = located(ApiVersion::V0_2);
    let mut result = example_result(REFERENCE_V0_1_RESPONSE);
    result["api_version"] = json!("0.2");
    let protocol: Value = serde_json::from_str(REFERENCE_V0_2_RESPONSE_PROTOCOL).unwrap();
    result["protocol"] = protocol["protocol"].clone();
    let negotiated = accept(&located, &default_offer(&located), &result);
    let expected: FeatureSet = [
        Feature::RequestCancellation,
        Feature::ContentParts,
        Feature::RequestProgress,
        Feature::Artifacts,
        Feature::LifecycleEvents,
        Feature::DynamicTools,
        Feature::RuntimeCommands,
    ]
    .into_iter()
    .collect();
    assert_eq!(negotiated.features, expected);
    assert!(!negotiated.features.contains(Feature::PolicyIntents));
    assert_eq!(negotiated.max_concurrent_requests, 4);
    assert_eq!(
        negotiated.lifecycle_subscriptions,
        LifecycleEvent::ALL.to_vec()
    );
    assert_eq!(
        serde_json::to_string(&negotiated.features).unwrap(),
        r#"["request_cancellation","content_parts","request_progress","artifacts","lifecycle_events","dynamic_tools","runtime_commands"]"#
    );
}

#[test]
fn unknown_members_are_ignored() {
    let mut result = response(ApiVersion::V0_2, &[]);
    result["future_member"] = json!({"anything": true});
    result["protocol"]["extra"] = json!(1);
    result["protocol"]["limits"] = json!({"max_concurrent_requests": 2, "other": 9});
    result["tools"][0]["annotations"] = json!({"read_only": true});
    result["commands"][0]["aliases"] = json!(["hi"]);
    let located = located(ApiVersion::V0_2);
    let negotiated = accept(&located, &default_offer(&located), &result);
    assert_eq!(negotiated.max_concurrent_requests, 2);
}

#[test]
fn conditional_features_are_accepted_when_offered() {
    let mut located = located(ApiVersion::V0_4);
    located.manifest.capabilities.secrets = vec!["token".to_owned()];
    located.manifest.capabilities.provider_credentials = true;
    let offer = default_offer(&located)
        .with_feature(Feature::Approvals)
        .with_feature(Feature::Secrets)
        .with_feature(Feature::AgentSessions)
        .with_feature(Feature::AgentModelSelectionV1)
        .with_feature(Feature::AgentSessionEventsV1)
        .with_feature(Feature::AgentSessionLifetimeV1)
        .with_feature(Feature::SessionControlV1)
        .with_feature(Feature::SessionCompactionV1)
        .with_feature(Feature::Autocomplete)
        .with_feature(Feature::AutocompleteEditV1);
    let selected = [
        "policy_intents",
        "approvals",
        "secrets",
        "provider_credentials",
        "agent_sessions",
        "agent_model_selection_v1",
        "agent_session_events_v1",
        "agent_session_lifetime_v1",
        "session_control_v1",
        "session_compaction_v1",
        "autocomplete",
        "autocomplete_edit_v1",
    ];
    let negotiated = accept(&located, &offer, &response(ApiVersion::V0_4, &selected));
    assert_eq!(negotiated.features.len(), selected.len() + 2);
    for name in selected {
        assert!(negotiated.features.contains(Feature::parse(name).unwrap()));
    }
}

// ---------------------------------------------------------------------------
// Top-level rules.
// ---------------------------------------------------------------------------

#[test]
fn result_must_be_an_object() {
    assert_eq!(
        reject_default(ApiVersion::V0_1, &json!([1])),
        NegotiationError::WrongType {
            field: "result".to_owned(),
            expected: "an object"
        }
    );
}

#[test]
fn api_version_must_match_the_manifest() {
    let mut result = example_result(REFERENCE_V0_1_RESPONSE);
    result["api_version"] = json!("0.2");
    assert_eq!(
        reject_default(ApiVersion::V0_1, &result),
        NegotiationError::ApiVersionMismatch {
            expected: ApiVersion::V0_1,
            got: "0.2".to_owned()
        }
    );
    result["api_version"] = json!(0.1);
    assert_eq!(
        reject_default(ApiVersion::V0_1, &result),
        NegotiationError::WrongType {
            field: "api_version".to_owned(),
            expected: "a string"
        }
    );
    result.as_object_mut().unwrap().remove("api_version");
    assert_eq!(
        reject_default(ApiVersion::V0_1, &result),
        NegotiationError::MissingMember {
            field: "api_version".to_owned()
        }
    );
}

#[test]
fn v0_1_must_omit_protocol() {
    let mut result = example_result(REFERENCE_V0_1_RESPONSE);
    result["protocol"] = json!(null);
    let err = reject_default(ApiVersion::V0_1, &result);
    assert_eq!(err, NegotiationError::ProtocolMemberForbidden);
    assert_eq!(err.code(), "protocol_member_forbidden");
}

#[test]
fn v0_2_and_v0_4_must_have_protocol() {
    for api in [ApiVersion::V0_2, ApiVersion::V0_4] {
        let mut result = response(api, &[]);
        result.as_object_mut().unwrap().remove("protocol");
        assert_eq!(
            reject_default(api, &result),
            NegotiationError::ProtocolMemberMissing
        );
        result["protocol"] = json!(null);
        assert_eq!(
            reject_default(api, &result),
            NegotiationError::WrongType {
                field: "protocol".to_owned(),
                expected: "an object"
            }
        );
    }
}

#[test]
fn protocol_version_must_echo_the_request() {
    let mut result = response(ApiVersion::V0_4, &[]);
    result["protocol"]["version"] = json!("0.2");
    assert_eq!(
        reject_default(ApiVersion::V0_4, &result),
        NegotiationError::ProtocolVersionMismatch {
            expected: "0.4",
            got: "0.2".to_owned()
        }
    );
    result["protocol"]
        .as_object_mut()
        .unwrap()
        .remove("version");
    assert_eq!(
        reject_default(ApiVersion::V0_4, &result),
        NegotiationError::MissingMember {
            field: "protocol.version".to_owned()
        }
    );
}

// ---------------------------------------------------------------------------
// Features.
// ---------------------------------------------------------------------------

#[test]
fn required_features_must_be_selected() {
    let mut result = response(ApiVersion::V0_2, &[]);
    result["protocol"]["features"] = json!(["request_cancellation", "request_progress"]);
    assert_eq!(
        reject_default(ApiVersion::V0_2, &result),
        NegotiationError::MissingRequiredFeature {
            feature: Feature::ContentParts
        }
    );
}

#[test]
fn unknown_features_reject() {
    let result = response(ApiVersion::V0_2, &["telepathy"]);
    let err = reject_default(ApiVersion::V0_2, &result);
    assert_eq!(
        err,
        NegotiationError::UnknownFeature {
            name: "telepathy".to_owned()
        }
    );
    // Names are exact: no case folding.
    let result = response(ApiVersion::V0_2, &["Artifacts"]);
    assert_eq!(err.code(), reject_default(ApiVersion::V0_2, &result).code());
}

#[test]
fn duplicate_features_reject() {
    let result = response(ApiVersion::V0_2, &["artifacts", "artifacts"]);
    assert_eq!(
        reject_default(ApiVersion::V0_2, &result),
        NegotiationError::DuplicateFeature {
            feature: Feature::Artifacts
        }
    );
    let result = response(ApiVersion::V0_2, &["content_parts"]);
    assert_eq!(
        reject_default(ApiVersion::V0_2, &result),
        NegotiationError::DuplicateFeature {
            feature: Feature::ContentParts
        }
    );
}

#[test]
fn features_must_have_been_offered() {
    for (api, name, feature) in [
        (ApiVersion::V0_2, "approvals", Feature::Approvals),
        (ApiVersion::V0_2, "secrets", Feature::Secrets),
        (ApiVersion::V0_2, "agent_sessions", Feature::AgentSessions),
        // provider_credentials is never offered without the manifest declaration.
        (
            ApiVersion::V0_2,
            "provider_credentials",
            Feature::ProviderCredentials,
        ),
        // API 0.4 features cannot be negotiated on 0.2.
        (
            ApiVersion::V0_2,
            "tool_prompt_metadata_v1",
            Feature::ToolPromptMetadataV1,
        ),
        (
            ApiVersion::V0_4,
            "tool_composition_v1",
            Feature::ToolCompositionV1,
        ),
    ] {
        let result = response(api, &[name]);
        assert_eq!(
            reject_default(api, &result),
            NegotiationError::FeatureNotOffered { feature },
            "{name}"
        );
    }
}

#[test]
fn feature_dependencies_are_enforced() {
    let located = located(ApiVersion::V0_4);
    let offer = default_offer(&located)
        .with_feature(Feature::Approvals)
        .with_feature(Feature::SessionControlV1)
        .with_feature(Feature::SessionCompactionV1)
        .with_feature(Feature::AgentSessions)
        .with_feature(Feature::AgentModelSelectionV1)
        .with_feature(Feature::AgentSessionEventsV1)
        .with_feature(Feature::AgentSessionLifetimeV1)
        .with_feature(Feature::Autocomplete)
        .with_feature(Feature::AutocompleteEditV1);
    for (name, feature, requires) in [
        ("approvals", Feature::Approvals, Feature::PolicyIntents),
        (
            "session_compaction_v1",
            Feature::SessionCompactionV1,
            Feature::SessionControlV1,
        ),
        (
            "agent_model_selection_v1",
            Feature::AgentModelSelectionV1,
            Feature::AgentSessions,
        ),
        (
            "agent_session_events_v1",
            Feature::AgentSessionEventsV1,
            Feature::AgentSessions,
        ),
        (
            "agent_session_lifetime_v1",
            Feature::AgentSessionLifetimeV1,
            Feature::AgentSessions,
        ),
        (
            "autocomplete_edit_v1",
            Feature::AutocompleteEditV1,
            Feature::Autocomplete,
        ),
    ] {
        let result = response(ApiVersion::V0_4, &[name]);
        assert_eq!(
            reject(&located, &offer, &result),
            NegotiationError::FeatureRequires { feature, requires }
        );
    }
}

#[test]
fn features_must_be_an_array_of_strings() {
    let mut result = response(ApiVersion::V0_2, &[]);
    result["protocol"]["features"] = json!(["request_cancellation", "content_parts", 7]);
    assert_eq!(
        reject_default(ApiVersion::V0_2, &result),
        NegotiationError::WrongType {
            field: "protocol.features[2]".to_owned(),
            expected: "a string"
        }
    );
    result["protocol"]
        .as_object_mut()
        .unwrap()
        .remove("features");
    assert_eq!(
        reject_default(ApiVersion::V0_2, &result),
        NegotiationError::MissingMember {
            field: "protocol.features".to_owned()
        }
    );
}

// ---------------------------------------------------------------------------
// Limits.
// ---------------------------------------------------------------------------

fn negotiated_concurrency(offer_max: u32, limits: Option<Value>) -> Result<u32, NegotiationError> {
    let located = located(ApiVersion::V0_2);
    let offer = default_offer(&located).with_max_concurrent_requests(offer_max);
    let mut result = response(ApiVersion::V0_2, &[]);
    if let Some(limits) = limits {
        result["protocol"]["limits"] = limits;
    }
    validate_initialize_result(&located, &offer, &result).map(|n| n.max_concurrent_requests)
}

#[test]
fn concurrency_is_capped_by_the_offer_and_defaults_to_it() {
    assert_eq!(negotiated_concurrency(64, None), Ok(64));
    assert_eq!(negotiated_concurrency(16, Some(json!({}))), Ok(16));
    assert_eq!(
        negotiated_concurrency(16, Some(json!({"max_concurrent_requests": null}))),
        Ok(16)
    );
    assert_eq!(
        negotiated_concurrency(64, Some(json!({"max_concurrent_requests": 1}))),
        Ok(1)
    );
    assert_eq!(
        negotiated_concurrency(8, Some(json!({"max_concurrent_requests": 16}))),
        Ok(8)
    );
    assert_eq!(
        negotiated_concurrency(64, Some(json!({"max_concurrent_requests": u64::MAX}))),
        Ok(64)
    );
}

#[test]
fn concurrency_must_be_a_positive_integer() {
    for bad in [
        json!(0),
        json!(-1),
        json!(1.5),
        json!(4.0),
        json!("4"),
        json!(true),
    ] {
        assert_eq!(
            negotiated_concurrency(64, Some(json!({"max_concurrent_requests": bad}))),
            Err(NegotiationError::InvalidConcurrency {
                value: bad.to_string()
            })
        );
    }
    assert_eq!(
        negotiated_concurrency(64, Some(json!(4))),
        Err(NegotiationError::WrongType {
            field: "protocol.limits".to_owned(),
            expected: "an object"
        })
    );
}

// ---------------------------------------------------------------------------
