//! The launcher: long-lived threads that spawn generations, so the dispatcher routes
//! frames for every other extension while a child is forked, exec'd and given its I/O
//! threads.
//!
//! # Why long-lived threads
//!
//! Children get `PR_SET_PDEATHSIG(SIGKILL)` ([`crate::transport::spawn`]). Linux sends
//! that signal when the *thread* that forked the child exits, not the process. So a
//! child must be spawned by a thread that lives as long as the host: the launcher
//! threads start with the dispatcher and end only after it, when the dispatcher drops
//! its end of their queue. A launch is handed over as a [`LaunchJob`] and comes back as
//! a [`Launch`], which the dispatcher registers (or reports) exactly as it did when it
//! spawned children itself.
//!
//! There are [`LAUNCHER_THREADS`] of them (see its docs for why so few).

use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender};

use super::command::InitRole;
use super::launch::{launch, Launched};
use super::Shared;
use crate::manifest::LocatedManifest;
use crate::model::start::StartError;

/// How many launcher threads a host has. One: a spawn is short and mostly waits for
/// the kernel, and every extra launcher lets one more child compete for the CPU with
/// the calls of the extensions already running (benches/README.md, "Mass start").
pub(crate) const LAUNCHER_THREADS: usize = 1;

/// A generation to spawn, and who hears the outcome.
pub(crate) struct LaunchJob {
    pub located: LocatedManifest,
    pub role: InitRole,
    /// How long it will have to answer `initialize`.
    pub startup_timeout: Duration,
}

/// A finished launch, on its way back to the dispatcher.
pub(crate) struct Launch {
    pub job: LaunchJob,
    pub result: Result<Launched, StartError>,
}

/// Starts the launcher threads. They end when `jobs`' sender is dropped (or the
/// dispatcher stops taking launches), after the launch in hand; join them then, so that
/// nothing holds the host's shared state after the dispatcher.
pub(crate) fn start(
    shared: &Arc<Shared>,
    jobs: Receiver<LaunchJob>,
    done: Sender<Launch>,
) -> std::io::Result<Vec<JoinHandle<()>>> {
    let mut threads = Vec::with_capacity(LAUNCHER_THREADS);
    for i in 0..LAUNCHER_THREADS {
        let shared = shared.clone();
        let jobs = jobs.clone();
        let done = done.clone();
        threads.push(
            std::thread::Builder::new()
                .name(format!("octet-launcher-{i}"))
                .spawn(move || {
                    for job in jobs {
                        let result = launch(&shared, job.located.clone());
                        if done.send(Launch { job, result }).is_err() {
                            return;
                        }
                    }
                })?,
        );
    }
    Ok(threads)
}
