//! Work bounds on instances, and what the f64-based number model can and cannot tell
//! apart.

use serde_json::{json, Value};

use super::{invalid, parse, schema};
use crate::limits::{MAX_JSON_DEPTH, MAX_JSON_NODES};
use crate::validate::schema::{ValidationError, ValidationErrorKind as Kind};

/// `levels` nested arrays around `0`.
fn nested_arrays(levels: usize) -> Value {
    let mut value = json!(0);
    for _ in 0..levels {
        value = json!([value]);
    }
    value
}

#[test]
fn instance_depth_is_capped_at_32_container_levels() {
    let any = schema(json!(true));
    assert!(any.is_valid(&nested_arrays(MAX_JSON_DEPTH)));
    let e = invalid(&any, nested_arrays(MAX_JSON_DEPTH + 1));
    assert_eq!(
        e,
        ValidationError {
            instance_path: "/0".repeat(MAX_JSON_DEPTH),
            kind: Kind::TooDeep {
                limit: MAX_JSON_DEPTH
            },
        }
    );
    assert_eq!(e.keyword(), None);
    // Objects count the same way.
    let mut value = json!({});
    for _ in 1..=MAX_JSON_DEPTH {
        value = json!({ "k": value });
    }
    assert!(matches!(invalid(&any, value).kind, Kind::TooDeep { .. }));
}

#[test]
fn instance_depth_is_checked_before_keywords() {
    // Even a schema that would reject the value at the root reports the bound first.
    let s = schema(json!({"type": "string"}));
    assert_eq!(
        invalid(&s, nested_arrays(MAX_JSON_DEPTH + 1)).kind,
        Kind::TooDeep {
            limit: MAX_JSON_DEPTH
        }
    );
}

#[test]
fn instance_nodes_are_capped() {
    let any = schema(json!({"items": {"type": "integer"}}));
    // The root array plus its elements.
    let fits = Value::Array(vec![json!(1); MAX_JSON_NODES - 1]);
    assert!(any.is_valid(&fits));
    let over = Value::Array(vec![json!(1); MAX_JSON_NODES]);
    assert_eq!(
        invalid(&any, over),
        ValidationError {
            instance_path: String::new(),
            kind: Kind::TooManyNodes {
                limit: MAX_JSON_NODES
            },
        }
    );
}

#[test]
fn unique_items_on_a_large_array_finds_the_late_duplicate() {
    let s = schema(json!({"uniqueItems": true}));
    let mut items: Vec<Value> = (0..10_000).map(|i| json!(i)).collect();
    assert!(s.is_valid(&Value::Array(items.clone())));
    items.push(json!(4321.0));
    assert_eq!(
        invalid(&s, Value::Array(items)).kind,
        Kind::UniqueItems {
            first: 4321,
            second: 10_000
        }
    );
}

#[test]
fn bignums_arrive_as_doubles_and_compare_as_such() {
    // Without serde_json's arbitrary_precision, integers beyond 64 bits and long decimals
    // become the nearest double. These are the optional/bignum.json cases.
    let big = parse("12345678910111213141516171819202122232425262728293031");
    assert!(big.is_f64());
    let max = parse("18446744073709551615");
    assert!(max.is_u64());
    let high = parse("972783798187987123879878123.18878137");
    let higher = parse("972783798187987123879878123.188781371");
    // The two decimals differ only in the 37th significant digit and parse to the same
    // double; exclusiveMaximum rejects the larger one because it is not below the bound.
    assert_eq!(high, higher);
    let s = schema(json!({ "exclusiveMaximum": high }));
    assert!(!s.is_valid(&higher));
    // The very negative minimum and its instance are both -2^64 as doubles.
    let min = parse("-18446744073709551615");
    let instance = parse("-18446744073709551600");
    assert_eq!(min, instance);
    assert!(schema(json!({ "minimum": min })).is_valid(&instance));
}
