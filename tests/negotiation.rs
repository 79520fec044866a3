//! `initialize` request building and response validation (section 1.1).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use octet_host::manifest::{
    ApiVersion, Capabilities, Contributes, Entrypoint, LocatedManifest, Manifest, Source, UiSurface,
};
use octet_host::negotiation::{
    initialize_params, protocol_version, validate_initialize_result, BulkLimits, BulkObjectsOffer,
    CompositionMode, CompositionProblem, Feature, FeatureSet, HostContext, InitializeOffer,
    LifecycleEvent, LifecycleSubscriptionProblem, NameProblem, NegotiationError, PathProblem,
    PromptMetadataProblem,
};
use serde_json::{json, Value};

// ---------------------------------------------------------------------------
// Reference examples (section 1.1), copied verbatim.
// ---------------------------------------------------------------------------

const REFERENCE_V0_1_REQUEST: &str = r#"{
  "jsonrpc": "2.0",
  "id": 1,
  "method": "initialize",
  "params": {
    "api_version": "0.1",
    "octet_version": "0.8.0",
    "extension": {
      "name": "hello-world",
      "version": "0.1.0",
      "manifest_path": "/home/user/.octet/extensions/hello-world/extension.toml",
      "source": "global"
    },
    "workspace": "/home/user/project",
    "capabilities": {
      "filesystem": "none",
      "process": false,
      "network": false
    },
    "contributes": {
      "tools": ["hello_world"],
      "commands": ["hello"],
      "hooks": ["before_prompt", "after_response"],
      "ui": ["status"],
      "context": true,
      "tool_renderers": ["hello_world"],
      "notifications": true,
      "confirmations": false
    },
    "host": {
      "session_id": null,
      "session_name": null,
      "model": "claude-sonnet-4-6",
      "reasoning": null,
      "active_skills": []
    }
  }
}"#;

const REFERENCE_V0_1_RESPONSE: &str = r#"{
  "jsonrpc": "2.0",
  "id": 1,
  "result": {
    "api_version": "0.1",
    "tools": [
      {
        "name": "hello_world",
        "description": "Greet someone from an executable extension",
        "parameters": {
          "type": "object",
          "properties": {
            "name": { "type": "string" }
          },
          "required": ["name"],
          "additionalProperties": false
        }
      }
    ],
    "commands": [
      {
        "name": "hello",
        "description": "Show a greeting notification",
        "usage": "/hello [name]"
      }
    ]
  }
}"#;

const REFERENCE_V0_2_REQUEST_PROTOCOL: &str = r#"{
  "protocol": {
    "version": "0.2",
    "required_features": ["request_cancellation", "content_parts"],
    "optional_features": [
      "request_progress",
      "artifacts",
      "lifecycle_events",
      "policy_intents",
      "dynamic_tools",
      "runtime_commands"
    ],
    "limits": {"max_concurrent_requests": 64}
  }
}"#;

const REFERENCE_V0_2_RESPONSE_PROTOCOL: &str = r#"{
  "protocol": {
    "version": "0.2",
    "features": [
      "request_cancellation",
      "content_parts",
      "request_progress",
      "artifacts",
      "lifecycle_events",
      "dynamic_tools",
      "runtime_commands"
    ],
    "limits": {"max_concurrent_requests": 4},
    "lifecycle_events": [
      "session/started",
      "session/settled",
      "turn/started",
      "turn/settled",
      "tool/started",
      "tool/settled"
    ]
  }
}"#;

/// Removes insignificant whitespace from JSON text, keeping member order and string
/// contents exactly.
fn minify(text: &str) -> String {
    let mut out = String::new();
    let (mut in_string, mut escaped) = (false, false);
    for c in text.chars() {
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
            out.push(c);
        } else if !c.is_whitespace() {
            out.push(c);
        }
    }
    out
}

