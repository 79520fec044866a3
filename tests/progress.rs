//! `$/progress` against a raw Python peer (sections 2.6, 2.25): decoration events with
//! their bounds, `partial_result` snapshots of an active tool call, and late answers.

mod support;

use std::time::Duration;

use octet_host::host::{CallOptions, Diagnostic, HostEvent, Progress, ProgressEvent};
use serde_json::json;
use support::*;

/// Calls `echo` on a peer that takes every offered feature, emitting `events` as
/// progress first; returns what reached the call's progress sink and the host events.
fn progress_of(events: serde_json::Value) -> (Vec<Progress>, Vec<HostEvent>) {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dir = peer_extension(root.path(), "reporter", "0.2", &["all-features"], &["echo"]);
    let host = host(workspace.path(), &[dir]);
    let ext = host.start("reporter").unwrap();
    assert!(ext
        .info()
        .negotiated
        .features
        .contains(octet_host::negotiation::Feature::ProgressDecoration));
    let (sink, received) = crossbeam_channel::unbounded();
    ext.call_tool(
        "echo",
        json!({"progress_events": events}),
        CallOptions::default().with_progress(sink),
    )
    .unwrap();
    let events = collect_events(&host, Duration::from_millis(300), |_| false);
    (received.try_iter().collect(), events)
}

fn refusals(events: &[HostEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            HostEvent::Diagnostic {
                diagnostic: Diagnostic::Refused { reason, .. },
                ..
            } => Some(reason.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn decorations_are_offered_delivered_and_bounded() {
    let (progress, events) = progress_of(json!([
        {"type": "decoration", "label": "indexing", "detail": "src/"},
        {"type": "decoration", "label": "x".repeat(257)},
        {"type": "decoration", "label": "ok", "detail": "d".repeat(4097)},
    ]));
    assert_eq!(progress.len(), 1, "{progress:?}");
    assert_eq!(
        progress[0].event,
        ProgressEvent::Decoration {
            label: "indexing".into(),
            detail: Some("src/".into())
        }
    );
    let refused = refusals(&events);
    assert!(
        refused.iter().any(|r| r.contains("`label` is 257 bytes")),
        "{refused:?}"
    );
    assert!(
        refused.iter().any(|r| r.contains("`detail` is 4097 bytes")),
        "{refused:?}"
    );
}

#[test]
fn partial_results_are_validated_and_delivered_as_typed_progress() {
    let (progress, events) = progress_of(json!([
        {"type": "partial_result", "result": {"content": [{"type": "text", "text": "half"}]}},
        {"type": "partial_result", "result": {"content": "not parts"}},
        {"type": "partial_result", "result": {"content": [{"type": "image", "artifact_id": "nope", "mime_type": "image/png"}]}},
        {"type": "partial_result", "result": {"content": [{"type": "text", "text": "more"}],
                                              "structured_content": {"any": "shape"}}},
    ]));
    let partials: Vec<String> = progress
        .iter()
        .map(|p| match &p.event {
            ProgressEvent::PartialResult(result) => result.text(),
            other => panic!("a partial result expected, got {other:?}"),
        })
        .collect();
    assert_eq!(partials, ["half", "more"]);
    let refused = refusals(&events);
    assert_eq!(
        refused
            .iter()
            .filter(|r| r.starts_with("partial_result:"))
            .count(),
        2,
        "{refused:?}"
    );
}

#[test]
fn a_late_answer_after_a_shutdown_cancel_is_a_late_response() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dir = peer_extension(root.path(), "slow", "0.2", &["good"], &["echo"]);
    let host = host(workspace.path(), &[dir]);
    let ext = host.start("slow").unwrap();
    let pending = ext.call_tool_async("echo", json!({"sleep_ms": 600}), CallOptions::default());
    std::thread::sleep(Duration::from_millis(200));
    // The peer answers the call after the shutdown cancelled it, then acknowledges.
    let report = host.shutdown();
    assert!(report.extensions[0].acknowledged, "{report:?}");
    assert!(pending.wait().is_err());
    let events = collect_events(&host, Duration::from_millis(200), |_| false);
    let diagnostics: Vec<&Diagnostic> = events
        .iter()
        .filter_map(|e| match e {
            HostEvent::Diagnostic { diagnostic, .. } => Some(diagnostic),
            _ => None,
        })
        .collect();
    assert!(
        diagnostics
            .iter()
            .any(|d| matches!(d, Diagnostic::LateResponse { .. })),
        "{diagnostics:?}"
    );
    assert!(
        !diagnostics
            .iter()
            .any(|d| matches!(d, Diagnostic::UnknownResponseId { .. })),
        "{diagnostics:?}"
    );
}
