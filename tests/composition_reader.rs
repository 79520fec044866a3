//! The reader's side of composition sidecars (section 2.25): the SDK's compose example
//! is handed `context_file` envelopes by a hand-written host, and refuses a link, a
//! traversal and a wrong digest, unlinking what it refused in its scratch directory.

mod support;

use std::path::Path;

use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use support::driver::*;

fn hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A compose example on API 0.4 with `tool_composition_v1` negotiated, its scratch
/// directory `scratch`.
fn compose(scratch: &Path) -> Ext {
    let mut ext = Ext::spawn_with("compose", "0.4", &[("OCTET_EXTENSION_SCRATCH", scratch)]);
    let mut init = initialize("0.4", 8);
    init["params"]["protocol"]["optional_features"]
        .as_array_mut()
        .unwrap()
        .push(json!("tool_composition_v1"));
    ext.send(&init);
    let result = ext.result(1);
    assert!(
        result["protocol"]["features"]
            .as_array()
            .unwrap()
            .contains(&json!("tool_composition_v1")),
        "{result}"
    );
    assert_eq!(result["tools"][0]["composition"]["mode"], "on", "{result}");
    ext
}

/// Calls `survey` as request `id` and answers its `composition/context` with
/// `envelope`; the frame that follows.
fn survey_with(ext: &mut Ext, id: u64, envelope: Value) -> Value {
    ext.call(id, "survey", json!({"calls": []}));
    let request = ext.next();
    assert_eq!(request["method"], "composition/context", "{request}");
    assert_eq!(request["params"]["parent_request_id"], id);
    ext.send(&json!({"jsonrpc": "2.0", "id": request["id"],
                     "result": {"context_file": envelope}}));
    ext.next()
}

fn context_bytes() -> Vec<u8> {
    serde_json::to_vec(&json!({"tools": [], "store": {"runs": 4},
                               "limits": {"timeout_ms": 30000, "max_calls": 256}}))
    .unwrap()
}

#[test]
fn a_good_sidecar_is_read_and_unlinked() {
    let scratch = tempfile::tempdir().unwrap();
    let mut ext = compose(scratch.path());
    let bytes = context_bytes();
    let name = "composition-good.json";
    std::fs::write(scratch.path().join(name), &bytes).unwrap();
    let envelope = json!({"path": name, "bytes": bytes.len(), "sha256": hex(&bytes)});
    let store = survey_with(&mut ext, 2, envelope);
    // The context was read: the run count came from its store.
    assert_eq!(store["method"], "composition/store", "{store}");
    assert_eq!(store["params"]["set"], json!({"runs": 5}));
    assert!(
        !scratch.path().join(name).exists(),
        "the reader unlinks the sidecar"
    );
    ext.send(&json!({"jsonrpc": "2.0", "id": store["id"], "result": {}}));
    let answer = ext.response(2);
    assert!(
        text_of(&answer["result"]).starts_with("run 5: 0 tools"),
        "{answer}"
    );
}

#[test]
fn links_traversal_and_wrong_digests_are_refused() {
    let scratch = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let mut ext = compose(scratch.path());
    let bytes = context_bytes();
    let secret = outside.path().join("composition-secret.json");
    std::fs::write(&secret, &bytes).unwrap();
    let refused = |answer: &Value, why: &str| {
        let message = answer["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains("sidecar"), "{why}: {answer}");
    };
    // A link to a file elsewhere, named as the host would.
    std::os::unix::fs::symlink(&secret, scratch.path().join("composition-link.json")).unwrap();
    let answer = survey_with(
        &mut ext,
        2,
        json!({"path": "composition-link.json", "bytes": bytes.len(), "sha256": hex(&bytes)}),
    );
    refused(&answer, "a symbolic link");
    assert!(secret.exists(), "the link's target is never touched");
    assert!(!scratch.path().join("composition-link.json").exists());
    // A path out of the scratch directory.
    let traversal = format!(
        "../{}/composition-secret.json",
        outside.path().file_name().unwrap().to_string_lossy()
    );
    let answer = survey_with(
        &mut ext,
        3,
        json!({"path": traversal, "bytes": bytes.len(), "sha256": hex(&bytes)}),
    );
    refused(&answer, "a traversal");
    assert!(secret.exists());
    // The right file with the wrong digest.
    let name = "composition-tampered.json";
    std::fs::write(scratch.path().join(name), &bytes).unwrap();
    let answer = survey_with(
        &mut ext,
        4,
        json!({"path": name, "bytes": bytes.len(), "sha256": "0".repeat(64)}),
    );
    refused(&answer, "a wrong digest");
    assert!(
        !scratch.path().join(name).exists(),
        "a refused sidecar is unlinked"
    );
}
