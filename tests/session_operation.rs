//! The awaited session-operation hooks of section 1.4b through the library and serve,
//! against the raw Python peer (`tests/fixtures/services_peer.py`): only API 0.4
//! extensions that declared the hook and negotiated `session_entries` are awaited, in
//! start order; each invocation carries its own private `session_leaf` grant; its
//! private appends reach the session writer and are answered with real receipts and a
//! successor grant; the lane closes when the hook settles; a refused result stops the
//! run.

mod support;

use std::path::{Path, PathBuf};
use std::time::Duration;

use octet_host::host::{CallError, LeafScope, ServiceBindings};
use octet_host::services::bound::{
    AppendEntry, EntryId, PrivateAppend, PrivateCommit, Reply, ServiceCall, SessionEntryService,
};
use octet_host::validate::{HookName, HookPayload, SessionOperation};
use octet_host::{CallOptions, ExtensionHost};
use serde_json::json;
use support::serve_harness::*;
use support::tool_json as tool;
use support::Journal;

/// The session writer: commits each private entry as `p<N>` and reports it.
#[derive(Clone, Default)]
struct Writer(Journal);

impl SessionEntryService for Writer {
    fn append_entry(&self, _call: ServiceCall, entry: AppendEntry, reply: Reply<EntryId>) {
        self.0.push(format!("public {}", entry.entry_type));
        reply.ok(EntryId("e".into()));
    }
    fn append_private(&self, call: ServiceCall, entry: PrivateAppend, reply: Reply<PrivateCommit>) {
        let n = self.0.entries().len();
        self.0.push(format!(
            "private {} {} {}",
            call.source.extension, entry.data["hook"], entry.session_leaf.operation_id
        ));
        reply.ok(PrivateCommit {
            entry_id: format!("p{n}"),
            head: format!("p{n}"),
        });
    }
}

/// A peer at API 0.4 declaring the model-turn and compaction hooks.
fn peer(root: &Path, name: &str, env: &str) -> PathBuf {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/services_peer.py");
    let manifest = format!(
        "name = {name:?}\nversion = \"0.1.0\"\napi_version = \"0.4\"\n\n\
         [entrypoint]\ncommand = \"python3\"\nargs = [{:?}]\nenv = {{ {env} }}\n\n\
         [contributes]\ntools = [\"ask\", \"answers\", \"seen\"]\n\
         hooks = [\"model_turn_start\", \"model_turn_end\", \"session_before_compact\", \"session_compact\"]\n",
        script.to_string_lossy(),
    );
    support::write_manifest(root, name, &manifest)
}

fn host(dir: &tempfile::TempDir, peers: &[(&str, &str)], writer: &Writer) -> ExtensionHost {
    let dirs: Vec<_> = peers
        .iter()
        .map(|(name, env)| peer(dir.path(), name, env))
        .collect();
    let services = ServiceBindings::new().session_entries(writer.clone());
    support::bound_host(dir.path(), &dirs, services)
}

fn start() -> HookPayload {
    HookPayload::ModelTurnStart {
        run_id: "run:001".into(),
        turn_index: 0,
        timestamp_ms: 1_791_129_600_000,
    }
}

fn options() -> CallOptions {
    CallOptions::with_deadline(Duration::from_secs(60))
}

#[test]
fn subscribers_are_awaited_in_start_order_each_with_its_own_private_lane() {
    let dir = tempfile::tempdir().unwrap();
    let writer = Writer::default();
    let appends = "OCTET_PEER_PRIVATE_APPENDS = \"2\"";
    let peers = [
        ("a", appends),
        ("b", appends),
        ("plain", "OCTET_PEER_REFUSE_FEATURES = \"session_entries\""),
    ];
    let host = host(&dir, &peers, &writer);
    let b = host.start("b").unwrap();
    let a = host.start("a").unwrap();
    let plain = host.start("plain").unwrap();
    let scope = LeafScope {
        activation_epoch: 3,
        expected_head: Some("e1".into()),
    };
    let done = host
        .session_operation_hook(&start(), &scope, options(), None)
        .unwrap();
    let order: Vec<&str> = done.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(order, ["b", "a"]);

    let seen = tool(&a, "seen", json!({}));
    let leaf = &seen["leaves"][0];
    let grant = leaf["grant_id"].as_str().unwrap();
    assert!(
        grant.len() == 64
            && grant
                .chars()
                .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
    );
    assert_eq!(leaf["activation_epoch"], 3);
    assert_eq!(leaf["expected_head"], "e1");
    assert_eq!(leaf["owner"]["process_generation"], 1);
    assert!(leaf["operation_id"]
        .as_str()
        .unwrap()
        .starts_with("session-operation:"));
    // Two receipts, each with the committed entry, the head and a fresh successor.
    let private = seen["private"].as_array().unwrap();
    assert_eq!(private.len(), 2, "{seen}");
    let first = &private[0]["result"];
    let second = &private[1]["result"];
    assert_eq!(first["head"], first["entry_id"]);
    let successors = [
        &first["successor"]["grant_id"],
        &second["successor"]["grant_id"],
    ];
    assert!(successors[0] != successors[1] && successors[0].as_str() != Some(grant));
    assert_eq!(second["successor"]["operation_id"], leaf["operation_id"]);
    // b's grant is another invocation's.
    let b_leaf = &tool(&b, "seen", json!({}))["leaves"][0];
    assert_ne!(b_leaf["operation_id"], leaf["operation_id"]);
    assert_eq!(writer.0.entries().len(), 4);
    assert!(writer.0.entries()[0].starts_with("private b \"model_turn_start\""));

    // Without session_entries it is no subscriber, and not asked.
    let skipped = plain.run_session_operation_hook(&start(), &scope, options());
    assert!(
        matches!(skipped, Err(CallError::NotDeclared { .. })),
        "{skipped:?}"
    );
    assert!(tool(&plain, "seen", json!({}))["hooks"]
        .as_array()
        .unwrap()
        .is_empty());
}

