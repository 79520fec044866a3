//! Tests of `serve` over in-memory pipes, and the scripted host other modules' tests use.

use super::*;
use crate::sdk::{Extension, ToolOutput};
use crossbeam_channel::{unbounded, Receiver};
use parking_lot::Mutex;
use std::io::Cursor;
use std::time::{Duration, Instant};

/// An output the test can read after (or while) `serve` runs.
#[derive(Clone, Default)]
pub(super) struct Captured(pub(super) Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn serve_answers_until_shutdown_and_ignores_what_follows() {
    let input = concat!(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"api_version":"0.1"}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":2,"method":"shutdown","params":{}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":3,"method":"tool/call","params":{"name":"t"}}"#,
        "\n",
    );
    let output = Captured::default();
    let ext = Extension::new().api_version(ApiVersion::V0_1).tool(
        "t",
        "d",
        json!({"type": "object"}),
        |_: Value, _: &Context| Ok(ToolOutput::text("x")),
    );
    ext.serve(Cursor::new(input), output.clone()).unwrap();
    let text = String::from_utf8(output.0.lock().clone()).unwrap();
    let frames: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(frames.len(), 2, "{text}");
    assert_eq!(frames[0]["result"]["api_version"], "0.1");
    assert_eq!(frames[0]["result"]["tools"][0]["name"], "t");
    assert_eq!(frames[1], json!({"jsonrpc": "2.0", "id": 2, "result": {}}));
}

/// The params of an API 0.3 `initialize` with the host's default contract offer, its
/// optional methods being `optional_methods`.
pub(super) fn contract_offer(optional_methods: &[&str]) -> Value {
    json!({
        "api_version": "0.3",
        "workspace": "/w",
        "flag_values": [],
        "contract": {
            "schema": "octet.extension.api/0.3",
            "encoding": "octet-canonical-json-v1",
            "required_capabilities": ["content_parts", "core", "request_cancellation", "tool_call"],
            "optional_capabilities": ["request_progress"],
            "required_methods": ["$/cancelRequest", "initialize", "shutdown", "tool/call"],
            "optional_methods": optional_methods,
            "limits": {"max_frame_bytes": 1048576, "max_concurrent_requests": 64, "max_tools": 256}
        }
    })
}

/// A canonical API 0.3 `initialize` frame with the host's default contract offer.
fn canonical_initialize(id: u64) -> Vec<u8> {
    let params = contract_offer(&["$/progress", "input/request"]);
    Codec::Canonical
        .encode_request(&RequestId::Number(id), "initialize", &params, usize::MAX)
        .unwrap()
}

fn tool_ext() -> Extension {
    Extension::new().tool(
        "t",
        "d",
        json!({"type": "object"}),
        |_: Value, _: &Context| Ok(ToolOutput::text("x")),
    )
}

/// Serves `input` and returns the output lines, each checked to be canonical.
fn serve_canonical(configured: Option<ApiVersion>, input: Vec<u8>) -> Vec<String> {
    let output = Captured::default();
    serve(tool_ext(), configured, Cursor::new(input), output.clone()).unwrap();
    let text = String::from_utf8(output.0.lock().clone()).unwrap();
    let lines: Vec<String> = text.lines().map(str::to_owned).collect();
    for line in &lines {
        decode_canonical(line.as_bytes()).unwrap_or_else(|e| panic!("not canonical: {line}: {e}"));
    }
    lines
}

