//! `presentation/update` (section 2.5): every validation rule and bound at the limit and one
//! past it, the reference example, the URL check, the throttle with synthetic instants and
//! the store's staleness rules. This file holds the shared helpers, the reference example,
//! the scope and the snapshot's top level; the modules under `presentation/` the rest.

use octet_host::limits::{MAX_PRESENTATION_SNAPSHOT_BYTES, MAX_SAFE_INTEGER};
use octet_host::services::presentation::*;
use octet_host::services::{OwnerError, ResourceOwner};
use octet_host::validate::{encoded_len, GenericState};
use serde_json::{json, Value};

#[path = "presentation/collection.rs"]
mod collection_rules;
#[path = "presentation/items.rs"]
mod items;
#[path = "presentation/runtime.rs"]
mod runtime;
#[path = "presentation/url.rs"]
mod url;

// ---------------------------------------------------------------------------
// Helpers.
// ---------------------------------------------------------------------------

/// The notification of section 2.5, verbatim.
const REFERENCE_EXAMPLE: &str = r#"{
  "jsonrpc":"2.0",
  "method":"presentation/update",
  "params": {
    "parent_request_id":2,
    "snapshot": {
      "revision":4,
      "status":{"state":"active","label":"1 worker"},
    "activities":[{
      "id":"worker:1","kind":"delegation","state":"running",
      "summary":"Reviewing tests","provenance":"local child",
      "started_at_ms":1721000000000,
      "metrics":{"tool_calls":4,"input_tokens":12000,"cache_read_tokens":800,
        "cache_write_tokens":0,"output_tokens":220,"reasoning_tokens":60,
        "cost_microdollars":7200},
      "references":[]
    }],
    "collection":{
      "kind":"tree","title":"Workers",
      "nodes":[{
        "id":"worker:1","parent_id":null,"state":"running",
        "label":"test-review","secondary":"running",
        "action_ids":["stop"],"references":[]
      }],
      "selected_node_id":"worker:1",
      "detail":{
        "node_id":"worker:1","title":"test-review",
        "body":"Running in a bounded child session.","references":[]
      }
    },
    "actions":[{
      "id":"stop","label":"Stop worker","command":"workers",
      "arguments":["stop","worker:1"],"destructive":true
    }]
    }
  }
}"#;

fn example() -> Value {
    let notification: Value = serde_json::from_str(REFERENCE_EXAMPLE).unwrap();
    notification["params"].clone()
}

fn commands() -> Vec<String> {
    vec!["workers".to_owned(), "other".to_owned()]
}

fn parse(params: &Value) -> Result<PresentationUpdate, PresentationError> {
    parse_update(params, &commands())
}

/// `params` with the value at JSON pointer `pointer` replaced by `value`.
fn with(mut params: Value, pointer: &str, value: Value) -> Value {
    *params
        .pointer_mut(pointer)
        .unwrap_or_else(|| panic!("no {pointer}")) = value;
    params
}

/// `params` with member `key` of the object at `pointer` removed.
fn without(mut params: Value, pointer: &str, key: &str) -> Value {
    params
        .pointer_mut(pointer)
        .and_then(Value::as_object_mut)
        .unwrap_or_else(|| panic!("no object at {pointer}"))
        .remove(key);
    params
}

/// Params holding only `snapshot`.
fn process(snapshot: Value) -> Value {
    json!({ "snapshot": snapshot })
}

#[track_caller]
fn accepted(params: &Value) -> PresentationUpdate {
    match parse(params) {
        Ok(update) => update,
        Err(error) => panic!("refused: {error}"),
    }
}

#[track_caller]
fn refused(params: &Value, path: &str, kind: PresentationErrorKind) {
    let error = parse(params).expect_err("accepted");
    assert_eq!((error.path(), error.kind()), (path, &kind), "{error}");
    assert_eq!(error.code(), -32602);
}

fn too_many(count: usize, max: usize) -> PresentationErrorKind {
    PresentationErrorKind::TooMany { count, max }
}

