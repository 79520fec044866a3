//! Activities, metrics, actions, references and the plain-text rules.

use octet_host::limits::{
    MAX_PRESENTATION_ACTIONS, MAX_PRESENTATION_ACTIVITIES, MAX_PRESENTATION_COMPACT_BYTES,
    MAX_PRESENTATION_REFERENCES, MAX_SAFE_INTEGER,
};
use octet_host::services::presentation::*;
use serde_json::{json, Value};

use super::*;
// ---------------------------------------------------------------------------
// Activities and metrics.
// ---------------------------------------------------------------------------

#[test]
fn activities_are_bounded_and_unique() {
    let list = |n: usize| {
        (0..n)
            .map(|i| activity(&format!("a{i}")))
            .collect::<Vec<_>>()
    };
    let at = accepted(&process(
        json!({"revision": 1, "activities": list(MAX_PRESENTATION_ACTIVITIES)}),
    ));
    assert_eq!(at.snapshot.activities.len(), MAX_PRESENTATION_ACTIVITIES);
    refused(
        &process(json!({"revision": 1, "activities": list(MAX_PRESENTATION_ACTIVITIES + 1)})),
        "snapshot.activities",
        too_many(MAX_PRESENTATION_ACTIVITIES + 1, MAX_PRESENTATION_ACTIVITIES),
    );
    refused(
        &process(
            json!({"revision": 1, "activities": [activity("a"), activity("b"), activity("a")]}),
        ),
        "snapshot.activities[2].id",
        PresentationErrorKind::DuplicateId { id: "a".into() },
    );
    refused(
        &with(example(), "/snapshot/activities", json!({})),
        "snapshot.activities",
        PresentationErrorKind::WrongType {
            expected: JsonType::Array,
        },
    );
    for member in ["id", "kind", "state", "summary"] {
        refused(
            &without(example(), "/snapshot/activities/0", member),
            &format!("snapshot.activities[0].{member}"),
            PresentationErrorKind::Missing,
        );
    }
    refused(
        &with(example(), "/snapshot/activities/0/kind", json!("")),
        "snapshot.activities[0].kind",
        PresentationErrorKind::Empty,
    );
}

#[test]
fn started_at_ms_is_a_safe_integer() {
    let at = with(
        example(),
        "/snapshot/activities/0/started_at_ms",
        json!(MAX_SAFE_INTEGER),
    );
    assert_eq!(
        accepted(&at).snapshot.activities[0].started_at_ms,
        Some(MAX_SAFE_INTEGER)
    );
    refused(
        &with(
            example(),
            "/snapshot/activities/0/started_at_ms",
            json!(MAX_SAFE_INTEGER + 1),
        ),
        "snapshot.activities[0].started_at_ms",
        PresentationErrorKind::IntegerTooLarge {
            max: MAX_SAFE_INTEGER,
        },
    );
}

#[test]
fn metrics_counters_are_safe_integers() {
    for name in Metrics::NAMES {
        // reasoning_tokens must stay within output_tokens, so raise both.
        let mut metrics = json!({"output_tokens": MAX_SAFE_INTEGER});
        metrics[*name] = json!(MAX_SAFE_INTEGER);
        let params = with(example(), "/snapshot/activities/0/metrics", metrics.clone());
        let parsed = accepted(&params).snapshot.activities[0].metrics.unwrap();
        let index = Metrics::NAMES.iter().position(|n| n == name).unwrap();
        assert_eq!(parsed.counters()[index], Some(MAX_SAFE_INTEGER), "{name}");

        metrics[*name] = json!(MAX_SAFE_INTEGER + 1);
        refused(
            &with(example(), "/snapshot/activities/0/metrics", metrics.clone()),
            &format!("snapshot.activities[0].metrics.{name}"),
            PresentationErrorKind::IntegerTooLarge {
                max: MAX_SAFE_INTEGER,
            },
        );
        metrics[*name] = json!(-1);
        refused(
            &with(example(), "/snapshot/activities/0/metrics", metrics),
            &format!("snapshot.activities[0].metrics.{name}"),
            PresentationErrorKind::WrongType {
                expected: JsonType::UnsignedInteger,
            },
        );
    }
    let empty = with(example(), "/snapshot/activities/0/metrics", json!({}));
    assert_eq!(
        accepted(&empty).snapshot.activities[0].metrics,
        Some(Metrics::default())
    );
}

