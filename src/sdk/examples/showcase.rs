//! `showcase`: host services from a handler (sections 1.2, 2.5, 2.8, 2.9, 2.11).
//!
//! Its one declared tool, `snapshot`, publishes a small PNG with `artifact/publish`,
//! adds the tool `stamp` with `tools/register`, publishes a `presentation/update`
//! snapshot for its request, asks `policy/evaluate` about an intent, and answers with a
//! text part, an image part naming the artifact, and structured content that matches
//! its declared output schema. The manifest needs API 0.2 or 0.4,
//! `contributes.tools = ["snapshot"]` and `contributes.presentation = true`.

use std::sync::atomic::{AtomicU64, Ordering};

use base64::Engine;
use serde::Deserialize;
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

use crate::negotiation::Feature;
use crate::sdk::{ContentPart, Context, Extension, HandlerError, Tool, ToolOutput};

/// The feature `artifact/publish` and media content parts need (section 2.8).
pub const FEATURE_ARTIFACTS: &str = Feature::Artifacts.as_str();
/// The feature `tools/register` needs (section 2.11).
pub const FEATURE_DYNAMIC_TOOLS: &str = Feature::DynamicTools.as_str();
/// The feature `policy/evaluate` needs (section 2.9).
pub const FEATURE_POLICY_INTENTS: &str = Feature::PolicyIntents.as_str();

/// The MIME type of [`SNAPSHOT_PNG`].
pub const SNAPSHOT_MIME_TYPE: &str = "image/png";

/// The operation `snapshot` asks `policy/evaluate` about.
pub const POLICY_OPERATION: &str = "showcase.publish_snapshot";

/// The name of the tool `snapshot` registers at run time.
pub const STAMP_TOOL: &str = "stamp";

/// A complete 1×1 RGBA PNG (signature, IHDR, IDAT, IEND; every CRC valid).
pub const SNAPSHOT_PNG: [u8; 70] = [
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
    0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0xda, 0x63, 0xd0, 0xcf, 0xbf, 0xf6,
    0x1f, 0x00, 0x04, 0xb9, 0x02, 0x74, 0x3f, 0x99, 0x71, 0xbe, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45,
    0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
];

/// Presentation revisions are monotonic per process generation (section 2.5).
static PRESENTATION_REVISION: AtomicU64 = AtomicU64::new(0);

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SnapshotArgs {
    #[serde(default = "default_label")]
    label: String,
}

