//! `tool/call` results (section 1.2).

use super::*;

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
        // API 0.3's closed result also requires `is_error` and `metadata`.
        let closed = |content: Value| {
            let mut result = with_content(content);
            result["is_error"] = json!(false);
            result["metadata"] = Value::Null;
            result
        };
        assert!(tool_output(&closed(json!([text("a")])), &ctx).is_ok());
        assert!(tool_output(&closed(json!("a")), &ctx).is_err());
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
