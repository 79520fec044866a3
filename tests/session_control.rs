//! Active-session control (section 2.21b) and `session/compact` (section 2.21c)
//! through the library and through serve, against the raw Python peer
//! (`tests/fixtures/services_peer.py`): offered only when bound and only on API 0.4,
//! compaction only with control; closed params and the owner rules; one request at a
//! time in admission order, a full queue -32012, a failed execution -32603; compaction
//! refused while its parent is live and answered with the committed entry after.

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use octet_host::host::ServiceBindings;
use octet_host::limits::MAX_SESSION_OPERATIONS_QUEUED;
use octet_host::services::bound::{
    CompactRequest, Compaction, Refusal, Reply, ServiceCall, SessionCompactionService,
    SessionControlService, SessionId, SessionTarget,
};
use octet_host::{ExtensionHandle, ExtensionHost};
use serde_json::{json, Value};
use support::serve_harness::*;
use support::tool_json as tool;
use support::Journal;

/// A lifecycle service that journals when each operation starts and ends. Switching to
/// `slow` takes 300 ms; switching to `block` waits until `release` is set; reload fails.
#[derive(Clone, Default)]
struct Lifecycle {
    journal: Journal,
    release: Arc<Mutex<bool>>,
}

impl SessionControlService for Lifecycle {
    fn wait_for_idle(&self, _call: ServiceCall, _: SessionTarget, reply: Reply<SessionId>) {
        self.journal.push("idle".into());
        reply.ok(SessionId {
            session_id: "active".into(),
        });
    }
    fn create(&self, call: ServiceCall, _: SessionTarget, reply: Reply<SessionId>) {
        self.journal
            .push(format!("create independent={}", call.independent));
        reply.ok(SessionId {
            session_id: "new".into(),
        });
    }
    fn reload(&self, _call: ServiceCall, _: SessionTarget, reply: Reply<SessionId>) {
        reply.refuse(Refusal::Unavailable.because("no interactive session is active"));
    }
    fn switch(&self, _call: ServiceCall, target: SessionId, reply: Reply<SessionId>) {
        self.journal
            .push(format!("switch {} start", target.session_id));
        match target.session_id.as_str() {
            "slow" => std::thread::sleep(Duration::from_millis(300)),
            "block" => support::eventually("the release", || *self.release.lock().unwrap()),
            _ => {}
        }
        self.journal
            .push(format!("switch {} end", target.session_id));
        reply.ok(target);
    }
}

impl SessionCompactionService for Lifecycle {
    fn compact(&self, call: ServiceCall, request: CompactRequest, reply: Reply<Compaction>) {
        self.journal.push(format!(
            "compact {:?} independent={}",
            request.custom_instructions, call.independent
        ));
        reply.ok(Compaction {
            entry_id: "checkpoint-1".into(),
            summary: "What happened.".into(),
            first_kept: "entry-7".into(),
        });
    }
}

struct World {
    _dir: tempfile::TempDir,
    host: ExtensionHost,
}

fn world(api: &str, bindings: ServiceBindings) -> World {
    let dir = tempfile::tempdir().unwrap();
    let ext = support::services_extension(dir.path(), "peer", api, "");
    let host = support::host_builder(dir.path(), &[ext])
        .bind(bindings)
        .build()
        .unwrap();
    World { _dir: dir, host }
}

fn both(lifecycle: &Lifecycle) -> ServiceBindings {
    ServiceBindings::new()
        .session_control(lifecycle.clone())
        .session_compaction(lifecycle.clone())
}

fn ask(ext: &ExtensionHandle, requests: Value) -> Value {
    tool(ext, "ask", json!({ "requests": requests }))
}

