//! Turning an `output_schema` value into a checked [`Node`] tree, once.
//!
//! Compilation runs two passes. The first walks every subschema position (section 1.1's
//! walk: `properties{*}`, `additionalProperties`, `items`, `allOf`/`anyOf`/`oneOf[*]`)
//! looking only for vocabulary outside the subset, so an unsupported keyword anywhere is
//! reported as such even when some other part of the schema is also malformed. The second
//! pass checks every keyword value and builds the tree. Both stop descending at
//! [`MAX_JSON_DEPTH`] schema levels, so their recursion is bounded.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Number, Value};

use super::error::{Expected, SchemaError};
use super::keyword::{JsonType, Keyword, DRAFT_2020_12};
use super::number::Num;
use super::pointer::child_path;
use crate::limits::{MAX_JSON_DEPTH, MAX_JSON_KEY_BYTES};

/// One compiled schema node.
#[derive(Clone, Debug)]
pub(crate) enum Node {
    /// `true` accepts everything; `false` rejects everything.
    Bool(bool),
    /// A schema object.
    Object(Box<Keywords>),
}

/// The validating keywords of one schema object. Annotations (`$schema`, `title`,
/// `description`, `default`, `examples`) are checked and dropped.
#[derive(Clone, Debug, Default)]
pub(crate) struct Keywords {
    pub(crate) types: Option<Vec<JsonType>>,
    pub(crate) constant: Option<Value>,
    pub(crate) enumeration: Option<Vec<Value>>,
    pub(crate) minimum: Option<Bound>,
    pub(crate) maximum: Option<Bound>,
    pub(crate) exclusive_minimum: Option<Bound>,
    pub(crate) exclusive_maximum: Option<Bound>,
    pub(crate) min_length: Option<u64>,
    pub(crate) max_length: Option<u64>,
    pub(crate) min_items: Option<u64>,
    pub(crate) max_items: Option<u64>,
    pub(crate) unique_items: bool,
    pub(crate) items: Option<Node>,
    pub(crate) min_properties: Option<u64>,
    pub(crate) max_properties: Option<u64>,
    pub(crate) required: Vec<String>,
    pub(crate) properties: BTreeMap<String, Node>,
    pub(crate) additional_properties: Option<Node>,
    pub(crate) all_of: Vec<Node>,
    pub(crate) any_of: Vec<Node>,
    pub(crate) one_of: Vec<Node>,
}

/// A numeric bound: the number as written (for messages) and its comparable form.
#[derive(Clone, Debug)]
pub(crate) struct Bound {
    pub(crate) written: Number,
    pub(crate) value: Num,
}

/// Compiles the schema document `schema`.
pub(crate) fn compile(schema: &Value) -> Result<Node, SchemaError> {
    check_vocabulary(schema, "", 1)?;
    compile_node(schema, "", 1)
}

// ---------------------------------------------------------------------------
// Pass 1: vocabulary.
// ---------------------------------------------------------------------------

/// Reports the first member outside the subset, or a foreign `$schema`, in the node at
/// `path` (at schema level `depth`) and its subschemas. Shapes are not checked here.
fn check_vocabulary(node: &Value, path: &str, depth: usize) -> Result<(), SchemaError> {
    let Value::Object(map) = node else {
        return Ok(());
    };
    if depth > MAX_JSON_DEPTH {
        // Pass 2 reports the depth.
        return Ok(());
    }
    for (name, value) in map {
        match Keyword::from_name(name) {
            None => {
                return Err(SchemaError::UnsupportedKeyword {
                    keyword: name.clone(),
                    path: path.to_owned(),
                })
            }
            Some(Keyword::Schema) => check_dialect(value, path)?,
            Some(_) => {}
        }
    }
    for (child, child_path) in subschemas(map, path) {
        check_vocabulary(child, &child_path, depth + 1)?;
    }
    Ok(())
}

