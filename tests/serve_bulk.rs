//! Immutable bulk objects (section 2.27) through serve: `--bulk-storage DIR` offers
//! them, and a blob one extension returns is read by another through its call.

mod support;

use serde_json::{json, Value};
use support::serve_harness::{self, Serve};
use support::*;

#[test]
fn serve_passes_a_blob_between_two_extensions_with_bulk_storage() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let storage = tempfile::tempdir().unwrap();
    let mut options = octet_host::serve::ServeOptions::new(workspace.path())
        .no_global_extensions()
        .extension_dir(bulk_extension(root.path(), "producer"))
        .extension_dir(bulk_extension_prefixed(root.path(), "consumer", "c_"));
    options.features.bulk_storage = Some(storage.path().join("bulk"));
    let mut serve = Serve::start(options, vec![workspace, root]);
    let reply = serve.request(json!({"id": 1, "op": "start", "extension": "producer",
                                     "features": ["bulk_objects_v1"]}));
    assert!(
        reply["features"]
            .as_array()
            .unwrap()
            .contains(&json!("bulk_objects_v1")),
        "{reply}"
    );
    serve.start_extension("consumer");
    serve.send(
        json!({"op": "call", "call_id": "put", "extension": "producer", "tool": "put",
                      "arguments": {"data": "through serve"}}),
    );
    let put = serve.result(json!("put"));
    let blob = put["output"]["structured_content"]["blob"].clone();
    assert_eq!(blob["bytes"], 13, "{put}");
    serve.send(
        json!({"op": "call", "call_id": "get", "extension": "consumer", "tool": "c_get",
                      "arguments": {"blob": blob}}),
    );
    let got: Value =
        serde_json::from_str(serve_harness::text_of(&serve.result(json!("get")))).unwrap();
    assert_eq!(got["data"], "through serve", "{got}");
    // The transfer directory is the store's own.
    let transfer = storage.path().join("bulk").join("transfer");
    assert!(transfer.is_dir());
    serve_harness::assert_lines_follow_the_schema(&serve.seen);
    serve.close_input().unwrap();
}

#[test]
fn a_start_asking_for_bulk_objects_without_storage_is_refused() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dirs = vec![bulk_extension(root.path(), "producer")];
    let mut serve = Serve::over(workspace, root, dirs);
    let reply = serve.request(json!({"id": 1, "op": "start", "extension": "producer",
                                     "features": ["bulk_objects_v1"]}));
    assert_eq!(reply["error"]["code"], "invalid_value", "{reply}");
    assert!(reply["error"]["message"]
        .as_str()
        .unwrap()
        .contains("--bulk-storage"));
    serve.close_input().unwrap();
}

#[test]
fn a_start_with_bulk_storage_configures_it_for_that_extension() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let storage = tempfile::tempdir().unwrap();
    let dirs = vec![
        bulk_extension(root.path(), "producer"),
        bulk_extension_prefixed(root.path(), "plain", "p_"),
        bulk_extension_prefixed(root.path(), "other", "o_"),
    ];
    let mut serve = Serve::over(workspace, root, dirs);
    let dir = storage.path().join("bulk");
    let reply = serve.request(json!({"id": 1, "op": "start", "extension": "producer",
                                     "bulk_storage": dir}));
    assert!(
        reply["features"]
            .as_array()
            .unwrap()
            .contains(&json!("bulk_objects_v1")),
        "{reply}"
    );
    assert!(dir.join("transfer").is_dir());
    // Another extension is not offered it unless its start asks.
    let plain = serve.request(json!({"id": 2, "op": "start", "extension": "plain"}));
    assert!(
        !plain["features"]
            .as_array()
            .unwrap()
            .contains(&json!("bulk_objects_v1")),
        "{plain}"
    );
    // A second directory is refused.
    let other = serve.request(json!({"id": 3, "op": "start", "extension": "other",
                                     "bulk_storage": storage.path().join("elsewhere")}));
    assert_eq!(other["error"]["code"], "invalid_value", "{other}");
    assert_eq!(other["error"]["field"], "bulk_storage");
    serve.send(
        json!({"op": "call", "call_id": "put", "extension": "producer", "tool": "put",
                      "arguments": {"data": "configured at start"}}),
    );
    let put = serve.result(json!("put"));
    assert_eq!(
        put["output"]["structured_content"]["blob"]["bytes"], 19,
        "{put}"
    );
    serve.close_input().unwrap();
}
