//! `octet-host check` through the CLI: a well-behaved extension passes every check, and
//! each deliberately broken peer (`tests/fixtures/check_peer.py`, one mode per failing
//! id) fails exactly its check, in the JSON and the human output alike; `new`'s
//! templates pass out of the box.

mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

/// The ids every full run reports, with `--call slow --call echo`.
const IDS: [&str; 14] = [
    "manifest.valid",
    "manifest.entrypoint",
    "manifest.requires_octet",
    "initialize.answers",
    "manifest.unused",
    "call.slow",
    "call.echo",
    "call.concurrency",
    "cancel.cooperates",
    "stdout.hygiene",
    "ids.child",
    "shutdown.ack",
    "shutdown.exit",
    "eof.exit",
];

/// The check peer in `mode`, as extension `peer` under `root`; `extra` adds manifest
/// lines.
fn peer(root: &Path, mode: &str, extra: &str) -> PathBuf {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/check_peer.py");
    let manifest = format!(
        "name = \"peer\"\nversion = \"0.1.0\"\napi_version = \"0.2\"\n{extra}\n\
         [entrypoint]\ncommand = \"python3\"\nargs = [{:?}]\nenv = {{ CHECK_PEER_MODE = {mode:?} }}\n\n\
         [contributes]\ntools = [\"echo\", \"slow\"]\n",
        script.to_string_lossy()
    );
    support::write_manifest(root, "peer", &manifest)
}

/// Runs `octet-host check` over `dir` with `args`, with `--json` when `json`.
fn check_as(dir: &Path, args: &[&str], json: bool) -> Output {
    check_in(dir, &[], args, json)
}

/// Runs `octet-host check` in `dir` with the global options `global` and `args`.
fn check_in(dir: &Path, global: &[&str], args: &[&str], json: bool) -> Output {
    let mut command = Command::new(support::octet_binary());
    command.arg("--no-global").args(global);
    if json {
        command.arg("--json");
    }
    command
        .arg("--extension-dir")
        .arg(dir)
        .arg("check")
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn check(dir: &Path, args: &[&str]) -> Output {
    check_as(dir, args, false)
}

/// Runs check in JSON and human form; returns each id's status (checked to agree).
fn statuses(dir: &Path, args: &[&str]) -> (Option<i32>, BTreeMap<String, String>) {
    let json = check_as(dir, args, true);
    let report: Value = serde_json::from_slice(&json.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&json.stdout)));
    let mut found = BTreeMap::new();
    for check in report["checks"].as_array().unwrap() {
        for member in ["id", "status", "section", "detail", "fix"] {
            assert!(check[member].is_string(), "{check}");
        }
        let id = check["id"].as_str().unwrap().to_string();
        let status = check["status"].as_str().unwrap().to_string();
        assert!(found.insert(id, status).is_none(), "an id twice: {report}");
    }
    assert_eq!(report["extension"], "peer");
    let human = check(dir, args);
    assert_eq!(
        human.status.code(),
        json.status.code(),
        "{}",
        String::from_utf8_lossy(&human.stderr)
    );
    let text = String::from_utf8_lossy(&human.stdout);
    for (id, status) in &found {
        assert!(
            text.lines()
                .any(|l| l.contains(id.as_str()) && l.trim_start().starts_with(status.as_str())),
            "{id} {status} missing from:\n{text}"
        );
    }
    (json.status.code(), found)
}

/// Every id passes except `failing` (with their statuses).
fn expect(dir: &Path, args: &[&str], ids: &[&str], failing: &[(&str, &str)]) {
    let (code, found) = statuses(dir, args);
    let mut expected: BTreeMap<String, String> = ids
        .iter()
        .map(|id| (id.to_string(), "pass".to_string()))
        .collect();
    for (id, status) in failing {
        expected.insert(id.to_string(), status.to_string());
    }
    assert_eq!(found, expected);
    let failed = failing.iter().any(|(_, status)| *status == "fail");
    assert_eq!(code, Some(if failed { 1 } else { 0 }));
}

const CALLS: [&str; 4] = ["--call", "slow", "--call", "echo={\"a\":1}"];

