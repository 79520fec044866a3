//! The terminal handoff (section 2.24) through the library and serve, against the raw
//! Python peer (`tests/fixtures/services_peer.py`): one grant for the whole host, released
//! only by its holder, revoked by the embedder with `terminal/grant-lost`, ended with an
//! event when the holder's generation ends, and no terminal input or resize to the
//! holder while it lasts.

mod support;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use octet_host::host::{BoundNotification, HostEvent, NotifyError, ServiceBindings};
use octet_host::services::bound::{
    NoParams, Refusal, Reply, ServiceCall, TerminalGrant, TerminalService,
};
use octet_host::{ExtensionHandle, ExtensionHost};
use serde_json::{json, Value};
use support::serve_harness::*;
use support::tool_json as tool;
use support::Journal;

/// A frontend that cedes its terminal: grant ids count up; `long` mints an id over the
/// bound.
#[derive(Clone, Default)]
struct Tty {
    journal: Journal,
    next: Arc<AtomicU64>,
    long: bool,
}

impl TerminalService for Tty {
    fn acquire(&self, call: ServiceCall, _: NoParams, reply: Reply<TerminalGrant>) {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        self.journal
            .push(format!("acquire {}", call.source.extension));
        let grant_id = match self.long {
            true => "g".repeat(129),
            false => format!("grant-{n}"),
        };
        reply.ok(TerminalGrant {
            grant_id,
            columns: 80,
            rows: 24,
        });
    }
    fn release(&self, call: ServiceCall, _: NoParams, reply: Reply<()>) {
        self.journal
            .push(format!("release {}", call.source.extension));
        reply.ok(());
    }
}

fn host(dir: &tempfile::TempDir, names: &[&str], bindings: ServiceBindings) -> ExtensionHost {
    let dirs: Vec<_> = names
        .iter()
        .map(|name| support::services_extension(dir.path(), name, "0.2", ""))
        .collect();
    support::bound_host(dir.path(), &dirs, bindings)
}

static NEXT: AtomicU64 = AtomicU64::new(0);

/// The peer sends `method` with this call as parent and reports the answer.
fn send(ext: &ExtensionHandle, method: &str) -> Value {
    let id = format!("t{}", NEXT.fetch_add(1, Ordering::Relaxed));
    let answers = tool(
        ext,
        "ask",
        json!({"requests": [{"id": id, "method": method, "params": {}}]}),
    );
    answers[&id].clone()
}

fn token(answer: &Value) -> &str {
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    message.split(':').next().unwrap()
}

/// The notifications the peer received with `method`.
fn received(ext: &ExtensionHandle, method: &str) -> Vec<Value> {
    let seen = tool(ext, "seen", json!({}));
    let all = seen["notifications"].as_array().unwrap().clone();
    all.into_iter()
        .filter(|n| n["method"] == method)
        .map(|n| n["params"].clone())
        .collect()
}

#[test]
fn one_grant_for_the_whole_host_released_only_by_its_holder() {
    let dir = tempfile::tempdir().unwrap();
    let tty = Tty::default();
    let bindings = ServiceBindings::new()
        .terminal_handoff(tty.clone())
        .terminal_input();
    let host = host(&dir, &["a", "b"], bindings);
    let a = host.start("a").unwrap();
    let b = host.start("b").unwrap();

    let grant = send(&a, "terminal/acquire");
    assert_eq!(
        grant["result"],
        json!({"grant_id": "grant-0", "columns": 80, "rows": 24})
    );
    let again = send(&a, "terminal/acquire");
    assert_eq!(token(&again), "invalid_request", "{again}");
    let other = send(&b, "terminal/acquire");
    assert_eq!(token(&other), "invalid_request", "{other}");
    let foreign = send(&b, "terminal/release");
    assert_eq!(token(&foreign), "invalid_request", "{foreign}");

    // The holder gets no input or resize; the other extension does.
    let input = BoundNotification::TerminalInput {
        data: "ls\r".into(),
    };
    let refused = a.notify(input.clone()).unwrap_err();
    assert!(matches!(refused, NotifyError::Refused(ref r) if r.refusal == Refusal::InvalidRequest));
    b.notify(input).unwrap();
    b.notify(BoundNotification::Resize {
        columns: 100,
        rows: 30,
    })
    .unwrap();
    support::eventually("b sees its input and resize", || {
        received(&b, "ui/resize") == [json!({"columns": 100, "rows": 30})]
    });
    assert_eq!(received(&b, "ui/terminal-input"), [json!({"data": "ls\r"})]);
    let long = BoundNotification::TerminalInput {
        data: "x".repeat(257),
    };
    assert!(b.notify(long).is_err());

    assert_eq!(send(&a, "terminal/release")["result"], json!({}));
    assert_eq!(
        send(&b, "terminal/acquire")["result"]["grant_id"],
        "grant-1"
    );
    assert_eq!(
        tty.journal.entries(),
        ["acquire a", "release a", "acquire b"]
    );
}

