//! `octet-host ui`: serve's engine behind a local web page. It listens on 127.0.0.1
//! only and prints the page's URL, with a per-launch token, as the first line of
//! stdout; Ctrl-C runs the ordered shutdown.
//!
//! Under the page is serve's own protocol over HTTP, so a script can do whatever the
//! page does:
//! - `POST /api/control`: one serve control line as the body; serve's reply line as
//!   the answer;
//! - `GET /api/events`: serve's other output lines (results, events, questions, service
//!   requests and the wire trace), one server-sent event each;
//! - `GET /api/recording`: the session's lines so far (the lines the page posted, as
//!   `{"type":"control","line":..}`, and serve's), as JSON lines.
//!
//! Every request must carry the token: the `token` query parameter loads the page,
//! which sets it as an `HttpOnly`, `SameSite=Strict` cookie; a script sends it as the
//! `X-Octet-Token` header. Without it: 401. A request whose `Host` is not
//! `127.0.0.1:PORT` or `localhost:PORT`, or whose `Origin` is present and not the
//! page's own, is refused with 403 (DNS rebinding, cross-site requests). The page's
//! files are embedded in the binary.

mod engine;
mod http;
mod hub;
pub(crate) mod replay;

use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crossbeam_channel::{RecvTimeoutError, Sender};
use serde_json::{json, Value};

use super::output;
use super::GlobalArgs;
use hub::Hub;

/// Connections served at once; more are answered 503 at once.
const MAX_CONNECTIONS: usize = 64;
/// How long a posted line waits for serve's reply (a `start` may take its startup
/// timeout, a `shutdown` the extensions' shutdown).
const REPLY_TIMEOUT: Duration = Duration::from_secs(120);
/// How often an idle event stream sends a comment, which also finds a closed tab.
const KEEPALIVE: Duration = Duration::from_secs(15);
/// The cookie that carries the token after the page loaded.
const COOKIE: &str = "octet_ui_token";

const INDEX_HTML: &str = include_str!("page/index.html");
const APP_JS: &str = include_str!("page/app.js");
const APP_CSS: &str = include_str!("page/app.css");

/// `octet-host ui`'s own options.
#[derive(Debug, clap::Args)]
pub(crate) struct UiArgs {
    /// The port to listen on, on 127.0.0.1 [default: a free one]
    #[arg(long)]
    port: Option<u16>,
}

/// Runs the inspector until serve ends (Ctrl-C, or a `shutdown` line); serve's exit
/// code.
pub(crate) fn run(global: &GlobalArgs, args: &UiArgs) -> i32 {
    if global.json {
        output::eprint_line("error: ui prints its URL; --json does not apply to it");
        return 2;
    }
    let options = super::serve_options(global).wire_trace(true);
    let (options, forwarder) = match super::with_signals(options) {
        Ok(watched) => watched,
        Err(code) => return code,
    };
    let listener = match TcpListener::bind(("127.0.0.1", args.port.unwrap_or(0))) {
        Ok(listener) => listener,
        Err(e) => {
            output::eprint_line(&format!("error: ui: cannot listen on 127.0.0.1: {e}"));
            return 1;
        }
    };
    let port = match listener.local_addr() {
        Ok(address) => address.port(),
        Err(e) => {
            output::eprint_line(&format!("error: ui: {e}"));
            return 1;
        }
    };
    let token = match crate::hex::random(32) {
        Ok(token) => token,
        Err(e) => {
            output::eprint_line(&format!("error: ui: no random token: {e}"));
            return 1;
        }
    };
    let hub = Arc::new(Hub::default());
    let engine = match engine::start(options, hub.clone()) {
        Ok(engine) => engine,
        Err(e) => {
            output::eprint_line(&format!("error: ui: {e}"));
            return 1;
        }
    };
    let server = Arc::new(Server {
        port,
        token,
        hub,
        input: engine.input.clone(),
        connections: AtomicUsize::new(0),
    });
    output::print_line(&format!("http://127.0.0.1:{port}/?token={}", server.token));
    let accepting = server.clone();
    let _ = std::thread::Builder::new()
        .name("octet-ui-accept".into())
        .spawn(move || {
            for stream in listener.incoming().flatten() {
                accepting.accept(stream);
            }
        });
    let code = match engine.thread.join() {
        Ok(Ok(code)) => code,
        Ok(Err(e)) => {
            output::eprint_line(&format!("error: ui: serve: {e}"));
            1
        }
        Err(_) => 1,
    };
    drop(forwarder);
    code
}

/// The page's server.
struct Server {
    port: u16,
    token: String,
    hub: Arc<Hub>,
    input: Sender<Vec<u8>>,
    connections: AtomicUsize,
}

/// Counts a connection while it is served.
struct Held<'a>(&'a AtomicUsize);

impl Drop for Held<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Server {
    fn accept(self: &Arc<Self>, stream: TcpStream) {
        if self.connections.fetch_add(1, Ordering::AcqRel) >= MAX_CONNECTIONS {
            self.connections.fetch_sub(1, Ordering::AcqRel);
            let _ = http::respond(&stream, 503, "text/plain", &[], b"too many connections\n");
            return;
        }
        let server = self.clone();
        let spawned = std::thread::Builder::new()
            .name("octet-ui-conn".into())
            .spawn(move || {
                let _held = Held(&server.connections);
                server.handle(stream);
            });
        if spawned.is_err() {
            self.connections.fetch_sub(1, Ordering::AcqRel);
        }
    }