fn node(id: &str, parent: Option<&str>) -> Value {
    json!({"id": id, "parent_id": parent, "state": "pending", "label": id})
}

fn collection(kind: &str, nodes: Vec<Value>) -> Value {
    process(json!({"revision": 1, "collection": {"kind": kind, "title": "T", "nodes": nodes}}))
}

fn activity(id: &str) -> Value {
    json!({"id": id, "kind": "k", "state": "running", "summary": "s"})
}

fn action(id: &str) -> Value {
    json!({"id": id, "label": id, "command": "workers"})
}

fn reference(kind: &str, id: &str) -> Value {
    json!({"kind": kind, "id": id})
}

// ---------------------------------------------------------------------------
// The reference example and the scope.
// ---------------------------------------------------------------------------

#[test]
fn the_reference_example_is_accepted_exactly() {
    let update = accepted(&example());
    let expected = PresentationUpdate {
        scope: PresentationScope::Parent(2),
        snapshot: PresentationSnapshot {
            revision: 4,
            status: Some(SnapshotStatus {
                state: GenericState::Active,
                label: "1 worker".into(),
            }),
            activities: vec![Activity {
                id: "worker:1".into(),
                kind: "delegation".into(),
                state: GenericState::Running,
                summary: "Reviewing tests".into(),
                provenance: Some("local child".into()),
                started_at_ms: Some(1_721_000_000_000),
                metrics: Some(Metrics {
                    tool_calls: Some(4),
                    input_tokens: Some(12_000),
                    cache_read_tokens: Some(800),
                    cache_write_tokens: Some(0),
                    output_tokens: Some(220),
                    reasoning_tokens: Some(60),
                    cost_microdollars: Some(7_200),
                }),
                references: vec![],
            }],
            collection: Some(Collection {
                kind: CollectionKind::Tree,
                title: "Workers".into(),
                nodes: vec![Node {
                    id: "worker:1".into(),
                    parent_id: None,
                    state: GenericState::Running,
                    label: "test-review".into(),
                    secondary: Some("running".into()),
                    action_ids: vec!["stop".into()],
                    references: vec![],
                }],
                selected_node_id: Some("worker:1".into()),
                detail: Some(Detail {
                    node_id: "worker:1".into(),
                    title: "test-review".into(),
                    body: "Running in a bounded child session.".into(),
                    references: vec![],
                }),
            }),
            actions: vec![Action {
                id: "stop".into(),
                label: "Stop worker".into(),
                command: "workers".into(),
                arguments: vec!["stop".into(), "worker:1".into()],
                destructive: true,
            }],
        },
    };
    assert_eq!(update, expected);
}

#[test]
fn to_value_round_trips() {
    let update = accepted(&example());
    let again = accepted(&process(update.snapshot.to_value()));
    assert_eq!(again.snapshot, update.snapshot);
    assert_eq!(again.scope, PresentationScope::Process);
    // The wire shape drops the null parent but keeps everything else of the example.
    let mut original = example()["snapshot"].clone();
    original["collection"]["nodes"][0]
        .as_object_mut()
        .unwrap()
        .remove("parent_id");
    assert_eq!(update.snapshot.to_value(), original);
}

