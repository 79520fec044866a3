//! The typed API 0.2 hooks (section 1.4; SUPPLEMENT "API 0.2 typed hooks") against the
//! raw Wave-1 peer, which answers every `hook/run` with the reply its environment names:
//! `provider_retry` advice, `before_persistence` metadata and `post_mutation` rescans
//! reach the embedder typed, and a result out of bounds is refused with the rule it
//! broke; through the library and serve.

mod support;

use std::path::{Path, PathBuf};

use octet_host::host::{CallError, CallOptions, ExtensionHandle, ExtensionHost};
use octet_host::validate::{
    BeforePersistencePayload, HookAdvice, HookPayload, MutationKind, MutationState,
    PersistenceMetadata, PostMutationPayload, ProviderRetryPayload, RescanAdvice, RetryAdvice,
    RetryKind,
};
use serde_json::{json, Value};
use support::*;

/// The Wave-1 peer as `name`, declaring the typed hooks and answering each with `reply`
/// after `delay_ms`.
fn hooked(root: &Path, name: &str, reply: &Value, delay_ms: u64) -> PathBuf {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/services_peer.py");
    let manifest = format!(
        "name = {name:?}\nversion = \"0.1.0\"\napi_version = \"0.2\"\n\n\
         [entrypoint]\ncommand = \"python3\"\nargs = [{:?}]\n\
         env = {{ OCTET_PEER_HOOK_REPLY = {:?}, OCTET_PEER_HOOK_DELAY_MS = \"{delay_ms}\" }}\n\n\
         [contributes]\ntools = [\"ask\", \"answers\", \"seen\"]\n\
         hooks = [\"provider_retry\", \"before_persistence\", \"post_mutation\"]\n",
        script.to_string_lossy(),
        reply.to_string(),
    );
    write_manifest(root, name, &manifest)
}

fn continuing(advice: Value) -> Value {
    let mut reply = json!({"disposition": {"action": "continue"}});
    reply
        .as_object_mut()
        .unwrap()
        .extend(advice.as_object().unwrap().clone());
    reply
}

fn retry() -> HookPayload {
    HookPayload::ProviderRetry(ProviderRetryPayload {
        run_id: "run:entry-1".into(),
        attempt: 2,
        max_attempts: Some(4),
        operation: None,
        host_delay_ms: 500,
        kind: RetryKind::StreamStart,
    })
}

fn persistence() -> HookPayload {
    HookPayload::BeforePersistence(BeforePersistencePayload {
        run_id: "run:entry-1".into(),
        model: "m".into(),
        protocol: "anthropic_messages".into(),
        stop_reason: "end_turn".into(),
        text_bytes: 120,
        tool_call_count: 1,
        reasoning_part_count: 0,
        media_part_count: 0,
    })
}

fn mutation(id: &str, affected: &[&str]) -> HookPayload {
    HookPayload::PostMutation(PostMutationPayload {
        mutation_id: id.into(),
        kind: MutationKind::Resource,
        affected_resources: affected.iter().map(|s| s.to_string()).collect(),
        generation: 3,
        state: MutationState::Committed,
    })
}

/// A host running one hooked peer per `(name, reply, delay_ms)`.
fn hosts(
    root: &Path,
    workspace: &Path,
    peers: &[(&str, Value, u64)],
) -> (ExtensionHost, Vec<ExtensionHandle>) {
    let dirs: Vec<PathBuf> = peers
        .iter()
        .map(|(name, reply, delay)| hooked(root, name, reply, *delay))
        .collect();
    let host = host_builder(workspace, &dirs)
        .tool_namespace(octet_host::host::ToolNamespace::PerExtension)
        .build()
        .unwrap();
    let handles = peers
        .iter()
        .map(|(name, ..)| host.start(name).unwrap())
        .collect();
    (host, handles)
}

fn refused_rule(outcome: Result<octet_host::validate::HookResult, CallError>) -> String {
    match outcome {
        Err(CallError::InvalidResult(error)) => error.to_string(),
        other => panic!("expected an invalid result, got {other:?}"),
    }
}

