//! The one-shot subcommands (`discover`, `call`, `command`, `hook`, `status`,
//! `inspect`, `new`) and the arguments they share.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{json, Value};

use super::support::{self, sdk_extension, write_manifest};
use super::world::{assert_exit, json_stdout, run, run_with_stdin, stderr, stdout, strings, World};

#[test]
fn discover_lists_one_entry_and_one_typed_diagnostic() {
    let world = World::new();
    let good = world.test_extension();
    let bad = write_manifest(
        &world.extensions(),
        "bad",
        "name = \"bad\"\nversion = \"0.1.0\"\napi_version = \"0.9\"\n\n[entrypoint]\ncommand = \"x\"\n",
    );
    let output = world.run(&[good.clone(), bad.clone()], &["discover", "--json"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let document = json_stdout(&output);
    let entries = document["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 1, "{document:#}");
    assert_eq!(entries[0]["name"], "test-extension");
    assert_eq!(entries[0]["api_version"], "0.4");
    assert_eq!(entries[0]["source"], "explicit");
    assert_eq!(entries[0]["contributes"]["commands"], json!(["fixture"]));
    let diagnostics = document["diagnostics"].as_array().unwrap();
    assert_eq!(diagnostics.len(), 1, "{document:#}");
    assert_eq!(diagnostics[0]["kind"], "invalid_manifest");
    assert_eq!(diagnostics[0]["field"], "api_version");
    let path = PathBuf::from(diagnostics[0]["path"].as_str().unwrap());
    assert!(path.ends_with("bad/extension.toml"), "{path:?}");

    // The text form names both, and nothing was executed for either.
    let text = world.run(&[good, bad], &["discover"]);
    assert_eq!(text.status.code(), Some(0));
    let text = stdout(&text);
    assert!(
        text.contains("test-extension 0.1.0 (api 0.4, explicit)"),
        "{text}"
    );
    assert!(text.contains("invalid_manifest"), "{text}");
}

#[test]
fn call_prints_the_echoed_arguments() {
    let world = World::new();
    let dirs = [world.test_extension()];
    let output = world.run(
        &dirs,
        &["call", "test-extension", "echo", r#"{"a":[1,2],"b":"x"}"#],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let echoed: Value = serde_json::from_str(stdout(&output).trim()).unwrap();
    assert_eq!(echoed, json!({"a": [1, 2], "b": "x"}));

    // `-` reads the arguments from stdin; --json wraps the output.
    let output = run_with_stdin(
        &world.args(&dirs, &["call", "test-extension", "echo", "-", "--json"]),
        &world.workspace(),
        r#"{"from": "stdin"}"#,
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let document = json_stdout(&output);
    assert_eq!(document["output"]["text"], r#"{"from":"stdin"}"#);
    assert_eq!(document["output"]["is_error"], false);
    assert_eq!(document["output"]["content"][0]["type"], "text");
}

#[test]
fn call_reports_progress_events_in_json() {
    let world = World::new();
    let dirs = [world.test_extension()];
    let output = world.run(
        &dirs,
        &[
            "call",
            "test-extension",
            "progress",
            r#"{"steps":3}"#,
            "--json",
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let document = json_stdout(&output);
    assert_eq!(document["output"]["text"], "progress sent=3");
    let progress: Vec<&Value> = document["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["event"] == "progress")
        .collect();
    let messages: Vec<&str> = progress
        .iter()
        .map(|e| e["progress"]["message"].as_str().unwrap())
        .collect();
    assert_eq!(messages, ["step 1 of 3", "step 2 of 3", "step 3 of 3"]);
}

#[test]
fn call_of_an_unknown_extension_exits_2_with_one_error_line() {
    let world = World::new();
    let dirs = [world.test_extension()];
    let output = world.run(&dirs, &["call", "nope", "echo"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stdout(&output).is_empty(), "{}", stdout(&output));
    let err = stderr(&output);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("error: ") && err.contains("`nope`"),
        "{err}"
    );
    assert!(err.contains("discovered: test-extension"), "{err}");

    let output = world.run(&dirs, &["call", "nope", "echo", "--json"]);
    assert_eq!(output.status.code(), Some(2));
    let document = json_stdout(&output);
    assert_eq!(document["error"]["code"], "start.unknown_extension");
    assert_eq!(document["error"]["exit_code"], 2);
    // serve's error object for the same error, beside the CLI's code.
    assert_eq!(document["error"]["serve_code"], "unknown_extension");
    assert_eq!(document["error"]["discovered"], json!(["test-extension"]));
}

#[test]
fn call_of_an_extension_with_a_broken_manifest_shows_the_diagnostic() {
    let world = World::new();
    let broken = write_manifest(
        &world.extensions(),
        "broken",
        "name = \"broken\"\nversion = \"0.1.0\"\napi_version = \"0.2\"\n",
    );
    for verb in [&["call", "broken", "echo"][..], &["inspect", "broken"][..]] {
        let output = world.run(std::slice::from_ref(&broken), verb);
        assert_eq!(output.status.code(), Some(2), "{verb:?}");
        let err = stderr(&output);
        assert!(
            err.contains("the manifest of `broken` was rejected"),
            "{err}"
        );
        assert!(err.contains("entrypoint"), "{err}");
        assert!(!err.contains("was discovered"), "{err}");
    }
}

#[test]
fn call_failures_exit_1_and_usage_errors_exit_2() {
    let world = World::new();
    let dirs = [world.test_extension()];
    let failing = world.run(
        &dirs,
        &[
            "call",
            "test-extension",
            "fail",
            r#"{"code":-32001,"message":"boom"}"#,
            "--json",
        ],
    );
    assert_eq!(failing.status.code(), Some(1), "{}", stderr(&failing));
    let document = json_stdout(&failing);
    assert_eq!(document["error"]["code"], "call.remote_error");
    assert_eq!(document["error"]["rpc_code"], -32001);

    // A name the manifest does not declare is a usage error, found before anything
    // starts, with the closest declared name.
    let undeclared = world.run(&dirs, &["call", "test-extension", "ecoh"]);
    assert_eq!(undeclared.status.code(), Some(2));
    let err = stderr(&undeclared);
    assert!(
        err.starts_with("error: ") && err.contains("declares no tool `ecoh`; did you mean `echo`?"),
        "{err}"
    );
    let command = world.run(&dirs, &["command", "test-extension", "/fixtrue"]);
    assert_exit(&command, 2, "did you mean `fixture`?");
    let unknown = world.run(&dirs, &["call", "test-extenson", "echo"]);
    assert_exit(&unknown, 2, "did you mean `test-extension`?");

    let bad_json = world.run(&dirs, &["call", "test-extension", "echo", "{", "--json"]);
    assert_eq!(bad_json.status.code(), Some(2));
    assert_eq!(
        json_stdout(&bad_json)["error"]["code"],
        "usage.invalid_json"
    );

    let not_object = world.run(&dirs, &["call", "test-extension", "echo", "[1]"]);
    assert_eq!(not_object.status.code(), Some(2));

    let unknown_flag = run(&strings(&["call", "--bogus"]), &world.workspace());
    assert_exit(&unknown_flag, 2, "error:");
}

#[test]
fn a_deadline_cancels_the_call_and_exits_1() {
    let world = World::new();
    let dirs = [world.test_extension()];
    let output = world.run(
        &dirs,
        &[
            "call",
            "test-extension",
            "sleep",
            r#"{"ms":600000}"#,
            "--timeout",
            "200",
            "--json",
        ],
    );
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let document = json_stdout(&output);
    assert_eq!(document["error"]["code"], "call.deadline_exceeded");
    assert_eq!(document["error"]["rpc_code"], -32800);
    assert_eq!(document["error"]["serve_code"], "deadline_exceeded");
    assert_eq!(document["error"]["after_ms"], 200);
}

#[test]
fn an_error_result_prints_the_output_and_exits_1() {
    // git-status outside a git repository answers an `is_error` result.
    let world = World::new();
    let dir = sdk_extension(
        &world.extensions(),
        "git-status",
        "0.4",
        "git-status",
        "tools = [\"git_status\"]",
    );
    let output = world.run(&[dir], &["call", "git-status", "git_status"]);
    assert_exit(&output, 1, "reported an error result");
    assert!(!stdout(&output).trim().is_empty());
}

#[test]
fn command_runs_with_its_arguments() {
    let world = World::new();
    let dirs = [world.test_extension()];
    let output = world.run(
        &dirs,
        &[
            "command",
            "test-extension",
            "/fixture",
            "a",
            "b",
            "--",
            "-c",
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(text.starts_with("fixture: a b -c\n"), "{text}");
    assert!(
        text.contains("[info] fixture: ran with 3 arguments"),
        "{text}"
    );

    let output = world.run(
        &dirs,
        &["command", "test-extension", "fixture", "x", "--json"],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let document = json_stdout(&output);
    assert_eq!(document["output"]["text"], "fixture: x");
    assert_eq!(document["output"]["notifications"][0]["level"], "info");
}

#[test]
fn hook_builds_the_legacy_payload_and_shows_the_disposition() {
    let world = World::new();
    let dirs = [world.test_extension()];
    let output = world.run(
        &dirs,
        &[
            "hook",
            "test-extension",
            "before_prompt",
            r#"{"prompt":"hello"}"#,
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(text.contains("disposition: continue"), "{text}");
    assert!(text.contains("prompt length 5"), "{text}");

    let output = world.run(
        &dirs,
        &[
            "hook",
            "test-extension",
            "before_prompt",
            r#"{"prompt":"deny it"}"#,
            "--json",
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let document = json_stdout(&output);
    assert_eq!(
        document["output"]["effective_disposition"]["action"],
        "deny"
    );

    let missing = world.run(
        &dirs,
        &["hook", "test-extension", "before_prompt", "--json"],
    );
    assert_eq!(missing.status.code(), Some(2));
    assert_eq!(json_stdout(&missing)["error"]["code"], "usage.hook_payload");
}

#[test]
fn status_json_shows_a_ready_generation() {
    let world = World::new();
    let dirs = [world.test_extension()];
    let output = world.run(&dirs, &["status", "--json"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let document = json_stdout(&output);
    let extensions = document["extensions"].as_array().unwrap();
    assert_eq!(extensions.len(), 1, "{document:#}");
    let status = &extensions[0];
    assert_eq!(status["extension"], "test-extension");
    assert_eq!(status["state"], "ready");
    assert_eq!(status["api_version"], "0.4");
    assert_eq!(status["generation"], 1);
    assert_eq!(status["pending"], 0);
    assert!(status["features"]
        .as_array()
        .unwrap()
        .contains(&json!("request_progress")));
    let pid = status["pid"].as_u64().unwrap() as u32;
    assert!(support::wait_gone(pid, Duration::from_secs(10)));
}

#[test]
fn inspect_prints_the_negotiated_catalog() {
    let world = World::new();
    let dirs = [world.test_extension()];
    let output = world.run(&dirs, &["inspect", "test-extension"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(text.contains("api_version: 0.4"), "{text}");
    assert!(text.contains("request_cancellation"), "{text}");
    assert!(
        text.contains("echo: Return the arguments as JSON text"),
        "{text}"
    );
    assert!(text.contains("/fixture"), "{text}");

    let output = world.run(&dirs, &["inspect", "test-extension", "--json"]);
    let document = json_stdout(&output);
    assert_eq!(document["tools"].as_array().unwrap().len(), 12);
    assert_eq!(document["max_concurrent_requests"], 64);
}

#[test]
fn help_does_not_show_the_hidden_extension_entry_point() {
    let output = run(&strings(&["--help"]), Path::new("."));
    assert_eq!(output.status.code(), Some(0));
    let text = stdout(&output);
    assert!(text.contains("demo") && text.contains("discover"), "{text}");
    assert!(!text.contains("__extension"), "{text}");
}

#[test]
fn durations_take_units() {
    let world = World::new();
    let dirs = [world.test_extension()];
    let output = world.run(
        &dirs,
        &[
            "call",
            "test-extension",
            "sleep",
            r#"{"ms": 60000}"#,
            "--timeout",
            "300ms",
            "--json",
        ],
    );
    assert_eq!(output.status.code(), Some(1));
    let document = json_stdout(&output);
    assert_eq!(
        document["error"]["code"], "call.deadline_exceeded",
        "{document}"
    );
    let bad = world.run(
        &dirs,
        &["call", "test-extension", "echo", "--timeout", "5d"],
    );
    assert_exit(&bad, 2, "ms, s, m or h");
}

#[test]
fn extension_dir_takes_a_manifest_path_or_a_directory_of_extensions() {
    let world = World::new();
    let dir = world.test_extension();
    for path in [
        dir.join("extension.toml"),
        world.extensions(), // holds test-extension/
    ] {
        let output = world.run(std::slice::from_ref(&path), &["discover", "--json"]);
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        let document = json_stdout(&output);
        assert_eq!(
            document["entries"][0]["name"], "test-extension",
            "{path:?}: {document}"
        );
    }
}

#[test]
fn new_scaffolds_an_extension_that_call_runs_at_once() {
    let world = World::new();
    let into = world.dir.path().join("made");
    std::fs::create_dir(&into).unwrap();
    for api in ["0.1", "0.2", "0.4"] {
        let name = format!("hello-{}", api.replace('.', ""));
        let made = run(
            &strings(&[
                "new",
                &name,
                "--api",
                api,
                "--into",
                &into.to_string_lossy(),
            ]),
            &world.workspace(),
        );
        assert_eq!(made.status.code(), Some(0), "{}", stderr(&made));
        let dir = into.join(&name);
        let tool = name.replace('-', "_");
        let called = world.run(&[dir], &["call", &name, &tool, r#"{"name": "you"}"#]);
        assert_eq!(called.status.code(), Some(0), "{api}: {}", stderr(&called));
        assert_eq!(stdout(&called), "Hello, you!\n", "{api}");
    }
    let rust = run(
        &strings(&[
            "new",
            "hello-rs",
            "--lang",
            "rust",
            "--into",
            &into.to_string_lossy(),
        ]),
        &world.workspace(),
    );
    assert_eq!(rust.status.code(), Some(0), "{}", stderr(&rust));
    assert!(into.join("hello-rs/src/main.rs").is_file());
    // No path of this machine in what it wrote: the entrypoint is the release binary
    // beside the manifest, the SDK a path relative to the extension.
    let manifest = std::fs::read_to_string(into.join("hello-rs/extension.toml")).unwrap();
    assert!(
        manifest.contains("command = \"target/release/hello-rs\""),
        "{manifest}"
    );
    let cargo = std::fs::read_to_string(into.join("hello-rs/Cargo.toml")).unwrap();
    for text in [&manifest, &cargo] {
        assert!(!text.contains("= \"/"), "an absolute path: {text}");
    }
    assert!(
        stdout(&rust).contains("cargo build --release"),
        "{}",
        stdout(&rust)
    );
    let again = run(
        &strings(&["new", "hello-rs", "--into", &into.to_string_lossy()]),
        &world.workspace(),
    );
    assert_eq!(again.status.code(), Some(2));
}

/// `--json` prints serve's own encoding: a status is a serve status entry, and the
/// events of a call are serve's event lines, each checked against
/// docs/serve-protocol.schema.json.
#[test]
fn json_output_is_serves_encoding() {
    use octet_host::validate::schema::OutputSchema;
    let world = World::new();
    let dirs = [world.test_extension()];
    let schema = support::serve_harness::schema_document();
    let status_reply =
        OutputSchema::compile(&schema["$defs"]["replies"]["properties"]["status"]).unwrap();
    let output = world.run(&dirs, &["status", "--json"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let document = json_stdout(&output);
    status_reply.validate(&document).unwrap();
    assert_eq!(document["extensions"][0]["restart_attempts"], 0);

    let lines = support::serve_harness::output_schema();
    let output = world.run(
        &dirs,
        &[
            "call",
            "test-extension",
            "progress",
            r#"{"steps":2}"#,
            "--json",
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let events = json_stdout(&output)["events"].as_array().unwrap().clone();
    assert!(
        events.iter().any(|e| e["event"] == "progress"),
        "{events:?}"
    );
    assert!(
        events.iter().any(|e| e["event"] == "tools_changed"),
        "{events:?}"
    );
    for event in &events {
        if let Err(error) = lines.validate(event) {
            panic!("a --json event is not a serve event line: {error}\n{event}");
        }
    }
}
