//! Host-mediated autocomplete (section 2.24b) through the library and serve, against
//! the raw Python peer (`tests/fixtures/services_peer.py`): offered only when bound (the
//! edit profile only on API 0.4 and only with autocomplete), a chain queried only once
//! the frontend admitted its registration, every reply checked against the exact
//! snapshot (the reference's `é"` example), and chains tried in order under one
//! aggregate deadline.

mod support;

use std::time::Duration;

use octet_host::host::{CallError, ServiceBindings};
use octet_host::services::autocomplete::CompletionQuery;
use octet_host::services::bound::{
    Accepted, AutocompleteRegistration, AutocompleteService, Refusal, Reply, ServiceCall,
};
use octet_host::{CallOptions, ExtensionHandle, ExtensionHost};
use serde_json::{json, Value};
use support::serve_harness::*;
use support::tool_json as tool;
use support::Journal;

/// An interactive frontend: admits every chain, except revision 0, which it refuses.
#[derive(Clone, Default)]
struct Editor(Journal);

impl AutocompleteService for Editor {
    fn register(&self, call: ServiceCall, r: AutocompleteRegistration, reply: Reply<Accepted>) {
        self.0
            .push(format!("register {} {}", call.source.extension, r.revision));
        if r.revision == 0 {
            reply.refuse(Refusal::UnsupportedFeature.because("no interactive editor"));
        } else {
            reply.ok(Accepted);
        }
    }
}

/// The reference's example reply: replace `é` and the quote after the cursor.
const EXAMPLE: &str = r#"{"prefix": "é", "items": [{"value": "文/\"", "label": "Directory", "description": "Keep the closing quote", "replace_after_bytes": 1, "cursor_offset_bytes": 4}]}"#;

fn env(reply: &str, delay_ms: u64) -> String {
    format!("OCTET_PEER_COMPLETION = '{reply}', OCTET_PEER_COMPLETION_DELAY_MS = \"{delay_ms}\"")
}

fn host(
    dir: &tempfile::TempDir,
    peers: &[(&str, &str, String)],
    bindings: ServiceBindings,
) -> ExtensionHost {
    let dirs: Vec<_> = peers
        .iter()
        .map(|(name, api, env)| support::services_extension(dir.path(), name, api, env))
        .collect();
    support::bound_host(dir.path(), &dirs, bindings)
}

/// The peer registers revision `revision` and reports the answer.
fn register(ext: &ExtensionHandle, revision: u64) -> Value {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let id = format!(
        "r{}",
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    );
    let answers = tool(
        ext,
        "ask",
        json!({"requests": [{"id": id, "method": "ui/autocomplete/register",
            "params": {"revision": revision}, "parent": "none"}]}),
    );
    answers[&id].clone()
}

#[test]
fn the_edit_profile_is_offered_only_on_api_0_4_and_only_with_autocomplete() {
    let dir = tempfile::tempdir().unwrap();
    let peers = [("new", "0.4", String::new()), ("old", "0.2", String::new())];
    let both = ServiceBindings::new()
        .autocomplete(Editor::default())
        .autocomplete_edit();
    let host = host(&dir, &peers, both);
    let new = support::offered(&tool(&host.start("new").unwrap(), "seen", json!({})));
    assert!(new.iter().any(|f| f == "autocomplete"), "{new:?}");
    assert!(new.iter().any(|f| f == "autocomplete_edit_v1"), "{new:?}");
    let old = support::offered(&tool(&host.start("old").unwrap(), "seen", json!({})));
    assert!(old.iter().any(|f| f == "autocomplete"), "{old:?}");
    assert!(!old.iter().any(|f| f == "autocomplete_edit_v1"), "{old:?}");

    let dir = tempfile::tempdir().unwrap();
    let host = self::host(
        &dir,
        &peers[..1],
        ServiceBindings::new().autocomplete_edit(),
    );
    let ext = host.start("new").unwrap();
    let alone = support::offered(&tool(&ext, "seen", json!({})));
    assert!(
        !alone.iter().any(|f| f.starts_with("autocomplete")),
        "{alone:?}"
    );
    let refused = register(&ext, 1);
    assert_eq!(refused["error"]["code"], -32601, "{refused}");
}