#[test]
fn typed_advice_reaches_the_embedder_and_out_of_bounds_advice_is_refused() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let metadata = json!({"value": {"review": {"score": 3}}, "public": true});
    let (_host, exts) = hosts(
        root.path(),
        workspace.path(),
        &[
            (
                "delayer",
                continuing(json!({"provider_retry": {"delay": {"additional_delay_ms": 1500}}})),
                0,
            ),
            (
                "greedy",
                continuing(json!({"provider_retry": {"delay": {"additional_delay_ms": 6000}}})),
                0,
            ),
            (
                "keeper",
                continuing(json!({ "persistence_metadata": metadata })),
                0,
            ),
            (
                "rescanner",
                continuing(json!({"post_mutation":
                    {"action": "request_rescan", "resource_ids": ["r-1"]}})),
                0,
            ),
            ("slow", continuing(json!({})), 600),
        ],
    );
    let options = CallOptions::default;
    let delayed = exts[0].run_hook(retry(), options()).unwrap();
    assert_eq!(
        delayed.advice,
        Some(HookAdvice::ProviderRetry(RetryAdvice::Delay {
            additional_delay_ms: 1500
        }))
    );
    let rule = refused_rule(exts[1].run_hook(retry(), options()));
    assert!(rule.contains("at most 5000 ms"), "{rule}");

    let kept = exts[2].run_hook(persistence(), options()).unwrap();
    assert_eq!(
        kept.advice,
        Some(HookAdvice::Persistence(PersistenceMetadata {
            value: json!({"review": {"score": 3}}),
            public: true,
        }))
    );

    let rescan = exts[3]
        .run_hook(mutation("m-1", &["r-1", "r-2"]), options())
        .unwrap();
    assert_eq!(
        rescan.advice,
        Some(HookAdvice::PostMutation(RescanAdvice::RequestRescan {
            resource_ids: vec!["r-1".into()]
        }))
    );
    // A rescan of a resource the mutation did not affect is refused.
    let rule = refused_rule(exts[3].run_hook(mutation("m-2", &["r-2"]), options()));
    assert!(rule.contains("`r-1`"), "{rule}");
    // A payload out of bounds never reaches the extension.
    let many: Vec<String> = (0..33).map(|n| format!("r-{n}")).collect();
    let many: Vec<&str> = many.iter().map(String::as_str).collect();
    match exts[3].run_hook(mutation("m-3", &many), options()) {
        Err(CallError::InvalidRequest { reason }) => assert!(reason.contains("32"), "{reason}"),
        other => panic!("expected the payload refused, got {other:?}"),
    }

    // A mutation reaches a generation once within the last 256 ids.
    match exts[3].run_hook(mutation("m-1", &["r-1"]), options()) {
        Err(CallError::InvalidRequest { reason }) => {
            assert!(reason.contains("already"), "{reason}")
        }
        other => panic!("expected the repeated mutation refused, got {other:?}"),
    }
    // A run's retries get at most 5 s added by advice in all (1.5 s asked each time).
    let added: Vec<Option<HookAdvice>> = (0..4)
        .map(|_| exts[0].run_hook(retry(), options()).unwrap().advice)
        .collect();
    let delay = |ms| {
        Some(HookAdvice::ProviderRetry(RetryAdvice::Delay {
            additional_delay_ms: ms,
        }))
    };
    // The first call above already added 1.5 s to this run.
    assert_eq!(added, [delay(1500), delay(1500), delay(500), delay(0)]);

    // before_persistence has one 200 ms deadline, whatever the caller asks.
    let late = exts[4].run_hook(
        persistence(),
        CallOptions::with_deadline(std::time::Duration::from_secs(30)),
    );
    assert!(
        matches!(late, Err(CallError::DeadlineExceeded { .. })),
        "{late:?}"
    );
    // A hook without a fixed deadline waits as long as the caller allows.
    let patient = exts[4].run_hook(retry(), options()).unwrap();
    assert_eq!(patient.advice, None);
}

#[test]
fn serve_types_the_payloads_and_prints_the_advice() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dir = hooked(
        root.path(),
        "delayer",
        &continuing(json!({"provider_retry": "stop"})),
        0,
    );
    let mut serve = serve_harness::Serve::over(workspace, root, vec![dir]);
    serve.start_extension("delayer");
    let payload = retry().to_value();
    serve.send(
        json!({"op": "hook", "call_id": "h1", "extension": "delayer",
                      "hook": "provider_retry", "payload": payload}),
    );
    let result = serve.result(json!("h1"));
    assert_eq!(result["ok"], true, "{result}");
    assert_eq!(result["output"]["provider_retry"], "stop", "{result}");
    // A payload outside the closed model is refused before anything is sent.
    let reply = serve.request(json!({"id": 7, "op": "hook", "call_id": "h2",
        "extension": "delayer", "hook": "provider_retry", "payload": {"run_id": "r"}}));
    assert_eq!(reply["error"]["code"], "invalid_value", "{reply}");
    serve_harness::assert_lines_follow_the_schema(&serve.seen);
    serve.close_input().unwrap();
}
