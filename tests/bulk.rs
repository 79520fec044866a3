//! Immutable bulk objects (section 2.27) against the raw bulk peer
//! (`tests/fixtures/bulk_peer.py`), through the library.

mod support;

use std::time::Duration;

use octet_host::features::bulk::BulkStorage;
use octet_host::host::{CallOptions, ExtensionHandle, ExtensionHost};
use octet_host::negotiation::BulkLimits;
use octet_host::CallError;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use support::*;

struct Fixture {
    _root: tempfile::TempDir,
    _workspace: tempfile::TempDir,
    host: ExtensionHost,
    a: ExtensionHandle,
    b: ExtensionHandle,
}

fn fixture(storage: BulkStorage) -> Fixture {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dirs = [
        bulk_extension(root.path(), "producer"),
        bulk_extension(root.path(), "consumer"),
    ];
    let host = host_builder(workspace.path(), &dirs)
        .tool_namespace(octet_host::host::ToolNamespace::PerExtension)
        .bulk_storage(storage)
        .build()
        .unwrap();
    let a = host.start("producer").unwrap();
    let b = host.start("consumer").unwrap();
    Fixture {
        _root: root,
        _workspace: workspace,
        host,
        a,
        b,
    }
}

fn options() -> CallOptions {
    CallOptions::with_deadline(Duration::from_secs(60))
}

/// `put` with `arguments`: what the peer saw, and the blob it returned.
fn put(ext: &ExtensionHandle, arguments: Value) -> (Value, Option<Value>) {
    let out = ext.call_tool("put", arguments, options()).unwrap();
    let blob = out
        .structured_content
        .as_ref()
        .and_then(|s| s.get("blob"))
        .cloned();
    (serde_json::from_str(&out.text()).unwrap(), blob)
}

