//! The reader thread: sole owner of a child's stdout.
//!
//! It reads whatever is available (up to [`READ_BUFFER_BYTES`] at a time), splits the
//! bytes into frames on LF only ([`FrameSplitter`]: CR, U+2028 and U+2029 are ordinary
//! bytes), discards frames over the frame limit up to their LF, decodes and classifies
//! each frame with the generation's [`Codec`] (fixed when the threads start: JSON-RPC,
//! or the API 0.3 canonical wire), and sends all frames completed by one read as one
//! [`TransportEvent::Frames`] batch. It ends with exactly one
//! [`TransportEvent::ReaderClosed`] on EOF, on a read error, or when stopped (after a
//! stop, that last event is delivered only if the channel has room, since the stop
//! came from the dispatcher itself).

use std::io::{self, Read};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crossbeam_channel::Sender;
use mio::unix::pipe;
use mio::{Events, Interest, Poll, Token};

use super::stop::{deliver, Delivery, StopSignal};
use super::{ConnId, InboundFrame, TransportEvent, TransportMessage};
use crate::wire::codec::Codec;
use crate::wire::frame::HEAP_PARTIAL_BYTES;
use crate::wire::mapped::MappedBuf;
use crate::wire::salvage::{excerpt, salvage, salvage_frame};
use crate::wire::{FrameSplitter, Split};

/// Bytes read from the pipe at a time (the Linux pipe buffer holds 64 KiB).
pub const READ_BUFFER_BYTES: usize = 64 * 1024;

/// Bytes a pipe's read buffer starts with; it doubles, up to [`READ_BUFFER_BYTES`],
/// whenever a read fills it.
pub const INITIAL_READ_BUFFER_BYTES: usize = 4 * 1024;

/// A pipe's read buffer: it starts at [`INITIAL_READ_BUFFER_BYTES`] and doubles, up to
/// [`READ_BUFFER_BYTES`], whenever a read fills it. An idle generation so keeps a few
/// KiB resident per pipe instead of 64 KiB, and a busy one reads in 64 KiB chunks after
/// a few reads.
#[derive(Debug)]
pub(crate) struct ReadBuffer {
    bytes: Vec<u8>,
}

impl ReadBuffer {
    pub(crate) fn new() -> ReadBuffer {
        ReadBuffer {
            bytes: vec![0; INITIAL_READ_BUFFER_BYTES],
        }
    }

    /// The whole buffer, to read into.
    pub(crate) fn space(&mut self) -> &mut [u8] {
        &mut self.bytes
    }

    /// The `n` bytes a read just returned. A read that filled the buffer makes it grow
    /// first (keeping those bytes), so the next read can take more.
    pub(crate) fn filled(&mut self, n: usize) -> &[u8] {
        if n == self.bytes.len() && n < READ_BUFFER_BYTES {
            self.bytes.resize((2 * n).min(READ_BUFFER_BYTES), 0);
        }
        &self.bytes[..n]
    }
}

/// The `Poll` token of the pipe in each I/O thread.
pub(crate) const PIPE: Token = Token(0);

/// The `Poll` token of the stop waker in each I/O thread.
pub(crate) const WAKE: Token = Token(1);

/// Everything the reader thread owns.
pub(crate) struct Reader {
    pub(crate) conn: ConnId,
    pub(crate) stdout: pipe::Receiver,
    pub(crate) poll: Poll,
    /// Largest frame accepted, LF included; read before every chunk is split.
    pub(crate) frame_limit: Arc<AtomicUsize>,
    /// How every frame is decoded; never changes.
    pub(crate) codec: Codec,
    pub(crate) events: Sender<TransportMessage>,
    pub(crate) stop: StopSignal,
    /// How long to spin before sleeping for the next read (see [`crate::spin`]).
    pub(crate) spin: Duration,
    /// Closed while the dispatcher is behind on this generation ([`super::gate`]).
    pub(crate) gate: super::gate::ReadGate,
}

/// How the read loop ended.
enum End {
    /// EOF, a read error (`Some`), or a stop: report `ReaderClosed`.
    Closed(Option<io::Error>),
    /// The dispatcher is gone: exit silently.
    Disconnected,
}

impl Reader {
    /// The thread body.
    pub(crate) fn run(mut self) {
        crate::slice::own_thread();
        let mut splitter = FrameSplitter::new(current_limit(&self.frame_limit));
        let error = match self.read_loop(&mut splitter) {
            End::Closed(error) => error,
            End::Disconnected => return,
        };
        let event = TransportEvent::ReaderClosed {
            unterminated: splitter.finish(),
            error,
        };
        let message = TransportMessage {
            conn: self.conn,
            event,
        };
        let _ = deliver(&self.events, &self.stop, message);
    }

