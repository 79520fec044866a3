//! Every extension-to-host request whose id can still be read gets an answer (section
//! 2), even when the host refuses its frame: a lone surrogate escape in a composer
//! text, a JSON syntax error, a broken envelope, a non-canonical API 0.3 frame. The
//! params of a refused frame never reach a service, and nothing else is lost. On API
//! 0.3 every error carries the table's exact message (SUPPLEMENT "Error table"), and an
//! `initialize` answered with a refused frame fails the start at once.

mod support;

use std::path::Path;
use std::time::Duration;

use octet_host::host::{ServiceBindings, StartError};
use octet_host::services::bound::{
    ComposerEdit, ComposerService, ComposerText, NoParams, Reply, ServiceCall,
};
use octet_host::{CallOptions, ExtensionHandle};
use serde_json::{json, Value};
use support::Journal;

/// A composer that records every text it is given.
#[derive(Clone, Default)]
struct Composer(Journal);

impl ComposerService for Composer {
    fn get(&self, _call: ServiceCall, _params: NoParams, reply: Reply<ComposerText>) {
        reply.ok(ComposerText(self.0.entries().join("|")));
    }
    fn set(&self, _call: ServiceCall, params: ComposerEdit, reply: Reply<()>) {
        self.0.push(params.text);
        reply.ok(());
    }
    fn insert(&self, _call: ServiceCall, params: ComposerEdit, reply: Reply<()>) {
        self.0.push(params.text);
        reply.ok(());
    }
}

fn tool(ext: &ExtensionHandle, name: &str, arguments: Value) -> Value {
    let options = CallOptions::with_deadline(Duration::from_secs(60));
    let result = ext.call_tool(name, arguments, options).unwrap();
    serde_json::from_str(&result.text()).unwrap()
}

/// The code and message of an answer the peer reported, which must be an error.
fn error(answer: &Value) -> (i64, String) {
    let e = &answer["error"];
    assert!(e.is_object(), "expected an error, got {answer}");
    (
        e["code"].as_i64().unwrap(),
        e["message"].as_str().unwrap().to_string(),
    )
}

#[test]
fn refused_request_frames_are_answered_and_lose_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let ext = support::services_extension(dir.path(), "peer", "0.2", "");
    let composer = Composer::default();
    let host = support::host_builder(dir.path(), &[ext])
        .bind(ServiceBindings::new().composer(composer.clone()))
        .build()
        .unwrap();
    let ext = host.start("peer").unwrap();
    let answers = tool(
        &ext,
        "ask",
        json!({"requests": [
            // JavaScript's slicing leaves a lone surrogate; serde_json refuses it.
            {"id": "lone", "method": "composer/set", "params": {"text": "abc"}, "surrogate": "text"},
            {"id": "fine", "method": "composer/set", "params": {"text": "fine"}},
            // Not a Wave-1 method: -32602 without a contract name.
            {"id": "prompt", "method": "confirmation/request", "params": {"prompt": "?"},
             "surrogate": "prompt"},
            {"id": "syntax", "raw": "{\"jsonrpc\":\"2.0\",\"id\":\"syntax\",\"method\":\"composer/get\",\"params\":{},}"},
            {"id": "version", "raw": "{\"jsonrpc\":\"1.0\",\"id\":\"version\",\"method\":\"composer/get\",\"params\":{}}"},
            {"id": 7, "raw": "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"composer/set\",\"params\":[1,2,]}"},
            // The id "lone" was used: its answer must not look like the first one's.
            {"id": null, "raw": "{\"jsonrpc\":\"2.0\",\"id\":\"lone\",\"method\":\"composer/get\",\"params\":{},}"},
            {"id": "get", "method": "composer/get", "params": {}},
        ]}),
    );
    let (code, message) = error(&answers["lone"]);
    assert_eq!(code, -32602, "{answers}");
    assert!(message.starts_with("invalid_request: "), "{message}");
    assert!(message.contains("surrogate"), "{message}");
    assert_eq!(answers["fine"], json!({"result": {}}));
    let (code, message) = error(&answers["prompt"]);
    assert_eq!(code, -32602, "{answers}");
    assert!(message.starts_with("invalid params: "), "{message}");
    let (code, message) = error(&answers["syntax"]);
    assert_eq!(code, -32700, "{answers}");
    assert!(message.starts_with("parse error: "), "{message}");
    let (code, _) = error(&answers["version"]);
    assert_eq!(code, -32600, "{answers}");
    let (code, message) = error(&answers["7"]);
    assert_eq!(code, -32602, "{answers}");
    assert!(message.starts_with("invalid_request: "), "{message}");
    let (code, message) = error(&answers["None"]);
    assert_eq!(code, -32600, "{answers}");
    assert!(message.contains("already used"), "{message}");
    // The refused params never reached the service; the good request did, and the
    // generation still serves.
    assert_eq!(composer.0.entries(), vec!["fine".to_string()]);
    assert_eq!(answers["get"], json!({"result": {"text": "fine"}}));
}

/// The raw API 0.3 peer with the tools `ask` and `seen`, running `scenario`.
fn peer03(root: &Path, name: &str, scenario: &str) -> std::path::PathBuf {
    support::peer03_extension(root, name, scenario, &["ask", "seen"], "")
}

#[test]
fn api_0_3_refused_requests_are_answered_with_the_table_messages() {
    let dir = tempfile::tempdir().unwrap();
    let ext = peer03(dir.path(), "peer03", "good");
    let host = support::host(dir.path(), &[ext]);
    let ext = host.start("peer03").unwrap();
    let answers = tool(
        &ext,
        "ask",
        json!({"requests": [
            // Unsorted envelope keys: not canonical, but the id can be read.
            {"id": "unsorted", "raw": "{\"jsonrpc\":\"2.0\",\"id\":\"unsorted\",\"method\":\"session/create\",\"params\":{}}"},
            // Unsorted keys inside params only: a params problem.
            {"id": "inner", "raw": "{\"id\":\"inner\",\"jsonrpc\":\"2.0\",\"method\":\"session/create\",\"params\":{\"b\":1,\"a\":2}}"},
            {"id": "unknown", "method": "session/create", "params": {}},
        ]}),
    );
    assert_eq!(answers["unsorted"]["error"]["code"], -32700, "{answers}");
    assert_eq!(answers["unsorted"]["error"]["message"], "parse error");
    let reason = answers["unsorted"]["error"]["data"]["reason"]
        .as_str()
        .unwrap();
    assert!(reason.contains("out of order"), "{reason}");
    assert_eq!(answers["inner"]["error"]["code"], -32602, "{answers}");
    assert_eq!(answers["inner"]["error"]["message"], "invalid params");
    assert_eq!(answers["unknown"]["error"]["code"], -32601, "{answers}");
    assert_eq!(
        answers["unknown"]["error"]["message"],
        "unknown or unnegotiated method"
    );
}

#[test]
fn a_refused_initialize_answer_fails_the_start_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let ext = peer03(dir.path(), "unsorted03", "unsorted-initialize");
    // Far longer than the test may take: the start must not wait for it.
    let host = support::host_builder(dir.path(), &[ext])
        .startup_timeout(Duration::from_secs(600))
        .build()
        .unwrap();
    match host.start("unsorted03") {
        Err(StartError::RefusedInitializeAnswer { reason }) => {
            assert!(reason.contains("canonical"), "{reason}")
        }
        other => panic!("expected the refused initialize answer, got {other:?}"),
    }
}
