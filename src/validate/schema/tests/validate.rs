//! Keyword semantics and how failures are reported.

use serde_json::json;

use super::{invalid, parse, schema};
use crate::validate::schema::{JsonType, Keyword, ValidationError, ValidationErrorKind as Kind};

fn error(path: &str, kind: Kind) -> ValidationError {
    ValidationError {
        instance_path: path.to_owned(),
        kind,
    }
}

#[test]
fn boolean_schemas() {
    assert!(schema(json!(true)).is_valid(&json!({"a": [1]})));
    assert_eq!(
        invalid(&schema(json!(false)), json!(null)),
        error("", Kind::FalseSchema { via: None })
    );
    assert_eq!(invalid(&schema(json!(false)), json!(null)).keyword(), None);
    assert!(schema(json!({})).is_valid(&json!("anything")));
}

#[test]
fn type_distinguishes_integers_and_numbers() {
    let integer = schema(json!({"type": "integer"}));
    assert!(integer.is_valid(&json!(1)));
    assert!(integer.is_valid(&json!(-1)));
    assert!(integer.is_valid(&json!(1.0)));
    assert!(integer.is_valid(&parse(
        "12345678910111213141516171819202122232425262728293031"
    )));
    assert_eq!(
        invalid(&integer, json!(1.5)),
        error(
            "",
            Kind::Type {
                expected: vec![JsonType::Integer],
                found: JsonType::Number
            }
        )
    );
    assert!(!integer.is_valid(&json!("1")));
    let number = schema(json!({"type": "number"}));
    assert!(number.is_valid(&json!(1)));
    assert!(number.is_valid(&json!(1.5)));
    assert!(!number.is_valid(&json!(true)));
    let several = schema(json!({"type": ["string", "null"]}));
    assert!(several.is_valid(&json!(null)));
    assert!(several.is_valid(&json!("")));
    assert_eq!(
        invalid(&several, json!(false)),
        error(
            "",
            Kind::Type {
                expected: vec![JsonType::String, JsonType::Null],
                found: JsonType::Boolean
            }
        )
    );
    for (ty, good, bad) in [
        ("null", json!(null), json!(0)),
        ("boolean", json!(false), json!(0)),
        ("object", json!({}), json!([])),
        ("array", json!([]), json!({})),
        ("string", json!(""), json!(null)),
    ] {
        let s = schema(json!({ "type": ty }));
        assert!(s.is_valid(&good), "{ty} accepts {good}");
        assert!(!s.is_valid(&bad), "{ty} rejects {bad}");
    }
}

#[test]
fn const_uses_json_equality() {
    let s = schema(json!({"const": {"a": [1, false]}}));
    assert!(s.is_valid(&json!({"a": [1.0, false]})));
    assert_eq!(invalid(&s, json!({"a": [1, 0]})), error("", Kind::Const));
    assert!(!s.is_valid(&json!({"a": [1, false], "b": null})));
    assert!(schema(json!({"const": -2})).is_valid(&json!(-2.0)));
    assert!(!schema(json!({"const": false})).is_valid(&json!(0)));
    assert!(!schema(json!({"const": 1})).is_valid(&json!(true)));
    assert!(schema(json!({"const": "a\u{0}b"})).is_valid(&json!("a\u{0}b")));
    assert!(!schema(json!({"const": "a\u{0}b"})).is_valid(&json!("a")));
}

#[test]
fn enum_uses_json_equality() {
    let s = schema(json!({"enum": [1, "x", [true], null]}));
    assert!(s.is_valid(&json!(1.0)));
    assert!(s.is_valid(&json!([true])));
    assert!(s.is_valid(&json!(null)));
    assert_eq!(invalid(&s, json!([1])), error("", Kind::Enum));
    assert!(!s.is_valid(&json!(true)));
    let empty = schema(json!({"enum": []}));
    assert!(!empty.is_valid(&json!(null)));
}

#[test]
fn numeric_bounds_are_inclusive_or_exclusive() {
    let s = schema(json!({"minimum": 1, "maximum": 3.5}));
    assert!(s.is_valid(&json!(1)));
    assert!(s.is_valid(&json!(3.5)));
    assert!(s.is_valid(&json!("not a number")));
    assert_eq!(
        invalid(&s, json!(0.5)),
        error("", Kind::Minimum { limit: 1.into() })
    );
    assert_eq!(
        invalid(&s, json!(4)).kind,
        Kind::Maximum {
            limit: serde_json::Number::from_f64(3.5).expect("finite")
        }
    );
    let e = schema(json!({"exclusiveMinimum": 1, "exclusiveMaximum": 3}));
    assert!(e.is_valid(&json!(1.0001)));
    assert!(e.is_valid(&json!(2)));
    assert_eq!(
        invalid(&e, json!(1.0)),
        error("", Kind::ExclusiveMinimum { limit: 1.into() })
    );
    assert_eq!(
        invalid(&e, json!(3)),
        error("", Kind::ExclusiveMaximum { limit: 3.into() })
    );
}

