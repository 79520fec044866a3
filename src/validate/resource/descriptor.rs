//! A tool definition's `operation` descriptor (section 2.26,
//! `operation_descriptors_v1`): a closed object with `id`, an optional `receiver`,
//! `resource_inputs` (`{path, type, access:"exclusive"}`) and `resource_outputs`
//! (`{path, type}`).
//!
//! Each path is a fixed JSON Pointer that walks object `properties` of the tool's
//! schema (`parameters` for inputs, `output_schema` for outputs) and ends at the exact
//! closed ResourceRef shape with the slot's type as a `const` or a singleton `enum`.
//! No array step, no wildcard, no open schema: what the host pins at dispatch and
//! activates at settlement is exactly what the descriptor names.

use std::fmt;

use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;
use serde_json::{Map, Value};

use super::{is_nominal_id, TypeId};
use crate::limits::{MAX_OPERATION_PATH_SEGMENTS, MAX_OPERATION_RESOURCES};

/// A checked `operation` descriptor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OperationDescriptor {
    /// The operation id, under the nominal id rule.
    pub id: String,
    /// The input path the operation acts on, for presentation only: it is never an
    /// argument the host injects, nor authority.
    pub receiver: Option<PointerPath>,
    /// The resources the call takes, each pinned exclusively while it runs.
    pub resource_inputs: Vec<ResourceSlot>,
    /// The resources the call returns in its `structured_content`, activated when it
    /// settles successfully.
    pub resource_outputs: Vec<ResourceSlot>,
}

/// One input or output slot of a descriptor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourceSlot {
    /// Where the ResourceRef sits in the arguments or the structured content.
    pub path: PointerPath,
    /// Its nominal type.
    pub type_id: TypeId,
}

/// A fixed JSON Pointer through object members, such as `/board/circuit`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct PointerPath {
    text: String,
    segments: Vec<String>,
}

impl PointerPath {
    /// Reads a non-empty JSON Pointer (RFC 6901, with `~0` and `~1`) of at most
    /// [`MAX_OPERATION_PATH_SEGMENTS`] segments, none empty, `*` or `-`.
    pub fn parse(text: &str) -> Result<PointerPath, &'static str> {
        let Some(rest) = text.strip_prefix('/') else {
            return Err("a path is a JSON Pointer starting with `/`");
        };
        let mut segments = Vec::new();
        for raw in rest.split('/') {
            if segments.len() == MAX_OPERATION_PATH_SEGMENTS {
                return Err("a path has at most 32 segments");
            }
            let mut segment = String::with_capacity(raw.len());
            let mut chars = raw.chars();
            while let Some(c) = chars.next() {
                match c {
                    '~' => match chars.next() {
                        Some('0') => segment.push('~'),
                        Some('1') => segment.push('/'),
                        _ => return Err("`~` in a path must be followed by 0 or 1"),
                    },
                    c => segment.push(c),
                }
            }
            if segment.is_empty() {
                return Err("a path segment must not be empty");
            }
            if segment == "*" || segment == "-" {
                return Err("a path is fixed: no wildcard or array step");
            }
            segments.push(segment);
        }
        Ok(PointerPath {
            text: text.to_string(),
            segments,
        })
    }

    /// The pointer's text.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The value at this path of `value`, through object members only.
    pub fn lookup<'a>(&self, value: &'a Value) -> Option<&'a Value> {
        self.segments
            .iter()
            .try_fold(value, |at, segment| at.as_object()?.get(segment))
    }

    /// The schema this path reaches in `schema`, walking `properties` of object
    /// schemas only.
    fn schema_in<'a>(&self, schema: &'a Value) -> Result<&'a Value, &'static str> {
        let mut at = schema;
        for segment in &self.segments {
            let Some(map) = at.as_object() else {
                return Err("a step of the path is not a schema object");
            };
            if map.get("type").and_then(Value::as_str) != Some("object") {
                return Err("a step of the path is not an object schema (`type: \"object\"`)");
            }
            at = map
                .get("properties")
                .and_then(Value::as_object)
                .and_then(|properties| properties.get(segment))
                .ok_or("the schema has no such property")?;
        }
        Ok(at)
    }
}

impl fmt::Display for PointerPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl Serialize for OperationDescriptor {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("id", &self.id)?;
        if let Some(receiver) = &self.receiver {
            map.serialize_entry("receiver", receiver.as_str())?;
        }
        let inputs: Vec<Value> = self
            .resource_inputs
            .iter()
            .map(|slot| {
                serde_json::json!({
                    "path": slot.path.as_str(),
                    "type": slot.type_id.as_str(),
                    "access": "exclusive",
                })
            })
            .collect();
        map.serialize_entry("resource_inputs", &inputs)?;
        let outputs: Vec<Value> = self
            .resource_outputs
            .iter()
            .map(|slot| serde_json::json!({"path": slot.path.as_str(), "type": slot.type_id.as_str()}))
            .collect();
        map.serialize_entry("resource_outputs", &outputs)?;
        map.end()
    }
}