#[test]
fn reasoning_is_a_subset_of_output() {
    let metrics = |reasoning: u64, output: u64| {
        with(
            example(),
            "/snapshot/activities/0/metrics",
            json!({"output_tokens": output, "reasoning_tokens": reasoning}),
        )
    };
    accepted(&metrics(220, 220));
    accepted(&metrics(0, 0));
    refused(
        &metrics(221, 220),
        "snapshot.activities[0].metrics.reasoning_tokens",
        PresentationErrorKind::ReasoningExceedsOutput {
            reasoning: 221,
            output: 220,
        },
    );
    refused(
        &with(
            example(),
            "/snapshot/activities/0/metrics",
            json!({"reasoning_tokens": 0}),
        ),
        "snapshot.activities[0].metrics.reasoning_tokens",
        PresentationErrorKind::ReasoningWithoutOutput,
    );
}

// ---------------------------------------------------------------------------
// Actions.
// ---------------------------------------------------------------------------

#[test]
fn actions_are_bounded_unique_and_declared() {
    let list = |n: usize| (0..n).map(|i| action(&format!("x{i}"))).collect::<Vec<_>>();
    let at = accepted(&process(
        json!({"revision": 1, "actions": list(MAX_PRESENTATION_ACTIONS)}),
    ));
    assert_eq!(at.snapshot.actions.len(), MAX_PRESENTATION_ACTIONS);
    assert_eq!(at.snapshot.actions[0].arguments, Vec::<String>::new());
    assert!(!at.snapshot.actions[0].destructive);
    refused(
        &process(json!({"revision": 1, "actions": list(MAX_PRESENTATION_ACTIONS + 1)})),
        "snapshot.actions",
        too_many(MAX_PRESENTATION_ACTIONS + 1, MAX_PRESENTATION_ACTIONS),
    );
    refused(
        &process(json!({"revision": 1, "actions": [action("x"), action("x")]})),
        "snapshot.actions[1].id",
        PresentationErrorKind::DuplicateId { id: "x".into() },
    );
    refused(
        &with(example(), "/snapshot/actions/0/command", json!("deploy")),
        "snapshot.actions[0].command",
        PresentationErrorKind::UndeclaredCommand {
            command: "deploy".into(),
        },
    );
    let none_declared = parse_update(&example(), &[]).unwrap_err();
    assert_eq!(none_declared.path(), "snapshot.actions[0].command");
    refused(
        &with(example(), "/snapshot/actions/0/arguments/1", json!(1)),
        "snapshot.actions[0].arguments[1]",
        PresentationErrorKind::WrongType {
            expected: JsonType::String,
        },
    );
    refused(
        &with(example(), "/snapshot/actions/0/destructive", json!("yes")),
        "snapshot.actions[0].destructive",
        PresentationErrorKind::WrongType {
            expected: JsonType::Boolean,
        },
    );
}

#[test]
fn node_action_ids_name_existing_actions_once() {
    refused(
        &with(
            example(),
            "/snapshot/collection/nodes/0/action_ids",
            json!(["stop", "restart"]),
        ),
        "snapshot.collection.nodes[0].action_ids[1]",
        PresentationErrorKind::UnknownAction {
            id: "restart".into(),
        },
    );
    refused(
        &with(
            example(),
            "/snapshot/collection/nodes/0/action_ids",
            json!(["stop", "stop"]),
        ),
        "snapshot.collection.nodes[0].action_ids[1]",
        PresentationErrorKind::DuplicateId { id: "stop".into() },
    );
    refused(
        &without(example(), "/snapshot", "actions"),
        "snapshot.collection.nodes[0].action_ids[0]",
        PresentationErrorKind::UnknownAction { id: "stop".into() },
    );
}