/// The minified text of the member `key` of the example object, found textually so that
/// member order is kept.
fn example_member(text: &str, key: &str) -> String {
    let text = minify(text);
    let start = text.find(&format!("\"{key}\":")).expect("member present") + key.len() + 3;
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (i, c) in text[start..].char_indices() {
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '{' | '[' => depth += 1,
            '}' | ']' => {
                depth -= 1;
                if depth == 0 {
                    return text[start..=start + i].to_owned();
                }
            }
            _ => {}
        }
    }
    panic!("unterminated member {key}");
}

fn example_result(text: &str) -> Value {
    let envelope: Value = serde_json::from_str(text).unwrap();
    envelope["result"].clone()
}

// ---------------------------------------------------------------------------
// Fixtures.
// ---------------------------------------------------------------------------

/// The reference example's `hello-world` extension, selecting `api`.
fn located(api: ApiVersion) -> LocatedManifest {
    LocatedManifest {
        manifest: Manifest {
            name: "hello-world".to_owned(),
            version: semver::Version::new(0, 1, 0),
            api_version: api,
            requires_octet: None,
            description: None,
            entrypoint: Entrypoint {
                command: "hello-world".to_owned(),
                args: Vec::new(),
                env: BTreeMap::new(),
            },
            capabilities: Capabilities::default(),
            contributes: Contributes {
                tools: vec!["hello_world".to_owned()],
                commands: vec!["hello".to_owned()],
                tool_renderers: vec!["hello_world".to_owned()],
                hooks: vec!["before_prompt".to_owned(), "after_response".to_owned()],
                ui: vec![UiSurface::Status],
                context: true,
                notifications: true,
                confirmations: false,
                presentation: false,
                menu: false,
            },
        },
        manifest_path: PathBuf::from("/home/user/.octet/extensions/hello-world/extension.toml"),
        dir: PathBuf::from("/home/user/.octet/extensions/hello-world"),
        source: Source::Global,
    }
}

fn example_host() -> HostContext {
    HostContext {
        model: Some("claude-sonnet-4-6".to_owned()),
        ..HostContext::default()
    }
}

fn workspace() -> &'static Path {
    Path::new("/home/user/project")
}

fn default_offer(located: &LocatedManifest) -> InitializeOffer {
    InitializeOffer::default_for(located.manifest.api_version, &located.manifest)
}

fn params_text(located: &LocatedManifest, offer: &InitializeOffer) -> String {
    let params = initialize_params(located, workspace(), &example_host(), offer).unwrap();
    serde_json::to_string(&params).unwrap()
}

fn hello_tool() -> Value {
    json!({
        "name": "hello_world",
        "description": "Greet someone",
        "parameters": {"type": "object", "properties": {}}
    })
}

fn hello_command() -> Value {
    json!({"name": "hello", "description": "Show a greeting"})
}

/// A valid feature-negotiated response for `api` selecting the required features plus
/// `extra`.
fn response(api: ApiVersion, extra: &[&str]) -> Value {
    let mut features = vec!["request_cancellation", "content_parts"];
    features.extend_from_slice(extra);
    json!({
        "api_version": api.as_str(),
        "tools": [hello_tool()],
        "commands": [hello_command()],
        "protocol": {
            "version": protocol_version(api).unwrap(),
            "features": features,
        }
    })
}

fn accept(
    located: &LocatedManifest,
    offer: &InitializeOffer,
    result: &Value,
) -> octet_host::negotiation::Negotiated {
    validate_initialize_result(located, offer, result).unwrap()
}

fn reject(located: &LocatedManifest, offer: &InitializeOffer, result: &Value) -> NegotiationError {
    validate_initialize_result(located, offer, result).unwrap_err()
}

/// Rejects `result` for the default offer of `api`.
fn reject_default(api: ApiVersion, result: &Value) -> NegotiationError {
    let located = located(api);
    reject(&located, &default_offer(&located), result)
}

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

#[test]
fn v0_2_request_adds_presentation_menu_and_the_reference_protocol_member() {
    let located = located(ApiVersion::V0_2);
    let text = params_text(&located, &default_offer(&located));
    let protocol = example_member(REFERENCE_V0_2_REQUEST_PROTOCOL, "protocol");
    assert_eq!(text, expected_feature_wire_params("0.2", &protocol));
}

