//! `floor_shape`: the host's thread shape with no protocol work, the limit of the
//! architecture DESIGN.md keeps (issue 19).
//!
//! A call crosses the same four hand-offs as through the host, over bounded crossbeam
//! channels with the same spinning before each sleep (the host's `spin` module): the caller
//! sends the call to a dispatcher thread, which encodes the request and hands the
//! frame to a writer thread; the writer writes it to the JSON echo child's stdin; a
//! reader thread splits and parses the child's answers and hands them to the
//! dispatcher, which matches each to its pending id and answers the caller. There is
//! no validation, no lifecycle, no timers: what is left is the cost of the shape.
//! Like every floor it compares shapes on one machine, in one run; it is not a host.

use std::collections::HashSet;
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::thread::JoinHandle;
use std::time::Duration;

use crossbeam_channel::{bounded, select, Receiver, Sender};
use serde_json::{json, Value};

use super::{echo_answer_text, echo_arguments, pipelined, BenchError, RoundTrip};
use crate::spin::{spin_until, DEFAULT_SPIN_BEFORE_SLEEP};

/// Capacity of each channel between the threads, as the host's writer queue.
const CHANNEL_CAPACITY: usize = 128;

/// Bytes read from the child's stdout at a time.
const READ_BUFFER_BYTES: usize = 64 * 1024;

/// The `floor_shape` subject: its threads and the echo child.
#[derive(Debug)]
pub struct ShapePeer {
    /// Calls to the dispatcher; `None` only while dropping (closing it ends the
    /// threads and, through the writer, the child).
    calls: Option<Sender<u64>>,
    answers: Receiver<Result<Value, BenchError>>,
    next_id: u64,
    expected_text: String,
    child: Child,
    threads: Vec<JoinHandle<()>>,
}