fn args() -> Vec<&'static str> {
    let mut args = vec!["peer"];
    args.extend(CALLS);
    args
}

#[test]
fn a_well_behaved_extension_passes_every_check() {
    let root = tempfile::tempdir().unwrap();
    peer(root.path(), "good", "");
    expect(root.path(), &args(), &IDS, &[]);
}

#[test]
fn each_broken_peer_fails_exactly_its_check() {
    let cases: [(&str, &[(&str, &str)]); 8] = [
        ("junk_stdout", &[("stdout.hygiene", "fail")]),
        ("bad_result", &[("call.echo", "fail")]),
        ("serial", &[("call.concurrency", "fail")]),
        ("ignore_cancel", &[("cancel.cooperates", "fail")]),
        ("no_ack", &[("shutdown.ack", "fail")]),
        ("linger", &[("shutdown.exit", "fail")]),
        ("ignore_eof", &[("eof.exit", "fail")]),
        ("bad_ids", &[("ids.child", "fail")]),
    ];
    for (mode, failing) in cases {
        let root = tempfile::tempdir().unwrap();
        peer(root.path(), mode, "");
        expect(root.path(), &args(), &IDS, failing);
    }
}

/// `failed` fails, the ids in `passed` pass, every other id is skipped.
fn stopped_at(failed: &str, passed: &[&str]) -> Vec<(&'static str, &'static str)> {
    IDS.iter()
        .map(|&id| match id {
            _ if id == failed => (id, "fail"),
            _ if passed.contains(&id) => (id, "pass"),
            _ => (id, "skip"),
        })
        .collect()
}

#[test]
fn a_broken_manifest_or_initialize_stops_the_battery_early() {
    let manifest = [
        "manifest.valid",
        "manifest.entrypoint",
        "manifest.requires_octet",
    ];
    let root = tempfile::tempdir().unwrap();
    peer(root.path(), "bad_initialize", "");
    let mut passed = manifest.to_vec();
    passed.push("eof.exit");
    let failing = stopped_at("initialize.answers", &passed);
    expect(root.path(), &args(), &IDS, &failing);

    let root = tempfile::tempdir().unwrap();
    peer(root.path(), "good", "requires_octet = \">=9.0\"");
    let failing = stopped_at("manifest.requires_octet", &manifest[..2]);
    expect(root.path(), &args(), &IDS, &failing);

    let root = tempfile::tempdir().unwrap();
    support::write_manifest(
        root.path(),
        "peer",
        "name = \"peer\"\nversion = \"0.1.0\"\napi_version = \"0.2\"\n\n\
         [entrypoint]\ncommand = \"./missing.py\"\n\n[contributes]\ntools = [\"echo\"]\n",
    );
    let passed = ["manifest.valid", "manifest.requires_octet"];
    expect(
        root.path(),
        &args(),
        &IDS,
        &stopped_at("manifest.entrypoint", &passed),
    );

    let root = tempfile::tempdir().unwrap();
    support::write_manifest(
        root.path(),
        "peer",
        "name = \"peer\"\nversion = \"0.1.0\"\napi_version = \"0.2\"\nbogus = 1\n\n\
         [entrypoint]\ncommand = \"python3\"\n",
    );
    expect(
        root.path(),
        &args(),
        &IDS,
        &stopped_at("manifest.valid", &[]),
    );
}

/// Each check's id, status and detail in a `--json` report.
fn report(output: &Output) -> BTreeMap<String, (String, String)> {
    let report: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&output.stdout)));
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let text = |m: &str| c[m].as_str().unwrap().to_string();
            (text("id"), (text("status"), text("detail")))
        })
        .collect()
}

#[test]
fn a_relative_workspace_is_the_same_workspace_for_every_check() {
    let root = tempfile::tempdir().unwrap();
    peer(root.path(), "good", "");
    std::fs::create_dir(root.path().join("ws")).unwrap();
    let output = check_in(root.path(), &["--workspace", "ws"], &args(), true);
    let found = report(&output);
    for id in IDS {
        assert_eq!(found[id].0, "pass", "{id}: {:?}", found[id]);
    }
    assert_eq!(output.status.code(), Some(0));
}

