//! Negotiation errors: their wording and serialization.

use super::*;

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