#[test]
fn api_0_3_answers_every_frame_canonically() {
    let mut input = canonical_initialize(1);
    input.extend_from_slice(
        b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tool/call\",\"params\":{}}\n",
    );
    input.extend_from_slice(
        b"{\"id\":3,\"jsonrpc\":\"2.0\",\"method\":\"hook/run\",\"params\":{}}\n",
    );
    input.extend_from_slice(
        b"{\"id\":4,\"jsonrpc\":\"2.0\",\"method\":\"tool/call\",\"params\":{},\"x\":1}\n",
    );
    input.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"method\":\"$/cancelRequest\"}\n");
    input.extend_from_slice(
        b"{\"id\":5,\"jsonrpc\":\"2.0\",\"method\":\"shutdown\",\"params\":{}}\n",
    );
    let lines = serve_canonical(Some(ApiVersion::V0_3), input);
    assert_eq!(lines.len(), 6, "{lines:#?}");
    let initialize: Value = serde_json::from_str(&lines[0]).unwrap();
    assert_eq!(initialize["id"], 1);
    assert_eq!(
        initialize["result"]["contract"]["methods"],
        json!([
            "$/cancelRequest",
            "initialize",
            "input/request",
            "shutdown",
            "tool/call"
        ])
    );
    assert!(initialize["result"].get("commands").is_none());
    let parse: Value = serde_json::from_str(&lines[1]).unwrap();
    assert_eq!(parse["id"], Value::Null);
    assert_eq!(parse["error"]["code"], codes::PARSE_ERROR);
    assert_eq!(
        lines[2],
        "{\"error\":{\"code\":-32601,\"message\":\"unknown or unnegotiated method\"},\"id\":3,\"jsonrpc\":\"2.0\"}"
    );
    let invalid: Value = serde_json::from_str(&lines[3]).unwrap();
    assert_eq!(invalid["id"], 4);
    assert_eq!(invalid["error"]["code"], codes::INVALID_REQUEST);
    let no_params: Value = serde_json::from_str(&lines[4]).unwrap();
    assert_eq!(no_params["id"], Value::Null);
    assert_eq!(no_params["error"]["code"], codes::INVALID_REQUEST);
    assert_eq!(
        lines[5],
        "{\"id\":5,\"jsonrpc\":\"2.0\",\"result\":{\"terminal\":\"shutdown\"}}"
    );
}

#[test]
fn api_0_3_answers_a_json_rpc_initialize_with_a_parse_error() {
    let input = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"api_version\":\"0.3\"}}\n".to_vec();
    let lines = serve_canonical(Some(ApiVersion::V0_3), input);
    assert_eq!(lines.len(), 1);
    assert!(
        lines[0].starts_with("{\"error\":{\"code\":-32700,"),
        "{}",
        lines[0]
    );
    assert!(
        lines[0].ends_with(",\"id\":null,\"jsonrpc\":\"2.0\"}"),
        "{}",
        lines[0]
    );
}

#[test]
fn an_unconfigured_connection_switches_on_a_canonical_0_3_initialize() {
    let mut input = canonical_initialize(1);
    input.extend_from_slice(
        b"{\"id\":2,\"jsonrpc\":\"2.0\",\"method\":\"shutdown\",\"params\":{}}\n",
    );
    let lines = serve_canonical(None, input);
    assert_eq!(lines.len(), 2, "{lines:#?}");
    assert!(
        lines[0].starts_with("{\"id\":1,\"jsonrpc\":\"2.0\",\"result\":{\"api_version\":\"0.3\",")
    );
    assert_eq!(
        lines[1],
        "{\"id\":2,\"jsonrpc\":\"2.0\",\"result\":{\"terminal\":\"shutdown\"}}"
    );
    // The same initialize written as ordinary JSON-RPC is not canonical: refused.
    let input = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"api_version\":\"0.3\"}}\n".to_vec();
    let lines = serve_canonical(None, input);
    assert_eq!(lines.len(), 1);
    assert!(
        lines[0].starts_with("{\"error\":{\"code\":-32700,"),
        "{}",
        lines[0]
    );
}

/// The extension's stdin: lines the test sends, EOF when the sender is dropped.
struct Script {
    lines: Receiver<Vec<u8>>,
    pending: Vec<u8>,
}

impl Read for Script {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if self.pending.is_empty() {
            match self.lines.recv() {
                Ok(line) => self.pending = line,
                Err(_) => return Ok(0),
            }
        }
        let n = out.len().min(self.pending.len());
        out[..n].copy_from_slice(&self.pending[..n]);
        self.pending.drain(..n);
        Ok(n)
    }
}

/// An extension served on a thread of its own, with the test as its host.
pub(super) struct ScriptedHost {
    script: Sender<Vec<u8>>,
    /// What the extension wrote.
    pub(super) frames: Captured,
    extension: thread::JoinHandle<Result<(), RunError>>,
}

impl ScriptedHost {
    /// Starts serving `ext`.
    pub(super) fn start(ext: Extension) -> ScriptedHost {
        let (script, lines) = unbounded();
        let frames = Captured::default();
        let output = frames.clone();
        let stdin = Script {
            lines,
            pending: Vec::new(),
        };
        let extension = thread::spawn(move || ext.serve(stdin, output));
        ScriptedHost {
            script,
            frames,
            extension,
        }
    }

