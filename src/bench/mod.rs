//! Benchmarks against the physical limit and a peer (issue 6).
//!
//! A benchmark *subject* ([`RoundTrip`]) completes a number of echo round trips with a
//! child process, keeping a given number in flight. The subjects are:
//! - the floors ([`floor::FloorPeer`]): one thread writing a ~120-byte line to the
//!   child and reading the answer, raw (the pipe floor) or with serde_json on both sides
//!   (the JSON floor);
//! - `floor_shape` ([`shape::ShapePeer`]): the host's four thread hand-offs per call
//!   with the same spinning, over bounded channels, with no protocol work;
//! - the host ([`octet::OctetPeer`]): a real `tool/call` through the dispatcher, writer
//!   and reader threads to the SDK's `test-extension` or to the bare echo extension;
//! - peers added by the caller (the `lsp-server` peer lives in `benches/`, since
//!   `lsp-server` is a dev-dependency).
//!
//! [`suite::run`] measures them all in one run, interleaved in rounds so that ratios
//! stay meaningful on a noisy machine, together with frame decoding, memory per idle
//! extension and a fleet of busy extensions. `octet-host bench` prints its table; the
//! children are the crate's own binary (`octet-host __bench-echo MODE`, see [`echo`]).

pub mod echo;
pub mod floor;
pub mod measure;
pub mod octet;
pub mod shape;
pub mod suite;

use std::fmt;
use std::io;
use std::time::Duration;

use serde_json::{json, Value};

use crate::host::{CallError, StartError};

/// The text every round trip echoes; the floors' request line is about 120 bytes.
pub const ECHO_TEXT: &str = "the quick brown fox jumps";

/// The tool arguments every round trip carries: `{"text": ECHO_TEXT}`.
pub fn echo_arguments() -> Value {
    json!({ "text": ECHO_TEXT })
}

/// The text the echo answers with: the arguments as compact JSON.
pub fn echo_answer_text() -> String {
    echo_arguments().to_string()
}

/// Completes `calls` round trips on `state` keeping at most `depth` in flight: sends
/// `depth` calls, then after each answer (`receive` with its 0-based number) sends the
/// next until `calls` were sent; returns the time it took.
pub fn pipelined<S>(
    state: &mut S,
    calls: u64,
    depth: usize,
    mut send: impl FnMut(&mut S) -> Result<(), BenchError>,
    mut receive: impl FnMut(&mut S, u64) -> Result<(), BenchError>,
) -> Result<Duration, BenchError> {
    let start = std::time::Instant::now();
    let mut sent = 0;
    while sent < calls.min(depth.max(1) as u64) {
        send(state)?;
        sent += 1;
    }
    for answered in 0..calls {
        receive(state, answered)?;
        if sent < calls {
            send(state)?;
            sent += 1;
        }
    }
    Ok(start.elapsed())
}

/// Something that completes echo round trips with a child process.
pub trait RoundTrip {
    /// The subject's name in reports.
    fn name(&self) -> &str;

    /// Completes `calls` round trips keeping at most `depth` in flight (depth 1: one
    /// at a time) and returns the time they took.
    fn run(&mut self, calls: u64, depth: usize) -> Result<Duration, BenchError>;
}

/// Why a benchmark could not run.
#[derive(Debug)]
pub enum BenchError {
    /// Spawning, reading or writing failed.
    Io(io::Error),
    /// A frame was not the JSON expected.
    Json(serde_json::Error),
    /// A `Content-Length` frame is malformed.
    Framing,
    /// The echo child closed its stdout before answering every call.
    ChildClosed,
    /// An answer did not echo its request.
    WrongAnswer {
        /// The 0-based number of the call in its run.
        call: u64,
    },
    /// An extension could not be started.
    Start(StartError),
    /// A call through the host failed.
    Call(CallError),
    /// The host reports no process for a started extension.
    NoProcess {
        /// The extension.
        extension: String,
    },
}

