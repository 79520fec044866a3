//! Tool composition (section 2.25, `tool_composition_v1`): a live model `tool/call` of
//! the Wave-1 peer (`ask`) composes the tools of the raw peer (`echo`) through the
//! runtime, through the library and serve.

mod support;

use std::path::Path;

use octet_host::host::{CallOptions, ExtensionHandle};
use octet_host::ExtensionHost;
use serde_json::{json, Value};
use support::agents::{ask, code, id};
use support::serve_harness;
use support::*;

/// The raw peer as `target`, with `echo`, `seen` and `sleepy` tools whose arguments
/// follow `schema`.
fn target(root: &Path, schema: &str) -> std::path::PathBuf {
    peer_extension_with(
        root,
        "target",
        "0.4",
        &["good"],
        &["echo", "seen"],
        "",
        &format!("OCTET_PEER_TOOL_SCHEMA = {schema:?}"),
    )
}

struct Composing {
    host: ExtensionHost,
    composer: ExtensionHandle,
    target: ExtensionHandle,
}

/// The directories of one test: extensions, workspace and composition store.
struct Dirs {
    root: tempfile::TempDir,
    workspace: tempfile::TempDir,
    store: tempfile::TempDir,
}

impl Dirs {
    fn new() -> Dirs {
        Dirs {
            root: tempfile::tempdir().unwrap(),
            workspace: tempfile::tempdir().unwrap(),
            store: tempfile::tempdir().unwrap(),
        }
    }

    /// A composing host over these directories, the target's arguments following
    /// `schema`.
    fn host(&self, schema: &str) -> Composing {
        composing(
            self.root.path(),
            self.workspace.path(),
            self.store.path(),
            schema,
        )
    }
}

const ANY: &str = r#"{"type":"object"}"#;

fn composing(root: &Path, workspace: &Path, store: &Path, schema: &str) -> Composing {
    let dirs = [
        services_extension(root, "composer", "0.4", ""),
        target(root, schema),
    ];
    // Both peers have a `seen` tool: the snapshot qualifies the shared name.
    let host = host_builder(workspace, &dirs)
        .tool_namespace(octet_host::host::ToolNamespace::PerExtension)
        .tool_composition(true)
        .composition_store(store)
        .build()
        .unwrap();
    let target = host.start("target").unwrap();
    let composer = host.start("composer").unwrap();
    Composing {
        host,
        composer,
        target,
    }
}

fn call(name: &str, arguments: Value) -> Value {
    json!({"id": id("call"), "method": "composition/call",
           "params": {"name": name, "arguments": arguments}})
}

/// The answers of `requests`, in order.
fn compose(ext: &ExtensionHandle, requests: Vec<Value>) -> Vec<Value> {
    let ids: Vec<String> = requests
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect();
    let answers = ask(ext, Value::Array(requests));
    ids.iter().map(|id| answers[id].clone()).collect()
}

/// The tool names of a `composition/context` result.
fn tool_names(context: &Value) -> Vec<&str> {
    context["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect()
}

fn seen(target: &ExtensionHandle) -> Value {
    let out = target
        .call_tool("seen", json!({}), CallOptions::default())
        .unwrap();
    serde_json::from_str(&out.text()).unwrap()
}

const STRICT: &str = r#"{"type":"object","properties":{"marker":{"type":"string"},"sleep_ms":{"type":"integer"},"answer":{"type":"object"}},"additionalProperties":false}"#;

#[test]
fn a_live_tool_call_reads_the_frozen_context_and_calls_another_extensions_tool() {
    let dirs = Dirs::new();
    let h = dirs.host(STRICT);
    let context = json!({"id": id("ctx"), "method": "composition/context", "params": {}});
    let answers = compose(
        &h.composer,
        vec![
            context,
            call("echo", json!({"marker": "nested"})),
            call("echo", json!({"marker": 7})),
            call("nope", json!({})),
        ],
    );
    let context = &answers[0]["result"];
    let names = tool_names(context);
    for name in ["ask", "answers", "composer/seen", "target/seen", "echo"] {
        assert!(names.contains(&name), "{name} in {names:?}");
    }
    assert_eq!(
        context["limits"],
        json!({"timeout_ms": 30000, "max_calls": 256})
    );
    assert_eq!(context["store"], json!({}));
    // The nested call ran on the target: a schema-less result comes back as its text.
    let value = answers[1]["result"]["value"].as_str().unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(value).unwrap(),
        json!({"marker": "nested"})
    );
    // Invalid arguments never reach the target; an unknown tool is refused.
    assert_eq!(code(&answers[2]), -32602, "{}", answers[2]);
    assert_eq!(code(&answers[3]), -32602, "{}", answers[3]);
    assert_eq!(seen(&h.target)["markers"], json!(["nested"]));
    // Without a live model tool/call as parent nothing composes.
    let orphan = ask(
        &h.composer,
        json!([{"id": id("o"), "method": "composition/context", "params": {},
                "parent": "previous"}]),
    );
    let answer = orphan.as_object().unwrap().values().next().unwrap();
    assert_eq!(code(answer), -32002, "{answer}");
    drop(h.host);
}

