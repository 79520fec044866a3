//! The writer thread: sole owner of a child's stdin (reference, "Transport defaults":
//! one bounded writer serializes complete frames and never abandons a partially written
//! frame).
//!
//! Frames arrive over a bounded queue ([`WriterHandle`]). The writer takes the next
//! frame, plus whatever else is already queued up to [`COALESCE_BYTES`], marks each
//! one started ([`super::FrameState::try_start`]; frames cancelled before that are
//! skipped and never written, section 1.9), writes the started ones as one buffer with
//! non-blocking writes, and reports [`TransportEvent::Written`] with the number of
//! frames that left the queue (written and skipped); when the event channel is full,
//! the counts of several batches are merged into one report sent as soon as there is
//! room (the writer never waits on the dispatcher while frames may be queued). When
//! the pipe is full it waits for writability or a stop, so a child that never reads
//! its stdin cannot wedge the thread. A started frame is written completely unless the pipe breaks or the
//! generation is stopped.
//!
//! A write error (usually `EPIPE`: the child closed its stdin or exited) is reported
//! once as [`TransportEvent::WriterFailed`], and the writer ends.
//!
//! # SIGPIPE
//!
//! Writing to a pipe whose read end is closed raises `SIGPIPE` before failing with
//! `EPIPE`, and pipes have no `MSG_NOSIGNAL`. The Rust runtime sets `SIGPIPE` to
//! "ignore" before `main` in every Rust binary (test harnesses included), so the write
//! just fails with `EPIPE`. A program embedding this library from a non-Rust `main`
//! must ignore `SIGPIPE` itself, or a child exiting early kills the host.

use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crossbeam_channel::{Receiver, Select, Sender, TrySendError};
use mio::unix::pipe;
use mio::{Events, Interest, Poll};

use super::reader::{wait, PIPE};
use super::stop::{deliver, Delivery, StopSignal};
use super::{ConnId, OutboundFrame, TransportEvent, TransportMessage};

/// The writer stops adding queued frames to one write once the buffer holds this many
/// bytes; frames left in the queue stay cancellable. A single larger frame is written
/// whole. (The Linux pipe buffer holds 64 KiB.)
pub const COALESCE_BYTES: usize = 64 * 1024;

/// The writer no longer accepts frames: it was closed, it failed, or the generation
/// was stopped. Carries the frame back, unwritten.
#[derive(Debug)]
pub struct WriterClosed(pub OutboundFrame);

impl std::fmt::Display for WriterClosed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the writer is closed")
    }
}

impl std::error::Error for WriterClosed {}

/// Why [`WriterHandle::try_send`] did not queue a frame; both carry the frame back.
#[derive(Debug)]
pub enum TrySendFrameError {
    /// The queue is full.
    Full(OutboundFrame),
    /// The writer no longer accepts frames.
    Closed(OutboundFrame),
}

/// The dispatcher's side of a writer: queues frames for the child's stdin.
///
/// The queue holds `writer_queue` frames (see [`super::io::IoConfig`]). The dispatcher
/// is expected to count frames it queued against the [`TransportEvent::Written`]
/// reports and never queue more than the bound, so [`WriterHandle::send`] does not wait
/// in practice.
#[derive(Clone, Debug)]
pub struct WriterHandle {
    frames: Sender<OutboundFrame>,
    close: Sender<()>,
    closing: Arc<AtomicBool>,
    report: Arc<AtomicBool>,
    stop: StopSignal,
}

impl WriterHandle {
    /// Queues `frame`, waiting while the queue is full. Fails, returning the frame, once
    /// the writer was closed, has ended, or the generation is stopped.
    pub fn send(&self, frame: OutboundFrame) -> Result<(), WriterClosed> {
        if self.is_closed() {
            return Err(WriterClosed(frame));
        }
        let mut select = Select::new();
        let send = select.send(&self.frames);
        let _stopped = select.recv(self.stop.receiver());
        let operation = select.select();
        if operation.index() == send {
            return operation
                .send(&self.frames, frame)
                .map_err(|e| WriterClosed(e.into_inner()));
        }
        let _ = operation.recv(self.stop.receiver());
        Err(WriterClosed(frame))
    }

    /// Queues `frame` if there is room now.
    pub fn try_send(&self, frame: OutboundFrame) -> Result<(), TrySendFrameError> {
        if self.is_closed() {
            return Err(TrySendFrameError::Closed(frame));
        }
        self.frames.try_send(frame).map_err(|e| match e {
            TrySendError::Full(frame) => TrySendFrameError::Full(frame),
            TrySendError::Disconnected(frame) => TrySendFrameError::Closed(frame),
        })
    }

    /// Closes the writer: everything already queued is still written, then the child's
    /// stdin is closed (the EOF fallback of section 1.8: "transport lost or finally torn
    /// down"). Frames sent afterwards are refused. Idempotent.
    pub fn close(&self) {
        self.closing.store(true, Ordering::Release);
        let _ = self.close.try_send(());
    }

