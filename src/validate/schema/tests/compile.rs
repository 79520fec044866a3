//! Schema errors: every variant of `SchemaError` and the keyword-walk rules.

use serde_json::{json, Value};

use super::{parse, schema, schema_error};
use crate::limits::{MAX_JSON_DEPTH, MAX_JSON_KEY_BYTES};
use crate::validate::schema::{Expected, JsonType, Keyword, SchemaError, DRAFT_2020_12};

fn unsupported(keyword: &str, path: &str) -> SchemaError {
    SchemaError::UnsupportedKeyword {
        keyword: keyword.to_owned(),
        path: path.to_owned(),
    }
}

fn invalid_value(keyword: Keyword, path: &str, expected: Expected) -> SchemaError {
    SchemaError::InvalidKeywordValue {
        keyword,
        path: path.to_owned(),
        expected,
    }
}

#[test]
fn every_subset_keyword_is_accepted() {
    schema(json!({
        "$schema": DRAFT_2020_12,
        "title": "t",
        "description": "d",
        "default": {"anything": [1, "x"]},
        "examples": [1, "two"],
        "type": ["object", "null"],
        "properties": {"a": {"type": "string", "minLength": 1, "maxLength": 2}},
        "required": ["a"],
        "additionalProperties": false,
        "items": {"uniqueItems": true, "minItems": 0, "maxItems": 3},
        "enum": [null, {"a": "b"}],
        "const": {"a": "b"},
        "allOf": [true],
        "anyOf": [{}],
        "oneOf": [{"minProperties": 1, "maxProperties": 2}],
        "minimum": -1,
        "maximum": 1.5,
        "exclusiveMinimum": -2,
        "exclusiveMaximum": 2
    }));
    assert_eq!(Keyword::ALL.len(), 26);
    for keyword in Keyword::ALL {
        assert_eq!(Keyword::from_name(keyword.as_str()), Some(keyword));
    }
    assert_eq!(Keyword::from_name("Type"), None);
}

#[test]
fn unsupported_keywords_are_named_at_every_walked_depth() {
    assert_eq!(
        schema_error(json!({"$ref": "#/x"})),
        unsupported("$ref", "")
    );
    assert_eq!(
        schema_error(json!({"properties": {"a/b": {"format": "uri"}}})),
        unsupported("format", "/properties/a~1b")
    );
    assert_eq!(
        schema_error(json!({"additionalProperties": {"pattern": "x"}})),
        unsupported("pattern", "/additionalProperties")
    );
    assert_eq!(
        schema_error(json!({"items": {"items": {"$comment": "x"}}})),
        unsupported("$comment", "/items/items")
    );
    for applicator in ["allOf", "anyOf", "oneOf"] {
        assert_eq!(
            schema_error(json!({applicator: [true, {"not": {}}]})),
            unsupported("not", &format!("/{applicator}/1"))
        );
    }
    assert_eq!(
        schema_error(json!({"prefixItems": [], "type": "array"})),
        unsupported("prefixItems", "")
    );
}

#[test]
fn unsupported_vocabulary_wins_over_malformed_values() {
    // The malformed minLength is visited before the deeper unsupported keyword would be
    // in a single pass; the vocabulary pass reports the keyword anyway.
    assert_eq!(
        schema_error(json!({"minLength": "x", "properties": {"a": {"$id": "y"}}})),
        unsupported("$id", "/properties/a")
    );
}

#[test]
fn data_values_and_property_names_are_not_walked() {
    schema(json!({
        "properties": {"$ref": {"type": "string"}, "__proto__": true, "foo\nbar": {}},
        "required": ["$ref", "patternProperties"],
        "enum": [{"$ref": "#"}],
        "const": {"format": "x"},
        "default": {"not": {}},
        "examples": [{"$defs": {}}],
        "type": "object"
    }));
}

#[test]
fn dialect_must_be_2020_12() {
    schema(json!({"$schema": DRAFT_2020_12}));
    schema(json!({"properties": {"a": {"$schema": DRAFT_2020_12}}}));
    assert_eq!(
        schema_error(json!({"$schema": "http://json-schema.org/draft-07/schema#"})),
        SchemaError::UnsupportedDialect {
            dialect: "http://json-schema.org/draft-07/schema#".to_owned(),
            path: String::new(),
        }
    );
    assert_eq!(
        schema_error(json!({"items": {"$schema": "http://localhost:1234/custom"}})),
        SchemaError::UnsupportedDialect {
            dialect: "http://localhost:1234/custom".to_owned(),
            path: "/items".to_owned(),
        }
    );
    assert_eq!(
        schema_error(json!({"$schema": 7})),
        invalid_value(Keyword::Schema, "", Expected::String)
    );
}