#[test]
fn errors_complete_outcomes_and_the_257th_call() {
    let dirs = Dirs::new();
    let h = dirs.host(ANY);
    let failing = json!({"answer": {"content": [{"type": "text", "text": "no such file"}],
                                    "is_error": true}});
    let mut full = call("echo", failing.clone());
    full["params"]["full_outcome"] = json!(true);
    let answers = compose(&h.composer, vec![call("echo", failing), full]);
    assert_eq!(code(&answers[0]), -32002, "{}", answers[0]);
    assert!(answers[0]["error"]["message"]
        .as_str()
        .unwrap()
        .contains("no such file"));
    let outcome = &answers[1]["result"]["value"];
    assert_eq!(outcome["is_error"], true, "{outcome}");
    assert_eq!(outcome["content"][0]["text"], "no such file");
    let nested_id = outcome["tool_call"]["id"].as_str().unwrap();
    assert!(nested_id.ends_with("/2"), "{nested_id}");
    assert_eq!(outcome["tool_call"]["name"], "echo");

    let calls: Vec<Value> = (0..257).map(|n| call("echo", json!({"n": n}))).collect();
    let answers = compose(&h.composer, calls);
    assert!(
        answers[255]["result"]["value"].is_string(),
        "{}",
        answers[255]
    );
    assert_eq!(code(&answers[256]), -32002, "{}", answers[256]);
    assert!(answers[256]["error"]["message"]
        .as_str()
        .unwrap()
        .contains("256"));
}

#[test]
fn complete_outcomes_turn_unknown_tools_and_schema_failures_into_error_outcomes() {
    let dirs = Dirs::new();
    let h = dirs.host(STRICT);
    let full = |name: &str, arguments: Value| {
        let mut request = call(name, arguments);
        request["params"]["full_outcome"] = json!(true);
        request
    };
    let answers = compose(
        &h.composer,
        vec![
            full("nope", json!({})),
            full("echo", json!({"marker": 7})),
            full("echo", json!(["raw"])),
            full("echo", json!({"marker": "reached"})),
        ],
    );
    // Section 2.25: "Unknown tools, schema failures, hooks and policy failures become
    // host-created error outcomes", each with its host-issued nested id.
    for (n, (answer, why)) in answers[..3]
        .iter()
        .zip([
            "not a tool of the frozen snapshot",
            "break its schema",
            "must be an object",
        ])
        .enumerate()
    {
        let outcome = &answer["result"]["value"];
        assert_eq!(outcome["is_error"], true, "{answer}");
        let text = outcome["content"][0]["text"].as_str().unwrap();
        assert!(text.contains(why), "{text}");
        let nested_id = outcome["tool_call"]["id"].as_str().unwrap();
        assert!(nested_id.ends_with(&format!("/{}", n + 1)), "{nested_id}");
    }
    assert_eq!(answers[0]["result"]["value"]["tool_call"]["name"], "nope");
    assert_eq!(
        answers[1]["result"]["value"]["tool_call"]["arguments"],
        json!({"marker": 7})
    );
    assert_eq!(
        answers[3]["result"]["value"]["is_error"], false,
        "{}",
        answers[3]
    );
    // Only the call that met its schema reached the target.
    assert_eq!(seen(&h.target)["markers"], json!(["reached"]));
}

