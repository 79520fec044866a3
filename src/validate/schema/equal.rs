//! JSON Schema equality (for `const`, `enum` and `uniqueItems`) and a total order that
//! agrees with it.
//!
//! Two values are equal when they have the same JSON type and: numbers have the same
//! mathematical value (`1 == 1.0`, `-2 == -2.0`), strings the same code points, arrays
//! equal elements in order, objects the same member names with equal values. Booleans
//! are never numbers (`false != 0`, `true != 1`).
//!
//! Both functions recurse only while *both* sides are containers, so their depth is that
//! of the shallower value; validation bounds instance depth before calling them.

use std::cmp::Ordering;

use serde_json::{Map, Value};

use super::number::Num;

/// Whether `a` and `b` are equal in the JSON Schema sense.
pub(crate) fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Number(x), Value::Number(y)) => Num::new(x).compare(Num::new(y)).is_eq(),
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_equal(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(name, p)| y.get(name).is_some_and(|q| json_equal(p, q)))
        }
        _ => false,
    }
}

/// A total order on JSON values in which `compare(a, b)` is `Equal` exactly when
/// [`json_equal`] holds. Used to find duplicates by sorting instead of comparing every
/// pair.
pub(crate) fn compare(a: &Value, b: &Value) -> Ordering {
    match (a, b) {
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::Number(x), Value::Number(y)) => Num::new(x).compare(Num::new(y)),
        (Value::String(x), Value::String(y)) => x.cmp(y),
        (Value::Array(x), Value::Array(y)) => compare_arrays(x, y),
        (Value::Object(x), Value::Object(y)) => compare_objects(x, y),
        _ => rank(a).cmp(&rank(b)),
    }
}

/// The position of each JSON type in [`compare`]'s order.
fn rank(value: &Value) -> u8 {
    match value {
        Value::Null => 0,
        Value::Bool(_) => 1,
        Value::Number(_) => 2,
        Value::String(_) => 3,
        Value::Array(_) => 4,
        Value::Object(_) => 5,
    }
}

fn compare_arrays(x: &[Value], y: &[Value]) -> Ordering {
    for (p, q) in x.iter().zip(y) {
        let order = compare(p, q);
        if order.is_ne() {
            return order;
        }
    }
    x.len().cmp(&y.len())
}

/// Objects are ordered by their sorted member names first, then by the values in that
/// name order, so member order in the text never matters.
fn compare_objects(x: &Map<String, Value>, y: &Map<String, Value>) -> Ordering {
    let mut xs: Vec<(&String, &Value)> = x.iter().collect();
    let mut ys: Vec<(&String, &Value)> = y.iter().collect();
    xs.sort_unstable_by(|p, q| p.0.cmp(q.0));
    ys.sort_unstable_by(|p, q| p.0.cmp(q.0));
    let names = xs.iter().map(|p| p.0).cmp(ys.iter().map(|q| q.0));
    if names.is_ne() {
        return names;
    }
    for ((_, p), (_, q)) in xs.iter().zip(&ys) {
        let order = compare(p, q);
        if order.is_ne() {
            return order;
        }
    }
    Ordering::Equal
}

