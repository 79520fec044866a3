//! Resident memory of `octet-host serve` over generation churn (issue 48), printed as it
//! goes. Not a timing: it reads `VmRSS` of the serve process from `/proc`.
//!
//! - `cargo bench --bench memory -- reload [ROUNDS]` (default 1,000): one extension;
//!   each round reloads it and calls a tool whose result is about 1 MiB. Prints the
//!   resident memory every 100 rounds and the growth after the first 100 (the
//!   warm-up).
//! - `cargo bench --bench memory -- soak [SECONDS]` (default 180): three extensions
//!   through serve; each step is one of: a large result, 16 small calls at once, a call
//!   cancelled by its deadline, a reload, a stop and start. Prints the resident memory
//!   every 10 s, then the medians of the middle and last thirds.
//!
//! The extensions are the repository's raw peer (`tests/fixtures/peer.py`, Python 3).
//! Linux only (it reads `/proc`).

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

struct Serve {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
    next_id: u64,
}

impl Serve {
    fn start(workspace: &Path, dirs: &[PathBuf]) -> Serve {
        let mut command = Command::new(env!("CARGO_BIN_EXE_octet-host"));
        command
            .arg("serve")
            .arg("--workspace")
            .arg(workspace)
            .arg("--no-global")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped());
        for dir in dirs {
            command.arg("--extension-dir").arg(dir);
        }
        let mut child = command.spawn().expect("octet-host serve starts");
        let input = child.stdin.take().unwrap();
        let output = BufReader::new(child.stdout.take().unwrap());
        let mut serve = Serve {
            child,
            input,
            output,
            next_id: 0,
        };
        serve.until(|line| line["type"] == "ready");
        serve
    }

    fn send(&mut self, line: Value) {
        let mut text = line.to_string();
        text.push('\n');
        self.input.write_all(text.as_bytes()).unwrap();
        self.input.flush().unwrap();
    }

    fn until(&mut self, wanted: impl Fn(&Value) -> bool) -> Value {
        let mut text = String::new();
        loop {
            text.clear();
            let read = self.output.read_line(&mut text).unwrap();
            assert!(read > 0, "serve ended");
            let line: Value = serde_json::from_str(&text).unwrap();
            if std::env::var_os("OCTET_MEMORY_TRACE").is_some() {
                eprintln!("< {}", &text[..text.len().min(200)].trim_end());
            }
            if wanted(&line) {
                return line;
            }
        }
    }

    /// Sends `op` with a fresh id and waits for its reply.
    fn request(&mut self, mut op: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        op["id"] = json!(id);
        self.send(op);
        self.until(|line| line["type"] == "reply" && line["id"] == id)
    }

    /// Calls `tool` of `extension` with `arguments` (and `deadline_ms`) without waiting;
    /// returns the call id.
    fn call(&mut self, extension: &str, arguments: Value, deadline_ms: Option<u64>) -> String {
        self.next_id += 1;
        let call_id = format!("c{}", self.next_id);
        let tool = format!("echo_{extension}");
        let mut op = json!({"op": "call", "call_id": call_id, "extension": extension,
                            "tool": tool, "arguments": arguments});
        if let Some(ms) = deadline_ms {
            op["timeout_ms"] = json!(ms);
        }
        self.send(op);
        call_id
    }

    fn result(&mut self, call_id: &str) -> Value {
        self.until(|line| line["type"] == "result" && line["call_id"] == call_id)
    }

    fn rss_mib(&self) -> f64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .expect("/proc is readable");
        let kib: f64 = status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .expect("VmRSS");
        kib / 1024.0
    }

    fn close(mut self) {
        self.send(json!({"op": "shutdown", "id": "end"}));
        let _ = self.child.wait();
    }
}

/// The raw peer as extension `name` with an `echo_<name>` tool (tool names are unique
/// across the host).
fn peer(root: &Path, name: &str) -> PathBuf {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/peer.py");
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let manifest = format!(
        "name = {name:?}\nversion = \"0.1.0\"\napi_version = \"0.2\"\n\n\
         [entrypoint]\ncommand = \"python3\"\nargs = [{:?}, \"good\"]\n\
         env = {{ OCTET_PEER_TOOLS = \"echo_{name}\" }}\n\n[contributes]\ntools = [\"echo_{name}\"]\n",
        script.to_string_lossy()
    );
    std::fs::write(dir.join("extension.toml"), manifest).unwrap();
    dir
}

