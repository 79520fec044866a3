//! Child processes and their I/O: spawning with a sanitized environment in a process
//! group of its own, and the three threads each generation gets (reader, writer,
//! stderr drain), all stoppable through `mio`.
//!
//! The transport knows nothing of requests; it moves frames. What it reports goes to the
//! dispatcher as [`TransportMessage`]s over a bounded crossbeam channel.
//!
//! A generation starts like this (the dispatcher's side):
//!
//! 1. [`ScratchDir::new`] for `OCTET_EXTENSION_SCRATCH`;
//! 2. [`child_environment`] and [`resolve_command`] build a [`SpawnSpec`];
//! 3. [`spawn()`] starts the child as the leader of its own process group;
//! 4. [`start_io`] takes the child's pipes and starts the reader, writer and stderr
//!    threads ([`GenerationIo`]); [`start_io_with_codec`] does the same for a reader
//!    decoding with a given [`crate::wire::codec::Codec`] (the API 0.3 canonical wire);
//! 5. [`SpawnedChild::into_process`] hands the child to a [`ChildProcess`], which ends
//!    it in the order [`process`] documents.
//!
//! To end a generation: [`GenerationIo::stop`], then [`ChildProcess::finish`] (or
//! [`ChildProcess::terminate_and_reap`]), then [`GenerationIo::join`].

pub mod env;
#[cfg(target_os = "linux")]
pub mod fence;
#[cfg(unix)]
pub mod gate;
#[cfg(unix)]
pub mod guardian;
#[cfg(unix)]
pub mod io;
#[cfg(unix)]
pub mod process;
#[cfg(unix)]
pub mod reader;
#[cfg(unix)]
pub mod scratch;
#[cfg(unix)]
pub mod spawn;
#[cfg(unix)]
pub mod stderr;
#[cfg(unix)]
mod stop;
#[cfg(target_os = "linux")]
mod vfork;
#[cfg(unix)]
pub mod writer;

pub use env::{child_environment, process_environment};
#[cfg(unix)]
pub use gate::ReadGate;
pub use guardian::{Guardian, GuardianLease};
#[cfg(unix)]
pub use io::{
    start_io, start_io_with_codec, start_io_with_pipes, start_io_with_pipes_and_codec, ChildPipes,
    GenerationIo, IoConfig,
};
pub use process::{has_exited, kill_group, reap, ChildProcess, Signal};
#[cfg(unix)]
pub use scratch::{ScratchDir, ScratchRoot};
#[cfg(unix)]
pub use spawn::{resolve_command, spawn, SpawnError, SpawnSpec, SpawnedChild};
#[cfg(unix)]
pub use stderr::{StderrEvent, StderrSink, StderrTail, StderrTotals};
#[cfg(unix)]
pub use writer::{TrySendFrameError, WriterClosed, WriterHandle};

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

use crate::wire::salvage::Salvage;
use crate::wire::{FrameError, Message};

/// Identifies one generation's connection (one child process) for the host's lifetime.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ConnId(pub u64);

impl std::fmt::Display for ConnId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "conn#{}", self.0)
    }
}

/// One frame read from a child's stdout, already split and classified by the reader.
#[derive(Debug)]
pub enum InboundFrame {
    /// A well-formed JSON-RPC message.
    Message(Message),
    /// A frame that is not a usable JSON-RPC message.
    Invalid {
        /// What is wrong with it.
        error: FrameError,
        /// Its size in bytes, LF included.
        bytes: usize,
        /// What could still be read of it: the id of the request it answers, or that
        /// it is a request.
        salvage: Salvage,
        /// Its first characters, for error messages ([`crate::wire::salvage::excerpt`]).
        excerpt: String,
    },
    /// A frame over the frame bound, discarded up to its LF.
    Oversized {
        /// Its size in bytes, LF included.
        bytes: usize,
        /// What could still be read of its first bytes.
        salvage: Salvage,
    },
    /// A large frame (over [`HEAP_PARTIAL_BYTES`](crate::wire::frame::HEAP_PARTIAL_BYTES)),
    /// LF excluded, which the dispatcher decodes ([`InboundFrame::decoded`]): its
    /// megabyte strings are then allocated on the dispatcher's long-lived thread rather
    /// than in the arena of a reader that dies with its generation
    /// ([`crate::wire::mapped`]).
    Undecoded(crate::wire::mapped::MappedBuf),
}