#[test]
fn the_lane_closes_when_the_hook_settles() {
    let dir = tempfile::tempdir().unwrap();
    let writer = Writer::default();
    let host = host(
        &dir,
        &[("a", "OCTET_PEER_PRIVATE_APPENDS = \"1\"")],
        &writer,
    );
    let a = host.start("a").unwrap();
    let scope = LeafScope::default();
    a.run_session_operation_hook(&start(), &scope, options())
        .unwrap();
    // The successor of the last receipt, after the hook settled: refused.
    let late = tool(
        &a,
        "ask",
        json!({"requests": [{"id": "late", "method": "session/append_entry",
            "params": {"entry_type": "x", "data": {}}, "parent": "hook", "leaf": "last"}]}),
    );
    assert_eq!(late["late"]["error"]["code"], -32002, "{late}");
    // The same grant with a live parent that is not its hook: refused too.
    let foreign = tool(
        &a,
        "ask",
        json!({"requests": [{"id": "foreign", "method": "session/append_entry",
            "params": {"entry_type": "x", "data": {}}, "leaf": "last"}]}),
    );
    assert_eq!(foreign["foreign"]["error"]["code"], -32002, "{foreign}");
    // The ordinary lane is unaffected.
    let public = tool(
        &a,
        "ask",
        json!({"requests": [{"id": "p", "method": "session/append_entry",
            "params": {"entry_type": "note", "data": {}}}]}),
    );
    assert_eq!(public["p"]["result"], json!({"entry_id": "e"}));
    assert_eq!(writer.0.entries().len(), 2, "{:?}", writer.0.entries());
}

#[test]
fn a_refused_result_stops_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let writer = Writer::default();
    let cancel = r#"OCTET_PEER_HOOK_REPLY = '{"disposition": {"action": "continue"}, "session_operation": {"action": "cancel"}}'"#;
    let host = host(&dir, &[("bad", cancel), ("a", "")], &writer);
    let bad = host.start("bad").unwrap();
    let a = host.start("a").unwrap();
    let error = host
        .session_operation_hook(&start(), &LeafScope::default(), options(), None)
        .unwrap_err();
    assert_eq!(error.extension, "bad");
    assert!(
        matches!(error.error, CallError::InvalidResult(_)),
        "{error:?}"
    );
    assert!(error.completed.is_empty());
    assert_eq!(
        tool(&bad, "seen", json!({}))["hooks"],
        json!(["model_turn_start"])
    );
    assert_eq!(tool(&a, "seen", json!({}))["hooks"], json!([]));
}

#[test]
fn the_before_compact_hook_may_replace_the_summary_and_appends_privately() {
    let dir = tempfile::tempdir().unwrap();
    let writer = Writer::default();
    let replace = r#"OCTET_PEER_PRIVATE_APPENDS = "1", OCTET_PEER_HOOK_REPLY = '{"disposition": {"action": "continue"}, "session_operation": {"action": "replace_compaction", "replacement": {"summary": "Shorter.", "first_kept": "e7"}}}'"#;
    let host = host(&dir, &[("a", replace)], &writer);
    let a = host.start("a").unwrap();
    let payload = HookPayload::Other {
        hook: HookName::SessionBeforeCompact,
        payload: json!({"kind": "before_compact", "reason": "manual", "first_kept": "e5",
            "preparation": {"messages": [], "turn_prefix_messages": [], "previous_summary": null,
                "details": {"readFiles": [], "modifiedFiles": []}},
            "branch_entries": [], "custom_instructions": null}),
    };
    let done = host
        .session_operation_hook(&payload, &LeafScope::default(), options(), None)
        .unwrap();
    assert_eq!(
        done[0].1.session_operation,
        Some(SessionOperation::ReplaceCompaction {
            summary: "Shorter.".into(),
            first_kept: "e7".into()
        })
    );
    assert_eq!(writer.0.entries().len(), 1);
    assert!(writer.0.entries()[0].contains("session_before_compact"));
    // The after-hook may not replace: the call fails, and the run stops there.
    let after = HookPayload::Other {
        hook: HookName::SessionCompact,
        payload: json!({"kind": "compacted", "reason": "manual", "entry": {}, "from_extension": false}),
    };
    let refused = a.run_session_operation_hook(&after, &LeafScope::default(), options());
    assert!(
        matches!(refused, Err(CallError::InvalidResult(_))),
        "{refused:?}"
    );
}