/// A result of about 1 MiB, just under the frame bound.
const LARGE: u64 = 1_000_000;

fn reload(rounds: u64) {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dir = peer(root.path(), "big");
    let mut serve = Serve::start(workspace.path(), &[dir]);
    serve.request(json!({"op": "start", "extension": "big"}));
    let mut warm = None;
    println!("round  rss MiB");
    for round in 1..=rounds {
        serve.request(json!({"op": "reload", "extension": "big"}));
        let call = serve.call("big", json!({ "text_bytes": LARGE }), None);
        let result = serve.result(&call);
        assert_eq!(result["ok"], true, "{result}");
        if round % 100 == 0 {
            std::thread::sleep(Duration::from_millis(300));
            let rss = serve.rss_mib();
            println!("{round:>5}  {rss:.1}");
            warm.get_or_insert(rss);
            if round == rounds {
                println!(
                    "growth after the first 100 rounds: {:+.1} MiB",
                    rss - warm.unwrap()
                );
            }
        }
    }
    serve.close();
}

fn soak(seconds: u64) {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let names = ["a", "b", "c"];
    let dirs: Vec<PathBuf> = names.iter().map(|n| peer(root.path(), n)).collect();
    let mut serve = Serve::start(workspace.path(), &dirs);
    for name in names {
        let started = serve.request(json!({"op": "start", "extension": name}));
        assert_eq!(started["ok"], true, "{started}");
    }
    let start = Instant::now();
    let mut next_sample = Duration::from_secs(10);
    let mut samples = Vec::new();
    let mut step: u64 = 0;
    println!("seconds  rss MiB");
    while start.elapsed() < Duration::from_secs(seconds) {
        step += 1;
        let name = names[(step % 3) as usize];
        if std::env::var_os("OCTET_MEMORY_TRACE").is_some() {
            eprintln!("step {step}: {} on {name}", step % 5);
        }
        match step % 5 {
            0 => {
                let call = serve.call(name, json!({ "text_bytes": LARGE }), None);
                serve.result(&call);
            }
            1 => {
                let mut calls: Vec<String> = (0..16)
                    .map(|n| serve.call(name, json!({ "n": n }), None))
                    .collect();
                // Results come in any order: each is taken off the list as it arrives.
                while !calls.is_empty() {
                    let line = serve.until(|line| line["type"] == "result");
                    calls.retain(|call| line["call_id"] != call.as_str());
                }
            }
            2 => {
                let call = serve.call(name, json!({ "sleep_ms": 200 }), Some(20));
                serve.result(&call);
            }
            3 => {
                serve.request(json!({"op": "reload", "extension": name}));
            }
            _ => {
                serve.request(json!({"op": "stop", "extension": name}));
                let started = serve.request(json!({"op": "start", "extension": name}));
                assert_eq!(started["ok"], true, "{started}");
            }
        }
        if start.elapsed() >= next_sample {
            let rss = serve.rss_mib();
            println!("{:>7}  {rss:.1}", next_sample.as_secs());
            samples.push(rss);
            next_sample += Duration::from_secs(10);
        }
    }
    let third = samples.len() / 3;
    if third > 0 {
        let median = |part: &[f64]| {
            let mut part = part.to_vec();
            part.sort_by(f64::total_cmp);
            part[part.len() / 2]
        };
        let middle = median(&samples[third..2 * third]);
        let last = median(&samples[2 * third..]);
        println!(
            "medians: middle third {middle:.1} MiB, last third {last:.1} MiB ({:+.1}%)",
            (last - middle) / middle * 100.0
        );
    }
    serve.close();
}

fn main() {
    // `cargo bench` passes `--bench`; the mode and its number come after `--`.
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let number = |default: u64| args.get(1).and_then(|n| n.parse().ok()).unwrap_or(default);
    match args.first().map(String::as_str) {
        Some("soak") => soak(number(180)),
        Some("reload") | None => reload(number(1_000)),
        Some(other) => panic!("unknown mode {other:?}: reload [ROUNDS] or soak [SECONDS]"),
    }
}