#[test]
fn a_chain_is_queried_only_once_admitted_and_its_reply_is_checked_on_receipt() {
    let dir = tempfile::tempdir().unwrap();
    let editor = Editor::default();
    let peers = [("peer", "0.4", env(EXAMPLE, 0))];
    let bindings = ServiceBindings::new()
        .autocomplete(editor.clone())
        .autocomplete_edit();
    let host = host(&dir, &peers, bindings);
    let ext = host.start("peer").unwrap();
    let query = CompletionQuery::new("é\"", 2, 7);
    let options = || CallOptions::with_deadline(Duration::from_secs(30));

    // No admitted chain yet: nothing is sent.
    let early = ext.autocomplete(&query, options()).unwrap_err();
    assert!(matches!(early, CallError::NotDeclared { .. }), "{early:?}");
    // A refused registration admits nothing; params are closed.
    assert_eq!(register(&ext, 0)["error"]["code"], -32601);
    let extra = tool(
        &ext,
        "ask",
        json!({"requests": [{"id": "x", "method": "ui/autocomplete/register",
            "params": {"revision": 1}}]}),
    );
    assert_eq!(extra["x"]["error"]["code"], -32602, "{extra}");
    assert!(ext.autocomplete(&query, options()).is_err());

    let admitted = register(&ext, 3);
    assert_eq!(admitted["result"], json!({"accepted": true}), "{admitted}");
    let reply = ext.autocomplete(&query, options()).unwrap();
    assert_eq!(reply.prefix, "é");
    let (item, edit) = &reply.items[0];
    assert_eq!(item.label, "Directory");
    assert_eq!(edit.text, "文/\"");
    assert_eq!(edit.cursor, 4);
    assert_eq!(edit.replaced, 0..3);
    let seen = tool(&ext, "seen", json!({}));
    assert_eq!(
        seen["completions"],
        json!([{"text": "é\"", "cursor": 2, "revision": 7}])
    );
    assert_eq!(editor.0.entries(), ["register peer 0", "register peer 3"]);

    // A snapshot with the cursor inside a character is refused before anything is sent.
    let inside = CompletionQuery::new("é", 1, 8);
    let refused = ext.autocomplete(&inside, options()).unwrap_err();
    assert!(
        matches!(refused, CallError::InvalidRequest { .. }),
        "{refused:?}"
    );
    // The same reply to another snapshot breaks its prefix: refused on receipt.
    let other = CompletionQuery::new("ab", 2, 9);
    let broken = ext.autocomplete(&other, options()).unwrap_err();
    assert!(matches!(broken, CallError::InvalidResult(_)), "{broken:?}");
}

#[test]
fn edit_fields_without_the_profile_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let peers = [("peer", "0.2", env(EXAMPLE, 0))];
    let host = host(
        &dir,
        &peers,
        ServiceBindings::new().autocomplete(Editor::default()),
    );
    let ext = host.start("peer").unwrap();
    assert_eq!(register(&ext, 1)["result"], json!({"accepted": true}));
    let query = CompletionQuery::new("é\"", 2, 1);
    let options = CallOptions::with_deadline(Duration::from_secs(30));
    let error = ext.autocomplete(&query, options).unwrap_err();
    let CallError::InvalidResult(why) = &error else {
        panic!("{error:?}");
    };
    assert!(why.to_string().contains("autocomplete_edit_v1"), "{why}");
}

