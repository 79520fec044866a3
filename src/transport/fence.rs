//! The generation fence: finding the descendants of an extension that left its process
//! group, so that processes never outlive the host's intent.
//!
//! Process-group cleanup ([`super::process`]) reaches everything that stays in the
//! extension's group. A descendant that calls `setsid` (a daemon, `setsid sleep 900`,
//! a double fork) leads a group of its own and is out of that reach. Two more
//! mechanisms find it, on Linux:
//!
//! - **The fence marker.** Every generation's child gets a unique, unguessable value in
//!   its environment, [`GENERATION_FENCE_VARIABLE`]. Everything it starts inherits the
//!   environment, so at teardown the host scans `/proc/<pid>/environ` of every
//!   process it may read (those of its own user) and kills each one that still carries
//!   the marker ([`GenerationFence::sweep`]).
//! - **The parent chain.** While the child still runs, its descendants are found through
//!   the `ppid` field of `/proc/<pid>/stat`, whatever their environment
//!   ([`descendants`]); they are killed with the group when a generation is killed.
//!
//! # What is out of reach
//!
//! A descendant that both clears (or rewrites) its environment *and* leaves the
//! process group before the child is killed (or after the child exited, once it was
//! re-parented) cannot be found: there is nothing left that ties it to the extension.
//! Processes of another user (after `setuid`) cannot be read or signalled. Outside
//! Linux only process-group cleanup applies.
//!
//! With [`crate::host::ExtensionHostBuilder::child_subreaper`], orphaned descendants
//! are re-parented to the host process instead of init, which keeps them on the parent
//! chain of the host; the host reaps the ones it kills.
//!
//! The value is reserved: a manifest's `[entrypoint].env` cannot set it.

use std::ffi::OsString;
use std::io;

/// The environment variable that carries a generation's fence marker. Reserved: the
/// host always sets it last, over any manifest entry of that name.
pub const GENERATION_FENCE_VARIABLE: &str = "OCTET_GENERATION_FENCE";

/// One generation's fence marker: 32 random hexadecimal characters from
/// `/dev/urandom`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GenerationFence {
    marker: String,
}

impl GenerationFence {
    /// A new, unguessable marker.
    pub fn new() -> io::Result<GenerationFence> {
        Ok(GenerationFence {
            marker: crate::hex::random(16)?,
        })
    }

    /// The marker itself, 32 hexadecimal characters.
    pub fn marker(&self) -> &str {
        &self.marker
    }

    /// The environment entry that marks the child.
    pub fn env_entry(&self) -> (OsString, OsString) {
        (
            GENERATION_FENCE_VARIABLE.into(),
            self.marker.as_str().into(),
        )
    }

    /// Kills (SIGKILL) every process this user may read whose environment carries this
    /// marker, except the calling process, and reaps the ones that are the caller's
    /// own children. Returns their pids. Does nothing (and returns nothing) where
    /// `/proc` cannot be read.
    pub fn sweep(&self) -> Vec<u32> {
        let needle = format!("{GENERATION_FENCE_VARIABLE}={}", self.marker).into_bytes();
        let marked: Vec<u32> = processes()
            .filter(|&pid| environ_has(pid, &needle))
            .collect();
        kill_and_reap(&marked);
        marked
    }
}

/// Every descendant of `pid` (children, their children, ...) found through the parent
/// chain in `/proc`, in no particular order. Empty where `/proc` cannot be read.
pub fn descendants(pid: u32) -> Vec<u32> {
    let parents: Vec<(u32, u32)> = processes()
        .filter_map(|child| Some((child, parent_of(child)?)))
        .collect();
    let mut found = Vec::new();
    let mut frontier = vec![pid];
    while let Some(parent) = frontier.pop() {
        for &(child, _) in parents.iter().filter(|(_, p)| *p == parent) {
            if !found.contains(&child) {
                found.push(child);
                frontier.push(child);
            }
        }
    }
    found
}

/// Kills each of `pids` with SIGKILL and reaps those that are this process's children
/// (with a subreaper, orphans become ours). A pid that is gone is skipped.
pub fn kill_and_reap(pids: &[u32]) {
    // SAFETY: getpid has no preconditions.
    let me = unsafe { libc::getpid() } as u32;
    for &pid in pids.iter().filter(|&&pid| pid != me && pid > 1) {
        // SAFETY: kill takes plain integers; a stale pid yields ESRCH, ignored.
        unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
        if parent_of(pid) == Some(me) {
            let mut status = 0;
            // SAFETY: waits for our own child `pid`; `status` is a valid out-pointer.
            unsafe { libc::waitpid(pid as libc::pid_t, &mut status, 0) };
        }
    }
}

/// The pids under `/proc`.
fn processes() -> impl Iterator<Item = u32> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse().ok())
}

/// True when `/proc/<pid>/environ` holds the entry `needle` (`NAME=value`).
fn environ_has(pid: u32, needle: &[u8]) -> bool {
    match std::fs::read(format!("/proc/{pid}/environ")) {
        Ok(environ) => environ.split(|&b| b == 0).any(|entry| entry == needle),
        Err(_) => false,
    }
}

/// The parent pid of `pid`, from `/proc/<pid>/stat` (the field after the state, which
/// follows the parenthesised command name).
fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = stat.rsplit_once(')')?.1;
    rest.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    #[test]
    fn markers_are_unique_and_hex() {
        let a = GenerationFence::new().unwrap();
        let b = GenerationFence::new().unwrap();
        assert_ne!(a, b);
        assert_eq!(a.marker.len(), 32);
        assert!(a.marker.bytes().all(|c| c.is_ascii_hexdigit()));
    }

    #[test]
    fn sweep_kills_the_marked_process_and_nothing_else() {
        let fence = GenerationFence::new().unwrap();
        let (name, value) = fence.env_entry();
        let mut marked = Command::new("sleep")
            .arg("60")
            .env(name, value)
            .spawn()
            .unwrap();
        let mut unmarked = Command::new("sleep").arg("60").spawn().unwrap();
        // Until it has exec'd, the child's environment is still a copy of ours.
        let needle = format!("{GENERATION_FENCE_VARIABLE}={}", fence.marker).into_bytes();
        let start = std::time::Instant::now();
        while !environ_has(marked.id(), &needle) && start.elapsed().as_secs() < 30 {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let swept = fence.sweep();
        assert_eq!(swept, vec![marked.id()]);
        // Killed and, being our child, reaped by the sweep: nothing is left to wait for.
        assert!(!std::path::Path::new(&format!("/proc/{}", marked.id())).exists());
        assert!(marked.wait().is_err());
        assert!(
            unmarked.try_wait().unwrap().is_none(),
            "an unmarked process was hit"
        );
        unmarked.kill().unwrap();
        unmarked.wait().unwrap();
    }

    #[test]
    fn descendants_follow_the_parent_chain() {
        let mut shell = Command::new("sh")
            .arg("-c")
            .arg("sleep 60 & sleep 60 & wait")
            .spawn()
            .unwrap();
        let start = std::time::Instant::now();
        while descendants(shell.id()).len() < 2 && start.elapsed().as_secs() < 30 {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let found = descendants(shell.id());
        assert_eq!(found.len(), 2, "{found:?}");
        kill_and_reap(&found);
        shell.wait().unwrap();
    }
}
