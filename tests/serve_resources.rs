//! Native resource refs (section 2.26) through serve: a `start` with
//! `"features":["resource_refs_v1"]` offers them, and a refused input resource is a
//! `resource_refused` result naming the input and the contract's reason.

mod support;

use serde_json::json;
use support::serve_harness::{self, Serve};
use support::*;

#[test]
fn serve_offers_resource_refs_to_the_extension_its_start_names() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dirs = vec![resource_extension(root.path(), "circuits", "")];
    let mut serve = Serve::over(workspace, root, dirs);
    let reply = serve.request(json!({"id": 1, "op": "start", "extension": "circuits",
                                     "features": ["resource_refs_v1"]}));
    let features = reply["features"].as_array().unwrap();
    assert!(features.contains(&json!("resource_refs_v1")), "{reply}");
    assert!(
        features.contains(&json!("operation_descriptors_v1")),
        "{reply}"
    );
    let make = reply["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "use")
        .unwrap();
    assert_eq!(make["operation"]["receiver"], "/circuit");
    serve.send(
        json!({"op": "call", "call_id": "m", "extension": "circuits", "tool": "make",
                      "arguments": {}}),
    );
    let made = serve.result(json!("m"));
    let circuit = made["output"]["structured_content"]["circuit"].clone();
    assert_eq!(circuit["type"], "Circuit", "{made}");
    serve.send(
        json!({"op": "call", "call_id": "slow", "extension": "circuits", "tool": "use",
                      "arguments": {"circuit": circuit, "sleep_ms": 1000}}),
    );
    serve.send(
        json!({"op": "call", "call_id": "busy", "extension": "circuits", "tool": "use",
                      "arguments": {"circuit": circuit}}),
    );
    let busy = serve.result(json!("busy"));
    assert_eq!(busy["ok"], false, "{busy}");
    assert_eq!(busy["error"]["code"], "resource_refused", "{busy}");
    assert_eq!(busy["error"]["path"], "/circuit");
    assert_eq!(busy["error"]["resource_error"], "resource_busy");
    let slow = serve.result(json!("slow"));
    let token = circuit["$resource"].as_str().unwrap();
    assert_eq!(serve_harness::text_of(&slow), format!("\"used {token}\""));
    serve_harness::assert_lines_follow_the_schema(&serve.seen);
    serve.close_input().unwrap();
}

#[test]
fn serve_runs_operation_discovery_when_its_flag_turns_it_on() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dir = resource_extension(root.path(), "circuits", "");
    let mut options = octet_host::serve::ServeOptions::new(workspace.path())
        .no_global_extensions()
        .extension_dir(dir);
    options.features.resource_refs = true;
    options.features.operation_discovery = true;
    let mut serve = Serve::start(options, vec![workspace, root]);
    serve.start_extension("circuits");
    serve.send(
        json!({"op": "call", "call_id": "m", "extension": "circuits", "tool": "make",
                      "arguments": {}}),
    );
    let circuit = serve.result(json!("m"))["output"]["structured_content"]["circuit"].clone();
    let page = serve.request(json!({"id": 9, "op": "get_applicable_operations",
                                    "arguments": {"resource": circuit, "limit": 1}}));
    assert_eq!(page["ok"], true, "{page}");
    assert_eq!(page["operations"][0]["operation_id"], "circuit.inspect");
    assert!(page["next_cursor"].is_string());
    let bad = serve.request(json!({"id": 10, "op": "get_applicable_operations",
                                   "arguments": {"resource": circuit, "limit": 99}}));
    assert_eq!(bad["error"]["code"], "discovery_refused");
    assert_eq!(bad["error"]["reason"], "invalid_arguments");
    serve_harness::assert_lines_follow_the_schema(&serve.seen);
    serve.close_input().unwrap();
}
