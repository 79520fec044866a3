//! `serve`'s two streams: control lines read with a length bound, and output lines
//! written by one writer thread so lines never interleave.

use std::io::{self, BufRead, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use crossbeam_channel::{Receiver, Sender};
use serde_json::Value;

use super::Wakeups;

/// Output lines queued for the writer. A full queue makes producers wait: a client that
/// stops reading slows `serve` down instead of growing its memory.
const OUTPUT_QUEUE_LINES: usize = 1024;

/// One queued output line.
enum OutLine {
    /// A line; more follow.
    Line(String),
    /// The last line: the writer flushes after it and ignores everything later.
    Final(String),
}

/// A cloneable handle that queues output lines for the writer thread.
#[derive(Clone)]
pub(crate) struct Emitter {
    lines: Sender<OutLine>,
    broken: Arc<AtomicBool>,
}

impl Emitter {
    /// Queues `value` as one line. False once the output is gone.
    pub fn emit(&self, value: Value) -> bool {
        self.send(OutLine::Line(value.to_string()))
    }

    /// Queues the last line; nothing written after it reaches the output.
    pub fn emit_final(&self, value: Value) -> bool {
        self.send(OutLine::Final(value.to_string()))
    }

    /// True once a write failed (the client closed its end).
    pub fn is_broken(&self) -> bool {
        self.broken.load(Ordering::Acquire)
    }

    fn send(&self, line: OutLine) -> bool {
        !self.is_broken() && self.lines.send(line).is_ok()
    }
}

/// Starts the writer thread over `output`. It ends after the final line, or when every
/// [`Emitter`] is gone, or at the first write error (which it returns).
pub(crate) fn start_writer(
    output: impl Write + Send + 'static,
    wakeups: Wakeups,
) -> io::Result<(Emitter, JoinHandle<io::Result<()>>)> {
    let (lines, queue) = crossbeam_channel::bounded(OUTPUT_QUEUE_LINES);
    let broken = Arc::new(AtomicBool::new(false));
    let flag = broken.clone();
    let thread = std::thread::Builder::new()
        .name("octet-serve-writer".into())
        .spawn(move || {
            let _prompt = wakeups.hold();
            let result = write_lines(output, queue);
            if result.is_err() {
                flag.store(true, Ordering::Release);
            }
            result
        })?;
    Ok((Emitter { lines, broken }, thread))
}

/// Writes every queued line followed by LF, flushing whenever the queue runs empty so a
/// client waiting for a line never waits on a buffer.
fn write_lines(output: impl Write, queue: Receiver<OutLine>) -> io::Result<()> {
    let mut output = io::BufWriter::new(output);
    while let Ok(line) = queue.recv() {
        let (text, last) = match line {
            OutLine::Line(text) => (text, false),
            OutLine::Final(text) => (text, true),
        };
        output.write_all(text.as_bytes())?;
        output.write_all(b"\n")?;
        if last {
            break;
        }
        if queue.is_empty() {
            output.flush()?;
        }
    }
    output.flush()
}

/// Starts the thread that reads control lines from `input`, each bounded by `limit`,
/// and sends them (and finally the end of the input or the read error) to the
/// returned channel. A few lines are buffered; then the thread waits for the control
/// loop, so a client that writes faster than `serve` handles its lines is slowed down.
pub(crate) fn start_reader(
    mut input: impl BufRead + Send + 'static,
    limit: usize,
    wakeups: Wakeups,
) -> io::Result<Receiver<io::Result<LineRead>>> {
    let (lines, received) = crossbeam_channel::bounded(16);
    std::thread::Builder::new()
        .name("octet-serve-input".into())
        .spawn(move || {
            let _prompt = wakeups.hold();
            loop {
                let read = read_line(&mut input, limit);
                let last = !matches!(read, Ok(LineRead::Line(_)) | Ok(LineRead::TooLong { .. }));
                if lines.send(read).is_err() || last {
                    return;
                }
            }
        })?;
    Ok(received)
}

/// What one bounded read produced.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum LineRead {
    /// A line without its LF (and without a CR before it).
    Line(Vec<u8>),
    /// A line longer than the bound, discarded up to its LF.
    TooLong {
        /// Its length in bytes, LF excluded.
        bytes: usize,
    },
    /// The input ended.
    Eof,
}

