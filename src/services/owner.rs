//! Resource owners: the `{session_id, extension_instance_id, process_generation}` triple
//! the host issues in execution contexts (section 1.2) and checks wherever an
//! extension hands one back (sections 2, 2.5, 2.21b).

use std::fmt;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::limits::MAX_ID_STRING_BYTES;

/// The host-issued owner of session-scoped extension state. Key state by all three
/// fields: `extension_instance_id` changes with every host build, `process_generation`
/// with every restart or reload within one build.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
pub struct ResourceOwner {
    /// The durable session namespace.
    pub session_id: String,
    /// The host build's fence.
    pub extension_instance_id: String,
    /// The process generation it was issued to.
    pub process_generation: u64,
}

/// Why a `resource_owner` value is malformed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OwnerError {
    /// Not an object.
    NotAnObject,
    /// A member is missing or of the wrong type.
    BadMember {
        /// The member's name.
        member: &'static str,
    },
    /// A member that is not part of the triple.
    UnknownMember {
        /// The member's name.
        member: String,
    },
}

impl fmt::Display for OwnerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OwnerError::NotAnObject => f.write_str("resource_owner must be an object"),
            OwnerError::BadMember { member } => {
                write!(f, "resource_owner.{member} is missing or of the wrong type")
            }
            OwnerError::UnknownMember { member } => {
                write!(f, "resource_owner has an unknown member `{member}`")
            }
        }
    }
}

impl std::error::Error for OwnerError {}

impl ResourceOwner {
    /// The triple as a JSON object.
    pub fn to_value(&self) -> Value {
        let mut map = Map::new();
        map.insert("session_id".into(), Value::from(self.session_id.as_str()));
        map.insert(
            "extension_instance_id".into(),
            Value::from(self.extension_instance_id.as_str()),
        );
        map.insert(
            "process_generation".into(),
            Value::from(self.process_generation),
        );
        Value::Object(map)
    }

    /// Parses a triple an extension sent back. The object is closed: exactly the three
    /// members, strings of at most 256 bytes and an unsigned generation. Whether the
    /// triple was really issued is for the caller to check.
    pub fn parse(value: &Value) -> Result<ResourceOwner, OwnerError> {
        let Value::Object(map) = value else {
            return Err(OwnerError::NotAnObject);
        };
        if let Some(member) = map.keys().find(|k| {
            !matches!(
                k.as_str(),
                "session_id" | "extension_instance_id" | "process_generation"
            )
        }) {
            return Err(OwnerError::UnknownMember {
                member: member.clone(),
            });
        }
        let text = |member: &'static str| match map.get(member) {
            Some(Value::String(s)) if s.len() <= MAX_ID_STRING_BYTES => Ok(s.clone()),
            _ => Err(OwnerError::BadMember { member }),
        };
        let process_generation = map
            .get("process_generation")
            .and_then(Value::as_u64)
            .ok_or(OwnerError::BadMember {
                member: "process_generation",
            })?;
        Ok(ResourceOwner {
            session_id: text("session_id")?,
            extension_instance_id: text("extension_instance_id")?,
            process_generation,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn round_trips_and_rejects_strangers() {
        let owner = ResourceOwner {
            session_id: "s".into(),
            extension_instance_id: "i".into(),
            process_generation: 3,
        };
        assert_eq!(ResourceOwner::parse(&owner.to_value()), Ok(owner));
        assert_eq!(
            ResourceOwner::parse(&json!([])),
            Err(OwnerError::NotAnObject)
        );
        assert_eq!(
            ResourceOwner::parse(
                &json!({"session_id": "s", "extension_instance_id": "i", "process_generation": -1})
            ),
            Err(OwnerError::BadMember {
                member: "process_generation"
            })
        );
        assert_eq!(
            ResourceOwner::parse(&json!({"session_id": "s", "extension_instance_id": "i",
                "process_generation": 1, "extra": 1})),
            Err(OwnerError::UnknownMember {
                member: "extra".into()
            })
        );
    }
}