// ---------------------------------------------------------------------------
// References.
// ---------------------------------------------------------------------------

#[test]
fn references_are_bounded_per_item() {
    let refs = |n: usize| {
        (0..n)
            .map(|i| reference("artifact", &format!("art-{i}")))
            .collect::<Vec<_>>()
    };
    let places = [
        (
            "/snapshot/activities/0/references",
            "snapshot.activities[0].references",
        ),
        (
            "/snapshot/collection/nodes/0/references",
            "snapshot.collection.nodes[0].references",
        ),
        (
            "/snapshot/collection/detail/references",
            "snapshot.collection.detail.references",
        ),
    ];
    for (pointer, path) in places {
        accepted(&with(
            example(),
            pointer,
            json!(refs(MAX_PRESENTATION_REFERENCES)),
        ));
        refused(
            &with(
                example(),
                pointer,
                json!(refs(MAX_PRESENTATION_REFERENCES + 1)),
            ),
            path,
            too_many(MAX_PRESENTATION_REFERENCES + 1, MAX_PRESENTATION_REFERENCES),
        );
    }
}

#[test]
fn references_have_a_known_kind_and_a_checked_id() {
    let refs = json!([
        {"kind": "session", "id": "sess-1", "label": "Parent session"},
        {"kind": "artifact", "id": "art-1"},
        {"kind": "resource", "id": "res-1", "label": null},
        {"kind": "url", "id": "https://example.com/run/1", "label": "Run"},
    ]);
    let update = accepted(&with(example(), "/snapshot/activities/0/references", refs));
    assert_eq!(
        update.snapshot.activities[0].references,
        vec![
            Reference {
                kind: ReferenceKind::Session,
                id: "sess-1".into(),
                label: Some("Parent session".into()),
            },
            Reference {
                kind: ReferenceKind::Artifact,
                id: "art-1".into(),
                label: None,
            },
            Reference {
                kind: ReferenceKind::Resource,
                id: "res-1".into(),
                label: None,
            },
            Reference {
                kind: ReferenceKind::Url,
                id: "https://example.com/run/1".into(),
                label: Some("Run".into()),
            },
        ]
    );
    let one = |value: Value| {
        with(
            example(),
            "/snapshot/activities/0/references",
            json!([value]),
        )
    };
    refused(
        &one(reference("file", "/etc/passwd")),
        "snapshot.activities[0].references[0].kind",
        PresentationErrorKind::UnknownValue {
            found: "file".into(),
            allowed: &["session", "artifact", "resource", "url"],
        },
    );
    refused(
        &one(reference("session", "")),
        "snapshot.activities[0].references[0].id",
        PresentationErrorKind::Empty,
    );
    refused(
        &one(reference("url", "http://169.254.169.254/latest")),
        "snapshot.activities[0].references[0].id",
        PresentationErrorKind::Url(UrlError::BlockedAddress {
            address: "169.254.169.254".parse().unwrap(),
            class: AddressClass::LinkLocal,
        }),
    );
    // Opaque ids are not URLs and are not checked as such.
    accepted(&one(reference("artifact", "http://localhost/")));
    refused(
        &one(json!({"kind": "url", "id": "https://example.com", "label": "<b>x</b>"})),
        "snapshot.activities[0].references[0].label",
        PresentationErrorKind::Markup { offset: 0 },
    );
}

// ---------------------------------------------------------------------------
// Plain text.
// ---------------------------------------------------------------------------

