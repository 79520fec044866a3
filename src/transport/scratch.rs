//! The private scratch directory of one process generation (`OCTET_EXTENSION_SCRATCH`,
//! SUPPLEMENT "Environment of every extension child").

use std::fs::{self, Permissions};
use std::io;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

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
    fn each_generation_gets_a_fresh_directory() {
        let a = ScratchDir::new().unwrap();
        let b = ScratchDir::new().unwrap();
        assert_ne!(a.path(), b.path());
        assert!(a.path().is_absolute());
    }
}