    /// Sends `frame` as one line.
    pub(super) fn send(&self, frame: Value) {
        let mut line = serde_json::to_vec(&frame).unwrap();
        line.push(b'\n');
        self.send_line(line);
    }

    /// Sends `initialize` on API 0.4 as request 1, offering `optional_features` and at
    /// most four concurrent requests, and returns the answer.
    pub(super) fn initialize(&self, workspace: &str, optional_features: &[&str]) -> Value {
        self.send(
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "api_version": "0.4", "workspace": workspace,
            "protocol": {"version": "0.4",
                "required_features": ["request_cancellation", "content_parts"],
                "optional_features": optional_features,
                "limits": {"max_concurrent_requests": 4}}}}),
        );
        self.frames.answer(1)
    }

    /// Sends `line` as it is.
    pub(super) fn send_line(&self, line: Vec<u8>) {
        self.script.send(line).unwrap();
    }

    /// Sends `shutdown` as request `id`, waits for its answer, and checks that `serve`
    /// then returns without an error once stdin ends.
    pub(super) fn shut_down(self, id: u64) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": "shutdown", "params": {}}));
        self.frames.answer(id);
        drop(self.script);
        self.extension.join().unwrap().unwrap();
    }
}

impl Captured {
    /// Waits (generously) for the first frame `pick` accepts.
    pub(super) fn wait_for(&self, what: &str, pick: impl Fn(&Value) -> bool) -> Value {
        let start = Instant::now();
        loop {
            let text = String::from_utf8(self.0.lock().clone()).unwrap();
            let found = text
                .lines()
                .map(|l| serde_json::from_str::<Value>(l).unwrap())
                .find(|f| pick(f));
            if let Some(frame) = found {
                return frame;
            }
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "no {what}: {text}"
            );
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// Waits for the answer to the request `id`.
    pub(super) fn answer(&self, id: u64) -> Value {
        self.wait_for(&format!("answer {id}"), |f| {
            f["id"] == id && f.get("method").is_none()
        })
    }
}

#[test]
fn a_handler_reads_the_context_the_request_carried() {
    let ext = Extension::new().tool(
        "where",
        "d",
        json!({"type": "object"}),
        |_: Value, cx: &Context| {
            let owner = cx.resource_owner().map(|o| o.process_generation);
            Ok(ToolOutput::text(
                json!({"workspace": cx.workspace(), "generation": owner,
                    "host": cx.host(), "raw": cx.raw_context()})
                .to_string(),
            ))
        },
    );
    let host = ScriptedHost::start(ext);
    host.initialize("/initial", &[]);
    let context = json!({"workspace": "/w", "execution_scope": null,
        "host": {"model": "m"},
        "resource_owner": {"extension_instance_id": "i", "process_generation": 3,
            "session_id": "s"}});
    // What the handler saw, from its answer to the request `id`.
    let seen = |id: u64| {
        let answer = host.frames.answer(id);
        let text = answer["result"]["content"][0]["text"].as_str().unwrap();
        serde_json::from_str::<Value>(text).unwrap()
    };
    let call = |id: u64, context: Option<&Value>| {
        let mut params = json!({"name": "where", "arguments": {}});
        if let Some(context) = context {
            params["context"] = context.clone();
        }
        host.send(json!({"jsonrpc": "2.0", "id": id, "method": "tool/call", "params": params}));
        seen(id)
    };
    assert_eq!(
        call(2, Some(&context)),
        json!({"workspace": "/w", "generation": 3, "host": {"model": "m"}, "raw": context})
    );
    // Without a context, the workspace is the one initialize named.
    assert_eq!(
        call(3, None),
        json!({"workspace": "/initial", "generation": null, "host": null, "raw": null})
    );
    // A context serde_json does not take (an unpaired surrogate) reads as null; the
    // call is still answered.
    let line = br#"{"jsonrpc":"2.0","id":4,"method":"tool/call","params":{"name":"where","arguments":{},"context":{"workspace":"\ud800"}}}"#;
    host.send_line([&line[..], b"\n"].concat());
    assert_eq!(
        seen(4),
        json!({"workspace": "/initial", "generation": null, "host": null, "raw": null})
    );
    host.shut_down(5);
}
