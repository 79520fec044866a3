//! The private store of each composing tool (section 2.25 `composition/store`): one
//! JSON object per tool in a host-owned directory, which outlives generations and the
//! host itself.
//!
//! The file of a tool is named by the SHA-256 of the tool's name, so no name reaches
//! the file system. A commit reads the store, applies the batch, checks the bound of
//! the whole store, writes a new file beside the old one (created exclusively,
//! readable by the owner only), syncs it, renames it over the old one and syncs the
//! directory: when the commit is acknowledged the new store is on disk, and a crash at
//! any point leaves the old store or the new one, never a mix.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use parking_lot::Mutex;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::limits::MAX_COMPOSITION_STORE_BYTES;

/// Why a commit failed.
#[derive(Debug)]
pub enum StoreError {
    /// The store would exceed [`MAX_COMPOSITION_STORE_BYTES`] after the batch.
    TooLarge {
        /// Its encoded size after the batch.
        bytes: usize,
    },
    /// Reading, writing or syncing failed.
    Io(io::Error),
    /// The file on disk is not a JSON object (it was changed outside the host).
    Corrupt(PathBuf),
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreError::TooLarge { bytes } => write!(
                f,
                "the store would be {bytes} bytes, more than the {MAX_COMPOSITION_STORE_BYTES} \
                 allowed; delete keys first"
            ),
            StoreError::Io(e) => write!(f, "the composition store could not be written: {e}"),
            StoreError::Corrupt(path) => write!(
                f,
                "the composition store {} is not a JSON object; remove it to start afresh",
                path.display()
            ),
        }
    }
}

impl std::error::Error for StoreError {}

/// The stores of every composing tool, under one directory.
#[derive(Debug)]
pub struct CompositionStore {
    dir: PathBuf,
    /// Commits are serialized: two parents of one tool never interleave.
    writing: Mutex<()>,
}

impl CompositionStore {
    /// The stores under `dir`, created (owner-only) on the first commit.
    pub fn new(dir: impl Into<PathBuf>) -> CompositionStore {
        CompositionStore {
            dir: dir.into(),
            writing: Mutex::new(()),
        }
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn file_of(&self, tool: &str) -> PathBuf {
        let digest = crate::services::artifacts::hex(&Sha256::digest(tool.as_bytes()));
        self.dir.join(format!("{digest}.json"))
    }

    /// The store of composing tool `tool`: empty when it never committed.
    pub fn load(&self, tool: &str) -> Result<Map<String, Value>, StoreError> {
        let path = self.file_of(tool);
        match fs::read(&path) {
            Ok(bytes) => match serde_json::from_slice(&bytes) {
                Ok(Value::Object(map)) => Ok(map),
                _ => Err(StoreError::Corrupt(path)),
            },
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Map::new()),
            Err(e) => Err(StoreError::Io(e)),
        }
    }

    /// Applies one write batch to `tool`'s store and syncs it before returning.
    pub fn commit(
        &self,
        tool: &str,
        set: Map<String, Value>,
        delete: &[String],
    ) -> Result<(), StoreError> {
        let _writing = self.writing.lock();
        let mut store = self.load(tool)?;
        for key in delete {
            store.remove(key);
        }
        store.extend(set);
        let bytes = serde_json::to_vec(&Value::Object(store)).expect("JSON values serialize");
        if bytes.len() > MAX_COMPOSITION_STORE_BYTES {
            return Err(StoreError::TooLarge { bytes: bytes.len() });
        }
        self.write(&self.file_of(tool), &bytes)
            .map_err(StoreError::Io)
    }

    fn write(&self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        create_private_dir(&self.dir)?;
        let fresh = path.with_extension(format!("json.{}.new", std::process::id()));
        let _ = fs::remove_file(&fresh);
        let mut file = private_new_file(&fresh)?;
        let written = file.write_all(bytes).and_then(|()| file.sync_all());
        drop(file);
        if let Err(e) = written.and_then(|()| fs::rename(&fresh, path)) {
            let _ = fs::remove_file(&fresh);
            return Err(e);
        }
        File::open(&self.dir)?.sync_all()
    }
}

#[cfg(unix)]
fn create_private_dir(dir: &Path) -> io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

#[cfg(not(unix))]
fn create_private_dir(dir: &Path) -> io::Result<()> {
    fs::create_dir_all(dir)
}

#[cfg(unix)]
fn private_new_file(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
}

#[cfg(not(unix))]
fn private_new_file(path: &Path) -> io::Result<File> {
    OpenOptions::new().write(true).create_new(true).open(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn commits_persist_per_tool_and_the_whole_store_is_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let store = CompositionStore::new(dir.path().join("store"));
        assert!(store.load("compose").unwrap().is_empty());
        let set: Map<String, Value> = [("answer".to_string(), json!(42))].into_iter().collect();
        store.commit("compose", set, &[]).unwrap();
        let again = CompositionStore::new(dir.path().join("store"));
        assert_eq!(again.load("compose").unwrap()["answer"], 42);
        assert!(again.load("other").unwrap().is_empty());
        again
            .commit("compose", Map::new(), &["answer".into()])
            .unwrap();
        assert!(again.load("compose").unwrap().is_empty());
        let big: Map<String, Value> = (0..5)
            .map(|n| (format!("k{n}"), json!("x".repeat(250 * 1024))))
            .collect();
        assert!(matches!(
            again.commit("compose", big, &[]),
            Err(StoreError::TooLarge { .. })
        ));
        assert!(
            again.load("compose").unwrap().is_empty(),
            "a refused batch changes nothing"
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(dir.path().join("store"))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o700);
        }
    }
}
