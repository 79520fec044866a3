//! The long-running subcommands (`serve`, `menu`) and signals: what the binary does
//! with its children and its stdio while it runs.

use std::io::Write;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::support::{menu_actions_extension, process_alive};
use super::world::{assert_exit, command, json_stdout, stderr, stdout, wait, World, RUN_TIMEOUT};

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
