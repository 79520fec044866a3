//! The SDK speaking API 0.3 over real pipes: `octet-host __extension NAME` with
//! `OCTET_EXTENSION_API_VERSION=0.3`, driven with canonical frames written by hand (or
//! by the host's own `initialize_params`), every answer checked byte for byte.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use crossbeam_channel::{unbounded, Receiver, RecvTimeoutError};
use octet_host::negotiation::{initialize_params, validate_initialize_result, Feature};
use octet_host::wire::codec::Codec;
use octet_host::wire::{Message, RequestId};
use serde_json::{json, Value};

use crate::support::{default_offer, example_host, hello_world, workspace, TIMEOUT};

/// An SDK example extension on API 0.3, with its stdout split into raw lines.
struct Ext {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Vec<u8>>,
    stderr: Receiver<String>,
}

impl Ext {
    fn spawn(name: &str) -> Ext {
        let mut child = Command::new(env!("CARGO_BIN_EXE_octet-host"))
            .args(["__extension", name])
            .env("OCTET_EXTENSION_API_VERSION", "0.3")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawning octet-host");
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = unbounded();
        thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            loop {
                let mut line = Vec::new();
                match reader.read_until(b'\n', &mut line) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        if tx.send(line).is_err() {
                            break;
                        }
                    }
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
            lines,
            stderr,
        }
    }

    fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    fn request(&mut self, id: u64, method: &str, params: Value) {
        let frame = Codec::Canonical
            .encode_request(&RequestId::Number(id), method, &params, usize::MAX)
            .unwrap();
        self.send_raw(&frame);
    }

    fn notify(&mut self, method: &str, params: Value) {
        let frame = Codec::Canonical
            .encode_notification(method, &params, usize::MAX)
            .unwrap();
        self.send_raw(&frame);
    }

    /// The next line, LF included, as text.
    fn line(&self) -> String {
        match self.lines.recv_timeout(TIMEOUT) {
            Ok(line) => String::from_utf8(line).expect("UTF-8 output"),
            Err(RecvTimeoutError::Timeout) => panic!("no frame within {TIMEOUT:?}"),
            Err(RecvTimeoutError::Disconnected) => panic!("the extension closed stdout"),
        }
    }

    /// The next frame, which must be canonical with one LF, decoded.
    fn message(&self) -> Message {
        let line = self.line();
        let body = line.strip_suffix('\n').expect("a frame ends with LF");
        Codec::Canonical
            .decode(body.as_bytes())
            .unwrap_or_else(|e| panic!("the extension wrote a non-canonical frame {line:?}: {e}"))
    }

    fn wait_exit(&mut self) -> ExitStatus {
        let deadline = Instant::now() + TIMEOUT;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(Instant::now() < deadline, "the extension did not exit");
            thread::sleep(Duration::from_millis(20));
        }
    }

    fn stderr_text(&self) -> String {
        self.stderr.recv_timeout(TIMEOUT).unwrap_or_default()
    }
}