    /// True once [`WriterHandle::close`] was called or the generation was stopped.
    pub fn is_closed(&self) -> bool {
        self.closing.load(Ordering::Acquire) || self.stop.is_stopped()
    }

    /// Turns [`TransportEvent::Written`] reports on or off (on by default). A dispatcher
    /// that only needs them while frames wait for room in the queue turns them off the
    /// rest of the time, saving one wake-up per write. Turn them on before the last
    /// look at a full queue: a writer that makes room after that point reports it.
    pub fn report_written(&self, on: bool) {
        self.report.store(on, Ordering::SeqCst);
    }

    /// Frames waiting in the queue now (not yet taken by the writer).
    pub fn queued(&self) -> usize {
        self.frames.len()
    }

    /// The queue's capacity in frames.
    pub fn capacity(&self) -> usize {
        self.frames.capacity().unwrap_or(usize::MAX)
    }
}

/// Creates a writer's queue: the handle and the thread's side.
pub(crate) fn writer_queue(capacity: usize, stop: StopSignal) -> (WriterHandle, WriterQueue) {
    let (frames_tx, frames_rx) = crossbeam_channel::bounded(capacity.max(1));
    let (close_tx, close_rx) = crossbeam_channel::bounded(1);
    let handle = WriterHandle {
        frames: frames_tx,
        close: close_tx,
        closing: Arc::new(AtomicBool::new(false)),
        report: Arc::new(AtomicBool::new(true)),
        stop,
    };
    let queue = WriterQueue {
        frames: frames_rx,
        close: close_rx,
        report: handle.report.clone(),
    };
    (handle, queue)
}

/// The writer thread's side of the queue.
pub(crate) struct WriterQueue {
    frames: Receiver<OutboundFrame>,
    close: Receiver<()>,
    /// Whether `Written` reports are wanted (see [`WriterHandle::report_written`]).
    report: Arc<AtomicBool>,
}

/// Everything the writer thread owns.
pub(crate) struct Writer {
    pub(crate) conn: ConnId,
    pub(crate) stdin: pipe::Sender,
    pub(crate) poll: Poll,
    pub(crate) queue: WriterQueue,
    pub(crate) events: Sender<TransportMessage>,
    pub(crate) stop: StopSignal,
    /// How long to spin before sleeping for the next frame (see [`crate::spin`]).
    pub(crate) spin: std::time::Duration,
}

/// Why a write did not complete.
enum WriteEnd {
    Stopped,
    Failed(io::Error),
}

/// How the writer's loop ended.
enum Exit {
    /// Stopped, closed and drained, every handle dropped, or the dispatcher gone.
    Done,
    /// Writing failed; report it.
    Failed(io::Error),
}

impl Writer {
    /// The thread body.
    ///
    /// The writer never waits on the dispatcher's event channel while frames may still
    /// be queued: a dispatcher blocked in [`WriterHandle::send`] on a full queue must
    /// not wait for a writer that waits for the dispatcher. `Written` counts are
    /// therefore sent when the channel has room, merged while it has none, and the
    /// last ones (and `WriterFailed`) are delivered only after the queue and stdin
    /// were dropped.
    pub(crate) fn run(self) {
        crate::slice::own_thread();
        let Writer {
            conn,
            mut stdin,
            mut poll,
            queue,
            events,
            stop,
            spin,
        } = self;
        let mut loop_state = WriteLoop {
            conn,
            queue: &queue,
            events: &events,
            stop: &stop,
            spin,
            pending: 0,
        };
        let exit = match poll
            .registry()
            .register(&mut stdin, PIPE, Interest::WRITABLE)
        {
            Ok(()) => loop_state.run(&mut stdin, &mut poll),
            Err(error) => Exit::Failed(error),
        };
        let pending = loop_state.pending;
        // Closing stdin (EOF for the child) and refusing further frames come first.
        drop(stdin);
        drop(queue);
        let report = |event| {
            deliver(&events, &stop, TransportMessage { conn, event }) == Delivery::Delivered
        };
        if pending > 0 && !report(TransportEvent::Written { frames: pending }) {
            return;
        }
        if let Exit::Failed(error) = exit {
            report(TransportEvent::WriterFailed { error });
        }
    }
}

/// The writer's loop, borrowing what it needs from [`Writer`].
struct WriteLoop<'a> {
    conn: ConnId,
    queue: &'a WriterQueue,
    events: &'a Sender<TransportMessage>,
    stop: &'a StopSignal,
    spin: std::time::Duration,
    /// Frames taken off the queue but not reported yet.
    pending: usize,
}

