//! Secret and credential answers stay secret (section 2.10): a planted value reaches the
//! extension, and no diagnostic, log line, wire trace, event or `serve` line carries it.
//! Through the library (with the wire trace on) and through `serve`, whose client
//! answers `secret/get`, `provider/credentials`, `policy/evaluate` and the approval of
//! an `ask` intent with the same `service_request` / `service_answer` lines as every
//! other service.

mod support;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::Duration;

use octet_host::host::{CallOptions, ServiceBindings};
use octet_host::services::{InMemoryCredentialResolver, InMemorySecretBroker};
use serde_json::{json, Value};
use support::*;

const PLANTED: &str = "PLANTED-s3cret-7f1d2c";
const PLANTED_CREDENTIAL: &str = "PLANTED-cred-99ab";

/// Fails when `everything` carries a planted value.
fn assert_nothing_planted(everything: &str) {
    assert!(
        !everything.contains(PLANTED),
        "the secret leaked: {everything}"
    );
    assert!(
        !everything.contains(PLANTED_CREDENTIAL),
        "the credential leaked: {everything}"
    );
}

/// Records every log line of this test process.
struct Recorder(Mutex<Vec<String>>);

impl log::Log for Recorder {
    fn enabled(&self, _: &log::Metadata) -> bool {
        true
    }
    fn log(&self, record: &log::Record) {
        self.0
            .lock()
            .unwrap()
            .push(format!("{} {}", record.target(), record.args()));
    }
    fn flush(&self) {}
}

static RECORDER: Recorder = Recorder(Mutex::new(Vec::new()));

/// The Wave-1 peer, declaring the secret `demo.token` and provider credentials.
fn vault(root: &Path) -> PathBuf {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/services_peer.py");
    let manifest = format!(
        "name = \"vault\"\nversion = \"0.1.0\"\napi_version = \"0.2\"\n\n\
         [entrypoint]\ncommand = \"python3\"\nargs = [{:?}]\n\n\
         [capabilities]\nsecrets = [\"demo.token\"]\nprovider_credentials = true\n\n\
         [contributes]\ntools = [\"ask\", \"answers\", \"seen\"]\n",
        script.to_string_lossy(),
    );
    write_manifest(root, "vault", &manifest)
}

/// The requests the extension sends; it reports the secrets by length only.
fn requests() -> Value {
    json!({"requests": [
        {"id": "secret", "method": "secret/get", "params": {"name": "demo.token"}, "conceal": true},
        {"id": "credential", "method": "provider/credentials",
         "params": {"provider": "acme", "model": "rocket-1"}, "conceal": true},
        {"id": "policy", "method": "policy/evaluate",
         "params": {"intent": {"kind": "external_side_effect", "operation": "demo.publish"}}},
    ]})
}

#[test]
fn planted_secrets_reach_the_extension_and_nothing_else_through_the_library() {
    log::set_logger(&RECORDER).unwrap();
    log::set_max_level(log::LevelFilter::Trace);
    let root = tempfile::tempdir().unwrap();
    let bindings = ServiceBindings::new()
        .secrets(InMemorySecretBroker::new().with_secret("vault", "demo.token", PLANTED))
        .credentials(InMemoryCredentialResolver::new().with_credential(
            "acme",
            "rocket-1",
            PLANTED_CREDENTIAL,
        ));
    let host = host_builder(root.path(), &[vault(root.path())])
        .wire_trace(true)
        .bind(bindings)
        .build()
        .unwrap();
    let ext = host.start("vault").unwrap();
    let out = ext
        .call_tool(
            "ask",
            requests(),
            CallOptions::with_deadline(Duration::from_secs(60)),
        )
        .unwrap();
    let report: Value = serde_json::from_str(&out.text()).unwrap();
    assert_eq!(
        report["secret"]["concealed"]["value"],
        PLANTED.len() + 2,
        "{report}"
    );
    assert!(report["credential"]["concealed"].is_object(), "{report}");
    assert_eq!(report["policy"]["result"]["decision"], "deny", "{report}");
    host.shutdown();
    let events: Vec<_> = host.events().try_iter().collect();
    let everything = format!("{events:?}{:?}", RECORDER.0.lock().unwrap());
    assert!(
        everything.contains("secret/get"),
        "the trace saw the request"
    );
    assert_nothing_planted(&everything);
}

