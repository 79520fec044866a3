//! The private scratch directory of one process generation (`OCTET_EXTENSION_SCRATCH`,
//! SUPPLEMENT "Environment of every extension child"), and the host's root that holds
//! them.
//!
//! # Scratch of hosts that died
//!
//! A generation's scratch directory is removed when the generation ends, and the host's
//! root when the host is dropped. A host killed with SIGKILL does neither. So every host
//! keeps its scratch directories in a root of its own, `octet-host-<pid>-<random>`,
//! holding a lock file on which it keeps an exclusive `flock` for its whole life. The
//! kernel drops that lock when the process dies, however it dies. A host that starts
//! ([`ScratchRoot::new_in`]) removes every root beside its own whose lock it can take:
//! their owners are gone. A root is created under a staging name and renamed only once
//! its lock is held, so a starting host is never mistaken for a dead one.

use std::fs::{self, File, Permissions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Prefix of a host's scratch root.
const ROOT_PREFIX: &str = "octet-host-";

/// Prefix of a scratch root being set up (not yet locked and renamed).
const STAGING_PREFIX: &str = ".octet-host-staging-";

/// The lock file inside a scratch root.
const LOCK_FILE: &str = "owner.lock";

/// The directory holding one host's scratch directories, locked for the host's life and
/// removed when dropped (see the module docs).
#[derive(Debug)]
pub struct ScratchRoot {
    path: PathBuf,
    /// Holds the exclusive `flock` while the host lives.
    _lock: File,
}

impl ScratchRoot {
    /// Creates this host's root under `parent` (usually the system temporary
    /// directory), after removing the roots of hosts that are gone.
    pub fn new_in(parent: impl AsRef<Path>) -> io::Result<ScratchRoot> {
        let parent = parent.as_ref();
        sweep_dead_roots(parent);
        let staging = tempfile::Builder::new()
            .prefix(STAGING_PREFIX)
            .permissions(Permissions::from_mode(SCRATCH_MODE))
            .tempdir_in(parent)?;
        let lock = File::create(staging.path().join(LOCK_FILE))?;
        if !try_lock(&lock) {
            return Err(io::Error::other("cannot lock a fresh scratch root"));
        }
        let name = staging
            .path()
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_prefix(STAGING_PREFIX))
            .unwrap_or("root")
            .to_string();
        let path = parent.join(format!("{ROOT_PREFIX}{}-{name}", std::process::id()));
        fs::rename(staging.path(), &path)?;
        // The staging directory is gone (renamed); nothing is left to remove.
        let _ = staging.keep();
        Ok(ScratchRoot { path, _lock: lock })
    }

    /// The root's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for ScratchRoot {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.path);
    }
}

/// Removes every scratch root under `parent` whose owner is gone (its lock can be
/// taken). Roots of live hosts, in this process or another, stay.
pub fn sweep_dead_roots(parent: &Path) -> Vec<PathBuf> {
    let mut removed = Vec::new();
    let Ok(entries) = fs::read_dir(parent) else {
        return removed;
    };
    for entry in entries.flatten() {
        let is_root = entry
            .file_name()
            .to_str()
            .is_some_and(|name| name.starts_with(ROOT_PREFIX));
        if !is_root || !entry.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let path = entry.path();
        let Ok(lock) = File::open(path.join(LOCK_FILE)) else {
            continue;
        };
        if try_lock(&lock) && fs::remove_dir_all(&path).is_ok() {
            removed.push(path);
        }
    }
    removed
}

/// Takes an exclusive `flock` on `file` without waiting; false when someone holds it.
fn try_lock(file: &File) -> bool {
    // SAFETY: flock on a descriptor we own; no memory is involved.
    unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) == 0 }
}

/// The only mode a scratch directory may have: owner read, write and search.
const SCRATCH_MODE: u32 = 0o700;

/// Prefix of every scratch directory's name, so stale ones are recognizable.
const SCRATCH_PREFIX: &str = "octet-scratch-";