#[test]
fn scope_is_parent_owner_or_process_never_both() {
    let owner = json!({"session_id": "s", "extension_instance_id": "i", "process_generation": 3});
    let mut by_owner = without(example(), "", "parent_request_id");
    by_owner["resource_owner"] = owner.clone();
    assert_eq!(
        accepted(&by_owner).scope,
        PresentationScope::Owner(ResourceOwner {
            session_id: "s".into(),
            extension_instance_id: "i".into(),
            process_generation: 3,
        })
    );
    let neither = without(example(), "", "parent_request_id");
    assert_eq!(accepted(&neither).scope, PresentationScope::Process);
    // null counts as absent.
    let mut null_owner = example();
    null_owner["resource_owner"] = Value::Null;
    assert_eq!(accepted(&null_owner).scope, PresentationScope::Parent(2));
    let mut both = example();
    both["resource_owner"] = owner;
    refused(&both, "", PresentationErrorKind::ConflictingScope);
    let max_parent = with(example(), "/parent_request_id", json!(u64::MAX));
    assert_eq!(
        accepted(&max_parent).scope,
        PresentationScope::Parent(u64::MAX)
    );
    for bad in [json!(-1), json!("2"), json!(2.5), json!(true)] {
        refused(
            &with(example(), "/parent_request_id", bad),
            "parent_request_id",
            PresentationErrorKind::WrongType {
                expected: JsonType::UnsignedInteger,
            },
        );
    }
    let mut bad_owner = without(example(), "", "parent_request_id");
    bad_owner["resource_owner"] = json!({"session_id": "s", "extension_instance_id": "i"});
    refused(
        &bad_owner,
        "resource_owner",
        PresentationErrorKind::Owner(OwnerError::BadMember {
            member: "process_generation",
        }),
    );
}

#[test]
fn process_scoped_state_holds_no_session_reference() {
    let session = json!([{"kind": "session", "id": "sess-1"}]);
    let parented = with(
        example(),
        "/snapshot/collection/nodes/0/references",
        session.clone(),
    );
    accepted(&parented);
    let process_scoped = without(parented, "", "parent_request_id");
    refused(
        &process_scoped,
        "snapshot.collection.nodes[0].references[0].kind",
        PresentationErrorKind::SessionReferenceInProcessScope,
    );
    let detail = with(
        without(example(), "", "parent_request_id"),
        "/snapshot/collection/detail/references",
        json!([{"kind": "artifact", "id": "a"}, {"kind": "session", "id": "s"}]),
    );
    refused(
        &detail,
        "snapshot.collection.detail.references[1].kind",
        PresentationErrorKind::SessionReferenceInProcessScope,
    );
    let activity = with(
        without(example(), "", "parent_request_id"),
        "/snapshot/activities/0/references",
        session,
    );
    refused(
        &activity,
        "snapshot.activities[0].references[0].kind",
        PresentationErrorKind::SessionReferenceInProcessScope,
    );
    // Other reference kinds are fine in process scope.
    accepted(&with(
        without(example(), "", "parent_request_id"),
        "/snapshot/activities/0/references",
        json!([{"kind": "url", "id": "https://example.com/"}]),
    ));
}

#[test]
fn params_are_a_closed_object_with_a_snapshot() {
    refused(
        &json!([]),
        "",
        PresentationErrorKind::WrongType {
            expected: JsonType::Object,
        },
    );
    refused(
        &without(example(), "", "snapshot"),
        "snapshot",
        PresentationErrorKind::Missing,
    );
    refused(
        &with(example(), "/snapshot", Value::Null),
        "snapshot",
        PresentationErrorKind::Missing,
    );
    let mut extra = example();
    extra["session"] = json!("main");
    refused(
        &extra,
        "",
        PresentationErrorKind::UnknownMember {
            member: "session".into(),
        },
    );
}

#[test]
fn every_object_is_closed() {
    let cases = [
        ("/snapshot", "snapshot"),
        ("/snapshot/status", "snapshot.status"),
        ("/snapshot/activities/0", "snapshot.activities[0]"),
        (
            "/snapshot/activities/0/metrics",
            "snapshot.activities[0].metrics",
        ),
        ("/snapshot/collection", "snapshot.collection"),
        (
            "/snapshot/collection/nodes/0",
            "snapshot.collection.nodes[0]",
        ),
        ("/snapshot/collection/detail", "snapshot.collection.detail"),
        ("/snapshot/actions/0", "snapshot.actions[0]"),
    ];
    for (pointer, path) in cases {
        let mut params = example();
        params.pointer_mut(pointer).unwrap()["x"] = json!(10);
        refused(
            &params,
            path,
            PresentationErrorKind::UnknownMember { member: "x".into() },
        );
    }
    let params = with(
        example(),
        "/snapshot/activities/0/references",
        json!([{"kind": "artifact", "id": "a", "style": "color:red"}]),
    );
    refused(
        &params,
        "snapshot.activities[0].references[0]",
        PresentationErrorKind::UnknownMember {
            member: "style".into(),
        },
    );
}