#[test]
fn chains_are_tried_in_admission_order_under_one_deadline() {
    let dir = tempfile::tempdir().unwrap();
    let claim =
        r#"{"prefix": "gi", "items": [{"value": "git", "label": "git", "description": null}]}"#;
    let peers = [
        ("empty", "0.2", env(r#"{"prefix": "", "items": []}"#, 0)),
        ("claims", "0.2", env(claim, 0)),
        ("slow", "0.2", env(claim, 2_000)),
    ];
    let host = host(
        &dir,
        &peers,
        ServiceBindings::new().autocomplete(Editor::default()),
    );
    let query = CompletionQuery::new("gi", 2, 1);
    let slow = host.start("slow").unwrap();
    let empty = host.start("empty").unwrap();
    let claims = host.start("claims").unwrap();
    // No chain admitted: unclaimed, nobody failed.
    let none = host.autocomplete(&query).unwrap();
    assert!(
        none.claimed.is_none() && none.failures.is_empty(),
        "{none:?}"
    );

    // Admitted in the order empty, claims: the empty reply passes to the next chain.
    register(&empty, 1);
    register(&claims, 1);
    let outcome = host.autocomplete(&query).unwrap();
    let (by, reply) = outcome.claimed.expect("claimed");
    assert_eq!(by, "claims");
    assert_eq!(reply.items[0].1.text, "git");
    assert!(outcome.failures.is_empty());

    // A slow chain admitted later than both is never reached; admitted first, it
    // spends the whole deadline and the others are out of time.
    register(&slow, 1);
    assert_eq!(
        host.autocomplete(&query).unwrap().claimed.unwrap().0,
        "claims"
    );
    let dir2 = tempfile::tempdir().unwrap();
    let host = self::host(
        &dir2,
        &peers,
        ServiceBindings::new().autocomplete(Editor::default()),
    );
    let slow = host.start("slow").unwrap();
    let claims = host.start("claims").unwrap();
    register(&slow, 1);
    register(&claims, 1);
    let outcome = host.autocomplete(&query).unwrap();
    assert!(outcome.claimed.is_none(), "{outcome:?}");
    let failed: Vec<&str> = outcome.failures.iter().map(|(e, _)| e.as_str()).collect();
    assert_eq!(failed, ["slow", "claims"]);
    assert!(matches!(
        outcome.failures[0].1,
        CallError::DeadlineExceeded { .. } | CallError::Cancelled { .. }
    ));
}

#[test]
fn serve_completes_with_the_checked_items_and_their_edits() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dir = support::services_extension(root.path(), "peer", "0.4", &env(EXAMPLE, 0));
    let mut serve = Serve::over(workspace, root, vec![dir]);
    let reply = serve.request(json!({"id": 1, "op": "start", "extension": "peer",
        "services": ["autocomplete", "autocomplete_edit_v1"]}));
    assert_eq!(reply["ok"], true, "{reply}");
    serve.send(
        json!({"op": "call", "call_id": "r", "extension": "peer", "tool": "ask",
        "arguments": {"requests": [{"id": "r", "method": "ui/autocomplete/register",
            "params": {"revision": 2}, "parent": "none"}]}}),
    );
    let request = serve.until("service_request", |l| l["type"] == "service_request");
    assert_eq!(request["method"], "ui/autocomplete/register");
    assert_eq!(request["params"], json!({"revision": 2}));
    let answer = serve.request(json!({"id": 2, "op": "service_answer",
        "request_id": request["request_id"], "result": {"accepted": true}}));
    assert_eq!(answer["ok"], true, "{answer}");
    serve.result(json!("r"));

    let done = serve.request(json!({"id": 3, "op": "autocomplete",
        "text": "é\"", "cursor": 2, "revision": 7}));
    assert_eq!(done["ok"], true, "{done}");
    assert_eq!(done["claimed_by"], "peer");
    assert_eq!(done["prefix"], "é");
    assert_eq!(
        done["items"][0]["edit"],
        json!({"start": 0, "end": 3, "text": "文/\"", "cursor": 4})
    );
    assert_eq!(done["items"][0]["replace_after_bytes"], 1);
    let inside = serve.request(json!({"id": 4, "op": "autocomplete", "extension": "peer",
        "text": "é", "cursor": 1, "revision": 8}));
    assert_eq!(inside["ok"], false, "{inside}");
}
