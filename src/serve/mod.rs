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
//! let stdin = std::io::BufReader::new(std::io::stdin());
//! let code = serve::run(options, stdin, std::io::stdout())?;
//! std::process::exit(code);
//! # Ok::<(), std::io::Error>(())
//! ```
//!
//! Threads: one thread reads control lines; the caller's thread handles them and
//! answers the quick operations itself; `start`, `stop` and `reload` run on threads of
//! their own; one thread waits for every call in flight at once (however many there
//! are); one thread forwards host events; one writer thread owns the output, so lines
//! never interleave.
//!
//! Signals: with [`ServeOptions::signals`], the first signal received stops the reading
//! of control lines and runs the coordinated-signal shutdown of section 1.8 (1.4 s,
//! then every process group is killed); every call still in flight gets its `result`
//! line, and the last line is `{"type":"shutdown","reason":"signal",...}`. A second
//! signal kills every process group at once.

mod agents;
mod bindings;
mod brokers;
mod calls;
mod control;
mod encode;
pub(crate) mod error;
mod fields;
mod frontend;
mod io;
mod members;
mod services;
mod session;
mod trace;

pub use control::CALL_OPS;
pub use io::ChannelInput;

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

/// Whether serve's threads on a call's path ask for prompt wake-ups
/// ([`ServeOptions::prompt_wakeups`]).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Wakeups {
    prompt: bool,
}

impl Wakeups {
    /// Gives the calling thread the short slice while the guard lives, if asked for.
    pub(crate) fn hold(self) -> Option<crate::host::PromptWakeups> {
        self.prompt
            .then(crate::host::PromptWakeups::for_this_thread)
    }
}

/// How `serve` builds its host.
#[derive(Clone, Debug)]
#[non_exhaustive]
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
    /// How long an extension has to answer `initialize` (default:
    /// [`crate::limits::STARTUP_TIMEOUT`]); a `start` line may set its own.
    pub startup_timeout: Option<std::time::Duration>,
    /// The client answers no questions (`serve --no-input`): confirmations are denied
    /// and input requests cancelled at once, without a `confirmation_request` or
    /// `input_request` line, instead of waiting for the request's deadline.
    pub no_input: bool,
    /// Signal numbers (SIGINT, SIGTERM, SIGHUP) that end the session as described in
    /// the module docs; `None` ends it only by `shutdown` or the end of the input. The
    /// CLI forwards the process's signals here.
    pub signals: Option<crossbeam_channel::Receiver<i32>>,
    /// Start the host's guardian (default: on), so that a `serve` killed outright takes
    /// every extension process and scratch directory with it
    /// ([`crate::host::ExtensionHostBuilder::guardian`]).
    pub guardian: bool,
    /// Give serve's threads on a call's path (the input reader, the thread handling
    /// control lines, the calls thread and the output writer) the short scheduler
    /// slice of [`crate::host::PromptWakeups`] (default: on; `serve
    /// --no-prompt-wakeups` turns it off). See [`ServeOptions::prompt_wakeups`].
    pub prompt_wakeups: bool,
    /// Stream the wire trace: every frame to and from every extension as a `trace`
    /// output line (`serve --wire-trace`; docs/serve-protocol.md, "Wire trace").
    pub wire_trace: bool,
    /// The runtime-served features offered to every API 0.4 extension, and where they
    /// keep their files (`serve --tool-composition`, `--resource-refs`, ...); a `start`
    /// with `"features"` offers one to one extension.
    pub features: crate::features::RuntimeOptions,
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
            features: crate::features::RuntimeOptions::default(),
            wire_trace: false,
            startup_timeout: None,
            no_input: false,
            signals: None,
            guardian: true,
            prompt_wakeups: true,
        }
    }

    /// Whether serve's threads on a call's path hold the short scheduler slice of
    /// [`crate::host::PromptWakeups`] while the session lasts (default: on; the thread
    /// calling [`run`] gets its old slice back when `run` returns). A client's calls
    /// then answer promptly on a machine whose CPUs other programs keep busy (an editor
    /// beside a build): each of serve's threads preempts that work on wake-up instead
    /// of waiting for its slice. With one busy loop per core, 400 back-to-back calls
    /// from a Python client took a median of 0.28-0.50 ms a call with it and 3.93-3.94
    /// ms without; on a quiet machine 0.32-0.33 ms and 0.33-0.34 ms (`benches/README.md`,
    /// "serve on a busy machine"). On kernels before Linux 6.12, on other systems and
    /// for threads under another scheduling policy nothing changes: the threads keep
    /// the default slice.
    pub fn prompt_wakeups(mut self, enabled: bool) -> ServeOptions {
        self.prompt_wakeups = enabled;
        self
    }

    /// Streams the wire trace as `trace` lines (see [`ServeOptions::wire_trace`]).
    pub fn wire_trace(mut self, enabled: bool) -> ServeOptions {
        self.wire_trace = enabled;
        self
    }

    /// Turns the guardian on or off (see [`ServeOptions::guardian`]).
    pub fn guardian(mut self, enabled: bool) -> ServeOptions {
        self.guardian = enabled;
        self
    }

    /// Declares the client headless (see [`ServeOptions::no_input`]).
    pub fn no_input(mut self) -> ServeOptions {
        self.no_input = true;
        self
    }

    /// Ends the session on the signal numbers received from `signals` (see the module
    /// docs).
    pub fn signals(mut self, signals: crossbeam_channel::Receiver<i32>) -> ServeOptions {
        self.signals = Some(signals);
        self
    }

    /// Sets how long an extension has to answer `initialize`.
    pub fn startup_timeout(mut self, timeout: std::time::Duration) -> ServeOptions {
        self.startup_timeout = Some(timeout);
        self
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

    fn build_host(
        self,
        frontend: FrontendHandle,
        trace: Option<trace::Sink>,
    ) -> std::io::Result<ExtensionHost> {
        let mut builder = ExtensionHost::builder(&self.workspace)
            .host_context(self.host_context)
            .frontend(frontend)
            .guardian(self.guardian);
        builder = match self.home {
            Some(home) => builder.home_dir(home),
            None => builder.no_global_extensions(),
        };
        if let Some(session_id) = self.session_id {
            builder = builder.session_id(session_id);
        }
        builder = builder.runtime_options(&self.features);
        if let Some(trace) = trace {
            builder = builder.wire_trace_sink(trace);
        }
        if let Some(timeout) = self.startup_timeout {
            builder = builder.startup_timeout(timeout);
        }
        for dir in self.extension_dirs {
            builder = builder.extension_dir(dir);
        }
        builder.build()
    }
}

