//! What a bound service answers with: [`ServiceResult`], whose `check` is the result
//! rules of every method whose row names the type, and the Wave-1 result types. The
//! API 0.3 result models live in [`super::provider_models`].

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};

use super::params::{check_composer_text, closed};
use crate::limits::MAX_ENTRY_ID_BYTES;

/// A value a bound service answers with: the runtime turns it into the method's result
/// and checks it before the extension sees it. Each table row names its result type,
/// and the type's [`ServiceResult::check`] is the method's result rules, for a typed
/// answer and for a `serve` client's JSON alike.
pub trait ServiceResult: Send + 'static {
    /// The JSON-RPC `result`.
    fn into_result(self) -> Value;
    /// Checks a `result` against this type: its closed shape and its bounds; the error
    /// says which rule broke.
    fn check(result: &Value) -> Result<(), String>;
}

/// A result that is its own closed model: it serializes as the method's result, and an
/// answer is read as it (an unknown member refused) and then held to its bounds. Every
/// such type is a [`ServiceResult`] through this one implementation.
pub trait ClosedResult: Serialize + DeserializeOwned + Send + 'static {
    /// The bounds the model's shape does not say; the error says which rule broke.
    fn check_bounds(&self) -> Result<(), String> {
        Ok(())
    }
}

impl<T: ClosedResult> ServiceResult for T {
    fn into_result(self) -> Value {
        serde_json::to_value(self).expect("a closed result model serializes")
    }
    fn check(result: &Value) -> Result<(), String> {
        let answer: T = closed(result).map_err(|e| e.detail)?;
        answer.check_bounds()
    }
}

impl ServiceResult for () {
    /// `{}`.
    fn into_result(self) -> Value {
        json!({})
    }
    fn check(result: &Value) -> Result<(), String> {
        match result {
            Value::Object(map) => match map.keys().next() {
                None => Ok(()),
                Some(extra) => Err(format!("the result is {{}}; it has `{extra}`")),
            },
            _ => Err("the result must be an object".into()),
        }
    }
}

/// The one member of a result object, which must have no other.
fn only<'a>(result: &'a Value, member: &str) -> Result<&'a Value, String> {
    let Value::Object(map) = result else {
        return Err("the result must be an object".into());
    };
    if let Some(extra) = map.keys().find(|k| k.as_str() != member) {
        return Err(format!("the result has an unknown member `{extra}`"));
    }
    map.get(member)
        .ok_or_else(|| format!("the result needs `{member}`"))
}

/// The composer's text (`composer/get`, section 2.19): checked like a written text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ComposerText(pub String);

impl ServiceResult for ComposerText {
    fn into_result(self) -> Value {
        json!({ "text": self.0 })
    }
    fn check(result: &Value) -> Result<(), String> {
        match only(result, "text")? {
            Value::String(text) => check_composer_text(text).map_err(|e| e.detail),
            _ => Err("`text` must be a string".into()),
        }
    }
}

/// The host-assigned durable id of an appended entry (`session/append_entry`, section
/// 2.21): 1 to [`MAX_ENTRY_ID_BYTES`] bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntryId(pub String);

impl ServiceResult for EntryId {
    fn into_result(self) -> Value {
        json!({ "entry_id": self.0 })
    }
    fn check(result: &Value) -> Result<(), String> {
        match only(result, "entry_id")? {
            Value::String(id) if !id.is_empty() && id.len() <= MAX_ENTRY_ID_BYTES => Ok(()),
            _ => Err(format!(
                "`entry_id` must be a string of 1 to {MAX_ENTRY_ID_BYTES} bytes"
            )),
        }
    }
}
