//! `services::autocomplete` (section 2.24b): the edit an item makes, and a reply checked
//! against its snapshot, on arbitrary input.
//!
//! The input is one JSON document `{"text", "cursor", "edit_v1", "reply"}` (inputs that
//! are not JSON of that shape are skipped).
//!
//! Invariants: neither function panics, nor does an error's `Display`; every accepted
//! edit keeps the text before the replaced range and after it, puts the value in
//! between, lands the cursor on a boundary inside the value, and stays within the
//! editor budget; an accepted reply's edits are exactly what `apply_completion` gives
//! for each item, run again.

#![no_main]

use libfuzzer_sys::fuzz_target;
use octet_host::limits::MAX_AUTOCOMPLETE_TEXT_BYTES;
use octet_host::services::autocomplete::{
    apply_completion, completion_reply, CompletionEdit, CompletionItem,
};
use serde_json::Value;

fn check_edit(text: &str, item: &CompletionItem, edit: &CompletionEdit) {
    let (start, end) = (edit.replaced.start, edit.replaced.end);
    assert!(start <= end && end <= text.len());
    assert!(edit.text.len() <= MAX_AUTOCOMPLETE_TEXT_BYTES);
    assert_eq!(&edit.text[..start], &text[..start]);
    assert_eq!(&edit.text[start..start + item.value.len()], item.value);
    assert_eq!(&edit.text[start + item.value.len()..], &text[end..]);
    assert!(edit.cursor >= start && edit.cursor <= start + item.value.len());
    assert!(edit.text.is_char_boundary(edit.cursor));
}

fuzz_target!(|data: &[u8]| {
    let Ok(input) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let (Some(text), Some(cursor)) = (input["text"].as_str(), input["cursor"].as_u64()) else {
        return;
    };
    let cursor = cursor as usize;
    let edit_v1 = input["edit_v1"].as_bool().unwrap_or(false);
    match completion_reply(&input["reply"], text, cursor, edit_v1) {
        Ok(reply) => {
            for (item, edit) in &reply.items {
                check_edit(text, item, edit);
                let again = apply_completion(text, cursor, &reply.prefix, item);
                assert_eq!(again.as_ref(), Ok(edit), "the edit is not repeatable");
            }
        }
        Err(error) => {
            let _ = error.to_string();
        }
    }
    // The edit alone, with the reply's first item taken as given.
    let item = &input["reply"]["items"][0];
    if let (Some(prefix), Some(value)) = (input["reply"]["prefix"].as_str(), item["value"].as_str())
    {
        let item = CompletionItem {
            value: value.to_owned(),
            label: String::new(),
            description: None,
            replace_after_bytes: item["replace_after_bytes"].as_u64().map(|n| n as u32),
            cursor_offset_bytes: item["cursor_offset_bytes"].as_u64().map(|n| n as u32),
        };
        match apply_completion(text, cursor, prefix, &item) {
            Ok(edit) => check_edit(text, &item, &edit),
            Err(error) => {
                let _ = error.to_string();
            }
        }
    }
});