/// A fresh, private (mode 0700, owned by the host's user) directory, created for one
/// process generation and removed, with everything in it, when dropped.
///
/// The directory is created with mode 0700 from the start (never wider, not even
/// briefly) under a random name that did not exist before, then checked: it must be a
/// real directory (not a symlink), owned by the effective user, with mode exactly 0700.
#[derive(Debug)]
pub struct ScratchDir {
    dir: tempfile::TempDir,
}

impl ScratchDir {
    /// Creates a scratch directory under the system temporary directory.
    pub fn new() -> io::Result<ScratchDir> {
        ScratchDir::new_in(std::env::temp_dir())
    }

    /// Creates a scratch directory under `parent`.
    pub fn new_in(parent: impl AsRef<Path>) -> io::Result<ScratchDir> {
        let dir = tempfile::Builder::new()
            .prefix(SCRATCH_PREFIX)
            .permissions(Permissions::from_mode(SCRATCH_MODE))
            .tempdir_in(parent)?;
        // The umask may only have narrowed the mode; restore the owner bits it removed.
        let meta = fs::symlink_metadata(dir.path())?;
        if meta.mode() & 0o777 != SCRATCH_MODE && meta.mode() & 0o077 == 0 {
            fs::set_permissions(dir.path(), Permissions::from_mode(SCRATCH_MODE))?;
        }
        verify_private(dir.path())?;
        Ok(ScratchDir { dir })
    }

    /// The directory's absolute path.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Removes the directory now, reporting a failure that dropping would ignore.
    pub fn close(self) -> io::Result<()> {
        self.dir.close()
    }
}

/// Checks that `path` is a directory (not a symlink) owned by the effective user with
/// mode exactly 0700.
fn verify_private(path: &Path) -> io::Result<()> {
    let meta = fs::symlink_metadata(path)?;
    // SAFETY: geteuid has no preconditions and cannot fail.
    let euid = unsafe { libc::geteuid() };
    if !meta.file_type().is_dir() || meta.uid() != euid || meta.mode() & 0o777 != SCRATCH_MODE {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "scratch directory {} is not a private directory (mode {:o}, owner {})",
                path.display(),
                meta.mode() & 0o7777,
                meta.uid()
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn is_private_and_removed_on_drop() {
        let parent = tempfile::tempdir().unwrap();
        let scratch = ScratchDir::new_in(parent.path()).unwrap();
        let path = scratch.path().to_path_buf();
        let meta = fs::symlink_metadata(&path).unwrap();
        assert!(meta.is_dir());
        assert_eq!(meta.mode() & 0o7777, 0o700);
        fs::write(path.join("file"), b"x").unwrap();
        drop(scratch);
        assert!(!path.exists());
    }

    #[test]
    fn roots_of_dead_hosts_are_swept_and_live_ones_stay() {
        let parent = tempfile::tempdir().unwrap();
        let live = ScratchRoot::new_in(parent.path()).unwrap();
        let scratch = ScratchDir::new_in(live.path()).unwrap();
        // A root whose owner died: its lock file exists but nobody holds it.
        let dead = parent.path().join(format!("{ROOT_PREFIX}999999-x"));
        fs::create_dir(&dead).unwrap();
        File::create(dead.join(LOCK_FILE)).unwrap();
        fs::create_dir(dead.join("octet-scratch-old")).unwrap();
        let other = ScratchRoot::new_in(parent.path()).unwrap();
        assert!(!dead.exists(), "the dead host's root was swept");
        assert!(live.path().exists() && scratch.path().exists());
        assert!(other.path().exists());
        let name = live
            .path()
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .to_string();
        assert!(name.starts_with(&format!("{ROOT_PREFIX}{}-", std::process::id())));
        let path = live.path().to_path_buf();
        drop(scratch);
        drop(live);
        assert!(!path.exists(), "a dropped root is removed");
    }

    #[test]
    fn each_generation_gets_a_fresh_directory() {
        let a = ScratchDir::new().unwrap();
        let b = ScratchDir::new().unwrap();
        assert_ne!(a.path(), b.path());
        assert!(a.path().is_absolute());
    }
}
