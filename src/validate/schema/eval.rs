//! Validating an instance against a compiled [`Node`] tree.
//!
//! Work is bounded. The instance is first checked against the structured-content bounds
//! of section 1.2 ([`MAX_JSON_DEPTH`] container levels, [`MAX_JSON_NODES`] nodes), so
//! every later recursion, including equality, is at most that deep. A schema node is
//! evaluated at most once per instance node it reaches, so a validation costs
//! O(schema nodes x instance nodes) keyword checks; `uniqueItems` sorts (O(n log n)
//! comparisons) instead of comparing every pair.
//!
//! Within a schema object the keywords are checked in a fixed order (type, const, enum,
//! numeric bounds, string lengths, array keywords then `items`, object keywords then
//! `properties`/`additionalProperties` in the instance's member order, then `allOf`,
//! `anyOf`, `oneOf`) and the first failure is reported.

use std::cmp::Ordering;

use serde_json::{Map, Value};

use super::compile::{Bound, Keywords, Node};
use super::equal::{find_duplicate, json_equal};
use super::error::{ValidationError, ValidationErrorKind as Kind};
use super::keyword::{JsonType, Keyword};
use super::number::Num;
use super::pointer::InstancePath;
use crate::limits::{MAX_JSON_DEPTH, MAX_JSON_NODES};

type Outcome = Result<(), ValidationError>;

/// Validates `instance` against the root node.
pub(crate) fn validate(root: &Node, instance: &Value) -> Outcome {
    let mut nodes = 0;
    check_bounds(instance, &InstancePath::Root, 0, &mut nodes)?;
    evaluate(root, instance, &InstancePath::Root, None)
}

/// Checks the instance bounds. `enclosing` is how many containers hold `value`.
fn check_bounds(
    value: &Value,
    path: &InstancePath<'_>,
    enclosing: usize,
    nodes: &mut usize,
) -> Outcome {
    *nodes += 1;
    if *nodes > MAX_JSON_NODES {
        return Err(ValidationError {
            instance_path: String::new(),
            kind: Kind::TooManyNodes {
                limit: MAX_JSON_NODES,
            },
        });
    }
    let is_container = value.is_array() || value.is_object();
    if is_container && enclosing + 1 > MAX_JSON_DEPTH {
        return Err(fail(
            path,
            Kind::TooDeep {
                limit: MAX_JSON_DEPTH,
            },
        ));
    }
    match value {
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                check_bounds(
                    item,
                    &InstancePath::Element(path, index),
                    enclosing + 1,
                    nodes,
                )?;
            }
        }
        Value::Object(members) => {
            for (name, member) in members {
                check_bounds(
                    member,
                    &InstancePath::Member(path, name),
                    enclosing + 1,
                    nodes,
                )?;
            }
        }
        _ => {}
    }
    Ok(())
}

fn fail(path: &InstancePath<'_>, kind: Kind) -> ValidationError {
    ValidationError {
        instance_path: path.render(),
        kind,
    }
}

/// Evaluates `node` on `value`. `via` is the applicator keyword that applied `node`, for
/// reporting a `false` schema.
fn evaluate(node: &Node, value: &Value, path: &InstancePath<'_>, via: Option<Keyword>) -> Outcome {
    match node {
        Node::Bool(true) => Ok(()),
        Node::Bool(false) => Err(fail(path, Kind::FalseSchema { via })),
        Node::Object(keywords) => evaluate_keywords(keywords, value, path),
    }
}

fn evaluate_keywords(k: &Keywords, value: &Value, path: &InstancePath<'_>) -> Outcome {
    if let Some(types) = &k.types {
        let found = type_of(value);
        let matches = types
            .iter()
            .any(|&ty| ty == found || (ty == JsonType::Number && found == JsonType::Integer));
        if !matches {
            return Err(fail(
                path,
                Kind::Type {
                    expected: types.clone(),
                    found,
                },
            ));
        }
    }
    if let Some(constant) = &k.constant {
        if !json_equal(constant, value) {
            return Err(fail(path, Kind::Const));
        }
    }
    if let Some(values) = &k.enumeration {
        if !values.iter().any(|v| json_equal(v, value)) {
            return Err(fail(path, Kind::Enum));
        }
    }
    match value {
        Value::Number(n) => check_number(k, Num::new(n), path)?,
        Value::String(s) => check_string(k, s, path)?,
        Value::Array(items) => check_array(k, items, path)?,
        Value::Object(members) => check_object(k, members, path)?,
        Value::Null | Value::Bool(_) => {}
    }
    for node in &k.all_of {
        evaluate(node, value, path, Some(Keyword::AllOf))?;
    }
    if !k.any_of.is_empty()
        && !k
            .any_of
            .iter()
            .any(|node| evaluate(node, value, path, None).is_ok())
    {
        return Err(fail(path, Kind::AnyOf));
    }
    if !k.one_of.is_empty() {
        let mut accepted = k
            .one_of
            .iter()
            .enumerate()
            .filter(|(_, node)| evaluate(node, value, path, None).is_ok())
            .map(|(index, _)| index);
        match (accepted.next(), accepted.next()) {
            (None, _) => return Err(fail(path, Kind::OneOfNone)),
            (Some(first), Some(second)) => {
                return Err(fail(path, Kind::OneOfMultiple { first, second }))
            }
            (Some(_), None) => {}
        }
    }
    Ok(())
}