#[test]
fn the_order_of_the_calls_does_not_decide_a_verdict() {
    let reversed = ["peer", "--call", "echo={\"a\":1}", "--call", "slow"];
    for (mode, cancel) in [("good", "pass"), ("ignore_cancel", "fail")] {
        let root = tempfile::tempdir().unwrap();
        peer(root.path(), mode, "");
        let (_, first) = statuses(root.path(), &args());
        let (_, second) = statuses(root.path(), &reversed);
        assert_eq!(first, second, "{mode}");
        assert_eq!(second["cancel.cooperates"], cancel, "{mode}");
        // The detail says which call was cancelled, and why that one.
        let output = check_as(root.path(), &reversed, true);
        let detail = &report(&output)["cancel.cooperates"].1;
        match mode {
            "good" => assert!(detail.contains("`slow` (the slowest --call"), "{detail}"),
            _ => assert!(detail.contains("did not settle"), "{detail}"),
        }
    }
}

#[test]
fn a_call_that_never_settles_its_cancellation_fails_cancel_cooperates() {
    let root = tempfile::tempdir().unwrap();
    peer(root.path(), "hang", "");
    let output = check_as(
        root.path(),
        &[
            "peer",
            "--timeout",
            "1s",
            "--call",
            "slow",
            "--call",
            "echo",
        ],
        true,
    );
    let found = report(&output);
    assert_eq!(found["call.slow"].0, "fail", "{found:?}");
    let (status, detail) = &found["cancel.cooperates"];
    assert_eq!(status, "fail", "{found:?}");
    assert!(
        detail.contains("`slow` was cancelled at its 1000 ms deadline")
            && detail.contains("did not settle within 2000 ms"),
        "{detail}"
    );
    assert_eq!(output.status.code(), Some(1));
}

#[test]
fn without_a_slow_call_cancellation_is_skipped_and_a_usage_error_is_2() {
    let root = tempfile::tempdir().unwrap();
    peer(root.path(), "good", "");
    let (code, found) = statuses(root.path(), &["peer", "--call", "echo"]);
    assert_eq!(code, Some(0));
    assert_eq!(found["cancel.cooperates"], "skip");
    let bad = check(root.path(), &["peer", "--call", "echo=[1]"]);
    assert_eq!(bad.status.code(), Some(2));
    let bad = check(root.path(), &["peer", "--api", "9.9"]);
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn every_new_template_passes_check_out_of_the_box() {
    for api in ["0.1", "0.2", "0.4"] {
        let root = tempfile::tempdir().unwrap();
        let made = Command::new(support::octet_binary())
            .args(["new", "hello", "--api", api, "--into"])
            .arg(root.path())
            .output()
            .unwrap();
        assert_eq!(made.status.code(), Some(0));
        let dir = root.path().join("hello");
        let output = check(&dir, &["hello", "--call", "hello={\"name\":\"you\"}"]);
        let text = String::from_utf8_lossy(&output.stdout);
        assert_eq!(output.status.code(), Some(0), "{api}:\n{text}");
        assert!(!text.contains("fail "), "{api}:\n{text}");
    }
}

#[test]
fn the_rust_template_passes_check_out_of_the_box() {
    let root = tempfile::tempdir().unwrap();
    let made = Command::new(support::octet_binary())
        .args(["new", "hello-rs", "--lang", "rust", "--into"])
        .arg(root.path())
        .output()
        .unwrap();
    assert_eq!(made.status.code(), Some(0));
    let dir = root.path().join("hello-rs");
    // A debug build in a target directory kept between runs, put where the manifest
    // expects the release binary: the check is about behaviour, not optimisation.
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("rust-template");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let built = Command::new(cargo)
        .args(["build", "--quiet", "--manifest-path"])
        .arg(dir.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", &target)
        .output()
        .unwrap();
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    std::fs::create_dir_all(dir.join("target/release")).unwrap();
    std::fs::copy(
        target.join("debug/hello-rs"),
        dir.join("target/release/hello-rs"),
    )
    .unwrap();
    let output = check(&dir, &["hello-rs", "--call", "hello_rs={\"name\":\"you\"}"]);
    let text = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{text}");
    assert!(text.contains("Hello, you!"), "{text}");
}