impl WriteLoop<'_> {
    fn run(&mut self, stdin: &mut pipe::Sender, poll: &mut Poll) -> Exit {
        let mut events = Events::with_capacity(4);
        let mut buffer = Vec::new();
        let mut closing = false;
        loop {
            let first = match self.next_frame(&mut closing) {
                Next::Frame(frame) => frame,
                Next::Done => return Exit::Done,
            };
            let mut batch = vec![first];
            let mut batch_bytes = batch[0].bytes.len();
            while batch_bytes < COALESCE_BYTES {
                match self.queue.frames.try_recv() {
                    Ok(frame) => {
                        batch_bytes += frame.bytes.len();
                        batch.push(frame);
                    }
                    Err(_) => break,
                }
            }
            if self.stop.is_stopped() {
                return Exit::Done;
            }
            let taken = batch.len();
            let wipe = batch.iter().any(|frame| frame.wipe);
            let mut started = batch
                .into_iter()
                .filter(|frame| frame.state.as_ref().is_none_or(|s| s.try_start()));
            let data: &[u8] = match (started.next(), started.next()) {
                (None, _) => &[],
                (Some(only), None) => {
                    buffer = only.bytes;
                    &buffer
                }
                (Some(a), Some(b)) => {
                    buffer.clear();
                    for mut frame in [a, b].into_iter().chain(started) {
                        buffer.extend_from_slice(&frame.bytes);
                        if frame.wipe {
                            crate::wipe::wipe_bytes(&mut frame.bytes);
                        }
                    }
                    &buffer
                }
            };
            let written = write_all(stdin, poll, &mut events, self.stop, data);
            if wipe {
                // Section 2.10: best-effort wipe of the serialized frame after use.
                crate::wipe::wipe_bytes(&mut buffer);
            }
            match written {
                Ok(()) => {}
                Err(WriteEnd::Stopped) => return Exit::Done,
                Err(WriteEnd::Failed(error)) => return Exit::Failed(error),
            }
            if buffer.capacity() > 2 * COALESCE_BYTES {
                buffer = Vec::new();
            }
            if !self.queue.report.load(Ordering::SeqCst) {
                self.pending = 0;
                continue;
            }
            self.pending += taken;
            match self.events.try_send(self.written()) {
                Ok(()) => self.pending = 0,
                Err(TrySendError::Full(_)) => {}
                Err(TrySendError::Disconnected(_)) => return Exit::Done,
            }
        }
    }

    /// The `Written` report of every pending frame.
    fn written(&self) -> TransportMessage {
        TransportMessage {
            conn: self.conn,
            event: TransportEvent::Written {
                frames: self.pending,
            },
        }
    }

    /// Waits for the next frame, meanwhile reporting pending `Written` counts as soon
    /// as the event channel has room.
    fn next_frame(&mut self, closing: &mut bool) -> Next {
        loop {
            if self.stop.is_stopped() {
                return Next::Done;
            }
            if *closing {
                return match self.queue.frames.try_recv() {
                    Ok(frame) => Next::Frame(frame),
                    Err(_) => Next::Done,
                };
            }
            // The next frame often follows within microseconds (the dispatcher
            // answers a burst, or the next call of a caller that just got its answer).
            crate::spin::spin_until(self.spin, || {
                !self.queue.frames.is_empty() || self.stop.is_stopped()
            });
            let mut select = Select::new();
            let frames = select.recv(&self.queue.frames);
            let close = select.recv(&self.queue.close);
            let stopped = select.recv(self.stop.receiver());
            let report = (self.pending > 0).then(|| select.send(self.events));
            let operation = select.select();
            let index = operation.index();
            if index == frames {
                return match operation.recv(&self.queue.frames) {
                    Ok(frame) => Next::Frame(frame),
                    // Every handle is gone: nothing more can come; close stdin.
                    Err(_) => Next::Done,
                };
            } else if index == close {
                // A close request, or every handle dropped: drain, then close stdin.
                let _ = operation.recv(&self.queue.close);
                *closing = true;
            } else if index == stopped {
                let _ = operation.recv(self.stop.receiver());
                return Next::Done;
            } else {
                debug_assert_eq!(Some(index), report);
                match operation.send(self.events, self.written()) {
                    Ok(()) => self.pending = 0,
                    Err(_) => return Next::Done,
                }
            }
        }
    }
}

/// What [`WriteLoop::next_frame`] found.
enum Next {
    Frame(OutboundFrame),
    Done,
}

/// Writes all of `data` with non-blocking writes, waiting for writability (or a stop)
/// whenever the pipe is full.
fn write_all(
    stdin: &mut pipe::Sender,
    poll: &mut Poll,
    events: &mut Events,
    stop: &StopSignal,
    data: &[u8],
) -> Result<(), WriteEnd> {
    let mut written = 0;
    while written < data.len() {
        match stdin.write(&data[written..]) {
            Ok(0) => {
                return Err(WriteEnd::Failed(io::Error::from(io::ErrorKind::WriteZero)));
            }
            Ok(n) => written += n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                if stop.is_stopped() {
                    return Err(WriteEnd::Stopped);
                }
                wait(poll, events).map_err(WriteEnd::Failed)?;
                if stop.is_stopped() {
                    return Err(WriteEnd::Stopped);
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(WriteEnd::Failed(e)),
        }
    }
    Ok(())
}
