//! The typed result validators of sections 1.2 to 1.7 on arbitrary JSON.
//!
//! The input is one JSON document (inputs that are not JSON are skipped). It is
//! validated as: a `tool/call` result for API 0.1, for API 0.2 without output schema and
//! without artifacts, for API 0.2 with a declared schema checked for bounds only and
//! with artifacts, and for API 0.4 with a compiled schema and artifacts; a
//! `command/execute` result; a `hook/run` result for every hook; a `context/collect`
//! result; a `status/collect` result for every surface; a `tool/render` result; and the
//! params of the `notification`, `context/contribution` and `status/contribution`
//! notifications, which share those shapes.
//!
//! Invariants: nothing panics, nor does any error's `Display` or `code()`; accepted
//! values keep the promises their types document (content bounds and a text part,
//! `structured_content` exactly when a schema is declared, media only with artifacts
//! and of the artifact's MIME type, the requested status surface, no deny or context
//! from a model-turn hook).

#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use octet_host::limits::MAX_CONTENT_PARTS;
use octet_host::manifest::{ApiVersion, UiSurface};
use octet_host::validate::schema::OutputSchema as CompiledSchema;
use octet_host::validate::{
    self, ArtifactResolver, ContentPart, Disposition, HookName, MediaPolicy, OutputSchema,
    ResultError, StructuredViolation, ToolResult, ToolResultContext, VerifiedArtifact,
};
use serde_json::{json, Value};

/// Verifies the reference's image artifact, an audio artifact, and a 40 MiB image so
/// that two references cross the 64 MiB aggregate bound.
struct Artifacts;

impl ArtifactResolver for Artifacts {
    fn resolve(&self, artifact_id: &str) -> Option<VerifiedArtifact> {
        let (mime_type, size_bytes) = match artifact_id {
            "artifact-opaque-id" => ("image/png", 1_000),
            "audio-id" => ("audio/ogg", 2_000),
            "big" => ("image/jpeg", 40 << 20),
            _ => return None,
        };
        Some(VerifiedArtifact {
            mime_type: mime_type.into(),
            size_bytes,
        })
    }
}

/// The output schema of the reference's API 0.2 example result.
fn sources_schema() -> &'static CompiledSchema {
    static SCHEMA: OnceLock<CompiledSchema> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        CompiledSchema::compile(&json!({
            "type": "object",
            "properties": {
                "sources": {
                    "type": "array",
                    "maxItems": 8,
                    "items": {
                        "type": "object",
                        "properties": {
                            "title": {"type": "string", "minLength": 1},
                            "url": {"type": "string"}
                        },
                        "required": ["title", "url"],
                        "additionalProperties": false
                    }
                }
            },
            "required": ["sources"]
        }))
        .expect("the fuzz schema compiles")
    })
}

fn check_schema(value: &Value) -> Result<(), StructuredViolation> {
    sources_schema()
        .validate(value)
        .map_err(|error| StructuredViolation {
            path: error.instance_path.clone(),
            message: error.to_string(),
        })
}

fn report(error: &ResultError) {
    let _ = error.to_string();
    let _ = error.code();
    let _ = error.path();
}

fn check_tool_output(ctx: &ToolResultContext, output: &ToolResult) {
    let _ = output.text();
    if ctx.api_version == ApiVersion::V0_1 {
        assert_eq!(output.content.len(), 1);
        assert!(output.content[0].as_text().is_some());
        assert!(output.structured_content.is_none());
        return;
    }
    assert!(!output.content.is_empty());
    assert!(output.content.len() <= MAX_CONTENT_PARTS);
    assert!(output.content.iter().any(|part| part.as_text().is_some()));
    let declared = matches!(ctx.output_schema, OutputSchema::Declared { .. });
    assert_eq!(output.structured_content.is_some(), declared);
    if let OutputSchema::Declared { validator: Some(_) } = ctx.output_schema {
        let structured = output.structured_content.as_ref().expect("checked above");
        assert!(sources_schema().is_valid(structured));
    }
    if matches!(ctx.media, MediaPolicy::NotNegotiated) {
        assert!(output
            .content
            .iter()
            .all(|part| matches!(part, ContentPart::Text { .. })));
    } else {
        for part in &output.content {
            let (ContentPart::Image {
                artifact_id,
                mime_type,
                ..
            }
            | ContentPart::Audio {
                artifact_id,
                mime_type,
                ..
            }) = part
            else {
                continue;
            };
            let verified = Artifacts.resolve(artifact_id).expect("a verified artifact");
            // MIME types match by essence (`type/subtype`, parameters aside), ignoring
            // ASCII case; the fuzz artifacts carry no parameters.
            let essence = mime_type.split(';').next().unwrap_or_default();
            assert!(
                essence
                    .trim_end_matches([' ', '\t'])
                    .eq_ignore_ascii_case(&verified.mime_type),
                "{mime_type:?} accepted for a {:?} artifact",
                verified.mime_type
            );
        }
    }
}

fn tool_results(result: &Value) {
    let validator = check_schema;
    let contexts = [
        ToolResultContext::new(ApiVersion::V0_1),
        ToolResultContext::new(ApiVersion::V0_2),
        ToolResultContext {
            api_version: ApiVersion::V0_2,
            output_schema: OutputSchema::Declared { validator: None },
            media: MediaPolicy::Artifacts(&Artifacts),
        },
        ToolResultContext {
            api_version: ApiVersion::V0_4,
            output_schema: OutputSchema::Declared {
                validator: Some(&validator),
            },
            media: MediaPolicy::Artifacts(&Artifacts),
        },
    ];
    for ctx in &contexts {
        match validate::tool_output(result, ctx) {
            Ok(output) => check_tool_output(ctx, &output),
            Err(error) => report(&error),
        }
    }
}

fn other_results(result: &Value) {
    if let Err(error) = validate::command_output(result) {
        report(&error);
    }
    if let Err(error) = validate::notification(result) {
        report(&error);
    }
    for hook in HookName::ALL {
        match validate::hook_output(result, hook) {
            Ok(output) => {
                assert_eq!(output.hook, hook);
                let _ = output.effective_disposition();
                let _ = output.denial_ignored();
                if hook.is_model_turn() {
                    assert_eq!(output.disposition, Disposition::Continue);
                    assert!(output.context.is_empty());
                }
            }
            Err(error) => report(&error),
        }
    }
    if let Err(error) = validate::context_collect(result) {
        report(&error);
    }
    if let Err(error) = validate::context_contribution(result) {
        report(&error);
    }
    for surface in [UiSurface::Status, UiSurface::Header, UiSurface::Footer] {
        match validate::status_collect(result, surface) {
            Ok(Some(contribution)) => assert_eq!(contribution.surface, surface),
            Ok(None) => assert!(result.is_null()),
            Err(error) => report(&error),
        }
    }
    if let Err(error) = validate::status_contribution(result) {
        report(&error);
    }
    match validate::render_output(result) {
        Ok(output) => {
            let _ = output.plain_text();
        }
        Err(error) => report(&error),
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(result) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    tool_results(&result);
    other_results(&result);
});
