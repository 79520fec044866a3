//! Host-mediated autocomplete (section 2.24b): the reply to one
//! `ui/autocomplete/complete` snapshot checked on receipt, and the edit an item makes.
//!
//! [`completion_reply`] validates a reply against the exact request it answers: the
//! closed shapes, at most [`MAX_AUTOCOMPLETE_ITEMS`] items, every string at most
//! [`MAX_AUTOCOMPLETE_STRING_BYTES`] without control characters (with
//! `autocomplete_edit_v1`, the prefix and a value may hold LF, TAB and CR), the
//! `replace_after_bytes` and `cursor_offset_bytes` fields only with
//! `autocomplete_edit_v1`, and every item's edit. [`apply_completion`] is that edit as a
//! pure function, for the embedder to call again at display and at acceptance time,
//! where the reference repeats the range, UTF-8 and budget checks.
//!
//! The edit, for snapshot text `t` and byte cursor `c`: `start = c - prefix.len()`,
//! `end = c + replace_after_bytes` (default 0); the prefix must be exactly `t[start..c]`,
//! `t[start..end]` is replaced with the value, and the new cursor is
//! `start + cursor_offset_bytes` (default the value's length), a boundary within the
//! inserted value; the whole new text stays within [`MAX_AUTOCOMPLETE_TEXT_BYTES`].

use std::fmt;
use std::ops::Range;

use serde_json::{Map, Value};

use crate::limits::{
    MAX_AUTOCOMPLETE_ITEMS, MAX_AUTOCOMPLETE_STRING_BYTES, MAX_AUTOCOMPLETE_TEXT_BYTES,
};

/// One completion an extension offers. It serializes as the item of a
/// `ui/autocomplete/complete` reply (the edit fields only when set).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct CompletionItem {
    /// What replaces the prefix (and, with `replace_after_bytes`, what follows the
    /// cursor).
    pub value: String,
    /// What the menu shows.
    pub label: String,
    /// A longer text for the menu, if any.
    pub description: Option<String>,
    /// Bytes after the cursor the value also replaces (`autocomplete_edit_v1`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replace_after_bytes: Option<u32>,
    /// Where the cursor lands within the value (`autocomplete_edit_v1`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cursor_offset_bytes: Option<u32>,
}

/// One autocomplete query: the editor snapshot the host sends as
/// `ui/autocomplete/complete {text, cursor, revision}` (section 2.24b). Keep it: a reply
/// applies only while the editor still shows exactly this snapshot
/// ([`CompletionQuery::still_matches`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompletionQuery {
    /// The editor text, at most [`MAX_AUTOCOMPLETE_TEXT_BYTES`]; LF, TAB and CR are its
    /// only control characters.
    pub text: String,
    /// The cursor, a byte offset on a character boundary of `text`.
    pub cursor: usize,
    /// The editor's draft revision.
    pub revision: u64,
}

impl CompletionItem {
    /// An item that inserts `value` in place of the prefix, shown as `label`.
    pub fn new(value: impl Into<String>, label: impl Into<String>) -> CompletionItem {
        CompletionItem {
            value: value.into(),
            label: label.into(),
            description: None,
            replace_after_bytes: None,
            cursor_offset_bytes: None,
        }
    }

    /// With a description for the menu.
    pub fn description(mut self, description: impl Into<String>) -> CompletionItem {
        self.description = Some(description.into());
        self
    }

    /// With the `autocomplete_edit_v1` fields: the bytes after the cursor it also
    /// replaces, and where the cursor lands within the value.
    pub fn edit(mut self, replace_after_bytes: u32, cursor_offset_bytes: u32) -> CompletionItem {
        self.replace_after_bytes = Some(replace_after_bytes);
        self.cursor_offset_bytes = Some(cursor_offset_bytes);
        self
    }
}

