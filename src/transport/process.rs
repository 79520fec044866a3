//! Process-group control for extension children.
//!
//! Every child is spawned as the leader of a new process group whose id equals its pid
//! (see [`super::spawn::spawn`]). Whatever the child starts inherits that group unless it
//! moves itself out (`setsid`, `setpgid`), so signalling the group reaches the child and
//! the descendants it left behind.
//!
//! # What the OS really does
//!
//! - `killpg(pgid, sig)` sends `sig` to every process whose process-group id is `pgid`.
//!   It fails with `ESRCH` when no such process exists; that is not an error here.
//! - A process-group id stays reserved while any process still belongs to the group.
//!   The leader's pid is additionally kept (as a zombie) from the moment it exits
//!   until its parent, the host, reaps it with `wait`. While the leader is an unreaped
//!   zombie, its pid, and so its group id, cannot be handed to a new process.
//! - After the leader is reaped, the group id stays valid only as long as some other
//!   member is alive; once the last member is gone the number may be reused for an
//!   unrelated process (and that process may make itself a group leader). Signalling a
//!   group by number after reaping its leader can therefore hit a stranger.
//!
//! # Shutdown order
//!
//! Hence the order this module follows:
//!
//! 1. detect that the child exited *without reaping it*
//!    (`waitid(P_PID, pid, WEXITED | WNOHANG | WNOWAIT)`, see [`has_exited`]), so the
//!    zombie keeps the group id reserved;
//! 2. `killpg(pgid, SIGKILL)` to remove the grandchildren left in the group;
//! 3. reap the child (`waitpid`), which releases its pid.
//!
//! A child still running when the host gives up is killed the same way, group first
//! ([`ChildProcess::terminate_and_reap`]). Descendants that left the group (a daemon
//! calling `setsid`) are out of reach of this mechanism; the reference does not promise
//! more than process-group cleanup.
//!
//! If the embedding program sets `SIGCHLD` to `SIG_IGN`, the kernel reaps children
//! itself and none of the waits here can observe an exit status (they fail with
//! `ECHILD`); the host must not be embedded that way.

use std::io;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::time::{Duration, Instant};

/// A signal number, such as `libc::SIGTERM` or `libc::SIGKILL`.
pub type Signal = libc::c_int;

/// The conventional name of the signals that end a host in order (`SIGINT`, `SIGTERM`,
/// `SIGHUP`), and `"signal"` for any other.
pub fn signal_name(signal: Signal) -> &'static str {
    match signal {
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        libc::SIGHUP => "SIGHUP",
        _ => "signal",
    }
}

/// Sends `signal` to every process in the process group `pgid`.
///
/// A group with no process left (`ESRCH`) is not an error. `pgid` must name a real
/// group: 0 and 1 are refused with `InvalidInput`, because `killpg(0, ..)` signals the
/// caller's own group and group 1 holds init; numbers above `i32::MAX` are refused
/// because they are not process ids.
pub fn kill_group(pgid: u32, signal: Signal) -> io::Result<()> {
    let pgid = checked_pid(pgid)?;
    // SAFETY: killpg takes plain integers and has no memory-safety preconditions.
    if unsafe { libc::killpg(pgid, signal) } == 0 {
        return Ok(());
    }
    let error = io::Error::last_os_error();
    if error.raw_os_error() == Some(libc::ESRCH) {
        return Ok(());
    }
    Err(error)
}

/// True when the child `pid` has exited (or was killed), without reaping it.
///
/// Uses `waitid(P_PID, pid, WEXITED | WNOHANG | WNOWAIT)`: the exit is observed but the
/// child stays a zombie, so its pid and process-group id remain reserved until
/// [`reap`]. `pid` must be a child of this process that has not been reaped yet;
/// otherwise this fails with `ECHILD`.
pub fn has_exited(pid: u32) -> io::Result<bool> {
    let pid = checked_pid(pid)?;
    loop {
        // SAFETY: an all-zero siginfo_t is a valid value; waitid writes into it.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: `info` is a valid, writable siginfo_t for the duration of the call.
        let rc = unsafe {
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
            )
        };
        if rc == 0 {
            // With WNOHANG, si_pid stays 0 when the child has not changed state.
            // SAFETY: waitid succeeded, so `info` holds a SIGCHLD record (or zeroes).
            return Ok(unsafe { info.si_pid() } != 0);
        }
        let error = io::Error::last_os_error();
        if error.kind() != io::ErrorKind::Interrupted {
            return Err(error);
        }
    }
}

