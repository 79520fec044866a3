//! Secret values that never print and wipe their buffer when dropped, and the wipe
//! helpers the writer uses on serialized frames (section 2.10: "best-effort wipes the
//! host broker buffer and serialized writer frame after use").

use std::fmt;
use std::mem;

use serde_json::Value;

use crate::wipe::wipe_bytes;

/// A secret string. Its `Debug` and `Display` output never shows the value, and
/// dropping it overwrites its bytes with zeros before freeing them.
///
/// The wipe is best effort: it covers this buffer only, not copies the allocator or
/// an earlier reallocation may have left behind.
pub struct SecretValue(String);

impl SecretValue {
    /// Wraps `value`, taking ownership of its buffer.
    pub fn new(value: String) -> SecretValue {
        SecretValue(value)
    }

    /// The value, for the one place that must hand it on.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// The value's length in UTF-8 bytes.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True when the value is the empty string.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Moves the value out without copying it. The caller takes over the duty to wipe
    /// it, with [`wipe_json`] or [`wipe_bytes`] once it is no longer needed.
    pub fn into_string(mut self) -> String {
        mem::take(&mut self.0)
    }
}

impl From<String> for SecretValue {
    fn from(value: String) -> SecretValue {
        SecretValue::new(value)
    }
}

impl From<&str> for SecretValue {
    fn from(value: &str) -> SecretValue {
        SecretValue::new(value.to_owned())
    }
}

impl fmt::Debug for SecretValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SecretValue(<redacted>)")
    }
}

impl fmt::Display for SecretValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

impl Drop for SecretValue {
    fn drop(&mut self) {
        wipe_string(mem::take(&mut self.0));
    }
}

/// Wipes a string's bytes and frees it.
fn wipe_string(text: String) {
    let mut bytes = text.into_bytes();
    wipe_bytes(&mut bytes);
    bytes.clear();
}

#[doc(hidden)]
/// Wipes every string (object keys included) inside `value` and leaves `value` as
/// `null`; for a result object such as `{"value": ...}` once its frame is written.
pub fn wipe_json(value: &mut Value) {
    match mem::take(value) {
        Value::String(text) => wipe_string(text),
        Value::Array(elements) => {
            for mut element in elements {
                wipe_json(&mut element);
            }
        }
        Value::Object(map) => {
            for (key, mut member) in map {
                wipe_string(key);
                wipe_json(&mut member);
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn never_prints_the_value() {
        let secret = SecretValue::from("hunter2-secret");
        assert!(!format!("{secret:?}").contains("hunter2"));
        assert!(!format!("{secret}").contains("hunter2"));
        assert!(!format!("{secret:#?}").contains("hunter2"));
        assert_eq!(secret.expose(), "hunter2-secret");
        assert_eq!(secret.len(), 14);
        assert!(!secret.is_empty());
        assert_eq!(secret.into_string(), "hunter2-secret");
    }

    #[test]
    fn wipes_zero_the_bytes() {
        let mut bytes = b"secret".to_vec();
        wipe_bytes(&mut bytes);
        assert_eq!(bytes, [0; 6]);
        let mut value = json!({"value": "secret", "list": ["a", 1]});
        wipe_json(&mut value);
        assert_eq!(value, Value::Null);
    }
}