#[test]
fn a_revoked_or_ended_grant_frees_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let tty = Tty::default();
    let host = host(
        &dir,
        &["a", "b"],
        ServiceBindings::new().terminal_handoff(tty.clone()),
    );
    let a = host.start("a").unwrap();
    let b = host.start("b").unwrap();

    // Revoked by the embedder: the holder is told, the grant ends. A reason over its
    // bound is refused and revokes nothing.
    assert!(send(&a, "terminal/acquire")["result"].is_object());
    let long = "x".repeat(octet_host::limits::MAX_GRANT_LOST_REASON_BYTES + 1);
    assert!(a.revoke_terminal(&long).is_err());
    assert!(b.revoke_terminal("not yours").is_err());
    a.revoke_terminal("the session moved").unwrap();
    support::eventually("a hears the grant is lost", || {
        received(&a, "terminal/grant-lost") == [json!({"reason": "the session moved"})]
    });
    assert!(a.revoke_terminal("again").is_err());
    let released = send(&a, "terminal/release");
    assert_eq!(token(&released), "invalid_request");

    // Its generation ends: the embedder hears it, and the terminal is free.
    assert!(send(&b, "terminal/acquire")["result"].is_object());
    b.shutdown();
    let mut lost = None;
    support::eventually("the grant-lost event", || {
        while let Ok(event) = host.events().try_recv() {
            if let HostEvent::TerminalGrantLost {
                source, grant_id, ..
            } = event
            {
                lost = Some((source.extension, grant_id));
            }
        }
        lost.is_some()
    });
    assert_eq!(lost, Some(("b".to_string(), "grant-1".to_string())));
    assert!(send(&a, "terminal/acquire")["result"].is_object());
}

#[test]
fn a_grant_over_its_bound_never_reaches_the_extension_nor_holds_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let tty = Tty {
        long: true,
        ..Tty::default()
    };
    let host = host(&dir, &["a"], ServiceBindings::new().terminal_handoff(tty));
    let a = host.start("a").unwrap();
    let broken = send(&a, "terminal/acquire");
    assert_eq!(broken["error"]["code"], -32603, "{broken}");
    // Nothing holds the terminal: a revoke finds no grant.
    assert!(a.revoke_terminal("none").is_err());
    let unbound = tempfile::tempdir().unwrap();
    let host = self::host(&unbound, &["a"], ServiceBindings::new());
    let a = host.start("a").unwrap();
    let refused = send(&a, "terminal/acquire");
    assert_eq!(refused["error"]["code"], -32601);
    assert_eq!(token(&refused), "unsupported_feature");
}

#[test]
fn serve_revokes_a_grant_and_reports_a_lost_one() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dir = support::services_extension(root.path(), "peer", "0.2", "");
    let mut serve = Serve::over(workspace, root, vec![dir]);
    let reply = serve.request(json!({"id": 1, "op": "start", "extension": "peer",
        "services": ["terminal_handoff", "terminal_input"]}));
    assert_eq!(reply["ok"], true, "{reply}");
    serve.send(
        json!({"op": "call", "call_id": "c1", "extension": "peer", "tool": "ask",
        "arguments": {"requests": [{"id": "acq", "method": "terminal/acquire", "params": {}}]}}),
    );
    let request = serve.until("service_request", |l| l["type"] == "service_request");
    assert_eq!(request["method"], "terminal/acquire");
    let answer = serve.request(json!({"id": 2, "op": "service_answer",
        "request_id": request["request_id"],
        "result": {"grant_id": "tty-1", "columns": 120, "rows": 40}}));
    assert_eq!(answer["ok"], true, "{answer}");
    serve.result(json!("c1"));
    // The holder gets no input; a revoke reaches it; a second revoke is refused.
    let input = serve.request(json!({"id": 3, "op": "notify", "extension": "peer",
        "method": "ui/terminal-input", "params": {"data": "q"}}));
    assert_eq!(input["ok"], false, "{input}");
    let revoked = serve.request(
        json!({"id": 4, "op": "terminal_revoke", "extension": "peer",
        "reason": "shutting down"}),
    );
    assert_eq!(revoked["ok"], true, "{revoked}");
    let again = serve.request(
        json!({"id": 5, "op": "terminal_revoke", "extension": "peer",
        "reason": "again"}),
    );
    assert_eq!(again["ok"], false, "{again}");
    let input = serve.request(json!({"id": 6, "op": "notify", "extension": "peer",
        "method": "ui/resize", "params": {"columns": 90, "rows": 20}}));
    assert_eq!(input["ok"], true, "{input}");
}
