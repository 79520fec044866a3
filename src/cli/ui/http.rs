//! The smallest HTTP/1.1 `ui` needs, on `std::net`: one request per connection
//! (`Connection: close`), a head of at most [`MAX_HEAD_BYTES`], a body of at most
//! [`MAX_BODY_BYTES`] by `Content-Length`, and a response written and flushed as it
//! goes, so that an event stream's lines reach the browser one by one (a server that
//! buffers its chunks would hold them back).

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use crate::serve::MAX_CONTROL_LINE_BYTES;

/// The request line and headers together.
pub(crate) const MAX_HEAD_BYTES: usize = 16 * 1024;
/// A posted control line, with room for its LF.
pub(crate) const MAX_BODY_BYTES: usize = MAX_CONTROL_LINE_BYTES + 1;
/// How long a client has to send its request.
const READ_TIMEOUT: Duration = Duration::from_secs(10);

/// One request.
#[derive(Debug)]
pub(crate) struct Request {
    pub method: String,
    /// The path without the query.
    pub path: String,
    /// The query, without its `?`.
    pub query: String,
    /// Headers, names in lowercase.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Request {
    /// The first header called `name` (lowercase).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The value of the query parameter `name`.
    pub fn query_param(&self, name: &str) -> Option<&str> {
        self.query
            .split('&')
            .filter_map(|pair| pair.split_once('='))
            .find(|(key, _)| *key == name)
            .map(|(_, value)| value)
    }

    /// The value of the cookie `name`.
    pub fn cookie(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .filter(|(n, _)| n == "cookie")
            .flat_map(|(_, v)| v.split(';'))
            .filter_map(|pair| pair.trim().split_once('='))
            .find(|(key, _)| *key == name)
            .map(|(_, value)| value)
    }
}

/// Why a request could not be read: answered with `status` when there is still a
/// client to answer.
#[derive(Debug)]
pub(crate) struct BadRequest {
    pub status: u16,
    pub message: &'static str,
}

/// Reads one request from `stream`.
pub(crate) fn read_request(stream: &TcpStream) -> Result<Request, BadRequest> {
    let bad = |status, message| BadRequest { status, message };
    stream
        .set_read_timeout(Some(READ_TIMEOUT))
        .map_err(|_| bad(400, "unreadable"))?;
    let mut reader = BufReader::new(stream.take(MAX_HEAD_BYTES as u64));
    let mut head = Vec::new();
    loop {
        let before = head.len();
        let read = reader
            .read_until(b'\n', &mut head)
            .map_err(|_| bad(400, "unreadable"))?;
        if read == 0 {
            return Err(bad(431, "request head too large or cut short"));
        }
        let line = &head[before..];
        if line == b"\r\n" || line == b"\n" {
            break;
        }
    }
    let head = String::from_utf8(head).map_err(|_| bad(400, "the head is not UTF-8"))?;
    let mut lines = head.lines();
    let request_line = lines.next().unwrap_or_default();
    let mut parts = request_line.split(' ');
    let (Some(method), Some(target), Some(version)) = (parts.next(), parts.next(), parts.next())
    else {
        return Err(bad(400, "malformed request line"));
    };
    if !version.starts_with("HTTP/1.") {
        return Err(bad(505, "HTTP/1.x only"));
    }
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let mut headers = Vec::new();
    for line in lines.filter(|l| !l.is_empty()) {
        let (name, value) = line
            .split_once(':')
            .ok_or_else(|| bad(400, "malformed header"))?;
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
    }
    let mut request = Request {
        method: method.to_string(),
        path: path.to_string(),
        query: query.to_string(),
        headers,
        body: Vec::new(),
    };
    let length = match request.header("content-length") {
        Some(text) => text
            .parse::<usize>()
            .map_err(|_| bad(400, "malformed Content-Length"))?,
        None => 0,
    };
    if length > MAX_BODY_BYTES {
        return Err(bad(413, "the body is larger than a control line may be"));
    }
    // What the head's reader buffered belongs to the body.
    let mut body = reader.buffer().to_vec();
    let rest = length.saturating_sub(body.len());
    let stream = reader.into_inner().into_inner();
    Read::take(stream, rest as u64)
        .read_to_end(&mut body)
        .map_err(|_| bad(400, "the body was cut short"))?;
    if body.len() != length {
        return Err(bad(400, "the body was cut short"));
    }
    request.body = body;
    Ok(request)
}

/// Writes a whole response and closes the exchange.
pub(crate) fn respond(
    mut stream: &TcpStream,
    status: u16,
    content_type: &str,
    extra_headers: &[(&str, String)],
    body: &[u8],
) -> io::Result<()> {
    let mut head = format!(
        "HTTP/1.1 {status} {}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\
         Connection: close\r\nCache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n\
         Referrer-Policy: no-referrer\r\n",
        reason(status),
        body.len()
    );
    for (name, value) in extra_headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes())?;
    stream.write_all(body)?;
    stream.flush()
}

/// Starts an event stream: the head of a `text/event-stream` response without a
/// length; then [`event`] writes each line.
pub(crate) fn start_events(mut stream: &TcpStream) -> io::Result<()> {
    stream.write_all(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\n\
          Connection: close\r\nX-Content-Type-Options: nosniff\r\n\r\n",
    )?;
    stream.flush()
}

/// Writes one server-sent event carrying `data` (one line of JSON), flushed.
pub(crate) fn event(mut stream: &TcpStream, data: &str) -> io::Result<()> {
    let mut frame = Vec::with_capacity(data.len() + 8);
    frame.extend_from_slice(b"data: ");
    frame.extend_from_slice(data.as_bytes());
    frame.extend_from_slice(b"\n\n");
    stream.write_all(&frame)?;
    stream.flush()
}

/// A comment line that keeps the stream alive and finds a client that is gone.
pub(crate) fn keepalive(mut stream: &TcpStream) -> io::Result<()> {
    stream.write_all(b": keepalive\n\n")?;
    stream.flush()
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        202 => "Accepted",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        413 => "Payload Too Large",
        431 => "Request Header Fields Too Large",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        505 => "HTTP Version Not Supported",
        _ => "Error",
    }
}