impl OperationDescriptor {
    /// True when the descriptor names any resource, which needs `resource_refs_v1` as
    /// well as `operation_descriptors_v1`.
    pub fn is_resource_bearing(&self) -> bool {
        !self.resource_inputs.is_empty() || !self.resource_outputs.is_empty()
    }

    /// Checks `value` as the `operation` of a tool whose schemas are `parameters` and
    /// `output_schema`; `resource_refs` says whether `resource_refs_v1` was negotiated.
    pub fn parse(
        value: &Value,
        parameters: &Value,
        output_schema: Option<&Value>,
        resource_refs: bool,
    ) -> Result<OperationDescriptor, DescriptorProblem> {
        let map = value.as_object().ok_or(DescriptorProblem::NotAnObject)?;
        closed(
            map,
            "operation",
            &["id", "receiver", "resource_inputs", "resource_outputs"],
        )?;
        let id = match map.get("id") {
            None => return Err(missing("operation", "id")),
            Some(Value::String(id)) if is_nominal_id(id) => id.clone(),
            Some(_) => return Err(DescriptorProblem::InvalidId),
        };
        let resource_inputs = slots(map, "resource_inputs", parameters, true)?;
        let declares_outputs = map
            .get("resource_outputs")
            .and_then(Value::as_array)
            .is_some_and(|outputs| !outputs.is_empty());
        if declares_outputs && output_schema.is_none() {
            return Err(DescriptorProblem::OutputsWithoutOutputSchema);
        }
        let resource_outputs = slots(
            map,
            "resource_outputs",
            output_schema.unwrap_or(&Value::Null),
            false,
        )?;
        let receiver = match map.get("receiver") {
            None => None,
            Some(Value::String(text)) => {
                let path = resource_inputs
                    .iter()
                    .find(|slot| slot.path.as_str() == text)
                    .map(|slot| slot.path.clone())
                    .ok_or_else(|| DescriptorProblem::ReceiverNotInput {
                        receiver: text.clone(),
                    })?;
                Some(path)
            }
            Some(_) => return Err(wrong_type("operation", "receiver")),
        };
        let descriptor = OperationDescriptor {
            id,
            receiver,
            resource_inputs,
            resource_outputs,
        };
        if descriptor.is_resource_bearing() && !resource_refs {
            return Err(DescriptorProblem::NeedsResourceRefs);
        }
        Ok(descriptor)
    }
}

/// The slots of `list` (`resource_inputs` or `resource_outputs`), each checked against
/// `schema`.
fn slots(
    map: &Map<String, Value>,
    list: &'static str,
    schema: &Value,
    input: bool,
) -> Result<Vec<ResourceSlot>, DescriptorProblem> {
    let entries = match map.get(list) {
        None => return Err(missing("operation", list)),
        Some(Value::Array(entries)) => entries,
        Some(_) => return Err(wrong_type("operation", list)),
    };
    if entries.len() > MAX_OPERATION_RESOURCES {
        return Err(DescriptorProblem::TooMany { list });
    }
    let mut slots: Vec<ResourceSlot> = Vec::with_capacity(entries.len());
    for (i, entry) in entries.iter().enumerate() {
        let at = format!("{list}[{i}]");
        let entry = entry
            .as_object()
            .ok_or_else(|| DescriptorProblem::WrongType {
                at: list.to_string(),
                member: "entries",
            })?;
        let members: &[&str] = if input {
            &["path", "type", "access"]
        } else {
            &["path", "type"]
        };
        closed(entry, &at, members)?;
        if input {
            match entry.get("access") {
                None => return Err(missing(&at, "access")),
                Some(Value::String(access)) if access == "exclusive" => {}
                Some(_) => return Err(DescriptorProblem::InvalidAccess { at }),
            }
        }
        let text = match entry.get("path") {
            None => return Err(missing(&at, "path")),
            Some(Value::String(text)) => text,
            Some(_) => return Err(wrong_type(&at, "path")),
        };
        let path_problem = |why: &'static str| DescriptorProblem::Path {
            at: at.clone(),
            path: text.clone(),
            why,
        };
        let path = PointerPath::parse(text).map_err(path_problem)?;
        let type_id = match entry.get("type") {
            None => return Err(missing(&at, "type")),
            Some(Value::String(text)) => TypeId::parse(text)
                .ok_or_else(|| DescriptorProblem::InvalidType { at: at.clone() })?,
            Some(_) => return Err(DescriptorProblem::InvalidType { at }),
        };
        if slots.iter().any(|slot| slot.path == path) {
            return Err(DescriptorProblem::DuplicatePath {
                at,
                path: text.clone(),
            });
        }
        let slot_schema = path.schema_in(schema).map_err(path_problem)?;
        check_ref_schema(slot_schema, &type_id).map_err(|why| match why {
            RefSchemaProblem::Open(why) => DescriptorProblem::OpenSchema {
                at: at.clone(),
                path: text.clone(),
                why,
            },
            RefSchemaProblem::OtherType(found) => DescriptorProblem::TypeMismatch {
                at: at.clone(),
                declared: type_id.to_string(),
                found,
            },
        })?;
        slots.push(ResourceSlot { path, type_id });
    }
    Ok(slots)
}