/// Runs the control protocol over `input` and `output` until the client sends
/// `shutdown`, closes `input`, or a signal arrives on [`ServeOptions::signals`], and
/// returns the process exit code: 0 after an orderly end, 128 + the signal number after
/// a signal.
///
/// The first line written is `{"type":"ready",...}`; the last is the shutdown report
/// (the reply to `shutdown`, or a `shutdown` line when the input ended). Every extension
/// is shut down before `run` returns.
///
/// Errors: building the host failed; reading `input` failed (after the orderly
/// shutdown, whose report is still written); or `output` failed, in which case the host
/// is shut down and nothing more is written.
pub fn run(
    mut options: ServeOptions,
    input: impl BufRead + Send + 'static,
    output: impl Write + Send + 'static,
) -> std::io::Result<i32> {
    let signals = options
        .signals
        .take()
        .unwrap_or_else(crossbeam_channel::never);
    let wakeups = Wakeups {
        prompt: options.prompt_wakeups,
    };
    let _prompt = wakeups.hold();
    let (out, writer) = io::start_writer(output, wakeups)?;
    let frontend = ServeFrontend::new(out.clone());
    let answers = !options.no_input;
    let (trace, tracer) = match options.wire_trace {
        true => {
            let (sink, thread) = trace::start(out.clone())?;
            let sink: trace::Sink = Box::new(sink);
            (Some(sink), Some(thread))
        }
        false => (None, None),
    };
    let host = match options.build_host(FrontendHandle(frontend.clone(), answers), trace) {
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
        "version": env!("CARGO_PKG_VERSION"),
        "octet_version": OCTET_VERSION,
        "workspace": host.workspace().display().to_string(),
        "session_id": host.session_id(),
    }));
    let mut session = Session::new(host, out.clone(), frontend, wakeups)?.traced_by(tracer);
    // The input is read on a thread of its own, so a signal is seen at once even while
    // no line arrives. After the session ends the thread is left blocked in its read;
    // it ends with the input (or the process).
    let lines = io::start_reader(input, MAX_CONTROL_LINE_BYTES, wakeups)?;
    let end = loop {
        if session.output_closed() {
            break End::OutputClosed;
        }
        crossbeam_channel::select! {
            recv(signals) -> signal => if let Ok(signal) = signal {
                break End::Signal(signal);
            },
            recv(lines) -> read => match read {
                Ok(Ok(LineRead::Line(line))) if line.iter().all(u8::is_ascii_whitespace) => {}
                Ok(Ok(LineRead::Line(line))) => {
                    if let Flow::Shutdown(id) = session.handle_line(&line) {
                        break End::Requested(id);
                    }
                }
                Ok(Ok(LineRead::TooLong { bytes })) => {
                    session.line_too_long(bytes, MAX_CONTROL_LINE_BYTES)
                }
                Ok(Ok(LineRead::Eof)) | Err(_) => break End::InputClosed,
                Ok(Err(error)) => break End::InputFailed(error),
            },
        }
    };
    let code = match end {
        End::Signal(signal) => 128 + signal,
        _ => 0,
    };
    let ended = session.finish(end, &signals);
    drop(out);
    let written = writer
        .join()
        .unwrap_or_else(|_| Err(std::io::Error::other("the serve writer thread panicked")));
    ended?;
    written?;
    Ok(code)
}