#[test]
fn boolean_schemas_are_accepted_everywhere() {
    schema(json!(true));
    schema(json!(false));
    schema(json!({
        "properties": {"a": false},
        "additionalProperties": true,
        "items": false,
        "allOf": [true],
        "anyOf": [false, true],
        "oneOf": [true]
    }));
}

#[test]
fn non_schema_nodes_are_refused() {
    for root in [json!(null), json!(1), json!("x"), json!([])] {
        assert_eq!(
            schema_error(root),
            SchemaError::NotASchema {
                path: String::new()
            }
        );
    }
    assert_eq!(
        schema_error(json!({"properties": {"a": 1}})),
        SchemaError::NotASchema {
            path: "/properties/a".to_owned()
        }
    );
    assert_eq!(
        schema_error(json!({"items": [{}]})),
        SchemaError::NotASchema {
            path: "/items".to_owned()
        }
    );
    assert_eq!(
        schema_error(json!({"additionalProperties": null})),
        SchemaError::NotASchema {
            path: "/additionalProperties".to_owned()
        }
    );
    assert_eq!(
        schema_error(json!({"anyOf": [{}, "x"]})),
        SchemaError::NotASchema {
            path: "/anyOf/1".to_owned()
        }
    );
}

/// A schema whose `items` chain makes `levels` schema nodes in all.
fn nested_items(levels: usize) -> Value {
    let mut node = json!({});
    for _ in 1..levels {
        node = json!({ "items": node });
    }
    node
}

#[test]
fn schema_nesting_is_capped() {
    schema(nested_items(MAX_JSON_DEPTH));
    let too_deep = nested_items(MAX_JSON_DEPTH + 1);
    let expected_path = "/items".repeat(MAX_JSON_DEPTH);
    assert_eq!(
        schema_error(too_deep),
        SchemaError::TooDeep {
            path: expected_path,
            limit: MAX_JSON_DEPTH
        }
    );
    // Boolean leaves are schema nodes too.
    let mut node = json!(true);
    for _ in 0..MAX_JSON_DEPTH {
        node = json!({ "allOf": [node] });
    }
    assert!(matches!(schema_error(node), SchemaError::TooDeep { .. }));
    // Data nesting under const does not count.
    let mut data = json!(1);
    for _ in 0..(MAX_JSON_DEPTH * 2) {
        data = json!([data]);
    }
    schema(json!({ "const": data }));
}

#[test]
fn unsupported_keywords_past_the_depth_cap_report_the_depth() {
    let mut node = json!({"$ref": "#"});
    for _ in 0..MAX_JSON_DEPTH {
        node = json!({ "items": node });
    }
    assert!(matches!(schema_error(node), SchemaError::TooDeep { .. }));
}

#[test]
fn property_names_are_capped() {
    let longest = "x".repeat(MAX_JSON_KEY_BYTES);
    let too_long = "é".repeat(MAX_JSON_KEY_BYTES / 2) + "x";
    schema(json!({"properties": {longest.clone(): {}}, "required": [longest]}));
    assert_eq!(
        schema_error(json!({"items": {"properties": {too_long.clone(): {}}}})),
        SchemaError::PropertyNameTooLong {
            keyword: Keyword::Properties,
            path: "/items".to_owned(),
            bytes: MAX_JSON_KEY_BYTES + 1,
            limit: MAX_JSON_KEY_BYTES,
        }
    );
    assert_eq!(
        schema_error(json!({"required": [too_long]})),
        SchemaError::PropertyNameTooLong {
            keyword: Keyword::Required,
            path: String::new(),
            bytes: MAX_JSON_KEY_BYTES + 1,
            limit: MAX_JSON_KEY_BYTES,
        }
    );
}

