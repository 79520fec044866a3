//! The guardian: a small process that cleans up after a host that died without a
//! goodbye, even under `SIGKILL`.
//!
//! A host that is killed outright runs no destructor. Its extension children still get
//! their parent-death signal (`PR_SET_PDEATHSIG`), but what *they* started does not: a
//! grandchild in the extension's process group, or a descendant that left the group
//! with `setsid`, lives on under init, and the host's scratch directories stay behind.
//!
//! So a host with a guardian ([`crate::host::ExtensionHostBuilder::guardian`]) starts,
//! when it is built, one more process: `/bin/sh` running the short script below, in a
//! process group of its own (a Ctrl-C at the terminal does not reach it) and ignoring
//! `SIGINT`, `SIGTERM`, `SIGHUP` and `SIGQUIT`. It holds the read end of a pipe whose
//! write end only the host has. The host writes one line per change:
//!
//! - `group <pgid>` / `ungroup <pgid>`: an extension's process group was spawned, or
//!   its leader was reaped (after which the number may be reused, so it is forgotten);
//! - `fence <marker>` / `unfence <marker>`: a generation's fence marker
//!   ([`super::fence`]), registered before the child is spawned;
//! - `bye`: the host is shutting down in order; the guardian exits and does nothing.
//!
//! When the pipe reaches EOF without `bye` (the kernel closes the write end however the
//! host dies), the guardian does three things and exits: it sends `SIGKILL` to every
//! registered group, kills every process whose environment still carries a registered
//! fence marker (the same sweep as [`super::fence::GenerationFence::sweep`], repeated
//! until nothing is found, at most three times), and removes the host's scratch root.
//!
//! # What it costs
//!
//! One process (a shell, about 1 MiB resident) and one pipe for the host's whole life,
//! and a short write for each extension start and end. Nothing else runs in it until
//! the host dies.
//!
//! # What it cannot do
//!
//! A guardian that is itself killed (`kill -9` on its pid) protects nothing; the next
//! host still sweeps the scratch roots of dead hosts. A descendant that cleared its
//! environment and left the group is out of its reach as it is out of the host's. The
//! fence sweep needs `/proc` and GNU `grep -z` (Linux); elsewhere only the groups are
//! killed.

use std::io::{self, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Arc;

use parking_lot::Mutex;

/// The guardian's program: POSIX `sh`, run with the host's scratch root as `$1`.
const SCRIPT: &str = r#"
trap '' INT TERM HUP QUIT
root=$1
groups=
fences=
drop() { kept=; for x in $1; do [ "$x" = "$2" ] || kept="$kept $x"; done; }
while IFS= read -r line; do
  case $line in
    'group '*) groups="$groups ${line#group }" ;;
    'ungroup '*) drop "$groups" "${line#ungroup }"; groups=$kept ;;
    'fence '*) fences="$fences ${line#fence }" ;;
    'unfence '*) drop "$fences" "${line#unfence }"; fences=$kept ;;
    bye) exit 0 ;;
  esac