/// Why a slot's schema is not the closed ResourceRef of its type.
enum RefSchemaProblem {
    /// Not the exact closed shape (the fixed reason).
    Open(String),
    /// The shape names another type (as JSON text).
    OtherType(String),
}

/// Checks that `schema` declares exactly the closed ResourceRef of `type_id`:
/// `type: "object"`, the properties `$resource` (a string) and `type` (the type as a
/// `const` or a singleton `enum`), both required, and `additionalProperties: false`.
/// Annotations (`title`, `description`) and string bounds on the token are allowed.
fn check_ref_schema(schema: &Value, type_id: &TypeId) -> Result<(), RefSchemaProblem> {
    let open = |why: &str| RefSchemaProblem::Open(why.to_string());
    let map = schema
        .as_object()
        .ok_or_else(|| open("the schema is not an object"))?;
    if let Some(keyword) = map.keys().find(|k| {
        !matches!(
            k.as_str(),
            "type" | "properties" | "required" | "additionalProperties" | "title" | "description"
        )
    }) {
        return Err(RefSchemaProblem::Open(format!(
            "the schema has `{keyword}`, which a closed ResourceRef does not"
        )));
    }
    if map.get("type").and_then(Value::as_str) != Some("object") {
        return Err(open("the schema must say `type: \"object\"`"));
    }
    if map.get("additionalProperties") != Some(&Value::Bool(false)) {
        return Err(open(
            "the schema must say `additionalProperties: false` (an open schema is refused)",
        ));
    }
    let properties = map
        .get("properties")
        .and_then(Value::as_object)
        .ok_or_else(|| open("the schema must list `properties`"))?;
    if properties.len() != 2 || !properties.contains_key("$resource") {
        return Err(open(
            "the schema's properties must be exactly `$resource` and `type`",
        ));
    }
    let required: Vec<&str> = map
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if required.len() != 2 || !required.contains(&"$resource") || !required.contains(&"type") {
        return Err(open(
            "the schema must require exactly `$resource` and `type`",
        ));
    }
    let token = properties["$resource"]
        .as_object()
        .ok_or_else(|| open("`$resource` must be a string schema"))?;
    if token.get("type").and_then(Value::as_str) != Some("string")
        || token.keys().any(|k| {
            !matches!(
                k.as_str(),
                "type" | "title" | "description" | "minLength" | "maxLength" | "pattern"
            )
        })
    {
        return Err(open("`$resource` must be a plain string schema"));
    }
    let type_schema = properties
        .get("type")
        .and_then(Value::as_object)
        .ok_or_else(|| open("the schema's properties must be exactly `$resource` and `type`"))?;
    if type_schema.keys().any(|k| {
        !matches!(
            k.as_str(),
            "type" | "const" | "enum" | "title" | "description"
        )
    }) || type_schema
        .get("type")
        .is_some_and(|t| t.as_str() != Some("string"))
    {
        return Err(open(
            "`type` must be a string `const` or singleton `enum` and nothing else",
        ));
    }
    let named = match (type_schema.get("const"), type_schema.get("enum")) {
        (Some(constant), None) => constant,
        (None, Some(Value::Array(values))) if values.len() == 1 => &values[0],
        _ => {
            return Err(open(
                "`type` must be a `const` or a singleton `enum` naming the type",
            ))
        }
    };
    if named.as_str() != Some(type_id.as_str()) {
        return Err(RefSchemaProblem::OtherType(named.to_string()));
    }
    Ok(())
}

fn closed(map: &Map<String, Value>, at: &str, members: &[&str]) -> Result<(), DescriptorProblem> {
    match map.keys().find(|k| !members.contains(&k.as_str())) {
        Some(name) => Err(DescriptorProblem::UnknownMember {
            at: at.to_string(),
            name: name.clone(),
        }),
        None => Ok(()),
    }
}

fn missing(at: &str, member: &'static str) -> DescriptorProblem {
    DescriptorProblem::Missing {
        at: at.to_string(),
        member,
    }
}

