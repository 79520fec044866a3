//! Starting and stopping the three I/O threads of one generation (DESIGN "Shape").

use std::io;
use std::process::{ChildStderr, ChildStdin, ChildStdout};
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::Duration;

use crossbeam_channel::Sender;
use mio::unix::pipe;
use mio::{Poll, Waker};

use super::gate::ReadGate;
use super::reader::{Reader, WAKE};
use super::spawn::SpawnedChild;
use super::stderr::{StderrDrain, StderrSink, StderrTail};
use super::stop::StopSignal;
use super::writer::{writer_queue, Writer, WriterHandle};
use super::{ConnId, TransportMessage};
use crate::limits::{MAX_FRAME_BYTES, WRITER_QUEUE_FRAMES};
use crate::wire::codec::Codec;

/// Settings of one generation's I/O.
///
/// The decoding mode is not a field (existing struct literals must keep compiling):
/// pass the generation's [`Codec`] to [`start_io_with_codec`] (or
/// [`start_io_with_pipes_and_codec`]); [`start_io`] decodes JSON-RPC. Build the config
/// of a canonical (API 0.3) generation with [`IoConfig::for_codec`], whose frame limit
/// counts the LF on top of the offered `max_frame_bytes`.
#[derive(Clone, Debug)]
pub struct IoConfig {
    /// Largest inbound frame, LF included. Shared so the dispatcher can lower it after
    /// negotiation; the reader applies a change from the next read on. (API 0.3's
    /// `max_frame_bytes` excludes the LF: store it plus one.)
    pub frame_limit: Arc<AtomicUsize>,
    /// Frames the writer queue holds (at least 1).
    pub writer_queue: usize,
    /// How long the reader and the writer yield the CPU, checking for the pipe or the
    /// next frame, before they sleep (see [`crate::host::ExtensionHostBuilder::spin_before_sleep`]); zero
    /// turns it off.
    pub spin_before_sleep: Duration,
}

impl Default for IoConfig {
    /// The default bounds: 1 MiB frames, 128 queued frames (SUPPLEMENT "Default
    /// bounds").
    fn default() -> IoConfig {
        IoConfig {
            frame_limit: Arc::new(AtomicUsize::new(MAX_FRAME_BYTES)),
            writer_queue: WRITER_QUEUE_FRAMES,
            spin_before_sleep: crate::spin::DEFAULT_SPIN_BEFORE_SLEEP,
        }
    }
}

impl IoConfig {
    /// The default bounds with the frame limit `codec` starts with
    /// ([`Codec::initial_frame_limit`]): 1 MiB including the LF for JSON-RPC, 1 MiB
    /// plus the LF for the canonical wire.
    pub fn for_codec(codec: Codec) -> IoConfig {
        IoConfig {
            frame_limit: Arc::new(AtomicUsize::new(codec.initial_frame_limit())),
            ..IoConfig::default()
        }
    }
}

/// The host's ends of a child's three pipes.
#[derive(Debug)]
pub struct ChildPipes {
    /// The write end of the child's stdin.
    pub stdin: ChildStdin,
    /// The read end of the child's stdout.
    pub stdout: ChildStdout,
    /// The read end of the child's stderr.
    pub stderr: ChildStderr,
}

impl SpawnedChild {
    /// Takes all three pipes, or `None` when any of them was taken already.
    pub fn take_pipes(&mut self) -> Option<ChildPipes> {
        if self.stdin.is_none() || self.stdout.is_none() || self.stderr.is_none() {
            return None;
        }
        Some(ChildPipes {
            stdin: self.stdin.take()?,
            stdout: self.stdout.take()?,
            stderr: self.stderr.take()?,
        })
    }
}

/// The running I/O threads of one generation.
///
/// Dropping it stops and joins the threads (see [`GenerationIo::stop`]).
#[derive(Debug)]
pub struct GenerationIo {
    /// Queues frames for the child's stdin.
    pub writer: WriterHandle,
    /// Holds the reader back while the dispatcher is behind or the backlog is full.
    pub read_gate: ReadGate,
    /// The last lines of the child's stderr.
    pub stderr_tail: StderrTail,
    conn: ConnId,
    stop: StopSignal,
    threads: Vec<JoinHandle<()>>,
}

impl GenerationIo {
    /// The connection these threads serve.
    pub fn conn(&self) -> ConnId {
        self.conn
    }

    /// Asks all three threads to end promptly: each is woken wherever it waits (in
    /// `poll` on its pipe, or on a full event channel), even when a grandchild keeps
    /// the pipes open. Closes the writer without writing what is still queued (a
    /// frame being written is cut short). The reader still reports `ReaderClosed` when
    /// the event channel has room. Idempotent; does not wait.
    pub fn stop(&self) {
        self.stop.stop();
    }

    /// True once [`GenerationIo::stop`] was called.
    pub fn is_stopped(&self) -> bool {
        self.stop.is_stopped()
    }

    /// Waits up to `within` for the stderr drain to reach the end of the child's stderr
    /// (it ends when every holder of the pipe has closed it). True when it did.
    pub fn wait_stderr_closed(&self, within: std::time::Duration) -> bool {
        let start = std::time::Instant::now();
        loop {
            let done = self
                .threads
                .get(STDERR_THREAD)
                .is_none_or(JoinHandle::is_finished);
            if done || start.elapsed() >= within {
                return done;
            }
            thread::sleep(std::time::Duration::from_millis(1));
        }
    }

    /// True once all three threads have ended (by themselves or after a stop).
    pub fn is_finished(&self) -> bool {
        self.threads.iter().all(JoinHandle::is_finished)
    }