#[test]
fn two_extensions_composing_tools_of_one_name_keep_separate_stores() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let store = tempfile::tempdir().unwrap();
    let dirs = [
        services_extension(root.path(), "left", "0.4", ""),
        services_extension(root.path(), "right", "0.4", ""),
    ];
    let host = host_builder(workspace.path(), &dirs)
        .tool_namespace(octet_host::host::ToolNamespace::PerExtension)
        .tool_composition(true)
        .composition_store(store.path())
        .build()
        .unwrap();
    let left = host.start("left").unwrap();
    let right = host.start("right").unwrap();
    let commit = json!({"id": id("store"), "method": "composition/store",
                        "params": {"set": {"side": "left"}, "delete": []}});
    let answers = compose(&left, vec![commit]);
    assert_eq!(answers[0]["result"], json!({}), "{}", answers[0]);
    let context = || json!({"id": id("ctx"), "method": "composition/context", "params": {}});
    // Both composing tools are named `ask`; only the one that committed sees the write.
    assert_eq!(
        compose(&right, vec![context()])[0]["result"]["store"],
        json!({})
    );
    assert_eq!(
        compose(&left, vec![context()])[0]["result"]["store"],
        json!({"side": "left"})
    );
}

#[test]
fn one_store_commit_per_parent_and_the_store_survives_a_restart() {
    let dirs = Dirs::new();
    let commit = |set: Value| {
        json!({"id": id("store"), "method": "composition/store",
                                     "params": {"set": set, "delete": ["obsolete"]}})
    };
    {
        let h = dirs.host(ANY);
        let answers = compose(
            &h.composer,
            vec![commit(json!({"answer": 42})), commit(json!({"answer": 43}))],
        );
        assert_eq!(answers[0]["result"], json!({}), "{}", answers[0]);
        assert_eq!(code(&answers[1]), -32002, "{}", answers[1]);
        h.host.shutdown();
    }
    let h = dirs.host(ANY);
    let context = json!({"id": id("ctx"), "method": "composition/context", "params": {}});
    let answers = compose(
        &h.composer,
        vec![context, commit(json!({"big": "x".repeat(300 * 1024)}))],
    );
    assert_eq!(answers[0]["result"]["store"], json!({"answer": 42}));
    assert_eq!(code(&answers[1]), -32602, "{}", answers[1]);
}

#[test]
fn settling_the_parent_cancels_its_nested_call_on_the_target() {
    let dirs = Dirs::new();
    let h = dirs.host(ANY);
    let mut slow = call("echo", json!({"wait_cancel": true, "marker": "slow"}));
    slow["wait"] = json!(false);
    let mut queued = call("echo", json!({"marker": "never"}));
    queued["wait"] = json!(false);
    // The parent stays live until the target has the nested call, then answers with
    // both nested calls outstanding.
    let release = dirs.workspace.path().join("release");
    let pause = json!({"pause": release.to_string_lossy()});
    let composer = h.composer.clone();
    let parent = std::thread::spawn(move || ask(&composer, json!([slow, queued, pause])));
    eventually("the target runs the first nested call", || {
        seen(&h.target)["markers"] == json!(["slow"])
    });
    std::fs::write(&release, b"").unwrap();
    parent.join().unwrap();
    eventually("the target is told to cancel the nested call", || {
        seen(&h.target)["cancels"]
            .as_array()
            .is_some_and(|c| !c.is_empty())
    });
    let markers = seen(&h.target)["markers"].clone();
    assert_eq!(markers, json!(["slow"]), "the queued call never started");
}

#[test]
fn an_oversized_value_travels_as_one_sidecar_the_reader_checks() {
    let dirs = Dirs::new();
    let h = dirs.host(ANY);
    // The target's answer fits its frame; with the arguments the complete outcome
    // repeats, the composition answer does not fit the composer's.
    let arguments = json!({"text_bytes": 950_000, "pad": "p".repeat(120_000)});
    let mut nested = call("echo", arguments);
    nested["params"]["full_outcome"] = json!(true);
    nested["sidecar"] = json!(true);
    let answers = compose(&h.composer, vec![nested]);
    let report = &answers[0]["sidecar"];
    assert_eq!(report["member"], "value_file", "{}", answers[0]);
    assert_eq!(report["flat"], true);
    assert_eq!(report["size_ok"], true);
    assert_eq!(report["digest_ok"], true);
    assert_eq!(report["value_len"], 950_000);
}