/// The instance's type; integral numbers (`1`, `1.0`, integers beyond 64 bits) are
/// `integer`.
fn type_of(value: &Value) -> JsonType {
    match value {
        Value::Null => JsonType::Null,
        Value::Bool(_) => JsonType::Boolean,
        Value::Number(n) if Num::new(n).is_integer() => JsonType::Integer,
        Value::Number(_) => JsonType::Number,
        Value::String(_) => JsonType::String,
        Value::Array(_) => JsonType::Array,
        Value::Object(_) => JsonType::Object,
    }
}

fn check_number(k: &Keywords, n: Num, path: &InstancePath<'_>) -> Outcome {
    let fails = |bound: &Option<Bound>, holds: fn(Ordering) -> bool| {
        bound
            .as_ref()
            .filter(|b| !holds(n.compare(b.value)))
            .map(|b| b.written.clone())
    };
    if let Some(limit) = fails(&k.minimum, Ordering::is_ge) {
        return Err(fail(path, Kind::Minimum { limit }));
    }
    if let Some(limit) = fails(&k.maximum, Ordering::is_le) {
        return Err(fail(path, Kind::Maximum { limit }));
    }
    if let Some(limit) = fails(&k.exclusive_minimum, Ordering::is_gt) {
        return Err(fail(path, Kind::ExclusiveMinimum { limit }));
    }
    if let Some(limit) = fails(&k.exclusive_maximum, Ordering::is_lt) {
        return Err(fail(path, Kind::ExclusiveMaximum { limit }));
    }
    Ok(())
}

fn check_string(k: &Keywords, s: &str, path: &InstancePath<'_>) -> Outcome {
    if k.min_length.is_none() && k.max_length.is_none() {
        return Ok(());
    }
    // Unicode code points, not bytes or UTF-16 units.
    let length = s.chars().count() as u64;
    if let Some(limit) = k.min_length {
        if length < limit {
            return Err(fail(path, Kind::MinLength { limit, length }));
        }
    }
    if let Some(limit) = k.max_length {
        if length > limit {
            return Err(fail(path, Kind::MaxLength { limit, length }));
        }
    }
    Ok(())
}

fn check_array(k: &Keywords, items: &[Value], path: &InstancePath<'_>) -> Outcome {
    let count = items.len() as u64;
    if let Some(limit) = k.min_items {
        if count < limit {
            return Err(fail(path, Kind::MinItems { limit, count }));
        }
    }
    if let Some(limit) = k.max_items {
        if count > limit {
            return Err(fail(path, Kind::MaxItems { limit, count }));
        }
    }
    if k.unique_items {
        if let Some((first, second)) = find_duplicate(items) {
            return Err(fail(path, Kind::UniqueItems { first, second }));
        }
    }
    if let Some(node) = &k.items {
        for (index, item) in items.iter().enumerate() {
            evaluate(
                node,
                item,
                &InstancePath::Element(path, index),
                Some(Keyword::Items),
            )?;
        }
    }
    Ok(())
}

fn check_object(k: &Keywords, members: &Map<String, Value>, path: &InstancePath<'_>) -> Outcome {
    let count = members.len() as u64;
    if let Some(limit) = k.min_properties {
        if count < limit {
            return Err(fail(path, Kind::MinProperties { limit, count }));
        }
    }
    if let Some(limit) = k.max_properties {
        if count > limit {
            return Err(fail(path, Kind::MaxProperties { limit, count }));
        }
    }
    if let Some(missing) = k.required.iter().find(|name| !members.contains_key(*name)) {
        return Err(fail(
            path,
            Kind::Required {
                property: missing.clone(),
            },
        ));
    }
    for (name, member) in members {
        let member_path = InstancePath::Member(path, name);
        // additionalProperties covers only names absent from this schema's own
        // properties, never names that sibling allOf subschemas list.
        match k.properties.get(name) {
            Some(node) => evaluate(node, member, &member_path, Some(Keyword::Properties))?,
            None => {
                if let Some(node) = &k.additional_properties {
                    evaluate(
                        node,
                        member,
                        &member_path,
                        Some(Keyword::AdditionalProperties),
                    )?;
                }
            }
        }
    }
    Ok(())
}