#[test]
fn keyword_values_of_the_wrong_shape_are_refused() {
    let cases: Vec<(Value, Keyword, Expected)> = vec![
        (json!({"title": 1}), Keyword::Title, Expected::String),
        (
            json!({"description": []}),
            Keyword::Description,
            Expected::String,
        ),
        (json!({"examples": 1}), Keyword::Examples, Expected::Array),
        (json!({"type": 1}), Keyword::Type, Expected::TypeNames),
        (json!({"type": []}), Keyword::Type, Expected::TypeNames),
        (
            json!({"type": ["string", 1]}),
            Keyword::Type,
            Expected::TypeNames,
        ),
        (
            json!({"properties": []}),
            Keyword::Properties,
            Expected::SchemaObject,
        ),
        (
            json!({"required": "a"}),
            Keyword::Required,
            Expected::StringArray,
        ),
        (
            json!({"required": [1]}),
            Keyword::Required,
            Expected::StringArray,
        ),
        (json!({"enum": {"a": 1}}), Keyword::Enum, Expected::Array),
        (
            json!({"allOf": []}),
            Keyword::AllOf,
            Expected::NonEmptySchemaArray,
        ),
        (
            json!({"anyOf": {}}),
            Keyword::AnyOf,
            Expected::NonEmptySchemaArray,
        ),
        (
            json!({"oneOf": true}),
            Keyword::OneOf,
            Expected::NonEmptySchemaArray,
        ),
        (json!({"minimum": "1"}), Keyword::Minimum, Expected::Number),
        (json!({"maximum": null}), Keyword::Maximum, Expected::Number),
        (
            json!({"exclusiveMinimum": true}),
            Keyword::ExclusiveMinimum,
            Expected::Number,
        ),
        (
            json!({"exclusiveMaximum": false}),
            Keyword::ExclusiveMaximum,
            Expected::Number,
        ),
        (
            json!({"minLength": "x"}),
            Keyword::MinLength,
            Expected::NonNegativeInteger,
        ),
        (
            json!({"maxLength": -1}),
            Keyword::MaxLength,
            Expected::NonNegativeInteger,
        ),
        (
            json!({"minItems": 1.5}),
            Keyword::MinItems,
            Expected::NonNegativeInteger,
        ),
        (
            json!({"maxItems": -2.0}),
            Keyword::MaxItems,
            Expected::NonNegativeInteger,
        ),
        (
            json!({"minProperties": true}),
            Keyword::MinProperties,
            Expected::NonNegativeInteger,
        ),
        (
            json!({"maxProperties": [1]}),
            Keyword::MaxProperties,
            Expected::NonNegativeInteger,
        ),
        (
            json!({"uniqueItems": 1}),
            Keyword::UniqueItems,
            Expected::Boolean,
        ),
    ];
    for (value, keyword, expected) in cases {
        let nested = json!({ "properties": { "p": value.clone() } });
        assert_eq!(
            schema_error(value.clone()),
            invalid_value(keyword, "", expected),
            "{value}"
        );
        assert_eq!(
            schema_error(nested),
            invalid_value(keyword, "/properties/p", expected),
            "{value} nested"
        );
    }
}

#[test]
fn counts_accept_integral_decimals() {
    schema(json!({"minLength": 2.0, "maxLength": 0, "minItems": 1.0, "maxProperties": 1e3}));
    schema(parse(r#"{"maxItems": 123456789012345678901234567890}"#));
}

#[test]
fn type_names_must_be_known_and_distinct() {
    assert_eq!(
        schema_error(json!({"type": "foo"})),
        SchemaError::UnknownType {
            path: String::new(),
            name: "foo".to_owned()
        }
    );
    assert_eq!(
        schema_error(json!({"type": ["string", "Integer"]})),
        SchemaError::UnknownType {
            path: String::new(),
            name: "Integer".to_owned()
        }
    );
    assert_eq!(
        schema_error(json!({"type": ["string", "null", "string"]})),
        SchemaError::DuplicateType {
            path: String::new(),
            name: JsonType::String
        }
    );
    for ty in JsonType::ALL {
        schema(json!({"type": ty.as_str()}));
    }
}

#[test]
fn required_names_must_be_distinct() {
    assert_eq!(
        schema_error(json!({"items": {"required": ["a", "b", "a"]}})),
        SchemaError::DuplicateRequired {
            path: "/items".to_owned(),
            name: "a".to_owned()
        }
    );
    schema(json!({"required": []}));
}

#[test]
fn schema_errors_read_as_sentences() {
    let cases = [
        (
            unsupported("$ref", "/properties/a"),
            "output schema at /properties/a uses \"$ref\", which is not in the supported keyword subset",
        ),
        (
            unsupported("format", ""),
            "output schema at the root uses \"format\", which is not in the supported keyword subset",
        ),
        (
            invalid_value(Keyword::MinLength, "", Expected::NonNegativeInteger),
            "output schema at the root: minLength must be a non-negative integer",
        ),
        (
            SchemaError::TooDeep {
                path: "/items".to_owned(),
                limit: 32,
            },
            "output schema node at /items nests deeper than 32 levels",
        ),
        (
            SchemaError::UnknownType {
                path: String::new(),
                name: "foo".to_owned(),
            },
            "output schema at the root: type \"foo\" is not a JSON Schema type",
        ),
    ];
    for (error, text) in cases {
        assert_eq!(error.to_string(), text);
    }
    let dialect = SchemaError::UnsupportedDialect {
        dialect: "x".to_owned(),
        path: String::new(),
    };
    assert!(dialect.to_string().contains(DRAFT_2020_12));
}