impl CompletionQuery {
    /// A query for `text` with the cursor at byte `cursor`, in draft `revision`.
    pub fn new(text: impl Into<String>, cursor: usize, revision: u64) -> CompletionQuery {
        CompletionQuery {
            text: text.into(),
            cursor,
            revision,
        }
    }

    /// Checks the snapshot before it is sent: the budget, the control characters and
    /// the cursor.
    pub fn check(&self) -> Result<(), EditError> {
        if self.text.len() > MAX_AUTOCOMPLETE_TEXT_BYTES {
            return Err(EditError::TextTooLong {
                bytes: self.text.len(),
            });
        }
        if let Some(c) = self
            .text
            .chars()
            .find(|&c| c.is_control() && !matches!(c, '\n' | '\t' | '\r'))
        {
            return Err(EditError::ControlCharacter { found: c });
        }
        if !self.text.is_char_boundary(self.cursor) {
            return Err(EditError::CursorNotBoundary {
                cursor: self.cursor,
            });
        }
        Ok(())
    }

    /// True while the editor shows exactly this snapshot: the same text, cursor and
    /// revision. A reply to a query that no longer matches must not edit anything
    /// (section 2.24b: "a late empty reply cannot edit a new draft").
    pub fn still_matches(&self, text: &str, cursor: usize, revision: u64) -> bool {
        self.revision == revision && self.cursor == cursor && self.text == text
    }
}

/// The editor text and cursor after accepting an item.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompletionEdit {
    /// The byte range of the snapshot text the value replaced.
    pub replaced: Range<usize>,
    /// The whole new text.
    pub text: String,
    /// The new cursor, a byte offset into `text`.
    pub cursor: usize,
}

/// A checked reply: the prefix and each item with the edit it makes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompletionReply {
    /// The exact text before the cursor the items replace.
    pub prefix: String,
    /// The items, in the extension's order, each with its edit of the snapshot.
    pub items: Vec<(CompletionItem, CompletionEdit)>,
}

impl CompletionReply {
    /// True when the reply claims nothing: the next chain, then native completion, is
    /// tried (section 2.24b).
    pub fn is_unclaimed(&self) -> bool {
        self.items.is_empty()
    }
}

/// Why an edit cannot be made.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum EditError {
    /// The snapshot text is over the editor budget.
    TextTooLong {
        /// Its length.
        bytes: usize,
    },
    /// The snapshot text holds a control character other than LF, TAB and CR.
    ControlCharacter {
        /// The character.
        found: char,
    },
    /// The cursor lies past the text or inside a character.
    CursorNotBoundary {
        /// The cursor.
        cursor: usize,
    },
    /// The prefix is not exactly the text before the cursor.
    PrefixMismatch,
    /// `cursor + replace_after_bytes` lies past the text or inside a character.
    EndNotBoundary {
        /// The end of the replaced range.
        end: usize,
    },
    /// `cursor_offset_bytes` lies past the value or inside a character of it.
    OffsetNotBoundary {
        /// The offset.
        offset: usize,
    },
    /// The new text would be over the editor budget.
    ResultTooLong {
        /// Its length.
        bytes: usize,
    },
}

impl fmt::Display for EditError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let max = MAX_AUTOCOMPLETE_TEXT_BYTES;
        match self {
            EditError::TextTooLong { bytes } => {
                write!(f, "the editor text is {bytes} bytes; at most {max}")
            }
            EditError::ControlCharacter { found } => write!(
                f,
                "the editor text holds the control character U+{:04X}; only LF, TAB and CR are allowed",
                *found as u32
            ),
            EditError::CursorNotBoundary { cursor } => write!(
                f,
                "the cursor {cursor} is not a character boundary of the editor text"
            ),
            EditError::PrefixMismatch => {
                f.write_str("`prefix` is not exactly the text before the cursor")
            }
            EditError::EndNotBoundary { end } => write!(
                f,
                "`replace_after_bytes` ends at {end}, not a character boundary of the text"
            ),
            EditError::OffsetNotBoundary { offset } => write!(
                f,
                "`cursor_offset_bytes` {offset} is not a character boundary of the value"
            ),
            EditError::ResultTooLong { bytes } => {
                write!(f, "the edited text would be {bytes} bytes; at most {max}")
            }
        }
    }
}

