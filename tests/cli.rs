//! The `octet-host` binary, run as a person or a script would run it.

mod support;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use support::{menu_actions_extension, octet_binary, process_alive, sdk_extension, write_manifest};

/// Generous: the binary spawns real children on a loaded machine.
const RUN_TIMEOUT: Duration = Duration::from_secs(120);

/// The test-extension fixture's declared contributions.
const TEST_EXTENSION: &str = "tools = [\"echo\", \"sleep\", \"progress\", \"confirm\", \"ask\", \
     \"notify\", \"crash\", \"big\", \"fail\", \"panic\", \"env\", \"events\"]\n\
     commands = [\"fixture\"]\nhooks = [\"before_prompt\"]\ncontext = true\nui = [\"status\"]";

/// A temporary workspace plus an extensions root.
struct World {
    dir: tempfile::TempDir,
}

impl World {
    fn new() -> World {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("workspace")).unwrap();
        World { dir }
    }

    fn workspace(&self) -> PathBuf {
        self.dir.path().join("workspace")
    }

    fn extensions(&self) -> PathBuf {
        self.dir.path().join("extensions")
    }

    /// The test-extension fixture on API 0.4, as an explicit directory.
    fn test_extension(&self) -> PathBuf {
        sdk_extension(
            &self.extensions(),
            "test-extension",
            "0.4",
            "test-extension",
            TEST_EXTENSION,
        )
    }

    /// Runs the binary with [`World::args`] in the workspace and waits for it.
    fn run(&self, dirs: &[PathBuf], args: &[&str]) -> Output {
        run(&self.args(dirs, args), &self.workspace())
    }

    /// `--workspace W --no-global --extension-dir D..` followed by `args`.
    fn args(&self, dirs: &[PathBuf], args: &[&str]) -> Vec<String> {
        let mut all = vec![
            "--workspace".to_owned(),
            self.workspace().to_string_lossy().into_owned(),
            "--no-global".to_owned(),
        ];
        for dir in dirs {
            all.push("--extension-dir".to_owned());
            all.push(dir.to_string_lossy().into_owned());
        }
        all.extend(args.iter().map(|a| a.to_string()));
        all
    }
}

fn command(args: &[String], cwd: &Path) -> Command {
    let mut command = Command::new(octet_binary());
    command
        .args(args)
        .current_dir(cwd)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

/// Waits for `child` at most [`RUN_TIMEOUT`], killing it when it takes longer.
fn wait(child: Child) -> Output {
    let pid = child.id();
    let (tx, rx) = crossbeam_channel::bounded(1);
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(RUN_TIMEOUT) {
        Ok(output) => output.unwrap(),
        Err(_) => {
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
            panic!("octet-host did not finish within {RUN_TIMEOUT:?}");
        }
    }
}

/// Runs the binary with `args` in `cwd`, feeding `stdin`.
fn run_with_stdin(args: &[String], cwd: &Path, stdin: &str) -> Output {
    let mut child = command(args, cwd).stdin(Stdio::piped()).spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    wait(child)
}

/// Runs the binary with `args` in `cwd`.
fn run(args: &[String], cwd: &Path) -> Output {
    wait(command(args, cwd).stdin(Stdio::null()).spawn().unwrap())
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Asserts that `output` exited with `code` and that its stderr says `says`.
fn assert_exit(output: &Output, code: i32, says: &str) {
    let stderr = stderr(output);
    assert_eq!(output.status.code(), Some(code), "{stderr}");
    assert!(stderr.contains(says), "{stderr}");
}

fn json_stdout(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("stdout is not one JSON document ({e}): {}", stdout(output)))
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|a| a.to_string()).collect()
}

