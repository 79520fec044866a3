//! `notes`: the Wave-1 services from an extension (sections 2.19-2.21, 2.20, 1.11).
//!
//! Its tool `save_draft` reads the host composer (`composer/get`), stores the text as a
//! session entry (`session/append_entry`), labels that entry (`session/set_label`),
//! and clears the composer (`composer/set`). It registers the shortcut
//! [`SAVE_SHORTCUT`] inside `initialize`; a trigger sends a notification. The manifest
//! needs API 0.2 or 0.4, `contributes.tools = ["save_draft"]` and
//! `contributes.notifications = true`; the host must bind `composer`,
//! `session_entries` and `shortcuts`.

use serde_json::json;

use crate::sdk::{
    Context, Extension, HandlerError, NotificationLevel, ToolOutput, FEATURE_COMPOSER,
    FEATURE_SESSION_ENTRIES,
};

/// The shortcut `notes` registers.
pub const SAVE_SHORTCUT: &str = "notes.save";

/// The label `save_draft` gives the entry it appends.
pub const DRAFT_LABEL: &str = "draft";

/// The `notes` example.
pub fn notes() -> Extension {
    Extension::new()
        .feature(FEATURE_COMPOSER)
        .feature(FEATURE_SESSION_ENTRIES)
        .tool(
            "save_draft",
            "Save the composer's text as a labelled session entry and clear the composer",
            json!({"type": "object", "additionalProperties": false}),
            |_: serde_json::Value, cx: &Context| save_draft(cx),
        )
        .shortcut(SAVE_SHORTCUT, "ctrl+alt+s", "Save the draft", |cx| {
            cx.notify(
                NotificationLevel::Info,
                "notes",
                "the save shortcut was pressed",
            );
        })
}

fn save_draft(cx: &Context) -> Result<ToolOutput, HandlerError> {
    let host = |e: crate::sdk::ChildRequestError| HandlerError::internal(e.to_string());
    let text = cx.composer_get().map_err(host)?;
    if text.trim().is_empty() {
        return Ok(ToolOutput::error("the composer is empty; nothing to save"));
    }
    let entry = cx
        .append_entry("draft", json!({ "text": text }))
        .map_err(host)?;
    cx.set_entry_label(&entry, DRAFT_LABEL).map_err(host)?;
    cx.composer_set("").map_err(host)?;
    Ok(ToolOutput::text(format!(
        "saved {} bytes as entry {entry} ({DRAFT_LABEL}) and cleared the composer",
        text.len()
    )))
}