impl Drop for Ext {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The host's own `initialize` params for the hello-world manifest on API 0.3.
fn host_initialize() -> Value {
    let located = hello_world();
    initialize_params(
        &located,
        workspace(),
        &example_host(),
        &default_offer(&located),
    )
    .unwrap()
    .to_value()
}

fn tool_context() -> Value {
    json!({"workspace": "/home/user/project", "execution_scope": null, "host": {}})
}

/// The hello-world answer to the host's initialize, byte for byte.
const HELLO_INITIALIZE_ANSWER: &str = concat!(
    r#"{"id":1,"jsonrpc":"2.0","result":{"api_version":"0.3","contract":{"#,
    r#""capabilities":["content_parts","core","request_cancellation","tool_call"],"#,
    r#""encoding":"octet-canonical-json-v1","#,
    r#""limits":{"max_concurrent_requests":64,"max_frame_bytes":1048576,"max_tools":256},"#,
    r#""methods":["$/cancelRequest","initialize","shutdown","tool/call"],"#,
    r#""schema":"octet.extension.api/0.3"},"#,
    r#""tools":[{"description":"Greet someone from an executable extension","name":"hello_world","#,
    r#""parameters":{"additionalProperties":false,"properties":{"name":{"type":"string"}},"#,
    r#""required":["name"],"type":"object"}}]}}"#,
    "\n"
);

#[test]
fn hello_world_speaks_the_canonical_wire() {
    let mut ext = Ext::spawn("hello-world");
    ext.request(1, "initialize", host_initialize());
    let answer = ext.line();
    assert_eq!(answer, HELLO_INITIALIZE_ANSWER);

    // The host accepts exactly this selection.
    let Message::Response(response) = Codec::Canonical
        .decode(answer.trim_end_matches('\n').as_bytes())
        .unwrap()
    else {
        panic!("not a response");
    };
    let located = hello_world();
    let negotiated = validate_initialize_result(
        &located,
        &default_offer(&located),
        &response.outcome.unwrap(),
    )
    .unwrap();
    assert_eq!(negotiated.max_concurrent_requests, 64);
    assert!(!negotiated.features.contains(Feature::RequestProgress));
    let contract = negotiated.contract.unwrap();
    // The 0.3 vocabulary has no `notification` method, and `hook/run` needs
    // `lifecycle_events`, which this host does not offer.
    assert!(!contract.allows("hook/run") && !contract.allows("notification"));

    // A tool call: the closed content-parts result (`metadata` required, here null), and
    // no notification (not negotiated).
    ext.request(
        2,
        "tool/call",
        json!({"name": "hello_world", "arguments": {"name": "Ada"}, "context": tool_context()}),
    );
    assert_eq!(
        ext.line(),
        "{\"id\":2,\"jsonrpc\":\"2.0\",\"result\":{\"content\":[{\"text\":\"Hello, Ada!\",\
         \"type\":\"text\"}],\"is_error\":false,\"metadata\":null}}\n"
    );

    // Methods the contract did not select are refused with the fixed error table.
    for (id, method) in [
        (3, "hook/run"),
        (4, "context/collect"),
        (5, "command/execute"),
        (6, "menu/collect"),
    ] {
        ext.request(id, method, json!({}));
        assert_eq!(
            ext.line(),
            format!(
                "{{\"error\":{{\"code\":-32601,\"message\":\"unknown or unnegotiated method\"}},\
                 \"id\":{id},\"jsonrpc\":\"2.0\"}}\n"
            )
        );
    }

    ext.request(9, "shutdown", json!({}));
    assert_eq!(
        ext.line(),
        "{\"id\":9,\"jsonrpc\":\"2.0\",\"result\":{\"terminal\":\"shutdown\"}}\n"
    );
    assert!(ext.wait_exit().success());
}

#[test]
fn non_canonical_input_is_answered_with_a_parse_error() {
    let mut ext = Ext::spawn("hello-world");
    // Even the first frame must be canonical: this initialize has unsorted keys.
    ext.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}\n");
    let parse_error = |line: &str| {
        assert!(
            line.starts_with("{\"error\":{\"code\":-32700,\"message\":\"parse error: "),
            "{line}"
        );
        assert!(
            line.ends_with("},\"id\":null,\"jsonrpc\":\"2.0\"}\n"),
            "{line}"
        );
    };
    parse_error(&ext.line());
    ext.request(1, "initialize", host_initialize());
    assert_eq!(ext.line(), HELLO_INITIALIZE_ANSWER);

    let bad_frames: [&[u8]; 6] = [
        // A CR before the LF.
        b"{\"id\":2,\"jsonrpc\":\"2.0\",\"method\":\"shutdown\",\"params\":{}}\r\n",
        // An empty frame.
        b"\n",
        // Whitespace.
        b"{\"id\":2, \"jsonrpc\":\"2.0\",\"method\":\"shutdown\",\"params\":{}}\n",
        // A float.
        b"{\"id\":2,\"jsonrpc\":\"2.0\",\"method\":\"tool/call\",\"params\":{\"arguments\":{\"n\":1.5},\"name\":\"hello_world\"}}\n",
        // An integer beyond 2^53-1.
        b"{\"id\":9007199254740992,\"jsonrpc\":\"2.0\",\"method\":\"shutdown\",\"params\":{}}\n",
        // Not JSON at all.
        b"shutdown\n",
    ];
    for frame in bad_frames {
        ext.send_raw(frame);
        parse_error(&ext.line());
    }

    // Canonical JSON breaking the envelope rules: invalid request, with the id when
    // it can be read.
    ext.send_raw(
        b"{\"id\":3,\"jsonrpc\":\"2.0\",\"method\":\"shutdown\",\"params\":{},\"trace\":1}\n",
    );
    let line = ext.line();
    assert!(
        line.starts_with("{\"error\":{\"code\":-32600,\"message\":\"invalid request: "),
        "{line}"
    );
    assert!(line.ends_with("\"id\":3,\"jsonrpc\":\"2.0\"}\n"), "{line}");
    ext.send_raw(b"{\"id\":4,\"jsonrpc\":\"2.0\",\"method\":\"shutdown\"}\n");
    let line = ext.line();
    assert!(line.contains("\"code\":-32600"), "{line}");
    assert!(line.ends_with("\"id\":4,\"jsonrpc\":\"2.0\"}\n"), "{line}");

    // None of that ended the session: a canonical shutdown still works.
    ext.request(5, "shutdown", json!({}));
    assert_eq!(
        ext.line(),
        "{\"id\":5,\"jsonrpc\":\"2.0\",\"result\":{\"terminal\":\"shutdown\"}}\n"
    );
    assert!(ext.wait_exit().success());
    assert!(ext.stderr_text().contains("non-canonical frame"));
}

