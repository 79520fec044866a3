//! What a newcomer hits first, through the real binary: an unknown extension shows the
//! directory problem behind it, a menu that is not declared says how to declare one,
//! `status` with nothing discovered says where it looked, and an unknown hook gets a
//! "did you mean", `inspect` shows an API 0.3 contract, and a subcommand's help lists
//! only the global options it reads.

mod support;

use std::path::Path;
use std::process::{Command, Output, Stdio};

/// `octet-host --workspace WORKSPACE --no-global [--extension-dir DIR] ARGS..`.
fn octet(workspace: &Path, dir: Option<&Path>, args: &[&str]) -> Output {
    let mut command = Command::new(support::octet_binary());
    command.arg("--workspace").arg(workspace).arg("--no-global");
    if let Some(dir) = dir {
        command.arg("--extension-dir").arg(dir);
    }
    command.args(args).stdin(Stdio::null()).output().unwrap()
}

#[test]
fn an_unknown_extension_shows_the_directory_discovery_could_not_read() {
    let cwd = tempfile::tempdir().unwrap();
    let output = Command::new(support::octet_binary())
        .current_dir(cwd.path())
        .args(["--no-global", "--extension-dir", "./nope", "call", "x", "y"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("no extension named `x` was discovered"),
        "{stderr}"
    );
    assert!(stderr.contains("./nope"), "{stderr}");
    assert!(stderr.contains("No such file or directory"), "{stderr}");
}

#[test]
fn a_menu_that_is_not_declared_is_a_usage_error_with_the_fix() {
    let root = tempfile::tempdir().unwrap();
    let dir = support::peer_extension(root.path(), "plain", "0.2", &["good"], &["echo"]);
    let output = octet(root.path(), Some(&dir), &["menu", "plain"]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("`plain` declares no menu"), "{stderr}");
    assert!(stderr.contains("menu = true"), "{stderr}");
}

#[test]
fn status_with_nothing_discovered_says_where_it_looked() {
    let workspace = tempfile::tempdir().unwrap();
    let output = octet(workspace.path(), None, &["status"]);
    assert_eq!(output.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("nothing was discovered"), "{stdout}");
    let project = workspace.path().join(".octet/extensions");
    assert!(stdout.contains(&project.display().to_string()), "{stdout}");
}

#[test]
fn an_unknown_hook_gets_did_you_mean() {
    let root = tempfile::tempdir().unwrap();
    let dir = support::peer_extension(root.path(), "plain", "0.2", &["good"], &["echo"]);
    let output = octet(root.path(), Some(&dir), &["hook", "plain", "befor_prompt"]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("did you mean `before_prompt`?"), "{stderr}");
}

#[test]
fn inspect_shows_the_api_0_3_contract_it_selected() {
    let root = tempfile::tempdir().unwrap();
    let dir = support::peer03_extension(root.path(), "p03", "good", &["echo"], "");
    let output = octet(root.path(), Some(&dir), &["--json", "inspect", "p03"]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let document: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let contract = &document["contract"];
    assert_eq!(
        contract["capabilities"],
        serde_json::json!(["content_parts", "core", "request_cancellation", "tool_call"]),
        "{document}"
    );
    assert!(contract["methods"]
        .as_array()
        .unwrap()
        .contains(&serde_json::json!("tool/call")));
}

/// The option lines of a help text: every `--name` that starts a line.
fn help_options(output: &Output) -> Vec<String> {
    assert!(output.status.success(), "{output:?}");
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| {
            let word = line
                .trim_start()
                .split([' ', ','])
                .find(|w| w.starts_with("--"))?;
            line.trim_start().starts_with('-').then(|| word.to_string())
        })
        .collect()
}

#[test]
fn subcommand_help_lists_only_the_global_options_that_apply() {
    let dir = tempfile::tempdir().unwrap();
    let help = |args: &[&str]| help_options(&octet(dir.path(), None, args));
    let serve = help(&["serve", "--help"]);
    assert!(serve.contains(&"--workspace".to_string()), "{serve:?}");
    assert!(serve.contains(&"--no-guardian".to_string()), "{serve:?}");
    // serve refuses --json and never asks a person: neither is offered.
    assert!(!serve.contains(&"--json".to_string()), "{serve:?}");
    assert!(!serve.contains(&"--yes".to_string()), "{serve:?}");
    assert_eq!(help(&["help", "serve"]), serve);
    // discover executes nothing: no confirmation or start options.
    let discover = help(&["discover", "-h"]);
    assert!(discover.contains(&"--json".to_string()), "{discover:?}");
    for absent in ["--yes", "--no-input", "--startup-timeout", "--no-guardian"] {
        assert!(!discover.contains(&absent.to_string()), "{discover:?}");
    }
    // call starts an extension and may be asked to confirm: every option applies.
    let call = help(&["call", "--help"]);
    for present in ["--timeout", "--json", "--yes", "--no-input", "--workspace"] {
        assert!(call.contains(&present.to_string()), "{call:?}");
    }
    assert_eq!(help(&["completions", "--help"]), vec!["--help".to_string()]);
    // The top-level help still lists every global option.
    let top = help(&["--help"]);
    assert!(top.contains(&"--json".to_string()) && top.contains(&"--yes".to_string()));
}
