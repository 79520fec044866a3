//! The params of the bound methods (sections 2.19-2.23): each a closed serde type
//! (`deny_unknown_fields`, every required member present, every member of its type)
//! with its bounds checked separately by [`ServiceParams::check`]. The table names
//! each method's params type; parsing a request is reading that type and checking it.
//! The API 0.3 models live in [`super::provider_models`].

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use super::refusal::{Refusal, ServiceRefusal};
use crate::limits::{
    MAX_ACTIVE_TOOLS, MAX_ACTIVE_TOOL_NAME_BYTES, MAX_COMPOSER_TEXT_BYTES, MAX_ENTRY_DATA_BYTES,
    MAX_ENTRY_ID_BYTES, MAX_ENTRY_TYPE_BYTES, MAX_INJECTED_TEXT_BYTES, MAX_JSON_DEPTH,
    MAX_JSON_NODES, MAX_MESSAGE_ID_BYTES, MAX_SESSION_LABEL_BYTES, MAX_SHORTCUT_DESCRIPTION_BYTES,
    MAX_SHORTCUT_ID_BYTES, MAX_SHORTCUT_KEY_BYTES,
};
use crate::validate::{check_bounds, Bounds, BoundsError};

/// The params of one bound method: a closed serde type whose shape serde checks
/// (an unknown or missing member, or a member of the wrong type, is `invalid_request`)
/// and whose bounds [`ServiceParams::check`] checks after.
pub trait ServiceParams:
    Serialize + DeserializeOwned + Clone + std::fmt::Debug + PartialEq + Send + 'static
{
    /// The bounds beyond the shape; the default has none.
    fn check(&self) -> Result<(), ServiceRefusal> {
        Ok(())
    }
}

/// Reads a closed type from `value` (an owned [`Value`], whose strings move, or a
/// borrowed one, which is not cloned): a member it does not have, a missing required
/// member or a member of another type is `invalid_request`, with serde's words.
pub(crate) fn closed<'de, T, D>(value: D) -> Result<T, ServiceRefusal>
where
    T: Deserialize<'de>,
    D: Deserializer<'de, Error = serde_json::Error>,
{
    T::deserialize(value).map_err(|e| Refusal::InvalidRequest.because(e.to_string()))
}

/// No params: `{}` (`composer/get`, `providers/complete`, `session/create|fork|reload`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoParams {}

impl ServiceParams for NoParams {}

/// `composer/set` and `composer/insert` (section 2.19): a composer text.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ComposerEdit {
    /// At most [`MAX_COMPOSER_TEXT_BYTES`], no terminal control characters.
    pub text: String,
}

impl ServiceParams for ComposerEdit {
    fn check(&self) -> Result<(), ServiceRefusal> {
        check_composer_text(&self.text)
    }
}

/// A runtime shortcut an extension registers (`shortcut/register`, section 2.20).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Shortcut {
    /// Stable for the process generation; 1 to [`MAX_SHORTCUT_ID_BYTES`].
    pub id: String,
    /// The key chord, such as `ctrl+shift+p`; 1 to [`MAX_SHORTCUT_KEY_BYTES`].
    pub key: String,
    /// What it does; at most [`MAX_SHORTCUT_DESCRIPTION_BYTES`].
    pub description: String,
}

impl ServiceParams for Shortcut {
    fn check(&self) -> Result<(), ServiceRefusal> {
        text("id", &self.id, 1, MAX_SHORTCUT_ID_BYTES)?;
        text("key", &self.key, 1, MAX_SHORTCUT_KEY_BYTES)?;
        text(
            "description",
            &self.description,
            0,
            MAX_SHORTCUT_DESCRIPTION_BYTES,
        )
    }
}

/// `session/append_entry` (section 2.21).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AppendEntry {
    /// The entry's type, 1 to [`MAX_ENTRY_TYPE_BYTES`].
    pub entry_type: String,
    /// Opaque bounded plain JSON, at most [`MAX_ENTRY_DATA_BYTES`].
    pub data: Value,
}

impl ServiceParams for AppendEntry {
    fn check(&self) -> Result<(), ServiceRefusal> {
        text("entry_type", &self.entry_type, 1, MAX_ENTRY_TYPE_BYTES)?;
        check_entry_data(&self.data)
    }
}

/// `session/set_name` (section 2.21); an empty name clears it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionName {
    /// At most [`MAX_SESSION_LABEL_BYTES`].
    pub name: String,
}

