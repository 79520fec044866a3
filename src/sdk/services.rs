//! The extension side of the Wave-1 services (sections 1.11, 2.19-2.23): the requests
//! a handler sends through its [`Context`], runtime shortcuts registered inside
//! `initialize`, and `message/updated` batches.
//!
//! Requests are checked against the same bounds the host enforces before anything is
//! written: a local refusal is [`ChildRequestError::Refused`] with the contract name
//! (section 2.19, "a local refusal ... before anything is written"). Each request needs
//! its feature negotiated: enable it with [`crate::sdk::Extension::feature`]
//! (`composer`, `session_entries`, `message_injection`, `active_tools`); `shortcuts`
//! and `message_injection` are enabled by [`crate::sdk::Extension::shortcut`] and
//! [`crate::sdk::Extension::on_message_update`].

use std::sync::Arc;

use serde_json::{json, Map, Value};

use super::context::Context;
use super::error::ChildRequestError;
use super::extension::{Extension, ShortcutEntry};
use super::features::{FEATURE_MESSAGE_INJECTION, FEATURE_SHORTCUTS};
pub use super::request::MessageUpdate;
use crate::services::bound::{
    ActiveToolSet, AppendEntry, ComposerEdit, EntryLabel, InjectedMessage, MessageRole, NoParams,
    Refusal, ServiceRequest, SessionName, UserMessage,
};

impl Extension {
    /// Registers a runtime shortcut (section 2.20) and enables `shortcuts`. When the
    /// host offers the feature, every shortcut is registered inside `initialize`, one
    /// at a time, before `initialize` is answered; a `shortcut/trigger` for one the host
    /// admitted runs `handler` (one at a time, in arrival order, on a thread of its own;
    /// the context has no request). Registering an id again replaces the earlier one.
    pub fn shortcut<F>(
        mut self,
        id: impl Into<String>,
        key: impl Into<String>,
        description: impl Into<String>,
        handler: F,
    ) -> Extension
    where
        F: Fn(&Context) + Send + Sync + 'static,
    {
        let entry = ShortcutEntry {
            id: id.into(),
            key: key.into(),
            description: description.into(),
            handler: Arc::new(handler),
        };
        self.shortcuts.retain(|s| s.id != entry.id);
        self.shortcuts.push(entry);
        self.feature(FEATURE_SHORTCUTS)
    }

    /// Receives `message/updated` batches (section 1.11) and enables
    /// `message_injection`. Batches arrive in order, one at a time, on the thread that
    /// runs shortcut handlers.
    pub fn on_message_update<F>(mut self, handler: F) -> Extension
    where
        F: Fn(MessageUpdate, &Context) + Send + Sync + 'static,
    {
        self.message_update = Some(Arc::new(handler));
        self.feature(FEATURE_MESSAGE_INJECTION)
    }
}

impl Context {
    /// `composer/get` (section 2.19): the host composer's whole text.
    pub fn composer_get(&self) -> Result<String, ChildRequestError> {
        let answer = self.service(ServiceRequest::ComposerGet(NoParams {}))?;
        string_member(&answer, "text", "composer/get")
    }

    /// `composer/set` (section 2.19): replaces the whole composer text.
    pub fn composer_set(&self, text: &str) -> Result<(), ChildRequestError> {
        let text = text.into();
        self.service_unit(ServiceRequest::ComposerSet(ComposerEdit { text }))
    }

    /// `composer/insert` (section 2.19): inserts at the composer's cursor.
    pub fn composer_insert(&self, text: &str) -> Result<(), ChildRequestError> {
        let text = text.into();
        self.service_unit(ServiceRequest::ComposerInsert(ComposerEdit { text }))
    }

    /// `session/append_entry` (section 2.21): stores `data` and returns the host's
    /// durable entry id.
    pub fn append_entry(&self, entry_type: &str, data: Value) -> Result<String, ChildRequestError> {
        let request = ServiceRequest::SessionAppendEntry(AppendEntry {
            entry_type: entry_type.into(),
            data,
        });
        let answer = self.service(request)?;
        string_member(&answer, "entry_id", "session/append_entry")
    }

    /// `session/set_name` (section 2.21); an empty name clears it.
    pub fn set_session_name(&self, name: &str) -> Result<(), ChildRequestError> {
        let name = name.into();
        self.service_unit(ServiceRequest::SessionSetName(SessionName { name }))
    }

    /// `session/set_label` (section 2.21); an empty label clears it.
    pub fn set_entry_label(&self, entry_id: &str, label: &str) -> Result<(), ChildRequestError> {
        self.service_unit(ServiceRequest::SessionSetLabel(EntryLabel {
            entry_id: entry_id.into(),
            label: label.into(),
        }))
    }