/// Every subschema position of a schema object whose value has the walkable shape, with
/// its path.
fn subschemas<'v>(map: &'v Map<String, Value>, path: &str) -> Vec<(&'v Value, String)> {
    let mut out = Vec::new();
    if let Some(Value::Object(properties)) = map.get("properties") {
        let base = child_path(path, "properties");
        for (name, child) in properties {
            out.push((child, child_path(&base, name)));
        }
    }
    for keyword in ["additionalProperties", "items"] {
        if let Some(child) = map.get(keyword) {
            out.push((child, child_path(path, keyword)));
        }
    }
    for keyword in ["allOf", "anyOf", "oneOf"] {
        if let Some(Value::Array(children)) = map.get(keyword) {
            let base = child_path(path, keyword);
            for (index, child) in children.iter().enumerate() {
                out.push((child, child_path(&base, &index.to_string())));
            }
        }
    }
    out
}

/// A string `$schema` must be the 2020-12 meta-schema. Other shapes are left to pass 2.
fn check_dialect(value: &Value, path: &str) -> Result<(), SchemaError> {
    match value {
        Value::String(dialect) if dialect != DRAFT_2020_12 => {
            Err(SchemaError::UnsupportedDialect {
                dialect: dialect.clone(),
                path: path.to_owned(),
            })
        }
        _ => Ok(()),
    }
}

// ---------------------------------------------------------------------------
// Pass 2: shapes and the tree.
// ---------------------------------------------------------------------------

fn compile_node(node: &Value, path: &str, depth: usize) -> Result<Node, SchemaError> {
    if depth > MAX_JSON_DEPTH {
        return Err(SchemaError::TooDeep {
            path: path.to_owned(),
            limit: MAX_JSON_DEPTH,
        });
    }
    match node {
        Value::Bool(accept) => Ok(Node::Bool(*accept)),
        Value::Object(map) => Ok(Node::Object(Box::new(compile_keywords(map, path, depth)?))),
        _ => Err(SchemaError::NotASchema {
            path: path.to_owned(),
        }),
    }
}

/// Checks one schema object's keywords (at schema level `depth`) and compiles its
/// subschemas one level deeper.
fn compile_keywords(
    map: &Map<String, Value>,
    path: &str,
    depth: usize,
) -> Result<Keywords, SchemaError> {
    let mut out = Keywords::default();
    for (name, value) in map {
        let Some(keyword) = Keyword::from_name(name) else {
            return Err(SchemaError::UnsupportedKeyword {
                keyword: name.clone(),
                path: path.to_owned(),
            });
        };
        let invalid = |expected| SchemaError::InvalidKeywordValue {
            keyword,
            path: path.to_owned(),
            expected,
        };
        let subschema = |child: &Value| compile_node(child, &child_path(path, name), depth + 1);
        match keyword {
            Keyword::Schema => {
                if !value.is_string() {
                    return Err(invalid(Expected::String));
                }
                check_dialect(value, path)?;
            }
            Keyword::Title | Keyword::Description => {
                if !value.is_string() {
                    return Err(invalid(Expected::String));
                }
            }
            Keyword::Default => {}
            Keyword::Examples => {
                if !value.is_array() {
                    return Err(invalid(Expected::Array));
                }
            }
            Keyword::Type => out.types = Some(compile_type(value, path)?),
            Keyword::Properties => {
                let Value::Object(properties) = value else {
                    return Err(invalid(Expected::SchemaObject));
                };
                let base = child_path(path, name);
                for (property, child) in properties {
                    check_name_length(property, keyword, path)?;
                    let node = compile_node(child, &child_path(&base, property), depth + 1)?;
                    out.properties.insert(property.clone(), node);
                }
            }
            Keyword::Required => out.required = compile_required(value, path)?,
            Keyword::AdditionalProperties => out.additional_properties = Some(subschema(value)?),
            Keyword::Items => out.items = Some(subschema(value)?),
            Keyword::Enum => match value {
                Value::Array(values) => out.enumeration = Some(values.clone()),
                _ => return Err(invalid(Expected::Array)),
            },
            Keyword::Const => out.constant = Some(value.clone()),
            Keyword::AllOf | Keyword::AnyOf | Keyword::OneOf => {
                let nodes = match value {
                    Value::Array(children) if !children.is_empty() => {
                        let base = child_path(path, name);
                        children
                            .iter()
                            .enumerate()
                            .map(|(index, child)| {
                                compile_node(
                                    child,
                                    &child_path(&base, &index.to_string()),
                                    depth + 1,
                                )
                            })
                            .collect::<Result<Vec<Node>, SchemaError>>()?
                    }
                    _ => return Err(invalid(Expected::NonEmptySchemaArray)),
                };
                match keyword {
                    Keyword::AllOf => out.all_of = nodes,
                    Keyword::AnyOf => out.any_of = nodes,
                    _ => out.one_of = nodes,
                }
            }
            Keyword::Minimum
            | Keyword::Maximum
            | Keyword::ExclusiveMinimum
            | Keyword::ExclusiveMaximum => {
                let Value::Number(written) = value else {
                    return Err(invalid(Expected::Number));
                };
                let bound = Some(Bound {
                    written: written.clone(),
                    value: Num::new(written),
                });
                match keyword {
                    Keyword::Minimum => out.minimum = bound,
                    Keyword::Maximum => out.maximum = bound,
                    Keyword::ExclusiveMinimum => out.exclusive_minimum = bound,
                    _ => out.exclusive_maximum = bound,
                }
            }
            Keyword::MinLength
            | Keyword::MaxLength
            | Keyword::MinItems
            | Keyword::MaxItems
            | Keyword::MinProperties
            | Keyword::MaxProperties => {
                let count = match value {
                    Value::Number(n) => Num::new(n).as_count(),
                    _ => None,
                };
                let Some(count) = count else {
                    return Err(invalid(Expected::NonNegativeInteger));
                };
                let slot = match keyword {
                    Keyword::MinLength => &mut out.min_length,
                    Keyword::MaxLength => &mut out.max_length,
                    Keyword::MinItems => &mut out.min_items,
                    Keyword::MaxItems => &mut out.max_items,
                    Keyword::MinProperties => &mut out.min_properties,
                    _ => &mut out.max_properties,
                };
                *slot = Some(count);
            }
            Keyword::UniqueItems => match value {
                Value::Bool(unique) => out.unique_items = *unique,
                _ => return Err(invalid(Expected::Boolean)),
            },
        }
    }
    Ok(out)
}

