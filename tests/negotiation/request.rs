//! The `initialize` request the host builds (section 1.1), per API version.

use super::*;

// ---------------------------------------------------------------------------
// The request.
// ---------------------------------------------------------------------------

#[test]
fn v0_1_request_matches_the_reference_example_byte_for_byte() {
    let located = located(ApiVersion::V0_1);
    let text = params_text(&located, &default_offer(&located));
    assert_eq!(text, example_member(REFERENCE_V0_1_REQUEST, "params"));
    assert!(!text.contains("protocol"));
}

#[test]
fn v0_1_request_encodes_into_the_reference_envelope() {
    let located = located(ApiVersion::V0_1);
    let params = initialize_params(
        &located,
        workspace(),
        &example_host(),
        &default_offer(&located),
    )
    .unwrap();
    let frame = octet_host::wire::encode_request(
        &octet_host::wire::RequestId::Number(1),
        "initialize",
        Some(&params),
        octet_host::limits::MAX_FRAME_BYTES,
    )
    .unwrap();
    let mut expected = minify(REFERENCE_V0_1_REQUEST).into_bytes();
    expected.push(b'\n');
    assert_eq!(
        String::from_utf8(frame).unwrap(),
        String::from_utf8(expected).unwrap()
    );
}

/// The 0.1 example with `api_version` replaced, `presentation`/`menu` after
/// `confirmations`, and `protocol` appended: the exact expected 0.2/0.4 text.
fn expected_feature_wire_params(api: &str, protocol: &str) -> String {
    let base = example_member(REFERENCE_V0_1_REQUEST, "params")
        .replacen(
            "\"api_version\":\"0.1\"",
            &format!("\"api_version\":\"{api}\""),
            1,
        )
        .replacen(
            "\"confirmations\":false}",
            "\"confirmations\":false,\"presentation\":false,\"menu\":false}",
            1,
        );
    format!("{},\"protocol\":{protocol}}}", &base[..base.len() - 1])
}

/// The reference's example `protocol` member, plus `progress_decoration` right after
/// `request_progress`: the example offers no decoration, but this host offers it
/// wherever it offers progress, so upstream SDKs' decoration events can reach the
/// embedder (section 2.6).
fn reference_protocol() -> String {
    example_member(REFERENCE_V0_2_REQUEST_PROTOCOL, "protocol").replacen(
        "\"request_progress\",",
        "\"request_progress\",\"progress_decoration\",",
        1,
    )
}

#[test]
fn v0_2_request_adds_presentation_menu_and_the_reference_protocol_member() {
    let located = located(ApiVersion::V0_2);
    let text = params_text(&located, &default_offer(&located));
    let protocol = reference_protocol();
    assert_eq!(text, expected_feature_wire_params("0.2", &protocol));
}

#[test]
fn v0_4_request_offers_prompt_metadata_and_protocol_version_0_4() {
    let located = located(ApiVersion::V0_4);
    let text = params_text(&located, &default_offer(&located));
    let protocol = reference_protocol()
        .replacen("\"version\":\"0.2\"", "\"version\":\"0.4\"", 1)
        .replacen(
            "\"runtime_commands\"]",
            "\"runtime_commands\",\"tool_prompt_metadata_v1\"]",
            1,
        );
    assert_eq!(text, expected_feature_wire_params("0.4", &protocol));
    assert_eq!(protocol_version(ApiVersion::V0_4), Some("0.4"));
    assert_eq!(protocol_version(ApiVersion::V0_1), None);
}

#[test]
fn request_exposes_its_versions() {
    for (api, protocol) in [
        (ApiVersion::V0_1, None),
        (ApiVersion::V0_2, Some("0.2")),
        (ApiVersion::V0_4, Some("0.4")),
    ] {
        let located = located(api);
        let params = initialize_params(
            &located,
            workspace(),
            &example_host(),
            &default_offer(&located),
        )
        .unwrap();
        assert_eq!(params.api_version(), api.as_str());
        assert_eq!(params.protocol_version(), protocol);
    }
}

