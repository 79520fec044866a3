//! SIGINT, SIGTERM and SIGHUP: a coordinated signal exit (section 1.8).
//!
//! A thread waits for the first of those signals and shuts the host down with the
//! 1.4-second signal cap, after which every registered process group is killed. The
//! main thread, whose calls fail once the host is shut down, then learns about the
//! signal from [`SignalWatch::finish`] and exits with 128 + the signal number.

use std::sync::Arc;
use std::thread::JoinHandle;

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::{Handle, Signals};

use crate::host::{ExtensionHost, ShutdownReport};

/// A signal that arrived, and how the shutdown it caused went.
#[derive(Debug)]
pub(crate) struct Interrupt {
    /// The signal number.
    pub signal: i32,
    /// The signal shutdown's report.
    pub report: ShutdownReport,
}

/// The signal-watching thread of one host.
pub(crate) struct SignalWatch {
    handle: Handle,
    thread: Option<JoinHandle<Option<Interrupt>>>,
}

impl SignalWatch {
    /// Replaces the default action of SIGINT, SIGTERM and SIGHUP with a signal shutdown
    /// of `host`.
    pub(crate) fn install(host: Arc<ExtensionHost>) -> std::io::Result<SignalWatch> {
        let mut signals = Signals::new([SIGINT, SIGTERM, SIGHUP])?;
        let handle = signals.handle();
        let thread = std::thread::Builder::new()
            .name("octet-signals".into())
            .spawn(move || {
                // `forever` ends without a signal once `finish` closes the handle.
                let signal = signals.forever().next()?;
                // The terminal is the CLI's again before anything else.
                #[cfg(unix)]
                super::tty::restore_now();
                let report = host.shutdown_for_signal();
                Some(Interrupt { signal, report })
            })?;
        Ok(SignalWatch {
            handle,
            thread: Some(thread),
        })
    }

    /// Stops watching. Returns the signal that arrived, if one did, once the shutdown it
    /// caused has finished.
    pub(crate) fn finish(mut self) -> Option<Interrupt> {
        self.stop()
    }

    fn stop(&mut self) -> Option<Interrupt> {
        self.handle.close();
        self.thread.take()?.join().ok().flatten()
    }
}

/// Forwards SIGINT, SIGTERM and SIGHUP to a channel until dropped, replacing their
/// default action (for `serve`, whose session decides what a signal does).
pub(crate) struct SignalForwarder {
    handle: Handle,
    thread: Option<JoinHandle<()>>,
}

/// Starts forwarding; the receiver gets each signal's number.
pub(crate) fn forward() -> std::io::Result<(SignalForwarder, crossbeam_channel::Receiver<i32>)> {
    let mut signals = Signals::new([SIGINT, SIGTERM, SIGHUP])?;
    let handle = signals.handle();
    let (sender, received) = crossbeam_channel::unbounded();
    let thread = std::thread::Builder::new()
        .name("octet-signals".into())
        .spawn(move || {
            for signal in signals.forever() {
                if sender.send(signal).is_err() {
                    return;
                }
            }
        })?;
    Ok((
        SignalForwarder {
            handle,
            thread: Some(thread),
        },
        received,
    ))
}

impl Drop for SignalForwarder {
    fn drop(&mut self) {
        self.handle.close();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for SignalWatch {
    fn drop(&mut self) {
        self.stop();
    }
}
