//! Host services wired through the dispatcher against a real peer (sections 2.5, 2.8,
//! 2.9, 2.10, 2.11): artifacts and media parts, dynamic tools, presentation snapshots,
//! policy and secrets.

mod support;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use octet_host::host::{CallOptions, ExtensionHandle, HostEvent, ServiceBindings};
use octet_host::services::{Decision, InMemorySecretBroker, RulesEngine};
use octet_host::validate::{ContentPart, ToolResult};
use octet_host::ExtensionHost;
use serde_json::{json, Value};
use support::*;

/// The raw peer in its `services-probe` scenario: tools `echo` and `probe`, on API
/// 0.4, with `contributes_extra` added to its `[contributes]`.
fn prober(root: &Path, name: &str, contributes_extra: &str) -> PathBuf {
    peer_extension_with(
        root,
        name,
        "0.4",
        &["services-probe"],
        &["echo", "probe"],
        contributes_extra,
        "",
    )
}

/// Calls `probe`: its output and the JSON report of its first part.
fn probe(ext: &ExtensionHandle) -> (ToolResult, Value) {
    let out = ext
        .call_tool("probe", json!({}), CallOptions::default())
        .unwrap();
    let report = serde_json::from_str(out.content[0].as_text().unwrap()).unwrap();
    (out, report)
}

#[test]
fn artifacts_dynamic_tools_presentation_policy_and_secrets_work_end_to_end() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dir = prober(root.path(), "prober", "presentation = true");
    // Declare the secret allowlist and the command the presentation may route to.
    let manifest = std::fs::read_to_string(dir.join("extension.toml")).unwrap();
    let manifest = manifest.replace(
        "[contributes]",
        "[capabilities]\nsecrets = [\"demo.token\"]\n\n[contributes]",
    );
    std::fs::write(dir.join("extension.toml"), manifest).unwrap();
    let services = ServiceBindings::new()
        .policy(RulesEngine::new().with_rule("demo.publish", Decision::Allow))
        .secrets(InMemorySecretBroker::new().with_secret("prober", "demo.token", "t0ken"));
    let host = ExtensionHost::builder(workspace.path())
        .no_global_extensions()
        .extension_dir(dir)
        .bind(services)
        .build()
        .unwrap();
    let ext = host.start("prober").unwrap();
    let (out, report) = probe(&ext);
    assert!(
        report["artifact"]["artifact_id"]
            .as_str()
            .unwrap()
            .starts_with("artifact-"),
        "{report}"
    );
    assert_eq!(report["bad_artifact"], json!(-32602));
    assert_eq!(
        report["register"],
        json!({"revision": 1, "tools": ["echo", "probe", "extra"]})
    );
    assert_eq!(report["policy"], json!({"decision": "allow"}));
    assert_eq!(report["secret"], json!({"value": "t0ken"}));
    assert_eq!(report["undeclared_secret"], json!(-32602));
    // The image part resolved against the artifact the same generation published.
    assert!(
        matches!(&out.content[1], ContentPart::Image { mime_type, .. } if mime_type == "image/png")
    );
    // The dynamically registered tool is callable.
    let extra = ext
        .call_tool("extra", json!({"x": 1}), CallOptions::default())
        .unwrap();
    assert_eq!(extra.text(), r#"{"x":1}"#);
    let events = collect_events(&host, Duration::from_secs(10), |e| {
        e.iter()
            .any(|e| matches!(e, HostEvent::Presentation { .. }))
    });
    let presentation = events.iter().find_map(|e| match e {
        HostEvent::Presentation { snapshot, .. } => Some(snapshot.revision),
        _ => None,
    });
    assert_eq!(presentation, Some(1));
    // The secret never reaches an event.
    assert!(!format!("{events:?}").contains("t0ken"));
}

#[test]
fn registering_a_host_tool_name_is_refused_and_the_catalog_stays() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dir = prober(root.path(), "grabby", "");
    let host = ExtensionHost::builder(workspace.path())
        .no_global_extensions()
        .extension_dir(dir)
        .host_tools(["extra", "bash"])
        .build()
        .unwrap();
    let ext = host.start("grabby").unwrap();
    let (_, report) = probe(&ext);
    assert_eq!(report["register"], json!(-32602), "{report}");
    assert!(matches!(
        ext.call_tool("extra", json!({}), CallOptions::default()),
        Err(octet_host::host::CallError::NotDeclared { .. })
    ));
}