#[test]
fn capabilities_carry_secrets_and_provider_credentials_only_when_declared() {
    let mut located = located(ApiVersion::V0_2);
    located.manifest.capabilities.environment = vec!["SSH_AUTH_SOCK".to_owned()];
    let text = params_text(&located, &default_offer(&located));
    assert!(
        text.contains(r#""capabilities":{"filesystem":"none","process":false,"network":false},"#)
    );
    assert!(!text.contains("SSH_AUTH_SOCK"));
    assert!(!text.contains("environment"));

    located.manifest.capabilities.secrets = vec!["browser.api_token".to_owned()];
    located.manifest.capabilities.provider_credentials = true;
    let offer = default_offer(&located);
    assert_eq!(
        offer.optional_features().last(),
        Some(&Feature::ProviderCredentials)
    );
    let text = params_text(&located, &offer);
    assert!(text.contains(
        r#""capabilities":{"filesystem":"none","process":false,"network":false,"secrets":["browser.api_token"],"provider_credentials":true},"#
    ));
    assert!(text.contains(r#""runtime_commands","provider_credentials"],"#));
}

#[test]
fn v0_4_default_offer_puts_provider_credentials_after_prompt_metadata() {
    let mut located = located(ApiVersion::V0_4);
    located.manifest.capabilities.provider_credentials = true;
    let offer = default_offer(&located);
    assert_eq!(
        offer.optional_features(),
        &[
            Feature::RequestProgress,
            Feature::ProgressDecoration,
            Feature::Artifacts,
            Feature::LifecycleEvents,
            Feature::PolicyIntents,
            Feature::DynamicTools,
            Feature::RuntimeCommands,
            Feature::ToolPromptMetadataV1,
            Feature::ProviderCredentials,
        ]
    );
    assert_eq!(offer.max_concurrent_requests(), 64);
}

#[test]
fn conditional_features_are_appended_in_call_order_once() {
    let located = located(ApiVersion::V0_4);
    let offer = default_offer(&located)
        .with_feature(Feature::AgentSessions)
        .with_feature(Feature::AgentModelSelectionV1)
        .with_feature(Feature::AgentSessions)
        .with_max_concurrent_requests(8);
    let text = params_text(&located, &offer);
    assert!(text.contains(
        r#""tool_prompt_metadata_v1","agent_sessions","agent_model_selection_v1"],"limits":{"max_concurrent_requests":8}}"#
    ));
}

#[test]
fn host_context_serializes_like_the_reference() {
    assert_eq!(
        serde_json::to_string(&HostContext::default()).unwrap(),
        r#"{"session_id":null,"session_name":null,"model":null,"reasoning":null,"active_skills":[]}"#
    );
    let host = HostContext {
        session_id: Some("abc123".to_owned()),
        reasoning: Some(json!("high")),
        active_skills: vec![json!({"name": "review"})],
        ..example_host()
    };
    assert_eq!(
        serde_json::to_string(&host).unwrap(),
        r#"{"session_id":"abc123","session_name":null,"model":"claude-sonnet-4-6","reasoning":"high","active_skills":[{"name":"review"}]}"#
    );
}

#[test]
fn v0_2_request_sends_presentation_and_menu_values() {
    let mut located = located(ApiVersion::V0_2);
    located.manifest.contributes.presentation = true;
    located.manifest.contributes.menu = true;
    let text = params_text(&located, &default_offer(&located));
    assert!(text.contains(r#""confirmations":false,"presentation":true,"menu":true}"#));
}

#[test]
fn resource_refs_offer_advertises_its_limits() {
    let located = located(ApiVersion::V0_4);
    let offer = default_offer(&located).with_feature(Feature::ResourceRefsV1);
    let text = params_text(&located, &offer);
    assert!(text.contains(
        r#""limits":{"max_concurrent_requests":64,"resource_refs_v1":{"max_records":256,"max_registrations_per_parent":32}}}"#
    ));
}

#[test]
fn bulk_objects_offer_carries_its_storage_context() {
    let located = located(ApiVersion::V0_4);
    let offer = default_offer(&located).with_bulk_objects(BulkObjectsOffer {
        transfer_directory: PathBuf::from("/tmp/octet-bulk"),
        limits: BulkLimits::default(),
    });
    assert!(offer.optional_features().contains(&Feature::BulkObjectsV1));
    let text = params_text(&located, &offer);
    assert!(text.ends_with(
        r#""limits":{"max_concurrent_requests":64},"bulk_objects_v1":{"profile":"local-file.v1","transfer_directory":"/tmp/octet-bulk","limits":{"object_bytes":268435456,"owner_bytes":536870912,"write_tickets_per_generation":8,"read_leases_per_generation":32,"blobs_per_owner":256}}}}"#
    ));
}

#[test]
fn paths_must_be_absolute_utf8() {
    let located = located(ApiVersion::V0_1);
    let offer = default_offer(&located);
    let err =
        initialize_params(&located, Path::new("project"), &example_host(), &offer).unwrap_err();
    assert_eq!(
        err,
        NegotiationError::InvalidPath {
            field: "workspace",
            problem: PathProblem::NotAbsolute
        }
    );

    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let mut bad = located.clone();
        bad.manifest_path = PathBuf::from(std::ffi::OsStr::from_bytes(b"/tmp/\xff/extension.toml"));
        let err = initialize_params(&bad, workspace(), &example_host(), &offer).unwrap_err();
        assert_eq!(
            err,
            NegotiationError::InvalidPath {
                field: "extension.manifest_path",
                problem: PathProblem::NotUtf8
            }
        );
    }
}

// API 0.3 (the canonical wire and its contract) is tested in tests/api03.rs.