fn sha256(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn error_name(answer: &Value) -> &str {
    answer["error"]["message"].as_str().unwrap_or("")
}

#[test]
fn a_blob_passes_from_one_extension_to_another_through_the_host() {
    let f = fixture(BulkStorage::temporary());
    let seen = tool_json(&f.a, "seen", json!({}));
    assert_eq!(seen["profile"], "local-file.v1");
    let transfer = seen["transfer_directory"].as_str().unwrap();
    assert!(std::path::Path::new(transfer).is_absolute());
    assert_eq!(seen["limits"]["object_bytes"], 268_435_456);
    let (saw, blob) = put(&f.a, json!({"data": "hello, bulk"}));
    let blob = blob.unwrap_or_else(|| panic!("no blob: {saw}"));
    assert_eq!(blob["bytes"], 11);
    assert_eq!(
        blob["digest"],
        json!({"algorithm": "sha256", "value": sha256("hello, bulk")})
    );
    assert_eq!(blob["media_type"], "text/plain");
    assert!(saw["write"]["result"]["locator"]
        .as_str()
        .unwrap()
        .starts_with("octet-transfer-"));
    // The consumer gets it in its call's arguments: the host lets it read it.
    let got = tool_json(&f.b, "get", json!({ "blob": blob }));
    assert_eq!(got["data"], "hello, bulk", "{got}");
    assert_eq!(got["release"]["result"], json!({"released": true}));
    // Without the blob in its arguments it may not: knowing the id is not authority.
    let again = tool_json(&f.b, "get_last", json!({}));
    assert_eq!(error_name(&again["read"]), "blob_unavailable", "{again}");
    // The producer reads its own blob without it.
    let own = tool_json(&f.a, "get", json!({ "blob": blob }));
    assert_eq!(own["data"], "hello, bulk");
    // A descriptor with other metadata matches no record.
    let mut other = blob.clone();
    other["media_type"] = json!("image/png");
    let forged = tool_json(&f.b, "get", json!({ "blob": other }));
    assert_eq!(error_name(&forged["read"]), "blob_unavailable");
}

#[test]
fn the_snapshot_is_the_committed_bytes_whatever_the_producer_writes_later() {
    let f = fixture(BulkStorage::temporary());
    let (_, blob) = put(&f.a, json!({"data": "original", "mode": "rewrite"}));
    let got = tool_json(&f.a, "get", json!({ "blob": blob.unwrap() }));
    assert_eq!(got["data"], "original");
}

#[test]
fn a_size_or_digest_mismatch_is_refused_and_spends_the_ticket() {
    let f = fixture(BulkStorage::temporary());
    let (saw, blob) = put(&f.a, json!({"data": "abc", "bytes": 4}));
    assert_eq!(error_name(&saw["commit"]), "size_mismatch", "{saw}");
    assert_eq!(
        saw["commit"]["error"]["data"],
        json!({"code": "size_mismatch"})
    );
    assert!(blob.is_none());
    let (saw, _) = put(&f.a, json!({"data": "abc", "sha256": "0".repeat(64)}));
    assert_eq!(error_name(&saw["commit"]), "integrity_mismatch", "{saw}");
    let (saw, _) = put(&f.a, json!({"data": "abcdef", "capacity": 3}));
    assert_eq!(error_name(&saw["commit"]), "size_mismatch", "{saw}");
    // The ticket is gone after a failed commit.
    let ticket = saw["write"]["result"]["ticket"].clone();
    let reuse = tool_json(
        &f.a,
        "raw",
        json!({"method": "bulk/commit", "params": {
        "ticket": ticket, "bytes": 6,
        "digest": {"algorithm": "sha256", "value": sha256("abcdef")}}}),
    );
    assert_eq!(error_name(&reuse), "blob_unavailable", "{reuse}");
}

#[test]
fn links_are_never_followed_and_paths_are_never_taken() {
    let f = fixture(BulkStorage::temporary());
    let (saw, blob) = put(&f.a, json!({"data": "linked", "mode": "symlink"}));
    assert_eq!(error_name(&saw["commit"]), "blob_unavailable", "{saw}");
    assert!(blob.is_none());
    let (saw, blob) = put(&f.a, json!({"data": "linked", "mode": "hardlink"}));
    assert_eq!(error_name(&saw["commit"]), "blob_unavailable", "{saw}");
    assert!(blob.is_none());
    // A caller path, owner or traversal is no member of the closed params.
    let write = |extra: Value| {
        let mut params = json!({"profile": "local-file.v1", "capacity": 1,
                                "media_type": "text/plain"});
        params
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        tool_json(
            &f.a,
            "raw",
            json!({"method": "bulk/write", "params": params}),
        )
    };
    for extra in [
        json!({"path": "/etc/passwd"}),
        json!({"locator": "../../escape"}),
        json!({"owner": "someone"}),
    ] {
        assert_eq!(
            error_name(&write(extra.clone())),
            "blob_unavailable",
            "{extra}"
        );
    }
    let traversal = tool_json(
        &f.a,
        "raw",
        json!({"method": "bulk/release",
                                                   "params": {"id": "../ticket-1"}}),
    );
    assert_eq!(error_name(&traversal), "blob_unavailable");
    // A ticket of another generation is foreign.
    let (saw, _) = put(&f.a, json!({"data": "x", "bytes": 2}));
    let foreign = tool_json(
        &f.b,
        "raw",
        json!({"method": "bulk/release",
        "params": {"id": saw["write"]["result"]["ticket"]}}),
    );
    assert_eq!(error_name(&foreign), "blob_unavailable");
}

#[test]
fn quotas_bound_tickets_objects_and_owner_bytes() {
    let limits = BulkLimits {
        object_bytes: 64,
        owner_bytes: 100,
        write_tickets_per_generation: 2,
        read_leases_per_generation: 1,
        blobs_per_owner: 3,
    };
    let f = fixture(BulkStorage::temporary().with_limits(limits));
    let write = |capacity: u64| {
        tool_json(
            &f.a,
            "raw",
            json!({"method": "bulk/write", "params": {
            "profile": "local-file.v1", "capacity": capacity, "media_type": "text/plain"}}),
        )
    };
    assert_eq!(error_name(&write(65)), "quota_exceeded");
    let first = write(60);
    assert!(first.get("result").is_some(), "{first}");
    // 60 reserved: 41 more would pass the owner's 100 bytes.
    assert_eq!(error_name(&write(41)), "quota_exceeded");
    let second = write(10);
    assert!(second.get("result").is_some(), "{second}");
    // Two tickets are out: the third is refused.
    assert_eq!(error_name(&write(1)), "quota_exceeded");
    for ticket in [&first, &second] {
        let released = tool_json(
            &f.a,
            "raw",
            json!({"method": "bulk/release",
            "params": {"id": ticket["result"]["ticket"]}}),
        );
        assert_eq!(released["result"], json!({"released": true}));
    }
    // Blobs count against the owner: three, then the fourth write is refused.
    let mut blobs = Vec::new();
    for data in ["one", "two", "six"] {
        blobs.push(put(&f.a, json!({ "data": data })).1.unwrap());
    }
    assert_eq!(error_name(&write(1)), "quota_exceeded");
    // One read lease per generation: a second one waits for the first's release.
    let read = || {
        tool_json(
            &f.a,
            "raw",
            json!({"method": "bulk/read",
            "params": {"profile": "local-file.v1", "blob": blobs[0]}}),
        )
    };
    let lease = read();
    assert!(lease.get("result").is_some(), "{lease}");
    assert_eq!(error_name(&read()), "quota_exceeded");
    let released = tool_json(
        &f.a,
        "raw",
        json!({"method": "bulk/release",
        "params": {"id": lease["result"]["lease"]}}),
    );
    assert_eq!(released["result"], json!({"released": true}));
    assert!(read().get("result").is_some());
}

#[test]
fn only_a_successful_call_publishes_the_blobs_it_returns() {
    let f = fixture(BulkStorage::temporary());
    // A failed call's blob is discarded, and so is one it does not return.
    for arguments in [
        json!({"data": "lost", "fail": true}),
        json!({"data": "lost", "export": false}),
    ] {
        let (saw, _) = put(&f.a, arguments);
        let blob = saw["commit"]["result"].clone();
        let got = tool_json(&f.a, "get", json!({ "blob": blob }));
        assert_eq!(error_name(&got["read"]), "blob_unavailable", "{got}");
    }
    // A BlobRef the host never issued fails the call.
    let forged =
        f.a.call_tool("put", json!({"data": "x", "mode": "forge"}), options());
    match forged {
        Err(CallError::InvalidResult(e)) => assert!(e.to_string().contains("blob"), "{e}"),
        other => panic!("expected an invalid result, got {other:?}"),
    }
    // So does one in a call that committed nothing, which its caller checks.
    let alone =
        f.a.call_tool("put", json!({"data": "x", "mode": "forge_only"}), options());
    match alone {
        Err(CallError::InvalidResult(e)) => assert!(e.to_string().contains("blob"), "{e}"),
        other => panic!("expected an invalid result, got {other:?}"),
    }
}

#[test]
fn an_exported_blob_outlives_its_producers_generation() {
    let f = fixture(BulkStorage::temporary());
    let (_, blob) = put(&f.a, json!({"data": "kept"}));
    let blob = blob.unwrap();
    f.a.reload().unwrap();
    let got = tool_json(&f.b, "get", json!({ "blob": blob }));
    assert_eq!(got["data"], "kept", "{got}");
    // A ticket does not: it died with its generation.
    let (saw, _) = put(&f.a, json!({"data": "x", "bytes": 2}));
    let ticket = saw["write"]["result"]["ticket"].clone();
    f.a.reload().unwrap();
    let gone = tool_json(
        &f.a,
        "raw",
        json!({"method": "bulk/release", "params": {"id": ticket}}),
    );
    assert_eq!(error_name(&gone), "blob_unavailable");
    drop(f.host);
}

#[test]
fn without_storage_bulk_is_neither_offered_nor_served() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dir = bulk_extension(root.path(), "producer");
    let host = host_builder(workspace.path(), &[dir]).build().unwrap();
    let ext = host.start("producer").unwrap();
    assert!(!ext
        .info()
        .negotiated
        .features
        .contains(octet_host::negotiation::Feature::BulkObjectsV1));
    let refused = tool_json(
        &ext,
        "raw",
        json!({"method": "bulk/write", "params": {
        "profile": "local-file.v1", "capacity": 1, "media_type": "text/plain"}}),
    );
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("unsupported_feature"),
        "{refused}"
    );
}

