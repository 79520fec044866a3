//! `octet-host ui` over its HTTP layer, without a browser: the printed URL, the token,
//! the `Host` and `Origin` checks, serve's control lines over `POST /api/control`, the
//! event stream with a call's progress, result, trace and stderr, a stream that stalls,
//! the recording, and Ctrl-C.

mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use support::serve_harness::fixture_extension;

const LIVENESS: Duration = Duration::from_secs(60);

struct Ui {
    child: Child,
    port: u16,
    token: String,
    /// The extension's directory.
    extension: std::path::PathBuf,
    _dirs: Vec<tempfile::TempDir>,
}

impl Drop for Ui {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn ui() -> Ui {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dir = fixture_extension(root.path());
    let mut child = Command::new(support::octet_binary())
        .arg("ui")
        .arg("--workspace")
        .arg(workspace.path())
        .arg("--no-global")
        .arg("--extension-dir")
        .arg(&dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    let url = first.trim();
    let rest = url
        .strip_prefix("http://127.0.0.1:")
        .unwrap_or_else(|| panic!("the first line is the URL: {url:?}"));
    let (port, token) = rest.split_once("/?token=").unwrap();
    assert!(token.len() >= 32, "a token of at least 128 bits: {token}");
    Ui {
        child,
        port: port.parse().unwrap(),
        token: token.to_string(),
        extension: dir,
        _dirs: vec![root, workspace],
    }
}

impl Ui {
    /// Sends one request with `headers` (a `Host` of ours unless given) and returns the
    /// status and the body.
    fn request(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> (u16, String) {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        stream.set_read_timeout(Some(LIVENESS)).unwrap();
        let mut head = format!("{method} {path} HTTP/1.1\r\n");
        if !headers
            .iter()
            .any(|(name, _)| name.eq_ignore_ascii_case("host"))
        {
            head.push_str(&format!("Host: 127.0.0.1:{}\r\n", self.port));
        }
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
        stream.write_all(head.as_bytes()).unwrap();
        stream.write_all(body.as_bytes()).unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).unwrap();
        let status = response[9..12].parse().unwrap();
        let body = response
            .split_once("\r\n\r\n")
            .map(|(_, body)| body.to_string())
            .unwrap_or_default();
        (
            status,
            response.split("\r\n\r\n").next().unwrap().to_string() + "\r\n\r\n" + &body,
        )
    }

    /// One control line through `POST /api/control`; serve's reply.
    fn control(&self, line: Value) -> Value {
        let (status, response) = self.request(
            "POST",
            "/api/control",
            &[("X-Octet-Token", &self.token)],
            &line.to_string(),
        );
        assert_eq!(status, 200, "{response}");
        serde_json::from_str(response.split("\r\n\r\n").nth(1).unwrap()).unwrap()
    }