// ---------------------------------------------------------------------------
// Snapshot top level.
// ---------------------------------------------------------------------------

#[test]
fn revision_is_a_safe_unsigned_integer() {
    for ok in [0, 1, MAX_SAFE_INTEGER] {
        let update = accepted(&with(example(), "/snapshot/revision", json!(ok)));
        assert_eq!(update.snapshot.revision, ok);
    }
    refused(
        &with(example(), "/snapshot/revision", json!(MAX_SAFE_INTEGER + 1)),
        "snapshot.revision",
        PresentationErrorKind::IntegerTooLarge {
            max: MAX_SAFE_INTEGER,
        },
    );
    for bad in [json!(-1), json!(4.0), json!("4")] {
        refused(
            &with(example(), "/snapshot/revision", bad),
            "snapshot.revision",
            PresentationErrorKind::WrongType {
                expected: JsonType::UnsignedInteger,
            },
        );
    }
    refused(
        &without(example(), "/snapshot", "revision"),
        "snapshot.revision",
        PresentationErrorKind::Missing,
    );
}

#[test]
fn a_minimal_snapshot_defaults_to_empty() {
    let update = accepted(&process(json!({"revision": 0})));
    assert_eq!(
        update.snapshot,
        PresentationSnapshot {
            revision: 0,
            status: None,
            activities: vec![],
            collection: None,
            actions: vec![],
        }
    );
    let nulls = process(json!({"revision": 0, "status": null, "activities": null,
        "collection": null, "actions": null}));
    assert_eq!(accepted(&nulls).snapshot, update.snapshot);
}

#[test]
fn status_and_states_are_generic() {
    let names = [
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
    ];
    for name in names {
        let update = accepted(&with(example(), "/snapshot/status/state", json!(name)));
        assert_eq!(update.snapshot.status.unwrap().state.as_str(), name);
    }
    refused(
        &with(example(), "/snapshot/status/state", json!("done")),
        "snapshot.status.state",
        PresentationErrorKind::UnknownState {
            found: "done".into(),
        },
    );
    refused(
        &with(example(), "/snapshot/activities/0/state", json!("Running")),
        "snapshot.activities[0].state",
        PresentationErrorKind::UnknownState {
            found: "Running".into(),
        },
    );
    refused(
        &with(example(), "/snapshot/collection/nodes/0/state", json!(1)),
        "snapshot.collection.nodes[0].state",
        PresentationErrorKind::WrongType {
            expected: JsonType::String,
        },
    );
    refused(
        &without(example(), "/snapshot/status", "label"),
        "snapshot.status.label",
        PresentationErrorKind::Missing,
    );
}

#[test]
fn the_encoded_snapshot_is_bounded() {
    let base = json!({"revision": 0, "actions": [{"id": "a", "label": "a", "command": "workers",
        "arguments": [""]}]});
    let padding = MAX_PRESENTATION_SNAPSHOT_BYTES - encoded_len(&base);
    let at = with(
        base.clone(),
        "/actions/0/arguments/0",
        json!("x".repeat(padding)),
    );
    assert_eq!(encoded_len(&at), MAX_PRESENTATION_SNAPSHOT_BYTES);
    accepted(&process(at));
    let over = with(
        base,
        "/actions/0/arguments/0",
        json!("x".repeat(padding + 1)),
    );
    refused(
        &process(over),
        "snapshot",
        PresentationErrorKind::SnapshotTooLarge {
            max: MAX_PRESENTATION_SNAPSHOT_BYTES,
        },
    );
}