impl std::error::Error for EditError {}

/// The edit accepting `item` makes to the snapshot `text` with byte cursor `cursor`,
/// for a reply whose prefix is `prefix` (section 2.24b). Pure: call it again at display
/// and at acceptance, with the same snapshot.
pub fn apply_completion(
    text: &str,
    cursor: usize,
    prefix: &str,
    item: &CompletionItem,
) -> Result<CompletionEdit, EditError> {
    if text.len() > MAX_AUTOCOMPLETE_TEXT_BYTES {
        return Err(EditError::TextTooLong { bytes: text.len() });
    }
    if !text.is_char_boundary(cursor) {
        return Err(EditError::CursorNotBoundary { cursor });
    }
    if !text[..cursor].ends_with(prefix) {
        return Err(EditError::PrefixMismatch);
    }
    let start = cursor - prefix.len();
    let after = item.replace_after_bytes.unwrap_or(0) as usize;
    let end = cursor.saturating_add(after);
    if !text.is_char_boundary(end) {
        return Err(EditError::EndNotBoundary { end });
    }
    let offset = item
        .cursor_offset_bytes
        .map_or(item.value.len(), |o| o as usize);
    if !item.value.is_char_boundary(offset) {
        return Err(EditError::OffsetNotBoundary { offset });
    }
    let bytes = text.len() - (end - start) + item.value.len();
    if bytes > MAX_AUTOCOMPLETE_TEXT_BYTES {
        return Err(EditError::ResultTooLong { bytes });
    }
    let mut edited = String::with_capacity(bytes);
    edited.push_str(&text[..start]);
    edited.push_str(&item.value);
    edited.push_str(&text[end..]);
    Ok(CompletionEdit {
        replaced: start..end,
        text: edited,
        cursor: start + offset,
    })
}

/// Why a reply is refused; nothing of it is shown.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplyError {
    /// Where: `prefix`, `items[3].value`, ...
    pub path: String,
    /// What is wrong.
    pub reason: String,
}