/// The host's tool policy may omit requested tools: the answer lists only what it
/// accepted, and the refused tool is never callable (section 2.11).
#[test]
fn the_tool_policy_omits_refused_tools_from_a_registration() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dir = prober(root.path(), "policed", "");
    let asked = Arc::new(std::sync::Mutex::new(Vec::new()));
    let record = Arc::clone(&asked);
    let policy = move |extension: &str, tool: &octet_host::negotiation::ToolDefinition| {
        record
            .lock()
            .unwrap()
            .push(format!("{extension}/{}", tool.name));
        tool.name != "extra"
    };
    let services = ServiceBindings::new().tool_policy(policy);
    let host = ExtensionHost::builder(workspace.path())
        .no_global_extensions()
        .extension_dir(dir)
        .bind(services)
        .build()
        .unwrap();
    let ext = host.start("policed").unwrap();
    let (_, report) = probe(&ext);
    assert_eq!(
        report["register"],
        json!({"revision": 1, "tools": ["echo", "probe"]}),
        "{report}"
    );
    assert_eq!(*asked.lock().unwrap(), ["policed/extra"]);
    assert!(matches!(
        ext.call_tool("extra", json!({}), CallOptions::default()),
        Err(octet_host::host::CallError::NotDeclared { .. })
    ));
    // The rest of the catalog is untouched.
    let echo = ext
        .call_tool("echo", json!({"y": 2}), CallOptions::default())
        .unwrap();
    assert_eq!(echo.text(), r#"{"y":2}"#);
}

/// A broker that blocks until the test releases it: a keychain prompt left open.
struct BlockingBroker(crossbeam_channel::Receiver<()>);

impl octet_host::services::SecretBroker for BlockingBroker {
    fn get(
        &self,
        _request: &octet_host::services::SecretRequest<'_>,
    ) -> Result<Option<octet_host::services::SecretValue>, octet_host::services::BrokerError> {
        let _ = self.0.recv_timeout(Duration::from_secs(30));
        Ok(Some(octet_host::services::SecretValue::new(
            "s3cret".into(),
        )))
    }
}

#[test]
fn a_blocked_secret_broker_wedges_nothing_and_a_settled_parent_cancels_it() {
    let root = tempfile::tempdir().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/services_peer.py");
    let manifest = format!(
        "name = \"vault\"\nversion = \"0.1.0\"\napi_version = \"0.2\"\n\n\
         [entrypoint]\ncommand = \"python3\"\nargs = [{:?}]\n\n\
         [capabilities]\nsecrets = [\"demo.token\"]\n\n\
         [contributes]\ntools = [\"ask\", \"answers\", \"seen\"]\n",
        script.to_string_lossy(),
    );
    let vault = write_manifest(root.path(), "vault", &manifest);
    let other = peer_extension(root.path(), "other", "0.2", &["good"], &["echo"]);
    let (release, released) = crossbeam_channel::unbounded();
    let services = ServiceBindings::new().secrets(BlockingBroker(released));
    let host = host_builder(root.path(), &[vault, other])
        .tool_namespace(octet_host::host::ToolNamespace::PerExtension)
        .bind(services)
        .build()
        .unwrap();
    let vault = host.start("vault").unwrap();
    let other = host.start("other").unwrap();
    // The extension asks for a secret and settles its call without waiting.
    let ask = json!({"requests": [{"id": "s", "method": "secret/get",
        "params": {"name": "demo.token"}, "wait": false}]});
    let options = CallOptions::with_deadline(Duration::from_secs(60));
    vault.call_tool("ask", ask, options.clone()).unwrap();
    // While the broker blocks, the host goes on: other calls, other extensions.
    let out = other
        .call_tool("echo", json!({"x": 1}), options.clone())
        .unwrap();
    assert!(out.text().contains("\"x\":1"), "{}", out.text());
    // The settled parent cancelled the request; the broker's late value went nowhere.
    let answers = vault
        .call_tool("answers", json!({"ids": ["s"]}), options)
        .unwrap();
    let answers: Value = serde_json::from_str(&answers.text()).unwrap();
    assert_eq!(answers["s"]["error"]["code"], -32800, "{answers}");
    release.send(()).unwrap();
}

#[test]
fn the_embedder_reads_an_artifact_a_result_names_while_its_generation_lives() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dir = prober(root.path(), "prober", "");
    let host = host(workspace.path(), &[dir]);
    let ext = host.start("prober").unwrap();
    let (out, _) = probe(&ext);
    let Some(ContentPart::Image {
        artifact_id,
        mime_type,
        ..
    }) = out.content.get(1)
    else {
        panic!("the probe answers with an image part: {:?}", out.content);
    };
    let artifact = host
        .artifact("prober", artifact_id)
        .expect("the artifact is live");
    assert_eq!(artifact.mime_type(), mime_type);
    assert_eq!(&artifact.bytes()[..8], b"\x89PNG\r\n\x1a\n");
    assert!(host.artifact("prober", "artifact-made-up").is_none());
    assert!(host.artifact("nobody", artifact_id).is_none());
    // The artifact goes with the generation that published it.
    ext.reload().unwrap();
    eventually("the old generation is gone", || host.status().len() == 1);
    assert!(host.artifact("prober", artifact_id).is_none());
}