#[test]
fn updates_relay_the_nested_calls_partial_results_to_its_request() {
    let dirs = Dirs::new();
    let h = dirs.host(ANY);
    let partial = |text: &str| {
        json!({"type": "partial_result",
        "result": {"content": [{"type": "text", "text": text}]}})
    };
    let mut nested = call(
        "echo",
        json!({"progress_events": [partial("half"), partial("most")]}),
    );
    nested["params"]["full_outcome"] = json!(true);
    nested["params"]["updates"] = json!(true);
    let request_id = nested["id"].clone();
    let answers = compose(&h.composer, vec![nested]);
    assert_eq!(
        answers[0]["result"]["value"]["is_error"], false,
        "{}",
        answers[0]
    );
    let out = h
        .composer
        .call_tool("seen", json!({}), CallOptions::default())
        .unwrap();
    let seen: Value = serde_json::from_str(&out.text()).unwrap();
    let updates: Vec<&Value> = seen["notifications"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["method"] == "composition/update")
        .collect();
    assert_eq!(updates.len(), 2, "{seen}");
    assert_eq!(updates[0]["params"]["request_id"], request_id);
    assert_eq!(updates[0]["params"]["sequence"], 1);
    assert_eq!(updates[1]["params"]["result"]["content"][0]["text"], "most");
    // The channel bounds the snapshots waiting for the composer, not their total: a
    // composer that reads them gets every one of a long stream, in order. The target
    // paces its stream (10 ms a snapshot), so the composer's writer keeps up even on
    // a loaded machine: 64 waiting snapshots would take it 640 ms behind.
    let many: Vec<Value> = (1..=100).map(|n| partial(&format!("step {n}"))).collect();
    let mut long = call(
        "echo",
        json!({"progress_events": many, "progress_interval_ms": 10}),
    );
    long["params"]["full_outcome"] = json!(true);
    long["params"]["updates"] = json!(true);
    let long_id = long["id"].clone();
    let answers = compose(&h.composer, vec![long]);
    assert_eq!(answers[0]["result"]["value"]["is_error"], false);
    let out = h
        .composer
        .call_tool("seen", json!({}), CallOptions::default())
        .unwrap();
    let seen: Value = serde_json::from_str(&out.text()).unwrap();
    let sequences: Vec<u64> = seen["notifications"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["method"] == "composition/update" && n["params"]["request_id"] == long_id)
        .map(|n| n["params"]["sequence"].as_u64().unwrap())
        .collect();
    assert_eq!(sequences, (1..=100).collect::<Vec<u64>>());
    // Without updates nothing is relayed; updates without full_outcome is malformed.
    let mut malformed = call("echo", json!({}));
    malformed["params"]["updates"] = json!(true);
    let answers = compose(&h.composer, vec![malformed]);
    assert_eq!(code(&answers[0]), -32602, "{}", answers[0]);
}