impl fmt::Display for BenchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BenchError::Io(e) => write!(f, "I/O failed: {e}"),
            BenchError::Json(e) => write!(f, "unexpected JSON: {e}"),
            BenchError::Framing => f.write_str("malformed Content-Length frame"),
            BenchError::ChildClosed => f.write_str("the echo child closed its stdout early"),
            BenchError::WrongAnswer { call } => {
                write!(f, "the answer to call {call} does not echo its request")
            }
            BenchError::Start(e) => write!(f, "cannot start an extension: {e}"),
            BenchError::Call(e) => write!(f, "a call failed: {e}"),
            BenchError::NoProcess { extension } => {
                write!(f, "the host reports no process for `{extension}`")
            }
        }
    }
}

impl std::error::Error for BenchError {}

impl From<io::Error> for BenchError {
    fn from(error: io::Error) -> BenchError {
        BenchError::Io(error)
    }
}

impl From<serde_json::Error> for BenchError {
    fn from(error: serde_json::Error) -> BenchError {
        BenchError::Json(error)
    }
}

impl From<StartError> for BenchError {
    fn from(error: StartError) -> BenchError {
        BenchError::Start(error)
    }
}

impl From<CallError> for BenchError {
    fn from(error: CallError) -> BenchError {
        BenchError::Call(error)
    }
}

/// Reads `VmRSS` and `RssAnon` (KiB) of process `pid` from `/proc/<pid>/status`.
pub fn rss_kib(pid: u32) -> io::Result<Rss> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|n| n.parse::<u64>().ok())
            .unwrap_or(0)
    };
    Ok(Rss {
        resident_kib: field("VmRSS:"),
        anonymous_kib: field("RssAnon:"),
    })
}

/// CPU time (user and system) this process has used so far, from `getrusage`.
pub fn process_cpu_time() -> io::Result<std::time::Duration> {
    // SAFETY: `getrusage` fills the zeroed struct it is given and reads nothing else.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        if libc::getrusage(libc::RUSAGE_SELF, &mut usage) != 0 {
            return Err(io::Error::last_os_error());
        }
        usage
    };
    let micros = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
    Ok(std::time::Duration::from_micros(
        micros(usage.ru_utime) + micros(usage.ru_stime),
    ))
}

/// CPU time of the thread of this process named `name` (its `comm`, as Linux shows it
/// in `/proc/self/task/*/stat`), if one runs; the sum when several do.
#[cfg(target_os = "linux")]
pub fn thread_cpu_time(name: &str) -> io::Result<Option<std::time::Duration>> {
    // SAFETY: sysconf only reads a configuration value.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    let mut total = None;
    for task in std::fs::read_dir("/proc/self/task")? {
        let Ok(stat) = std::fs::read_to_string(task?.path().join("stat")) else {
            continue;
        };
        // `pid (comm) state ... utime stime`: comm may hold spaces, so split after
        // the last parenthesis; utime and stime are the 12th and 13th fields after it.
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            continue;
        };
        if &stat[open + 1..close] != name {
            continue;
        }
        let fields: Vec<&str> = stat[close + 1..].split_whitespace().collect();
        let field = |i: usize| fields.get(i).and_then(|f| f.parse::<u64>().ok());
        if let (Some(user), Some(system)) = (field(11), field(12)) {
            let micros = (user + system) * 1_000_000 / ticks;
            *total.get_or_insert(std::time::Duration::ZERO) +=
                std::time::Duration::from_micros(micros);
        }
    }
    Ok(total)
}

/// Without `/proc`, no thread's CPU time is known.
#[cfg(not(target_os = "linux"))]
pub fn thread_cpu_time(_name: &str) -> io::Result<Option<std::time::Duration>> {
    Ok(None)
}

/// Resident memory of one process.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Rss {
    /// `VmRSS`: every resident page, shared ones (the binary's text) included.
    pub resident_kib: u64,
    /// `RssAnon`: resident private anonymous pages (heap and stacks).
    pub anonymous_kib: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_this_process_rss() {
        let rss = rss_kib(std::process::id()).unwrap();
        assert!(rss.resident_kib > 0);
        assert!(rss.anonymous_kib > 0);
        assert!(rss.anonymous_kib <= rss.resident_kib);
    }

    #[test]
    fn the_answer_text_is_the_compact_arguments() {
        assert_eq!(echo_answer_text(), format!("{{\"text\":\"{ECHO_TEXT}\"}}"));
    }
}
