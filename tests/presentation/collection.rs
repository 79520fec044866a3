//! Collections: lists, trees, selection and detail.

use octet_host::limits::{
    MAX_PRESENTATION_BODY_BYTES, MAX_PRESENTATION_NODES, MAX_PRESENTATION_TREE_DEPTH,
};
use octet_host::services::presentation::*;
use serde_json::json;

use super::*;
// ---------------------------------------------------------------------------
// Collections.
// ---------------------------------------------------------------------------

#[test]
fn nodes_are_bounded_and_unique() {
    let list = |n: usize| (0..n).map(|i| node(&format!("n{i}"), None)).collect();
    let at = accepted(&collection("list", list(MAX_PRESENTATION_NODES)));
    assert_eq!(
        at.snapshot.collection.unwrap().nodes.len(),
        MAX_PRESENTATION_NODES
    );
    refused(
        &collection("list", list(MAX_PRESENTATION_NODES + 1)),
        "snapshot.collection.nodes",
        too_many(MAX_PRESENTATION_NODES + 1, MAX_PRESENTATION_NODES),
    );
    refused(
        &collection(
            "tree",
            vec![node("a", None), node("b", Some("a")), node("b", None)],
        ),
        "snapshot.collection.nodes[2].id",
        PresentationErrorKind::DuplicateId { id: "b".into() },
    );
    refused(
        &without(example(), "/snapshot/collection", "nodes"),
        "snapshot.collection.nodes",
        PresentationErrorKind::Missing,
    );
    refused(
        &with(example(), "/snapshot/collection/kind", json!("grid")),
        "snapshot.collection.kind",
        PresentationErrorKind::UnknownValue {
            found: "grid".into(),
            allowed: &["list", "tree"],
        },
    );
}

#[test]
fn lists_cannot_have_parents() {
    let update = accepted(&collection("list", vec![node("a", None), node("b", None)]));
    assert_eq!(
        update.snapshot.collection.unwrap().kind,
        CollectionKind::List
    );
    refused(
        &collection("list", vec![node("a", None), node("b", Some("a"))]),
        "snapshot.collection.nodes[1].parent_id",
        PresentationErrorKind::ParentInList,
    );
}

#[test]
fn trees_have_existing_parents_and_no_cycles() {
    // Children may come before their parents.
    let update = accepted(&collection(
        "tree",
        vec![node("c", Some("b")), node("b", Some("a")), node("a", None)],
    ));
    assert_eq!(
        update.snapshot.collection.unwrap().nodes[0]
            .parent_id
            .as_deref(),
        Some("b")
    );
    refused(
        &collection("tree", vec![node("a", None), node("b", Some("ghost"))]),
        "snapshot.collection.nodes[1].parent_id",
        PresentationErrorKind::MissingParent {
            parent_id: "ghost".into(),
        },
    );
    refused(
        &collection("tree", vec![node("a", Some("a"))]),
        "snapshot.collection.nodes[0].parent_id",
        PresentationErrorKind::Cycle,
    );
    refused(
        &collection(
            "tree",
            vec![node("r", None), node("a", Some("b")), node("b", Some("a"))],
        ),
        "snapshot.collection.nodes[2].parent_id",
        PresentationErrorKind::Cycle,
    );
    // A node hanging below a cycle is refused for the cycle, not for depth.
    refused(
        &collection(
            "tree",
            vec![
                node("x", Some("a")),
                node("a", Some("b")),
                node("b", Some("a")),
            ],
        ),
        "snapshot.collection.nodes[2].parent_id",
        PresentationErrorKind::Cycle,
    );
}

#[test]
fn trees_are_at_most_sixteen_levels_deep() {
    let chain = |levels: usize| {
        (0..levels)
            .map(|i| {
                let parent = (i > 0).then(|| format!("n{}", i - 1));
                node(&format!("n{i}"), parent.as_deref())
            })
            .collect::<Vec<_>>()
    };
    accepted(&collection("tree", chain(MAX_PRESENTATION_TREE_DEPTH)));
    refused(
        &collection("tree", chain(MAX_PRESENTATION_TREE_DEPTH + 1)),
        &format!(
            "snapshot.collection.nodes[{}].parent_id",
            MAX_PRESENTATION_TREE_DEPTH
        ),
        PresentationErrorKind::TooDeep {
            max: MAX_PRESENTATION_TREE_DEPTH,
        },
    );
    // Deepest first: the too-deep node is still the one reported.
    let mut reversed = chain(MAX_PRESENTATION_TREE_DEPTH + 1);
    reversed.reverse();
    refused(
        &collection("tree", reversed),
        "snapshot.collection.nodes[0].parent_id",
        PresentationErrorKind::TooDeep {
            max: MAX_PRESENTATION_TREE_DEPTH,
        },
    );
}

#[test]
fn the_detail_belongs_to_the_selected_node() {
    refused(
        &with(
            example(),
            "/snapshot/collection/selected_node_id",
            json!("ghost"),
        ),
        "snapshot.collection.selected_node_id",
        PresentationErrorKind::UnknownSelectedNode { id: "ghost".into() },
    );
    let mut two = example();
    let second = node("worker:2", Some("worker:1"));
    two["snapshot"]["collection"]["nodes"]
        .as_array_mut()
        .unwrap()
        .push(second);
    refused(
        &with(
            two.clone(),
            "/snapshot/collection/selected_node_id",
            json!("worker:2"),
        ),
        "snapshot.collection.detail.node_id",
        PresentationErrorKind::DetailNotSelected {
            node_id: "worker:1".into(),
            selected: Some("worker:2".into()),
        },
    );
    refused(
        &without(example(), "/snapshot/collection", "selected_node_id"),
        "snapshot.collection.detail.node_id",
        PresentationErrorKind::DetailNotSelected {
            node_id: "worker:1".into(),
            selected: None,
        },
    );
    // A selection without detail is fine.
    let update = accepted(&without(example(), "/snapshot/collection", "detail"));
    assert_eq!(update.snapshot.collection.unwrap().detail, None);
    for member in ["node_id", "title", "body"] {
        refused(
            &without(example(), "/snapshot/collection/detail", member),
            &format!("snapshot.collection.detail.{member}"),
            PresentationErrorKind::Missing,
        );
    }
}

#[test]
fn the_detail_body_is_bounded_plain_text() {
    let body = |text: String| with(example(), "/snapshot/collection/detail/body", json!(text));
    let at = "a".repeat(MAX_PRESENTATION_BODY_BYTES);
    assert_eq!(
        accepted(&body(at.clone()))
            .snapshot
            .collection
            .unwrap()
            .detail
            .unwrap()
            .body,
        at
    );
    refused(
        &body("a".repeat(MAX_PRESENTATION_BODY_BYTES + 1)),
        "snapshot.collection.detail.body",
        PresentationErrorKind::TooLong {
            bytes: MAX_PRESENTATION_BODY_BYTES + 1,
            max: MAX_PRESENTATION_BODY_BYTES,
        },
    );
    accepted(&body("line one\n\tline two\na < b\n".into()));
    refused(
        &body("one\r\ntwo".into()),
        "snapshot.collection.detail.body",
        PresentationErrorKind::ControlCharacter {
            code_point: 0x0d,
            offset: 3,
        },
    );
    refused(
        &body("\u{1b}[2J cleared".into()),
        "snapshot.collection.detail.body",
        PresentationErrorKind::ControlCharacter {
            code_point: 0x1b,
            offset: 0,
        },
    );
    refused(
        &body("see <script>alert(1)</script>".into()),
        "snapshot.collection.detail.body",
        PresentationErrorKind::Markup { offset: 4 },
    );
}
