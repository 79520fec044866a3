use serde_json::{json, Value};

use super::{DescriptorProblem, OperationDescriptor, RefProblem, ResourceRef};

fn ref_schema(type_id: &str) -> Value {
    json!({
        "type": "object",
        "properties": {
            "$resource": {"type": "string", "maxLength": 128},
            "type": {"const": type_id}
        },
        "required": ["$resource", "type"],
        "additionalProperties": false
    })
}

fn parameters() -> Value {
    json!({
        "type": "object",
        "properties": {
            "circuit": ref_schema("Circuit"),
            "board": {"type": "object", "properties": {"part": ref_schema("Part")}},
            "steps": {"type": "integer"}
        },
        "required": ["circuit"]
    })
}

fn outputs() -> Value {
    json!({"type": "object", "properties": {"result": ref_schema("Circuit")}})
}

fn descriptor() -> Value {
    json!({
        "id": "circuit.simulate",
        "receiver": "/circuit",
        "resource_inputs": [
            {"path": "/circuit", "type": "Circuit", "access": "exclusive"},
            {"path": "/board/part", "type": "Part", "access": "exclusive"}
        ],
        "resource_outputs": [{"path": "/result", "type": "Circuit"}]
    })
}

fn parse(operation: &Value) -> Result<OperationDescriptor, DescriptorProblem> {
    OperationDescriptor::parse(operation, &parameters(), Some(&outputs()), true)
}

#[test]
fn a_descriptor_through_object_properties_is_accepted_and_serializes_back() {
    let parsed = parse(&descriptor()).unwrap();
    assert_eq!(parsed.id, "circuit.simulate");
    assert_eq!(parsed.receiver.as_ref().unwrap().as_str(), "/circuit");
    assert_eq!(parsed.resource_inputs.len(), 2);
    assert_eq!(serde_json::to_value(&parsed).unwrap(), descriptor());
    let args = json!({"board": {"part": {"$resource": "t", "type": "Part"}}});
    assert_eq!(
        parsed.resource_inputs[1].path.lookup(&args),
        Some(&json!({"$resource": "t", "type": "Part"}))
    );
}

#[test]
fn a_singleton_enum_names_the_type_as_well_as_a_const() {
    let mut parameters = parameters();
    parameters["properties"]["circuit"]["properties"]["type"] =
        json!({"type": "string", "enum": ["Circuit"]});
    let parsed = OperationDescriptor::parse(&descriptor(), &parameters, Some(&outputs()), true);
    assert!(parsed.is_ok(), "{parsed:?}");
}

#[test]
fn resource_bearing_descriptors_need_both_features() {
    assert_eq!(
        OperationDescriptor::parse(&descriptor(), &parameters(), Some(&outputs()), false),
        Err(DescriptorProblem::NeedsResourceRefs)
    );
    let plain = json!({"id": "noop", "resource_inputs": [], "resource_outputs": []});
    assert!(OperationDescriptor::parse(&plain, &parameters(), None, false).is_ok());
}

#[test]
fn an_open_ref_schema_is_refused() {
    let mut parameters = parameters();
    parameters["properties"]["circuit"]
        .as_object_mut()
        .unwrap()
        .remove("additionalProperties");
    let error =
        OperationDescriptor::parse(&descriptor(), &parameters, Some(&outputs()), true).unwrap_err();
    assert!(
        matches!(error, DescriptorProblem::OpenSchema { ref path, .. } if path == "/circuit"),
        "{error:?}"
    );
    assert!(
        error.to_string().contains("additionalProperties"),
        "{error}"
    );
}

/// Whether a problem is the one a case expects.
type Expected = fn(&DescriptorProblem) -> bool;