    /// An event stream, read line by line.
    fn events(&self) -> Events {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        stream.set_read_timeout(Some(LIVENESS)).unwrap();
        let head = format!(
            "GET /api/events HTTP/1.1\r\nHost: localhost:{}\r\nX-Octet-Token: {}\r\n\r\n",
            self.port, self.token
        );
        stream.write_all(head.as_bytes()).unwrap();
        let mut reader = BufReader::new(stream);
        let mut status = String::new();
        reader.read_line(&mut status).unwrap();
        assert!(status.starts_with("HTTP/1.1 200"), "{status}");
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            if line == "\r\n" {
                break;
            }
            if line.to_ascii_lowercase().starts_with("content-type") {
                assert!(line.contains("text/event-stream"), "{line}");
            }
        }
        Events {
            reader,
            unread: Vec::new(),
        }
    }
}

struct Events {
    reader: BufReader<TcpStream>,
    /// Events read and not taken yet: serve's lines come from several threads (the
    /// trace's own among them), so the order of two kinds of line is not fixed.
    unread: Vec<Value>,
}

impl Events {
    /// The first event not taken yet that satisfies `wanted` (reading more as needed).
    fn until(&mut self, what: &str, wanted: impl Fn(&Value) -> bool) -> Value {
        if let Some(at) = self.unread.iter().position(&wanted) {
            return self.unread.remove(at);
        }
        let start = Instant::now();
        while start.elapsed() < LIVENESS {
            let mut line = String::new();
            let read = self.reader.read_line(&mut line).unwrap();
            assert!(read > 0, "the event stream ended before {what}");
            let Some(data) = line.strip_prefix("data: ") else {
                continue;
            };
            let value: Value = serde_json::from_str(data.trim_end()).unwrap();
            if wanted(&value) {
                return value;
            }
            self.unread.push(value);
        }
        let last = self.unread.len().saturating_sub(20);
        let last: Vec<String> = self.unread[last..].iter().map(|v| v.to_string()).collect();
        panic!(
            "no {what} within {LIVENESS:?}; the last lines:\n{}",
            last.join("\n")
        )
    }
}

#[test]
fn requests_without_the_token_or_from_elsewhere_are_refused() {
    let ui = ui();
    let ours = format!("127.0.0.1:{}", ui.port);
    let with_token = format!("/?token={}", ui.token);
    assert_eq!(ui.request("GET", "/", &[], "").0, 401);
    assert_eq!(ui.request("GET", "/?token=wrong", &[], "").0, 401);
    assert_eq!(
        ui.request("POST", "/api/control", &[], r#"{"op":"status"}"#)
            .0,
        401
    );
    // The query token loads the page only.
    let query = format!("/api/events?token={}", ui.token);
    assert_eq!(ui.request("GET", &query, &[], "").0, 401);
    // DNS rebinding: another Host, even with the token.
    let foreign_host = [
        ("Host", "attacker.example:80"),
        ("X-Octet-Token", ui.token.as_str()),
    ];
    assert_eq!(ui.request("GET", "/", &foreign_host, "").0, 403);
    // A cross-site request: another Origin, even with the token.
    let foreign_origin = [
        ("Host", ours.as_str()),
        ("Origin", "http://attacker.example"),
        ("X-Octet-Token", ui.token.as_str()),
    ];
    assert_eq!(
        ui.request(
            "POST",
            "/api/control",
            &foreign_origin,
            r#"{"op":"status"}"#
        )
        .0,
        403
    );
    // The page with its token sets the cookie later requests carry.
    let (status, response) = ui.request("GET", &with_token, &[], "");
    assert_eq!(status, 200);
    let cookie = response
        .lines()
        .find(|l| l.starts_with("Set-Cookie:"))
        .expect("the page sets the token cookie");
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );
    let value = cookie
        .trim_start_matches("Set-Cookie: ")
        .split(';')
        .next()
        .unwrap();
    let own_origin = format!("http://localhost:{}", ui.port);
    let (status, _) = ui.request(
        "POST",
        "/api/control",
        &[("Cookie", value), ("Origin", &own_origin)],
        r#"{"op":"status","id":1}"#,
    );
    assert_eq!(status, 200);
    assert_eq!(
        ui.request("GET", "/app.js", &[("Cookie", value)], "").0,
        200
    );
    assert_eq!(
        ui.request("GET", "/nothing", &[("Cookie", value)], "").0,
        404
    );
}

#[test]
fn the_page_drives_serve_and_sees_progress_results_trace_and_stderr() {
    let ui = ui();
    let mut events = ui.events();
    let found = ui.control(json!({"op": "discover", "id": "d"}));
    assert_eq!(found["id"], "d", "the reply keeps the page's id");
    assert_eq!(found["entries"][0]["name"], "fixture", "{found}");
    let started = ui.control(json!({"op": "start", "extension": "fixture", "id": 1}));
    assert_eq!(started["ok"], true, "{started}");
    let admitted = ui.control(
        json!({"op": "call", "call_id": "c1", "extension": "fixture",
                                     "tool": "progress", "arguments": {"steps": 2}}),
    );
    assert_eq!(admitted["ok"], true, "{admitted}");
    events.until("progress", |l| {
        l["event"] == "progress" && l["call_id"] == "c1"
    });
    let result = events.until("the result", |l| {
        l["type"] == "result" && l["call_id"] == "c1"
    });
    assert_eq!(result["ok"], true, "{result}");
    assert_eq!(result["output"]["content"][0]["text"], "progress sent=2");
    let answered = events.until("the tool/call's answer in the trace", |l| {
        l["type"] == "trace" && l["answers"]["method"] == "tool/call"
    });
    assert!(answered["answers"]["latency_ms"].as_f64().unwrap() >= 0.0);
    ui.control(json!({"op": "call", "call_id": "c2", "extension": "fixture", "tool": "crash"}));
    let stderr = events.until("a stderr line", |l| {
        l["event"] == "diagnostic" && l["kind"] == "stderr"
    });
    assert!(
        stderr["line"]
            .as_str()
            .unwrap()
            .contains("crashing on purpose"),
        "{stderr}"
    );
    // The recording holds the page's lines and serve's.
    let (status, recording) =
        ui.request("GET", "/api/recording", &[("X-Octet-Token", &ui.token)], "");
    assert_eq!(status, 200);
    assert!(recording.contains(r#""type":"control""#) && recording.contains(r#""call_id":"c1""#));
}

#[test]
fn a_stalled_tab_never_holds_up_the_others_and_ctrl_c_shuts_down_in_order() {
    let mut ui = ui();
    // This tab never reads its stream.
    let _stalled = ui.events();
    let mut reading = ui.events();
    let started = ui.control(json!({"op": "start", "extension": "fixture", "id": 1}));
    assert_eq!(started["ok"], true, "{started}");
    let pid = started["pid"].as_u64().unwrap() as u32;
    for n in 0..40 {
        let call_id = format!("big-{n}");
        ui.control(
            json!({"op": "call", "call_id": call_id, "extension": "fixture",
                          "tool": "big", "arguments": {"bytes": 200_000}}),
        );
        let done = reading.until("a result", |l| {
            l["type"] == "result" && l["call_id"] == call_id
        });
        assert_eq!(done["ok"], true, "{done}");
    }
    unsafe { libc::kill(ui.child.id() as i32, libc::SIGINT) };
    let start = Instant::now();
    let status = loop {
        if let Some(status) = ui.child.try_wait().unwrap() {
            break status;
        }
        assert!(start.elapsed() < LIVENESS, "ui ended after Ctrl-C");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(130), "{status:?}");
    assert!(
        support::wait_gone(pid, LIVENESS),
        "the extension ended with ui"
    );
}

#[test]
fn replay_reruns_a_recorded_session_and_catches_a_changed_result() {
    let ui = ui();
    let started = ui.control(json!({"op": "start", "extension": "fixture", "id": 1}));
    assert_eq!(started["ok"], true, "{started}");
    let mut events = ui.events();
    ui.control(
        json!({"op": "call", "call_id": "e1", "extension": "fixture",
                      "tool": "echo", "arguments": {"said": "hello"}}),
    );
    events.until("the result", |l| {
        l["type"] == "result" && l["call_id"] == "e1"
    });
    ui.control(
        json!({"op": "hook", "call_id": "h1", "extension": "fixture",
                      "hook": "before_prompt", "payload": {"prompt": "hi"}}),
    );
    events.until("the hook's result", |l| {
        l["type"] == "result" && l["call_id"] == "h1"
    });
    let (status, response) =
        ui.request("GET", "/api/recording", &[("X-Octet-Token", &ui.token)], "");
    assert_eq!(status, 200);
    let recording = response.split("\r\n\r\n").nth(1).unwrap().to_string();
    let dir = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let replay = |text: &str| {
        let file = dir.path().join("session.jsonl");
        std::fs::write(&file, text).unwrap();
        Command::new(support::octet_binary())
            .arg("replay")
            .arg(&file)
            .arg("--workspace")
            .arg(workspace.path())
            .arg("--no-global")
            .arg("--extension-dir")
            .arg(&ui.extension)
            .output()
            .unwrap()
    };
    let same = replay(&recording);
    let said = String::from_utf8_lossy(&same.stdout).to_string();
    assert_eq!(
        same.status.code(),
        Some(0),
        "{said}{}",
        String::from_utf8_lossy(&same.stderr)
    );
    assert!(said.contains("2 of 2 outcomes are the same"), "{said}");
    // The extension "changed": the recorded answer no longer matches.
    let changed = recording.replace(r#"\"said\":\"hello\""#, r#"\"said\":\"goodbye\""#);
    assert_ne!(changed, recording, "the recorded result names the argument");
    let differs = replay(&changed);
    let said = String::from_utf8_lossy(&differs.stdout).to_string();
    assert_eq!(differs.status.code(), Some(1), "{said}");
    assert!(said.contains("differs: fixture call echo"), "{said}");
    assert!(said.contains("/output/content/0/text"), "{said}");
}