done
for g in $groups; do kill -s KILL -- "-$g" 2>/dev/null; done
for round in 1 2 3; do
  found=
  for m in $fences; do
    for f in $(grep -l -a -z -x -F "OCTET_GENERATION_FENCE=$m" /proc/[0-9]*/environ 2>/dev/null); do
      p=${f#/proc/}; p=${p%/environ}
      kill -s KILL "$p" 2>/dev/null && found=1
    done
  done
  [ -n "$found" ] || break
done
[ -n "$root" ] && rm -rf -- "$root"
exit 0
"#;

/// The host's side of the guardian: the pipe's write end and the process.
#[derive(Debug)]
pub struct Guardian {
    pipe: Mutex<Option<ChildStdin>>,
    process: Mutex<Child>,
}

impl Guardian {
    /// Starts the guardian for a host whose scratch root is `scratch_root`.
    pub fn start(scratch_root: &Path) -> io::Result<Arc<Guardian>> {
        use std::os::unix::process::CommandExt;
        let mut process = Command::new("/bin/sh")
            .arg("-c")
            .arg(SCRIPT)
            .arg("octet-host-guardian")
            .arg(scratch_root)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()?;
        let pipe = process.stdin.take();
        Ok(Arc::new(Guardian {
            pipe: Mutex::new(pipe),
            process: Mutex::new(process),
        }))
    }

    /// The guardian's pid.
    pub fn pid(&self) -> u32 {
        self.process.lock().id()
    }

    /// Registers a generation's fence marker, before its child is spawned; the lease
    /// unregisters it (and the group, once [`GuardianLease::watch_group`] named it)
    /// when dropped.
    pub fn watch_fence(self: &Arc<Self>, marker: &str) -> GuardianLease {
        self.send(&format!("fence {marker}"));
        GuardianLease {
            guardian: self.clone(),
            marker: Some(marker.to_string()),
            group: None,
        }
    }

    /// A lease with nothing registered yet.
    pub fn lease(self: &Arc<Self>) -> GuardianLease {
        GuardianLease {
            guardian: self.clone(),
            marker: None,
            group: None,
        }
    }

    /// The host is shutting down in order: the guardian exits without doing anything,
    /// and is reaped. Dropping the last handle does the same.
    pub fn goodbye(&self) {
        self.send("bye");
        self.pipe.lock().take();
        let _ = self.process.lock().wait();
    }

    /// Writes one line; a guardian that is gone is not an error the host can act on.
    fn send(&self, line: &str) {
        if let Some(pipe) = self.pipe.lock().as_mut() {
            let _ = pipe.write_all(format!("{line}\n").as_bytes());
        }
    }
}

impl Drop for Guardian {
    fn drop(&mut self) {
        self.goodbye();
    }
}

/// What one generation registered with the guardian; dropping it unregisters both.
#[derive(Debug)]
pub struct GuardianLease {
    guardian: Arc<Guardian>,
    marker: Option<String>,
    group: Option<u32>,
}

impl GuardianLease {
    /// Registers the generation's process group, right after its leader was spawned.
    pub fn watch_group(&mut self, pgid: u32) {
        self.guardian.send(&format!("group {pgid}"));
        self.group = Some(pgid);
    }
}

impl Drop for GuardianLease {
    fn drop(&mut self) {
        if let Some(pgid) = self.group {
            self.guardian.send(&format!("ungroup {pgid}"));
        }
        if let Some(marker) = &self.marker {
            self.guardian.send(&format!("unfence {marker}"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    fn alive(pid: u32) -> bool {
        // SAFETY: signal 0 only checks that the process exists.
        unsafe { libc::kill(pid as libc::pid_t, 0) == 0 }
    }

    fn gone_within(pid: u32, within: Duration) -> bool {
        let start = Instant::now();
        while start.elapsed() < within {
            let mut status = 0;
            // SAFETY: reaps our own child if it exited; WNOHANG never blocks.
            unsafe { libc::waitpid(pid as libc::pid_t, &mut status, libc::WNOHANG) };
            if !alive(pid) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        false
    }

    /// A `sleep` leading its own group, and a lease watching that group.
    fn watched_sleeper(guardian: &Arc<Guardian>) -> (std::process::Child, GuardianLease) {
        let sleeper = Command::new("sleep")
            .arg("30")
            .process_group(0)
            .spawn()
            .unwrap();
        let mut lease = guardian.lease();
        lease.watch_group(sleeper.id());
        (sleeper, lease)
    }

    #[test]
    fn a_goodbye_leaves_everything_alone() {
        let root = tempfile::tempdir().unwrap();
        let guardian = Guardian::start(root.path()).unwrap();
        let (mut sleeper, _lease) = watched_sleeper(&guardian);
        guardian.goodbye();
        assert!(root.path().is_dir());
        assert!(
            sleeper.try_wait().unwrap().is_none(),
            "the group was killed"
        );
        sleeper.kill().unwrap();
        sleeper.wait().unwrap();
    }

    #[test]
    fn eof_without_goodbye_kills_the_groups_and_removes_the_root() {
        let parent = tempfile::tempdir().unwrap();
        let root = parent.path().join("root");
        std::fs::create_dir_all(root.join("gen-1")).unwrap();
        let guardian = Guardian::start(&root).unwrap();
        let (mut sleeper, lease) = watched_sleeper(&guardian);
        let forgotten = guardian.lease();
        drop(forgotten);
        // What the kernel does when the host dies: the write end closes.
        guardian.pipe.lock().take();
        sleeper.wait().unwrap();
        let pid = guardian.pid();
        assert!(gone_within(pid, Duration::from_secs(20)));
        assert!(!root.exists(), "the scratch root is left");
        drop(lease);
    }

    use std::os::unix::process::CommandExt;
}
