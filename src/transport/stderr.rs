//! The stderr drain thread: sole owner of a child's stderr.
//!
//! stderr carries human diagnostics, which the host "drains and exposes as bounded
//! diagnostic events" (reference, introduction). The drain always reads: a child that
//! floods stderr is never blocked by the host. Each line is cut at
//! [`MAX_STDERR_LINE_BYTES`] (the cut bytes are counted), the last
//! [`STDERR_TAIL_LINES`] lines are kept in a [`StderrTail`], and at most
//! [`STDERR_EVENTS_PER_SECOND`] lines per one-second window are passed to the sink as
//! [`StderrEvent::Line`]; the lines over that are counted and summarized by one
//! [`StderrEvent::Suppressed`] when the window closes.
//!
//! The sink runs on the drain thread. It must not block (hand the event to a channel
//! with `try_send`, say): while it runs, stderr is not drained, and a stop cannot
//! interrupt it.

use std::collections::VecDeque;
use std::io::{self, Read};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mio::unix::pipe;
use mio::{Events, Interest, Poll};
use parking_lot::Mutex;

use super::reader::{ReadBuffer, PIPE};
use super::stop::StopSignal;
use crate::limits::{MAX_STDERR_LINE_BYTES, STDERR_EVENTS_PER_SECOND, STDERR_TAIL_LINES};

/// The length of one rate window of the stderr sink.
const RATE_WINDOW: Duration = Duration::from_secs(1);

/// A diagnostic event from a child's stderr.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StderrEvent {
    /// One stderr line (without its LF, and without a CR just before it), decoded as
    /// UTF-8 with invalid sequences replaced.
    Line {
        /// The kept part of the line, at most [`MAX_STDERR_LINE_BYTES`] bytes before
        /// decoding.
        text: String,
        /// Bytes cut off the end of the line.
        cut: usize,
    },
    /// Lines over the rate bound in the window that just closed; they are in the tail
    /// (as far as it reaches) but had no event of their own.
    Suppressed {
        /// How many lines were not reported.
        count: u64,
    },
}

/// Where a generation's stderr events go; called on the drain thread, must not block.
pub type StderrSink = Box<dyn FnMut(StderrEvent) + Send>;

/// Counters of everything a generation wrote to stderr.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StderrTotals {
    /// Lines seen, including an unterminated last line.
    pub lines: u64,
    /// Bytes read from stderr.
    pub bytes: u64,
    /// Bytes cut off over-long lines.
    pub cut_bytes: u64,
    /// Lines that got no event because of the rate bound.
    pub suppressed: u64,
}

/// The last [`STDERR_TAIL_LINES`] lines a generation wrote to stderr, shared between
/// the drain thread and readers such as status snapshots. Cloning shares the tail.
#[derive(Clone, Debug, Default)]
pub struct StderrTail(Arc<Mutex<TailState>>);

#[derive(Debug, Default)]
struct TailState {
    lines: VecDeque<Vec<u8>>,
    totals: StderrTotals,
}

impl StderrTail {
    /// An empty tail.
    pub fn new() -> StderrTail {
        StderrTail::default()
    }

    /// The kept lines, oldest first, decoded as UTF-8 with invalid sequences replaced.
    pub fn snapshot(&self) -> Vec<String> {
        let state = self.0.lock();
        state
            .lines
            .iter()
            .map(|line| String::from_utf8_lossy(line).into_owned())
            .collect()
    }

    /// The counters so far.
    pub fn totals(&self) -> StderrTotals {
        self.0.lock().totals
    }
}

impl TailState {
    fn push(&mut self, line: &[u8], cut: usize) {
        let mut slot = if self.lines.len() >= STDERR_TAIL_LINES {
            self.lines.pop_front().unwrap_or_default()
        } else {
            Vec::new()
        };
        slot.clear();
        slot.extend_from_slice(line);
        self.lines.push_back(slot);
        self.totals.lines += 1;
        self.totals.cut_bytes += cut as u64;
    }
}

/// Splits stderr bytes into lines, cutting each at [`MAX_STDERR_LINE_BYTES`].
#[derive(Debug, Default)]
pub(crate) struct LineCutter {
    line: Vec<u8>,
    cut: usize,
}