    fn read_loop(&mut self, splitter: &mut FrameSplitter) -> End {
        if let Err(error) =
            self.poll
                .registry()
                .register(&mut self.stdout, PIPE, Interest::READABLE)
        {
            return End::Closed(Some(error));
        }
        let mut buffer = ReadBuffer::new();
        let mut events = Events::with_capacity(4);
        loop {
            if self.stop.is_stopped() {
                return End::Closed(None);
            }
            // Backpressure: while the gate is closed the pipe is left alone, so the
            // extension's own writes block once its buffer is full.
            if !self.gate.is_open() {
                if self.gate.may_sleep() {
                    let slept = wait(&mut self.poll, &mut events);
                    self.gate.woke();
                    if let Err(error) = slept {
                        return End::Closed(Some(error));
                    }
                }
                continue;
            }
            match self.stdout.read(buffer.space()) {
                Ok(0) => return End::Closed(None),
                Ok(n) => {
                    let limit = current_limit(&self.frame_limit);
                    if limit != splitter.limit() {
                        splitter.set_limit(limit);
                    }
                    let frames = split_and_decode(splitter, self.codec, buffer.filled(n));
                    if frames.is_empty() {
                        continue;
                    }
                    let message = TransportMessage {
                        conn: self.conn,
                        event: TransportEvent::Frames(frames),
                    };
                    // Counted before it is handed over: the dispatcher may handle it
                    // before `deliver` returns.
                    self.gate.batch_sent();
                    match deliver(&self.events, &self.stop, message) {
                        Delivery::Delivered => {}
                        Delivery::Stopped => return End::Closed(None),
                        Delivery::Disconnected => return End::Disconnected,
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    // The next answer often follows within microseconds: look for it
                    // (a zero-timeout poll) before sleeping in one.
                    let (poll, stop) = (&mut self.poll, &self.stop);
                    let ready = crate::spin::spin_until(self.spin, || {
                        stop.is_stopped()
                            || (poll.poll(&mut events, Some(Duration::ZERO)).is_ok()
                                && !events.is_empty())
                    });
                    if ready {
                        continue;
                    }
                    if let Err(error) = wait(&mut self.poll, &mut events) {
                        return End::Closed(Some(error));
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return End::Closed(Some(e)),
            }
        }
    }
}

/// Waits until the pipe may be ready again or the waker fired (the caller then checks
/// the stop flag). Interrupted waits are retried.
pub(crate) fn wait(poll: &mut Poll, events: &mut Events) -> io::Result<()> {
    loop {
        match poll.poll(events, None) {
            Ok(()) => return Ok(()),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// The frame limit to apply, never zero (a splitter needs room for the LF).
fn current_limit(limit: &AtomicUsize) -> usize {
    limit.load(Ordering::Relaxed).max(1)
}

/// `bytes`, one whole frame without its LF, decoded with `codec`.
pub(crate) fn decode_frame(codec: Codec, bytes: &[u8]) -> InboundFrame {
    match codec.decode(bytes) {
        Ok(message) => InboundFrame::Message(message),
        Err(error) => InboundFrame::Invalid {
            error,
            bytes: bytes.len() + 1,
            salvage: salvage_frame(bytes, codec),
            excerpt: excerpt(bytes),
        },
    }
}

/// Feeds `data` to `splitter` and decodes every frame it completes with `codec`, in
/// order.
pub(crate) fn split_and_decode(
    splitter: &mut FrameSplitter,
    codec: Codec,
    data: &[u8],
) -> Vec<InboundFrame> {
    // Every frame completed here ends at one of the LFs of `data`: sized once, the
    // batch is never grown and moved while a read of many answers is decoded.
    let mut frames = Vec::with_capacity(memchr::memchr_iter(b'\n', data).count());
    splitter.push(data, |item| {
        frames.push(match item {
            // A large frame is decoded by the dispatcher, not on this thread
            // ([`InboundFrame::Undecoded`]).
            Split::Frame(bytes) if bytes.len() > HEAP_PARTIAL_BYTES => {
                InboundFrame::Undecoded(MappedBuf::copy_of(bytes))
            }
            Split::Frame(bytes) => decode_frame(codec, bytes),
            Split::Oversized { bytes, head } => InboundFrame::Oversized {
                bytes,
                salvage: salvage(head),
            },
        })
    });
    frames
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::canonical::CanonicalError;
    use crate::wire::{FrameError, Message};

    #[test]
    fn classifies_every_kind_of_frame_in_order() {
        let mut splitter = FrameSplitter::new(64);
        let mut data = b"{\"jsonrpc\":\"2.0\",\"method\":\"a\"}\n\n[1]\n".to_vec();
        data.extend_from_slice(&[b'x'; 100]);
        data.extend_from_slice(b"\n{\"jsonrpc\":\"2.0\",\"method\":\"b\"");
        let frames = split_and_decode(&mut splitter, Codec::JsonRpc, &data);
        assert_eq!(frames.len(), 4);
        assert!(
            matches!(&frames[0], InboundFrame::Message(Message::Notification(n)) if n.method == "a")
        );
        assert!(matches!(
            &frames[1],
            InboundFrame::Invalid {
                error: FrameError::Parse { .. },
                bytes: 1,
                ..
            }
        ));
        assert!(matches!(
            &frames[2],
            InboundFrame::Invalid {
                error: FrameError::NotObject,
                bytes: 4,
                ..
            }
        ));
        assert!(matches!(
            &frames[3],
            InboundFrame::Oversized { bytes: 101, .. }
        ));
        let rest = split_and_decode(&mut splitter, Codec::JsonRpc, b"}\n");
        assert!(
            matches!(&rest[..], [InboundFrame::Message(Message::Notification(n))] if n.method == "b")
        );
    }

    #[test]
    fn canonical_mode_rejects_what_json_rpc_accepts() {
        let mut splitter = FrameSplitter::new(1024);
        let data = concat!(
            "{\"jsonrpc\":\"2.0\",\"method\":\"notification\",\"params\":{}}\n",
            "{\"method\":\"notification\",\"jsonrpc\":\"2.0\",\"params\":{}}\n",
            "{\"jsonrpc\":\"2.0\",\"method\":\"notification\",\"params\":{}}\r\n",
            "\n",
            "{\"jsonrpc\":\"2.0\",\"method\":\"notification\"}\n",
        );
        let frames = split_and_decode(&mut splitter, Codec::Canonical, data.as_bytes());
        assert_eq!(frames.len(), 5);
        assert!(
            matches!(&frames[0], InboundFrame::Message(Message::Notification(n)) if n.method == "notification" && n.params == Some(serde_json::json!({})))
        );
        assert!(matches!(
            &frames[1],
            InboundFrame::Invalid {
                error: FrameError::NotCanonical(CanonicalError::UnsortedKeys { .. }),
                ..
            }
        ));
        assert!(matches!(
            &frames[2],
            InboundFrame::Invalid {
                error: FrameError::NotCanonical(CanonicalError::CarriageReturn { .. }),
                bytes: 55,
                ..
            }
        ));
        assert!(matches!(
            &frames[3],
            InboundFrame::Invalid {
                error: FrameError::NotCanonical(CanonicalError::EmptyFrame),
                bytes: 1,
                ..
            }
        ));
        assert!(matches!(
            &frames[4],
            InboundFrame::Invalid {
                error: FrameError::MissingParams,
                ..
            }
        ));
        let json_rpc = split_and_decode(
            &mut FrameSplitter::new(1024),
            Codec::JsonRpc,
            data.as_bytes(),
        );
        assert!(matches!(&json_rpc[1], InboundFrame::Message(_)));
        assert!(matches!(&json_rpc[4], InboundFrame::Message(_)));
    }

    #[test]
    fn grows_only_when_a_read_fills_it_and_keeps_the_bytes() {
        let mut buffer = ReadBuffer::new();
        assert_eq!(buffer.space().len(), INITIAL_READ_BUFFER_BYTES);
        buffer.space()[..3].copy_from_slice(b"abc");
        assert_eq!(buffer.filled(3), b"abc");
        assert_eq!(buffer.space().len(), INITIAL_READ_BUFFER_BYTES);
        let mut size = INITIAL_READ_BUFFER_BYTES;
        while size < READ_BUFFER_BYTES {
            buffer.space().fill(b'x');
            let data = buffer.filled(size);
            assert_eq!(data.len(), size);
            assert!(data.iter().all(|&b| b == b'x'));
            size = buffer.space().len();
        }
        assert_eq!(size, READ_BUFFER_BYTES);
        buffer.filled(READ_BUFFER_BYTES);
        assert_eq!(
            buffer.space().len(),
            READ_BUFFER_BYTES,
            "never past the bound"
        );
    }
}
