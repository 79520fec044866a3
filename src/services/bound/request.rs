//! Validated requests for bound services: the closed params of each Wave-1 request
//! checked into typed values with every bound of sections 2.19-2.23 (the API 0.3
//! models are read in [`super::v0_3`]).

use serde_json::{json, Map, Value};

use super::provider_models::{self, ProviderAuthParams, ProviderRegistration};
use super::refusal::{Refusal, ServiceRefusal};
use super::table::{Admission, ServiceMethod};
use crate::limits::{
    MAX_ACTIVE_TOOLS, MAX_ACTIVE_TOOL_NAME_BYTES, MAX_COMPOSER_TEXT_BYTES, MAX_ENTRY_DATA_BYTES,
    MAX_ENTRY_ID_BYTES, MAX_ENTRY_TYPE_BYTES, MAX_INJECTED_TEXT_BYTES, MAX_JSON_DEPTH,
    MAX_JSON_NODES, MAX_MESSAGE_ID_BYTES, MAX_SESSION_LABEL_BYTES, MAX_SHORTCUT_DESCRIPTION_BYTES,
    MAX_SHORTCUT_ID_BYTES, MAX_SHORTCUT_KEY_BYTES,
};
use crate::validate::{check_bounds, Bounds, BoundsError};

/// The role of an injected message (section 2.22). `user` is not a role here: user
/// text goes through `session/send_user_message`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
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

/// A runtime shortcut an extension registers (section 2.20).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shortcut {
    /// Stable for the process generation; at most [`MAX_SHORTCUT_ID_BYTES`].
    pub id: String,
    /// The key chord, such as `ctrl+shift+p`; at most [`MAX_SHORTCUT_KEY_BYTES`].
    pub key: String,
    /// What it does; at most [`MAX_SHORTCUT_DESCRIPTION_BYTES`].
    pub description: String,
}

/// A validated Wave-1 request: the params without `parent_request_id` and
/// `resource_owner`, every bound already checked.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ServiceRequest {
    /// `composer/get`.
    ComposerGet,
    /// `composer/set`: replace the whole composer text.
    ComposerSet {
        /// The new text.
        text: String,
    },
    /// `composer/insert`: insert at the composer's cursor.
    ComposerInsert {
        /// The text to insert.
        text: String,
    },
    /// `shortcut/register`.
    ShortcutRegister(Shortcut),
    /// `session/append_entry`.
    SessionAppendEntry {
        /// The entry's type, at most [`MAX_ENTRY_TYPE_BYTES`].
        entry_type: String,
        /// Opaque bounded plain JSON, at most [`MAX_ENTRY_DATA_BYTES`].
        data: Value,
    },
    /// `session/set_name`; an empty name clears it.
    SessionSetName {
        /// The name, at most [`MAX_SESSION_LABEL_BYTES`].
        name: String,
    },
    /// `session/set_label`; an empty label clears it.
    SessionSetLabel {
        /// The entry, at most [`MAX_ENTRY_ID_BYTES`].
        entry_id: String,
        /// The label, at most [`MAX_SESSION_LABEL_BYTES`].
        label: String,
    },
    /// `session/send_message`.
    SessionSendMessage {
        /// `assistant` or `system`.
        role: MessageRole,
        /// The text, at most [`MAX_INJECTED_TEXT_BYTES`].
        text: String,
    },
    /// `session/send_user_message`.
    SessionSendUserMessage {
        /// The text, at most [`MAX_INJECTED_TEXT_BYTES`].
        text: String,
    },
    /// `tools/set_active`: the complete replacement set of active tools.
    ToolsSetActive {
        /// Unique names, at most [`MAX_ACTIVE_TOOLS`] of at most
        /// [`MAX_ACTIVE_TOOL_NAME_BYTES`] each.
        names: Vec<String>,
    },
    /// API 0.3 `provider/auth/request`.
    ProviderAuthRequest(ProviderAuthParams),
    /// API 0.3 `provider/auth/revoke`.
    ProviderAuthRevoke(ProviderAuthParams),
    /// API 0.3 `providers/register`.
    ProvidersRegister(ProviderRegistration),
    /// API 0.3 `providers/update`.
    ProvidersUpdate(ProviderRegistration),
    /// API 0.3 `providers/unregister`.
    ProvidersUnregister {
        /// The provider.
        provider_id: String,
    },
    /// API 0.3 `providers/complete`.
    ProvidersComplete,
    /// API 0.3 `session/create`.
    SessionCreate,
    /// API 0.3 `session/fork`.
    SessionFork,
    /// API 0.3 `session/reload`.
    SessionReload,
    /// API 0.3 `session/switch`.
    SessionSwitch {
        /// The session to make current.
        session_id: String,
    },
}

