//! `serve` driven in-process over channels: a harness that writes control lines and
//! reads the output lines, checking every recorded session against the published
//! schema when it ends.

use std::collections::BTreeMap;
use std::io::{self, BufReader, Write};
use std::path::{Path, PathBuf};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};
use octet_host::serve::{self, ServeOptions};
use octet_host::validate::schema::OutputSchema;
use serde_json::{json, Value};

use super::sdk_extension;

pub const LIVENESS: Duration = Duration::from_secs(30);

/// The test-extension's contributions (as in tests/requests.rs, plus its menu).
pub const TEST_EXTENSION_CONTRIBUTES: &str =
    "tools = [\"echo\", \"sleep\", \"progress\", \"confirm\", \"ask\", \
     \"notify\", \"crash\", \"big\", \"fail\", \"panic\", \"env\", \"events\"]\n\
     commands = [\"fixture\"]\nhooks = [\"before_prompt\"]\ncontext = true\nui = [\"status\"]\n\
     tool_renderers = [\"echo\"]\nnotifications = true\nconfirmations = true\nmenu = true\n";

/// The write end of `serve`'s output: complete lines go to a channel.
pub struct LineWriter {
    partial: Vec<u8>,
    lines: Sender<String>,
}

impl Write for LineWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        for &byte in buf {
            if byte == b'\n' {
                let line = String::from_utf8(std::mem::take(&mut self.partial))
                    .expect("serve writes UTF-8");
                let _ = self.lines.send(line);
            } else {
                self.partial.push(byte);
            }
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A running `serve` with its input, its output lines, and every line seen so far.
pub struct Serve {
    pub input: Option<Sender<Vec<u8>>>,
    pub lines: Receiver<String>,
    pub seen: Vec<Value>,
    /// Lines already returned by [`Serve::until`].
    pub taken: Vec<bool>,
    pub thread: Option<JoinHandle<io::Result<i32>>>,
    pub _dirs: Vec<tempfile::TempDir>,
    /// The `op` of every control line sent with an `id`, by that id.
    pub ops: std::sync::Mutex<Vec<(Value, String)>>,
}

/// The test-extension fixture on API 0.4, named `fixture`, under `root`.
pub fn fixture_extension(root: &Path) -> PathBuf {
    sdk_extension(
        root,
        "fixture",
        "0.4",
        "test-extension",
        TEST_EXTENSION_CONTRIBUTES,
    )
}

impl Serve {
    pub fn start(options: ServeOptions, dirs: Vec<tempfile::TempDir>) -> Serve {
        let (input, chunks) = serve::ChannelInput::new();
        let (lines_tx, lines) = crossbeam_channel::unbounded();
        let reader = BufReader::new(chunks);
        let writer = LineWriter {
            partial: Vec::new(),
            lines: lines_tx,
        };
        let thread = std::thread::spawn(move || serve::run(options, reader, writer));
        let mut serve = Serve {
            input: Some(input),
            lines,
            seen: Vec::new(),
            taken: Vec::new(),
            thread: Some(thread),
            _dirs: dirs,
            ops: Default::default(),
        };
        let ready = serve.next();
        assert_eq!(ready["type"], "ready", "{ready}");
        assert_eq!(ready["serve_protocol"], 1);
        serve
    }

    /// `serve` over the SDK test-extension (API 0.4) installed as `fixture`.
    pub fn fixture() -> Serve {
        let root = tempfile::tempdir().unwrap();
        let workspace = tempfile::tempdir().unwrap();
        let dir = fixture_extension(root.path());
        Serve::over(workspace, root, vec![dir])
    }

    pub fn over(
        workspace: tempfile::TempDir,
        root: tempfile::TempDir,
        dirs: Vec<PathBuf>,
    ) -> Serve {
        let mut options = ServeOptions::new(workspace.path()).no_global_extensions();
        for dir in dirs {
            options = options.extension_dir(dir);
        }
        Serve::start(options, vec![workspace, root])
    }

    pub fn send(&self, line: Value) {
        if let (Some(id), Some(op)) = (line.get("id"), line["op"].as_str()) {
            self.ops.lock().unwrap().push((id.clone(), op.to_string()));
        }
        self.send_raw(format!("{line}\n").as_bytes());
    }

    pub fn send_raw(&self, bytes: &[u8]) {
        self.input
            .as_ref()
            .expect("input is open")
            .send(bytes.to_vec())
            .unwrap();
    }

    /// The next output line, which must be one JSON object.
    pub fn next(&mut self) -> Value {
        let Ok(line) = self.lines.recv_timeout(LIVENESS) else {
            panic!("no line within {LIVENESS:?}; seen: {:#?}", self.seen)
        };
        let value: Value =
            serde_json::from_str(&line).unwrap_or_else(|e| panic!("not a JSON line ({e}): {line}"));
        assert!(value.is_object(), "{line}");
        self.seen.push(value.clone());
        self.taken.push(false);
        value
    }

