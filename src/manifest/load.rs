//! Bounded, symlink-refusing reads of `extension.toml` (SUPPLEMENT "Manifest";
//! "Transport defaults").
//!
//! A manifest is read only as a regular file that is not itself a symlink, and never
//! beyond a byte bound: [`crate::limits::MAX_MANIFEST_BYTES_DISCOVERY`] on the discovery
//! path, [`crate::limits::MAX_MANIFEST_BYTES_LOADER`] as the low-level default.

use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

use super::error::ManifestError;
use super::parse::parse;
use super::types::Manifest;

/// What kind of non-regular file was found where a manifest was expected.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FileKind {
    /// A directory.
    Directory,
    /// A named pipe.
    Fifo,
    /// A Unix domain socket.
    Socket,
    /// A character device.
    CharDevice,
    /// A block device.
    BlockDevice,
    /// A symbolic link.
    Symlink,
    /// Anything else.
    Other,
}

impl FileKind {
    fn of(file_type: std::fs::FileType) -> FileKind {
        if file_type.is_dir() {
            FileKind::Directory
        } else if file_type.is_fifo() {
            FileKind::Fifo
        } else if file_type.is_socket() {
            FileKind::Socket
        } else if file_type.is_char_device() {
            FileKind::CharDevice
        } else if file_type.is_block_device() {
            FileKind::BlockDevice
        } else if file_type.is_symlink() {
            FileKind::Symlink
        } else {
            FileKind::Other
        }
    }

    /// A lowercase English name such as `"directory"`.
    pub fn as_str(self) -> &'static str {
        match self {
            FileKind::Directory => "directory",
            FileKind::Fifo => "named pipe",
            FileKind::Socket => "socket",
            FileKind::CharDevice => "character device",
            FileKind::BlockDevice => "block device",
            FileKind::Symlink => "symbolic link",
            FileKind::Other => "special file",
        }
    }
}

impl fmt::Display for FileKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a manifest file could not be loaded.
#[derive(Debug)]
pub enum LoadError {
    /// The file could not be opened or read.
    Io(io::Error),
    /// The path names a symbolic link; manifests are never read through one.
    Symlink,
    /// The path names something other than a regular file.
    NotRegular {
        /// What it names instead.
        kind: FileKind,
    },
    /// The file is larger than the bound.
    TooLarge {
        /// The bound, in bytes.
        limit: u64,
    },
    /// The file is not UTF-8.
    NotUtf8 {
        /// Byte offset of the first invalid sequence.
        valid_up_to: usize,
    },
    /// The file was read but breaks a manifest rule.
    Invalid(ManifestError),
}

impl LoadError {
    /// True when the manifest file does not exist.
    pub fn is_not_found(&self) -> bool {
        matches!(self, LoadError::Io(error) if error.kind() == io::ErrorKind::NotFound)
    }
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::Io(error) => write!(f, "cannot read the manifest: {error}"),
            LoadError::Symlink => f.write_str("the manifest is a symbolic link, which is refused"),
            LoadError::NotRegular { kind } => {
                write!(f, "the manifest is a {kind}, not a regular file")
            }
            LoadError::TooLarge { limit } => {
                write!(f, "the manifest is larger than the {limit}-byte bound")
            }
            LoadError::NotUtf8 { valid_up_to } => write!(
                f,
                "the manifest is not UTF-8 (invalid bytes at offset {valid_up_to})"
            ),
            LoadError::Invalid(error) => error.fmt(f),
        }
    }
}

impl std::error::Error for LoadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            LoadError::Io(error) => Some(error),
            LoadError::Invalid(error) => Some(error),
            _ => None,
        }
    }
}

impl From<ManifestError> for LoadError {
    fn from(error: ManifestError) -> LoadError {
        LoadError::Invalid(error)
    }
}

/// Reads and validates the manifest at `path`, refusing symlinks, non-regular files and
/// files larger than `max_bytes`.
pub fn load(path: &Path, max_bytes: u64) -> Result<Manifest, LoadError> {
    let text = read_manifest_text(path, max_bytes)?;
    Ok(parse(&text)?)
}

