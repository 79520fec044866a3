//! One host for the length of a subcommand, with signal handling around it.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::error::CliError;
use super::signals::SignalWatch;
use super::GlobalArgs;
use crate::host::{
    ExtensionHandle, ExtensionHost, ExtensionHostBuilder, HostEvent, ServiceBindings,
    ShutdownReport,
};

/// A host builder over the global options (the workspace, which must be a directory,
/// the extension directories, the startup timeout and the guardian). The host it
/// builds makes the workspace absolute; read it back with `ExtensionHost::workspace`.
pub(crate) fn builder_for(global: &GlobalArgs) -> Result<ExtensionHostBuilder, CliError> {
    let workspace = match &global.workspace {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().map_err(CliError::Host)?,
    };
    if !workspace.is_dir() {
        return Err(CliError::Workspace { path: workspace });
    }
    // The CLI's extensions never outlive it, however it ends.
    let mut builder = ExtensionHost::builder(&workspace).guardian(!global.no_guardian);
    if global.no_global {
        builder = builder.no_global_extensions();
    }
    for dir in &global.extension_dirs {
        builder = builder.extension_dir(dir);
    }
    if let Some(timeout) = global.startup_timeout {
        builder = builder.startup_timeout(timeout);
    }
    Ok(builder.runtime_options(&global.features))
}

/// A host, shut down on every path out of the subcommand.
pub(crate) struct Session {
    host: Arc<ExtensionHost>,
    signals: Option<SignalWatch>,
}

impl Session {
    /// A host over the global options' workspace and extension directories.
    pub(crate) fn open(global: &GlobalArgs) -> Result<Session, CliError> {
        let mut builder = builder_for(global)?;
        // `--no-input` keeps the headless default: deny and cancel without asking.
        let mut tty = None;
        if global.yes {
            builder = builder.frontend(super::frontend::YesFrontend::new());
        } else if !global.no_input {
            if let Some(frontend) = super::frontend::TerminalFrontend::if_interactive() {
                builder = builder.frontend(frontend);
            }
            // An interactive CLI cedes its terminal on request (section 2.24).
            #[cfg(unix)]
            if let Some(terminal) = super::tty::Tty::if_interactive() {
                let bindings = ServiceBindings::new().terminal_handoff(terminal.clone());
                builder = builder.bind(bindings);
                tty = Some(terminal);
            }
        }
        let session = Session::from_builder(builder)?;
        #[cfg(unix)]
        if let Some(tty) = tty {
            tty.attach(&session.host);
        }
        #[cfg(not(unix))]
        let _ = tty;
        Ok(session)
    }

    /// Builds the host and installs the signal handlers.
    pub(crate) fn from_builder(builder: ExtensionHostBuilder) -> Result<Session, CliError> {
        let host = Arc::new(builder.build().map_err(CliError::Host)?);
        let signals = SignalWatch::install(host.clone()).map_err(CliError::Host)?;
        Ok(Session {
            host,
            signals: Some(signals),
        })
    }

    /// The host.
    pub(crate) fn host(&self) -> &ExtensionHost {
        &self.host
    }

    /// Starts the discovered extension `name`.
    pub(crate) fn start(&self, name: &str) -> Result<ExtensionHandle, CliError> {
        self.host.start(name).map_err(|error| CliError::Start {
            extension: name.to_owned(),
            error,
        })
    }

    /// Every event already delivered, without waiting.
    pub(crate) fn drain_events(&self) -> Vec<HostEvent> {
        self.host.events().try_iter().collect()
    }

    /// Events until `quiet` passes without a new one (or `within` in total): stderr
    /// lines travel on their own thread and may trail the answer they came with.
    pub(crate) fn settle_events(&self, quiet: Duration, within: Duration) -> Vec<HostEvent> {
        let end = Instant::now() + within;
        let mut events = Vec::new();
        while let Some(left) = end.checked_duration_since(Instant::now()) {
            match self.host.events().recv_timeout(quiet.min(left)) {
                Ok(event) => events.push(event),
                Err(_) => break,
            }
        }
        events
    }

    /// Shuts every extension down (the bounded sequence of section 1.8).
    pub(crate) fn shutdown(&self) -> ShutdownReport {
        self.host.shutdown()
    }

    /// Ends the session: stops watching signals and shuts the host down. When a signal
    /// arrived meanwhile, the outcome is [`CliError::Interrupted`] whatever `result` was,
    /// since the signal shutdown is what ended the subcommand's calls.
    pub(crate) fn finish<T>(mut self, result: Result<T, CliError>) -> Result<T, CliError> {
        // Whatever happened, the terminal is the CLI's again.
        #[cfg(unix)]
        super::tty::restore_now();
        let interrupt = self.signals.take().and_then(SignalWatch::finish);
        if let Some(interrupt) = interrupt {
            return Err(CliError::Interrupted {
                signal: interrupt.signal,
                report: interrupt.report,
            });
        }
        // The person waiting hears a call's failure (its deadline, say) when it
        // happens, not after the extensions' shutdown sequence.
        let result = result.map_err(|error| {
            super::output::eprint_line(&format!("error: {error}"));
            CliError::Reported(Box::new(error))
        });
        self.shutdown_attended();
        result
    }

    /// Shuts the host down, saying what it waits for when that takes more than a
    /// moment; a signal meanwhile kills every process group at once.
    fn shutdown_attended(&self) {
        let host = self.host.clone();
        let (done, finished) = crossbeam_channel::bounded(1);
        let shutdown = std::thread::spawn(move || {
            host.shutdown();
            let _ = done.send(());
        });
        let timed_out = |r: Result<(), crossbeam_channel::RecvTimeoutError>| {
            r == Err(crossbeam_channel::RecvTimeoutError::Timeout)
        };
        if timed_out(finished.recv_timeout(SHUTDOWN_MOMENT)) {
            let running: Vec<String> = self
                .host
                .status()
                .into_iter()
                .filter(|s| s.pid.is_some())
                .map(|s| format!("`{}`", s.extension))
                .collect();
            super::output::eprint_line(&format!(
                "waiting up to {} s for {} to exit (Ctrl-C kills at once)",
                crate::limits::SHUTDOWN_AGGREGATE_DEADLINE.as_secs(),
                if running.is_empty() {
                    "the extensions".to_string()
                } else {
                    running.join(", ")
                }
            ));
            let mut signals = signal_hook::iterator::Signals::new([
                signal_hook::consts::SIGINT,
                signal_hook::consts::SIGTERM,
                signal_hook::consts::SIGHUP,
            ])
            .ok();
            while timed_out(finished.recv_timeout(SIGNAL_POLL)) {
                if signals
                    .as_mut()
                    .is_some_and(|s| s.pending().next().is_some())
                {
                    self.host.kill_all();
                }
            }
        }
        let _ = shutdown.join();
    }
}

/// How long a shutdown may take before the CLI says what it waits for.
const SHUTDOWN_MOMENT: Duration = Duration::from_millis(300);

/// How often the CLI looks for a signal while it waits for the shutdown.
const SIGNAL_POLL: Duration = Duration::from_millis(20);
