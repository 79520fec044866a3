//! Secure reading of a publication's relative scratch path (section 2.8: "The host
//! securely reads a regular no-follow scratch file").
//!
//! A [`ScratchPath`] is checked lexically first: relative, not empty, at most 4096 bytes
//! and 64 components, no empty, `.` or `..` component, no NUL. Reading then walks it one
//! component at a time from a descriptor of the scratch directory: every component is
//! opened with `openat(O_NOFOLLOW)` relative to the descriptor of the one before, so a
//! symbolic link anywhere on the way (or as the file itself) is refused and nothing
//! outside the scratch directory can be reached. The final descriptor must be a regular
//! file; at most `size + 1` bytes are read from it.
//!
//! The scratch directory's own path is the host's and may itself lie behind symbolic
//! links (such as `/tmp` on some systems); only the part the extension chose is walked
//! without following links.

use std::ffi::CString;
use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use crate::limits::{MAX_ARTIFACT_PATH_BYTES, MAX_ARTIFACT_PATH_COMPONENTS};

use super::error::{ArtifactError, Rejection};

/// A lexically valid relative path under the scratch directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScratchPath(String);

impl ScratchPath {
    /// Checks the section 2.8 path rules that need no file system.
    pub fn parse(path: &str) -> Result<ScratchPath, Rejection> {
        if path.is_empty() {
            return Err(Rejection::EmptyPath);
        }
        if path.len() > MAX_ARTIFACT_PATH_BYTES {
            return Err(Rejection::PathTooLong);
        }
        if path.starts_with('/') {
            return Err(Rejection::AbsolutePath);
        }
        if path.contains('\0') {
            return Err(Rejection::NulInPath);
        }
        let mut count = 0;
        for component in path.split('/') {
            count += 1;
            if count > MAX_ARTIFACT_PATH_COMPONENTS {
                return Err(Rejection::TooManyComponents);
            }
            match component {
                "" => return Err(Rejection::EmptyComponent),
                "." => return Err(Rejection::DotComponent),
                ".." => return Err(Rejection::ParentComponent),
                _ => {}
            }
        }
        Ok(ScratchPath(path.to_owned()))
    }

    /// The path as given.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The components, in order.
    pub fn components(&self) -> impl Iterator<Item = &str> {
        self.0.split('/')
    }

    /// Reads at most `limit` bytes of the regular file this path names under
    /// `scratch_dir`, without following any symbolic link in the path.
    pub(crate) fn read(&self, scratch_dir: &Path, limit: u64) -> Result<Vec<u8>, ArtifactError> {
        let (parents, file_name) = match self.0.rsplit_once('/') {
            Some((parents, file_name)) => (Some(parents), file_name),
            None => (None, self.0.as_str()),
        };
        let mut dir = open_scratch_dir(scratch_dir)?;
        for component in parents.into_iter().flat_map(|parents| parents.split('/')) {
            dir = open_at(&dir, &c_name(component)?, libc::O_DIRECTORY)?;
        }
        // O_NONBLOCK keeps a FIFO from blocking the open; it is refused just below.
        let flags = libc::O_NONBLOCK | libc::O_NOCTTY;
        let file = File::from(open_at(&dir, &c_name(file_name)?, flags)?);
        let metadata = file.metadata().map_err(io_error)?;
        if !metadata.file_type().is_file() {
            return Err(ArtifactError::invalid("path", Rejection::NotARegularFile));
        }
        let capacity = limit.min(metadata.len().saturating_add(1));
        let mut bytes = Vec::with_capacity(usize::try_from(capacity).unwrap_or(0));
        file.take(limit)
            .read_to_end(&mut bytes)
            .map_err(read_error)?;
        Ok(bytes)
    }
}

/// A component as a C string (ScratchPath::parse already refused NUL bytes).
fn c_name(component: &str) -> Result<CString, ArtifactError> {
    CString::new(component).map_err(|_| ArtifactError::invalid("path", Rejection::NulInPath))
}

/// Opens the scratch directory itself (following the host's own links).
fn open_scratch_dir(scratch_dir: &Path) -> Result<OwnedFd, ArtifactError> {
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_CLOEXEC)
        .open(scratch_dir)
        .map(OwnedFd::from)
        .map_err(open_error)
}