#[test]
fn numeric_bounds_compare_integers_exactly() {
    // 2^53 + 1 rounds to 2^53 as a double; the comparison must not.
    let s = schema(parse(r#"{"maximum": 9007199254740992.0}"#));
    assert!(s.is_valid(&parse("9007199254740992")));
    assert!(!s.is_valid(&parse("9007199254740993")));
    let max = schema(parse(r#"{"maximum": 18446744073709551615}"#));
    assert!(max.is_valid(&parse("18446744073709551600")));
    assert!(max.is_valid(&parse("18446744073709551615")));
    assert!(!max.is_valid(&parse("18446744073709551616")));
    let exclusive = schema(parse(r#"{"exclusiveMaximum": 18446744073709551615}"#));
    assert!(!exclusive.is_valid(&parse("18446744073709551615")));
    assert!(exclusive.is_valid(&parse("18446744073709551614")));
}

#[test]
fn string_lengths_count_code_points() {
    let s = schema(json!({"minLength": 2, "maxLength": 2.0}));
    assert!(s.is_valid(&json!("\u{1F4A9}\u{1F4A9}")));
    assert!(s.is_valid(&json!("éé")));
    assert_eq!(
        invalid(&s, json!("\u{1F4A9}")),
        error(
            "",
            Kind::MinLength {
                limit: 2,
                length: 1
            }
        )
    );
    assert_eq!(
        invalid(&s, json!("abc")),
        error(
            "",
            Kind::MaxLength {
                limit: 2,
                length: 3
            }
        )
    );
    assert!(s.is_valid(&json!(12345)));
}

#[test]
fn array_keywords() {
    let s = schema(json!({"minItems": 1, "maxItems": 2, "items": {"type": "integer"}}));
    assert!(s.is_valid(&json!([1, 2])));
    assert!(s.is_valid(&json!({"not": "an array"})));
    assert_eq!(
        invalid(&s, json!([])),
        error("", Kind::MinItems { limit: 1, count: 0 })
    );
    assert_eq!(
        invalid(&s, json!([1, 2, 3])),
        error("", Kind::MaxItems { limit: 2, count: 3 })
    );
    let e = invalid(&s, json!([1, "x"]));
    assert_eq!(e.instance_path, "/1");
    assert_eq!(e.keyword(), Some(Keyword::Type));
    let none = schema(json!({"items": false}));
    assert!(none.is_valid(&json!([])));
    assert_eq!(
        invalid(&none, json!([0])),
        error(
            "/0",
            Kind::FalseSchema {
                via: Some(Keyword::Items)
            }
        )
    );
}

#[test]
fn unique_items_uses_json_equality() {
    let s = schema(json!({"uniqueItems": true}));
    assert!(s.is_valid(&json!([1, true, "1", [1], {"a": 1}, null, 0, false])));
    assert_eq!(
        invalid(&s, json!([{"a": [1]}, 2, {"a": [1.0]}])),
        error(
            "",
            Kind::UniqueItems {
                first: 0,
                second: 2
            }
        )
    );
    assert!(!s.is_valid(&json!([1, 1.0])));
    assert!(!s.is_valid(&json!([{"a": 1, "b": 2}, {"b": 2, "a": 1}])));
    assert!(schema(json!({"uniqueItems": false})).is_valid(&json!([1, 1])));
}

#[test]
fn object_keywords() {
    let s = schema(json!({
        "minProperties": 1,
        "maxProperties": 2,
        "required": ["a"],
        "properties": {"a": {"type": "string"}, "b": {"type": "integer"}},
        "additionalProperties": {"type": "boolean"}
    }));
    assert!(s.is_valid(&json!({"a": "x", "b": 1})));
    assert!(s.is_valid(&json!({"a": "x", "c": true})));
    assert!(s.is_valid(&json!([1, 2, 3])));
    assert_eq!(
        invalid(&s, json!({})),
        error("", Kind::MinProperties { limit: 1, count: 0 })
    );
    assert_eq!(
        invalid(&s, json!({"a": "x", "b": 1, "c": true})),
        error("", Kind::MaxProperties { limit: 2, count: 3 })
    );
    assert_eq!(
        invalid(&s, json!({"b": 1})),
        error(
            "",
            Kind::Required {
                property: "a".to_owned()
            }
        )
    );
    let e = invalid(&s, json!({"a": "x", "c": 1}));
    assert_eq!(e.instance_path, "/c");
    assert_eq!(e.keyword(), Some(Keyword::Type));
    let closed = schema(json!({"properties": {"a": {}}, "additionalProperties": false}));
    assert_eq!(
        invalid(&closed, json!({"a": 1, "x/y": 2})),
        error(
            "/x~1y",
            Kind::FalseSchema {
                via: Some(Keyword::AdditionalProperties)
            }
        )
    );
    let forbidden = schema(json!({"properties": {"a": false}}));
    assert_eq!(
        invalid(&forbidden, json!({"a": 1})).keyword(),
        Some(Keyword::Properties)
    );
}

#[test]
fn additional_properties_ignores_all_of_siblings() {
    let s = schema(json!({
        "allOf": [{"properties": {"foo": {}}}],
        "additionalProperties": {"type": "boolean"}
    }));
    assert!(s.is_valid(&json!({"foo": false})));
    assert!(!s.is_valid(&json!({"foo": 1})));
}

#[test]
fn applicators() {
    let all = schema(json!({"allOf": [{"type": "integer"}, {"minimum": 2}]}));
    assert!(all.is_valid(&json!(2)));
    assert_eq!(
        invalid(&all, json!(1)),
        error("", Kind::Minimum { limit: 2.into() })
    );
    assert_eq!(
        invalid(&schema(json!({"allOf": [true, false]})), json!(1)),
        error(
            "",
            Kind::FalseSchema {
                via: Some(Keyword::AllOf)
            }
        )
    );
    let any = schema(json!({"anyOf": [{"type": "string"}, {"minimum": 2}]}));
    assert!(any.is_valid(&json!("x")));
    assert!(any.is_valid(&json!(3)));
    assert_eq!(invalid(&any, json!(1)), error("", Kind::AnyOf));
    let one = schema(json!({"oneOf": [{"type": "integer"}, {"minimum": 2}, false]}));
    assert!(one.is_valid(&json!(1)));
    assert!(one.is_valid(&json!(2.5)));
    assert_eq!(invalid(&one, json!(1.5)), error("", Kind::OneOfNone));
    assert_eq!(
        invalid(&one, json!(3)),
        error(
            "",
            Kind::OneOfMultiple {
                first: 0,
                second: 1
            }
        )
    );
}

#[test]
fn annotations_never_fail() {
    let s = schema(json!({
        "title": "t",
        "description": "d",
        "default": "not an integer",
        "examples": ["also not"],
        "type": "integer"
    }));
    assert!(s.is_valid(&json!(7)));
}

#[test]
fn errors_name_the_deep_instance_path_and_keyword() {
    let s = schema(json!({
        "type": "object",
        "properties": {
            "sources": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["url"],
                    "properties": {"url": {"type": "string", "minLength": 1}}
                }
            }
        }
    }));
    assert!(s.is_valid(&json!({"sources": [{"url": "https://x"}]})));
    let e = invalid(&s, json!({"sources": [{"url": ""}]}));
    assert_eq!(e.instance_path, "/sources/0/url");
    assert_eq!(e.keyword(), Some(Keyword::MinLength));
    assert_eq!(
        e.to_string(),
        "structured content at /sources/0/url has 0 characters; minLength is 1"
    );
    let e = invalid(&s, json!({"sources": [{"url": "a"}, {}]}));
    assert_eq!(e.instance_path, "/sources/1");
    assert_eq!(e.keyword(), Some(Keyword::Required));
    assert_eq!(
        e.to_string(),
        "structured content at /sources/1 lacks the required property \"url\""
    );
}

#[test]
fn validation_errors_read_as_sentences() {
    let cases = [
        (
            error("", Kind::FalseSchema { via: None }),
            "structured content at the root is rejected: the output schema is false",
        ),
        (
            error(
                "/a",
                Kind::Type {
                    expected: vec![JsonType::String, JsonType::Null],
                    found: JsonType::Integer,
                },
            ),
            "structured content at /a is integer, but type requires string or null",
        ),
        (
            error(
                "/x",
                Kind::OneOfMultiple {
                    first: 0,
                    second: 2,
                },
            ),
            "structured content at /x matches oneOf subschemas 0 and 2, but must match exactly one",
        ),
        (
            error(
                "",
                Kind::UniqueItems {
                    first: 1,
                    second: 4,
                },
            ),
            "structured content at the root repeats item 1 at index 4, but uniqueItems is true",
        ),
    ];
    for (e, text) in cases {
        assert_eq!(e.to_string(), text);
    }
}