    /// The first line not taken yet that satisfies `matches` (reading more lines as
    /// needed); it is taken, so each line is returned once.
    pub fn until(&mut self, what: &str, matches: impl Fn(&Value) -> bool) -> Value {
        let found = (0..self.seen.len()).find(|&i| !self.taken[i] && matches(&self.seen[i]));
        if let Some(i) = found {
            self.taken[i] = true;
            return self.seen[i].clone();
        }
        let start = Instant::now();
        while start.elapsed() < LIVENESS {
            let line = self.next();
            if matches(&line) {
                *self.taken.last_mut().unwrap() = true;
                return line;
            }
        }
        panic!("no {what} within {LIVENESS:?}; seen: {:#?}", self.seen)
    }

    /// The reply to the control line with `id`.
    pub fn reply(&mut self, id: Value) -> Value {
        self.until(&format!("reply {id}"), |l| {
            l["type"] == "reply" && l["id"] == id
        })
    }

    /// Sends `line` (which carries `id`) and returns its reply.
    pub fn request(&mut self, line: Value) -> Value {
        let id = line["id"].clone();
        self.send(line);
        self.reply(id)
    }

    /// The `result` line of the call `call_id`.
    pub fn result(&mut self, call_id: Value) -> Value {
        self.until(&format!("result {call_id}"), |l| {
            l["type"] == "result" && l["call_id"] == call_id
        })
    }

    /// Starts `extension` and returns its pid.
    pub fn start_extension(&mut self, extension: &str) -> u32 {
        let reply = self.request(
            json!({"id": format!("start-{extension}"), "op": "start", "extension": extension}),
        );
        assert_eq!(reply["ok"], true, "{reply}");
        reply["pid"].as_u64().unwrap() as u32
    }

    /// Closes the input and returns what `run` returned.
    pub fn close_input(&mut self) -> io::Result<i32> {
        self.input = None;
        self.join()
    }

    pub fn join(&mut self) -> io::Result<i32> {
        let thread = self.thread.take().expect("joined once");
        let start = Instant::now();
        while !thread.is_finished() {
            assert!(start.elapsed() < LIVENESS, "serve::run did not return");
            std::thread::sleep(Duration::from_millis(20));
        }
        let result = thread.join().unwrap();
        // Everything serve wrote is in the channel now.
        while let Ok(line) = self.lines.try_recv() {
            let value: Value = serde_json::from_str(&line).unwrap();
            self.seen.push(value);
            self.taken.push(false);
        }
        // Every session recorded here is checked against the published schema.
        assert_lines_follow_the_schema(&self.seen);
        assert_replies_follow_the_schema(&self.seen, &self.ops.lock().unwrap());
        result
    }
}

/// docs/serve-protocol.schema.json, parsed.
pub fn schema_document() -> Value {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/serve-protocol.schema.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The output lines' part of the schema, compiled.
pub fn output_schema() -> OutputSchema {
    let mut schema = schema_document();
    // `$defs` holds the control lines, the reply and output shapes and the service
    // kinds, which no output line refers to; the output lines are the root's `oneOf`.
    schema.as_object_mut().unwrap().remove("$defs");
    OutputSchema::compile(&schema).unwrap()
}

/// Every entry of the schema's `$defs.<group>.properties`, compiled, by name.
fn entry_schemas(group: &str) -> BTreeMap<String, OutputSchema> {
    let schema = schema_document();
    let entries = schema["$defs"][group]["properties"].as_object().unwrap();
    entries
        .iter()
        .map(|(name, entry)| (name.clone(), OutputSchema::compile(entry).unwrap()))
        .collect()
}

/// Checks every line against docs/serve-protocol.schema.json: the output lines, and
/// each successful result's `output` against its op's `$defs.call_outputs` entry.
pub fn assert_lines_follow_the_schema(lines: &[Value]) {
    let schema = output_schema();
    let outputs = entry_schemas("call_outputs");
    for line in lines {
        if let Err(error) = schema.validate(line) {
            panic!("a serve line breaks docs/serve-protocol.schema.json: {error}\n{line}");
        }
        if line["type"] == "result" && line["ok"] == true {
            let op = line["op"].as_str().unwrap();
            let output = outputs.get(op).expect("every call op has an output");
            if let Err(error) = output.validate(&line["output"]) {
                panic!("a `{op}` output breaks $defs.call_outputs: {error}\n{line}");
            }
        }
    }
}

/// Checks each successful reply against its operation's `$defs.replies` entry.
pub fn assert_replies_follow_the_schema(lines: &[Value], ops: &[(Value, String)]) {
    let replies = entry_schemas("replies");
    for line in lines
        .iter()
        .filter(|l| l["type"] == "reply" && l["ok"] == true)
    {
        let Some((_, op)) = ops.iter().rev().find(|(id, _)| *id == line["id"]) else {
            continue;
        };
        if let Some(reply) = replies.get(op) {
            if let Err(error) = reply.validate(line) {
                panic!("a `{op}` reply breaks $defs.replies: {error}\n{line}");
            }
        }
    }
}

pub fn text_of(result: &Value) -> &str {
    result["output"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("a text result expected: {result}"))
}