impl InboundFrame {
    /// The frame decoded with `codec` when it is [`InboundFrame::Undecoded`]; itself
    /// otherwise.
    pub fn decoded(self, codec: crate::wire::codec::Codec) -> InboundFrame {
        match self {
            InboundFrame::Undecoded(bytes) => reader::decode_frame(codec, bytes.as_slice()),
            frame => frame,
        }
    }
}

/// What a generation's I/O threads report to the dispatcher.
#[derive(Debug)]
pub enum TransportEvent {
    /// Every complete frame of one read, in arrival order.
    Frames(Vec<InboundFrame>),
    /// The child's stdout is closed (EOF, read error, or the reader was stopped).
    /// No further `Frames` follow for this connection.
    ReaderClosed {
        /// Bytes of an unterminated last frame that were dropped.
        unterminated: Option<usize>,
        /// The read error, when it was not a clean EOF.
        error: Option<std::io::Error>,
    },
    /// The writer took this many frames off its queue (written or skipped) since its
    /// last report.
    Written {
        /// Frames that left the queue.
        frames: usize,
    },
    /// Writing to the child's stdin failed (usually a broken pipe); the writer has
    /// stopped and will write nothing more.
    WriterFailed {
        /// The write error.
        error: std::io::Error,
    },
}

/// A [`TransportEvent`] tagged with the connection it concerns.
#[derive(Debug)]
pub struct TransportMessage {
    /// The connection the event belongs to.
    pub conn: ConnId,
    /// What happened.
    pub event: TransportEvent,
}

/// Shared write state of one outbound frame, used to cancel requests exactly as
/// section 1.9 demands: a frame not yet started is skipped and nothing is sent;
/// once the writer has started it, it is written completely.
#[derive(Debug, Default)]
pub struct FrameState(AtomicU8);

const QUEUED: u8 = 0;
const STARTED: u8 = 1;
const SKIPPED: u8 = 2;

impl FrameState {
    /// A new state: queued, neither started nor skipped.
    pub fn new() -> Arc<FrameState> {
        Arc::new(FrameState(AtomicU8::new(QUEUED)))
    }

    /// Marks the frame skipped if the writer has not started it. Returns true when it
    /// was skipped (nothing will be written), false when writing already began.
    pub fn try_skip(&self) -> bool {
        self.0
            .compare_exchange(QUEUED, SKIPPED, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
            || self.0.load(Ordering::Acquire) == SKIPPED
    }

    /// Called by the writer before the first byte: returns false when the frame was
    /// skipped and must not be written.
    pub fn try_start(&self) -> bool {
        self.0
            .compare_exchange(QUEUED, STARTED, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    /// True once the writer has started (and so will finish) the frame.
    pub fn is_started(&self) -> bool {
        self.0.load(Ordering::Acquire) == STARTED
    }
}

/// One complete serialized frame (LF included) queued for a child's stdin.
#[derive(Debug)]
pub struct OutboundFrame {
    /// The bytes, ending in exactly one LF.
    pub bytes: Vec<u8>,
    /// Present for frames that can be cancelled before they start (requests).
    pub state: Option<Arc<FrameState>>,
    /// The frame may carry a secret (a `secret/get` answer, section 2.10): the writer
    /// overwrites its bytes with zeros once they are written (best effort; the kernel's
    /// pipe buffer and the child's copy are out of reach).
    pub wipe: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_state_skip_and_start_exclude_each_other() {
        let s = FrameState::new();
        assert!(s.try_skip());
        assert!(!s.try_start());
        assert!(s.try_skip(), "skipping twice stays skipped");

        let s = FrameState::new();
        assert!(s.try_start());
        assert!(s.is_started());
        assert!(!s.try_skip());
    }
}