/// Waits for the child `pid` to exit and reaps it, releasing its pid (and, if no other
/// member remains, its process-group id). Call it once: a second call fails with
/// `ECHILD`, or, should the pid have been reused by a new child of this process, waits
/// for that one.
pub fn reap(pid: u32) -> io::Result<ExitStatus> {
    let pid = checked_pid(pid)?;
    loop {
        let mut status = 0;
        // SAFETY: waits for our own child; `status` is a valid out-pointer.
        if unsafe { libc::waitpid(pid, &mut status, 0) } == pid {
            return Ok(ExitStatus::from_raw(status));
        }
        let error = io::Error::last_os_error();
        if error.kind() != io::ErrorKind::Interrupted {
            return Err(error);
        }
    }
}

fn checked_pid(pid: u32) -> io::Result<libc::pid_t> {
    match libc::pid_t::try_from(pid) {
        Ok(pid) if pid > 1 => Ok(pid),
        _ => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{pid} is not a process id that may be signalled"),
        )),
    }
}

/// Shortest pause between two exit checks in [`ChildProcess::wait_exited_timeout`].
const EXIT_POLL_MIN: Duration = Duration::from_millis(1);

/// Longest pause between two exit checks in [`ChildProcess::wait_exited_timeout`].
const EXIT_POLL_MAX: Duration = Duration::from_millis(20);

/// A spawned child that leads its own process group, with the shutdown order of this
/// module built in.
///
/// Dropping a `ChildProcess` that was not reaped kills its whole group with `SIGKILL`
/// and reaps it, so neither a live child, a grandchild left in the group, nor a zombie
/// outlives it. (The drop waits for the killed child, which takes as long as the
/// kernel needs to deliver `SIGKILL`.)
#[derive(Debug)]
pub struct ChildProcess {
    pid: u32,
    status: Option<ExitStatus>,
    /// The generation fence whose marked processes are killed once the child is
    /// reaped (Linux; see [`super::fence`]).
    #[cfg(target_os = "linux")]
    fence: Option<super::fence::GenerationFence>,
    /// What the host's guardian watches for this child; released once it is reaped.
    guardian: Option<super::guardian::GuardianLease>,
}

impl ChildProcess {
    /// Takes charge of the child `pid`: this process's own child, not yet reaped, which
    /// leads its own process group (spawned as [`super::spawn::spawn`] does). Nothing
    /// else may reap it.
    pub fn from_pid(pid: u32) -> ChildProcess {
        ChildProcess {
            pid,
            status: None,
            #[cfg(target_os = "linux")]
            fence: None,
            guardian: None,
        }
    }

    /// Hands the guardian's registration of this child (its group and fence marker)
    /// to the child: it is released once the child is reaped and its descendants are
    /// swept, when the group number may be reused ([`super::guardian`]).
    pub fn with_guardian(mut self, lease: super::guardian::GuardianLease) -> ChildProcess {
        self.guardian = Some(lease);
        self
    }

    /// Also kills, once the child is reaped, every process still carrying `fence`'s
    /// marker: descendants that left the process group ([`super::fence`]).
    #[cfg(target_os = "linux")]
    pub fn with_fence(mut self, fence: super::fence::GenerationFence) -> ChildProcess {
        self.fence = Some(fence);
        self
    }

    /// The child's pid, which is also its process-group id.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The exit status once the child has been reaped.
    pub fn status(&self) -> Option<ExitStatus> {
        self.status
    }

    /// True when the child has exited but is not reaped yet (its group id is still
    /// reserved). False while it runs, and false once reaped.
    pub fn exited_unreaped(&self) -> io::Result<bool> {
        if self.status.is_some() {
            return Ok(false);
        }
        has_exited(self.pid)
    }

    /// True once the child has exited, reaped or not.
    pub fn has_exited(&self) -> io::Result<bool> {
        if self.status.is_some() {
            return Ok(true);
        }
        has_exited(self.pid)
    }