/// Reads one line of at most `limit` bytes (LF excluded). A longer line is consumed and
/// dropped without being held in memory. A last line without LF still counts.
pub(crate) fn read_line(input: &mut impl BufRead, limit: usize) -> io::Result<LineRead> {
    let mut line = Vec::new();
    let mut total = 0usize;
    let mut started = false;
    loop {
        let buffer = match input.fill_buf() {
            Ok(buffer) => buffer,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buffer.is_empty() {
            if !started {
                return Ok(LineRead::Eof);
            }
            break;
        }
        started = true;
        let (chunk, used, done) = match buffer.iter().position(|&b| b == b'\n') {
            Some(end) => (&buffer[..end], end + 1, true),
            None => (buffer, buffer.len(), false),
        };
        total += chunk.len();
        if total <= limit {
            line.extend_from_slice(chunk);
        } else {
            line = Vec::new();
        }
        input.consume(used);
        if done {
            break;
        }
    }
    if total > limit {
        return Ok(LineRead::TooLong { bytes: total });
    }
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    Ok(LineRead::Line(line))
}

/// serve's input from another thread of the same process, for [`super::run`]: the
/// chunks sent on its channel are read in order (whole control lines, each ending in
/// LF, or any pieces of them), and the input ends once every sender is gone.
pub struct ChannelInput {
    chunks: crossbeam_channel::Receiver<Vec<u8>>,
    current: Vec<u8>,
    offset: usize,
}

impl ChannelInput {
    /// An input and the sender that feeds it.
    pub fn new() -> (crossbeam_channel::Sender<Vec<u8>>, ChannelInput) {
        let (sender, chunks) = crossbeam_channel::unbounded();
        let input = ChannelInput {
            chunks,
            current: Vec::new(),
            offset: 0,
        };
        (sender, input)
    }
}

impl std::io::Read for ChannelInput {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while self.offset == self.current.len() {
            match self.chunks.recv() {
                Ok(chunk) => {
                    self.current = chunk;
                    self.offset = 0;
                }
                Err(_) => return Ok(0),
            }
        }
        let n = buf.len().min(self.current.len() - self.offset);
        buf[..n].copy_from_slice(&self.current[self.offset..self.offset + n]);
        self.offset += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_bounded_and_the_overlong_one_is_skipped() {
        let data = b"short\r\n0123456789abc\nnext\nlast".to_vec();
        let mut input = io::BufReader::with_capacity(4, &data[..]);
        assert_eq!(
            read_line(&mut input, 10).unwrap(),
            LineRead::Line(b"short".to_vec())
        );
        assert_eq!(
            read_line(&mut input, 10).unwrap(),
            LineRead::TooLong { bytes: 13 }
        );
        assert_eq!(
            read_line(&mut input, 10).unwrap(),
            LineRead::Line(b"next".to_vec())
        );
        assert_eq!(
            read_line(&mut input, 10).unwrap(),
            LineRead::Line(b"last".to_vec())
        );
        assert_eq!(read_line(&mut input, 10).unwrap(), LineRead::Eof);
    }

    #[test]
    fn the_writer_stops_after_the_final_line() {
        let buffer = SharedBuffer::default();
        let (emitter, thread) = start_writer(buffer.clone(), Wakeups::default()).unwrap();
        assert!(emitter.emit(serde_json::json!({"a": 1})));
        assert!(emitter.emit_final(serde_json::json!({"b": "x\ny"})));
        thread.join().unwrap().unwrap();
        assert!(!emitter.emit(serde_json::json!({"c": 3})));
        assert_eq!(
            String::from_utf8(buffer.0.lock().clone()).unwrap(),
            "{\"a\":1}\n{\"b\":\"x\\ny\"}\n"
        );
    }

    #[derive(Clone, Default)]
    struct SharedBuffer(Arc<parking_lot::Mutex<Vec<u8>>>);

    impl Write for SharedBuffer {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.lock().extend_from_slice(buf);
            Ok(buf.len())
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
}