impl ServiceParams for SessionName {
    fn check(&self) -> Result<(), ServiceRefusal> {
        text("name", &self.name, 0, MAX_SESSION_LABEL_BYTES)
    }
}

/// `session/set_label` (section 2.21); an empty label clears it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EntryLabel {
    /// The entry, 1 to [`MAX_ENTRY_ID_BYTES`].
    pub entry_id: String,
    /// The label, at most [`MAX_SESSION_LABEL_BYTES`].
    pub label: String,
}

impl ServiceParams for EntryLabel {
    fn check(&self) -> Result<(), ServiceRefusal> {
        text("entry_id", &self.entry_id, 1, MAX_ENTRY_ID_BYTES)?;
        text("label", &self.label, 0, MAX_SESSION_LABEL_BYTES)
    }
}

/// The role of an injected message (section 2.22). `user` is not a role here: user
/// text goes through `session/send_user_message`, and any other role is refused, never
/// coerced.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MessageRole {
    /// `assistant`.
    Assistant,
    /// `system`.
    System,
}

impl MessageRole {
    /// The wire name.
    pub fn name(self) -> &'static str {
        match self {
            MessageRole::Assistant => "assistant",
            MessageRole::System => "system",
        }
    }
}

/// `session/send_message` (section 2.22).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InjectedMessage {
    /// `assistant` or `system`.
    pub role: MessageRole,
    /// At most [`MAX_INJECTED_TEXT_BYTES`].
    pub text: String,
}

impl ServiceParams for InjectedMessage {
    fn check(&self) -> Result<(), ServiceRefusal> {
        text("text", &self.text, 0, MAX_INJECTED_TEXT_BYTES)
    }
}

/// `session/send_user_message` (section 2.22).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UserMessage {
    /// At most [`MAX_INJECTED_TEXT_BYTES`].
    pub text: String,
}

impl ServiceParams for UserMessage {
    fn check(&self) -> Result<(), ServiceRefusal> {
        text("text", &self.text, 0, MAX_INJECTED_TEXT_BYTES)
    }
}

/// `tools/set_active` (section 2.23): the complete replacement set of active tools.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ActiveToolSet {
    /// Unique names, at most [`MAX_ACTIVE_TOOLS`] of 1 to
    /// [`MAX_ACTIVE_TOOL_NAME_BYTES`] each.
    pub names: Vec<String>,
}

impl ServiceParams for ActiveToolSet {
    fn check(&self) -> Result<(), ServiceRefusal> {
        if self.names.len() > MAX_ACTIVE_TOOLS {
            return Err(Refusal::BoundsExceeded.because(format!(
                "`names` holds {} names; at most {MAX_ACTIVE_TOOLS}",
                self.names.len()
            )));
        }
        for (i, name) in self.names.iter().enumerate() {
            text("names[]", name, 1, MAX_ACTIVE_TOOL_NAME_BYTES)?;
            if self.names[..i].contains(name) {
                return Err(Refusal::InvalidRequest.because(format!("`{name}` appears twice")));
            }
        }
        Ok(())
    }
}

/// Checks a string member: `min` to `max` bytes (empty is `invalid_request`, long is
/// `bounds_exceeded`).
pub(super) fn text(what: &str, value: &str, min: usize, max: usize) -> Result<(), ServiceRefusal> {
    if value.len() < min {
        return Err(Refusal::InvalidRequest.because(format!("`{what}` must not be empty")));
    }
    if value.len() > max {
        return Err(Refusal::BoundsExceeded
            .because(format!("`{what}` is {} bytes; at most {max}", value.len())));
    }
    Ok(())
}

/// Checks a `message/updated` message id (section 1.11, "bounded id"): 1 to
/// [`MAX_MESSAGE_ID_BYTES`] bytes.
pub fn check_message_id(id: &str) -> Result<(), ServiceRefusal> {
    if id.is_empty() || id.len() > MAX_MESSAGE_ID_BYTES {
        return Err(Refusal::InvalidRequest.because(format!(
            "message_id must be 1 to {MAX_MESSAGE_ID_BYTES} bytes"
        )));
    }
    Ok(())
}

