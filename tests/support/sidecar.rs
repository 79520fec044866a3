//! `octet-host serve` as a child process, driven line by line.

use std::io::{BufRead, BufReader, Lines, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::octet_binary;

/// How long a sidecar may take to exit.
const EXIT_LIVENESS: Duration = Duration::from_secs(60);

/// A running `octet-host serve` with its pipes.
pub struct Sidecar {
    pub child: Child,
    stdin: Option<ChildStdin>,
    lines: Lines<BufReader<ChildStdout>>,
}

impl Sidecar {
    /// Starts `serve` over `workspace` with explicit extension directories.
    pub fn start(workspace: &Path, dirs: &[PathBuf]) -> Sidecar {
        Sidecar::start_with(workspace, dirs, &[])
    }

    /// [`Sidecar::start`] with extra environment entries for `serve`.
    pub fn start_with(workspace: &Path, dirs: &[PathBuf], env: &[(&str, &Path)]) -> Sidecar {
        Sidecar::start_with_args(workspace, dirs, env, &[])
    }

    /// [`Sidecar::start_with`] with extra global options, such as `--no-guardian`.
    pub fn start_with_args(
        workspace: &Path,
        dirs: &[PathBuf],
        env: &[(&str, &Path)],
        args: &[&str],
    ) -> Sidecar {
        Sidecar::spawn(workspace, dirs, env, args, &[])
    }

    /// [`Sidecar::start`] with options of `serve` itself, such as `--no-prompt-wakeups`.
    pub fn start_with_serve_args(
        workspace: &Path,
        dirs: &[PathBuf],
        serve_args: &[&str],
    ) -> Sidecar {
        Sidecar::spawn(workspace, dirs, &[], &[], serve_args)
    }

    fn spawn(
        workspace: &Path,
        dirs: &[PathBuf],
        env: &[(&str, &Path)],
        args: &[&str],
        serve_args: &[&str],
    ) -> Sidecar {
        let mut command = Command::new(octet_binary());
        command.arg("--workspace").arg(workspace).arg("--no-global");
        command.args(args);
        for dir in dirs {
            command.arg("--extension-dir").arg(dir);
        }
        for (name, value) in env {
            command.env(name, value);
        }
        let mut child = command
            .arg("serve")
            .args(serve_args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut sidecar = Sidecar {
            child,
            stdin,
            lines,
        };
        assert_eq!(sidecar.next().unwrap()["type"], "ready");
        sidecar
    }

    pub fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
    }

    /// The next output line; `None` at the end of the output.
    pub fn next(&mut self) -> Option<Value> {
        let line = self.lines.next()?.unwrap();
        Some(serde_json::from_str(&line).unwrap())
    }

    /// Lines until one matches `wanted`, which is returned.
    pub fn until(&mut self, wanted: impl Fn(&Value) -> bool) -> Value {
        loop {
            let line = self.next().expect("serve ended early");
            if wanted(&line) {
                return line;
            }
        }
    }

    /// Every remaining line, up to the end of the output.
    pub fn rest(&mut self) -> Vec<Value> {
        std::iter::from_fn(|| self.next()).collect()
    }

    pub fn signal(&self, signal: i32) {
        unsafe { libc::kill(self.child.id() as i32, signal) };
    }

    /// The exit code, waiting at most [`EXIT_LIVENESS`].
    pub fn wait(mut self) -> Option<i32> {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            if start.elapsed() > EXIT_LIVENESS {
                let _ = self.child.kill();
                panic!("serve did not exit");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Serve's resident memory, in KiB.
    pub fn rss_kib(&self) -> u64 {
        rss_kib(self.child.id())
    }

    /// Each of serve's threads by name, with its scheduler slice in nanoseconds
    /// (`se.slice` in `/proc/<pid>/task/<tid>/sched`; absent before Linux 6.6).
    pub fn slices(&self) -> Vec<(String, Option<u64>)> {
        let tasks = format!("/proc/{}/task", self.child.id());
        let mut slices = Vec::new();
        for task in std::fs::read_dir(tasks).unwrap().flatten() {
            let read = |file: &str| std::fs::read_to_string(task.path().join(file));
            let (Ok(name), Ok(sched)) = (read("comm"), read("sched")) else {
                continue;
            };
            let slice = sched.lines().find_map(|line| {
                let value = line.strip_prefix("se.slice")?.split(':').nth(1)?;
                value.trim().parse().ok()
            });
            slices.push((name.trim().to_owned(), slice));
        }
        slices
    }

    pub fn threads(&self) -> usize {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        status
            .lines()
            .find_map(|line| line.strip_prefix("Threads:"))
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    }
}

pub fn is_reply(id: i64) -> impl Fn(&Value) -> bool {
    move |line| line["type"] == "reply" && line["id"] == id
}

/// Starts `name` and returns its pid.
pub fn start(sidecar: &mut Sidecar, id: i64, name: &str) -> u32 {
    sidecar.send(&format!(
        r#"{{"id":{id},"op":"start","extension":"{name}"}}"#
    ));
    let started = sidecar.until(is_reply(id));
    assert_eq!(started["ok"], true, "{started}");
    started["pid"].as_u64().unwrap() as u32
}

/// The resident memory of process `pid` in KiB (`VmRSS`), 0 once it is gone.
pub fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}
