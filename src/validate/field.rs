//! Typed member access on `serde_json::Value`, producing [`ResultError`]s that name the
//! exact field by its [`Path`].
//!
//! One rule holds for every optional member parsed through here: a member whose value is
//! `null` is treated exactly like an absent member. A required member that is absent or
//! `null` is [`ResultErrorKind::Missing`].

use serde_json::{Map, Value};

use super::error::{excerpt, Expected, ResultError, ResultErrorKind};
use super::path::Path;

/// A JSON object.
pub(crate) type Object = Map<String, Value>;

/// Building [`ResultError`]s at a [`Path`]: the part of a path that is specific to result
/// validation (presentation updates build their own error type from the same path).
pub(crate) trait ResultPath {
    /// An error of `kind` at this path.
    fn error(&self, kind: ResultErrorKind) -> ResultError;

    /// A wrong-type error at this path.
    fn wrong_type(&self, expected: Expected) -> ResultError;
}

impl ResultPath for Path<'_> {
    fn error(&self, kind: ResultErrorKind) -> ResultError {
        ResultError::new(self.render(), kind)
    }

    fn wrong_type(&self, expected: Expected) -> ResultError {
        self.error(ResultErrorKind::WrongType { expected })
    }
}

/// `value` as an object.
pub(crate) fn as_object<'v>(value: &'v Value, path: &Path) -> Result<&'v Object, ResultError> {
    value
        .as_object()
        .ok_or_else(|| path.wrong_type(Expected::Object))
}

/// `value` as an array.
pub(crate) fn as_array<'v>(value: &'v Value, path: &Path) -> Result<&'v [Value], ResultError> {
    value
        .as_array()
        .map(Vec::as_slice)
        .ok_or_else(|| path.wrong_type(Expected::Array))
}

/// `value` as a string.
pub(crate) fn as_str<'v>(value: &'v Value, path: &Path) -> Result<&'v str, ResultError> {
    value
        .as_str()
        .ok_or_else(|| path.wrong_type(Expected::String))
}

/// `value` as a boolean.
pub(crate) fn as_bool(value: &Value, path: &Path) -> Result<bool, ResultError> {
    value
        .as_bool()
        .ok_or_else(|| path.wrong_type(Expected::Boolean))
}

/// `value` as a signed 64-bit integer (floats and larger integers are refused).
pub(crate) fn as_i64(value: &Value, path: &Path) -> Result<i64, ResultError> {
    value
        .as_i64()
        .ok_or_else(|| path.wrong_type(Expected::Integer))
}

/// Member `key`, or `None` when it is absent or null.
pub(crate) fn member<'v>(object: &'v Object, key: &str) -> Option<&'v Value> {
    object.get(key).filter(|value| !value.is_null())
}

/// Member `key`, which must be present and not null.
pub(crate) fn required<'v>(
    object: &'v Object,
    key: &str,
    path: &Path,
) -> Result<&'v Value, ResultError> {
    member(object, key).ok_or_else(|| path.key(key).error(ResultErrorKind::Missing))
}

/// Required string member `key`.
pub(crate) fn required_string(
    object: &Object,
    key: &str,
    path: &Path,
) -> Result<String, ResultError> {
    let value = required(object, key, path)?;
    as_str(value, &path.key(key)).map(str::to_owned)
}

/// Optional string member `key`.
pub(crate) fn optional_string(
    object: &Object,
    key: &str,
    path: &Path,
) -> Result<Option<String>, ResultError> {
    member(object, key)
        .map(|value| as_str(value, &path.key(key)).map(str::to_owned))
        .transpose()
}

/// Optional boolean member `key`, `default` when absent.
pub(crate) fn optional_bool(
    object: &Object,
    key: &str,
    path: &Path,
    default: bool,
) -> Result<bool, ResultError> {
    member(object, key).map_or(Ok(default), |value| as_bool(value, &path.key(key)))
}

/// Optional array member `key` of strings, empty when absent.
pub(crate) fn optional_strings(
    object: &Object,
    key: &str,
    path: &Path,
) -> Result<Vec<String>, ResultError> {
    optional_list(object, key, path, |item, item_path| {
        as_str(item, item_path).map(str::to_owned)
    })
}

/// Parses optional array member `key` element by element, empty when absent.
pub(crate) fn optional_list<T>(
    object: &Object,
    key: &str,
    path: &Path,
    mut parse: impl FnMut(&Value, &Path) -> Result<T, ResultError>,
) -> Result<Vec<T>, ResultError> {
    let Some(value) = member(object, key) else {
        return Ok(Vec::new());
    };
    let key_path = path.key(key);
    as_array(value, &key_path)?
        .iter()
        .enumerate()
        .map(|(index, item)| parse(item, &key_path.index(index)))
        .collect()
}

/// A keyword enum: a closed set of wire names.
pub(crate) trait Keyword: Sized + Copy + 'static {
    /// Every value, in wire order.
    const ALL: &'static [Self];
    /// Every wire name, in the order of [`Keyword::ALL`].
    const NAMES: &'static [&'static str];
}

/// `value` as one of the keywords of `K`.
pub(crate) fn keyword<K: Keyword>(value: &Value, path: &Path) -> Result<K, ResultError> {
    let text = as_str(value, path)?;
    K::NAMES
        .iter()
        .position(|name| *name == text)
        .map(|index| K::ALL[index])
        .ok_or_else(|| {
            path.error(ResultErrorKind::UnknownValue {
                found: excerpt(text),
                allowed: K::NAMES,
            })
        })
}

/// Optional keyword member `key`, `default` when absent.
pub(crate) fn optional_keyword<K: Keyword>(
    object: &Object,
    key: &str,
    path: &Path,
    default: K,
) -> Result<K, ResultError> {
    member(object, key).map_or(Ok(default), |value| keyword(value, &path.key(key)))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn null_members_count_as_absent() {
        let value = json!({"a": null, "b": "x"});
        let object = value.as_object().unwrap();
        assert!(member(object, "a").is_none());
        assert_eq!(optional_string(object, "a", &Path::Root).unwrap(), None);
        let error = required_string(object, "a", &Path::Root).unwrap_err();
        assert_eq!(error.path(), "a");
        assert_eq!(error.kind(), &ResultErrorKind::Missing);
        assert_eq!(required_string(object, "b", &Path::Root).unwrap(), "x");
    }

    #[test]
    fn integers_must_fit_i64() {
        assert_eq!(as_i64(&json!(-5), &Path::Root).unwrap(), -5);
        assert!(as_i64(&json!(1.5), &Path::Root).is_err());
        assert!(as_i64(&json!(u64::MAX), &Path::Root).is_err());
    }
}