    /// Waits for all three threads to end. Returns promptly after
    /// [`GenerationIo::stop`]; without a stop it waits until the child closes stdout
    /// and stderr and the writer was closed or failed. A thread that panicked (only the
    /// stderr sink can) is joined like the others; see [`GenerationIo::join_checked`]
    /// to learn of it.
    pub fn join(self) {
        let _ = self.join_checked();
    }

    /// [`GenerationIo::join`], returning the first panic of a thread, if any, after
    /// all threads were joined.
    pub fn join_checked(mut self) -> thread::Result<()> {
        self.join_threads()
    }

    fn join_threads(&mut self) -> thread::Result<()> {
        let mut outcome = Ok(());
        for handle in self.threads.drain(..) {
            if let Err(panic) = handle.join() {
                if outcome.is_ok() {
                    outcome = Err(panic);
                }
            }
        }
        outcome
    }
}

impl Drop for GenerationIo {
    fn drop(&mut self) {
        if !self.threads.is_empty() {
            self.stop.stop();
            let _ = self.join_threads();
        }
    }
}

/// Starts the reader, writer and stderr threads for `child`, taking its three pipes;
/// the reader decodes JSON-RPC (API 0.1, 0.2 and 0.4).
///
/// Fails with `InvalidInput` when a pipe was already taken, or with the error of
/// creating a `Poll` or a thread (then nothing is left running). Threads are named
/// `octet-reader-<conn>`, `octet-writer-<conn>` and `octet-stderr-<conn>`.
pub fn start_io(
    conn: ConnId,
    child: &mut SpawnedChild,
    config: IoConfig,
    events: Sender<TransportMessage>,
    stderr_sink: StderrSink,
) -> io::Result<GenerationIo> {
    start_io_with_codec(conn, child, config, Codec::JsonRpc, events, stderr_sink)
}

/// [`start_io`] with the reader decoding every frame with `codec`, from the first
/// frame on; the codec never changes for the generation. Use
/// [`Codec::for_api`]`(manifest.api_version)`.
pub fn start_io_with_codec(
    conn: ConnId,
    child: &mut SpawnedChild,
    config: IoConfig,
    codec: Codec,
    events: Sender<TransportMessage>,
    stderr_sink: StderrSink,
) -> io::Result<GenerationIo> {
    let pipes = child.take_pipes().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "the child's pipes were already taken",
        )
    })?;
    start_io_with_pipes_and_codec(conn, pipes, config, codec, events, stderr_sink)
}

/// [`start_io`] for pipes taken beforehand.
pub fn start_io_with_pipes(
    conn: ConnId,
    pipes: ChildPipes,
    config: IoConfig,
    events: Sender<TransportMessage>,
    stderr_sink: StderrSink,
) -> io::Result<GenerationIo> {
    start_io_with_pipes_and_codec(conn, pipes, config, Codec::JsonRpc, events, stderr_sink)
}

/// [`start_io_with_codec`] for pipes taken beforehand.
pub fn start_io_with_pipes_and_codec(
    conn: ConnId,
    pipes: ChildPipes,
    config: IoConfig,
    codec: Codec,
    events: Sender<TransportMessage>,
    stderr_sink: StderrSink,
) -> io::Result<GenerationIo> {
    let stop = StopSignal::new();
    let (reader_poll, reader_waker) = stoppable_poll(&stop)?;
    let (writer_poll, _) = stoppable_poll(&stop)?;
    let (stderr_poll, _) = stoppable_poll(&stop)?;
    let read_gate = ReadGate::new(reader_waker);

    let stdin = pipe::Sender::from(pipes.stdin);
    stdin.set_nonblocking(true)?;
    let stdout = pipe::Receiver::from(pipes.stdout);
    stdout.set_nonblocking(true)?;
    let stderr = pipe::Receiver::from(pipes.stderr);
    stderr.set_nonblocking(true)?;

    let (writer, queue) = writer_queue(config.writer_queue, stop.clone());
    let stderr_tail = StderrTail::new();
    let mut io = GenerationIo {
        writer,
        read_gate: read_gate.clone(),
        stderr_tail: stderr_tail.clone(),
        conn,
        stop: stop.clone(),
        threads: Vec::with_capacity(3),
    };

    let reader = Reader {
        conn,
        stdout,
        poll: reader_poll,
        frame_limit: config.frame_limit,
        codec,
        events: events.clone(),
        stop: stop.clone(),
        spin: config.spin_before_sleep,
        gate: read_gate,
    };
    io.threads.push(spawn_named(
        format!("octet-reader-{}", conn.0),
        move || reader.run(),
    )?);

    let writer = Writer {
        conn,
        stdin,
        poll: writer_poll,
        queue,
        events,
        stop: stop.clone(),
        spin: config.spin_before_sleep,
    };
    io.threads.push(spawn_named(
        format!("octet-writer-{}", conn.0),
        move || writer.run(),
    )?);

    let drain = StderrDrain {
        stderr,
        poll: stderr_poll,
        tail: stderr_tail,
        sink: stderr_sink,
        stop,
    };
    io.threads.push(spawn_named(
        format!("octet-stderr-{}", conn.0),
        move || drain.run(),
    )?);
    Ok(io)
}

/// The index of the stderr drain in [`GenerationIo`]'s threads (reader, writer, stderr).
const STDERR_THREAD: usize = 2;

/// A `Poll` whose waker the stop signal fires, and that waker.
fn stoppable_poll(stop: &StopSignal) -> io::Result<(Poll, Arc<Waker>)> {
    let poll = Poll::new()?;
    let waker = Arc::new(Waker::new(poll.registry(), WAKE)?);
    stop.add_waker(waker.clone());
    Ok((poll, waker))
}

fn spawn_named(name: String, body: impl FnOnce() + Send + 'static) -> io::Result<JoinHandle<()>> {
    thread::Builder::new().name(name).spawn(body)
}
