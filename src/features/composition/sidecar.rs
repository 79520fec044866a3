//! Oversized private JSON (section 2.25): a `composition/context` or `composition/call`
//! answer too large for one frame travels as exactly one sidecar file in the composing
//! generation's scratch directory (`OCTET_EXTENSION_SCRATCH`), named in the answer as
//! `{"context_file"|"value_file": {"path", "bytes", "sha256"}}`.
//!
//! The host writes it ([`write()`]): a flat basename it makes up, created exclusively
//! and readable by the owner only, at most [`MAX_COMPOSITION_SIDECAR_BYTES`]. The
//! extension reads it ([`read()`]): a flat basename only, opened without following a
//! link, a regular file of exactly the size and SHA-256 announced, UTF-8 JSON, and
//! unlinked whatever the outcome. The host removes the files a parent's answers left
//! behind when the parent settles.

use std::fmt;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::limits::MAX_COMPOSITION_SIDECAR_BYTES;
use crate::services::artifacts::hex;

/// The prefix of every sidecar's basename.
const PREFIX: &str = "composition-";

/// A sidecar the host wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sidecar {
    /// Where it is.
    pub path: PathBuf,
    /// Its basename, which the answer names.
    pub name: String,
    /// Its size.
    pub bytes: usize,
    /// Its lowercase SHA-256.
    pub sha256: String,
}

impl Sidecar {
    /// The answer that names it: `{member: {path, bytes, sha256}}`.
    pub fn envelope(&self, member: &str) -> Value {
        json!({ member: {"path": self.name, "bytes": self.bytes, "sha256": self.sha256} })
    }
}

/// Writes `bytes` as a new sidecar in `scratch`.
pub fn write(scratch: &Path, bytes: &[u8]) -> io::Result<Sidecar> {
    if bytes.is_empty() || bytes.len() > MAX_COMPOSITION_SIDECAR_BYTES {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "a sidecar holds 1 to {MAX_COMPOSITION_SIDECAR_BYTES} bytes; this value is {}",
                bytes.len()
            ),
        ));
    }
    let name = format!(
        "{PREFIX}{}.json",
        crate::services::artifacts::random_hex(16)?
    );
    let path = scratch.join(&name);
    let mut file = create_private(&path)?;
    if let Err(e) = file.write_all(bytes).and_then(|()| file.sync_all()) {
        let _ = fs::remove_file(&path);
        return Err(e);
    }
    Ok(Sidecar {
        path,
        name,
        bytes: bytes.len(),
        sha256: hex(&Sha256::digest(bytes)),
    })
}

/// Why a sidecar was refused by its reader.
#[derive(Debug)]
pub enum SidecarError {
    /// The envelope is not `{path, bytes, sha256}` of the right types.
    Envelope,
    /// The path is not a flat basename the host would make (absolute, a traversal, a
    /// directory).
    Path(String),
    /// It could not be opened as a regular file without following a link.
    NotRegular(io::Error),
    /// Its size is not the one announced, or over the bound.
    Size {
        /// Announced.
        expected: u64,
        /// Found.
        found: u64,
    },
    /// Its digest is not the one announced.
    Digest,
    /// It is not UTF-8 JSON.
    Json(String),
}

impl fmt::Display for SidecarError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SidecarError::Envelope => {
                f.write_str("the sidecar envelope is not {path, bytes, sha256}")
            }
            SidecarError::Path(path) => {
                write!(
                    f,
                    "the sidecar path {path:?} is not a flat host-created basename"
                )
            }
            SidecarError::NotRegular(e) => {
                write!(
                    f,
                    "the sidecar is not a regular file (links are not followed): {e}"
                )
            }
            SidecarError::Size { expected, found } => write!(
                f,
                "the sidecar is {found} bytes, not the {expected} announced (at most \
                 {MAX_COMPOSITION_SIDECAR_BYTES})"
            ),
            SidecarError::Digest => f.write_str("the sidecar's SHA-256 is not the one announced"),
            SidecarError::Json(e) => write!(f, "the sidecar is not UTF-8 JSON: {e}"),
        }
    }
}

impl std::error::Error for SidecarError {}

/// True for a basename the host could have made for a sidecar: flat, with the
/// sidecar prefix.
pub fn is_host_name(name: &str) -> bool {
    name.starts_with(PREFIX) && !name.contains(['/', '\\', '\0']) && name != "." && name != ".."
}

