//! Extension-to-host requests and notifications at the edges the reference draws,
//! through the raw Wave-1 peer: the 129th outstanding request and the 65,537th id of a
//! generation (section 2: "At most 128 child requests may be outstanding and at most
//! 65,536 distinct child IDs may be used in one generation"), `tools/unregister` on API
//! 0.2 and 0.4 (section 2.12), and unsolicited `context/contribution` and
//! `status/contribution` (sections 2.3, 2.4) reaching the embedder.

mod support;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use octet_host::host::{CallOptions, Diagnostic, HostEvent, ServiceBindings};
use octet_host::services::bound::ServiceCall;
use octet_host::services::bound::{ComposerEdit, ComposerService, ComposerText, NoParams, Reply};
use serde_json::{json, Value};
use support::agents::{ask, code};
use support::*;

/// A composer that holds every `composer/get` until the test answers it.
#[derive(Clone, Default)]
struct HeldComposer(Arc<Mutex<Vec<Reply<ComposerText>>>>);

impl ComposerService for HeldComposer {
    fn get(&self, _call: ServiceCall, _params: NoParams, reply: Reply<ComposerText>) {
        self.0.lock().unwrap().push(reply);
    }
    fn set(&self, _call: ServiceCall, _params: ComposerEdit, reply: Reply<()>) {
        reply.ok(());
    }
    fn insert(&self, _call: ServiceCall, _params: ComposerEdit, reply: Reply<()>) {
        reply.ok(());
    }
}

#[test]
fn the_129th_outstanding_request_is_refused_and_the_128_are_served() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dir = services_extension(root.path(), "peer", "0.2", "");
    let composer = HeldComposer::default();
    let host = host_builder(workspace.path(), &[dir])
        .bind_for("peer", ServiceBindings::new().composer(composer.clone()))
        .build()
        .unwrap();
    let ext = host.start("peer").unwrap();
    let release = workspace.path().join("release");
    let mut requests: Vec<Value> = (0..128)
        .map(|n| {
            json!({"id": format!("held-{n}"), "method": "composer/get", "params": {},
                        "wait": false})
        })
        .collect();
    requests.push(json!({"id": "over", "method": "composer/get", "params": {}}));
    requests.push(json!({"pause": release.to_string_lossy()}));
    requests.push(json!({"await": "held-0"}));
    requests.push(json!({"await": "held-127"}));
    let asking = ext.clone();
    let call = std::thread::spawn(move || ask(&asking, Value::Array(requests)));
    eventually("128 requests are held", || {
        composer.0.lock().unwrap().len() == 128
    });
    for reply in composer.0.lock().unwrap().drain(..) {
        reply.ok(ComposerText("draft".into()));
    }
    std::fs::write(&release, b"").unwrap();
    let report = call.join().unwrap();
    assert_eq!(code(&report["over"]), -32012, "{}", report["over"]);
    assert_eq!(report["held-0"]["result"]["text"], "draft", "{report}");
    assert_eq!(report["held-127"]["result"]["text"], "draft", "{report}");
    // With the 128 answered, the next request is served again.
    let again = ask(
        &ext,
        json!([{"id": "again", "method": "composer/set", "params": {"text": "x"}}]),
    );
    assert_eq!(again["again"]["result"], json!({}), "{again}");
}

#[test]
fn the_65537th_request_id_of_a_generation_is_refused() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dir = services_extension(root.path(), "peer", "0.2", "");
    let host = host_builder(workspace.path(), &[dir]).build().unwrap();
    let ext = host.start("peer").unwrap();
    // 65,535 ids, the `ask` call's own requests being the rest: the peer's flood of
    // a method the host does not know is refused request by request, each id used.
    let report = ask(
        &ext,
        json!([{"flood": 65_535, "method": "nothing/here", "prefix": "f"},
               {"id": "last", "method": "nothing/here", "params": {}},
               {"id": "over", "method": "nothing/here", "params": {}}]),
    );
    assert_eq!(report["f"], json!({"-32601": 65_535}), "{}", report["f"]);
    assert_eq!(code(&report["last"]), -32601, "{}", report["last"]);
    assert_eq!(code(&report["over"]), -32012, "{}", report["over"]);
    // A new generation starts afresh.
    ext.reload().unwrap();
    let fresh = ask(
        &ext,
        json!([{"id": "f-0", "method": "nothing/here", "params": {}}]),
    );
    assert_eq!(code(&fresh["f-0"]), -32601, "{fresh}");
}

#[test]
fn tools_unregister_removes_dynamic_tools_on_api_0_2_and_0_4() {
    for api in ["0.2", "0.4"] {
        let root = tempfile::tempdir().unwrap();
        let workspace = tempfile::tempdir().unwrap();
        let dir = services_extension(root.path(), "peer", api, "");
        let host = host_builder(workspace.path(), &[dir]).build().unwrap();
        let ext = host.start("peer").unwrap();
        let tool = |name: &str| json!({"name": name, "description": "Added", "parameters": {"type": "object"}});
        let report = ask(
            &ext,
            json!([{"id": "reg", "method": "tools/register",
                    "params": {"tools": [tool("one"), tool("two")]}},
                   {"id": "unreg", "method": "tools/unregister",
                    "params": {"names": ["one", "missing"]}},
                   {"id": "bad", "method": "tools/unregister", "params": {"names": ["bad name!"]}}]),
        );
        assert_eq!(report["reg"]["result"]["revision"], 1, "{api}: {report}");
        // Missing names are ignored; the authoritative set comes back.
        assert_eq!(
            report["unreg"]["result"],
            json!({"revision": 2, "tools": ["ask", "answers", "seen", "two"]}),
            "{api}: {report}"
        );
        assert_eq!(code(&report["bad"]), -32602, "{api}: {report}");
        let catalog = ext.tools().unwrap();
        assert_eq!(catalog.revision, 2, "{api}");
        let names: Vec<String> = catalog.tools.iter().map(|t| t.name.clone()).collect();
        assert!(!names.contains(&"one".to_string()), "{api}: {names:?}");
        assert!(names.contains(&"two".to_string()), "{api}: {names:?}");
        let gone = ext
            .call_tool("one", json!({}), CallOptions::default())
            .unwrap_err();
        assert!(gone.to_string().contains("one"), "{api}: {gone}");
    }
}

