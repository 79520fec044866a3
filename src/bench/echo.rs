//! The child side of the benchmarks: `octet-host __bench-echo MODE`.
//!
//! Each mode is one thread reading stdin through a 64 KiB buffer and answering every
//! message it completes. Answers are gathered in memory and written with one `write`
//! whenever the input buffer is drained, so a burst of requests costs one read and
//! one write on this side: this is the cheapest peer the host can talk to.

use std::borrow::Cow;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::os::fd::AsFd;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};

use super::BenchError;

/// Bytes read from stdin at a time.
const INPUT_BUFFER_BYTES: usize = 64 * 1024;

/// What the echo child speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EchoMode {
    /// Echo every LF-terminated line unchanged: the pipe floor.
    Raw,
    /// Parse every line as a JSON-RPC request and answer with a JSON-RPC result that
    /// carries the request's `params.arguments` as text: the JSON floor.
    Json,
    /// [`EchoMode::Json`] with LSP framing (`Content-Length` headers), for the
    /// `lsp-server` peer.
    Lsp,
    /// A minimal octet extension: answers `initialize` (API 0.1, 0.2 and 0.4, with the
    /// offered concurrency limit), `tool/call` of its one tool `echo`, and `shutdown`;
    /// ignores notifications. It isolates the host's cost from the SDK's.
    Octet,
    /// A minimal MCP server over stdio (newline-delimited JSON-RPC), for the `rmcp`
    /// peer: answers `initialize` with the client's protocol version and a `tools`
    /// capability, `tools/call` with the JSON floor's echo as MCP content, and `ping`;
    /// ignores notifications.
    Mcp,
}

impl EchoMode {
    /// Every mode, by its command-line name.
    pub const ALL: [EchoMode; 5] = [
        EchoMode::Raw,
        EchoMode::Json,
        EchoMode::Lsp,
        EchoMode::Octet,
        EchoMode::Mcp,
    ];

    /// The mode's command-line name.
    pub fn as_str(self) -> &'static str {
        match self {
            EchoMode::Raw => "raw",
            EchoMode::Json => "json",
            EchoMode::Lsp => "lsp",
            EchoMode::Octet => "octet",
            EchoMode::Mcp => "mcp",
        }
    }

    /// The mode named `name`.
    pub fn parse(name: &str) -> Option<EchoMode> {
        EchoMode::ALL.into_iter().find(|m| m.as_str() == name)
    }
}

/// Serves `mode` on this process's stdin and stdout until EOF (or `shutdown` in
/// [`EchoMode::Octet`]).
pub fn run_echo(mode: EchoMode) -> Result<(), BenchError> {
    // Unbuffered handles on duplicates of fds 0 and 1: the standard handles would add
    // a second buffer (and line-buffered flushes) of their own.
    let input = std::fs::File::from(io::stdin().as_fd().try_clone_to_owned()?);
    let output = std::fs::File::from(io::stdout().as_fd().try_clone_to_owned()?);
    serve(mode, input, output)
}

/// Serves `mode` on `input` and `output`.
pub fn serve(mode: EchoMode, input: impl Read, mut output: impl Write) -> Result<(), BenchError> {
    let mut input = BufReader::with_capacity(INPUT_BUFFER_BYTES, input);
    let mut frame = Vec::new();
    let mut answers = Vec::with_capacity(INPUT_BUFFER_BYTES);
    // Octet mode: whether `initialize` selected an API with content parts (not 0.1).
    let mut content_parts = false;
    loop {
        frame.clear();
        let more = match mode {
            EchoMode::Lsp => read_lsp_frame(&mut input, &mut frame)?,
            _ => input.read_until(b'\n', &mut frame)? > 0 && frame.ends_with(b"\n"),
        };
        if !more {
            output.write_all(&answers)?;
            return Ok(());
        }
        let stop = match mode {
            EchoMode::Raw => {
                answers.extend_from_slice(&frame);
                false
            }
            EchoMode::Json => {
                let request: Value = serde_json::from_slice(&frame)?;
                serde_json::to_writer(&mut answers, &echo_answer(&request))?;
                answers.push(b'\n');
                false
            }
            EchoMode::Lsp => {
                let request: Value = serde_json::from_slice(&frame)?;
                let body = serde_json::to_vec(&echo_answer(&request))?;
                write!(answers, "Content-Length: {}\r\n\r\n", body.len())?;
                answers.extend_from_slice(&body);
                false
            }
            EchoMode::Octet => {
                let message: OctetMessage = serde_json::from_slice(&frame)?;
                let (answer, stop) = octet_answer(&message, &mut content_parts)?;
                if let Some(answer) = answer {
                    serde_json::to_writer(&mut answers, &answer)?;
                    answers.push(b'\n');
                }
                stop
            }
            EchoMode::Mcp => {
                let message: Value = serde_json::from_slice(&frame)?;
                if let Some(answer) = mcp_answer(&message) {
                    serde_json::to_writer(&mut answers, &answer)?;
                    answers.push(b'\n');
                }
                false
            }
        };
        if stop || input.buffer().is_empty() {
            output.write_all(&answers)?;
            answers.clear();
        }
        if stop {
            return Ok(());
        }
    }
}