/// The indices `(first, second)` of two equal elements of `items`, or `None` when all are
/// distinct. `second` is the smallest index that repeats an earlier element and `first`
/// the earliest element it repeats. Runs in O(n log n) comparisons.
pub(crate) fn find_duplicate(items: &[Value]) -> Option<(usize, usize)> {
    let mut order: Vec<usize> = (0..items.len()).collect();
    // A stable sort keeps each run of equal elements in ascending index order, so a run's
    // first two entries are its earliest element and the earliest repeat of it.
    order.sort_by(|&p, &q| compare(&items[p], &items[q]));
    order
        .windows(2)
        .enumerate()
        .filter(|(_, pair)| compare(&items[pair[0]], &items[pair[1]]).is_eq())
        .filter(|(at, pair)| {
            // Only the start of a run: the previous element differs.
            *at == 0 || compare(&items[order[at - 1]], &items[pair[0]]).is_ne()
        })
        .map(|(_, pair)| (pair[0], pair[1]))
        .min_by_key(|&(_, second)| second)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(text: &str) -> Value {
        serde_json::from_str(text).expect("valid JSON")
    }

    /// Values that cover every type, equal pairs across representations, and near misses.
    fn samples() -> Vec<Value> {
        [
            "null",
            "false",
            "true",
            "0",
            "-0.0",
            "1",
            "1.0",
            "-2",
            "-2.0",
            "1.5",
            "9007199254740992",
            "9007199254740992.0",
            "9007199254740993",
            "18446744073709551615",
            "1e30",
            "\"\"",
            "\"a\"",
            "\"a\\u0000\"",
            "[]",
            "[1]",
            "[1.0]",
            "[true]",
            "[1, 2]",
            "[[1], 2]",
            "{}",
            "{\"a\": 1}",
            "{\"a\": 1.0}",
            "{\"a\": true}",
            "{\"b\": 1}",
            "{\"a\": 1, \"b\": [false]}",
            "{\"b\": [false], \"a\": 1.0}",
        ]
        .iter()
        .map(|text| parse(text))
        .collect()
    }

    #[test]
    fn numbers_equal_across_representations_but_not_booleans() {
        assert!(json_equal(&parse("1"), &parse("1.0")));
        assert!(json_equal(&parse("-2"), &parse("-2.0")));
        assert!(json_equal(
            &parse("9007199254740992"),
            &parse("9007199254740992.0")
        ));
        assert!(!json_equal(
            &parse("9007199254740991"),
            &parse("9007199254740992.0")
        ));
        assert!(!json_equal(&json!(false), &json!(0)));
        assert!(!json_equal(&json!(true), &json!(1)));
        assert!(!json_equal(&json!([false]), &json!([0])));
        assert!(!json_equal(&json!({"a": true}), &json!({"a": 1})));
        assert!(json_equal(
            &parse("{\"a\": [1, {\"b\": 2}]}"),
            &parse("{\"a\": [1.0, {\"b\": 2.0}]}")
        ));
        assert!(!json_equal(&json!({"a": 1}), &json!({"a": 1, "b": 2})));
        assert!(!json_equal(&json!([1]), &json!([1, 1])));
        assert!(!json_equal(&json!(null), &json!(false)));
    }

    #[test]
    fn order_agrees_with_equality_and_is_antisymmetric() {
        let values = samples();
        for a in &values {
            for b in &values {
                assert_eq!(
                    compare(a, b).is_eq(),
                    json_equal(a, b),
                    "compare and json_equal disagree on {a} and {b}"
                );
                assert_eq!(compare(a, b), compare(b, a).reverse(), "{a} vs {b}");
            }
        }
    }

    #[test]
    fn order_is_transitive_on_samples() {
        let values = samples();
        for a in &values {
            for b in &values {
                for c in &values {
                    if compare(a, b).is_le() && compare(b, c).is_le() {
                        assert!(compare(a, c).is_le(), "{a} <= {b} <= {c}");
                    }
                }
            }
        }
    }

    #[test]
    fn duplicates_are_found_with_their_first_indices() {
        assert_eq!(find_duplicate(&[]), None);
        assert_eq!(find_duplicate(&[json!(1), json!(true), json!("1")]), None);
        assert_eq!(
            find_duplicate(&[json!(3), json!(1), json!(2), json!(1.0), json!(3)]),
            Some((1, 3))
        );
        assert_eq!(
            find_duplicate(&[json!({"a": [1]}), json!(0), json!({"a": [1.0]})]),
            Some((0, 2))
        );
        assert_eq!(
            find_duplicate(&[json!(0), json!(false), json!([0]), json!([false])]),
            None
        );
    }
}
