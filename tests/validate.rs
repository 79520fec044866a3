//! Table tests for result validation: every rule of sections 1.2 to 1.7 and 1.6b, each
//! checked for the exact field path and rule it reports.

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
fn v02_media(result: &Value) -> Result<ToolOutput, ResultError> {
    let artifacts = Artifacts::standard();
    let ctx = ToolResultContext {
        media: MediaPolicy::Artifacts(&artifacts),
        ..ToolResultContext::new(ApiVersion::V0_2)
    };
    tool_output(result, &ctx)
}

fn v02_plain(result: &Value) -> Result<ToolOutput, ResultError> {
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

// ---------------------------------------------------------------------------
// tool/call (section 1.2).
// ---------------------------------------------------------------------------

#[test]
fn content_part_rules() {
    let cases: Vec<(&str, Value, &str, ResultErrorKind)> = vec![
        (
            "content must be an array",
            with_content(json!("plain text")),
            "content",
            ResultErrorKind::WrongType {
                expected: Expected::Array,
            },
        ),
        (
            "content is required",
            json!({"is_error": false}),
            "content",
            ResultErrorKind::Missing,
        ),
        (
            "content must not be empty",
            with_content(json!([])),
            "content",
            ResultErrorKind::EmptyContent,
        ),
        (
            "content needs a text part",
            with_content(
                json!([{"type": "image", "artifact_id": "img", "mime_type": "image/png"}]),
            ),
            "content",
            ResultErrorKind::NoTextPart,
        ),
        (
            "parts must be objects",
            with_content(json!([text("a"), "b"])),
            "content[1]",
            ResultErrorKind::WrongType {
                expected: Expected::Object,
            },
        ),
        (
            "part type is required",
            with_content(json!([{"text": "a"}])),
            "content[0].type",
            ResultErrorKind::Missing,
        ),
        (
            "part type is closed",
            with_content(
                json!([text("a"), {"type": "video", "artifact_id": "x", "mime_type": "video/mp4"}]),
            ),
            "content[1].type",
            ResultErrorKind::UnknownValue {
                found: "video".into(),
                allowed: &["text", "image", "audio"],
            },
        ),
        (
            "text part needs text",
            with_content(json!([{"type": "text"}])),
            "content[0].text",
            ResultErrorKind::Missing,
        ),
        (
            "text must be a string",
            with_content(json!([{"type": "text", "text": 5}])),
            "content[0].text",
            ResultErrorKind::WrongType {
                expected: Expected::String,
            },
        ),
        (
            "image parts are closed",
            with_content(
                json!([text("a"), {"type": "image", "artifact_id": "img", "mime_type": "image/png", "transcript": "t"}]),
            ),
            "content[1]",
            ResultErrorKind::UnknownMember {
                member: "transcript".into(),
            },
        ),
        (
            "audio parts are closed",
            with_content(
                json!([text("a"), {"type": "audio", "artifact_id": "snd", "mime_type": "audio/ogg", "alt": "t"}]),
            ),
            "content[1]",
            ResultErrorKind::UnknownMember {
                member: "alt".into(),
            },
        ),
        (
            "artifact_id is required",
            with_content(json!([text("a"), {"type": "image", "mime_type": "image/png"}])),
            "content[1].artifact_id",
            ResultErrorKind::Missing,
        ),
        (
            "artifact_id must not be empty",
            with_content(
                json!([text("a"), {"type": "image", "artifact_id": "", "mime_type": "image/png"}]),
            ),
            "content[1].artifact_id",
            ResultErrorKind::Empty,
        ),
        (
            "mime_type is required",
            with_content(json!([text("a"), {"type": "image", "artifact_id": "img"}])),
            "content[1].mime_type",
            ResultErrorKind::Missing,
        ),
        (
            "mime_type must be well formed",
            with_content(
                json!([text("a"), {"type": "image", "artifact_id": "img", "mime_type": "png"}]),
            ),
            "content[1].mime_type",
            ResultErrorKind::InvalidMimeType {
                mime_type: "png".into(),
            },
        ),
        (
            "image needs image/*",
            with_content(
                json!([text("a"), {"type": "image", "artifact_id": "snd", "mime_type": "audio/ogg"}]),
            ),
            "content[1].mime_type",
            ResultErrorKind::MimeKindMismatch {
                kind: MediaKind::Image,
                mime_type: "audio/ogg".into(),
            },
        ),
        (
            "audio needs audio/*",
            with_content(
                json!([text("a"), {"type": "audio", "artifact_id": "img", "mime_type": "image/png"}]),
            ),
            "content[1].mime_type",
            ResultErrorKind::MimeKindMismatch {
                kind: MediaKind::Audio,
                mime_type: "image/png".into(),
            },
        ),
        (
            "artifact must be verified",
            with_content(
                json!([text("a"), {"type": "image", "artifact_id": "foreign", "mime_type": "image/png"}]),
            ),
            "content[1].artifact_id",
            ResultErrorKind::UnverifiedArtifact {
                artifact_id: "foreign".into(),
            },
        ),
        (
            "artifact MIME type must match the part",
            with_content(
                json!([text("a"), {"type": "image", "artifact_id": "img", "mime_type": "image/gif"}]),
            ),
            "content[1].mime_type",
            ResultErrorKind::ArtifactMimeMismatch {
                part: "image/gif".into(),
                artifact: "image/png".into(),
            },
        ),
        (
            "alt must be a string",
            with_content(
                json!([text("a"), {"type": "image", "artifact_id": "img", "mime_type": "image/png", "alt": 1}]),
            ),
            "content[1].alt",
            ResultErrorKind::WrongType {
                expected: Expected::String,
            },
        ),
        (
            "is_error must be a boolean",
            json!({"content": [text("a")], "is_error": "false"}),
            "is_error",
            ResultErrorKind::WrongType {
                expected: Expected::Boolean,
            },
        ),
        (
            "result must be an object",
            json!([text("a")]),
            "",
            ResultErrorKind::WrongType {
                expected: Expected::Object,
            },
        ),
    ];
    for (name, result, path, kind) in cases {
        let error = v02_media(&result).expect_err(name);
        assert_eq!(error.path(), path, "{name}: {error}");
        assert_eq!(error.kind(), &kind, "{name}: {error}");
    }
}

#[test]
fn content_part_count_is_bounded() {
    let at_limit = with_content(Value::Array(vec![text("x"); MAX_CONTENT_PARTS]));
    assert_eq!(
        v02_plain(&at_limit).unwrap().content.len(),
        MAX_CONTENT_PARTS
    );
    let over = with_content(Value::Array(vec![text("x"); MAX_CONTENT_PARTS + 1]));
    assert_eq!(
        expect_error(v02_plain(&over), "content"),
        ResultErrorKind::TooManyContentParts {
            count: MAX_CONTENT_PARTS + 1,
            max: MAX_CONTENT_PARTS
        }
    );
}

#[test]
fn media_needs_the_artifacts_feature() {
    let image = with_content(
        json!([text("a"), {"type": "image", "artifact_id": "img", "mime_type": "image/png"}]),
    );
    assert_eq!(
        expect_error(v02_plain(&image), "content[1]"),
        ResultErrorKind::MediaNotNegotiated {
            kind: MediaKind::Image
        }
    );
    let audio = with_content(
        json!([text("a"), {"type": "audio", "artifact_id": "snd", "mime_type": "audio/ogg"}]),
    );
    assert_eq!(
        expect_error(v02_plain(&audio), "content[1]"),
        ResultErrorKind::MediaNotNegotiated {
            kind: MediaKind::Audio
        }
    );
    let output = v02_media(&audio).unwrap();
    assert_eq!(
        output.content[1],
        ContentPart::Audio {
            artifact_id: "snd".into(),
            mime_type: "audio/ogg".into(),
            transcript: None
        }
    );
}

#[test]
fn media_mime_comparison_ignores_case_and_parameters() {
    let result = with_content(
        json!([text("a"), {"type": "image", "artifact_id": "img", "mime_type": "Image/PNG; q=1"}]),
    );
    let output = v02_media(&result).unwrap();
    assert!(
        matches!(&output.content[1], ContentPart::Image { mime_type, .. } if mime_type == "Image/PNG; q=1")
    );
}

#[test]
fn null_optional_members_count_as_absent_even_in_closed_parts() {
    let result = with_content(json!([
        {"type": "text", "text": "a", "alt": null},
        {"type": "image", "artifact_id": "img", "mime_type": "image/png", "alt": null},
    ]));
    let output = v02_media(&result).unwrap();
    assert_eq!(
        output.content[1],
        ContentPart::Image {
            artifact_id: "img".into(),
            mime_type: "image/png".into(),
            alt: None
        }
    );
}

#[test]
fn repeated_media_counts_toward_the_aggregate_bound() {
    let big = json!({"type": "image", "artifact_id": "big", "mime_type": "image/jpeg"});
    let two = with_content(json!([text("a"), big.clone(), big.clone()]));
    assert_eq!(v02_media(&two).unwrap().content.len(), 3);
    let three = with_content(json!([text("a"), big.clone(), big.clone(), big]));
    assert_eq!(
        expect_error(v02_media(&three), "content[3]"),
        ResultErrorKind::MediaBytesExceeded {
            max: MAX_RESULT_MEDIA_BYTES
        }
    );
}

#[test]
fn structured_content_follows_the_output_schema() {
    let with_structured = json!({"content": [text("a")], "structured_content": {"n": 1}});
    let without = json!({"content": [text("a")]});
    let null_structured = json!({"content": [text("a")], "structured_content": null});

    assert_eq!(
        expect_error(v02_plain(&with_structured), "structured_content"),
        ResultErrorKind::StructuredContentForbidden
    );
    assert_eq!(v02_plain(&without).unwrap().structured_content, None);
    assert_eq!(
        v02_plain(&null_structured).unwrap().structured_content,
        None
    );

    let declared = ToolResultContext {
        output_schema: OutputSchema::Declared { validator: None },
        ..ToolResultContext::new(ApiVersion::V0_4)
    };
    assert_eq!(
        expect_error(tool_output(&without, &declared), "structured_content"),
        ResultErrorKind::StructuredContentRequired
    );
    assert_eq!(
        expect_error(
            tool_output(&null_structured, &declared),
            "structured_content"
        ),
        ResultErrorKind::StructuredContentRequired
    );
    assert_eq!(
        tool_output(&with_structured, &declared)
            .unwrap()
            .structured_content,
        Some(json!({"n": 1}))
    );
}

#[test]
fn structured_content_validator_is_consulted() {
    let wants_object = |value: &Value| {
        if value.is_object() {
            Ok(())
        } else {
            Err(StructuredViolation {
                path: String::new(),
                message: "must be an object".into(),
            })
        }
    };
    let ctx = ToolResultContext {
        output_schema: OutputSchema::Declared {
            validator: Some(&wants_object),
        },
        ..ToolResultContext::new(ApiVersion::V0_2)
    };
    let good = json!({"content": [text("a")], "structured_content": {}});
    assert!(tool_output(&good, &ctx).is_ok());
    let bad = json!({"content": [text("a")], "structured_content": [1]});
    assert_eq!(
        expect_error(tool_output(&bad, &ctx), "structured_content"),
        ResultErrorKind::StructuredContentInvalid(StructuredViolation {
            path: String::new(),
            message: "must be an object".into()
        })
    );
}

#[test]
fn structured_content_and_metadata_bounds() {
    let declared = ToolResultContext {
        output_schema: OutputSchema::Declared { validator: None },
        ..ToolResultContext::new(ApiVersion::V0_2)
    };
    let deep = json!({"content": [text("a")], "structured_content": nested_arrays(33)});
    assert_eq!(
        expect_error(tool_output(&deep, &declared), "structured_content"),
        ResultErrorKind::Bounds(BoundsError::TooDeep { max: 32 })
    );
    let fits = json!({"content": [text("a")], "structured_content": nested_arrays(32)});
    assert!(tool_output(&fits, &declared).is_ok());
    let large = json!({"content": [text("a")], "structured_content": "x".repeat(256 * 1024)});
    assert_eq!(
        expect_error(tool_output(&large, &declared), "structured_content"),
        ResultErrorKind::Bounds(BoundsError::TooManyBytes { max: 256 * 1024 })
    );
    let long_key = json!({"content": [text("a")], "metadata": {"k".repeat(257): 1}});
    assert_eq!(
        expect_error(v02_plain(&long_key), "metadata"),
        ResultErrorKind::Bounds(BoundsError::KeyTooLong {
            key_bytes: 257,
            max: 256
        })
    );
    let many_nodes = json!({"content": [text("a")], "metadata": vec![0; 16_384]});
    assert_eq!(
        expect_error(v02_plain(&many_nodes), "metadata"),
        ResultErrorKind::Bounds(BoundsError::TooManyNodes { max: 16_384 })
    );
    let large_metadata = json!({"content": [text("a")], "metadata": "x".repeat(64 * 1024)});
    assert_eq!(
        expect_error(v02_plain(&large_metadata), "metadata"),
        ResultErrorKind::Bounds(BoundsError::TooManyBytes { max: 64 * 1024 })
    );
    // A long key inside structured content is bounded only by the total size.
    let keyed = json!({"content": [text("a")], "structured_content": {"k".repeat(300): 1}});
    assert!(tool_output(&keyed, &declared).is_ok());
}

#[test]
fn api_0_3_and_0_4_use_content_parts() {
    for version in [ApiVersion::V0_3, ApiVersion::V0_4] {
        let ctx = ToolResultContext::new(version);
        assert!(tool_output(&with_content(json!([text("a")])), &ctx).is_ok());
        assert!(tool_output(&with_content(json!("a")), &ctx).is_err());
    }
}

#[test]
fn api_0_1_ignores_members_it_does_not_know() {
    let ctx = ToolResultContext::new(ApiVersion::V0_1);
    let output = tool_output(
        &json!({"content": "x", "structured_content": {"a": 1}, "extra": true}),
        &ctx,
    )
    .unwrap();
    assert_eq!(output.structured_content, None);
    assert_eq!(output.text(), "x");
}

#[test]
fn text_joins_text_parts_and_skips_media() {
    let result = with_content(json!([
        text("one"),
        {"type": "image", "artifact_id": "img", "mime_type": "image/png"},
        text("two")
    ]));
    assert_eq!(v02_media(&result).unwrap().text(), "one\ntwo");
}

// ---------------------------------------------------------------------------
// hook/run (sections 1.4 and 1.4b).
// ---------------------------------------------------------------------------

fn deny(reason: &str) -> Value {
    json!({"disposition": {"action": "deny", "reason": reason}})
}

#[test]
fn deny_is_honoured_only_where_meaningful() {
    for hook in HookName::ALL {
        let outcome = hook_output(&deny("no"), hook);
        if hook.is_model_turn() {
            assert_eq!(
                expect_error(outcome, "disposition.action"),
                ResultErrorKind::DenyNotAllowed { hook }
            );
            continue;
        }
        let output = outcome.unwrap();
        let denied = Disposition::Deny {
            reason: Some("no".into()),
        };
        assert_eq!(output.disposition, denied, "{hook}");
        if matches!(hook, HookName::BeforePrompt | HookName::BeforeToolCall) {
            assert_eq!(output.effective_disposition(), &denied);
            assert!(!output.denial_ignored());
        } else {
            assert_eq!(
                output.effective_disposition(),
                &Disposition::Continue,
                "{hook}"
            );
            assert!(output.denial_ignored(), "{hook}");
        }
    }
}

#[test]
fn deny_reason_is_optional() {
    let output = hook_output(
        &json!({"disposition": {"action": "deny"}}),
        HookName::BeforeToolCall,
    )
    .unwrap();
    assert_eq!(output.disposition, Disposition::Deny { reason: None });
}

#[test]
fn hook_envelope_rules() {
    let cases: Vec<(Value, HookName, &str, ResultErrorKind)> = vec![
        (
            json!({}),
            HookName::BeforePrompt,
            "disposition",
            ResultErrorKind::Missing,
        ),
        (
            json!({"disposition": "continue"}),
            HookName::BeforePrompt,
            "disposition",
            ResultErrorKind::WrongType {
                expected: Expected::Object,
            },
        ),
        (
            json!({"disposition": {}}),
            HookName::BeforePrompt,
            "disposition.action",
            ResultErrorKind::Missing,
        ),
        (
            json!({"disposition": {"action": "skip"}}),
            HookName::AfterResponse,
            "disposition.action",
            ResultErrorKind::UnknownValue {
                found: "skip".into(),
                allowed: &["continue", "deny"],
            },
        ),
        (
            json!({"disposition": {"action": "deny", "reason": 3}}),
            HookName::BeforePrompt,
            "disposition.reason",
            ResultErrorKind::WrongType {
                expected: Expected::String,
            },
        ),
        (
            json!({"disposition": {"action": "continue"}, "context": [{"label": "l", "content": "c"}]}),
            HookName::ModelTurnStart,
            "context",
            ResultErrorKind::ContextNotAllowed {
                hook: HookName::ModelTurnStart,
            },
        ),
        (
            json!({"disposition": {"action": "continue"}, "session_operation": {"action": "cancel"}}),
            HookName::ModelTurnEnd,
            "session_operation.action",
            ResultErrorKind::SessionOperationNotAllowed {
                hook: HookName::ModelTurnEnd,
                action: "cancel",
            },
        ),
        (
            json!({"disposition": {"action": "continue"}, "session_operation": {"action": "replace_compaction", "summary": "s"}}),
            HookName::ModelTurnStart,
            "session_operation.action",
            ResultErrorKind::SessionOperationNotAllowed {
                hook: HookName::ModelTurnStart,
                action: "replace_compaction",
            },
        ),
        (
            json!({"disposition": {"action": "continue"}, "session_operation": {"action": "cancel"}}),
            HookName::BeforePrompt,
            "session_operation.action",
            ResultErrorKind::SessionOperationNotAllowed {
                hook: HookName::BeforePrompt,
                action: "cancel",
            },
        ),
        (
            json!({"disposition": {"action": "continue"}, "session_operation": {"action": "pause"}}),
            HookName::ModelTurnStart,
            "session_operation.action",
            ResultErrorKind::UnknownValue {
                found: "pause".into(),
                allowed: &["continue", "cancel", "replace_compaction"],
            },
        ),
        (
            json!({"disposition": {"action": "continue"}, "notifications": [{"level": "info"}]}),
            HookName::ModelTurnEnd,
            "notifications[0].message",
            ResultErrorKind::Missing,
        ),
    ];
    for (result, hook, path, kind) in cases {
        let error = hook_output(&result, hook).expect_err(path);
        assert_eq!(error.path(), path, "{error}");
        assert_eq!(error.kind(), &kind, "{error}");
    }
}

#[test]
fn model_turn_hooks_accept_empty_context_and_notifications() {
    let result = json!({
        "disposition": {"action": "continue"},
        "context": [],
        "notifications": [{"level": "warning", "message": "slow turn"}]
    });
    let output = hook_output(&result, HookName::ModelTurnEnd).unwrap();
    assert_eq!(output.session_operation, None);
    assert_eq!(output.notifications[0].level, NotificationLevel::Warning);
}

#[test]
fn legacy_payloads_serialize_as_section_1_4_shows() {
    let cases = [
        (
            HookPayload::BeforePrompt { prompt: "p".into() },
            "before_prompt",
            json!({"prompt": "p"}),
        ),
        (
            HookPayload::AfterResponse {
                response: "r".into(),
            },
            "after_response",
            json!({"response": "r"}),
        ),
        (
            HookPayload::BeforeToolCall {
                name: "git_status".into(),
                arguments: json!({"max_entries": 80}),
            },
            "before_tool_call",
            json!({"name": "git_status", "arguments": {"max_entries": 80}}),
        ),
        (
            HookPayload::AfterToolCall {
                name: "git_status".into(),
                arguments: json!({}),
                output: "branch=main".into(),
                is_error: false,
            },
            "after_tool_call",
            json!({"name": "git_status", "arguments": {}, "output": "branch=main", "is_error": false}),
        ),
        (
            HookPayload::Other {
                hook: HookName::PostMutation,
                payload: json!({"paths": ["a"]}),
            },
            "post_mutation",
            json!({"paths": ["a"]}),
        ),
    ];
    for (payload, hook, expected) in cases {
        let params = hook_run_params(&payload, json!({"host": {}}));
        assert_eq!(
            params,
            json!({"hook": hook, "payload": expected, "context": {"host": {}}})
        );
    }
}

// ---------------------------------------------------------------------------
// menu/collect (section 1.6b).
// ---------------------------------------------------------------------------

fn action(id: &str) -> Value {
    json!({"id": id, "label": id, "command": "cmd"})
}

fn submenu(id: &str, items: Vec<Value>) -> Value {
    json!({"id": id, "label": id, "items": items})
}

fn top(items: Vec<Value>) -> Value {
    json!({"title": "T", "items": items})
}

fn check_menu(result: &Value) -> Result<Menu, ResultError> {
    menu(result, &["cmd"])
}

#[test]
fn menu_rules() {
    let cases: Vec<(&str, Value, &str, ResultErrorKind)> = vec![
        (
            "title is required",
            json!({"items": []}),
            "title",
            ResultErrorKind::Missing,
        ),
        (
            "items are required",
            json!({"title": "T"}),
            "items",
            ResultErrorKind::Missing,
        ),
        (
            "status state is closed",
            json!({"title": "T", "status": {"state": "ready", "label": "x"}, "items": []}),
            "status.state",
            ResultErrorKind::UnknownValue {
                found: "ready".into(),
                allowed: &[
                    "empty",
                    "loading",
                    "pending",
                    "active",
                    "running",
                    "succeeded",
                    "failed",
                    "cancelled",
                    "degraded",
                    "stopped",
                    "unavailable",
                ],
            },
        ),
        (
            "status label is required",
            json!({"title": "T", "status": {"state": "active"}, "items": []}),
            "status.label",
            ResultErrorKind::Missing,
        ),
        (
            "ids are required",
            top(vec![json!({"label": "x", "command": "cmd"})]),
            "items[0].id",
            ResultErrorKind::Missing,
        ),
        (
            "ids are non-empty",
            top(vec![json!({"id": "", "label": "x", "command": "cmd"})]),
            "items[0].id",
            ResultErrorKind::Empty,
        ),
        (
            "labels are required",
            top(vec![json!({"id": "a", "command": "cmd"})]),
            "items[0].label",
            ResultErrorKind::Missing,
        ),
        (
            "undeclared command",
            top(vec![
                action("a"),
                json!({"id": "b", "label": "b", "command": "rm"}),
            ]),
            "items[1].command",
            ResultErrorKind::UndeclaredCommand {
                command: "rm".into(),
            },
        ),
        (
            "undeclared command in a submenu",
            top(vec![submenu(
                "s",
                vec![json!({"id": "b", "label": "b", "command": "rm"})],
            )]),
            "items[0].items[0].command",
            ResultErrorKind::UndeclaredCommand {
                command: "rm".into(),
            },
        ),
        (
            "duplicate id on one level",
            top(vec![action("a"), submenu("a", vec![action("x")])]),
            "items[1].id",
            ResultErrorKind::DuplicateItemId { id: "a".into() },
        ),
        (
            "two recommended items on one level",
            top(vec![
                json!({"id": "a", "label": "a", "command": "cmd", "recommended": true}),
                json!({"id": "b", "label": "b", "items": [], "recommended": true}),
            ]),
            "items[1].recommended",
            ResultErrorKind::MultipleRecommended { first: "a".into() },
        ),
        (
            "submenu with arguments",
            top(vec![
                json!({"id": "s", "label": "s", "items": [], "arguments": []}),
            ]),
            "items[0].arguments",
            ResultErrorKind::SubmenuMember {
                member: "arguments",
            },
        ),
        (
            "submenu with destructive",
            top(vec![
                json!({"id": "s", "label": "s", "items": [], "destructive": false}),
            ]),
            "items[0].destructive",
            ResultErrorKind::SubmenuMember {
                member: "destructive",
            },
        ),
        (
            "item with command and items",
            top(vec![
                json!({"id": "s", "label": "s", "items": [], "command": "cmd"}),
            ]),
            "items[0]",
            ResultErrorKind::AmbiguousMenuItem,
        ),
        (
            "item with neither",
            top(vec![json!({"id": "s", "label": "s"})]),
            "items[0]",
            ResultErrorKind::MenuItemKindMissing,
        ),
        (
            "arguments are strings",
            top(vec![
                json!({"id": "a", "label": "a", "command": "cmd", "arguments": ["x", 1]}),
            ]),
            "items[0].arguments[1]",
            ResultErrorKind::WrongType {
                expected: Expected::String,
            },
        ),
        (
            "destructive is a boolean",
            top(vec![
                json!({"id": "a", "label": "a", "command": "cmd", "destructive": "yes"}),
            ]),
            "items[0].destructive",
            ResultErrorKind::WrongType {
                expected: Expected::Boolean,
            },
        ),
    ];
    for (name, result, path, kind) in cases {
        let error = check_menu(&result).expect_err(name);
        assert_eq!(error.path(), path, "{name}: {error}");
        assert_eq!(error.kind(), &kind, "{name}: {error}");
    }
}

#[test]
fn same_id_and_recommended_on_different_levels_are_fine() {
    let result = top(vec![
        json!({"id": "a", "label": "a", "command": "cmd", "recommended": true}),
        submenu(
            "s",
            vec![json!({"id": "a", "label": "a", "command": "cmd", "recommended": true})],
        ),
        submenu(
            "t",
            vec![json!({"id": "a", "label": "a", "command": "cmd", "recommended": true})],
        ),
    ]);
    let parsed = check_menu(&result).unwrap();
    assert_eq!(parsed.items.len(), 3);
}

#[test]
fn menu_depth_is_bounded_at_four_levels() {
    // Levels: items (1) > s1.items (2) > s2.items (3) > s3.items (4).
    let mut deepest = vec![action("leaf")];
    for level in (1..MAX_MENU_DEPTH).rev() {
        deepest = vec![submenu(&format!("s{level}"), deepest)];
    }
    let four = top(deepest.clone());
    assert!(check_menu(&four).is_ok());
    // One more submenu level, even an empty one, is a fifth level.
    let mut five = vec![submenu("s4", Vec::new())];
    for level in (1..MAX_MENU_DEPTH).rev() {
        five = vec![submenu(&format!("s{level}"), five)];
    }
    assert_eq!(
        expect_error(
            check_menu(&top(five)),
            "items[0].items[0].items[0].items[0].items"
        ),
        ResultErrorKind::MenuTooDeep {
            max: MAX_MENU_DEPTH
        }
    );
}

#[test]
fn menu_items_are_counted_across_levels() {
    // One submenu plus 255 actions inside it: 256 items.
    let inner: Vec<Value> = (0..MAX_MENU_ITEMS - 1)
        .map(|i| action(&format!("a{i}")))
        .collect();
    let at_limit = top(vec![submenu("s", inner.clone())]);
    assert!(check_menu(&at_limit).is_ok());
    let over = top(vec![submenu("s", inner), action("extra")]);
    assert_eq!(
        expect_error(check_menu(&over), "items[1]"),
        ResultErrorKind::TooManyMenuItems {
            max: MAX_MENU_ITEMS
        }
    );
}

#[test]
fn menu_encoding_is_bounded() {
    let huge = json!({"title": "x".repeat(MAX_MENU_BYTES), "items": []});
    assert_eq!(
        expect_error(check_menu(&huge), ""),
        ResultErrorKind::Bounds(BoundsError::TooManyBytes {
            max: MAX_MENU_BYTES
        })
    );
}

#[test]
fn fallback_is_always_a_valid_menu() {
    let names: Vec<String> = (0..300).map(|i| format!("c{i}")).collect();
    let commands: Vec<FallbackCommand> = names
        .iter()
        .map(|name| FallbackCommand {
            name,
            description: None,
        })
        .collect();
    let fallback = fallback_menu("many", &commands);
    assert_eq!(fallback.items.len(), MAX_MENU_ITEMS);
    assert_eq!(menu(&fallback.to_value(), &names).unwrap(), fallback);
}

#[test]
fn every_generic_state_is_accepted_in_menus() {
    for state in [
        "empty",
        "loading",
        "pending",
        "active",
        "running",
        "succeeded",
        "failed",
        "cancelled",
        "degraded",
        "stopped",
        "unavailable",
    ] {
        let result = json!({"title": "T", "status": {"state": state, "label": "l"}, "items": []});
        let parsed = check_menu(&result).unwrap();
        assert_eq!(parsed.status.unwrap().state.as_str(), state);
    }
}

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