/// Checks a composer text (section 2.19): at most [`MAX_COMPOSER_TEXT_BYTES`] of UTF-8
/// without terminal control characters; line feeds, carriage returns and tabs are
/// text. Lone surrogates cannot reach here: a frame holding one is not JSON the host
/// decodes.
pub fn check_composer_text(text: &str) -> Result<(), ServiceRefusal> {
    if text.len() > MAX_COMPOSER_TEXT_BYTES {
        return Err(Refusal::BoundsExceeded.because(format!(
            "the text is {} bytes; at most {MAX_COMPOSER_TEXT_BYTES}",
            text.len()
        )));
    }
    if let Some(ch) = text
        .chars()
        .find(|c| c.is_control() && !matches!(c, '\n' | '\t' | '\r'))
    {
        return Err(Refusal::InvalidRequest.because(format!(
            "the text holds the terminal control character U+{:04X}",
            ch as u32
        )));
    }
    Ok(())
}

/// Checks session entry data (section 2.21): at most [`MAX_ENTRY_DATA_BYTES`] of
/// compact JSON nested at most [`MAX_JSON_DEPTH`] deep.
fn check_entry_data(data: &Value) -> Result<(), ServiceRefusal> {
    let bounds = Bounds {
        max_bytes: MAX_ENTRY_DATA_BYTES,
        max_depth: MAX_JSON_DEPTH,
        max_nodes: MAX_JSON_NODES,
        max_key_bytes: usize::MAX,
    };
    check_bounds(data, bounds).map_err(|e| match e {
        BoundsError::TooManyBytes { .. } => Refusal::BoundsExceeded.because(format!(
            "`data` is over {MAX_ENTRY_DATA_BYTES} bytes of JSON"
        )),
        other => Refusal::BoundsExceeded.because(format!("`data`: {other}")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::services::bound::{ServiceMethod, ServiceRequest};
    use serde_json::json;

    fn parse(method: ServiceMethod, params: Value) -> Result<ServiceRequest, ServiceRefusal> {
        let Value::Object(map) = params else {
            panic!("params are an object")
        };
        ServiceRequest::parse(method, &map)
    }

    fn refusal(method: ServiceMethod, params: Value) -> Refusal {
        parse(method, params).expect_err("refused").refusal
    }

    #[test]
    fn api_0_3_models_are_closed_and_bounded() {
        let m = ServiceMethod::ProviderAuthRequest;
        let ok = json!({"provider_id": "p".repeat(64), "action": "refresh", "interactive": true});
        assert!(parse(m, ok).is_ok());
        let long = json!({"provider_id": "p".repeat(65), "action": "refresh", "interactive": true});
        assert_eq!(refusal(m, long), Refusal::BoundsExceeded);
        let extra = json!({"provider_id": "p", "action": "refresh", "interactive": true, "x": 1});
        assert_eq!(refusal(m, extra), Refusal::InvalidRequest);
        let scopes: Vec<String> = (0..33).map(|i| format!("s{i}")).collect();
        let many =
            json!({"provider_id": "p", "action": "refresh", "interactive": true, "scopes": scopes});
        assert_eq!(refusal(m, many), Refusal::BoundsExceeded);
        assert_eq!(
            refusal(ServiceMethod::SessionFork, json!({"x": 1})),
            Refusal::InvalidRequest
        );
        assert!(ServiceMethod::SessionFork
            .check_result(&json!({"session_id": "s"}))
            .is_ok());
        assert!(ServiceMethod::SessionFork
            .check_result(&json!({"session_id": ""}))
            .is_err());
        let lease = json!({"status": "ready", "lease": "l".repeat(257)});
        assert!(ServiceMethod::ProviderAuthRevoke
            .check_result(&lease)
            .is_err());
        let revision = json!({"revision": 1, "provider_ids": [], "model_ids": [], "x": 1});
        assert!(ServiceMethod::ProvidersUpdate
            .check_result(&revision)
            .is_err());
    }

    #[test]
    fn composer_texts_are_bounded_and_printable() {
        let m = ServiceMethod::ComposerSet;
        let at = "x".repeat(MAX_COMPOSER_TEXT_BYTES);
        assert!(parse(m, json!({"parent_request_id": 1, "text": at})).is_ok());
        let past = "x".repeat(MAX_COMPOSER_TEXT_BYTES + 1);
        assert_eq!(refusal(m, json!({"text": past})), Refusal::BoundsExceeded);
        assert_eq!(
            refusal(m, json!({"text": "\u{1b}[2J"})),
            Refusal::InvalidRequest
        );
        assert_eq!(
            refusal(m, json!({"text": "a\u{85}"})),
            Refusal::InvalidRequest
        );
        assert!(parse(m, json!({"text": "one\ntwo\tthree\r"})).is_ok());
        assert_eq!(
            refusal(m, json!({"text": "a", "cursor": 1})),
            Refusal::InvalidRequest
        );
        assert_eq!(refusal(m, json!({})), Refusal::InvalidRequest);
    }

    #[test]
    fn shortcut_bounds() {
        let m = ServiceMethod::ShortcutRegister;
        let ok = |id: usize, key: usize, d: usize| json!({"id": "i".repeat(id), "key": "k".repeat(key), "description": "d".repeat(d)});
        assert!(parse(m, ok(128, 128, 4096)).is_ok());
        assert_eq!(refusal(m, ok(129, 1, 0)), Refusal::BoundsExceeded);
        assert_eq!(refusal(m, ok(1, 129, 0)), Refusal::BoundsExceeded);
        assert_eq!(refusal(m, ok(1, 1, 4097)), Refusal::BoundsExceeded);
        assert_eq!(refusal(m, ok(0, 1, 0)), Refusal::InvalidRequest);
    }

    #[test]
    fn session_entries_bounds() {
        let m = ServiceMethod::SessionAppendEntry;
        let data_at = json!("d".repeat(MAX_ENTRY_DATA_BYTES - 2));
        assert!(parse(m, json!({"entry_type": "t".repeat(128), "data": data_at})).is_ok());
        let data_past = json!("d".repeat(MAX_ENTRY_DATA_BYTES - 1));
        assert_eq!(
            refusal(m, json!({"entry_type": "t", "data": data_past})),
            Refusal::BoundsExceeded
        );
        assert_eq!(
            refusal(m, json!({"entry_type": "t".repeat(129), "data": 1})),
            Refusal::BoundsExceeded
        );
        let mut deep = json!(1);
        for _ in 0..MAX_JSON_DEPTH + 1 {
            deep = json!([deep]);
        }
        assert_eq!(
            refusal(m, json!({"entry_type": "t", "data": deep})),
            Refusal::BoundsExceeded
        );
        let label = ServiceMethod::SessionSetLabel;
        assert!(parse(label, json!({"entry_id": "e".repeat(256), "label": ""})).is_ok());
        assert_eq!(
            refusal(label, json!({"entry_id": "e".repeat(257), "label": ""})),
            Refusal::BoundsExceeded
        );
        let name = ServiceMethod::SessionSetName;
        assert!(parse(name, json!({"name": "n".repeat(4096)})).is_ok());
        assert_eq!(
            refusal(name, json!({"name": "n".repeat(4097)})),
            Refusal::BoundsExceeded
        );
    }

    #[test]
    fn message_roles_are_never_coerced() {
        let m = ServiceMethod::SessionSendMessage;
        assert!(parse(m, json!({"role": "system", "text": "x"})).is_ok());
        assert_eq!(
            refusal(m, json!({"role": "user", "text": "x"})),
            Refusal::InvalidRequest
        );
        assert_eq!(
            refusal(m, json!({"role": "Assistant", "text": "x"})),
            Refusal::InvalidRequest
        );
    }

    #[test]
    fn active_tool_sets_are_bounded_and_unique() {
        let m = ServiceMethod::ToolsSetActive;
        let names: Vec<String> = (0..256).map(|i| format!("t{i}")).collect();
        assert!(parse(m, json!({ "names": names })).is_ok());
        let names: Vec<String> = (0..257).map(|i| format!("t{i}")).collect();
        assert_eq!(
            refusal(m, json!({ "names": names })),
            Refusal::BoundsExceeded
        );
        assert_eq!(
            refusal(m, json!({"names": ["n".repeat(129)]})),
            Refusal::BoundsExceeded
        );
        assert_eq!(
            refusal(m, json!({"names": ["a", "a"]})),
            Refusal::InvalidRequest
        );
    }

    #[test]
    fn results_are_checked_per_method() {
        assert!(ServiceMethod::ComposerSet.check_result(&json!({})).is_ok());
        assert!(ServiceMethod::ComposerSet
            .check_result(&json!({"ok": true}))
            .is_err());
        assert!(ServiceMethod::ComposerGet
            .check_result(&json!({"text": "a"}))
            .is_ok());
        assert!(ServiceMethod::ComposerGet
            .check_result(&json!({"text": "\u{7}"}))
            .is_err());
        let entry = ServiceMethod::SessionAppendEntry;
        assert!(entry.check_result(&json!({"entry_id": "e1"})).is_ok());
        assert!(entry.check_result(&json!({"entry_id": ""})).is_err());
        assert!(entry
            .check_result(&json!({"entry_id": "e".repeat(257)}))
            .is_err());
    }
}