#[test]
fn demo_runs_the_whole_flow_and_leaves_no_process() {
    let cwd = tempfile::tempdir().unwrap();
    let output = run(&strings(&["demo"]), cwd.path());
    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(0), "{text}\n{}", stderr(&output));
    let has_line = |needles: &[&str]| {
        text.lines()
            .any(|line| needles.iter().all(|needle| line.contains(needle)))
    };
    assert!(has_line(&["Discovery"]), "{text}");
    assert!(has_line(&["8 extensions found"]), "{text}");
    assert!(has_line(&["invalid_manifest", "broken-example"]), "{text}");
    assert!(has_line(&["initialize", "0.1"]), "{text}");
    assert!(has_line(&["initialize", "0.4"]), "{text}");
    assert!(has_line(&["api_version", "0.1"]), "{text}");
    assert!(has_line(&["api_version", "0.4"]), "{text}");
    assert!(has_line(&["← Hello, octet!"]), "{text}");
    assert!(has_line(&["tool/call git-status git_status"]), "{text}");
    assert!(has_line(&["tool/render git-status"]), "{text}");
    assert!(
        has_line(&["command/execute checkpoint", "release-v2"]),
        "{text}"
    );
    assert!(has_line(&["Checkpoint preview · release-v2"]), "{text}");
    assert!(has_line(&["hook/run checkpoint before_prompt"]), "{text}");
    assert!(has_line(&["disposition: continue"]), "{text}");
    assert!(has_line(&["context/collect checkpoint"]), "{text}");
    assert!(
        has_line(&["The last checkpoint preview was `release-v2`."]),
        "{text}"
    );
    assert!(has_line(&["status/collect git-status"]), "{text}");
    assert!(
        has_line(&["[success] Hello: hello_world greeted octet"]),
        "{text}"
    );
    // Section 5: the crashed fixture is restarted as generation 2 and answers; the
    // reload negotiates hello-world#2 first, then drains generation 1. Then the host
    // services of showcase: artifact, dynamic tool, presentation, policy.
    let later: &[&[&str]] = &[
        &["Supervision: crash and restart"],
        &["tool/call test-extension crash", "exits the process"],
        &["failed as expected", "connection lost"],
        &["test-extension#2 ready", "after the crash"],
        &["restart attempts  1 of 8"],
        &["generation 1 (pid", "is gone"],
        &[r#"← {"after":"restart"}"#],
        &["Reload (section 5, candidate-first)"],
        &["generation 1 → 2", "candidate"],
        &["order", "hello-world#2 ready → hello-world#1 draining"],
        &["drained and exited"],
        &["← Hello, reloaded!"],
        &["Host services (showcase, API 0.4)"],
        &["features", "artifacts", "policy_intents", "dynamic_tools"],
        &["Published a 1x1 PNG as artifact-"],
        &["[image] artifact-", "image/png"],
        &["structured_content", "output_schema"],
        &[r#""presentation_revision": 1"#],
        &["tools/register answered: catalog revision 1", "stamp"],
        &["← stamped: registered at run time"],
        &["showcase#1 presentation revision 1", "owner: session"],
        &["activity  snapshot:1", "succeeded", "→ artifact artifact-"],
        &["← decision: deny"],
        // Wave-1 services: the notes example against the demo's bound services.
        &["Wave-1 services (notes, API 0.2)"],
        &["features", "session_entries", "composer", "shortcuts"],
        &["service: shortcut/register notes.save", "inside initialize"],
        &["service: composer/get", "Draft: retry the flaky upload"],
        &["service: session/set_label entry-1", "draft"],
        &["← saved 42 bytes as entry entry-1 (draft) and cleared the composer"],
        &["← the extension's handler ran and sent a notification"],
        // Session and frontend services: the turns example, API 0.4.
        &["Session and frontend services (turns, API 0.4)"],
        &[
            "features",
            "session_control_v1",
            "session_entries",
            "terminal_handoff",
        ],
        &[
            "service: private session/append_entry turn-note",
            "committed",
        ],
        &["← continue; the private entry committed and the grant was revoked"],
        &["service: terminal/acquire", "ceded the terminal"],
        &["service: terminal/release"],
        &["← held the terminal (80x24, grant tty-1) and gave it back"],
        &["← completions: ask /help, ask /history"],
        &["← session demo-session is idle"],
    ];
    for needles in later {
        assert!(has_line(needles), "{needles:?} missing:\n{text}");
    }
    // API 0.3 runs: a demo step passes or fails, and none is ever skipped.
    assert!(has_line(&["API 0.3 (canonical wire)"]), "{text}");
    assert!(
        has_line(&["tool/call hello-canonical hello_canonical"]),
        "{text}"
    );
    assert!(has_line(&["← Hello, canonical!"]), "{text}");
    assert!(!has_line(&["skipped: ["]), "{text}");
    assert!(has_line(&["shutdown"]), "{text}");
    for name in [
        "hello-world#2",
        "git-status#1",
        "checkpoint#1",
        "test-extension#2",
        "showcase#1",
        "notes#1",
        "turns#1",
    ] {
        assert!(has_line(&[name, "acknowledged, not forced"]), "{text}");
    }
    assert!(has_line(&["no child process left"]), "{text}");
    assert!(has_line(&["all passed"]), "{text}");
}

#[test]
fn demo_json_is_one_document_of_steps() {
    let cwd = tempfile::tempdir().unwrap();
    let output = run(&strings(&["demo", "--json"]), cwd.path());
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let document = json_stdout(&output);
    assert_eq!(document["ok"], true, "{document:#}");
    let steps = document["steps"].as_array().unwrap();
    let kinds: Vec<&str> = steps.iter().map(|s| s["step"].as_str().unwrap()).collect();
    for kind in [
        "discover",
        "start",
        "tool_call",
        "tool_render",
        "command",
        "hook",
        "context_collect",
        "status_collect",
        "supervised_start",
        "crash",
        "restart",
        "reload",
        "services_start",
        "snapshot",
        "presentation",
        "policy",
        "api_0_3",
        "host_events",
        "shutdown",
        "processes",
    ] {
        assert!(kinds.contains(&kind), "{kind} missing from {kinds:?}");
    }
    assert!(steps.iter().all(|s| s["ok"] == true), "{document:#}");
    assert!(
        steps.iter().all(|s| s.get("skipped").is_none()),
        "no step is skipped: {document:#}"
    );
    let apis: Vec<&str> = steps
        .iter()
        .filter(|s| s["step"] == "start")
        .map(|s| s["negotiated"]["api_version"].as_str().unwrap())
        .collect();
    assert_eq!(apis, ["0.1", "0.4", "0.4"]);
    let hello = steps
        .iter()
        .find(|s| s["step"] == "tool_call" && s["tool"] == "hello_world")
        .unwrap();
    assert_eq!(hello["output"]["text"], "Hello, octet!");
    let step = |kind: &str| steps.iter().find(|s| s["step"] == kind).unwrap();
    assert_eq!(step("restart")["status"]["generation"], 2);
    assert_eq!(step("restart")["restart_attempts"], 1);
    assert_eq!(step("reload")["to_generation"], 2);
    assert_eq!(step("reload")["old_process_gone"], true);
    let snapshot = &step("snapshot")["output"];
    let artifact_id = &snapshot["structured_content"]["artifact"]["artifact_id"];
    assert_eq!(snapshot["content"][1]["type"], "image");
    assert_eq!(snapshot["content"][1]["mime_type"], "image/png");
    assert_eq!(&snapshot["content"][1]["artifact_id"], artifact_id);
    let stamp = steps
        .iter()
        .find(|s| s["step"] == "tool_call" && s["tool"] == "stamp")
        .unwrap();
    assert_eq!(stamp["output"]["text"], "stamped: registered at run time");
    assert_eq!(step("presentation")["snapshot"]["revision"], 1);
    assert_eq!(step("policy")["decision"], "deny");
    assert_eq!(steps.last().unwrap()["running"], json!([]));
}

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
        .filter(|e| e["type"] == "progress")
        .collect();
    let messages: Vec<&str> = progress
        .iter()
        .map(|e| e["event"]["message"].as_str().unwrap())
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

/// The pids of the live children of `parent`.
fn children_of(parent: u32) -> Vec<u32> {
    let mut children = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // After the parenthesised name: state, then the parent pid.
        let mut fields = stat.rsplit(')').next().unwrap_or("").split_whitespace();
        let ppid = fields.nth(1).and_then(|p| p.parse::<u32>().ok());
        if ppid == Some(parent) && process_alive(pid) {
            children.push(pid);
        }
    }
    children
}