/// Reads the sidecar `envelope` (the object under `context_file` or `value_file`)
/// names in `scratch`, checks it, and unlinks it whatever the outcome.
pub fn read(scratch: &Path, envelope: &Value) -> Result<Value, SidecarError> {
    let name = envelope
        .get("path")
        .and_then(Value::as_str)
        .ok_or(SidecarError::Envelope)?;
    let expected = envelope
        .get("bytes")
        .and_then(Value::as_u64)
        .ok_or(SidecarError::Envelope)?;
    let digest = envelope
        .get("sha256")
        .and_then(Value::as_str)
        .ok_or(SidecarError::Envelope)?;
    if !is_host_name(name) {
        return Err(SidecarError::Path(name.to_string()));
    }
    let path = scratch.join(name);
    let outcome = read_checked(&path, expected, digest);
    let _ = fs::remove_file(&path);
    outcome
}

fn read_checked(path: &Path, expected: u64, digest: &str) -> Result<Value, SidecarError> {
    let mut file = open_no_follow(path).map_err(SidecarError::NotRegular)?;
    let metadata = file.metadata().map_err(SidecarError::NotRegular)?;
    if !metadata.is_file() {
        return Err(SidecarError::NotRegular(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file",
        )));
    }
    let found = metadata.len();
    if found != expected || found == 0 || found > MAX_COMPOSITION_SIDECAR_BYTES as u64 {
        return Err(SidecarError::Size { expected, found });
    }
    let mut bytes = Vec::with_capacity(found as usize);
    Read::by_ref(&mut file)
        .take(MAX_COMPOSITION_SIDECAR_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(SidecarError::NotRegular)?;
    if bytes.len() as u64 != expected {
        return Err(SidecarError::Size {
            expected,
            found: bytes.len() as u64,
        });
    }
    if hex(&Sha256::digest(&bytes)) != digest {
        return Err(SidecarError::Digest);
    }
    let text = std::str::from_utf8(&bytes).map_err(|e| SidecarError::Json(e.to_string()))?;
    serde_json::from_str(text).map_err(|e| SidecarError::Json(e.to_string()))
}

#[cfg(unix)]
fn create_private(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
}

#[cfg(not(unix))]
fn create_private(path: &Path) -> io::Result<File> {
    OpenOptions::new().write(true).create_new(true).open(path)
}

#[cfg(unix)]
fn open_no_follow(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
}

#[cfg(not(unix))]
fn open_no_follow(path: &Path) -> io::Result<File> {
    if fs::symlink_metadata(path)?.file_type().is_symlink() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "a symbolic link",
        ));
    }
    File::open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn envelope(sidecar: &Sidecar) -> Value {
        sidecar.envelope("value_file")["value_file"].clone()
    }

    #[test]
    fn a_written_sidecar_reads_back_once_and_is_unlinked() {
        let dir = tempfile::tempdir().unwrap();
        let value = json!({"big": "x".repeat(10)});
        let sidecar = write(dir.path(), value.to_string().as_bytes()).unwrap();
        assert!(sidecar.name.starts_with(PREFIX) && !sidecar.name.contains('/'));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(&sidecar.path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        assert_eq!(read(dir.path(), &envelope(&sidecar)).unwrap(), value);
        assert!(!sidecar.path.exists());
        assert!(matches!(
            read(dir.path(), &envelope(&sidecar)),
            Err(SidecarError::NotRegular(_))
        ));
    }

    #[test]
    fn the_reader_refuses_links_traversal_and_wrong_digests() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let sidecar = write(outside.path(), b"{\"secret\":1}").unwrap();
        let mut traversal = envelope(&sidecar);
        traversal["path"] = json!(format!("../{}", sidecar.name));
        assert!(matches!(
            read(dir.path(), &traversal),
            Err(SidecarError::Path(_))
        ));
        let mut absolute = envelope(&sidecar);
        absolute["path"] = json!(sidecar.path.to_string_lossy());
        assert!(matches!(
            read(dir.path(), &absolute),
            Err(SidecarError::Path(_))
        ));
        #[cfg(unix)]
        {
            let link = dir.path().join(&sidecar.name);
            std::os::unix::fs::symlink(&sidecar.path, &link).unwrap();
            assert!(matches!(
                read(dir.path(), &envelope(&sidecar)),
                Err(SidecarError::NotRegular(_))
            ));
            assert!(sidecar.path.exists(), "the link's target is untouched");
        }
        let good = write(dir.path(), b"{\"a\":1}").unwrap();
        let mut wrong = envelope(&good);
        wrong["sha256"] = json!("0".repeat(64));
        assert!(matches!(
            read(dir.path(), &wrong),
            Err(SidecarError::Digest)
        ));
        assert!(!good.path.exists(), "a refused sidecar is unlinked too");
        let short = write(dir.path(), b"{\"a\":1}").unwrap();
        let mut size = envelope(&short);
        size["bytes"] = json!(3);
        assert!(matches!(
            read(dir.path(), &size),
            Err(SidecarError::Size { .. })
        ));
        assert!(write(dir.path(), &vec![b' '; MAX_COMPOSITION_SIDECAR_BYTES + 1]).is_err());
    }
}