#[test]
fn compact_text_is_bounded_at_1024_bytes() {
    let text_places = [
        ("/snapshot/status/label", "snapshot.status.label"),
        ("/snapshot/activities/0/id", "snapshot.activities[0].id"),
        (
            "/snapshot/activities/0/summary",
            "snapshot.activities[0].summary",
        ),
        (
            "/snapshot/activities/0/provenance",
            "snapshot.activities[0].provenance",
        ),
        ("/snapshot/collection/title", "snapshot.collection.title"),
        (
            "/snapshot/collection/nodes/0/label",
            "snapshot.collection.nodes[0].label",
        ),
        (
            "/snapshot/collection/nodes/0/secondary",
            "snapshot.collection.nodes[0].secondary",
        ),
        (
            "/snapshot/collection/detail/title",
            "snapshot.collection.detail.title",
        ),
        ("/snapshot/actions/0/label", "snapshot.actions[0].label"),
    ];
    // Multi-byte characters count in bytes: 512 two-byte characters fill the bound.
    let at = "é".repeat(MAX_PRESENTATION_COMPACT_BYTES / 2);
    let over = format!("{at}a");
    for (pointer, path) in text_places {
        accepted(&with(example(), pointer, json!(at)));
        refused(
            &with(example(), pointer, json!(over)),
            path,
            PresentationErrorKind::TooLong {
                bytes: MAX_PRESENTATION_COMPACT_BYTES + 1,
                max: MAX_PRESENTATION_COMPACT_BYTES,
            },
        );
    }
    // Ids that other members point at: change every occurrence together.
    let long_id = "i".repeat(MAX_PRESENTATION_COMPACT_BYTES);
    let text = REFERENCE_EXAMPLE.replace("worker:1", &long_id);
    let params: Value = serde_json::from_str::<Value>(&text).unwrap()["params"].clone();
    assert_eq!(
        accepted(&params)
            .snapshot
            .collection
            .unwrap()
            .selected_node_id,
        Some(long_id.clone())
    );
    let text = REFERENCE_EXAMPLE.replace("worker:1", &format!("{long_id}i"));
    let params: Value = serde_json::from_str::<Value>(&text).unwrap()["params"].clone();
    refused(
        &params,
        "snapshot.activities[0].id",
        PresentationErrorKind::TooLong {
            bytes: MAX_PRESENTATION_COMPACT_BYTES + 1,
            max: MAX_PRESENTATION_COMPACT_BYTES,
        },
    );
}

#[test]
fn labels_refuse_control_sequences_and_markup() {
    let label = |text: &str| with(example(), "/snapshot/collection/nodes/0/label", json!(text));
    let path = "snapshot.collection.nodes[0].label";
    let control =
        |code_point, offset| PresentationErrorKind::ControlCharacter { code_point, offset };
    refused(&label("\u{1b}[31mred\u{1b}[0m"), path, control(0x1b, 0));
    refused(&label("two\nlines"), path, control(0x0a, 3));
    refused(&label("tab\there"), path, control(0x09, 3));
    refused(&label("csi\u{9b}31m"), path, control(0x9b, 3));
    refused(&label("del\u{7f}"), path, control(0x7f, 3));
    refused(&label("nul\u{0}"), path, control(0, 3));
    refused(&label("sep\u{2028}x"), path, control(0x2028, 3));
    for (text, offset) in [
        ("<script>alert(1)</script>", 0),
        ("a</div>", 1),
        ("<!-- x -->", 0),
        ("<?php", 0),
        ("<style>*{}</style>", 0),
        ("x <img src=x onerror=y>", 2),
    ] {
        refused(&label(text), path, PresentationErrorKind::Markup { offset });
    }
    for text in ["a < b", "x <= 3", "<-", "<3", "", "naïve — ok", "50% <"] {
        accepted(&label(text));
    }
    refused(
        &with(example(), "/snapshot/activities/0/id", json!("")),
        "snapshot.activities[0].id",
        PresentationErrorKind::Empty,
    );
}

#[test]
fn a_late_error_refuses_the_whole_update() {
    let mut nodes: Vec<Value> = (0..10).map(|i| node(&format!("n{i}"), None)).collect();
    nodes.push(json!({"id": "bad", "state": "pending", "label": "\u{7}"}));
    refused(
        &collection("list", nodes),
        "snapshot.collection.nodes[10].label",
        PresentationErrorKind::ControlCharacter {
            code_point: 7,
            offset: 0,
        },
    );
}