#[test]
fn serve_forwards_private_appends_to_the_client_with_the_grant_checked_first() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dir = peer(root.path(), "peer", "OCTET_PEER_PRIVATE_APPENDS = \"1\"");
    let mut serve = Serve::over(workspace, root, vec![dir]);
    let reply = serve.request(json!({"id": 1, "op": "start", "extension": "peer",
        "services": ["session_entries"]}));
    assert_eq!(reply["ok"], true, "{reply}");
    serve.send(json!({"op": "hook", "call_id": "h", "extension": "peer",
        "hook": "model_turn_start", "payload": {"run_id": "run:1", "turn_index": 0,
        "timestamp_ms": 1}}));
    let request = serve.until("service_request", |l| l["type"] == "service_request");
    assert_eq!(request["method"], "session/append_entry");
    assert_eq!(request["params"]["entry_type"], "turn-note");
    assert_eq!(
        request["params"]["session_leaf"]["grant_id"]
            .as_str()
            .unwrap()
            .len(),
        64
    );
    let answer = serve.request(json!({"id": 2, "op": "service_answer",
        "request_id": request["request_id"], "result": {"entry_id": "c1", "head": "c1"}}));
    assert_eq!(answer["ok"], true, "{answer}");
    let result = serve.result(json!("h"));
    assert_eq!(result["ok"], true, "{result}");
}

#[test]
fn a_compaction_hook_cannot_start_a_compaction() {
    let dir = tempfile::tempdir().unwrap();
    let writer = Writer::default();
    let env = "OCTET_PEER_COMPACT_IN_HOOK = \"1\"";
    let path = peer(dir.path(), "a", env);
    let lifecycle = ServiceBindings::new()
        .session_entries(writer.clone())
        .session_control(NoCompaction)
        .session_compaction(NoCompaction);
    let host = support::bound_host(dir.path(), &[path], lifecycle);
    let a = host.start("a").unwrap();
    let payload = HookPayload::Other {
        hook: HookName::SessionBeforeCompact,
        payload: json!({"kind": "before_compact", "reason": "manual"}),
    };
    a.run_session_operation_hook(&payload, &LeafScope::default(), options())
        .unwrap();
    let seen = tool(&a, "seen", json!({}));
    let answer = &seen["compact_in_hook"];
    assert_eq!(answer["error"]["code"], -32602, "{seen}");
    assert!(answer["error"]["message"]
        .as_str()
        .unwrap()
        .starts_with("invalid_request"));
}

/// A lifecycle service that must never be reached.
struct NoCompaction;

impl octet_host::services::bound::SessionControlService for NoCompaction {}

impl octet_host::services::bound::SessionCompactionService for NoCompaction {
    fn compact(
        &self,
        _call: ServiceCall,
        _request: octet_host::services::bound::CompactRequest,
        _reply: Reply<octet_host::services::bound::Compaction>,
    ) {
        panic!("a compaction started from inside a compaction hook");
    }
}

#[test]
fn the_shared_cancellation_stops_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let writer = Writer::default();
    let slow = "OCTET_PEER_HOOK_DELAY_MS = \"1000\"";
    let host = host(&dir, &[("a", slow), ("b", "")], &writer);
    let _a = host.start("a").unwrap();
    let b = host.start("b").unwrap();
    let (stop, stopped) = octet_host::channel::bounded::<()>(0);
    let stopper = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(200));
        drop(stop);
    });
    let error = host
        .session_operation_hook(&start(), &LeafScope::default(), options(), Some(&stopped))
        .unwrap_err();
    stopper.join().unwrap();
    assert_eq!(error.extension, "a");
    assert!(
        matches!(error.error, CallError::Cancelled { .. }),
        "{error:?}"
    );
    assert!(error.completed.is_empty());
    assert_eq!(tool(&b, "seen", json!({}))["hooks"], json!([]));
}