#[test]
fn the_sdk_writes_a_blob_one_example_exports_and_another_reads() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dirs = [
        sdk_extension(
            root.path(),
            "circuits",
            "0.4",
            "circuits",
            r#"tools = ["build_circuit", "simulate", "export_netlist", "scrap"]"#,
        ),
        sdk_extension(
            root.path(),
            "compose",
            "0.4",
            "compose",
            r#"tools = ["survey", "repeat", "read_blob"]"#,
        ),
    ];
    let host = host_builder(workspace.path(), &dirs)
        .resource_refs(true)
        .bulk_storage(BulkStorage::temporary())
        .build()
        .unwrap();
    let circuits = host.start("circuits").unwrap();
    let compose = host.start("compose").unwrap();
    let circuit = circuits
        .call_tool("build_circuit", json!({"gates": 2}), options())
        .unwrap()
        .structured_content
        .unwrap()["circuit"]
        .clone();
    let netlist = circuits
        .call_tool("export_netlist", json!({"circuit": circuit}), options())
        .unwrap()
        .structured_content
        .unwrap()["netlist"]
        .clone();
    assert_eq!(netlist["media_type"], "text/plain");
    let read = compose
        .call_tool("read_blob", json!({"blob": netlist}), options())
        .unwrap()
        .text();
    assert!(read.starts_with("read "), "{read}");
    assert!(read.contains("of 2 gates"), "{read}");
}

