//! An SDK example extension (`octet-host __extension <name>`) driven over real pipes
//! with hand-written JSON-RPC frames, as a host would.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use crossbeam_channel::{unbounded, Receiver, RecvTimeoutError};
use serde_json::{json, Value};

/// Generous bound for anything that should happen promptly (a loaded 2-core machine).
pub const TIMEOUT: Duration = Duration::from_secs(20);

pub struct Ext {
    child: Child,
    stdin: Option<ChildStdin>,
    frames: Receiver<Value>,
    stderr: Receiver<String>,
}

impl Ext {
    pub fn spawn(name: &str, api_version: &str) -> Ext {
        Ext::spawn_with(name, api_version, &[])
    }

    /// Like [`Ext::spawn`], with more environment variables.
    pub fn spawn_with(name: &str, api_version: &str, env: &[(&str, &Path)]) -> Ext {
        let mut child = Command::new(super::octet_binary())
            .args(["__extension", name])
            .envs(env.iter().copied())
            .env("OCTET_EXTENSION_API_VERSION", api_version)
            .env_remove("RUST_BACKTRACE")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawning octet-host");
        let stdout = child.stdout.take().unwrap();
        let (tx, frames) = unbounded();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let value: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("extension wrote a non-JSON line {line:?}: {e}"));
                if tx.send(value).is_err() {
                    break;
                }
            }
        });
        let mut stderr_pipe = child.stderr.take().unwrap();
        let (err_tx, stderr) = unbounded();
        thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr_pipe.read_to_string(&mut text);
            let _ = err_tx.send(text);
        });
        let stdin = child.stdin.take();
        Ext {
            child,
            stdin,
            frames,
            stderr,
        }
    }

    /// Spawns and initializes; returns the extension and the initialize result.
    pub fn start(name: &str, api_version: &str) -> (Ext, Value) {
        let mut ext = Ext::spawn(name, api_version);
        ext.send(&initialize(api_version, 64));
        let result = ext.result(1);
        (ext, result)
    }

    pub fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    pub fn send(&mut self, frame: &Value) {
        let mut bytes = serde_json::to_vec(frame).unwrap();
        bytes.push(b'\n');
        self.send_raw(&bytes);
    }

    pub fn call(&mut self, id: u64, tool: &str, arguments: Value) {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tool/call",
            "params": {"name": tool, "arguments": arguments,
                "context": {"workspace": ".", "execution_scope": null, "host": {}}}}));
    }

    pub fn next(&self) -> Value {
        match self.frames.recv_timeout(TIMEOUT) {
            Ok(frame) => frame,
            Err(RecvTimeoutError::Timeout) => panic!("no frame within {TIMEOUT:?}"),
            Err(RecvTimeoutError::Disconnected) => panic!("the extension closed stdout"),
        }
    }

    /// The next frame, which must be the response to `id`.
    pub fn response(&self, id: u64) -> Value {
        let frame = self.next();
        assert_eq!(
            frame["id"],
            json!(id),
            "expected the response to {id}: {frame}"
        );
        assert_eq!(frame["jsonrpc"], "2.0");
        frame
    }

    pub fn result(&self, id: u64) -> Value {
        let frame = self.response(id);
        assert!(frame.get("error").is_none(), "{frame}");
        frame["result"].clone()
    }

    pub fn error_code(&self, id: u64) -> i64 {
        let frame = self.response(id);
        frame["error"]["code"]
            .as_i64()
            .unwrap_or_else(|| panic!("not an error: {frame}"))
    }

    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    pub fn wait_exit(&mut self) -> ExitStatus {
        let deadline = Instant::now() + TIMEOUT;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(Instant::now() < deadline, "the extension did not exit");
            thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn stderr_text(&self) -> String {
        self.stderr.recv_timeout(TIMEOUT).unwrap_or_default()
    }
}

impl Drop for Ext {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn initialize(api_version: &str, max_concurrent: u64) -> Value {
    let mut params = json!({
        "api_version": api_version,
        "octet_version": "0.8.0",
        "extension": {"name": "test-extension", "version": "0.1.0",
            "manifest_path": "/x/extension.toml", "source": "explicit"},
        "workspace": ".",
        "capabilities": {"filesystem": "none", "process": false, "network": false},
        "contributes": {},
        "host": {"session_id": null, "session_name": null, "model": "m", "reasoning": null,
            "active_skills": []}
    });
    if api_version != "0.1" {
        params["protocol"] = json!({
            "version": "0.2",
            "required_features": ["request_cancellation", "content_parts"],
            "optional_features": ["request_progress", "artifacts", "lifecycle_events",
                "policy_intents", "dynamic_tools", "runtime_commands"],
            "limits": {"max_concurrent_requests": max_concurrent}
        });
    }
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})
}

pub fn text_of(result: &Value) -> String {
    match &result["content"] {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        other => panic!("unexpected content {other}"),
    }
}
