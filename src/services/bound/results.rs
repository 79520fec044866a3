//! What a bound service answers with: [`ServiceResult`], whose `check` is the result
//! rules of every method whose row names the type, and the result types of the
//! session-control kinds (sections 2.19-2.21). Every result is written and read through
//! a [`ClosedResult`] model: its serde shape, read closed, then held to its bounds. The
//! API 0.3 result models live in [`super::provider_models`].

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::params::{check_composer_text, closed};
use crate::limits::MAX_ENTRY_ID_BYTES;

/// A value a bound service answers with: the runtime turns it into the method's result
/// and checks it before the extension sees it. Each table row names its result type,
/// and the type's [`ServiceResult::check`] is the method's result rules, for a typed
/// answer and for a `serve` client's JSON alike.
///
/// Both go through the type's closed [`ServiceResult::Model`], in one place: a
/// [`ClosedResult`] is its own model, and `()` is written and read as [`EmptyResult`].
pub trait ServiceResult: Send + 'static {
    /// The closed serde model the result is written as and an answer is read as.
    type Model: ClosedResult;

    /// This result as its model.
    fn into_model(self) -> Self::Model;

    /// The JSON-RPC `result`.
    fn into_result(self) -> Value
    where
        Self: Sized,
    {
        serde_json::to_value(self.into_model()).expect("a closed result model serializes")
    }

    /// Checks a `result` against this type: its model's closed shape (an unknown member
    /// refused), then the model's bounds; the error says which rule broke.
    fn check(result: &Value) -> Result<(), String> {
        let answer: Self::Model = closed(result).map_err(|e| e.detail)?;
        answer.check_bounds()
    }
}

/// A result that is its own closed model: it serializes as the method's result, and an
/// answer is read as it (an unknown member refused) and then held to its bounds. Every
/// such type is a [`ServiceResult`] through one generic implementation.
pub trait ClosedResult: Serialize + DeserializeOwned + Send + 'static {
    /// The bounds the model's shape does not say; the error says which rule broke.
    fn check_bounds(&self) -> Result<(), String> {
        Ok(())
    }
}

impl<T: ClosedResult> ServiceResult for T {
    type Model = T;

    fn into_model(self) -> T {
        self
    }
}

/// The empty result `{}`, which a method answers when it has nothing to say: `()` is
/// written and read as it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmptyResult {}

impl ClosedResult for EmptyResult {}

impl ServiceResult for () {
    type Model = EmptyResult;

    fn into_model(self) -> EmptyResult {
        EmptyResult {}
    }
}

/// The composer's text (`composer/get`, section 2.19): checked like a written text.
/// It is the result `{"text": ..}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "TextMember", into = "TextMember")]
pub struct ComposerText(pub String);

/// `{"text": ..}`: how [`ComposerText`] is written.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct TextMember {
    text: String,
}

impl From<TextMember> for ComposerText {
    fn from(member: TextMember) -> ComposerText {
        ComposerText(member.text)
    }
}

impl From<ComposerText> for TextMember {
    fn from(text: ComposerText) -> TextMember {
        TextMember { text: text.0 }
    }
}

impl ClosedResult for ComposerText {
    fn check_bounds(&self) -> Result<(), String> {
        check_composer_text(&self.0).map_err(|e| e.detail)
    }
}

/// The host-assigned durable id of an appended entry (`session/append_entry`, section
/// 2.21): 1 to [`MAX_ENTRY_ID_BYTES`] bytes. It is the result `{"entry_id": ..}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "EntryIdMember", into = "EntryIdMember")]
pub struct EntryId(pub String);

/// `{"entry_id": ..}`: how [`EntryId`] is written.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct EntryIdMember {
    entry_id: String,
}

impl From<EntryIdMember> for EntryId {
    fn from(member: EntryIdMember) -> EntryId {
        EntryId(member.entry_id)
    }
}

impl From<EntryId> for EntryIdMember {
    fn from(id: EntryId) -> EntryIdMember {
        EntryIdMember { entry_id: id.0 }
    }
}

impl ClosedResult for EntryId {
    fn check_bounds(&self) -> Result<(), String> {
        match !self.0.is_empty() && self.0.len() <= MAX_ENTRY_ID_BYTES {
            true => Ok(()),
            false => Err(format!(
                "`entry_id` must be a string of 1 to {MAX_ENTRY_ID_BYTES} bytes"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn one_member_results_read_and_write_their_member() {
        assert_eq!(
            ComposerText("hi".into()).into_result(),
            json!({"text": "hi"})
        );
        assert_eq!(
            EntryId("e1".into()).into_result(),
            json!({"entry_id": "e1"})
        );
        assert_eq!(ComposerText::check(&json!({"text": "hi"})), Ok(()));
        assert!(ComposerText::check(&json!({"text": "hi", "x": 1})).is_err());
        assert!(ComposerText::check(&json!("hi")).is_err());
        assert!(EntryId::check(&json!({})).is_err());
        assert_eq!(<()>::check(&json!({})), Ok(()));
        assert!(<()>::check(&json!({"x": 1})).is_err());
    }
}
