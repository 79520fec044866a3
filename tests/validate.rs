//! Table tests for result validation: every rule of sections 1.2 to 1.7 and 1.6b, each
//! checked for the exact field path and rule it reports.

#[path = "validate/errors.rs"]
mod errors;
#[path = "validate/hooks.rs"]
mod hooks;
#[path = "validate/menu.rs"]
mod menu;
#[path = "validate/tool_call.rs"]
mod tool_call;

use std::collections::HashMap;

use octet_host::limits::{
    MAX_CONTENT_PARTS, MAX_MENU_BYTES, MAX_MENU_DEPTH, MAX_MENU_ITEMS, MAX_RESULT_MEDIA_BYTES,
};
use octet_host::manifest::ApiVersion;
use octet_host::validate::*;
use serde_json::{json, Value};

// ---------------------------------------------------------------------------
// Helpers.
// ---------------------------------------------------------------------------

/// Artifacts by id: (MIME type, size).
struct Artifacts(HashMap<&'static str, (&'static str, u64)>);

impl Artifacts {
    fn standard() -> Artifacts {
        Artifacts(HashMap::from([
            ("img", ("image/png", 1_000)),
            ("snd", ("audio/ogg", 2_000)),
            ("big", ("image/jpeg", MAX_RESULT_MEDIA_BYTES / 2)),
        ]))
    }
}

impl ArtifactResolver for Artifacts {
    fn resolve(&self, artifact_id: &str) -> Option<VerifiedArtifact> {
        self.0
            .get(artifact_id)
            .map(|(mime_type, size_bytes)| VerifiedArtifact {
                mime_type: (*mime_type).to_owned(),
                size_bytes: *size_bytes,
            })
    }
}

fn text(text: &str) -> Value {
    json!({"type": "text", "text": text})
}

fn with_content(content: Value) -> Value {
    json!({"content": content, "is_error": false})
}

/// Validates `result` as API 0.2 with artifacts negotiated and no output schema.
fn v02_media(result: &Value) -> Result<ToolResult, ResultError> {
    let artifacts = Artifacts::standard();
    let ctx = ToolResultContext {
        media: MediaPolicy::Artifacts(&artifacts),
        ..ToolResultContext::new(ApiVersion::V0_2)
    };
    tool_output(result, &ctx)
}

fn v02_plain(result: &Value) -> Result<ToolResult, ResultError> {
    tool_output(result, &ToolResultContext::new(ApiVersion::V0_2))
}

fn expect_error(outcome: Result<impl std::fmt::Debug, ResultError>, path: &str) -> ResultErrorKind {
    let error = outcome.expect_err("validation should fail");
    assert_eq!(error.path(), path, "wrong path for {error}");
    assert_eq!(error.code(), -32602);
    assert!(error.to_string().ends_with('.'), "not a sentence: {error}");
    error.kind().clone()
}

fn nested_arrays(levels: usize) -> Value {
    let mut value = json!(0);
    for _ in 0..levels {
        value = Value::Array(vec![value]);
    }
    value
}
