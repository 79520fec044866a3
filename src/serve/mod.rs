//! `serve`: the host as a sidecar, driven by a JSON-lines control protocol.
//!
//! A client writes one JSON object per line (a *control line*) to `serve`'s input and
//! reads one JSON object per line from its output: replies to control lines, `result`
//! lines for calls, host `event` lines, and questions (`confirmation_request`,
//! `input_request`) the client answers with further control lines. The full protocol,
//! with a captured transcript, is in `docs/serve-protocol.md`.
//!
//! ```no_run
//! use octet_host::serve::{self, ServeOptions};
//!
//! let options = ServeOptions::new("/path/to/workspace")
//!     .extension_dir("./my-extensions/hello-world")
//!     .no_global_extensions();
//! let stdin = std::io::stdin().lock();
//! let code = serve::run(options, stdin, std::io::stdout())?;
//! std::process::exit(code);
//! # Ok::<(), std::io::Error>(())
//! ```
//!
//! Threads: the caller's thread reads control lines and answers the quick operations
//! itself; `start`, `stop` and `reload` run on threads of their own, as does one waiter
//! per call;
//! one thread forwards host events; one writer thread owns the output, so lines never
//! interleave.

mod calls;
mod control;
mod encode;
mod error;
mod frontend;
mod io;
mod session;

use std::io::{BufRead, Write};
use std::path::PathBuf;

use serde_json::json;

pub use error::ErrorCode;

use crate::host::ExtensionHost;
use crate::limits::{MAX_FRAME_BYTES, OCTET_VERSION};
use crate::negotiation::HostContext;
use frontend::{FrontendHandle, ServeFrontend};
use io::LineRead;
use session::{End, Flow, Session};

/// The version of the control protocol, sent in the `ready` line. It changes only when a
/// line's meaning changes incompatibly; new operations and new members do not change it.
pub const SERVE_PROTOCOL_VERSION: u32 = 1;

/// Longest control line, LF excluded: twice the frame bound, so any arguments that fit
/// in one extension frame fit in a control line with room for the envelope. A longer
/// line is skipped and answered with `line_too_long`.
pub const MAX_CONTROL_LINE_BYTES: usize = 2 * MAX_FRAME_BYTES;

/// How `serve` builds its host.
#[derive(Clone, Debug)]
pub struct ServeOptions {
    /// The workspace (made absolute when the host is built).
    pub workspace: PathBuf,
    /// Explicit extension directories, each holding an `extension.toml`.
    pub extension_dirs: Vec<PathBuf>,
    /// The home directory whose `.octet/extensions` holds global extensions; `None`
    /// skips global extensions.
    pub home: Option<PathBuf>,
    /// The `host` object sent in `initialize` and every execution context.
    pub host_context: HostContext,
    /// The durable session id used in `resource_owner` (default: made up per host).
    pub session_id: Option<String>,
}

impl ServeOptions {
    /// Options for `workspace`, with global extensions under `$HOME`.
    pub fn new(workspace: impl Into<PathBuf>) -> ServeOptions {
        ServeOptions {
            workspace: workspace.into(),
            extension_dirs: Vec::new(),
            home: std::env::var_os("HOME").map(PathBuf::from),
            host_context: HostContext::default(),
            session_id: None,
        }
    }

    /// Adds an explicit extension directory.
    pub fn extension_dir(mut self, dir: impl Into<PathBuf>) -> ServeOptions {
        self.extension_dirs.push(dir.into());
        self
    }

    /// Skips global extensions.
    pub fn no_global_extensions(mut self) -> ServeOptions {
        self.home = None;
        self
    }

    fn build_host(self, frontend: FrontendHandle) -> std::io::Result<ExtensionHost> {
        let mut builder = ExtensionHost::builder(&self.workspace)
            .host_context(self.host_context)
            .frontend(frontend);
        builder = match self.home {
            Some(home) => builder.home_dir(home),
            None => builder.no_global_extensions(),
        };
        if let Some(session_id) = self.session_id {
            builder = builder.session_id(session_id);
        }
        for dir in self.extension_dirs {
            builder = builder.extension_dir(dir);
        }
        builder.build()
    }
}

/// Runs the control protocol over `input` and `output` until the client sends
/// `shutdown` or closes `input`, and returns the process exit code: 0 after an orderly
/// end.
///
/// The first line written is `{"type":"ready",...}`; the last is the shutdown report
/// (the reply to `shutdown`, or a `shutdown` line when the input ended). Every extension
/// is shut down before `run` returns.
///
/// Errors: building the host failed; reading `input` failed (after the orderly
/// shutdown, whose report is still written); or `output` failed, in which case the host
/// is shut down and nothing more is written.
pub fn run(
    options: ServeOptions,
    mut input: impl BufRead,
    output: impl Write + Send + 'static,
) -> std::io::Result<i32> {
    let (out, writer) = io::start_writer(output)?;
    let frontend = ServeFrontend::new(out.clone());
    let host = match options.build_host(FrontendHandle(frontend.clone())) {
        Ok(host) => host,
        Err(error) => {
            drop(out);
            let _ = writer.join();
            return Err(error);
        }
    };
    out.emit(json!({
        "type": "ready",
        "serve_protocol": SERVE_PROTOCOL_VERSION,
        "octet_version": OCTET_VERSION,
        "workspace": host.workspace().display().to_string(),
    }));
    let mut session = Session::new(host, out.clone(), frontend)?;
    let end = loop {
        if session.output_closed() {
            break End::OutputClosed;
        }
        match io::read_line(&mut input, MAX_CONTROL_LINE_BYTES) {
            Ok(LineRead::Line(line)) if line.iter().all(u8::is_ascii_whitespace) => {}
            Ok(LineRead::Line(line)) => {
                if let Flow::Shutdown(id) = session.handle_line(&line) {
                    break End::Requested(id);
                }
            }
            Ok(LineRead::TooLong { bytes }) => session.line_too_long(bytes, MAX_CONTROL_LINE_BYTES),
            Ok(LineRead::Eof) => break End::InputClosed,
            Err(error) => break End::InputFailed(error),
        }
    };
    let ended = session.finish(end);
    drop(out);
    let written = writer
        .join()
        .unwrap_or_else(|_| Err(std::io::Error::other("the serve writer thread panicked")));
    ended?;
    written?;
    Ok(0)
}