impl LineCutter {
    /// Feeds `data`, calling `sink(line, cut)` for every line it completes.
    pub(crate) fn push(&mut self, mut data: &[u8], mut sink: impl FnMut(&[u8], usize)) {
        while !data.is_empty() {
            let (piece, complete) = match data.iter().position(|&b| b == b'\n') {
                Some(at) => (&data[..at], Some(at + 1)),
                None => (data, None),
            };
            let room = MAX_STDERR_LINE_BYTES - self.line.len();
            if piece.len() <= room {
                self.line.extend_from_slice(piece);
            } else {
                self.line.extend_from_slice(&piece[..room]);
                self.cut += piece.len() - room;
            }
            match complete {
                Some(consumed) => {
                    self.emit(&mut sink);
                    data = &data[consumed..];
                }
                None => return,
            }
        }
    }

    /// Ends the stream: an unterminated last line counts as a line.
    pub(crate) fn finish(&mut self, mut sink: impl FnMut(&[u8], usize)) {
        if !self.line.is_empty() || self.cut > 0 {
            self.emit(&mut sink);
        }
    }

    fn emit(&mut self, sink: &mut impl FnMut(&[u8], usize)) {
        let line = match self.line.last() {
            Some(b'\r') if self.cut == 0 => &self.line[..self.line.len() - 1],
            _ => &self.line[..],
        };
        sink(line, self.cut);
        self.line.clear();
        self.cut = 0;
    }
}

/// The per-window event budget of the sink.
#[derive(Debug)]
struct RateWindow {
    started: Instant,
    emitted: u32,
    suppressed: u64,
}

impl RateWindow {
    fn new(now: Instant) -> RateWindow {
        RateWindow {
            started: now,
            emitted: 0,
            suppressed: 0,
        }
    }

    /// Closes the window when it is over, returning the count to summarize.
    fn roll(&mut self, now: Instant) -> Option<u64> {
        if now.duration_since(self.started) < RATE_WINDOW {
            return None;
        }
        let suppressed = std::mem::take(&mut self.suppressed);
        *self = RateWindow::new(now);
        (suppressed > 0).then_some(suppressed)
    }

    /// True when one more event fits in this window; counts it either way.
    fn admit(&mut self) -> bool {
        if self.emitted < STDERR_EVENTS_PER_SECOND {
            self.emitted += 1;
            true
        } else {
            self.suppressed += 1;
            false
        }
    }

    /// How long until the window closes, when a summary is pending.
    fn pending_timeout(&self, now: Instant) -> Option<Duration> {
        (self.suppressed > 0).then(|| (self.started + RATE_WINDOW).saturating_duration_since(now))
    }
}

/// Everything the stderr thread owns.
pub(crate) struct StderrDrain {
    pub(crate) stderr: pipe::Receiver,
    pub(crate) poll: Poll,
    pub(crate) tail: StderrTail,
    pub(crate) sink: StderrSink,
    pub(crate) stop: StopSignal,
}

impl StderrDrain {
    /// The thread body: drains until EOF, a read error, or a stop.
    pub(crate) fn run(mut self) {
        let mut cutter = LineCutter::default();
        let mut window = RateWindow::new(Instant::now());
        let _ = self.drain(&mut cutter, &mut window);
        let mut lines = Vec::new();
        cutter.finish(|line, cut| lines.push((line.to_vec(), cut)));
        self.deliver(&lines, &mut window, Instant::now());
        if window.suppressed > 0 {
            let count = std::mem::take(&mut window.suppressed);
            self.tail.0.lock().totals.suppressed += count;
            (self.sink)(StderrEvent::Suppressed { count });
        }
    }

