//! The floors: one thread talking to an echo child over its pipes, with nothing else
//! in the way. `floor_pipe` moves a fixed ~120-byte line; `floor_json` builds, encodes
//! and parses JSON-RPC with serde_json on both sides.
//!
//! With more than one call in flight, every read is answered with one write carrying
//! a new request per answer it completed: the best a single thread can do.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::echo::EchoMode;
use super::{echo_answer_text, echo_arguments, BenchError, RoundTrip};

/// Bytes read from the child's stdout at a time.
const READ_BUFFER_BYTES: usize = 64 * 1024;

/// Which floor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FloorMode {
    /// Raw lines, no JSON: the pipe floor.
    Pipe,
    /// serde_json on both sides: the JSON floor.
    Json,
    /// The JSON floor with the measuring thread and the child pinned to one CPU
    /// during each run (Linux only; elsewhere the same as [`FloorMode::Json`]).
    ///
    /// A blocking ping-pong costs very different amounts depending on where the
    /// scheduler puts its two ends: on one CPU each hand-off is a cheap switch, on
    /// two each one wakes an idle CPU, which on a virtual machine costs an
    /// inter-processor interrupt (about 8 against 50 µs per call on the benchmark
    /// machine). Unpinned, [`FloorMode::Json`] lands on either; this one is always
    /// the cheap case: the true physical limit of the exchange.
    JsonOneCpu,
}

impl FloorMode {
    /// The subject's name in reports.
    pub fn name(self) -> &'static str {
        match self {
            FloorMode::Pipe => "floor_pipe",
            FloorMode::Json => "floor_json",
            FloorMode::JsonOneCpu => "floor_json 1cpu",
        }
    }

    fn echo(self) -> EchoMode {
        match self {
            FloorMode::Pipe => EchoMode::Raw,
            FloorMode::Json | FloorMode::JsonOneCpu => EchoMode::Json,
        }
    }
}

/// A floor subject: an echo child and the thread that talks to it.
#[derive(Debug)]
pub struct FloorPeer {
    mode: FloorMode,
    child: Child,
    /// `None` only while dropping (closing it lets the child end).
    stdin: Option<ChildStdin>,
    stdout: ChildStdout,
    read_buffer: Vec<u8>,
    /// Bytes of an answer not yet complete.
    partial: Vec<u8>,
    /// The raw line (`FloorMode::Pipe`), LF included.
    line: Vec<u8>,
    /// The id of the next request and of the next expected answer.
    next_id: u64,
    next_answer: u64,
    expected_text: String,
}

