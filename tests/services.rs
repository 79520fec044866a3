//! Host services wired through the dispatcher against a real peer (sections 2.5, 2.8,
//! 2.9, 2.10, 2.11): artifacts and media parts, dynamic tools, presentation snapshots,
//! policy and secrets.

mod support;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use octet_host::host::{CallOptions, ExtensionHandle, HostEvent, HostServices};
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
    let services = HostServices {
        policy: Arc::new(RulesEngine::new().with_rule("demo.publish", Decision::Allow)),
        secrets: Some(Arc::new(InMemorySecretBroker::new().with_secret(
            "prober",
            "demo.token",
            "t0ken",
        ))),
        ..HostServices::default()
    };
    let host = ExtensionHost::builder(workspace.path())
        .no_global_extensions()
        .extension_dir(dir)
        .services(services)
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
    let services = HostServices {
        tool_policy: Some(Arc::new(policy)),
        ..Default::default()
    };
    let host = ExtensionHost::builder(workspace.path())
        .no_global_extensions()
        .extension_dir(dir)
        .services(services)
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