impl ShapePeer {
    /// Spawns `exe __bench-echo json` and the dispatcher, writer and reader threads.
    pub fn spawn(exe: &Path) -> Result<ShapePeer, BenchError> {
        let mut child = Command::new(exe)
            .args(["__bench-echo", "json"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()?;
        let stdin = child.stdin.take().expect("stdin is piped");
        let stdout = child.stdout.take().expect("stdout is piped");
        let (calls_tx, calls_rx) = bounded(CHANNEL_CAPACITY);
        let (frames_tx, frames_rx) = bounded(CHANNEL_CAPACITY);
        let (read_tx, read_rx) = bounded(CHANNEL_CAPACITY);
        let (answers_tx, answers_rx) = bounded(CHANNEL_CAPACITY);
        let threads = vec![
            spawn("shape-dispatcher", move || {
                dispatcher(calls_rx, read_rx, frames_tx, answers_tx)
            })?,
            spawn("shape-writer", move || writer(frames_rx, stdin))?,
            spawn("shape-reader", move || reader(stdout, read_tx))?,
        ];
        Ok(ShapePeer {
            calls: Some(calls_tx),
            answers: answers_rx,
            next_id: 0,
            expected_text: echo_answer_text(),
            child,
            threads,
        })
    }

    fn call(&mut self) -> Result<(), BenchError> {
        let id = self.next_id;
        self.next_id += 1;
        let calls = self.calls.as_ref().expect("open until dropped");
        calls.send(id).map_err(|_| BenchError::ChildClosed)
    }

    fn answer(&mut self, call: u64) -> Result<(), BenchError> {
        spin_until(DEFAULT_SPIN_BEFORE_SLEEP, || !self.answers.is_empty());
        let answer = self.answers.recv().map_err(|_| BenchError::ChildClosed)??;
        if answer["content"][0]["text"] == self.expected_text.as_str() {
            Ok(())
        } else {
            Err(BenchError::WrongAnswer { call })
        }
    }
}

impl RoundTrip for ShapePeer {
    fn name(&self) -> &str {
        "floor_shape"
    }

    fn run(&mut self, calls: u64, depth: usize) -> Result<Duration, BenchError> {
        pipelined(self, calls, depth, ShapePeer::call, ShapePeer::answer)
    }
}

impl Drop for ShapePeer {
    fn drop(&mut self) {
        // The dispatcher ends with the calls, the writer with the frames (closing the
        // child's stdin, which ends the child), the reader at the child's EOF.
        drop(self.calls.take());
        let _ = self.child.wait();
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

fn spawn(name: &str, f: impl FnOnce() + Send + 'static) -> Result<JoinHandle<()>, BenchError> {
    // The host's own threads follow the load's scheduler slice (`slice.rs`); so do these.
    let run = move || {
        crate::slice::own_thread();
        f()
    };
    Ok(std::thread::Builder::new().name(name.into()).spawn(run)?)
}

/// Encodes each call into a frame for the writer and answers the caller with each
/// result the reader parsed, by its pending id.
fn dispatcher(
    calls: Receiver<u64>,
    read: Receiver<Result<Value, BenchError>>,
    frames: Sender<Vec<u8>>,
    answers: Sender<Result<Value, BenchError>>,
) {
    let mut pending = HashSet::new();
    loop {
        spin_until(DEFAULT_SPIN_BEFORE_SLEEP, || {
            !calls.is_empty() || !read.is_empty()
        });
        select! {
            recv(calls) -> id => {
                let Ok(id) = id else { return };
                let request = json!({
                    "jsonrpc": "2.0",
                    "id": id,
                    "method": "tool/call",
                    "params": {"name": "echo", "arguments": echo_arguments()},
                });
                let mut frame = serde_json::to_vec(&request).expect("plain data serializes");
                frame.push(b'\n');
                pending.insert(id);
                if frames.send(frame).is_err() {
                    return;
                }
            },
            recv(read) -> answer => {
                let answer = match answer {
                    Ok(Ok(mut answer)) => match answer["id"].as_u64() {
                        Some(id) if pending.remove(&id) => Ok(answer["result"].take()),
                        _ => Err(BenchError::Framing),
                    },
                    Ok(Err(error)) => Err(error),
                    Err(_) => Err(BenchError::ChildClosed),
                };
                if answers.send(answer).is_err() {
                    return;
                }
            },
        }
    }
}

/// Writes frames to the child's stdin, every frame waiting in one write.
fn writer(frames: Receiver<Vec<u8>>, mut stdin: ChildStdin) {
    let mut out = Vec::new();
    loop {
        spin_until(DEFAULT_SPIN_BEFORE_SLEEP, || !frames.is_empty());
        let Ok(frame) = frames.recv() else { return };
        out.extend_from_slice(&frame);
        while let Ok(frame) = frames.try_recv() {
            out.extend_from_slice(&frame);
        }
        if stdin.write_all(&out).is_err() {
            return;
        }
        out.clear();
    }
}

/// Reads the child's stdout, splits it into lines and parses each. Like the host's
/// reader it first looks for the next answer with zero-timeout polls, then sleeps
/// (here in the read itself).
fn reader(mut stdout: ChildStdout, read: Sender<Result<Value, BenchError>>) {
    use std::os::fd::AsRawFd;
    let fd = stdout.as_raw_fd();
    let readable = || {
        let mut poll = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd, a zero timeout.
        unsafe { libc::poll(&mut poll, 1, 0) > 0 }
    };
    let mut buffer = vec![0; READ_BUFFER_BYTES];
    let mut partial = Vec::new();
    loop {
        spin_until(DEFAULT_SPIN_BEFORE_SLEEP, readable);
        let n = match stdout.read(&mut buffer) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        partial.extend_from_slice(&buffer[..n]);
        let mut consumed = 0;
        while let Some(at) = partial[consumed..].iter().position(|&b| b == b'\n') {
            let line = &partial[consumed..consumed + at];
            let answer = serde_json::from_slice(line).map_err(BenchError::Json);
            if read.send(answer).is_err() {
                return;
            }
            consumed += at + 1;
        }
        partial.drain(..consumed);
    }
}