impl ServiceRequest {
    /// The method.
    pub fn method(&self) -> ServiceMethod {
        match self {
            ServiceRequest::ComposerGet => ServiceMethod::ComposerGet,
            ServiceRequest::ComposerSet { .. } => ServiceMethod::ComposerSet,
            ServiceRequest::ComposerInsert { .. } => ServiceMethod::ComposerInsert,
            ServiceRequest::ShortcutRegister(_) => ServiceMethod::ShortcutRegister,
            ServiceRequest::SessionAppendEntry { .. } => ServiceMethod::SessionAppendEntry,
            ServiceRequest::SessionSetName { .. } => ServiceMethod::SessionSetName,
            ServiceRequest::SessionSetLabel { .. } => ServiceMethod::SessionSetLabel,
            ServiceRequest::SessionSendMessage { .. } => ServiceMethod::SessionSendMessage,
            ServiceRequest::SessionSendUserMessage { .. } => ServiceMethod::SessionSendUserMessage,
            ServiceRequest::ToolsSetActive { .. } => ServiceMethod::ToolsSetActive,
            ServiceRequest::ProviderAuthRequest(_) => ServiceMethod::ProviderAuthRequest,
            ServiceRequest::ProviderAuthRevoke(_) => ServiceMethod::ProviderAuthRevoke,
            ServiceRequest::ProvidersRegister(_) => ServiceMethod::ProvidersRegister,
            ServiceRequest::ProvidersUpdate(_) => ServiceMethod::ProvidersUpdate,
            ServiceRequest::ProvidersUnregister { .. } => ServiceMethod::ProvidersUnregister,
            ServiceRequest::ProvidersComplete => ServiceMethod::ProvidersComplete,
            ServiceRequest::SessionCreate => ServiceMethod::SessionCreate,
            ServiceRequest::SessionFork => ServiceMethod::SessionFork,
            ServiceRequest::SessionReload => ServiceMethod::SessionReload,
            ServiceRequest::SessionSwitch { .. } => ServiceMethod::SessionSwitch,
        }
    }

    /// The validated params as JSON (what `serve` shows its client).
    pub fn params(&self) -> Value {
        match self {
            ServiceRequest::ComposerGet => json!({}),
            ServiceRequest::ComposerSet { text }
            | ServiceRequest::ComposerInsert { text }
            | ServiceRequest::SessionSendUserMessage { text } => json!({ "text": text }),
            ServiceRequest::ShortcutRegister(s) => {
                json!({"id": s.id, "key": s.key, "description": s.description})
            }
            ServiceRequest::SessionAppendEntry { entry_type, data } => {
                json!({"entry_type": entry_type, "data": data})
            }
            ServiceRequest::SessionSetName { name } => json!({ "name": name }),
            ServiceRequest::SessionSetLabel { entry_id, label } => {
                json!({"entry_id": entry_id, "label": label})
            }
            ServiceRequest::SessionSendMessage { role, text } => {
                json!({"role": role.name(), "text": text})
            }
            ServiceRequest::ToolsSetActive { names } => json!({ "names": names }),
            ServiceRequest::ProviderAuthRequest(p) | ServiceRequest::ProviderAuthRevoke(p) => {
                serde_json::to_value(p).expect("plain data serializes")
            }
            ServiceRequest::ProvidersRegister(r) | ServiceRequest::ProvidersUpdate(r) => {
                serde_json::to_value(r).expect("plain data serializes")
            }
            ServiceRequest::ProvidersUnregister { provider_id } => {
                json!({ "provider_id": provider_id })
            }
            ServiceRequest::ProvidersComplete
            | ServiceRequest::SessionCreate
            | ServiceRequest::SessionFork
            | ServiceRequest::SessionReload => json!({}),
            ServiceRequest::SessionSwitch { session_id } => json!({ "session_id": session_id }),
        }
    }