/// `type`: one known name, or a non-empty array of distinct known names.
fn compile_type(value: &Value, path: &str) -> Result<Vec<JsonType>, SchemaError> {
    let invalid = || SchemaError::InvalidKeywordValue {
        keyword: Keyword::Type,
        path: path.to_owned(),
        expected: Expected::TypeNames,
    };
    let names: Vec<&Value> = match value {
        Value::String(_) => vec![value],
        Value::Array(names) if !names.is_empty() => names.iter().collect(),
        _ => return Err(invalid()),
    };
    let mut types = Vec::with_capacity(names.len());
    for name in names {
        let Value::String(name) = name else {
            return Err(invalid());
        };
        let Some(ty) = JsonType::from_name(name) else {
            return Err(SchemaError::UnknownType {
                path: path.to_owned(),
                name: name.clone(),
            });
        };
        if types.contains(&ty) {
            return Err(SchemaError::DuplicateType {
                path: path.to_owned(),
                name: ty,
            });
        }
        types.push(ty);
    }
    Ok(types)
}

/// `required`: an array of distinct property names, each within the name bound.
fn compile_required(value: &Value, path: &str) -> Result<Vec<String>, SchemaError> {
    let invalid = || SchemaError::InvalidKeywordValue {
        keyword: Keyword::Required,
        path: path.to_owned(),
        expected: Expected::StringArray,
    };
    let Value::Array(names) = value else {
        return Err(invalid());
    };
    let mut required: Vec<String> = Vec::with_capacity(names.len());
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    for name in names {
        let Value::String(name) = name else {
            return Err(invalid());
        };
        check_name_length(name, Keyword::Required, path)?;
        if !seen.insert(name) {
            return Err(SchemaError::DuplicateRequired {
                path: path.to_owned(),
                name: name.clone(),
            });
        }
        required.push(name.clone());
    }
    Ok(required)
}

fn check_name_length(name: &str, keyword: Keyword, path: &str) -> Result<(), SchemaError> {
    if name.len() > MAX_JSON_KEY_BYTES {
        return Err(SchemaError::PropertyNameTooLong {
            keyword,
            path: path.to_owned(),
            bytes: name.len(),
            limit: MAX_JSON_KEY_BYTES,
        });
    }
    Ok(())
}