/// The Wave-1 peer as `name`, contributing context and the status surface.
fn contributing(root: &Path, name: &str) -> PathBuf {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/services_peer.py");
    let manifest = format!(
        "name = {name:?}\nversion = \"0.1.0\"\napi_version = \"0.2\"\n\n\
         [entrypoint]\ncommand = \"python3\"\nargs = [{:?}]\n\n\
         [contributes]\ntools = [\"ask\", \"answers\", \"seen\"]\ncontext = true\n\
         ui = [\"status\"]\n",
        script.to_string_lossy(),
    );
    write_manifest(root, name, &manifest)
}

/// Notifications written as they are, `wait: false`, then a request that is answered
/// once they were read.
fn notifications(lines: &[Value]) -> Value {
    let mut requests: Vec<Value> = lines
        .iter()
        .enumerate()
        .map(|(n, line)| json!({"id": format!("n-{n}"), "raw": line.to_string(), "wait": false}))
        .collect();
    requests.push(json!({"id": "after", "method": "nothing/here", "params": {}}));
    Value::Array(requests)
}

fn context_line(params: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": "context/contribution", "params": params})
}

fn status_line(params: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": "status/contribution", "params": params})
}

#[test]
fn unsolicited_contributions_reach_the_embedder_and_malformed_ones_are_refused() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dir = contributing(root.path(), "watcher");
    let host = host_builder(workspace.path(), &[dir]).build().unwrap();
    let events = host.events();
    let ext = host.start("watcher").unwrap();
    ask(
        &ext,
        notifications(&[
            context_line(json!({"label": "file-watcher",
                "content": "src/main.rs was modified at 14:32.", "placement": "system_suffix"})),
            status_line(json!({"surface": "status", "text": "watching src/",
                "style_role": "extension.watcher.status", "priority": 10})),
            context_line(json!({"label": "file-watcher", "placement": "nowhere"})),
            status_line(json!({"surface": "status", "text": 7})),
        ]),
    );
    let seen: Vec<HostEvent> = events.try_iter().collect();
    let context: Vec<_> = seen
        .iter()
        .filter_map(|e| match e {
            HostEvent::ContextContribution { contribution, .. } => Some(contribution),
            _ => None,
        })
        .collect();
    assert_eq!(context.len(), 1, "{seen:?}");
    assert_eq!(context[0].content, "src/main.rs was modified at 14:32.");
    let status: Vec<_> = seen
        .iter()
        .filter_map(|e| match e {
            HostEvent::StatusContribution { contribution, .. } => Some(contribution),
            _ => None,
        })
        .collect();
    assert_eq!(status.len(), 1, "{seen:?}");
    assert_eq!(status[0].text, "watching src/");
    let refused: Vec<&String> = seen
        .iter()
        .filter_map(|e| match e {
            HostEvent::Diagnostic {
                diagnostic: Diagnostic::Refused { method, .. },
                ..
            } if method.ends_with("/contribution") => Some(method),
            _ => None,
        })
        .collect();
    assert_eq!(
        refused,
        ["context/contribution", "status/contribution"],
        "{seen:?}"
    );
}

#[test]
fn unsolicited_contributions_reach_serves_client() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dir = contributing(root.path(), "watcher");
    let mut serve = serve_harness::Serve::over(workspace, root, vec![dir]);
    serve.start_extension("watcher");
    let requests = notifications(&[
        context_line(json!({"label": "file-watcher", "content": "changed",
            "placement": "system_suffix"})),
        status_line(json!({"surface": "status", "text": "watching"})),
        status_line(json!({"surface": "nowhere", "text": "x"})),
    ]);
    serve.send(
        json!({"op": "call", "call_id": "c1", "extension": "watcher", "tool": "ask",
                      "arguments": {"requests": requests}}),
    );
    serve.result(json!("c1"));
    // Events travel apart from results, in the order the host saw them: once the
    // malformed one's diagnostic is out, the two contributions before it are too.
    serve.until("the malformed contribution's diagnostic", |l| {
        l["type"] == "event" && l.to_string().contains("status/contribution")
    });
    let of = |event: &str| -> Vec<Value> {
        serve
            .seen
            .iter()
            .filter(|l| l["type"] == "event" && l["event"] == event)
            .cloned()
            .collect()
    };
    let context = of("context_contribution");
    assert_eq!(context.len(), 1, "{:?}", serve.seen);
    assert_eq!(
        context[0]["contribution"]["content"], "changed",
        "{context:?}"
    );
    let status = of("status_contribution");
    assert_eq!(status.len(), 1, "{:?}", serve.seen);
    assert_eq!(status[0]["contribution"]["text"], "watching", "{status:?}");
    let refused = serve
        .seen
        .iter()
        .filter(|l| l.to_string().contains("status/contribution") && l["type"] == "event")
        .count();
    assert!(
        refused >= 1,
        "the malformed one is reported: {:?}",
        serve.seen
    );
    serve_harness::assert_lines_follow_the_schema(&serve.seen);
    serve.close_input().unwrap();
}
