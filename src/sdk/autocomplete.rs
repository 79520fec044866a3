//! The extension side of host-mediated autocomplete (section 2.24b): a completion
//! chain registered once `initialize` was answered, and its handler for each
//! `ui/autocomplete/complete` query.

use std::sync::Arc;

use serde_json::{json, Map, Value};

use super::context::Context;
use super::error::HandlerError;
use super::extension::{AutocompleteEntry, Extension};
pub use super::output::Completions;
use super::runtime::diagnostic;
use crate::negotiation::Feature;
pub use crate::services::autocomplete::{CompletionItem, CompletionQuery};

/// The feature of `ui/autocomplete/register` and `ui/autocomplete/complete`
/// (section 2.24b).
pub const FEATURE_AUTOCOMPLETE: &str = Feature::Autocomplete.as_str();

/// The API 0.4 feature of the completion items' edit fields (section 2.24b); it needs
/// [`FEATURE_AUTOCOMPLETE`].
pub const FEATURE_AUTOCOMPLETE_EDIT: &str = Feature::AutocompleteEditV1.as_str();

impl Extension {
    /// Registers a completion chain (section 2.24b) and enables `autocomplete`. When
    /// the host offers it, `ui/autocomplete/register {revision}` is sent once
    /// `initialize` was answered; each query the host sends then runs `handler`, whose
    /// reply the host checks against the exact snapshot. Enable
    /// [`FEATURE_AUTOCOMPLETE_EDIT`] too to return items with
    /// [`CompletionItem::edit`].
    pub fn autocomplete<F>(mut self, revision: u64, handler: F) -> Extension
    where
        F: Fn(CompletionQuery, &Context) -> Result<Completions, HandlerError>
            + Send
            + Sync
            + 'static,
    {
        self.autocomplete = Some(AutocompleteEntry {
            revision,
            handler: Arc::new(handler),
        });
        self.feature(FEATURE_AUTOCOMPLETE)
    }
}

/// Sends `ui/autocomplete/register` for the chain, on a thread of its own (the reader
/// keeps reading its answer), when `autocomplete` was negotiated.
pub(crate) fn register(ext: &Extension, cx: Context) {
    let Some(entry) = &ext.autocomplete else {
        return;
    };
    if !cx.has_feature(FEATURE_AUTOCOMPLETE) {
        return;
    }
    let mut params = Map::new();
    params.insert("revision".into(), json!(entry.revision));
    let spawned = std::thread::Builder::new()
        .name("octet-sdk-autocomplete".into())
        .spawn(move || {
            if let Err(error) = cx.request_detached("ui/autocomplete/register", params) {
                diagnostic::diagnostic(format_args!(
                    "the host did not admit the completion chain: {error}"
                ));
            }
        });
    if let Err(error) = spawned {
        diagnostic::diagnostic(format_args!("no thread to register completions: {error}"));
    }
}

/// Runs the chain's handler for one `ui/autocomplete/complete` request.
pub(crate) fn complete(
    ext: &Extension,
    params: Map<String, Value>,
    cx: &Context,
) -> Result<Value, HandlerError> {
    let entry = ext
        .autocomplete
        .as_ref()
        .expect("resolved only with a chain");
    let text = params.get("text").and_then(Value::as_str);
    let cursor = params.get("cursor").and_then(Value::as_u64);
    let revision = params.get("revision").and_then(Value::as_u64);
    let (Some(text), Some(cursor), Some(revision)) = (text, cursor, revision) else {
        return Err(HandlerError::invalid_params(
            "ui/autocomplete/complete needs `text`, `cursor` and `revision`",
        ));
    };
    let query = CompletionQuery::new(text, cursor as usize, revision);
    let completions = (entry.handler)(query, cx)?;
    Ok(serde_json::to_value(completions).expect("plain data serializes"))
}