#[test]
fn serve_clients_answer_the_brokers_and_the_secret_stays_off_every_line() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let mut serve = Command::new(octet_binary())
        .arg("--workspace")
        .arg(workspace.path())
        .arg("--no-global")
        .arg("--extension-dir")
        .arg(vault(root.path()))
        .arg("serve")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = serve.stdin.take().unwrap();
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(serve.stdout.take().unwrap()));
    let mut seen = Vec::new();
    let mut next = |seen: &mut Vec<String>| -> Value {
        let line = lines.next().expect("serve ended early").unwrap();
        seen.push(line.clone());
        serde_json::from_str(&line).unwrap()
    };
    let mut send = |line: Value| {
        use std::io::Write;
        writeln!(stdin, "{line}").unwrap();
    };
    send(json!({"id": 1, "op": "start", "extension": "vault",
                "services": ["secrets", "provider_credentials", "policy", "approvals"]}));
    loop {
        let line = next(&mut seen);
        if line["type"] == "reply" && line["id"] == 1 {
            assert_eq!(line["ok"], true, "{line}");
            break;
        }
    }
    send(
        json!({"op": "call", "call_id": "c", "extension": "vault", "tool": "ask", "arguments": requests()}),
    );
    let mut answered = 0;
    let result = loop {
        let line = next(&mut seen);
        match line["type"].as_str() {
            Some("service_request") => {
                let request_id = line["request_id"].clone();
                assert!(line["parent_request_id"].is_u64(), "{line}");
                assert_eq!(line["independent"], false, "{line}");
                let result = match line["method"].as_str().unwrap() {
                    "secret/get" => {
                        assert_eq!(line["params"], json!({"name": "demo.token"}));
                        json!({"value": PLANTED})
                    }
                    "provider/credentials" => json!({"credential": PLANTED_CREDENTIAL}),
                    "policy/evaluate" => {
                        assert_eq!(line["params"]["intent"]["operation"], "demo.publish");
                        json!({"decision": "ask"})
                    }
                    "policy/approve" => json!({"approved": true}),
                    other => panic!("unexpected {other}: {line}"),
                };
                answered += 1;
                send(
                    json!({"id": 100 + answered, "op": "service_answer", "request_id": request_id, "result": result}),
                );
            }
            Some("result") if line["call_id"] == "c" => break line,
            _ => {}
        }
    };
    assert_eq!(answered, 4, "every broker asked the client once");
    assert_eq!(result["ok"], true, "{result}");
    let report: Value =
        serde_json::from_str(result["output"]["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(
        report["secret"]["concealed"]["value"],
        PLANTED.len() + 2,
        "{report}"
    );
    assert_eq!(
        report["credential"]["concealed"]["credential"],
        PLANTED_CREDENTIAL.len() + 2,
        "{report}"
    );
    // Classified `ask` by the client's engine and approved by its approver: a
    // single-use approval token comes with the answer (section 2.9).
    assert_eq!(report["policy"]["result"]["decision"], "ask", "{report}");
    assert!(
        report["policy"]["result"]["approval_token"].is_string(),
        "{report}"
    );
    send(json!({"id": 2, "op": "shutdown"}));
    while let Some(Ok(line)) = lines.next() {
        seen.push(line);
    }
    let mut stderr = String::new();
    serve
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    serve.wait().unwrap();
    let everything = format!("{}\n{stderr}", seen.join("\n"));
    assert_nothing_planted(&everything);
}