    /// `session/send_message` (section 2.22): an `assistant` or `system` message.
    pub fn send_message(&self, role: MessageRole, text: &str) -> Result<(), ChildRequestError> {
        let text = text.into();
        self.service_unit(ServiceRequest::SessionSendMessage(InjectedMessage {
            role,
            text,
        }))
    }

    /// `session/send_user_message` (section 2.22).
    pub fn send_user_message(&self, text: &str) -> Result<(), ChildRequestError> {
        let text = text.into();
        self.service_unit(ServiceRequest::SessionSendUserMessage(UserMessage { text }))
    }

    /// `tools/set_active` (section 2.23): `names` is the complete replacement set.
    pub fn set_active_tools(&self, names: &[&str]) -> Result<(), ChildRequestError> {
        let names = names.iter().map(|n| n.to_string()).collect();
        self.service_unit(ServiceRequest::ToolsSetActive(ActiveToolSet { names }))
    }

    fn service_unit(&self, request: ServiceRequest) -> Result<(), ChildRequestError> {
        self.service(request).map(|_| ())
    }

    /// Sends any request of the host's method table and returns the host's `result`:
    /// the one call behind the helpers above, for every method of the table. It is
    /// checked as the host will check it first (the closed params and their bounds),
    /// so a malformed or oversized request is refused locally
    /// ([`ChildRequestError::Refused`]) and nothing is written. A method that names a
    /// parent is sent with this handler's request as `parent_request_id`; its kind's
    /// feature must have been negotiated (enable it with
    /// [`crate::sdk::Extension::feature`]).
    ///
    /// ```no_run
    /// use octet_host::sdk::Context;
    /// use octet_host::services::bound::{ComposerEdit, ServiceRequest};
    ///
    /// fn draft(ctx: &Context) -> Result<(), octet_host::sdk::ChildRequestError> {
    ///     let text = "/review ".to_string();
    ///     ctx.service(ServiceRequest::ComposerInsert(ComposerEdit { text }))?;
    ///     Ok(())
    /// }
    /// ```
    pub fn service(&self, request: ServiceRequest) -> Result<Value, ChildRequestError> {
        let method = request.method();
        let Value::Object(params) = request.params() else {
            unreachable!("the table's params types are objects");
        };
        ServiceRequest::parse(method, &params).map_err(ChildRequestError::Refused)?;
        if method.is_notification() {
            return Err(ChildRequestError::Refused(
                Refusal::InvalidRequest
                    .because(format!("{method} is a notification, not a request")),
            ));
        }
        if let Some(feature) = method.kind().feature() {
            if !self.has_feature(feature.as_str()) {
                return Err(ChildRequestError::Refused(
                    Refusal::UnsupportedFeature.because(format!("{feature} was not negotiated")),
                ));
            }
        }
        if method.admission().names_parent() {
            self.request(method.name(), params)
        } else {
            self.request_detached(method.name(), params)
        }
    }
}

/// The string `member` of the host's answer to `method`.
fn string_member(
    answer: &Value,
    member: &str,
    method: &'static str,
) -> Result<String, ChildRequestError> {
    answer
        .get(member)
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or(ChildRequestError::MalformedAnswer { method })
}

/// `shortcut/register` params for one entry, inside the `initialize` request `parent`.
pub(crate) fn registration(parent: u64, shortcut: &ShortcutEntry) -> Map<String, Value> {
    let mut params = Map::new();
    params.insert("parent_request_id".into(), json!(parent));
    params.insert("id".into(), json!(shortcut.id));
    params.insert("key".into(), json!(shortcut.key));
    params.insert("description".into(), json!(shortcut.description));
    params
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::MAX_MESSAGE_BATCH_DELTAS;

    #[test]
    fn batches_take_either_form_and_refuse_long_arrays() {
        let counted = json!({"message_id": "m", "delta": "abc", "deltas": 3});
        assert_eq!(
            MessageUpdate::parse(&counted).unwrap(),
            MessageUpdate {
                message_id: "m".into(),
                delta: "abc".into(),
                deltas: 3
            }
        );
        let array = json!({"message_id": "m", "updates": ["a", "b"]});
        assert_eq!(MessageUpdate::parse(&array).unwrap().delta, "ab");
        let at = json!({"message_id": "m", "deltas": vec!["x"; MAX_MESSAGE_BATCH_DELTAS]});
        assert_eq!(MessageUpdate::parse(&at).unwrap().deltas, 1024);
        let past = json!({"message_id": "m", "deltas": vec!["x"; MAX_MESSAGE_BATCH_DELTAS + 1]});
        assert_eq!(
            MessageUpdate::parse(&past).unwrap_err().refusal,
            Refusal::BoundsExceeded
        );
        assert!(MessageUpdate::parse(&json!([1])).is_err());
    }
}