impl fmt::Display for ReplyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}`: {}", self.path, self.reason)
    }
}

impl std::error::Error for ReplyError {}

fn refuse(path: impl Into<String>, reason: impl Into<String>) -> ReplyError {
    ReplyError {
        path: path.into(),
        reason: reason.into(),
    }
}

/// Checks a reply to the snapshot `text` with byte cursor `cursor`; `edit_v1` when
/// `autocomplete_edit_v1` was negotiated.
pub fn completion_reply(
    reply: &Value,
    text: &str,
    cursor: usize,
    edit_v1: bool,
) -> Result<CompletionReply, ReplyError> {
    let object = closed(reply, "result", &["prefix", "items"])?;
    let prefix = string(object.get("prefix"), "prefix", edit_v1)?;
    let items = match object.get("items") {
        None => &[][..],
        Some(Value::Array(items)) => items.as_slice(),
        Some(_) => return Err(refuse("items", "must be an array")),
    };
    if items.len() > MAX_AUTOCOMPLETE_ITEMS {
        return Err(refuse(
            "items",
            format!("{} items; at most {MAX_AUTOCOMPLETE_ITEMS}", items.len()),
        ));
    }
    let mut checked = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let at = |member: &str| format!("items[{i}].{member}");
        let fields = [
            "value",
            "label",
            "description",
            "replace_after_bytes",
            "cursor_offset_bytes",
        ];
        let object = closed(item, &format!("items[{i}]"), &fields)?;
        let item = CompletionItem {
            value: string(object.get("value"), &at("value"), edit_v1)?,
            label: string(object.get("label"), &at("label"), false)?,
            description: match object.get("description") {
                None | Some(Value::Null) => None,
                some => Some(string(some, &at("description"), false)?),
            },
            replace_after_bytes: edit_field(object, "replace_after_bytes", &at, edit_v1)?,
            cursor_offset_bytes: edit_field(object, "cursor_offset_bytes", &at, edit_v1)?,
        };
        let edit = apply_completion(text, cursor, &prefix, &item)
            .map_err(|e| refuse(format!("items[{i}]"), e.to_string()))?;
        checked.push((item, edit));
    }
    if checked.is_empty() && !text.is_char_boundary(cursor) {
        return Err(refuse(
            "cursor",
            EditError::CursorNotBoundary { cursor }.to_string(),
        ));
    }
    Ok(CompletionReply {
        prefix,
        items: checked,
    })
}

/// `value` as an object with only `members`.
fn closed<'a>(
    value: &'a Value,
    path: &str,
    members: &[&str],
) -> Result<&'a Map<String, Value>, ReplyError> {
    let Value::Object(object) = value else {
        return Err(refuse(path, "must be an object"));
    };
    if let Some(extra) = object.keys().find(|k| !members.contains(&k.as_str())) {
        return Err(refuse(path, format!("has no member `{extra}`")));
    }
    Ok(object)
}

/// A required string of at most [`MAX_AUTOCOMPLETE_STRING_BYTES`] without control
/// characters (LF, TAB and CR allowed when `breaks`).
fn string(value: Option<&Value>, path: &str, breaks: bool) -> Result<String, ReplyError> {
    let text = match value {
        Some(Value::String(text)) => text,
        Some(_) => return Err(refuse(path, "must be a string")),
        None => return Err(refuse(path, "is required")),
    };
    if text.len() > MAX_AUTOCOMPLETE_STRING_BYTES {
        return Err(refuse(
            path,
            format!(
                "is {} bytes; at most {MAX_AUTOCOMPLETE_STRING_BYTES}",
                text.len()
            ),
        ));
    }
    let allowed = |c: char| breaks && matches!(c, '\n' | '\t' | '\r');
    if let Some(c) = text.chars().find(|&c| c.is_control() && !allowed(c)) {
        return Err(refuse(
            path,
            format!("holds the control character U+{:04X}", c as u32),
        ));
    }
    Ok(text.clone())
}

/// An `autocomplete_edit_v1` field: absent, or a non-negative integer within `u32`;
/// present without the feature, null, negative, fractional or larger is refused.
fn edit_field(
    object: &Map<String, Value>,
    member: &str,
    at: &dyn Fn(&str) -> String,
    edit_v1: bool,
) -> Result<Option<u32>, ReplyError> {
    let Some(value) = object.get(member) else {
        return Ok(None);
    };
    if !edit_v1 {
        return Err(refuse(
            at(member),
            "is part of autocomplete_edit_v1, which was not negotiated",
        ));
    }
    value
        .as_u64()
        .and_then(|n| u32::try_from(n).ok())
        .map(Some)
        .ok_or_else(|| refuse(at(member), "must be an integer from 0 to 4294967295"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_references_example_keeps_the_closing_quote() {
        let reply = json!({"prefix": "é", "items": [{"value": "文/\"", "label": "Directory",
            "description": "Keep the closing quote", "replace_after_bytes": 1,
            "cursor_offset_bytes": 4}]});
        let checked = completion_reply(&reply, "é\"", 2, true).unwrap();
        let (_, edit) = &checked.items[0];
        assert_eq!(edit.replaced, 0..3);
        assert_eq!(edit.text, "文/\"");
        assert_eq!(edit.cursor, 4);
        assert_eq!(&edit.text[..edit.cursor], "文/");
        // Without the feature the same fields are refused, even at zero.
        let error = completion_reply(&reply, "é\"", 2, false).unwrap_err();
        assert_eq!(error.path, "items[0].replace_after_bytes");
    }

    #[test]
    fn the_base_profile_replaces_the_prefix_and_ends_after_the_value() {
        let reply = json!({"prefix": "/re", "items": [{"value": "/review ", "label": "review",
            "description": null}]});
        let checked = completion_reply(&reply, "x /re", 5, false).unwrap();
        let (item, edit) = &checked.items[0];
        assert_eq!(item.description, None);
        assert_eq!(edit.text, "x /review ");
        assert_eq!(edit.cursor, edit.text.len());
        let empty = completion_reply(&json!({"prefix": ""}), "abc", 1, false).unwrap();
        assert!(empty.is_unclaimed());
    }

    #[test]
    fn every_range_and_boundary_is_checked() {
        let item = |value: &str, after: Option<u32>, offset: Option<u32>| CompletionItem {
            value: value.into(),
            label: "l".into(),
            description: None,
            replace_after_bytes: after,
            cursor_offset_bytes: offset,
        };
        let text = "aé";
        assert_eq!(
            apply_completion(text, 2, "", &item("x", None, None)),
            Err(EditError::CursorNotBoundary { cursor: 2 })
        );
        assert_eq!(
            apply_completion(text, 1, "b", &item("x", None, None)),
            Err(EditError::PrefixMismatch)
        );
        assert_eq!(
            apply_completion(text, 1, "a", &item("x", Some(1), None)),
            Err(EditError::EndNotBoundary { end: 2 })
        );
        assert_eq!(
            apply_completion(text, 1, "a", &item("x", Some(9), None)),
            Err(EditError::EndNotBoundary { end: 10 })
        );
        assert_eq!(
            apply_completion(text, 1, "a", &item("é", None, Some(1))),
            Err(EditError::OffsetNotBoundary { offset: 1 })
        );
        let full = "x".repeat(MAX_AUTOCOMPLETE_TEXT_BYTES);
        assert_eq!(
            apply_completion(&full, 0, "", &item("y", None, None)),
            Err(EditError::ResultTooLong {
                bytes: MAX_AUTOCOMPLETE_TEXT_BYTES + 1
            })
        );
    }

    #[test]
    fn replies_are_closed_bounded_and_control_free() {
        let refused = |reply: Value, edit_v1: bool| {
            completion_reply(&reply, "ab", 2, edit_v1).unwrap_err().path
        };
        let item = |extra: Value| {
            let mut item = json!({"value": "b", "label": "b"});
            item.as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            json!({"prefix": "b", "items": [item]})
        };
        assert_eq!(refused(item(json!({"x": 1})), true), "items[0]");
        assert_eq!(
            refused(item(json!({"label": "a\u{1b}[2J"})), true),
            "items[0].label"
        );
        assert_eq!(
            refused(item(json!({"replace_after_bytes": null})), true),
            "items[0].replace_after_bytes"
        );
        assert_eq!(
            refused(item(json!({"cursor_offset_bytes": -1})), true),
            "items[0].cursor_offset_bytes"
        );
        assert_eq!(
            refused(item(json!({"cursor_offset_bytes": 0.5})), true),
            "items[0].cursor_offset_bytes"
        );
        // LF in a value only with the edit profile; never in a label.
        assert_eq!(
            refused(item(json!({"value": "b\n"})), false),
            "items[0].value"
        );
        assert!(completion_reply(&item(json!({"value": "b\n"})), "ab", 2, true).is_ok());
        assert_eq!(
            refused(item(json!({"label": "b\n"})), true),
            "items[0].label"
        );
        let many: Vec<Value> = (0..33)
            .map(|_| json!({"value": "b", "label": "b"}))
            .collect();
        assert_eq!(
            refused(json!({"prefix": "b", "items": many}), false),
            "items"
        );
        let long = "b".repeat(MAX_AUTOCOMPLETE_STRING_BYTES + 1);
        assert_eq!(refused(json!({"prefix": long}), false), "prefix");
    }
}