    fn drain(&mut self, cutter: &mut LineCutter, window: &mut RateWindow) -> io::Result<()> {
        self.poll
            .registry()
            .register(&mut self.stderr, PIPE, Interest::READABLE)?;
        let mut buffer = ReadBuffer::new();
        let mut events = Events::with_capacity(4);
        let mut lines: Vec<(Vec<u8>, usize)> = Vec::new();
        loop {
            if self.stop.is_stopped() {
                return Ok(());
            }
            match self.stderr.read(buffer.space()) {
                Ok(0) => return Ok(()),
                Ok(n) => {
                    let now = Instant::now();
                    self.roll(window, now);
                    lines.clear();
                    {
                        let mut tail = self.tail.0.lock();
                        tail.totals.bytes += n as u64;
                        cutter.push(buffer.filled(n), |line, cut| {
                            tail.push(line, cut);
                            if window.admit() {
                                lines.push((line.to_vec(), cut));
                            }
                        });
                    }
                    for (line, cut) in lines.drain(..) {
                        let text = String::from_utf8_lossy(&line).into_owned();
                        (self.sink)(StderrEvent::Line { text, cut });
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    let timeout = window.pending_timeout(Instant::now());
                    match self.poll.poll(&mut events, timeout) {
                        Ok(()) => {}
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(e) => return Err(e),
                    }
                    self.roll(window, Instant::now());
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Closes the window if it is over, emitting its summary.
    fn roll(&mut self, window: &mut RateWindow, now: Instant) {
        if let Some(count) = window.roll(now) {
            self.tail.0.lock().totals.suppressed += count;
            (self.sink)(StderrEvent::Suppressed { count });
        }
    }

    /// Records already cut lines (the unterminated last one) in the tail and the sink.
    fn deliver(&mut self, lines: &[(Vec<u8>, usize)], window: &mut RateWindow, now: Instant) {
        self.roll(window, now);
        for (line, cut) in lines {
            self.tail.0.lock().push(line, *cut);
            if window.admit() {
                let text = String::from_utf8_lossy(line).into_owned();
                (self.sink)(StderrEvent::Line { text, cut: *cut });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cut_all(chunks: &[&[u8]]) -> Vec<(Vec<u8>, usize)> {
        let mut cutter = LineCutter::default();
        let mut out = Vec::new();
        for chunk in chunks {
            cutter.push(chunk, |line, cut| out.push((line.to_vec(), cut)));
        }
        cutter.finish(|line, cut| out.push((line.to_vec(), cut)));
        out
    }

    #[test]
    fn cuts_long_lines_and_counts_the_rest() {
        let long = vec![b'a'; MAX_STDERR_LINE_BYTES + 10];
        let out = cut_all(&[b"one\r\ntw", b"o\n", &long[..100], &long[100..], b"\nlast"]);
        assert_eq!(out.len(), 4);
        assert_eq!(out[0], (b"one".to_vec(), 0));
        assert_eq!(out[1], (b"two".to_vec(), 0));
        assert_eq!(out[2].0.len(), MAX_STDERR_LINE_BYTES);
        assert_eq!(out[2].1, 10);
        assert_eq!(out[3], (b"last".to_vec(), 0));
    }

    #[test]
    fn tail_keeps_the_last_lines() {
        let tail = StderrTail::new();
        for i in 0..STDERR_TAIL_LINES + 5 {
            tail.0.lock().push(format!("line {i}").as_bytes(), 0);
        }
        let snapshot = tail.snapshot();
        assert_eq!(snapshot.len(), STDERR_TAIL_LINES);
        assert_eq!(snapshot[0], "line 5");
        assert_eq!(
            snapshot.last().unwrap(),
            &format!("line {}", STDERR_TAIL_LINES + 4)
        );
        assert_eq!(tail.totals().lines, (STDERR_TAIL_LINES + 5) as u64);
    }

    #[test]
    fn rate_window_admits_a_bounded_number_and_summarizes() {
        let start = Instant::now();
        let mut window = RateWindow::new(start);
        let admitted = (0..100).filter(|_| window.admit()).count();
        assert_eq!(admitted, STDERR_EVENTS_PER_SECOND as usize);
        assert_eq!(window.roll(start), None, "the window is still open");
        assert!(window.pending_timeout(start).is_some());
        assert_eq!(
            window.roll(start + RATE_WINDOW),
            Some(100 - u64::from(STDERR_EVENTS_PER_SECOND))
        );
        assert!(window.admit());
        assert_eq!(window.pending_timeout(start + RATE_WINDOW), None);
    }
}