fn code(answer: &Value) -> i64 {
    answer["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("expected an error, got {answer}"))
}

fn token(answer: &Value) -> String {
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    message.split(':').next().unwrap().to_string()
}

/// Starts the peer on `api` with `bindings`: neither session feature is offered, and
/// `method` is refused -32601 `unsupported_feature`.
fn not_offered(api: &str, bindings: ServiceBindings, method: &str) {
    let w = world(api, bindings);
    let ext = w.host.start("peer").unwrap();
    let offered = support::offered(&tool(&ext, "seen", json!({})));
    assert!(
        !offered.iter().any(|f| f.starts_with("session_c")),
        "{offered:?}"
    );
    let answers = ask(&ext, json!([{"id": "r", "method": method, "params": {}}]));
    assert_eq!(code(&answers["r"]), -32601, "{answers}");
    assert_eq!(token(&answers["r"]), "unsupported_feature");
}

#[test]
fn offered_only_on_api_0_4_and_compaction_only_with_control() {
    let lifecycle = Lifecycle::default();
    let w = world("0.4", both(&lifecycle));
    let offered = support::offered(&tool(&w.host.start("peer").unwrap(), "seen", json!({})));
    assert!(
        offered.iter().any(|f| f == "session_control_v1"),
        "{offered:?}"
    );
    assert!(
        offered.iter().any(|f| f == "session_compaction_v1"),
        "{offered:?}"
    );

    // Compaction without control: the start succeeds and offers neither.
    let alone = ServiceBindings::new().session_compaction(lifecycle.clone());
    not_offered("0.4", alone, "session/wait_for_idle");
    // API 0.2: never offered, the start succeeds, a request is unsupported_feature.
    not_offered("0.2", both(&lifecycle), "session/create");
    assert!(lifecycle.journal.entries().is_empty());
}

/// The peer on API 0.4 with both kinds bound, after one settled `ask` call (for the
/// requests that name the previous one).
fn settled_once() -> (Lifecycle, World, ExtensionHandle) {
    let lifecycle = Lifecycle::default();
    let w = world("0.4", both(&lifecycle));
    let ext = w.host.start("peer").unwrap();
    ask(&ext, json!([]));
    (lifecycle, w, ext)
}

#[test]
fn closed_params_and_the_owner_rules_refuse_before_the_service() {
    let (lifecycle, _w, ext) = settled_once();
    let answers = ask(
        &ext,
        json!([
            {"id": "id", "method": "session/create", "params": {"session_id": "s"}},
            {"id": "null", "method": "session/create", "params": {"session_id": null}},
            {"id": "extra", "method": "session/fork", "params": {"label": "x"}},
            {"id": "noparent", "method": "session/create", "params": {}, "parent": "none"},
            {"id": "noid", "method": "session/switch", "params": {}},
            {"id": "long", "method": "session/switch", "params": {"session_id": "s".repeat(257)}},
            {"id": "foreign", "method": "session/create", "params": {}, "parent": "previous", "owner": "foreign"},
            {"id": "settled", "method": "session/create", "params": {}, "parent": "previous", "owner": "issued"},
            {"id": "failed", "method": "session/reload", "params": {}},
        ]),
    );
    assert_eq!(token(&answers["id"]), "invalid_request", "{answers}");
    assert_eq!(answers["null"]["result"], json!({"session_id": "new"}));
    assert_eq!(token(&answers["extra"]), "invalid_request");
    assert_eq!(token(&answers["noparent"]), "invalid_request");
    assert_eq!(token(&answers["noid"]), "invalid_request");
    assert_eq!(code(&answers["long"]), -32602);
    assert_eq!(code(&answers["foreign"]), -32002);
    assert_eq!(token(&answers["foreign"]), "not_foreground_owner");
    // A settled parent with the issued owner is answered independently.
    assert_eq!(answers["settled"]["result"], json!({"session_id": "new"}));
    // A failed execution is -32603 with the reason in data.
    assert_eq!(code(&answers["failed"]), -32603, "{answers}");
    assert_eq!(answers["failed"]["error"]["message"], "internal error");
    assert_eq!(
        answers["failed"]["error"]["data"]["reason"],
        "no interactive session is active"
    );
    assert_eq!(
        lifecycle.journal.entries(),
        ["create independent=false", "create independent=true"]
    );
}

#[test]
fn operations_run_one_at_a_time_in_order_and_a_full_queue_is_refused() {
    let lifecycle = Lifecycle::default();
    let w = world("0.4", both(&lifecycle));
    let ext = w.host.start("peer").unwrap();
    tool(&ext, "seen", json!({}));
    // An idle wait sent right after a slow switch does not overtake it.
    let answers = ask(
        &ext,
        json!([
            {"id": "switch", "method": "session/switch", "params": {"session_id": "slow"}, "wait": false},
            {"id": "idle", "method": "session/wait_for_idle", "params": {}},
        ]),
    );
    assert_eq!(answers["idle"]["result"], json!({"session_id": "active"}));
    assert_eq!(
        lifecycle.journal.entries(),
        ["switch slow start", "switch slow end", "idle"]
    );

    // One blocks the lane, 16 wait behind it, the 18th is refused at once. They name
    // the settled call before with the issued owner, so they outlive this one.
    let mut requests = vec![json!({"id": "block", "method": "session/switch",
        "params": {"session_id": "block"}, "wait": false, "parent": "previous", "owner": "issued"})];
    for n in 0..MAX_SESSION_OPERATIONS_QUEUED {
        requests.push(json!({"id": format!("q{n}"), "method": "session/switch",
            "params": {"session_id": format!("s{n}")}, "wait": false,
            "parent": "previous", "owner": "issued"}));
    }
    requests.push(json!({"id": "over", "method": "session/wait_for_idle", "params": {}}));
    lifecycle.journal.wait_for("idle");
    let answers = ask(&ext, Value::Array(requests));
    assert_eq!(code(&answers["over"]), -32012, "{answers}");
    assert_eq!(
        answers["over"]["error"]["message"],
        "extension resource exhausted"
    );
    assert!(answers["over"]["error"]["data"]["reason"]
        .as_str()
        .unwrap()
        .contains("at most 16"));
    *lifecycle.release.lock().unwrap() = true;
    let ids: Vec<String> = (0..MAX_SESSION_OPERATIONS_QUEUED)
        .map(|n| format!("q{n}"))
        .collect();
    let settled = tool(&ext, "answers", json!({ "ids": ids }));
    for n in 0..MAX_SESSION_OPERATIONS_QUEUED {
        let id = format!("s{n}");
        assert_eq!(
            settled[format!("q{n}")]["result"],
            json!({"session_id": id})
        );
    }
    // Each started only after the one before ended.
    let journal = lifecycle.journal.entries();
    let switches: Vec<&String> = journal
        .iter()
        .filter(|l| l.starts_with("switch s") && l.as_bytes()[8].is_ascii_digit())
        .collect();
    for (n, pair) in switches.chunks(2).enumerate() {
        assert_eq!(*pair[0], format!("switch s{n} start"));
        assert_eq!(*pair[1], format!("switch s{n} end"));
    }
}

#[test]
fn compaction_waits_for_its_parent_to_settle() {
    let (lifecycle, _w, ext) = settled_once();
    let answers = ask(
        &ext,
        json!([
            {"id": "live", "method": "session/compact", "params": {}, "owner": "issued"},
            {"id": "noowner", "method": "session/compact", "params": {}, "parent": "previous"},
            {"id": "foreign", "method": "session/compact", "params": {}, "parent": "previous", "owner": "foreign"},
            {"id": "cr", "method": "session/compact", "params": {"custom_instructions": "a\rb"},
                "parent": "previous", "owner": "issued"},
            {"id": "ok", "method": "session/compact", "params": {"custom_instructions": "Keep\tit."},
                "parent": "previous", "owner": "issued"},
        ]),
    );
    assert_eq!(code(&answers["live"]), -32602, "{answers}");
    assert_eq!(token(&answers["live"]), "invalid_request");
    assert_eq!(token(&answers["noowner"]), "not_foreground_owner");
    assert_eq!(token(&answers["foreign"]), "not_foreground_owner");
    assert_eq!(token(&answers["cr"]), "invalid_request");
    assert_eq!(
        answers["ok"]["result"],
        json!({"entry_id": "checkpoint-1", "summary": "What happened.", "first_kept": "entry-7"})
    );
    assert_eq!(
        lifecycle.journal.entries(),
        ["compact Some(\"Keep\\tit.\") independent=true"]
    );
}

#[test]
fn serve_hands_the_client_one_operation_at_a_time() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dir = support::services_extension(root.path(), "peer", "0.4", "");
    let mut serve = Serve::over(workspace, root, vec![dir]);
    let reply = serve.request(json!({"id": 1, "op": "start", "extension": "peer",
        "services": ["session_control_v1", "session_compaction_v1"]}));
    assert_eq!(reply["ok"], true, "{reply}");
    serve.send(
        json!({"op": "call", "call_id": "c1", "extension": "peer", "tool": "ask",
        "arguments": {"requests": [
            {"id": "fork", "method": "session/fork", "params": {}, "wait": false},
            {"id": "idle", "method": "session/wait_for_idle", "params": {}}]}}),
    );
    let first = serve.until("service_request", |l| l["type"] == "service_request");
    assert_eq!(first["method"], "session/fork");
    assert_eq!(first["params"], json!({}));
    // The idle wait is not handed over while the fork is unanswered.
    std::thread::sleep(Duration::from_millis(300));
    let reply = serve.request(json!({"id": 3, "op": "service_answer",
        "request_id": first["request_id"], "result": {"session_id": "forked"}}));
    assert_eq!(reply["ok"], true, "{reply}");
    let second = serve.until("service_request", |l| l["type"] == "service_request");
    assert_eq!(second["method"], "session/wait_for_idle");
    let reply = serve.request(json!({"id": 4, "op": "service_answer",
        "request_id": second["request_id"], "refusal": "resource_exhausted",
        "message": "the idle driver is busy"}));
    assert_eq!(reply["ok"], true, "{reply}");
    let result = serve.result(json!("c1"));
    let report: Value = serde_json::from_str(text_of(&result)).unwrap();
    assert_eq!(report["idle"]["error"]["code"], -32012, "{report}");
    assert_eq!(
        report["idle"]["error"]["data"]["reason"],
        "the idle driver is busy"
    );
}

