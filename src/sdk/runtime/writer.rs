//! The one writer thread that owns the extension's stdout (section "Transport
//! defaults": the SDK gives one writer sole ownership of extension stdout).
//!
//! Frames arrive complete over a bounded channel and are written whole, in order, so
//! they never interleave; the output is flushed whenever the queue runs empty, so no
//! frame waits in a buffer while the writer is idle.

use std::io::{self, BufWriter, Write};
use std::sync::Arc;
use std::thread;
use std::time::Instant;

use crossbeam_channel::{bounded, Receiver, RecvTimeoutError};

use super::diagnostic::diagnostic;
use super::doorbell::{BellSender, Doorbell};
use crate::limits::WRITER_QUEUE_FRAMES;

enum WriterMessage {
    /// One complete frame, LF included.
    Frame(Vec<u8>),
    /// Write what came before, flush and stop.
    Finish,
}

/// The sending side of the writer thread; its clones share one queue, which the last
/// one dropped disconnects.
#[derive(Clone)]
pub(crate) struct WriterHandle {
    queue: Arc<BellSender<WriterMessage>>,
}

impl WriterHandle {
    /// Queues a frame; blocks while the queue is full; false once the writer stopped.
    pub(crate) fn send(&self, frame: Vec<u8>) -> bool {
        self.queue.send(WriterMessage::Frame(frame), None)
    }

    /// Asks the writer to stop after the frames queued so far, waiting for room in the
    /// queue until `deadline` at most.
    pub(crate) fn finish(&self, deadline: Instant) {
        self.queue.send(WriterMessage::Finish, Some(deadline));
    }
}

/// Tells when the writer thread has stopped.
pub(crate) struct WriterDone {
    rx: Receiver<()>,
}

impl WriterDone {
    /// Waits until the writer stopped, at most until `deadline`; false on timeout (the
    /// host is not reading our stdout).
    pub(crate) fn wait(&self, deadline: Instant) -> bool {
        !matches!(
            self.rx.recv_deadline(deadline),
            Err(RecvTimeoutError::Timeout)
        )
    }
}

/// Starts the writer thread on `output`.
pub(crate) fn spawn<W: Write + Send + 'static>(output: W) -> (WriterHandle, WriterDone) {
    let (tx, rx) = bounded(WRITER_QUEUE_FRAMES);
    let (done_tx, done_rx) = bounded::<()>(1);
    let bell = Arc::new(Doorbell::new());
    let queue = Arc::new(BellSender::new(tx, Arc::clone(&bell)));
    thread::Builder::new()
        .name("octet-sdk-writer".into())
        .spawn(move || {
            crate::slice::own_thread();
            if let Err(e) = write_loop(output, &rx, &bell) {
                diagnostic(format_args!("stdout failed, no more frames are sent: {e}"));
            }
            drop(done_tx);
        })
        .expect("spawning the writer thread");
    (WriterHandle { queue }, WriterDone { rx: done_rx })
}

fn write_loop<W: Write>(
    output: W,
    rx: &Receiver<WriterMessage>,
    bell: &Doorbell,
) -> io::Result<()> {
    let mut out = BufWriter::new(output);
    loop {
        crate::spin::spin_until(super::super::SPIN_BEFORE_SLEEP, || !rx.is_empty());
        let Ok(message) = bell.recv(rx) else {
            break;
        };
        match message {
            WriterMessage::Frame(frame) => {
                out.write_all(&frame)?;
                if rx.is_empty() {
                    out.flush()?;
                }
            }
            WriterMessage::Finish => break,
        }
    }
    out.flush()
}
