//! JSON-RPC request ids as the protocol allows them (section 2, section 2.2).

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::limits::MAX_ID_STRING_BYTES;

/// A request id: an unsigned 64-bit integer or a string of at most
/// [`MAX_ID_STRING_BYTES`] UTF-8 bytes.
///
/// The host only ever issues numeric ids; extensions may use either form.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RequestId {
    /// A non-negative integer id.
    Number(u64),
    /// A string id, at most [`MAX_ID_STRING_BYTES`] bytes.
    String(String),
}

/// Why a JSON value is not a valid [`RequestId`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IdError {
    /// The id is `null`.
    Null,
    /// A number that is negative, fractional or larger than `u64::MAX`.
    NotUnsigned64,
    /// A string longer than [`MAX_ID_STRING_BYTES`] bytes.
    StringTooLong {
        /// The string's length in bytes.
        bytes: usize,
    },
    /// Neither a number nor a string.
    WrongType,
    /// The empty string, which the API 0.3 canonical wire refuses (SUPPLEMENT "API
    /// 0.3": an id is "a non-empty string of at most 256 bytes").
    EmptyString,
}

impl fmt::Display for IdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IdError::Null => f.write_str("id is null"),
            IdError::NotUnsigned64 => f.write_str("numeric id is not an unsigned 64-bit integer"),
            IdError::StringTooLong { bytes } => {
                write!(
                    f,
                    "string id is {bytes} bytes, more than {MAX_ID_STRING_BYTES}"
                )
            }
            IdError::WrongType => f.write_str("id is neither an unsigned integer nor a string"),
            IdError::EmptyString => f.write_str("string id is empty, which API 0.3 refuses"),
        }
    }
}

impl std::error::Error for IdError {}

impl RequestId {
    /// Reads an id from a decoded JSON value, enforcing the protocol's id rules.
    pub fn from_value(value: &Value) -> Result<RequestId, IdError> {
        match value {
            Value::Null => Err(IdError::Null),
            Value::Number(n) => n
                .as_u64()
                .map(RequestId::Number)
                .ok_or(IdError::NotUnsigned64),
            Value::String(s) if s.len() > MAX_ID_STRING_BYTES => {
                Err(IdError::StringTooLong { bytes: s.len() })
            }
            Value::String(s) => Ok(RequestId::String(s.clone())),
            _ => Err(IdError::WrongType),
        }
    }

    /// The id as a JSON value.
    pub fn to_value(&self) -> Value {
        match self {
            RequestId::Number(n) => Value::from(*n),
            RequestId::String(s) => Value::from(s.as_str()),
        }
    }

    /// The numeric id, if this is one.
    pub fn as_u64(&self) -> Option<u64> {
        match self {
            RequestId::Number(n) => Some(*n),
            RequestId::String(_) => None,
        }
    }
}

impl From<u64> for RequestId {
    fn from(n: u64) -> Self {
        RequestId::Number(n)
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Number(n) => write!(f, "{n}"),
            RequestId::String(s) => write!(f, "{s:?}"),
        }
    }
}

impl Serialize for RequestId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            RequestId::Number(n) => serializer.serialize_u64(*n),
            RequestId::String(s) => serializer.serialize_str(s),
        }
    }
}

impl<'de> Deserialize<'de> for RequestId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        RequestId::from_value(&value).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn accepts_unsigned_and_bounded_strings() {
        assert_eq!(RequestId::from_value(&json!(0)), Ok(RequestId::Number(0)));
        assert_eq!(
            RequestId::from_value(&json!(u64::MAX)),
            Ok(RequestId::Number(u64::MAX))
        );
        let s = "é".repeat(128); // 256 bytes
        assert_eq!(
            RequestId::from_value(&json!(s)),
            Ok(RequestId::String(s.clone()))
        );
    }

    #[test]
    fn rejects_everything_else() {
        assert_eq!(RequestId::from_value(&json!(null)), Err(IdError::Null));
        assert_eq!(
            RequestId::from_value(&json!(-1)),
            Err(IdError::NotUnsigned64)
        );
        assert_eq!(
            RequestId::from_value(&json!(1.5)),
            Err(IdError::NotUnsigned64)
        );
        assert_eq!(RequestId::from_value(&json!(true)), Err(IdError::WrongType));
        assert_eq!(RequestId::from_value(&json!([1])), Err(IdError::WrongType));
        let s = "a".repeat(257);
        assert_eq!(
            RequestId::from_value(&json!(s)),
            Err(IdError::StringTooLong { bytes: 257 })
        );
    }
}