/// Reads one `Content-Length` framed body into `body`; false at a clean EOF.
fn read_lsp_frame(input: &mut impl BufRead, body: &mut Vec<u8>) -> Result<bool, BenchError> {
    let mut length = None;
    let mut header = Vec::new();
    loop {
        header.clear();
        if input.read_until(b'\n', &mut header)? == 0 {
            return Ok(false);
        }
        let line = header.strip_suffix(b"\r\n").ok_or(BenchError::Framing)?;
        if line.is_empty() {
            break;
        }
        if let Some(value) = line.strip_prefix(b"Content-Length: ") {
            let text = std::str::from_utf8(value).map_err(|_| BenchError::Framing)?;
            length = Some(text.parse::<usize>().map_err(|_| BenchError::Framing)?);
        }
    }
    body.resize(length.ok_or(BenchError::Framing)?, 0);
    input.read_exact(body)?;
    Ok(true)
}

/// The floor's answer: a JSON-RPC result whose text is the compact JSON of
/// `params.arguments`, as the SDK's `echo` tool answers.
fn echo_answer(request: &Value) -> Value {
    let text = request["params"]["arguments"].to_string();
    json!({
        "jsonrpc": "2.0",
        "id": request["id"],
        "result": {"content": [{"type": "text", "text": text}], "is_error": false},
    })
}

/// A message as the octet mode reads it, in one pass: only the members it answers
/// from are built, and the rest of `params` (above all a `tool/call`'s execution
/// `context`, which an echo never reads) is checked for its grammar and skipped, as
/// the SDK defers it (`wire::deferred`).
#[derive(Deserialize)]
struct OctetMessage<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    method: Option<Cow<'a, str>>,
    #[serde(default)]
    params: OctetParams,
}

/// The `params` members of `initialize` and `tool/call` the octet mode reads.
#[derive(Default, Deserialize)]
struct OctetParams {
    /// `tool/call`: what the echo answers with.
    #[serde(default)]
    arguments: Value,
    /// `initialize`: the offered API.
    api_version: Option<String>,
    /// `initialize` on the feature-negotiated APIs: the protocol offer.
    protocol: Option<Value>,
}

/// The octet mode's answer to one message, and whether to stop after it.
/// `content_parts` is set by `initialize` and selects the `tool/call` result shape.
fn octet_answer(
    message: &OctetMessage<'_>,
    content_parts: &mut bool,
) -> Result<(Option<Value>, bool), BenchError> {
    let (Some(id), Some(method)) = (message.id, message.method.as_deref()) else {
        // Notifications (and stray responses) need no answer.
        return Ok((None, false));
    };
    let id: Value = serde_json::from_str(id.get())?;
    let params = &message.params;
    let result = match method {
        "initialize" => {
            *content_parts = params.api_version.as_deref() != Some("0.1");
            initialize_result(params)
        }
        "tool/call" => {
            let text = params.arguments.to_string();
            if *content_parts {
                json!({"content": [{"type": "text", "text": text}], "is_error": false})
            } else {
                json!({"content": text, "is_error": false})
            }
        }
        "shutdown" => {
            let answer = json!({"jsonrpc": "2.0", "id": id, "result": {}});
            return Ok((Some(answer), true));
        }
        method => {
            let error = json!({"code": crate::wire::codes::METHOD_NOT_FOUND,
                "message": format!("unknown method `{method}`")});
            return Ok((
                Some(json!({"jsonrpc": "2.0", "id": id, "error": error})),
                false,
            ));
        }
    };
    Ok((
        Some(json!({"jsonrpc": "2.0", "id": id, "result": result})),
        false,
    ))
}