/// Opens `name` relative to `dir` for reading, never following a symbolic link.
fn open_at(dir: &OwnedFd, name: &CString, flags: libc::c_int) -> Result<OwnedFd, ArtifactError> {
    let flags = flags | libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    // SAFETY: `dir` is an open descriptor and `name` a NUL-terminated string, both alive
    // for the call.
    let fd = unsafe { libc::openat(dir.as_raw_fd(), name.as_ptr(), flags) };
    if fd < 0 {
        let error = io::Error::last_os_error();
        // With O_DIRECTORY, Linux reports a symbolic link as ENOTDIR: look at the entry.
        if error.raw_os_error() == Some(libc::ENOTDIR) && is_symlink_at(dir, name) {
            return Err(ArtifactError::invalid("path", Rejection::Symlink));
        }
        return Err(open_error(error));
    }
    // SAFETY: `openat` just returned this descriptor; nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// True when the entry `name` in `dir` is itself a symbolic link.
fn is_symlink_at(dir: &OwnedFd, name: &CString) -> bool {
    let mut stat = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: `dir` is an open descriptor, `name` a NUL-terminated string and `stat`
    // points to writable memory of the right size, all alive for the call.
    let status = unsafe {
        libc::fstatat(
            dir.as_raw_fd(),
            name.as_ptr(),
            stat.as_mut_ptr(),
            libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    if status != 0 {
        return false;
    }
    // SAFETY: fstatat succeeded, so it initialized `stat`.
    let stat = unsafe { stat.assume_init() };
    stat.st_mode & libc::S_IFMT == libc::S_IFLNK
}

/// Classifies a failed open: what the extension put in its scratch directory is its
/// publication's fault (-32602); anything else is the host's.
fn open_error(error: io::Error) -> ArtifactError {
    let reason = match error.raw_os_error() {
        // Linux reports a symbolic link refused by O_NOFOLLOW as ELOOP, FreeBSD as EMLINK.
        Some(libc::ELOOP) | Some(libc::EMLINK) => Rejection::Symlink,
        Some(libc::ENOTDIR) => Rejection::NotADirectory,
        Some(libc::ENOENT) => Rejection::NotFound,
        Some(libc::EACCES) | Some(libc::EPERM) => Rejection::PermissionDenied,
        Some(libc::ENAMETOOLONG) => Rejection::PathTooLong,
        // A socket, or a device without a driver.
        Some(libc::ENXIO) | Some(libc::ENODEV) | Some(libc::EOPNOTSUPP) => {
            Rejection::NotARegularFile
        }
        _ => return io_error(error),
    };
    ArtifactError::invalid("path", reason)
}

/// Classifies a failed read of an open regular file.
fn read_error(error: io::Error) -> ArtifactError {
    match error.raw_os_error() {
        Some(libc::EACCES) | Some(libc::EPERM) => {
            ArtifactError::invalid("path", Rejection::PermissionDenied)
        }
        _ => io_error(error),
    }
}

/// A host-side I/O failure.
fn io_error(error: io::Error) -> ArtifactError {
    ArtifactError::Io { kind: error.kind() }
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::os::unix::fs::symlink;

    use super::*;

    fn rejected(path: &str) -> Rejection {
        ScratchPath::parse(path).unwrap_err()
    }

    fn read(dir: &Path, path: &str, limit: u64) -> Result<Vec<u8>, ArtifactError> {
        ScratchPath::parse(path).unwrap().read(dir, limit)
    }

    fn invalid(reason: Rejection) -> Result<Vec<u8>, ArtifactError> {
        Err(ArtifactError::InvalidParams {
            field: "path",
            reason,
        })
    }

    #[test]
    fn lexical_rules() {
        assert_eq!(rejected(""), Rejection::EmptyPath);
        assert_eq!(rejected("/etc/passwd"), Rejection::AbsolutePath);
        assert_eq!(rejected("../x"), Rejection::ParentComponent);
        assert_eq!(rejected("a/../../x"), Rejection::ParentComponent);
        assert_eq!(rejected("a/.."), Rejection::ParentComponent);
        assert_eq!(rejected("./x"), Rejection::DotComponent);
        assert_eq!(rejected("a/./x"), Rejection::DotComponent);
        assert_eq!(rejected("a//x"), Rejection::EmptyComponent);
        assert_eq!(rejected("a/"), Rejection::EmptyComponent);
        assert_eq!(rejected("a\0b"), Rejection::NulInPath);
        let components = vec!["d"; MAX_ARTIFACT_PATH_COMPONENTS];
        assert!(ScratchPath::parse(&components.join("/")).is_ok());
        let components = vec!["d"; MAX_ARTIFACT_PATH_COMPONENTS + 1];
        assert_eq!(
            rejected(&components.join("/")),
            Rejection::TooManyComponents
        );
        let long = "x".repeat(MAX_ARTIFACT_PATH_BYTES);
        assert!(ScratchPath::parse(&long).is_ok());
        assert_eq!(rejected(&format!("{long}x")), Rejection::PathTooLong);
        // Dots inside names are ordinary.
        assert!(ScratchPath::parse("..a/b../.c/d.png").is_ok());
    }

    #[test]
    fn reads_a_nested_regular_file_up_to_the_limit() {
        let scratch = tempfile::tempdir().unwrap();
        fs::create_dir_all(scratch.path().join("a/b")).unwrap();
        fs::write(scratch.path().join("a/b/f.bin"), b"0123456789").unwrap();
        assert_eq!(
            read(scratch.path(), "a/b/f.bin", 11).unwrap(),
            b"0123456789"
        );
        assert_eq!(read(scratch.path(), "a/b/f.bin", 4).unwrap(), b"0123");
        assert_eq!(
            read(scratch.path(), "a/b/nope", 4),
            invalid(Rejection::NotFound)
        );
        assert_eq!(
            read(scratch.path(), "a/b/f.bin/x", 4),
            invalid(Rejection::NotADirectory)
        );
    }

    #[test]
    fn symlinks_are_refused_anywhere() {
        let scratch = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("secret"), b"secret").unwrap();
        fs::create_dir(scratch.path().join("real")).unwrap();
        fs::write(scratch.path().join("real/f"), b"data").unwrap();
        symlink(outside.path(), scratch.path().join("out")).unwrap();
        symlink("real", scratch.path().join("inner")).unwrap();
        symlink("real/f", scratch.path().join("final")).unwrap();
        symlink(
            outside.path().join("secret"),
            scratch.path().join("real/escape"),
        )
        .unwrap();
        assert_eq!(
            read(scratch.path(), "out/secret", 100),
            invalid(Rejection::Symlink)
        );
        assert_eq!(
            read(scratch.path(), "inner/f", 100),
            invalid(Rejection::Symlink)
        );
        assert_eq!(
            read(scratch.path(), "final", 100),
            invalid(Rejection::Symlink)
        );
        assert_eq!(
            read(scratch.path(), "real/escape", 100),
            invalid(Rejection::Symlink)
        );
        assert_eq!(read(scratch.path(), "real/f", 100).unwrap(), b"data");
    }

    #[test]
    fn only_regular_files_are_read() {
        let scratch = tempfile::tempdir().unwrap();
        fs::create_dir(scratch.path().join("dir")).unwrap();
        assert_eq!(
            read(scratch.path(), "dir", 100),
            invalid(Rejection::NotARegularFile)
        );
        let fifo = CString::new(scratch.path().join("fifo").to_str().unwrap()).unwrap();
        // SAFETY: `fifo` is a NUL-terminated path alive for the call.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        // The open must not block on the FIFO without a writer.
        assert_eq!(
            read(scratch.path(), "fifo", 100),
            invalid(Rejection::NotARegularFile)
        );
        let socket = scratch.path().join("sock");
        let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        assert_eq!(
            read(scratch.path(), "sock", 100),
            invalid(Rejection::NotARegularFile)
        );
    }

    #[test]
    fn a_missing_scratch_directory_is_not_found() {
        let scratch = tempfile::tempdir().unwrap();
        let gone = scratch.path().join("gone");
        assert_eq!(read(&gone, "f", 1), invalid(Rejection::NotFound));
    }
}
