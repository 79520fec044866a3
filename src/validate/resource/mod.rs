//! Resource refs and operation descriptors (section 2.26, API 0.4 `resource_refs_v1`,
//! `operation_descriptors_v1`): the closed values and their rules, checked without any
//! host state.
//!
//! - [`ResourceRef`]: the closed `{"$resource": token, "type": TypeId}` value that
//!   stands for an extension-local native object. The object never leaves the
//!   extension; the host only tracks its token.
//! - [`OperationDescriptor`] (`descriptor`): a tool definition's `operation`, checked
//!   against the tool's own `parameters` and `output_schema` when the catalog is
//!   published (at `initialize` and at every `tools/register`).
//!
//! What a token names, who holds it and when it is pinned is the host's record
//! (`features::resources`), not part of the value.

mod descriptor;
#[cfg(test)]
mod tests;

use std::fmt;

use serde::Serialize;
use serde_json::{json, Value};

pub use descriptor::{DescriptorProblem, OperationDescriptor, PointerPath, ResourceSlot};

use crate::limits::{MAX_RESOURCE_TOKEN_BYTES, MAX_RESOURCE_TYPE_BYTES};

/// A nominal resource type id such as `Circuit` (section 2.26): 1–128 ASCII bytes, a
/// letter first, then letters, digits, `_`, `.` or `-`. Two types are the same only
/// when their ids are byte-equal.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct TypeId(String);

impl TypeId {
    /// The id, when `text` follows the rule.
    pub fn parse(text: &str) -> Option<TypeId> {
        is_nominal_id(text).then(|| TypeId(text.to_string()))
    }

    /// The id's text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for TypeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// True when `text` follows the nominal id rule of section 2.26, which operation ids
/// share.
pub(crate) fn is_nominal_id(text: &str) -> bool {
    let bytes = text.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= MAX_RESOURCE_TYPE_BYTES
        && bytes[0].is_ascii_alphabetic()
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

/// The closed value `{"$resource": token, "type": TypeId}` (section 2.26).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ResourceRef {
    /// The opaque host token: 1–128 printable ASCII bytes.
    pub token: String,
    /// The nominal type.
    pub type_id: TypeId,
}

impl ResourceRef {
    /// Reads a ResourceRef: exactly the two members, a token of 1–128 printable ASCII
    /// bytes and a type id that follows the nominal rule.
    pub fn parse(value: &Value) -> Result<ResourceRef, RefProblem> {
        let Value::Object(map) = value else {
            return Err(RefProblem::NotAnObject);
        };
        if let Some(name) = map.keys().find(|k| *k != "$resource" && *k != "type") {
            return Err(RefProblem::UnknownMember { name: name.clone() });
        }
        let token = match map.get("$resource") {
            None => return Err(RefProblem::MissingToken),
            Some(Value::String(token)) if is_token(token) => token.clone(),
            Some(_) => return Err(RefProblem::InvalidToken),
        };
        let type_id = match map.get("type") {
            None => return Err(RefProblem::MissingType),
            Some(Value::String(text)) => TypeId::parse(text).ok_or(RefProblem::InvalidType)?,
            Some(_) => return Err(RefProblem::InvalidType),
        };
        Ok(ResourceRef { token, type_id })
    }

    /// The wire value.
    pub fn to_value(&self) -> Value {
        json!({"$resource": self.token, "type": self.type_id.as_str()})
    }
}

/// True when `token` may be a host token (`$resource`, `$blob`): 1–128 printable
/// ASCII bytes.
pub(crate) fn is_token(token: &str) -> bool {
    !token.is_empty()
        && token.len() <= MAX_RESOURCE_TOKEN_BYTES
        && token.bytes().all(|b| b.is_ascii_graphic())
}

/// Why a value is not a ResourceRef.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RefProblem {
    /// The value is not a JSON object.
    NotAnObject,
    /// A member other than `$resource` and `type`.
    UnknownMember {
        /// The member's name.
        name: String,
    },
    /// `$resource` is absent.
    MissingToken,
    /// `$resource` is not a string of 1–128 printable ASCII bytes.
    InvalidToken,
    /// `type` is absent.
    MissingType,
    /// `type` is not a nominal type id.
    InvalidType,
}

impl fmt::Display for RefProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RefProblem::NotAnObject => f.write_str("a resource ref must be an object"),
            RefProblem::UnknownMember { name } => write!(
                f,
                "a resource ref has exactly `$resource` and `type`, not `{name}`"
            ),
            RefProblem::MissingToken => f.write_str("a resource ref needs `$resource`"),
            RefProblem::InvalidToken => write!(
                f,
                "`$resource` must be a token of 1 to {MAX_RESOURCE_TOKEN_BYTES} printable ASCII bytes"
            ),
            RefProblem::MissingType => f.write_str("a resource ref needs `type`"),
            RefProblem::InvalidType => write!(
                f,
                "`type` must be 1 to {MAX_RESOURCE_TYPE_BYTES} ASCII bytes: a letter, then \
                 letters, digits, `_`, `.` or `-`"
            ),
        }
    }
}

impl std::error::Error for RefProblem {}