#[test]
fn sigint_shuts_the_extensions_down_and_exits_130() {
    let world = World::new();
    let dirs = [world.test_extension()];
    let child = command(
        &world.args(
            &dirs,
            &["call", "test-extension", "sleep", r#"{"ms":600000}"#],
        ),
        &world.workspace(),
    )
    .stdin(Stdio::null())
    .spawn()
    .unwrap();
    let cli = child.id();
    // Wait (generously) until the extension runs.
    let start = Instant::now();
    let extension = loop {
        if let Some(&pid) = children_of(cli).first() {
            break pid;
        }
        assert!(start.elapsed() < RUN_TIMEOUT, "the extension never started");
        std::thread::sleep(Duration::from_millis(50));
    };
    // Give the call time to be written; the outcome does not depend on it.
    std::thread::sleep(Duration::from_millis(300));
    unsafe { libc::kill(cli as i32, libc::SIGINT) };
    let output = wait(child);
    assert_exit(&output, 130, "interrupted by SIGINT");
    assert!(!process_alive(extension), "extension {extension} survived");
}

#[test]
fn serve_speaks_the_control_protocol_over_the_binarys_stdio() {
    use std::io::BufRead;
    let world = World::new();
    let dirs = [world.test_extension()];
    let mut child = command(&world.args(&dirs, &["serve"]), &world.workspace())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let mut next = || -> Value { serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap() };
    assert_eq!(next()["type"], "ready");
    writeln!(
        stdin,
        "{{\"id\":1,\"op\":\"start\",\"extension\":\"test-extension\"}}"
    )
    .unwrap();
    let started = loop {
        let line = next();
        if line["type"] == "reply" && line["id"] == 1 {
            break line;
        }
    };
    assert_eq!(started["ok"], true, "{started}");
    writeln!(stdin, "not json").unwrap();
    writeln!(
        stdin,
        "{{\"id\":2,\"op\":\"call\",\"extension\":\"test-extension\",\"tool\":\"echo\",\"arguments\":{{\"k\":1}},\"call_id\":\"c1\"}}"
    )
    .unwrap();
    let mut saw_error_reply = false;
    let result = loop {
        let line = next();
        if line["type"] == "reply" && line["ok"] == false {
            saw_error_reply = true;
        }
        if line["type"] == "result" && line["call_id"] == "c1" {
            break line;
        }
    };
    assert!(saw_error_reply, "the bad line got an error reply");
    assert_eq!(result["ok"], true, "{result}");
    // Closing stdin shuts the host down in order; the report is the last line.
    drop(stdin);
    let mut last = Value::Null;
    for line in lines {
        last = serde_json::from_str(&line.unwrap()).unwrap();
    }
    assert_eq!(last["type"], "shutdown");
    assert_eq!(child.wait().unwrap().code(), Some(0));
}

#[test]
fn menu_shows_the_menu_and_runs_an_action_attended() {
    let world = World::new();
    let dir = menu_actions_extension(&world.extensions());
    let dirs = [dir];
    let shown = world.run(&dirs, &["menu", "actions"]);
    assert_eq!(shown.status.code(), Some(0), "{}", stderr(&shown));
    let text = stdout(&shown);
    assert!(
        text.contains("safe  Safe") && text.contains("wipe  Wipe (destructive)"),
        "{text}"
    );
    // Without a terminal nobody can confirm: the action's own question is denied...
    let safe = world.run(&dirs, &["menu", "actions", "safe", "--json"]);
    assert_eq!(safe.status.code(), Some(0), "{}", stderr(&safe));
    let report: Value =
        serde_json::from_str(json_stdout(&safe)["output"]["text"].as_str().unwrap()).unwrap();
    assert_eq!(report["confirmation"], json!({"confirmed": false}));
    // ...and a destructive action is not run at all.
    let wipe = world.run(&dirs, &["menu", "actions", "wipe"]);
    assert_exit(&wipe, 1, "was not confirmed");
    // --yes answers the host's question, and the action's own one is pre-approved.
    let yes = world.run(&dirs, &["menu", "actions", "wipe", "--yes", "--json"]);
    assert_eq!(yes.status.code(), Some(0), "{}", stderr(&yes));
    let report: Value =
        serde_json::from_str(json_stdout(&yes)["output"]["text"].as_str().unwrap()).unwrap();
    assert_eq!(report["confirmation"], json!({"confirmed": true}));
    // --yes also answers an extension's own confirmation.
    let safe_yes = world.run(&dirs, &["menu", "actions", "safe", "--yes", "--json"]);
    let report: Value =
        serde_json::from_str(json_stdout(&safe_yes)["output"]["text"].as_str().unwrap()).unwrap();
    assert_eq!(report["confirmation"], json!({"confirmed": true}));
    let no_input = world.run(&dirs, &["menu", "actions", "wipe", "--no-input"]);
    assert_eq!(no_input.status.code(), Some(1));
    let missing = world.run(&dirs, &["menu", "actions", "nope"]);
    assert_exit(&missing, 2, "ids: safe, wipe");
}

#[test]
fn serve_refuses_the_json_flag_it_would_ignore() {
    let world = World::new();
    let output = world.run(&[], &["serve", "--json"]);
    assert_exit(&output, 2, "--json does not apply");
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