/// Reads the text of the manifest at `path` under the same rules as [`load`], without
/// validating it.
///
/// The file is opened with `O_NOFOLLOW` (a symlink is refused), `O_NONBLOCK` (opening a
/// named pipe never waits for a writer) and `O_NOCTTY`; the opened descriptor, not the
/// path, is then checked to be a regular file, and at most `max_bytes + 1` bytes are read.
pub fn read_manifest_text(path: &Path, max_bytes: u64) -> Result<String, LoadError> {
    // A cheap early refusal that avoids even opening devices and pipes. The check on
    // the opened descriptor below is the authoritative one.
    let early = std::fs::symlink_metadata(path).map_err(LoadError::Io)?;
    check_file_type(early.file_type())?;

    let file = open_no_follow(path)?;
    let metadata = file.metadata().map_err(LoadError::Io)?;
    check_file_type(metadata.file_type())?;

    let mut bytes = Vec::new();
    file.take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(LoadError::Io)?;
    if bytes.len() as u64 > max_bytes {
        return Err(LoadError::TooLarge { limit: max_bytes });
    }
    String::from_utf8(bytes).map_err(|error| LoadError::NotUtf8 {
        valid_up_to: error.utf8_error().valid_up_to(),
    })
}

fn check_file_type(file_type: std::fs::FileType) -> Result<(), LoadError> {
    if file_type.is_file() {
        Ok(())
    } else if file_type.is_symlink() {
        Err(LoadError::Symlink)
    } else {
        Err(LoadError::NotRegular {
            kind: FileKind::of(file_type),
        })
    }
}

fn open_no_follow(path: &Path) -> Result<File, LoadError> {
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(|error| {
            // With O_NOFOLLOW, a symlink as the last path component fails with ELOOP.
            if error.raw_os_error() == Some(libc::ELOOP) {
                LoadError::Symlink
            } else {
                LoadError::Io(error)
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    const MINIMAL: &str = "name = \"hello\"\nversion = \"0.1.0\"\napi_version = \"0.2\"\n\
                           [entrypoint]\ncommand = \"hello\"\n";

    fn write(dir: &Path, name: &str, bytes: &[u8]) -> std::path::PathBuf {
        let path = dir.join(name);
        let mut file = File::create(&path).unwrap();
        file.write_all(bytes).unwrap();
        path
    }

    #[test]
    fn loads_a_regular_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(dir.path(), "extension.toml", MINIMAL.as_bytes());
        let manifest = load(&path, crate::limits::MAX_MANIFEST_BYTES_LOADER).unwrap();
        assert_eq!(manifest.name, "hello");
    }

    #[test]
    fn the_bound_is_inclusive() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(dir.path(), "extension.toml", MINIMAL.as_bytes());
        let exact = MINIMAL.len() as u64;
        assert_eq!(read_manifest_text(&path, exact).unwrap(), MINIMAL);
        assert!(matches!(
            read_manifest_text(&path, exact - 1),
            Err(LoadError::TooLarge { limit }) if limit == exact - 1
        ));
    }

    #[test]
    fn refuses_invalid_utf8() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(dir.path(), "extension.toml", b"name = \"h\xffllo\"\n");
        assert!(matches!(
            read_manifest_text(&path, 1024),
            Err(LoadError::NotUtf8 { valid_up_to: 9 })
        ));
    }

    #[test]
    fn refuses_a_symlink() {
        let dir = tempfile::tempdir().unwrap();
        let target = write(dir.path(), "real.toml", MINIMAL.as_bytes());
        let link = dir.path().join("extension.toml");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert!(matches!(open_no_follow(&link), Err(LoadError::Symlink)));
        assert!(matches!(load(&link, 1024), Err(LoadError::Symlink)));
    }

    #[test]
    fn refuses_a_directory_and_reports_missing_files() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("extension.toml");
        std::fs::create_dir(&sub).unwrap();
        assert!(matches!(
            load(&sub, 1024),
            Err(LoadError::NotRegular {
                kind: FileKind::Directory
            })
        ));
        let missing = load(&dir.path().join("absent.toml"), 1024).unwrap_err();
        assert!(missing.is_not_found());
    }

    #[test]
    fn invalid_manifests_keep_their_rule() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(dir.path(), "extension.toml", b"name = \"hello\"\n");
        match load(&path, 1024) {
            Err(LoadError::Invalid(ManifestError::MissingField { field })) => {
                assert_eq!(field, "version")
            }
            other => panic!("unexpected result: {other:?}"),
        }
    }
}