/// The MCP mode's answer to one message; notifications get none.
fn mcp_answer(message: &Value) -> Option<Value> {
    let id = message
        .get("id")
        .filter(|_| message.get("method").is_some())?;
    let params = &message["params"];
    let result = match message["method"].as_str().unwrap_or_default() {
        "initialize" => json!({
            "protocolVersion": params["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "octet-bench-echo", "version": "0"},
        }),
        "tools/call" => {
            let text = params["arguments"].to_string();
            json!({"content": [{"type": "text", "text": text}], "isError": false})
        }
        "ping" => json!({}),
        method => {
            let error = json!({"code": crate::wire::codes::METHOD_NOT_FOUND,
                "message": format!("unknown method `{method}`")});
            return Some(json!({"jsonrpc": "2.0", "id": id, "error": error}));
        }
    };
    Some(json!({"jsonrpc": "2.0", "id": id, "result": result}))
}

/// The `initialize` result: the `echo` tool and, on the feature-negotiated APIs, the
/// offer's protocol version with only the required features and the offered limits.
fn initialize_result(params: &OctetParams) -> Value {
    let api = params.api_version.as_deref().unwrap_or("0.1");
    let mut result = json!({
        "api_version": api,
        "tools": [{"name": "echo", "description": "Echo the arguments",
            "parameters": {"type": "object"}}],
        "commands": [],
    });
    if let Some(offer) = &params.protocol {
        result["protocol"] = json!({
            "version": offer["version"],
            "features": offer["required_features"],
        });
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The JSON values of the LF-terminated lines of `output`.
    fn lines(output: &[u8]) -> Vec<Value> {
        output
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| serde_json::from_slice(l).unwrap())
            .collect()
    }

    fn served(mode: EchoMode, input: &[u8]) -> Vec<u8> {
        let mut output = Vec::new();
        serve(mode, input, &mut output).unwrap();
        output
    }

    #[test]
    fn raw_echoes_complete_lines_and_drops_an_unterminated_tail() {
        assert_eq!(served(EchoMode::Raw, b"a\nbc\nd"), b"a\nbc\n");
    }

    #[test]
    fn json_answers_each_request_with_its_arguments_as_text() {
        let input = br#"{"jsonrpc":"2.0","id":7,"method":"tool/call","params":{"name":"echo","arguments":{"x":1}}}
"#;
        let answer: Value = serde_json::from_slice(&served(EchoMode::Json, input)).unwrap();
        assert_eq!(answer["id"], 7);
        assert_eq!(answer["result"]["content"][0]["text"], r#"{"x":1}"#);
    }

    #[test]
    fn lsp_frames_answers_with_content_length() {
        let body = br#"{"jsonrpc":"2.0","id":"a","method":"m","params":{"arguments":[1]}}"#;
        let mut input = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
        input.extend_from_slice(body);
        let output = served(EchoMode::Lsp, &input);
        let text = String::from_utf8(output).unwrap();
        let (header, body) = text.split_once("\r\n\r\n").unwrap();
        assert_eq!(header, format!("Content-Length: {}", body.len()));
        let answer: Value = serde_json::from_str(body).unwrap();
        assert_eq!(answer["id"], "a");
        assert_eq!(answer["result"]["content"][0]["text"], "[1]");
    }

    #[test]
    fn lsp_rejects_a_header_without_crlf() {
        let outcome = serve(EchoMode::Lsp, &b"Content-Length: 2\n\n{}"[..], Vec::new());
        assert!(matches!(outcome, Err(BenchError::Framing)));
    }

    #[test]
    fn octet_negotiates_answers_calls_and_stops_at_shutdown() {
        let input = concat!(
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"api_version":"0.4","protocol":{"version":"0.2","required_features":["request_cancellation","content_parts"]}}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","method":"initialized"}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":2,"method":"tool/call","params":{"name":"echo","arguments":{"a":"b"}}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":3,"method":"nope"}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":4,"method":"shutdown"}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":5,"method":"tool/call"}"#,
            "\n",
        );
        let output = served(EchoMode::Octet, input.as_bytes());
        let answers = lines(&output);
        assert_eq!(answers.len(), 4, "nothing after shutdown is answered");
        let protocol = &answers[0]["result"]["protocol"];
        assert_eq!(protocol["version"], "0.2");
        assert_eq!(
            protocol["features"],
            json!(["request_cancellation", "content_parts"])
        );
        assert_eq!(answers[1]["result"]["content"][0]["text"], r#"{"a":"b"}"#);
        assert_eq!(
            answers[2]["error"]["code"],
            crate::wire::codes::METHOD_NOT_FOUND
        );
        assert_eq!(answers[3], json!({"jsonrpc": "2.0", "id": 4, "result": {}}));
    }

    #[test]
    fn octet_answers_api_0_1_calls_with_text_content() {
        let input = concat!(
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"api_version":"0.1"}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":2,"method":"tool/call","params":{"name":"echo","arguments":{}}}"#,
            "\n",
        );
        let output = served(EchoMode::Octet, input.as_bytes());
        let answers = lines(&output);
        assert!(answers[0]["result"].get("protocol").is_none());
        assert_eq!(answers[1]["result"]["content"], "{}");
    }

    #[test]
    fn mcp_initializes_and_echoes_tool_calls() {
        let input = concat!(
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"a":1}}}"#,
            "\n",
        );
        let output = served(EchoMode::Mcp, input.as_bytes());
        let answers = lines(&output);
        assert_eq!(answers.len(), 2, "the notification is not answered");
        assert_eq!(answers[0]["result"]["protocolVersion"], "2025-03-26");
        assert_eq!(answers[1]["id"], 1);
        assert_eq!(answers[1]["result"]["content"][0]["text"], r#"{"a":1}"#);
    }

    #[test]
    fn modes_round_trip_through_their_names() {
        for mode in EchoMode::ALL {
            assert_eq!(EchoMode::parse(mode.as_str()), Some(mode));
        }
        assert_eq!(EchoMode::parse("nope"), None);
    }
}