fn wrong_type(at: &str, member: &'static str) -> DescriptorProblem {
    DescriptorProblem::WrongType {
        at: at.to_string(),
        member,
    }
}

/// Why an `operation` descriptor is refused. `at` names the descriptor's member, such
/// as `resource_inputs[1]`.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DescriptorProblem {
    /// `operation` is not an object.
    NotAnObject,
    /// A member outside the closed shape.
    UnknownMember {
        /// The object holding it.
        at: String,
        /// The member's name.
        name: String,
    },
    /// A required member is absent.
    Missing {
        /// The object that lacks it.
        at: String,
        /// The member's name.
        member: &'static str,
    },
    /// A member has the wrong JSON type.
    WrongType {
        /// The object holding it.
        at: String,
        /// The member's name.
        member: &'static str,
    },
    /// `id` breaks the nominal id rule.
    InvalidId,
    /// A slot's `type` breaks the nominal id rule.
    InvalidType {
        /// The slot.
        at: String,
    },
    /// An input's `access` is not `"exclusive"`.
    InvalidAccess {
        /// The slot.
        at: String,
    },
    /// `resource_inputs` or `resource_outputs` has more than
    /// [`MAX_OPERATION_RESOURCES`] entries.
    TooMany {
        /// The list.
        list: &'static str,
    },
    /// A path is not a fixed pointer through the schema's object properties.
    Path {
        /// The slot.
        at: String,
        /// The path as sent.
        path: String,
        /// Why.
        why: &'static str,
    },
    /// Two slots of one list name the same path.
    DuplicatePath {
        /// The second slot.
        at: String,
        /// The path.
        path: String,
    },
    /// The schema at a path is not the exact closed ResourceRef shape.
    OpenSchema {
        /// The slot.
        at: String,
        /// The path.
        path: String,
        /// What is wrong with it.
        why: String,
    },
    /// The schema at a path names another type than the slot.
    TypeMismatch {
        /// The slot.
        at: String,
        /// The slot's type.
        declared: String,
        /// The type the schema names, as JSON text.
        found: String,
    },
    /// `receiver` names no input path.
    ReceiverNotInput {
        /// The receiver as sent.
        receiver: String,
    },
    /// Outputs are declared for a tool without an `output_schema`.
    OutputsWithoutOutputSchema,
    /// A resource-bearing descriptor without `resource_refs_v1`.
    NeedsResourceRefs,
}

impl fmt::Display for DescriptorProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DescriptorProblem::NotAnObject => f.write_str("`operation` must be an object"),
            DescriptorProblem::UnknownMember { at, name } => {
                write!(f, "`{at}` has the unknown member `{name}`")
            }
            DescriptorProblem::Missing { at, member } => write!(f, "`{at}` needs `{member}`"),
            DescriptorProblem::WrongType { at, member } => {
                write!(f, "`{at}.{member}` has the wrong type")
            }
            DescriptorProblem::InvalidId => f.write_str(
                "`id` must be 1 to 128 ASCII bytes: a letter, then letters, digits, `_`, `.` or `-`",
            ),
            DescriptorProblem::InvalidType { at } => write!(
                f,
                "`{at}.type` must be 1 to 128 ASCII bytes: a letter, then letters, digits, `_`, `.` or `-`"
            ),
            DescriptorProblem::InvalidAccess { at } => {
                write!(f, "`{at}.access` must be \"exclusive\"")
            }
            DescriptorProblem::TooMany { list } => {
                write!(f, "`{list}` has more than {MAX_OPERATION_RESOURCES} entries")
            }
            DescriptorProblem::Path { at, path, why } => {
                write!(f, "`{at}.path` {path:?}: {why}")
            }
            DescriptorProblem::DuplicatePath { at, path } => {
                write!(f, "`{at}.path` {path:?} appears twice")
            }
            DescriptorProblem::OpenSchema { at, path, why } => write!(
                f,
                "`{at}.path` {path:?} is not the closed ResourceRef shape: {why}"
            ),
            DescriptorProblem::TypeMismatch { at, declared, found } => write!(
                f,
                "`{at}` declares type `{declared}` but its schema names {found}"
            ),
            DescriptorProblem::ReceiverNotInput { receiver } => {
                write!(f, "`receiver` {receiver:?} names no resource input path")
            }
            DescriptorProblem::OutputsWithoutOutputSchema => f.write_str(
                "`resource_outputs` need an `output_schema` for the paths to walk",
            ),
            DescriptorProblem::NeedsResourceRefs => f.write_str(
                "a descriptor with resource inputs or outputs needs `resource_refs_v1` as well",
            ),
        }
    }
}

impl std::error::Error for DescriptorProblem {}