/// A canonical contract offer naming only the required entries plus `extra_methods`.
fn bare_initialize(extra_methods: &[&str], extra_capabilities: &[&str]) -> Value {
    json!({
        "api_version": "0.3",
        "octet_version": "0.8.0",
        "extension": {"name": "test-extension", "version": "0.1.0",
            "manifest_path": "/x/extension.toml", "source": "explicit"},
        "workspace": "/x",
        "capabilities": {"filesystem": "none", "process": false, "network": false},
        "contributes": {},
        "host": {"session_id": null, "session_name": null, "model": "m", "reasoning": null,
            "active_skills": []},
        "flag_values": [],
        "contract": {
            "schema": "octet.extension.api/0.3",
            "encoding": "octet-canonical-json-v1",
            "required_capabilities": ["content_parts", "core", "request_cancellation", "tool_call"],
            "optional_capabilities": extra_capabilities,
            "required_methods": ["$/cancelRequest", "initialize", "shutdown", "tool/call"],
            "optional_methods": extra_methods,
            "limits": {"max_frame_bytes": 1048576, "max_concurrent_requests": 4, "max_tools": 256}
        }
    })
}

#[test]
fn cancellation_progress_and_unnegotiated_child_requests() {
    let mut ext = Ext::spawn("test-extension");
    ext.request(
        1,
        "initialize",
        bare_initialize(&["$/progress"], &["request_progress"]),
    );
    let Message::Response(response) = ext.message() else {
        panic!("expected the initialize answer");
    };
    let result = response.outcome.unwrap();
    assert!(result.get("commands").is_none(), "{result}");
    assert_eq!(
        result["contract"]["methods"],
        json!([
            "$/cancelRequest",
            "$/progress",
            "initialize",
            "shutdown",
            "tool/call"
        ])
    );
    assert_eq!(result["contract"]["limits"]["max_concurrent_requests"], 4);

    // Progress is sent because both the capability and the method were selected.
    ext.request(
        2,
        "tool/call",
        json!({"name": "progress", "arguments": {"steps": 1}, "context": tool_context()}),
    );
    match ext.message() {
        Message::Notification(n) => {
            assert_eq!(n.method, "$/progress");
            assert_eq!(n.params.as_ref().unwrap()["request_id"], 2);
        }
        other => panic!("expected progress, got {other:?}"),
    }
    assert!(matches!(ext.message(), Message::Response(r) if r.id == RequestId::Number(2)));

    // confirmation/request was not offered: the handler's round trip fails without a
    // frame being sent, so the next frame is the tool's error response.
    ext.request(
        3,
        "tool/call",
        json!({"name": "confirm", "arguments": {"prompt": "?"}, "context": tool_context()}),
    );
    match ext.message() {
        Message::Response(r) => {
            assert_eq!(r.id, RequestId::Number(3));
            let error = r.outcome.unwrap_err();
            assert!(error.message.contains("not negotiated"), "{error:?}");
        }
        other => panic!("expected the confirm error, got {other:?}"),
    }

    // `$/cancelRequest` (required on 0.3) cancels a running call.
    ext.request(
        4,
        "tool/call",
        json!({"name": "sleep", "arguments": {"ms": 60000}, "context": tool_context()}),
    );
    ext.notify("$/cancelRequest", json!({"id": 4}));
    assert_eq!(
        ext.line(),
        "{\"error\":{\"code\":-32800,\"message\":\"request cancelled\"},\"id\":4,\"jsonrpc\":\"2.0\"}\n"
    );

    ext.request(5, "shutdown", json!({}));
    assert_eq!(
        ext.line(),
        "{\"id\":5,\"jsonrpc\":\"2.0\",\"result\":{\"terminal\":\"shutdown\"}}\n"
    );
    assert!(ext.wait_exit().success());
}

#[test]
fn offers_the_sdk_cannot_meet_are_refused_with_the_fixed_error_table() {
    let mut ext = Ext::spawn("hello-world");
    let mut params = bare_initialize(&[], &[]);
    params["contract"]["required_capabilities"] = json!(["core", "session_lifecycle"]);
    ext.request(1, "initialize", params);
    let line = ext.line();
    assert!(line.starts_with("{\"error\":{\"code\":-32011,"), "{line}");
    assert!(line.ends_with("\"id\":1,\"jsonrpc\":\"2.0\"}\n"), "{line}");

    let mut params = bare_initialize(&[], &[]);
    params["api_version"] = json!("0.2");
    ext.request(2, "initialize", params);
    let line = ext.line();
    assert!(line.starts_with("{\"error\":{\"code\":-32010,"), "{line}");

    // Before a successful initialize, nothing else is served.
    ext.request(
        3,
        "tool/call",
        json!({"name": "hello_world", "arguments": {"name": "x"}}),
    );
    let line = ext.line();
    assert!(line.starts_with("{\"error\":{\"code\":-32600,"), "{line}");
}