#[test]
fn a_composing_sdk_extension_calls_another_extensions_tools_and_keeps_its_store() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let store = tempfile::tempdir().unwrap();
    let dirs = [
        sdk_extension(
            root.path(),
            "compose",
            "0.4",
            "compose",
            "tools = [\"survey\", \"repeat\", \"read_blob\"]",
        ),
        sdk_extension(
            root.path(),
            "hello-world",
            "0.2",
            "hello-world",
            "tools = [\"hello_world\"]\ncommands = [\"hello\"]\nnotifications = true",
        ),
    ];
    let survey = |calls: Value| {
        let host = host_builder(workspace.path(), &dirs)
            .tool_composition(true)
            .composition_store(store.path())
            .build()
            .unwrap();
        host.start("hello-world").unwrap();
        let compose = host.start("compose").unwrap();
        let offered = &compose.info().negotiated.tools[0];
        assert!(
            offered.composition.is_some(),
            "the declaration is sent when offered"
        );
        let out = compose
            .call_tool("survey", json!({ "calls": calls }), CallOptions::default())
            .unwrap();
        host.shutdown();
        out
    };
    let out = survey(json!([{"tool": "hello_world", "arguments": {"name": "nested"}}]));
    assert!(out.text().contains("run 1:"), "{}", out.text());
    assert!(
        out.text().contains("hello_world: Hello, nested!"),
        "{}",
        out.text()
    );
    // The store outlived the host: this is run 2. A failing nested call becomes a
    // typed diagnostic, and the run is not committed.
    let out = survey(json!([{"tool": "hello_world", "arguments": {"wrong": 1}}]));
    assert!(out.text().contains("run 2:"), "{}", out.text());
    let diagnostics = &out.metadata.as_ref().unwrap()["octet_diagnostics_v1"];
    assert_eq!(
        diagnostics[0]["code"], "compose.nested_failed",
        "{diagnostics}"
    );
    assert!(
        out.text().contains("warning[compose.nested_failed]"),
        "{}",
        out.text()
    );
    let out = survey(json!([]));
    assert!(
        out.text().contains("run 2:"),
        "the failed run committed nothing"
    );
}

#[test]
fn serve_offers_composition_to_the_extension_its_start_names() {
    use support::serve_harness::Serve;
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dirs = vec![
        services_extension(root.path(), "composer", "0.4", ""),
        peer_extension(root.path(), "target", "0.4", &["good"], &["echo"]),
    ];
    let mut serve = Serve::over(workspace, root, dirs);
    let plain = serve.request(json!({"id": 1, "op": "start", "extension": "target"}));
    assert!(!plain["features"]
        .as_array()
        .unwrap()
        .contains(&json!("tool_composition_v1")));
    let reply = serve.request(json!({"id": 2, "op": "start", "extension": "composer",
                                     "features": ["tool_composition_v1"]}));
    assert!(
        reply["features"]
            .as_array()
            .unwrap()
            .contains(&json!("tool_composition_v1")),
        "{reply}"
    );
    let bad = serve.request(json!({"id": 3, "op": "start", "extension": "composer",
                                   "features": ["resource_refs_v2"]}));
    assert_eq!(bad["error"]["code"], "invalid_value", "{bad}");
    serve.send(
        json!({"op": "call", "call_id": "c1", "extension": "composer", "tool": "ask",
        "arguments": {"requests": [{"id": "n1", "method": "composition/call",
            "params": {"name": "echo", "arguments": {"via": "serve"}}}]}}),
    );
    let result = serve.result(json!("c1"));
    let answers: Value = serde_json::from_str(serve_harness::text_of(&result)).unwrap();
    let value = answers["n1"]["result"]["value"].as_str().unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(value).unwrap(),
        json!({"via": "serve"})
    );
    serve_harness::assert_lines_follow_the_schema(&serve.seen);
    serve.close_input().unwrap();
}

#[test]
fn the_snapshot_is_frozen_when_the_outer_call_is_admitted() {
    let dirs = Dirs::new();
    let paths = [
        services_extension(dirs.root.path(), "composer", "0.4", ""),
        peer_extension(
            dirs.root.path(),
            "target",
            "0.4",
            &["dynamic"],
            &["echo", "register"],
        ),
    ];
    let host = host_builder(dirs.workspace.path(), &paths)
        .tool_composition(true)
        .composition_store(dirs.store.path())
        .build()
        .unwrap();
    let target = host.start("target").unwrap();
    let composer = host.start("composer").unwrap();
    let names = |composer: &ExtensionHandle| -> Vec<String> {
        let context = json!({"id": id("ctx"), "method": "composition/context", "params": {}});
        let answers = compose(composer, vec![context]);
        tool_names(&answers[0]["result"])
            .into_iter()
            .map(str::to_string)
            .collect()
    };
    let before = names(&composer);
    assert!(!before.contains(&"extra".to_string()), "{before:?}");
    // An outer call admitted before the catalog changes keeps its snapshot.
    let release = dirs.workspace.path().join("release");
    let held = composer.clone();
    let pause = json!({"pause": release.to_string_lossy()});
    let late = json!({"id": "late-ctx", "method": "composition/context", "params": {}});
    let outer = std::thread::spawn(move || ask(&held, json!([pause, late])));
    // Give the outer call time to be admitted (it waits for the file either way).
    eventually("the outer call is in flight", || {
        host.status()
            .iter()
            .any(|s| s.extension == "composer" && s.pending > 0)
    });
    let registered = target
        .call_tool(
            "register",
            json!({"tools": [{"name": "extra", "description": "Added",
                              "parameters": {"type": "object"}}]}),
            CallOptions::default(),
        )
        .unwrap();
    assert!(
        registered.text().contains("revision"),
        "{}",
        registered.text()
    );
    std::fs::write(&release, b"").unwrap();
    let answers = outer.join().unwrap();
    let frozen = tool_names(&answers["late-ctx"]["result"]);
    assert!(
        !frozen.contains(&"extra"),
        "frozen at admission: {frozen:?}"
    );
    // The next outer call sees the new catalog.
    assert!(names(&composer).contains(&"extra".to_string()));
}