    fn handle(&self, stream: TcpStream) {
        let request = match http::read_request(&stream) {
            Ok(request) => request,
            Err(bad) => {
                let _ = http::respond(
                    &stream,
                    bad.status,
                    "text/plain",
                    &[],
                    bad.message.as_bytes(),
                );
                return;
            }
        };
        if let Err((status, message)) = self.admit(&request) {
            let _ = http::respond(&stream, status, "text/plain", &[], message.as_bytes());
            return;
        }
        let _ = match (request.method.as_str(), request.path.as_str()) {
            ("GET", "/") => http::respond(
                &stream,
                200,
                "text/html; charset=utf-8",
                &[
                    (
                        "Set-Cookie",
                        format!("{COOKIE}={}; HttpOnly; SameSite=Strict; Path=/", self.token),
                    ),
                    (
                        "Content-Security-Policy",
                        "default-src 'self'; img-src 'self' data:; object-src 'none'; \
                         base-uri 'none'; frame-ancestors 'none'"
                            .into(),
                    ),
                ],
                INDEX_HTML.as_bytes(),
            ),
            ("GET", "/app.js") => http::respond(
                &stream,
                200,
                "text/javascript; charset=utf-8",
                &[],
                APP_JS.as_bytes(),
            ),
            ("GET", "/app.css") => http::respond(
                &stream,
                200,
                "text/css; charset=utf-8",
                &[],
                APP_CSS.as_bytes(),
            ),
            ("POST", "/api/control") => self.control(&stream, &request.body),
            ("GET", "/api/events") => self.events(&stream),
            ("GET", "/api/recording") => http::respond(
                &stream,
                200,
                "application/x-ndjson",
                &[(
                    "Content-Disposition",
                    "attachment; filename=\"octet-session.jsonl\"".into(),
                )],
                self.hub.recording().as_bytes(),
            ),
            (
                _,
                "/" | "/app.js" | "/app.css" | "/api/control" | "/api/events" | "/api/recording",
            ) => http::respond(&stream, 405, "text/plain", &[], b"method not allowed\n"),
            _ => http::respond(&stream, 404, "text/plain", &[], b"not found\n"),
        };
    }

    /// The checks every request passes before anything else: `Host`, `Origin`, token.
    fn admit(&self, request: &http::Request) -> Result<(), (u16, &'static str)> {
        let ours = |value: &str, scheme: &str| {
            value == format!("{scheme}127.0.0.1:{}", self.port)
                || value == format!("{scheme}localhost:{}", self.port)
        };
        if !request.header("host").is_some_and(|host| ours(host, "")) {
            return Err((403, "the Host header names another server\n"));
        }
        if request
            .header("origin")
            .is_some_and(|origin| !ours(origin, "http://"))
        {
            return Err((403, "a request from another origin\n"));
        }
        let presented = request
            .header("x-octet-token")
            .or_else(|| request.cookie(COOKIE))
            .or_else(|| match request.path.as_str() {
                "/" => request.query_param("token"),
                _ => None,
            });
        match presented {
            Some(token) if same(token.as_bytes(), self.token.as_bytes()) => Ok(()),
            _ => Err((
                401,
                "the token is missing or wrong: open the URL octet-host ui printed\n",
            )),
        }
    }

    /// `POST /api/control`: the body is one control line; serve's reply answers it.
    fn control(&self, stream: &TcpStream, body: &[u8]) -> std::io::Result<()> {
        let refuse = |code: &str, message: &str| {
            let reply = json!({"type": "reply", "id": null, "ok": false,
                               "error": {"code": code, "message": message}});
            http::respond(
                stream,
                400,
                "application/json",
                &[],
                reply.to_string().as_bytes(),
            )
        };
        let Ok(Value::Object(mut line)) = serde_json::from_slice::<Value>(body) else {
            return refuse(
                "invalid_json",
                "the body must be one JSON object: a control line",
            );
        };
        let asked_id = line.remove("id").unwrap_or(Value::Null);
        let mut recorded = line.clone();
        recorded.insert("id".into(), asked_id.clone());
        self.hub.record_control(&Value::Object(recorded));
        let (id, reply) = self.hub.expect_reply();
        line.insert("id".into(), Value::from(id.clone()));
        let mut text = Value::Object(line).to_string();
        text.push('\n');
        if self.input.send(text.into_bytes()).is_err() {
            self.hub.forget(&id);
            return http::respond(stream, 503, "text/plain", &[], b"serve has ended\n");
        }
        match reply.recv_timeout(REPLY_TIMEOUT) {
            Ok(mut reply) => {
                reply["id"] = asked_id;
                http::respond(
                    stream,
                    200,
                    "application/json",
                    &[],
                    reply.to_string().as_bytes(),
                )
            }
            Err(RecvTimeoutError::Timeout) => {
                self.hub.forget(&id);
                http::respond(
                    stream,
                    504,
                    "text/plain",
                    &[],
                    b"serve did not reply in time\n",
                )
            }
            Err(RecvTimeoutError::Disconnected) => {
                http::respond(stream, 503, "text/plain", &[], b"serve has ended\n")
            }
        }
    }

    /// `GET /api/events`: serve's output lines as server-sent events until the tab
    /// goes away, falls behind, or serve ends.
    fn events(&self, stream: &TcpStream) -> std::io::Result<()> {
        let lines = self.hub.subscribe();
        http::start_events(stream)?;
        loop {
            match lines.recv_timeout(KEEPALIVE) {
                Ok(line) => http::event(stream, &line)?,
                Err(RecvTimeoutError::Timeout) => http::keepalive(stream)?,
                Err(RecvTimeoutError::Disconnected) => return Ok(()),
            }
        }
    }
}

/// Compares two tokens in time that does not depend on where they differ.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |d, (x, y)| d | (x ^ y)) == 0
}