    /// Waits up to `timeout` for the child to exit, without reaping it. Returns whether
    /// it exited. Polls with a short, growing pause (1 to 20 ms).
    pub fn wait_exited_timeout(&self, timeout: Duration) -> io::Result<bool> {
        let deadline = Instant::now() + timeout;
        let mut pause = EXIT_POLL_MIN;
        loop {
            if self.has_exited()? {
                return Ok(true);
            }
            let now = Instant::now();
            if now >= deadline {
                return Ok(false);
            }
            std::thread::sleep(pause.min(deadline - now));
            pause = (pause * 2).min(EXIT_POLL_MAX);
        }
    }

    /// Sends `signal` to the child's process group. Refused (`InvalidInput`) once the
    /// child has been reaped, because its group id may then belong to someone else.
    ///
    /// With a fence (Linux) and `SIGKILL`, the descendants found through the parent
    /// chain are killed too, first, wherever their process group is: while the child
    /// lives, that chain still ties them to it.
    pub fn kill_group(&self, signal: Signal) -> io::Result<()> {
        if self.status.is_some() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "the child was reaped; its process-group id is no longer ours",
            ));
        }
        #[cfg(target_os = "linux")]
        if signal == libc::SIGKILL && self.fence.is_some() {
            super::fence::kill_and_reap(&super::fence::descendants(self.pid));
        }
        kill_group(self.pid, signal)
    }

    /// Kills the whole group with `SIGKILL` now, then reaps the child. The child may
    /// still be running; this is the forced end of section 1.8.
    pub fn terminate_and_reap(&mut self) -> io::Result<ExitStatus> {
        if let Some(status) = self.status {
            return Ok(status);
        }
        if let Err(error) = kill_group(self.pid, libc::SIGKILL) {
            // The group could not be signalled (EPERM after a member changed its
            // credentials, say); at least make sure the child itself dies.
            // SAFETY: kill takes plain integers; our unreaped child keeps its pid.
            if unsafe { libc::kill(self.pid as libc::pid_t, libc::SIGKILL) } != 0 {
                return Err(error);
            }
        }
        self.reap()
    }

    /// The normal end once the child exits by itself: waits (without reaping) until it
    /// has exited, kills whatever it left in its group with `SIGKILL`, then reaps it.
    ///
    /// This blocks until the child exits; use [`ChildProcess::wait_exited_timeout`]
    /// first, or [`ChildProcess::terminate_and_reap`], to bound the wait.
    pub fn finish(&mut self) -> io::Result<ExitStatus> {
        if let Some(status) = self.status {
            return Ok(status);
        }
        wait_exited_blocking(self.pid)?;
        let killed = kill_group(self.pid, libc::SIGKILL);
        // Reap even when the group could not be signalled: a zombie must not remain.
        let status = self.reap()?;
        killed.map(|()| status)
    }

    fn reap(&mut self) -> io::Result<ExitStatus> {
        let status = reap(self.pid)?;
        self.status = Some(status);
        // The child is reaped, so the sweep cannot take its exit status; what still
        // carries the marker left the group and must go too.
        #[cfg(target_os = "linux")]
        if let Some(fence) = &self.fence {
            fence.sweep();
        }
        self.guardian = None;
        Ok(status)
    }
}

impl Drop for ChildProcess {
    fn drop(&mut self) {
        if self.status.is_none() {
            let _ = self.terminate_and_reap();
        }
    }
}

/// Blocks until the child `pid` has exited, without reaping it.
fn wait_exited_blocking(pid: u32) -> io::Result<()> {
    let pid = checked_pid(pid)?;
    loop {
        // SAFETY: an all-zero siginfo_t is a valid value; waitid writes into it.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: `info` is a valid, writable siginfo_t for the duration of the call.
        let rc = unsafe {
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        if rc == 0 {
            return Ok(());
        }
        let error = io::Error::last_os_error();
        if error.kind() != io::ErrorKind::Interrupted {
            return Err(error);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_groups_that_are_not_ours_to_signal() {
        for pgid in [0, 1, u32::MAX] {
            let error = kill_group(pgid, 0).unwrap_err();
            assert_eq!(error.kind(), io::ErrorKind::InvalidInput);
        }
    }
}