#[test]
fn a_durable_store_recovers_a_retained_blob_in_a_later_host_under_a_fresh_id() {
    use octet_host::features::bulk::{BlobRef, BulkError};
    let storage = tempfile::tempdir().unwrap();
    let dir = storage.path().join("bulk");
    let first = fixture(BulkStorage::in_directory(&dir));
    let (_, blob) = put(&first.a, json!({"data": "kept across hosts"}));
    let blob = BlobRef::parse(&blob.unwrap()).unwrap();
    first.host.retain_durable(&blob).unwrap();
    drop(first);
    let later = fixture(BulkStorage::in_directory(&dir));
    // The old id authorizes nothing in the new host.
    let stale = tool_json(&later.b, "get", json!({ "blob": blob.to_value() }));
    assert_eq!(error_name(&stale["read"]), "blob_unavailable");
    let recovered = later.host.recover_durable(&blob).unwrap();
    assert_ne!(recovered.token, blob.token);
    assert_eq!(
        (recovered.bytes, &recovered.sha256),
        (blob.bytes, &blob.sha256)
    );
    let got = tool_json(&later.b, "get", json!({ "blob": recovered.to_value() }));
    assert_eq!(got["data"], "kept across hosts", "{got}");
    // Other metadata recovers nothing.
    let mut other = blob.clone();
    other.media_type = "image/png".into();
    assert!(matches!(
        later.host.recover_durable(&other),
        Err(BulkError::BlobUnavailable(_))
    ));
    // A temporary store refuses durability.
    let temporary = fixture(BulkStorage::temporary());
    let (_, blob) = put(&temporary.a, json!({"data": "fleeting"}));
    let blob = BlobRef::parse(&blob.unwrap()).unwrap();
    assert!(matches!(
        temporary.host.retain_durable(&blob),
        Err(BulkError::StorageUnavailable(_))
    ));
}

#[test]
fn a_diagnostic_may_name_a_blob_the_call_publishes_but_never_publish_one() {
    let f = fixture(BulkStorage::temporary());
    // The blob the result publishes may be attached to its diagnostic.
    let (_, blob) = put(&f.a, json!({"data": "attached", "diagnose": true}));
    assert!(blob.is_some());
    // One it keeps out of its structured content may not: a diagnostic alone
    // publishes nothing.
    let kept = f.a.call_tool(
        "put",
        json!({"data": "hidden", "diagnose": true, "export": false}),
        options(),
    );
    assert!(matches!(kept, Err(CallError::InvalidResult(_))), "{kept:?}");
    let unknown = f.a.call_tool(
        "put",
        json!({"data": "x", "diagnose": "blob-never-made"}),
        options(),
    );
    match unknown {
        Err(CallError::InvalidResult(e)) => assert!(e.to_string().contains("blob"), "{e}"),
        other => panic!("expected an invalid result, got {other:?}"),
    }
}