#[test]
fn queued_operations_of_an_ended_generation_never_reach_the_service() {
    let lifecycle = Lifecycle::default();
    let w = world("0.4", both(&lifecycle));
    let ext = w.host.start("peer").unwrap();
    ask(&ext, json!([]));
    // One blocks the lane; two wait behind it; then the generation ends.
    let mut requests = vec![json!({"id": "block", "method": "session/switch",
        "params": {"session_id": "block"}, "wait": false, "parent": "previous", "owner": "issued"})];
    for n in 0..2 {
        requests.push(json!({"id": format!("q{n}"), "method": "session/switch",
            "params": {"session_id": format!("s{n}")}, "wait": false,
            "parent": "previous", "owner": "issued"}));
    }
    ask(&ext, Value::Array(requests));
    lifecycle.journal.wait_for("switch block start");
    ext.shutdown();
    *lifecycle.release.lock().unwrap() = true;
    support::eventually("the blocked switch ends", || {
        lifecycle
            .journal
            .entries()
            .iter()
            .any(|l| l == "switch block end")
    });
    // The lane moves on, and what waited for the ended generation is dropped.
    std::thread::sleep(Duration::from_millis(300));
    let started: Vec<String> = lifecycle
        .journal
        .entries()
        .into_iter()
        .filter(|l| l.starts_with("switch s"))
        .collect();
    assert!(started.is_empty(), "{started:?}");
}
