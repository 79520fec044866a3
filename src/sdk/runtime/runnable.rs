//! Whether a pool's workers are waiting for a CPU or blocked.
//!
//! A worker that took no job for a while is either blocked in its handler (waiting on
//! a child request, a person, a lock), where one more worker lets the waiting jobs
//! run, or merely waiting for a CPU on a busy machine, where one more worker only adds
//! a thread to take turns with. On Linux the kernel says which: the state field of
//! `/proc/self/task/<tid>/stat` is `R` for a thread that runs or waits for a CPU, `S`
//! or `D` for one that sleeps. Elsewhere every worker counts as blocked, and a pool
//! grows by time alone.

/// A worker thread's identity, as the check reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct WorkerId(#[cfg_attr(not(target_os = "linux"), allow(dead_code))] i64);

impl WorkerId {
    /// The calling thread's.
    pub(crate) fn current() -> WorkerId {
        #[cfg(target_os = "linux")]
        // SAFETY: gettid has no preconditions and cannot fail.
        let id = unsafe { libc::syscall(libc::SYS_gettid) };
        #[cfg(not(target_os = "linux"))]
        let id = 0;
        WorkerId(id)
    }
}

/// True when any of `workers` runs or waits for a CPU: the pool is making progress,
/// however slowly, and no worker is missing.
#[cfg(target_os = "linux")]
pub(crate) fn any_runnable(workers: &[WorkerId]) -> bool {
    workers.iter().any(|worker| {
        std::fs::read_to_string(format!("/proc/self/task/{}/stat", worker.0))
            .ok()
            .and_then(|stat| state(&stat))
            == Some('R')
    })
}

/// True when any of `workers` runs or waits for a CPU (never known here).
#[cfg(not(target_os = "linux"))]
pub(crate) fn any_runnable(_workers: &[WorkerId]) -> bool {
    false
}

/// The state letter of a `stat` line: the first field after the command, which is in
/// parentheses and may itself hold spaces and parentheses.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn state(stat: &str) -> Option<char> {
    let (_, rest) = stat.rsplit_once(')')?;
    rest.trim_start().chars().next()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_state_after_an_awkward_command() {
        assert_eq!(state("42 (a) b) (c) S 1 2 3"), Some('S'));
        assert_eq!(state("7 (octet-sdk-worker) R 1"), Some('R'));
        assert_eq!(state("garbage"), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_sleeping_thread_is_not_runnable_and_a_spinning_one_is() {
        use std::sync::atomic::{AtomicBool, Ordering};
        use std::sync::{mpsc, Arc};
        let (id_tx, id_rx) = mpsc::channel();
        let (release_tx, release_rx) = mpsc::channel::<()>();
        let sleeper = std::thread::spawn(move || {
            id_tx.send(WorkerId::current()).unwrap();
            release_rx.recv().unwrap();
        });
        let sleeping = id_rx.recv().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let (id_tx, id_rx) = mpsc::channel();
        let spinning_stop = Arc::clone(&stop);
        let spinner = std::thread::spawn(move || {
            id_tx.send(WorkerId::current()).unwrap();
            while !spinning_stop.load(Ordering::Relaxed) {
                std::hint::spin_loop();
            }
        });
        let spinning = id_rx.recv().unwrap();
        // The sleeper reaches its wait soon; a loaded machine may take a while.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while any_runnable(&[sleeping]) && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert!(!any_runnable(&[sleeping]));
        assert!(any_runnable(&[sleeping, spinning]));
        stop.store(true, Ordering::Relaxed);
        release_tx.send(()).unwrap();
        spinner.join().unwrap();
        sleeper.join().unwrap();
    }
}
