//! The binary's harness: a temporary workspace, running the binary with a deadline,
//! and reading what it printed.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::support::{octet_binary, sdk_extension};

/// Generous: the binary spawns real children on a loaded machine.
pub(crate) const RUN_TIMEOUT: Duration = Duration::from_secs(120);

/// The test-extension fixture's declared contributions.
pub(crate) const TEST_EXTENSION: &str =
    "tools = [\"echo\", \"sleep\", \"progress\", \"confirm\", \"ask\", \
     \"notify\", \"crash\", \"big\", \"fail\", \"panic\", \"env\", \"events\"]\n\
     commands = [\"fixture\"]\nhooks = [\"before_prompt\"]\ncontext = true\nui = [\"status\"]";

/// A temporary workspace plus an extensions root.
pub(crate) struct World {
    pub(crate) dir: tempfile::TempDir,
}

impl World {
    pub(crate) fn new() -> World {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("workspace")).unwrap();
        World { dir }
    }

    pub(crate) fn workspace(&self) -> PathBuf {
        self.dir.path().join("workspace")
    }

    pub(crate) fn extensions(&self) -> PathBuf {
        self.dir.path().join("extensions")
    }

    /// The test-extension fixture on API 0.4, as an explicit directory.
    pub(crate) fn test_extension(&self) -> PathBuf {
        sdk_extension(
            &self.extensions(),
            "test-extension",
            "0.4",
            "test-extension",
            TEST_EXTENSION,
        )
    }

    /// Runs the binary with [`World::args`] in the workspace and waits for it.
    pub(crate) fn run(&self, dirs: &[PathBuf], args: &[&str]) -> Output {
        run(&self.args(dirs, args), &self.workspace())
    }

    /// `--workspace W --no-global --extension-dir D..` followed by `args`.
    pub(crate) fn args(&self, dirs: &[PathBuf], args: &[&str]) -> Vec<String> {
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

/// The binary with `args` in `cwd`, its stdout and stderr piped.
pub(crate) fn command(args: &[String], cwd: &Path) -> Command {
    let mut command = Command::new(octet_binary());
    command
        .args(args)
        .current_dir(cwd)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

/// Waits for `child` at most [`RUN_TIMEOUT`], killing it when it takes longer.
pub(crate) fn wait(child: Child) -> Output {
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
pub(crate) fn run_with_stdin(args: &[String], cwd: &Path, stdin: &str) -> Output {
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
pub(crate) fn run(args: &[String], cwd: &Path) -> Output {
    wait(command(args, cwd).stdin(Stdio::null()).spawn().unwrap())
}

/// What the binary wrote on stdout.
pub(crate) fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// What the binary wrote on stderr.
pub(crate) fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Asserts that `output` exited with `code` and that its stderr says `says`.
pub(crate) fn assert_exit(output: &Output, code: i32, says: &str) {
    let stderr = stderr(output);
    assert_eq!(output.status.code(), Some(code), "{stderr}");
    assert!(stderr.contains(says), "{stderr}");
}

/// Stdout read as one JSON document.
pub(crate) fn json_stdout(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("stdout is not one JSON document ({e}): {}", stdout(output)))
}

/// `args` as owned strings.
pub(crate) fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|a| a.to_string()).collect()
}
