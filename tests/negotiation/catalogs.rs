//! Lifecycle subscriptions and the tool and command catalogs of a response.

use super::*;

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
