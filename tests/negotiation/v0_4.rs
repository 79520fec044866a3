//! API 0.4 additions: prompt metadata, composition and operation descriptors.

use super::*;

// Prompt metadata (API 0.4).
// ---------------------------------------------------------------------------

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
    // A descriptor without resources needs only `operation_descriptors_v1`; it is
    // closed, so `resource_inputs` and `resource_outputs` are required.
    let (located, offer, mut result) = composing(&["operation_descriptors_v1"], json!(null));
    result["tools"][0]["operation"] = json!({"id": "circuit.open"});
    assert!(matches!(
        reject(&located, &offer, &result),
        NegotiationError::InvalidOperation { .. }
    ));
    let plain = json!({"id": "circuit.open", "resource_inputs": [], "resource_outputs": []});
    result["tools"][0]["operation"] = plain.clone();
    let negotiated = accept(&located, &offer, &result);
    let operation = negotiated.tools[0].operation.as_ref().unwrap();
    assert_eq!(operation.id, "circuit.open");
    assert_eq!(serde_json::to_value(operation).unwrap(), plain);
}

// ---------------------------------------------------------------------------