fn default_label() -> String {
    "demo".to_owned()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StampArgs {
    note: String,
}

/// The declared tool `snapshot`, with its output schema.
pub fn snapshot_tool() -> Tool {
    Tool::new(
        "snapshot",
        "Publish a tiny image snapshot and report what the host services answered",
        json!({
            "type": "object",
            "properties": {"label": {"type": "string", "maxLength": 64}},
            "additionalProperties": false
        }),
    )
    .output_schema(json!({
        "type": "object",
        "properties": {
            "artifact": {
                "type": "object",
                "properties": {
                    "artifact_id": {"type": "string", "minLength": 1},
                    "mime_type": {"const": SNAPSHOT_MIME_TYPE},
                    "size": {"type": "integer", "minimum": 1},
                    "sha256": {"type": "string", "minLength": 64, "maxLength": 64}
                },
                "required": ["artifact_id", "mime_type", "size", "sha256"],
                "additionalProperties": false
            },
            "catalog": {
                "type": "object",
                "properties": {
                    "revision": {"type": "integer", "minimum": 0},
                    "tools": {"type": "array", "items": {"type": "string"}}
                },
                "required": ["revision", "tools"]
            },
            "presentation_revision": {"type": "integer", "minimum": 0},
            "policy": {
                "type": "object",
                "properties": {
                    "operation": {"type": "string"},
                    "decision": {"enum": ["allow", "ask", "deny"]}
                },
                "required": ["operation", "decision"],
                "additionalProperties": false
            }
        },
        "required": ["artifact", "catalog", "presentation_revision", "policy"],
        "additionalProperties": false
    }))
}

/// The tool `snapshot` adds at run time.
pub fn stamp_tool() -> Tool {
    Tool::new(
        STAMP_TOOL,
        "Stamp a note (registered at run time by `snapshot`)",
        json!({
            "type": "object",
            "properties": {"note": {"type": "string"}},
            "required": ["note"],
            "additionalProperties": false
        }),
    )
}

/// Tool `snapshot` {label?} and the run-time tool `stamp` {note}; negotiates
/// `artifacts`, `dynamic_tools` and `policy_intents`.
pub fn showcase() -> Extension {
    Extension::new()
        .feature(FEATURE_ARTIFACTS)
        .feature(FEATURE_DYNAMIC_TOOLS)
        .feature(FEATURE_POLICY_INTENTS)
        .tool_def(snapshot_tool(), snapshot)
        .dynamic_tool(stamp_tool(), |args: StampArgs, _cx: &Context| {
            Ok(ToolOutput::text(format!("stamped: {}", args.note)))
        })
}

fn snapshot(args: SnapshotArgs, cx: &Context) -> Result<ToolOutput, HandlerError> {
    for feature in [
        FEATURE_ARTIFACTS,
        FEATURE_DYNAMIC_TOOLS,
        FEATURE_POLICY_INTENTS,
    ] {
        if !cx.has_feature(feature) {
            return Err(HandlerError::internal(format!(
                "the host did not negotiate `{feature}`"
            )));
        }
    }
    let sha256 = hex(&Sha256::digest(SNAPSHOT_PNG));
    let artifact_id = publish(cx, &sha256)?;
    let catalog = register_stamp(cx)?;
    let revision = PRESENTATION_REVISION.fetch_add(1, Ordering::Relaxed) + 1;
    present(cx, revision, &args.label, &artifact_id)?;
    let decision = evaluate(cx, &args.label)?;
    let tools: Vec<&str> = catalog["tools"]
        .as_array()
        .map(|tools| tools.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let text = format!(
        "Published a 1x1 PNG as {artifact_id} ({SNAPSHOT_MIME_TYPE}, {} bytes, sha256 {}…)\n\
         tools/register → catalog revision {}: {}\n\
         presentation/update → revision {revision} for request {}\n\
         policy/evaluate {POLICY_OPERATION} → {decision}",
        SNAPSHOT_PNG.len(),
        &sha256[..12],
        catalog["revision"],
        tools.join(", "),
        cx.request_id().map(ToString::to_string).unwrap_or_default(),
    );
    Ok(ToolOutput::parts(vec![
        ContentPart::text(text),
        ContentPart::Image {
            artifact_id: artifact_id.clone(),
            mime_type: SNAPSHOT_MIME_TYPE.to_owned(),
            alt: Some(format!("Snapshot `{}`", args.label)),
        },
    ])
    .with_structured_content(json!({
        "artifact": {
            "artifact_id": artifact_id,
            "mime_type": SNAPSHOT_MIME_TYPE,
            "size": SNAPSHOT_PNG.len(),
            "sha256": sha256,
        },
        "catalog": catalog,
        "presentation_revision": revision,
        "policy": {"operation": POLICY_OPERATION, "decision": decision},
    })))
}

/// `artifact/publish` of [`SNAPSHOT_PNG`] inline; returns the artifact id.
fn publish(cx: &Context, sha256: &str) -> Result<String, HandlerError> {
    let params = object(json!({
        "mime_type": SNAPSHOT_MIME_TYPE,
        "size": SNAPSHOT_PNG.len(),
        "sha256": sha256,
        "data": {
            "encoding": "base64",
            "data": base64::engine::general_purpose::STANDARD.encode(SNAPSHOT_PNG),
        },
    }));
    let answer = cx.request("artifact/publish", params)?;
    answer
        .get("artifact_id")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| HandlerError::internal("artifact/publish answered without an artifact_id"))
}

/// `tools/register` of [`stamp_tool`] (process-scoped: no parent); returns the
/// authoritative `{revision, tools}` answer.
fn register_stamp(cx: &Context) -> Result<Value, HandlerError> {
    let tool = stamp_tool();
    let params = object(json!({"tools": [{
        "name": tool.name,
        "description": tool.description,
        "parameters": tool.parameters,
    }]}));
    let answer = cx.request_detached("tools/register", params)?;
    if answer.get("revision").and_then(Value::as_u64).is_none() {
        return Err(HandlerError::internal(
            "tools/register answered without a revision",
        ));
    }
    Ok(answer)
}

/// `presentation/update` for this request: one status and one activity that refers to
/// the artifact.
fn present(
    cx: &Context,
    revision: u64,
    label: &str,
    artifact_id: &str,
) -> Result<(), HandlerError> {
    let parent = cx
        .parent_request_id()
        .ok_or_else(|| HandlerError::internal("presentation needs an active API 0.2+ request"))?;
    let params = object(json!({
        "parent_request_id": parent,
        "snapshot": {
            "revision": revision,
            "status": {"state": "active", "label": format!("snapshot {label} ready")},
            "activities": [{
                "id": format!("snapshot:{revision}"),
                "kind": "snapshot",
                "state": "succeeded",
                "summary": "Published a 1x1 PNG",
                "provenance": "showcase",
                "references": [{"kind": "artifact", "id": artifact_id, "label": label}],
            }],
        },
    }));
    if cx.notify_raw("presentation/update", &params) {
        Ok(())
    } else {
        Err(HandlerError::internal(
            "presentation/update could not be queued",
        ))
    }
}

/// `policy/evaluate` of an external side effect; returns the decision.
fn evaluate(cx: &Context, label: &str) -> Result<String, HandlerError> {
    let params = object(json!({
        "intent": {
            "kind": "external_side_effect",
            "operation": POLICY_OPERATION,
            "target": {"label": format!("Publish snapshot {label}")},
            "data_classes": ["user_text"],
            "adapter_hints": {"read_only": false, "destructive": false},
        },
    }));
    let answer = cx.request("policy/evaluate", params)?;
    match answer.get("decision").and_then(Value::as_str) {
        Some(decision @ ("allow" | "ask" | "deny")) => Ok(decision.to_owned()),
        _ => Err(HandlerError::internal(
            "policy/evaluate answered without a decision",
        )),
    }
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// Lower-case hexadecimal, as `artifact/publish` wants the digest (section 2.8).
fn hex(bytes: &[u8]) -> String {
    crate::hex::lower(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_png_is_complete_and_its_digest_is_stable() {
        assert!(SNAPSHOT_PNG.starts_with(b"\x89PNG\r\n\x1a\n"));
        assert!(SNAPSHOT_PNG.ends_with(b"IEND\xae\x42\x60\x82"));
        assert_eq!(
            hex(&Sha256::digest(SNAPSHOT_PNG)),
            "e4c3af6acea6fd0a2e0e8a93608b5824f0e5170867c9618c8ef6f14e7cedf0e5"
        );
    }

    #[test]
    fn the_output_schema_is_in_the_bounded_subset_and_accepts_a_report() {
        let tool = snapshot_tool();
        let schema = crate::validate::schema::OutputSchema::compile(
            tool.output_schema.as_ref().expect("declared"),
        )
        .expect("the schema compiles");
        let report = json!({
            "artifact": {"artifact_id": "artifact-1", "mime_type": "image/png", "size": 70,
                         "sha256": "e".repeat(64)},
            "catalog": {"revision": 1, "tools": ["snapshot", "stamp"]},
            "presentation_revision": 1,
            "policy": {"operation": POLICY_OPERATION, "decision": "deny"},
        });
        assert!(schema.validate(&report).is_ok());
        let mut bad = report.clone();
        bad["policy"]["decision"] = json!("maybe");
        assert!(schema.validate(&bad).is_err());
    }

    #[test]
    fn stamp_is_dispatched_but_not_declared() {
        let ext = showcase();
        let declared: Vec<&str> = ext.tools().map(|t| t.name.as_str()).collect();
        assert_eq!(declared, ["snapshot"]);
        let dynamic: Vec<&str> = ext.dynamic_tools().map(|t| t.name.as_str()).collect();
        assert_eq!(dynamic, [STAMP_TOOL]);
        assert!(ext.find_tool(STAMP_TOOL).is_some());
    }
}