impl FloorPeer {
    /// Spawns `exe __bench-echo raw|json`.
    pub fn spawn(exe: &Path, mode: FloorMode) -> Result<FloorPeer, BenchError> {
        let mut child = Command::new(exe)
            .args(["__bench-echo", mode.echo().as_str()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()?;
        let stdin = child.stdin.take().expect("stdin is piped");
        let stdout = child.stdout.take().expect("stdout is piped");
        let mut line = serde_json::to_vec(&request(0))?;
        line.push(b'\n');
        Ok(FloorPeer {
            mode,
            child,
            stdin: Some(stdin),
            stdout,
            read_buffer: vec![0; READ_BUFFER_BYTES],
            partial: Vec::new(),
            line,
            next_id: 0,
            next_answer: 0,
            expected_text: echo_answer_text(),
        })
    }

    /// The echo child's process id.
    pub fn child_id(&self) -> u32 {
        self.child.id()
    }

    /// The request line `floor_pipe` sends, LF included (about 120 bytes).
    pub fn line(&self) -> &[u8] {
        &self.line
    }

    fn encode(&mut self, out: &mut Vec<u8>) -> Result<(), BenchError> {
        match self.mode {
            FloorMode::Pipe => out.extend_from_slice(&self.line),
            FloorMode::Json | FloorMode::JsonOneCpu => {
                serde_json::to_writer(&mut *out, &request(self.next_id))?;
                out.push(b'\n');
            }
        }
        self.next_id += 1;
        Ok(())
    }

    fn check(&mut self, answer: &[u8], call: u64) -> Result<(), BenchError> {
        let expected = self.next_answer;
        self.next_answer += 1;
        let good = match self.mode {
            FloorMode::Pipe => self.line.strip_suffix(b"\n") == Some(answer),
            FloorMode::Json | FloorMode::JsonOneCpu => {
                let answer: Value = serde_json::from_slice(answer)?;
                answer["id"] == expected
                    && answer["result"]["content"][0]["text"] == self.expected_text.as_str()
            }
        };
        if good {
            Ok(())
        } else {
            Err(BenchError::WrongAnswer { call })
        }
    }
}

/// The floors' request: a `tool/call` of `echo` with [`echo_arguments`].
fn request(id: u64) -> Value {
    json!({
        "jsonrpc": "2.0",
        "id": id,
        "method": "tool/call",
        "params": {"name": "echo", "arguments": echo_arguments()},
    })
}

impl RoundTrip for FloorPeer {
    fn name(&self) -> &str {
        self.mode.name()
    }

    fn run(&mut self, calls: u64, depth: usize) -> Result<Duration, BenchError> {
        if self.mode == FloorMode::JsonOneCpu {
            let child = self.child.id();
            return one_cpu::run_pinned(child, || self.exchange(calls, depth))?;
        }
        self.exchange(calls, depth)
    }
}

impl FloorPeer {
    /// The ping-pong itself: see the module documentation.
    fn exchange(&mut self, calls: u64, depth: usize) -> Result<Duration, BenchError> {
        let start = Instant::now();
        let depth = depth.max(1) as u64;
        let mut out = Vec::new();
        let mut sent = 0;
        while sent < calls.min(depth) {
            self.encode(&mut out)?;
            sent += 1;
        }
        let mut answered = 0;
        while answered < calls {
            if !out.is_empty() {
                self.stdin
                    .as_mut()
                    .expect("stdin is open")
                    .write_all(&out)?;
                out.clear();
            }
            let read = self.stdout.read(&mut self.read_buffer)?;
            if read == 0 {
                return Err(BenchError::ChildClosed);
            }
            let mut partial = std::mem::take(&mut self.partial);
            partial.extend_from_slice(&self.read_buffer[..read]);
            let mut consumed = 0;
            while let Some(at) = partial[consumed..].iter().position(|&b| b == b'\n') {
                self.check(&partial[consumed..consumed + at], answered)?;
                consumed += at + 1;
                answered += 1;
                if sent < calls {
                    self.encode(&mut out)?;
                    sent += 1;
                }
            }
            partial.drain(..consumed);
            self.partial = partial;
        }
        Ok(start.elapsed())
    }
}

/// Pinning a run to one CPU.
#[cfg(target_os = "linux")]
mod one_cpu {
    use std::io;
    use std::mem::{size_of, zeroed};

    /// Pins the calling thread and process `child` to the CPU the thread runs on now,
    /// runs `f`, and gives the thread its previous CPU set back (the child stays
    /// pinned until the next run pins it again).
    pub(super) fn run_pinned<T>(child: u32, f: impl FnOnce() -> T) -> io::Result<T> {
        let child = libc::pid_t::try_from(child).map_err(io::Error::other)?;
        let size = size_of::<libc::cpu_set_t>();
        // SAFETY: cpu_set_t is plain data that the CPU_* helpers and the
        // sched_*affinity calls read and write within `size` bytes.
        unsafe {
            let mut previous: libc::cpu_set_t = zeroed();
            if libc::sched_getaffinity(0, size, &mut previous) != 0 {
                return Err(io::Error::last_os_error());
            }
            let cpu = libc::sched_getcpu();
            if cpu < 0 {
                return Err(io::Error::last_os_error());
            }
            let mut one: libc::cpu_set_t = zeroed();
            libc::CPU_SET(cpu as usize, &mut one);
            if libc::sched_setaffinity(child, size, &one) != 0
                || libc::sched_setaffinity(0, size, &one) != 0
            {
                let error = io::Error::last_os_error();
                libc::sched_setaffinity(0, size, &previous);
                return Err(error);
            }
            let out = f();
            libc::sched_setaffinity(0, size, &previous);
            Ok(out)
        }
    }
}

/// Without CPU affinity, the run is not pinned.
#[cfg(not(target_os = "linux"))]
mod one_cpu {
    pub(super) fn run_pinned<T>(_child: u32, f: impl FnOnce() -> T) -> std::io::Result<T> {
        Ok(f())
    }
}

impl Drop for FloorPeer {
    fn drop(&mut self) {
        // EOF on its stdin ends the child.
        drop(self.stdin.take());
        let _ = self.child.wait();
    }
}
