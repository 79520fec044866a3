//! Typed diagnostics in tool results (`metadata.octet_diagnostics_v1`): the host
//! checks the closed profile and every artifact a diagnostic names before it keeps a
//! result, through the library and serve, against raw Python peers.

mod support;

use std::path::Path;

use octet_host::host::{CallError, CallOptions, ExtensionHandle, ServiceBindings};
use octet_host::validate::diagnostics::DiagnosticRule;
use octet_host::validate::ResultErrorKind;
use octet_host::ExtensionHost;
use serde_json::{json, Value};
use support::serve_harness::Serve;
use support::*;

fn answering_peer(root: &Path) -> std::path::PathBuf {
    peer_extension(root, "raw", "0.4", &["good"], &["echo"])
}

fn diagnostic(n: usize) -> Value {
    json!({"severity": "warning", "code": format!("lint.w{n}"), "message": "Unused value."})
}

fn answer(ext: &ExtensionHandle, metadata: Value, is_error: bool) -> Result<Value, CallError> {
    let result = json!({"content": [{"type": "text", "text": "done"}],
                        "is_error": is_error, "metadata": metadata});
    ext.call_tool("echo", json!({ "answer": result }), CallOptions::default())
        .map(|out| out.metadata.unwrap_or(Value::Null))
}

fn rule_of(error: CallError) -> (String, ResultErrorKind) {
    match error {
        CallError::InvalidResult(e) => (e.path().to_string(), e.kind().clone()),
        other => panic!("an invalid result, not {other:?}"),
    }
}

#[test]
fn the_profile_is_checked_at_and_past_its_bounds() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let host = host(workspace.path(), &[answering_peer(root.path())]);
    let ext = host.start("raw").unwrap();
    let at_bound: Vec<Value> = (0..32).map(diagnostic).collect();
    let kept = answer(
        &ext,
        json!({"octet_diagnostics_v1": at_bound, "cache": "miss"}),
        false,
    )
    .expect("32 diagnostics are admitted");
    assert_eq!(kept["octet_diagnostics_v1"].as_array().unwrap().len(), 32);
    assert_eq!(kept["cache"], "miss");

    let over: Vec<Value> = (0..33).map(diagnostic).collect();
    let (path, kind) =
        rule_of(answer(&ext, json!({"octet_diagnostics_v1": over}), false).unwrap_err());
    assert_eq!(path, "metadata.octet_diagnostics_v1");
    assert_eq!(
        kind,
        ResultErrorKind::Diagnostic(DiagnosticRule::TooMany { count: 33 })
    );

    let mut null_primary = diagnostic(0);
    null_primary["primary"] = Value::Null;
    let (path, kind) =
        rule_of(answer(&ext, json!({"octet_diagnostics_v1": [null_primary]}), true).unwrap_err());
    assert_eq!(path, "metadata.octet_diagnostics_v1[0].primary");
    assert_eq!(
        kind,
        ResultErrorKind::Diagnostic(DiagnosticRule::NullMember)
    );

    let mut traversal = diagnostic(0);
    traversal["primary"] = json!({"source": {"kind": "workspace", "path": "../secrets",
        "revision": "0".repeat(64)}, "span": {"start_byte": 0, "end_byte": 3}});
    let (path, kind) =
        rule_of(answer(&ext, json!({"octet_diagnostics_v1": [traversal]}), false).unwrap_err());
    assert_eq!(path, "metadata.octet_diagnostics_v1[0].primary.source.path");
    assert_eq!(
        kind,
        ResultErrorKind::Diagnostic(DiagnosticRule::WorkspacePath)
    );

    // A broken result fails its own call only: the next one is answered.
    assert!(answer(&ext, json!({}), false).is_ok());
}

#[test]
fn an_attachment_must_name_an_artifact_this_generation_published() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    // Without the artifacts feature no artifact can be named at all.
    let host = host(workspace.path(), &[answering_peer(root.path())]);
    let ext = host.start("raw").unwrap();
    let mut attached = diagnostic(0);
    attached["attachments"] = json!([{"kind": "artifact", "id": "artifact-never-issued"}]);
    let (path, kind) =
        rule_of(answer(&ext, json!({"octet_diagnostics_v1": [attached]}), false).unwrap_err());
    assert_eq!(path, "metadata.octet_diagnostics_v1[0].attachments[0]");
    assert!(matches!(
        kind,
        ResultErrorKind::Diagnostic(DiagnosticRule::UnknownArtifact { .. })
    ));
    // No bulk objects are served: a blob is nobody's.
    let mut blob = diagnostic(0);
    blob["attachments"] = json!([{"kind": "blob", "id": "blob-1"}]);
    let (_, kind) =
        rule_of(answer(&ext, json!({"octet_diagnostics_v1": [blob]}), false).unwrap_err());
    assert!(matches!(
        kind,
        ResultErrorKind::Diagnostic(DiagnosticRule::UnknownBlob { .. })
    ));

    // With artifacts, the one the call published is admitted and a made-up one is not.
    let dir = peer_extension_with(
        root.path(),
        "prober",
        "0.4",
        &["services-probe"],
        &["echo", "probe"],
        "",
        "",
    );
    let host = ExtensionHost::builder(workspace.path())
        .no_global_extensions()
        .extension_dir(dir)
        .bind(ServiceBindings::new())
        .build()
        .unwrap();
    let prober = host.start("prober").unwrap();
    let out = prober
        .call_tool(
            "probe",
            json!({"diagnostic": "issued"}),
            CallOptions::default(),
        )
        .expect("the published artifact may be attached");
    let attachment = &out.metadata.unwrap()["octet_diagnostics_v1"][0]["attachments"][0];
    assert!(
        attachment["id"].as_str().unwrap().starts_with("artifact-"),
        "{attachment}"
    );
    let forged = prober
        .call_tool(
            "probe",
            json!({"diagnostic": "forged"}),
            CallOptions::default(),
        )
        .unwrap_err();
    let (_, kind) = rule_of(forged);
    assert_eq!(
        kind,
        ResultErrorKind::Diagnostic(DiagnosticRule::UnknownArtifact {
            id: "artifact-made-up".into()
        })
    );
}

#[test]
fn serve_reports_a_broken_profile_as_an_invalid_result_naming_the_field() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dir = answering_peer(root.path());
    let mut serve = Serve::over(workspace, root, vec![dir]);
    serve.start_extension("raw");
    let over: Vec<Value> = (0..33).map(diagnostic).collect();
    let result = json!({"content": [{"type": "text", "text": "x"}], "is_error": false,
                        "metadata": {"octet_diagnostics_v1": over}});
    serve.send(
        json!({"op": "call", "call_id": "d1", "extension": "raw", "tool": "echo",
                      "arguments": {"answer": result}}),
    );
    let line = serve.result(json!("d1"));
    assert_eq!(line["ok"], false, "{line}");
    assert_eq!(line["error"]["code"], "invalid_result", "{line}");
    assert_eq!(
        line["error"]["path"], "metadata.octet_diagnostics_v1",
        "{line}"
    );
    assert!(
        line["error"]["message"]
            .as_str()
            .unwrap()
            .contains("33 diagnostics"),
        "{line}"
    );
    serve.close_input().unwrap();
}