#[test]
fn every_closed_shape_rule_is_checked() {
    let cases: Vec<(Value, Expected)> = vec![
        (json!([]), |p| matches!(p, DescriptorProblem::NotAnObject)),
        (
            json!({"id": "x", "resource_inputs": [], "resource_outputs": [], "extra": 1}),
            |p| matches!(p, DescriptorProblem::UnknownMember { .. }),
        ),
        (
            json!({"resource_inputs": [], "resource_outputs": []}),
            |p| matches!(p, DescriptorProblem::Missing { member: "id", .. }),
        ),
        (
            json!({"id": "9x", "resource_inputs": [], "resource_outputs": []}),
            |p| matches!(p, DescriptorProblem::InvalidId),
        ),
        (json!({"id": "x", "resource_outputs": []}), |p| {
            matches!(
                p,
                DescriptorProblem::Missing {
                    member: "resource_inputs",
                    ..
                }
            )
        }),
        (
            json!({"id": "x", "resource_inputs": [{"path": "/circuit", "type": "Circuit", "access": "shared"}], "resource_outputs": []}),
            |p| matches!(p, DescriptorProblem::InvalidAccess { .. }),
        ),
        (
            json!({"id": "x", "resource_inputs": [{"path": "/circuit", "type": "Circuit"}], "resource_outputs": []}),
            |p| {
                matches!(
                    p,
                    DescriptorProblem::Missing {
                        member: "access",
                        ..
                    }
                )
            },
        ),
        (
            json!({"id": "x", "resource_inputs": [{"path": "/circuit", "type": "Part", "access": "exclusive"}], "resource_outputs": []}),
            |p| matches!(p, DescriptorProblem::TypeMismatch { .. }),
        ),
        (
            json!({"id": "x", "resource_inputs": [{"path": "/steps", "type": "Circuit", "access": "exclusive"}], "resource_outputs": []}),
            |p| matches!(p, DescriptorProblem::OpenSchema { .. }),
        ),
        (
            json!({"id": "x", "resource_inputs": [{"path": "/nowhere", "type": "Circuit", "access": "exclusive"}], "resource_outputs": []}),
            |p| matches!(p, DescriptorProblem::Path { .. }),
        ),
        (
            json!({"id": "x", "resource_inputs": [{"path": "circuit", "type": "Circuit", "access": "exclusive"}], "resource_outputs": []}),
            |p| matches!(p, DescriptorProblem::Path { .. }),
        ),
        (
            json!({"id": "x", "resource_inputs": [{"path": "/board/*", "type": "Part", "access": "exclusive"}], "resource_outputs": []}),
            |p| matches!(p, DescriptorProblem::Path { .. }),
        ),
        (
            json!({"id": "x", "resource_inputs": [
                {"path": "/circuit", "type": "Circuit", "access": "exclusive"},
                {"path": "/circuit", "type": "Circuit", "access": "exclusive"}
            ], "resource_outputs": []}),
            |p| matches!(p, DescriptorProblem::DuplicatePath { .. }),
        ),
        (
            json!({"id": "x", "receiver": "/board/part", "resource_inputs": [{"path": "/circuit", "type": "Circuit", "access": "exclusive"}], "resource_outputs": []}),
            |p| matches!(p, DescriptorProblem::ReceiverNotInput { .. }),
        ),
        (
            json!({"id": "x", "resource_inputs": [], "resource_outputs": [{"path": "/result", "type": "Circuit", "access": "exclusive"}]}),
            |p| matches!(p, DescriptorProblem::UnknownMember { .. }),
        ),
    ];
    for (operation, expected) in cases {
        let error = parse(&operation).unwrap_err();
        assert!(expected(&error), "{operation}: {error:?}");
        assert!(!error.to_string().is_empty());
    }
    let no_output_schema = json!({"id": "x", "resource_inputs": [], "resource_outputs": [{"path": "/result", "type": "Circuit"}]});
    assert_eq!(
        OperationDescriptor::parse(&no_output_schema, &parameters(), None, true),
        Err(DescriptorProblem::OutputsWithoutOutputSchema)
    );
}

#[test]
fn an_array_step_is_not_a_property_walk() {
    let parameters = json!({
        "type": "object",
        "properties": {"list": {"type": "array", "items": ref_schema("Circuit")}}
    });
    let operation = json!({"id": "x", "resource_inputs": [{"path": "/list/0", "type": "Circuit", "access": "exclusive"}], "resource_outputs": []});
    let error = OperationDescriptor::parse(&operation, &parameters, None, true).unwrap_err();
    assert!(matches!(error, DescriptorProblem::Path { .. }), "{error:?}");
}

#[test]
fn resource_refs_are_closed_values() {
    let good = json!({"$resource": "res-1", "type": "Circuit"});
    assert_eq!(ResourceRef::parse(&good).unwrap().to_value(), good);
    let cases = [
        (json!("res-1"), RefProblem::NotAnObject),
        (
            json!({"$resource": "res-1", "type": "Circuit", "x": 1}),
            RefProblem::UnknownMember { name: "x".into() },
        ),
        (json!({"type": "Circuit"}), RefProblem::MissingToken),
        (
            json!({"$resource": "", "type": "Circuit"}),
            RefProblem::InvalidToken,
        ),
        (
            json!({"$resource": "a b", "type": "Circuit"}),
            RefProblem::InvalidToken,
        ),
        (
            json!({"$resource": "x".repeat(129), "type": "Circuit"}),
            RefProblem::InvalidToken,
        ),
        (json!({"$resource": "t"}), RefProblem::MissingType),
        (
            json!({"$resource": "t", "type": "_x"}),
            RefProblem::InvalidType,
        ),
        (
            json!({"$resource": "t", "type": "x".repeat(129)}),
            RefProblem::InvalidType,
        ),
    ];
    for (value, problem) in cases {
        assert_eq!(ResourceRef::parse(&value), Err(problem), "{value}");
    }
}