    /// Checks the params of `method` (a closed object; `parent_request_id` and
    /// `resource_owner` are the caller's and skipped here) into a typed request.
    pub fn parse(
        method: ServiceMethod,
        params: &Map<String, Value>,
    ) -> Result<Self, ServiceRefusal> {
        // Methods admitted without a parent carry closed models with no
        // `parent_request_id` or `resource_owner` member.
        if method.admission() == Admission::None {
            return ServiceRequest::parse_v0_3(method, params);
        }
        let fields: &[&str] = match method {
            ServiceMethod::ComposerGet => &[],
            ServiceMethod::ComposerSet
            | ServiceMethod::ComposerInsert
            | ServiceMethod::SessionSendUserMessage => &["text"],
            ServiceMethod::ShortcutRegister => &["id", "key", "description"],
            ServiceMethod::SessionAppendEntry => &["entry_type", "data"],
            ServiceMethod::SessionSetName => &["name"],
            ServiceMethod::SessionSetLabel => &["entry_id", "label"],
            ServiceMethod::SessionSendMessage => &["role", "text"],
            ServiceMethod::ToolsSetActive => &["names"],
            _ => unreachable!("the API 0.3 methods are parsed by parse_v0_3"),
        };
        if let Some(extra) = params.keys().find(|k| {
            !fields.contains(&k.as_str())
                && !matches!(k.as_str(), "parent_request_id" | "resource_owner")
        }) {
            return Err(Refusal::InvalidRequest
                .because(format!("{} has no member `{extra}`", method.name())));
        }
        let text = |name: &str, max: usize| -> Result<String, ServiceRefusal> {
            match params.get(name) {
                Some(Value::String(s)) if s.len() <= max => Ok(s.clone()),
                Some(Value::String(s)) => Err(Refusal::BoundsExceeded
                    .because(format!("`{name}` is {} bytes; at most {max}", s.len()))),
                Some(_) => {
                    Err(Refusal::InvalidRequest.because(format!("`{name}` must be a string")))
                }
                None => Err(Refusal::InvalidRequest.because(format!("`{name}` is required"))),
            }
        };
        Ok(match method {
            ServiceMethod::ComposerGet => ServiceRequest::ComposerGet,
            ServiceMethod::ComposerSet | ServiceMethod::ComposerInsert => {
                let text = text("text", MAX_COMPOSER_TEXT_BYTES)?;
                check_composer_text(&text)?;
                if method == ServiceMethod::ComposerSet {
                    ServiceRequest::ComposerSet { text }
                } else {
                    ServiceRequest::ComposerInsert { text }
                }
            }
            ServiceMethod::ShortcutRegister => {
                let id = text("id", MAX_SHORTCUT_ID_BYTES)?;
                let key = text("key", MAX_SHORTCUT_KEY_BYTES)?;
                if id.is_empty() || key.is_empty() {
                    return Err(Refusal::InvalidRequest.because("`id` and `key` must not be empty"));
                }
                let description = text("description", MAX_SHORTCUT_DESCRIPTION_BYTES)?;
                ServiceRequest::ShortcutRegister(Shortcut {
                    id,
                    key,
                    description,
                })
            }
            ServiceMethod::SessionAppendEntry => {
                let entry_type = text("entry_type", MAX_ENTRY_TYPE_BYTES)?;
                if entry_type.is_empty() {
                    return Err(Refusal::InvalidRequest.because("`entry_type` must not be empty"));
                }
                let data = params
                    .get("data")
                    .ok_or_else(|| Refusal::InvalidRequest.because("`data` is required"))?;
                check_entry_data(data)?;
                ServiceRequest::SessionAppendEntry {
                    entry_type,
                    data: data.clone(),
                }
            }
            ServiceMethod::SessionSetName => ServiceRequest::SessionSetName {
                name: text("name", MAX_SESSION_LABEL_BYTES)?,
            },
            ServiceMethod::SessionSetLabel => {
                let entry_id = text("entry_id", MAX_ENTRY_ID_BYTES)?;
                if entry_id.is_empty() {
                    return Err(Refusal::InvalidRequest.because("`entry_id` must not be empty"));
                }
                ServiceRequest::SessionSetLabel {
                    entry_id,
                    label: text("label", MAX_SESSION_LABEL_BYTES)?,
                }
            }
            ServiceMethod::SessionSendMessage => {
                let role = match params.get("role") {
                    Some(Value::String(r)) if r == "assistant" => MessageRole::Assistant,
                    Some(Value::String(r)) if r == "system" => MessageRole::System,
                    Some(other) => {
                        return Err(Refusal::InvalidRequest.because(format!(
                            "`role` must be \"assistant\" or \"system\", not {other}; user text goes through session/send_user_message"
                        )))
                    }
                    None => return Err(Refusal::InvalidRequest.because("`role` is required")),
                };
                ServiceRequest::SessionSendMessage {
                    role,
                    text: text("text", MAX_INJECTED_TEXT_BYTES)?,
                }
            }
            ServiceMethod::SessionSendUserMessage => ServiceRequest::SessionSendUserMessage {
                text: text("text", MAX_INJECTED_TEXT_BYTES)?,
            },
            ServiceMethod::ToolsSetActive => {
                let Some(Value::Array(items)) = params.get("names") else {
                    return Err(
                        Refusal::InvalidRequest.because("`names` must be an array of tool names")
                    );
                };
                if items.len() > MAX_ACTIVE_TOOLS {
                    return Err(Refusal::BoundsExceeded.because(format!(
                        "`names` holds {} names; at most {MAX_ACTIVE_TOOLS}",
                        items.len()
                    )));
                }
                let mut names = Vec::with_capacity(items.len());
                for item in items {
                    let Value::String(name) = item else {
                        return Err(Refusal::InvalidRequest.because("every name must be a string"));
                    };
                    if name.len() > MAX_ACTIVE_TOOL_NAME_BYTES {
                        return Err(Refusal::BoundsExceeded.because(format!(
                            "a name is {} bytes; at most {MAX_ACTIVE_TOOL_NAME_BYTES}",
                            name.len()
                        )));
                    }
                    if name.is_empty() {
                        return Err(Refusal::InvalidRequest.because("a name is empty"));
                    }
                    if names.contains(name) {
                        return Err(
                            Refusal::InvalidRequest.because(format!("`{name}` appears twice"))
                        );
                    }
                    names.push(name.clone());
                }
                ServiceRequest::ToolsSetActive { names }
            }
            _ => unreachable!("the API 0.3 methods are parsed by parse_v0_3"),
        })
    }
}

