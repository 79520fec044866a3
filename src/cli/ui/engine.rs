//! serve's engine inside `octet-host ui`: `serve::run` on a thread of its own, its
//! input fed from the page's posted lines and its output handed to the [`Hub`] line by
//! line.

use std::io::{self, Write};
use std::sync::Arc;
use std::thread::JoinHandle;

use crossbeam_channel::Sender;

use super::hub::Hub;

/// The running engine.
pub(crate) struct Engine {
    /// serve's input: whole lines, each ending in LF.
    pub input: Sender<Vec<u8>>,
    /// serve's thread; its exit code when it ends.
    pub thread: JoinHandle<io::Result<i32>>,
}

/// Starts serve with `options`, writing its lines to `hub`.
pub(crate) fn start(options: crate::serve::ServeOptions, hub: Arc<Hub>) -> io::Result<Engine> {
    let (input, lines) = crate::serve::ChannelInput::new();
    let reader = io::BufReader::new(lines);
    let writer = HubWriter {
        hub: hub.clone(),
        partial: Vec::new(),
    };
    let thread = std::thread::Builder::new()
        .name("octet-ui-serve".into())
        .spawn(move || {
            let code = crate::serve::run(options, reader, writer);
            hub.close();
            code
        })?;
    Ok(Engine { input, thread })
}

/// serve's output, cut into lines for the hub.
struct HubWriter {
    hub: Arc<Hub>,
    partial: Vec<u8>,
}

impl Write for HubWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.partial.extend_from_slice(buf);
        // Every whole line, then what is left of the last one is kept, in one move.
        let mut start = 0;
        while let Some(at) = memchr::memchr(b'\n', &self.partial[start..]) {
            let end = start + at;
            if let Ok(text) = std::str::from_utf8(&self.partial[start..end]) {
                self.hub.line(text);
            }
            start = end + 1;
        }
        self.partial.drain(..start);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