#[test]
fn a_frozen_registry_does_not_keep_a_dead_generations_catalog() {
    let dirs = Dirs::new();
    let h = dirs.host(ANY);
    let context = || json!({"id": id("ctx"), "method": "composition/context", "params": {}});
    let answers = compose(&h.composer, vec![context()]);
    assert!(tool_names(&answers[0]["result"]).contains(&"target/seen"));
    assert_eq!(h.host.tables().frozen_catalogs, 2, "composer and target");
    h.target.reload().unwrap();
    eventually("the replaced generation is gone", || {
        h.host.tables().generations == 2
    });
    assert_eq!(h.host.tables().frozen_catalogs, 0);
    // The next composition freezes the catalogs of the generations that run now.
    let answers = compose(&h.composer, vec![context()]);
    assert!(tool_names(&answers[0]["result"]).contains(&"target/seen"));
    assert_eq!(h.host.tables().frozen_catalogs, 2);
}

#[test]
fn the_embedder_chooses_the_composition_deadline_on_the_builder_and_the_command_line() {
    // On the builder: a 300 ms deadline is told to the parent and ends its nested calls.
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dirs = [
        services_extension(root.path(), "composer", "0.4", ""),
        // Only `echo`: the command line keeps one namespace, where `seen` would clash.
        peer_extension_with(
            root.path(),
            "target",
            "0.4",
            &["good"],
            &["echo"],
            "",
            &format!("OCTET_PEER_TOOL_SCHEMA = {STRICT:?}"),
        ),
    ];
    let host = host_builder(workspace.path(), &dirs)
        .tool_composition(true)
        .composition_timeout(std::time::Duration::from_millis(300))
        .build()
        .unwrap();
    let _target = host.start("target").unwrap();
    let composer = host.start("composer").unwrap();
    let context = json!({"id": id("ctx"), "method": "composition/context", "params": {}});
    let answers = compose(
        &composer,
        vec![
            context,
            call("echo", json!({"sleep_ms": 900})),
            call("echo", json!({"marker": "late"})),
        ],
    );
    assert_eq!(
        answers[0]["result"]["limits"],
        json!({"timeout_ms": 300, "max_calls": 256})
    );
    let late = &answers[2];
    assert!(
        late["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("300 ms composition deadline passed")),
        "{late}"
    );
    drop(host);

    // On the command line: `--composition-timeout` reaches the same deadline.
    let run = |timeout: &str| {
        std::process::Command::new(support::octet_binary())
            .arg("--no-global")
            .arg("--workspace")
            .arg(workspace.path())
            .args(dirs.iter().flat_map(|d| [Path::new("--extension-dir"), d]))
            .args(["--tool-composition", "--composition-timeout", timeout])
            .args(["call", "composer", "ask"])
            .arg(
                json!({"requests": [{"id": "ctx", "method": "composition/context",
                                     "params": {}}]})
                .to_string(),
            )
            .output()
            .unwrap()
    };
    let out = run("2.5");
    assert!(out.status.success(), "{out:?}");
    let answers: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answers["ctx"]["result"]["limits"]["timeout_ms"], 2500);
    // A deadline outside its bounds is refused before anything starts.
    let out = run("601");
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("0.1 to 600 seconds"), "{stderr}");
}