#[test]
fn v0_4_request_offers_prompt_metadata_and_protocol_version_0_4() {
    let located = located(ApiVersion::V0_4);
    let text = params_text(&located, &default_offer(&located));
    let protocol = example_member(REFERENCE_V0_2_REQUEST_PROTOCOL, "protocol")
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
// Lifecycle subscriptions.
// ---------------------------------------------------------------------------

fn subscriptions(
    extra: &[&str],
    events: Option<Value>,
) -> Result<Vec<LifecycleEvent>, NegotiationError> {
    let located = located(ApiVersion::V0_2);
    let mut result = response(ApiVersion::V0_2, extra);
    if let Some(events) = events {
        result["protocol"]["lifecycle_events"] = events;
    }
    validate_initialize_result(&located, &default_offer(&located), &result)
        .map(|n| n.lifecycle_subscriptions)
}

#[test]
fn lifecycle_subscription_defaults_to_all_six_with_the_feature() {
    let all = Ok(LifecycleEvent::ALL.to_vec());
    assert_eq!(subscriptions(&["lifecycle_events"], None), all);
    assert_eq!(subscriptions(&["lifecycle_events"], Some(json!([]))), all);
    assert_eq!(subscriptions(&["lifecycle_events"], Some(json!(null))), all);
}

#[test]
fn lifecycle_subscription_subset_is_kept() {
    assert_eq!(
        subscriptions(
            &["lifecycle_events"],
            Some(json!(["turn/settled", "session/started"]))
        ),
        Ok(vec![
            LifecycleEvent::SessionStarted,
            LifecycleEvent::TurnSettled
        ])
    );
}

#[test]
fn lifecycle_subscription_rejects_unknown_and_duplicate_events() {
    assert_eq!(
        subscriptions(&["lifecycle_events"], Some(json!(["turn/finished"]))),
        Err(NegotiationError::InvalidLifecycleSubscription {
            problem: LifecycleSubscriptionProblem::UnknownEvent {
                name: "turn/finished".to_owned()
            }
        })
    );
    assert_eq!(
        subscriptions(
            &["lifecycle_events"],
            Some(json!(["tool/started", "tool/started"]))
        ),
        Err(NegotiationError::InvalidLifecycleSubscription {
            problem: LifecycleSubscriptionProblem::DuplicateEvent {
                event: LifecycleEvent::ToolStarted
            }
        })
    );
    assert_eq!(
        subscriptions(&["lifecycle_events"], Some(json!("turn/settled"))),
        Err(NegotiationError::WrongType {
            field: "protocol.lifecycle_events".to_owned(),
            expected: "an array of strings"
        })
    );
}

#[test]
fn lifecycle_subscription_without_the_feature() {
    assert_eq!(subscriptions(&[], None), Ok(Vec::new()));
    assert_eq!(subscriptions(&[], Some(json!([]))), Ok(Vec::new()));
    let err = subscriptions(&[], Some(json!(["turn/settled"]))).unwrap_err();
    assert_eq!(
        err,
        NegotiationError::InvalidLifecycleSubscription {
            problem: LifecycleSubscriptionProblem::WithoutFeature
        }
    );
    assert_eq!(err.code(), "invalid_lifecycle_subscription");
}

// ---------------------------------------------------------------------------
// Catalogs.
// ---------------------------------------------------------------------------

#[test]
fn tools_and_commands_are_required_arrays() {
    for member in ["tools", "commands"] {
        let mut result = response(ApiVersion::V0_2, &[]);
        result.as_object_mut().unwrap().remove(member);
        assert_eq!(
            reject_default(ApiVersion::V0_2, &result),
            NegotiationError::MissingMember {
                field: member.to_owned()
            }
        );
        result[member] = json!({});
        assert_eq!(
            reject_default(ApiVersion::V0_2, &result),
            NegotiationError::WrongType {
                field: member.to_owned(),
                expected: "an array"
            }
        );
    }
}

fn many(count: usize, make: impl Fn(usize) -> Value) -> Value {
    Value::Array((0..count).map(make).collect())
}

#[test]
fn at_most_256_tools() {
    let located = located(ApiVersion::V0_2);
    let tool = |i| json!({"name": format!("t{i}"), "description": "d", "parameters": {}});
    let mut result = response(ApiVersion::V0_2, &["dynamic_tools"]);
    result["tools"] = many(256, tool);
    assert_eq!(
        accept(&located, &default_offer(&located), &result)
            .tools
            .len(),
        256
    );
    result["tools"] = many(257, tool);
    assert_eq!(
        reject(&located, &default_offer(&located), &result),
        NegotiationError::TooManyTools { count: 257 }
    );
}

#[test]
fn at_most_256_commands() {
    let located = located(ApiVersion::V0_2);
    let command = |i| json!({"name": format!("c{i}"), "description": "d"});
    let mut result = response(ApiVersion::V0_2, &["runtime_commands"]);
    result["commands"] = many(256, command);
    assert_eq!(
        accept(&located, &default_offer(&located), &result)
            .commands
            .len(),
        256
    );
    result["commands"] = many(257, command);
    let err = reject(&located, &default_offer(&located), &result);
    assert_eq!(err, NegotiationError::TooManyCommands { count: 257 });
    assert_eq!(err.code(), "too_many_commands");
}

#[test]
fn duplicate_names_always_reject() {
    let mut result = response(ApiVersion::V0_2, &["dynamic_tools", "runtime_commands"]);
    result["tools"] = json!([hello_tool(), hello_tool()]);
    assert_eq!(
        reject_default(ApiVersion::V0_2, &result),
        NegotiationError::DuplicateTool {
            name: "hello_world".to_owned()
        }
    );
    let mut result = response(ApiVersion::V0_2, &["dynamic_tools", "runtime_commands"]);
    result["commands"] = json!([hello_command(), hello_command()]);
    assert_eq!(
        reject_default(ApiVersion::V0_2, &result),
        NegotiationError::DuplicateCommand {
            name: "hello".to_owned()
        }
    );
    // Also on API 0.1, where the set would otherwise match.
    let mut result = example_result(REFERENCE_V0_1_RESPONSE);
    let tool = result["tools"][0].clone();
    result["tools"] = json!([tool.clone(), tool]);
    assert_eq!(
        reject_default(ApiVersion::V0_1, &result),
        NegotiationError::DuplicateTool {
            name: "hello_world".to_owned()
        }
    );
}

#[test]
fn tool_names_must_equal_contributes_without_dynamic_tools() {
    let mut result = example_result(REFERENCE_V0_1_RESPONSE);
    result["tools"][0]["name"] = json!("hello_there");
    assert_eq!(
        reject_default(ApiVersion::V0_1, &result),
        NegotiationError::ToolSetMismatch {
            missing: vec!["hello_world".to_owned()],
            unexpected: vec!["hello_there".to_owned()]
        }
    );
    let mut result = response(ApiVersion::V0_2, &[]);
    result["tools"] = json!([]);
    assert_eq!(
        reject_default(ApiVersion::V0_2, &result),
        NegotiationError::ToolSetMismatch {
            missing: vec!["hello_world".to_owned()],
            unexpected: vec![]
        }
    );
    // With dynamic_tools the initialize list is authoritative epoch 0.
    let mut result = response(ApiVersion::V0_2, &["dynamic_tools"]);
    result["tools"] = json!([]);
    let located = located(ApiVersion::V0_2);
    assert!(accept(&located, &default_offer(&located), &result)
        .tools
        .is_empty());
}

#[test]
fn command_names_must_equal_contributes_without_runtime_commands() {
    let mut result = response(ApiVersion::V0_2, &["dynamic_tools"]);
    result["commands"] = json!([hello_command(), {"name": "bye", "description": "Leave"}]);
    assert_eq!(
        reject_default(ApiVersion::V0_2, &result),
        NegotiationError::CommandSetMismatch {
            missing: vec![],
            unexpected: vec!["bye".to_owned()]
        }
    );
    let mut result = response(ApiVersion::V0_2, &["runtime_commands"]);
    result["commands"] = json!([{"name": "bye", "description": "Leave"}]);
    let located = located(ApiVersion::V0_2);
    let negotiated = accept(&located, &default_offer(&located), &result);
    assert_eq!(negotiated.commands[0].name, "bye");
}

#[test]
fn descriptions_must_be_non_empty() {
    let mut result = response(ApiVersion::V0_2, &["dynamic_tools"]);
    result["tools"] = json!([hello_tool(), {"name": "b", "description": "", "parameters": {}}]);
    let err = reject_default(ApiVersion::V0_2, &result);
    assert_eq!(
        err,
        NegotiationError::EmptyDescription {
            field: "tools[1].description".to_owned()
        }
    );
    assert!(err.to_string().contains("tools[1].description"));

    let mut result = response(ApiVersion::V0_2, &[]);
    result["commands"][0]["description"] = json!("");
    assert_eq!(
        reject_default(ApiVersion::V0_2, &result),
        NegotiationError::EmptyDescription {
            field: "commands[0].description".to_owned()
        }
    );
    result["commands"][0]
        .as_object_mut()
        .unwrap()
        .remove("description");
    assert_eq!(
        reject_default(ApiVersion::V0_2, &result),
        NegotiationError::MissingMember {
            field: "commands[0].description".to_owned()
        }
    );
}

#[test]
fn definition_members_are_type_checked_with_their_path() {
    let mut result = response(ApiVersion::V0_2, &[]);
    result["tools"][0]["name"] = json!(5);
    assert_eq!(
        reject_default(ApiVersion::V0_2, &result),
        NegotiationError::WrongType {
            field: "tools[0].name".to_owned(),
            expected: "a string"
        }
    );
    let mut result = response(ApiVersion::V0_2, &[]);
    result["commands"][0]["usage"] = json!(["/hello"]);
    assert_eq!(
        reject_default(ApiVersion::V0_2, &result),
        NegotiationError::WrongType {
            field: "commands[0].usage".to_owned(),
            expected: "a string"
        }
    );
    let mut result = response(ApiVersion::V0_2, &[]);
    result["commands"][0] = json!("hello");
    assert_eq!(
        reject_default(ApiVersion::V0_2, &result),
        NegotiationError::WrongType {
            field: "commands[0]".to_owned(),
            expected: "an object"
        }
    );
    // A null usage is absent.
    let mut result = response(ApiVersion::V0_2, &[]);
    result["commands"][0]["usage"] = json!(null);
    let located = located(ApiVersion::V0_2);
    assert_eq!(
        accept(&located, &default_offer(&located), &result).commands[0].usage,
        None
    );
}

#[test]
fn names_must_be_valid_identifiers() {
    let mut result = response(ApiVersion::V0_2, &["runtime_commands"]);
    result["commands"][0]["name"] = json!("");
    assert_eq!(
        reject_default(ApiVersion::V0_2, &result),
        NegotiationError::InvalidName {
            field: "commands[0].name".to_owned(),
            problem: NameProblem::Empty
        }
    );
    let mut result = response(ApiVersion::V0_2, &["dynamic_tools"]);
    result["tools"][0]["name"] = json!("x".repeat(129));
    assert_eq!(
        reject_default(ApiVersion::V0_2, &result),
        NegotiationError::InvalidName {
            field: "tools[0].name".to_owned(),
            problem: NameProblem::TooLong { bytes: 129 }
        }
    );
}

#[test]
fn parameters_must_be_a_json_object() {
    for bad in [json!("object"), json!(null), json!([]), json!(true)] {
        let mut result = response(ApiVersion::V0_2, &[]);
        result["tools"][0]["parameters"] = bad;
        assert_eq!(
            reject_default(ApiVersion::V0_2, &result),
            NegotiationError::ParametersNotObject {
                tool: "hello_world".to_owned()
            }
        );
    }
    let mut result = response(ApiVersion::V0_2, &[]);
    result["tools"][0]
        .as_object_mut()
        .unwrap()
        .remove("parameters");
    assert_eq!(
        reject_default(ApiVersion::V0_2, &result),
        NegotiationError::MissingMember {
            field: "tools[0].parameters".to_owned()
        }
    );
}

#[test]
fn output_schema_is_forbidden_on_v0_1() {
    for schema in [json!({"type": "object"}), json!(null)] {
        let mut result = example_result(REFERENCE_V0_1_RESPONSE);
        result["tools"][0]["output_schema"] = schema;
        assert_eq!(
            reject_default(ApiVersion::V0_1, &result),
            NegotiationError::OutputSchemaOnV0_1 {
                tool: "hello_world".to_owned()
            }
        );
    }
}

#[test]
fn output_schema_on_v0_2_is_an_object_or_null() {
    let located = located(ApiVersion::V0_2);
    let mut result = response(ApiVersion::V0_2, &[]);
    result["tools"][0]["output_schema"] = json!({"type": "object"});
    let negotiated = accept(&located, &default_offer(&located), &result);
    assert_eq!(
        negotiated.tools[0].output_schema,
        Some(json!({"type": "object"}))
    );
    result["tools"][0]["output_schema"] = json!(null);
    let negotiated = accept(&located, &default_offer(&located), &result);
    assert_eq!(negotiated.tools[0].output_schema, None);
    result["tools"][0]["output_schema"] = json!("object");
    assert_eq!(
        reject(&located, &default_offer(&located), &result),
        NegotiationError::OutputSchemaNotObject {
            tool: "hello_world".to_owned()
        }
    );
}

// ---------------------------------------------------------------------------
// Prompt metadata (API 0.4).
// ---------------------------------------------------------------------------

fn with_prompt_metadata(api: ApiVersion, features: &[&str], metadata: Value) -> Value {
    let mut result = response(api, features);
    for (key, value) in metadata.as_object().unwrap() {
        result["tools"][0][key] = value.clone();
    }
    result
}

fn prompt_problem(metadata: Value) -> NegotiationError {
    reject_default(
        ApiVersion::V0_4,
        &with_prompt_metadata(ApiVersion::V0_4, &["tool_prompt_metadata_v1"], metadata),
    )
}

#[test]
fn prompt_metadata_needs_the_negotiated_feature() {
    let not_negotiated = NegotiationError::PromptMetadata {
        tool: "hello_world".to_owned(),
        problem: PromptMetadataProblem::NotNegotiated,
    };
    let metadata = json!({"prompt_snippet": "Greets."});
    assert_eq!(
        reject_default(
            ApiVersion::V0_2,
            &with_prompt_metadata(ApiVersion::V0_2, &[], metadata.clone())
        ),
        not_negotiated
    );
    assert_eq!(
        reject_default(
            ApiVersion::V0_4,
            &with_prompt_metadata(ApiVersion::V0_4, &[], json!({"prompt_guidelines": ["x"]}))
        ),
        not_negotiated
    );
    // Null metadata is absent, so ordinary tools stay valid everywhere.
    let located = located(ApiVersion::V0_2);
    let result = with_prompt_metadata(
        ApiVersion::V0_2,
        &[],
        json!({"prompt_snippet": null, "prompt_guidelines": null}),
    );
    accept(&located, &default_offer(&located), &result);
}

#[test]
fn prompt_metadata_within_bounds_is_accepted() {
    let located = located(ApiVersion::V0_4);
    let guidelines: Vec<String> = (0..16).map(|i| format!("line {i}\n\tindented")).collect();
    let snippet = "é".repeat(512); // Exactly 1,024 UTF-8 bytes.
    let result = with_prompt_metadata(
        ApiVersion::V0_4,
        &["tool_prompt_metadata_v1"],
        json!({"prompt_snippet": snippet, "prompt_guidelines": guidelines}),
    );
    let negotiated = accept(&located, &default_offer(&located), &result);
    assert_eq!(
        negotiated.tools[0].prompt_snippet.as_deref(),
        Some(snippet.as_str())
    );
    assert_eq!(negotiated.tools[0].prompt_guidelines, guidelines);
}

#[test]
fn prompt_metadata_bounds_are_enforced() {
    let problem = |problem| NegotiationError::PromptMetadata {
        tool: "hello_world".to_owned(),
        problem,
    };
    let seventeen: Vec<&str> = vec!["g"; 17];
    assert_eq!(
        prompt_problem(json!({"prompt_guidelines": seventeen})),
        problem(PromptMetadataProblem::TooManyGuidelines { count: 17 })
    );
    assert_eq!(
        prompt_problem(json!({"prompt_snippet": format!("{}a", "é".repeat(512))})),
        problem(PromptMetadataProblem::TooLong {
            member: "prompt_snippet".to_owned(),
            bytes: 1025
        })
    );
    assert_eq!(
        prompt_problem(json!({"prompt_guidelines": ["ok", "x".repeat(1025)]})),
        problem(PromptMetadataProblem::TooLong {
            member: "prompt_guidelines[1]".to_owned(),
            bytes: 1025
        })
    );
    for control in ["\r", "\u{1b}[31m", "\u{7f}", "\u{85}", "\u{0}"] {
        assert_eq!(
            prompt_problem(json!({"prompt_snippet": format!("a{control}b")})),
            problem(PromptMetadataProblem::ControlCharacter {
                member: "prompt_snippet".to_owned()
            })
        );
    }
    assert_eq!(
        prompt_problem(json!({"prompt_guidelines": "one"})),
        NegotiationError::WrongType {
            field: "tools[0].prompt_guidelines".to_owned(),
            expected: "an array of strings"
        }
    );
    assert_eq!(
        prompt_problem(json!({"prompt_guidelines": [1]})),
        NegotiationError::WrongType {
            field: "tools[0].prompt_guidelines[0]".to_owned(),
            expected: "a string"
        }
    );
}

// ---------------------------------------------------------------------------
// Composition and operation descriptors (API 0.4).
// ---------------------------------------------------------------------------

fn composing(features: &[&str], composition: Value) -> (LocatedManifest, InitializeOffer, Value) {
    let located = located(ApiVersion::V0_4);
    let offer = default_offer(&located)
        .with_feature(Feature::ToolCompositionV1)
        .with_feature(Feature::OperationDescriptorsV1);
    let mut result = response(ApiVersion::V0_4, features);
    result["tools"][0]["composition"] = composition;
    (located, offer, result)
}

#[test]
fn composition_needs_tool_composition_v1() {
    let (located, offer, result) = composing(&[], json!({"mode": "on", "inline_budget": 3000}));
    assert_eq!(
        reject(&located, &offer, &result),
        NegotiationError::MemberRequiresFeature {
            field: "tools[0].composition".to_owned(),
            feature: Feature::ToolCompositionV1
        }
    );
}

#[test]
fn composition_is_validated() {
    let (located, offer, result) = composing(
        &["tool_composition_v1"],
        json!({"mode": "only", "inline_budget": 16000}),
    );
    let composition = accept(&located, &offer, &result).tools[0]
        .composition
        .clone()
        .unwrap();
    assert_eq!(composition.mode, CompositionMode::Only);
    assert_eq!(composition.inline_budget, 16000);

    let invalid = |problem| NegotiationError::InvalidComposition {
        tool: "hello_world".to_owned(),
        problem,
    };
    for (composition, problem) in [
        (
            json!({"mode": "on", "inline_budget": 1, "extra": 1}),
            CompositionProblem::UnknownMember {
                name: "extra".to_owned(),
            },
        ),
        (json!({"inline_budget": 1}), CompositionProblem::MissingMode),
        (
            json!({"mode": "always", "inline_budget": 1}),
            CompositionProblem::InvalidMode {
                value: "\"always\"".to_owned(),
            },
        ),
        (
            json!({"mode": "on"}),
            CompositionProblem::MissingInlineBudget,
        ),
        (
            json!({"mode": "on", "inline_budget": 16001}),
            CompositionProblem::InvalidInlineBudget {
                value: "16001".to_owned(),
            },
        ),
        (
            json!({"mode": "on", "inline_budget": -1}),
            CompositionProblem::InvalidInlineBudget {
                value: "-1".to_owned(),
            },
        ),
    ] {
        let (located, offer, result) = composing(&["tool_composition_v1"], composition);
        assert_eq!(reject(&located, &offer, &result), invalid(problem));
    }
}

#[test]
fn operation_needs_operation_descriptors_v1() {
    let (located, offer, mut result) = composing(&[], json!(null));
    result["tools"][0]["operation"] = json!({"id": "circuit.open"});
    assert_eq!(
        reject(&located, &offer, &result),
        NegotiationError::MemberRequiresFeature {
            field: "tools[0].operation".to_owned(),
            feature: Feature::OperationDescriptorsV1
        }
    );
    let (located, offer, mut result) = composing(&["operation_descriptors_v1"], json!(null));
    result["tools"][0]["operation"] = json!({"id": "circuit.open"});
    let negotiated = accept(&located, &offer, &result);
    assert_eq!(
        negotiated.tools[0].operation,
        Some(json!({"id": "circuit.open"}))
    );
}

// ---------------------------------------------------------------------------
// Errors and serialization.
// ---------------------------------------------------------------------------

#[test]
fn tool_definitions_serialize_in_wire_form() {
    let located = located(ApiVersion::V0_4);
    let result = with_prompt_metadata(
        ApiVersion::V0_4,
        &["tool_prompt_metadata_v1"],
        json!({"prompt_guidelines": ["Be brief."]}),
    );
    let negotiated = accept(&located, &default_offer(&located), &result);
    assert_eq!(
        serde_json::to_string(&negotiated.tools[0]).unwrap(),
        r#"{"name":"hello_world","description":"Greet someone","parameters":{"properties":{},"type":"object"},"prompt_guidelines":["Be brief."]}"#
    );
    assert_eq!(
        serde_json::to_string(&negotiated.commands[0]).unwrap(),
        r#"{"name":"hello","description":"Show a greeting"}"#
    );
}

#[test]
fn error_codes_are_distinct_per_rule() {
    let errors = [
        NegotiationError::ProtocolMemberForbidden,
        NegotiationError::ProtocolMemberMissing,
        NegotiationError::TooManyTools { count: 1 },
        NegotiationError::TooManyCommands { count: 1 },
        NegotiationError::DuplicateTool {
            name: String::new(),
        },
        NegotiationError::DuplicateCommand {
            name: String::new(),
        },
        NegotiationError::UnknownFeature {
            name: String::new(),
        },
        NegotiationError::DuplicateFeature {
            feature: Feature::Artifacts,
        },
        NegotiationError::FeatureNotOffered {
            feature: Feature::Artifacts,
        },
        NegotiationError::MissingRequiredFeature {
            feature: Feature::ContentParts,
        },
        NegotiationError::OutputSchemaOnV0_1 {
            tool: String::new(),
        },
        NegotiationError::OutputSchemaNotObject {
            tool: String::new(),
        },
        NegotiationError::ParametersNotObject {
            tool: String::new(),
        },
    ];
    let codes: std::collections::BTreeSet<&str> = errors.iter().map(|e| e.code()).collect();
    assert_eq!(codes.len(), errors.len());
    assert_eq!(
        NegotiationError::FeatureRequires {
            feature: Feature::Approvals,
            requires: Feature::PolicyIntents
        }
        .to_string(),
        "protocol.features selects `approvals` without `policy_intents`, which it requires"
    );
}
