//! Validation errors: their messages.

use super::menu::{check_menu, top};
use super::*;

// ---------------------------------------------------------------------------
// Error messages.
// ---------------------------------------------------------------------------

#[test]
fn errors_read_as_sentences_naming_the_field() {
    let error = v02_media(&with_content(json!([
        text("a"),
        text("b"),
        text("c"),
        {"type": "image", "artifact_id": "img", "mime_type": 7}
    ])))
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "`content[3].mime_type` must be a string."
    );
    let error = check_menu(&top(vec![
        json!({"id": "a", "label": "a", "command": "nope"}),
    ]))
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "`items[0].command` is \"nope\", which is not a command this extension declared."
    );
    let error = status_collect(
        &json!({"surface": "footer", "text": "x"}),
        octet_host::manifest::UiSurface::Status,
    )
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "`surface` is \"footer\", but the host asked for \"status\"."
    );
}