impl ServiceRequest {
    /// The API 0.3 methods: closed models, no parent, no owner.
    pub(super) fn parse_v0_3(
        method: ServiceMethod,
        params: &Map<String, Value>,
    ) -> Result<Self, ServiceRefusal> {
        let value = Value::Object(params.clone());
        let empty = || match params.keys().next() {
            None => Ok(()),
            Some(extra) => Err(Refusal::InvalidRequest
                .because(format!("{} has no member `{extra}`", method.name()))),
        };
        #[derive(serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        struct ProviderIdParams {
            provider_id: String,
        }
        #[derive(serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        struct SwitchParams {
            session_id: String,
        }
        Ok(match method {
            ServiceMethod::ProviderAuthRequest | ServiceMethod::ProviderAuthRevoke => {
                let p: ProviderAuthParams = provider_models::model(&value)?;
                provider_models::check_auth(&p)?;
                if method == ServiceMethod::ProviderAuthRequest {
                    ServiceRequest::ProviderAuthRequest(p)
                } else {
                    ServiceRequest::ProviderAuthRevoke(p)
                }
            }
            ServiceMethod::ProvidersRegister | ServiceMethod::ProvidersUpdate => {
                let r: ProviderRegistration = provider_models::model(&value)?;
                provider_models::check_registration(&r)?;
                if method == ServiceMethod::ProvidersRegister {
                    ServiceRequest::ProvidersRegister(r)
                } else {
                    ServiceRequest::ProvidersUpdate(r)
                }
            }
            ServiceMethod::ProvidersUnregister => {
                let p: ProviderIdParams = provider_models::model(&value)?;
                if p.provider_id.is_empty()
                    || p.provider_id.len() > crate::limits::MAX_PROVIDER_ID_BYTES
                {
                    return Err(Refusal::BoundsExceeded.because(format!(
                        "`provider_id` must be 1 to {} bytes",
                        crate::limits::MAX_PROVIDER_ID_BYTES
                    )));
                }
                ServiceRequest::ProvidersUnregister {
                    provider_id: p.provider_id,
                }
            }
            ServiceMethod::SessionSwitch => {
                let p: SwitchParams = provider_models::model(&value)?;
                provider_models::check_session_id(&p.session_id)?;
                ServiceRequest::SessionSwitch {
                    session_id: p.session_id,
                }
            }
            ServiceMethod::ProvidersComplete => {
                empty()?;
                ServiceRequest::ProvidersComplete
            }
            ServiceMethod::SessionCreate => {
                empty()?;
                ServiceRequest::SessionCreate
            }
            ServiceMethod::SessionFork => {
                empty()?;
                ServiceRequest::SessionFork
            }
            ServiceMethod::SessionReload => {
                empty()?;
                ServiceRequest::SessionReload
            }
            _ => unreachable!("the Wave-1 requests are parsed above"),
        })
    }
}

