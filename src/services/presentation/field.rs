//! Typed member access for `presentation/update` params, producing [`PresentationError`]s
//! that name the exact field by its [`Path`] (such as `snapshot.collection.nodes[3].parent_id`).
//!
//! One rule holds for every member read through here: a member whose value is `null` is
//! treated exactly like an absent member. Every object is closed: a member its type does
//! not define is refused.

use serde_json::{Map, Value};

use crate::limits::MAX_SAFE_INTEGER;
use crate::validate::error::excerpt;
use crate::validate::path::Path;

use super::error::{JsonType, PresentationError, PresentationErrorKind};

/// A JSON object.
pub(super) type Object = Map<String, Value>;

/// Building [`PresentationError`]s at a [`Path`]: the part of a path that is specific to
/// `presentation/update` (typed results build their own error type from the same path).
pub(super) trait PresentationPath {
    /// An error of `kind` at this path.
    fn error(&self, kind: PresentationErrorKind) -> PresentationError;

    /// A wrong-type error at this path.
    fn wrong_type(&self, expected: JsonType) -> PresentationError;
}

impl PresentationPath for Path<'_> {
    fn error(&self, kind: PresentationErrorKind) -> PresentationError {
        PresentationError::new(self.render(), kind)
    }

    fn wrong_type(&self, expected: JsonType) -> PresentationError {
        self.error(PresentationErrorKind::WrongType { expected })
    }
}

/// `value` as a closed object whose members are all in `allowed`.
pub(super) fn closed_object<'v>(
    value: &'v Value,
    path: &Path,
    allowed: &[&str],
) -> Result<&'v Object, PresentationError> {
    let object = value
        .as_object()
        .ok_or_else(|| path.wrong_type(JsonType::Object))?;
    if let Some(member) = object.keys().find(|key| !allowed.contains(&key.as_str())) {
        return Err(path.error(PresentationErrorKind::UnknownMember {
            member: excerpt(member),
        }));
    }
    Ok(object)
}

/// `value` as an array of at most `max` elements.
pub(super) fn bounded_array<'v>(
    value: &'v Value,
    path: &Path,
    max: usize,
) -> Result<&'v [Value], PresentationError> {
    let array = value
        .as_array()
        .ok_or_else(|| path.wrong_type(JsonType::Array))?;
    if array.len() > max {
        return Err(path.error(PresentationErrorKind::TooMany {
            count: array.len(),
            max,
        }));
    }
    Ok(array)
}

/// `value` as a string.
pub(super) fn as_str<'v>(value: &'v Value, path: &Path) -> Result<&'v str, PresentationError> {
    value
        .as_str()
        .ok_or_else(|| path.wrong_type(JsonType::String))
}

/// `value` as an unsigned integer of at most `u64::MAX`.
pub(super) fn as_u64(value: &Value, path: &Path) -> Result<u64, PresentationError> {
    value
        .as_u64()
        .ok_or_else(|| path.wrong_type(JsonType::UnsignedInteger))
}

/// `value` as an unsigned integer within the portable JSON bound (2^53 - 1).
pub(super) fn safe_integer(value: &Value, path: &Path) -> Result<u64, PresentationError> {
    let number = as_u64(value, path)?;
    if number > MAX_SAFE_INTEGER {
        return Err(path.error(PresentationErrorKind::IntegerTooLarge {
            max: MAX_SAFE_INTEGER,
        }));
    }
    Ok(number)
}

/// Member `key`, or `None` when it is absent or null.
pub(super) fn member<'v>(object: &'v Object, key: &str) -> Option<&'v Value> {
    object.get(key).filter(|value| !value.is_null())
}

/// Member `key`, which must be present and not null.
pub(super) fn required<'v>(
    object: &'v Object,
    key: &str,
    path: &Path,
) -> Result<&'v Value, PresentationError> {
    member(object, key).ok_or_else(|| path.key(key).error(PresentationErrorKind::Missing))
}

/// Optional boolean member `key`, false when absent.
pub(super) fn optional_flag(
    object: &Object,
    key: &str,
    path: &Path,
) -> Result<bool, PresentationError> {
    match member(object, key) {
        None => Ok(false),
        Some(value) => value
            .as_bool()
            .ok_or_else(|| path.key(key).wrong_type(JsonType::Boolean)),
    }
}

/// Optional safe-integer member `key`.
pub(super) fn optional_safe_integer(
    object: &Object,
    key: &str,
    path: &Path,
) -> Result<Option<u64>, PresentationError> {
    member(object, key)
        .map(|value| safe_integer(value, &path.key(key)))
        .transpose()
}

/// Parses optional array member `key` of at most `max` elements, element by element;
/// empty when absent.
pub(super) fn optional_list<T>(
    object: &Object,
    key: &str,
    path: &Path,
    max: usize,
    mut parse: impl FnMut(&Value, &Path) -> Result<T, PresentationError>,
) -> Result<Vec<T>, PresentationError> {
    let Some(value) = member(object, key) else {
        return Ok(Vec::new());
    };
    let key_path = path.key(key);
    bounded_array(value, &key_path, max)?
        .iter()
        .enumerate()
        .map(|(index, item)| parse(item, &key_path.index(index)))
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn safe_integers_stop_at_two_to_the_fifty_three_minus_one() {
        let root = Path::Root;
        assert_eq!(
            safe_integer(&json!(MAX_SAFE_INTEGER), &root),
            Ok(MAX_SAFE_INTEGER)
        );
        assert_eq!(
            safe_integer(&json!(MAX_SAFE_INTEGER + 1), &root)
                .unwrap_err()
                .kind(),
            &PresentationErrorKind::IntegerTooLarge {
                max: MAX_SAFE_INTEGER
            }
        );
        for bad in [json!(-1), json!(1.0), json!("1"), json!(true)] {
            assert_eq!(
                safe_integer(&bad, &root).unwrap_err().kind(),
                &PresentationErrorKind::WrongType {
                    expected: JsonType::UnsignedInteger
                },
                "{bad}"
            );
        }
    }
}