impl ServiceMethod {
    /// Checks a result before the extension sees it: `composer/get` returns
    /// `{"text"}` with a valid composer text, `session/append_entry` returns
    /// `{"entry_id"}` of 1 to [`MAX_ENTRY_ID_BYTES`] bytes, every other Wave-1 method
    /// `{}`; the API 0.3 methods return their closed models.
    pub fn check_result(self, result: &Value) -> Result<(), String> {
        match self {
            ServiceMethod::ProviderAuthRequest | ServiceMethod::ProviderAuthRevoke => {
                return provider_models::check_auth_answer(result)
            }
            ServiceMethod::ProvidersRegister
            | ServiceMethod::ProvidersUpdate
            | ServiceMethod::ProvidersUnregister => return provider_models::check_revision(result),
            ServiceMethod::SessionCreate
            | ServiceMethod::SessionFork
            | ServiceMethod::SessionReload
            | ServiceMethod::SessionSwitch => return provider_models::check_session_answer(result),
            _ => {}
        }
        let Value::Object(map) = result else {
            return Err("the result must be an object".into());
        };
        let only = |member: &str| -> Result<&Value, String> {
            if let Some(extra) = map.keys().find(|k| k.as_str() != member) {
                return Err(format!("the result has an unknown member `{extra}`"));
            }
            map.get(member)
                .ok_or_else(|| format!("the result needs `{member}`"))
        };
        match self {
            ServiceMethod::ComposerGet => match only("text")? {
                Value::String(text) => check_composer_text(text).map_err(|e| e.detail),
                _ => Err("`text` must be a string".into()),
            },
            ServiceMethod::SessionAppendEntry => match only("entry_id")? {
                Value::String(id) if !id.is_empty() && id.len() <= MAX_ENTRY_ID_BYTES => Ok(()),
                _ => Err(format!(
                    "`entry_id` must be a string of 1 to {MAX_ENTRY_ID_BYTES} bytes"
                )),
            },
            _ => match map.keys().next() {
                None => Ok(()),
                Some(extra) => Err(format!(
                    "{} returns {{}}; the result has `{extra}`",
                    self.name()
                )),
            },
        }
    }
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
