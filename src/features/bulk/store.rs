//! The host's bulk records and files (section 2.27): the transfer directory and the
//! private snapshots, each opened once and then reached only through `openat` on the
//! directory descriptors, with `O_NOFOLLOW` and no separate check before the open.

use std::collections::{HashMap, HashSet};
use std::ffi::CString;
use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;
use sha2::{Digest, Sha256};

use super::{BlobRef, BulkError};
use crate::negotiation::{BulkLimits, BulkObjectsOffer};
use crate::transport::ConnId;

/// The prefix of every locator the host creates.
pub(crate) const LOCATOR_PREFIX: &str = "octet-transfer-";

/// Bytes read and hashed at a time.
const CHUNK: usize = 1 << 20;

/// A directory held open, reached through `openat`.
#[derive(Debug)]
struct Dir {
    path: PathBuf,
    fd: File,
}

impl Dir {
    /// Creates `path` owner-only (when absent) and opens it without following a link.
    fn create(path: PathBuf) -> io::Result<Dir> {
        fs::create_dir_all(&path)?;
        fs::set_permissions(&path, fs::Permissions::from_mode(0o700))?;
        let fd = open_at(None, &path, libc::O_RDONLY | libc::O_DIRECTORY, 0)?;
        Ok(Dir { path, fd })
    }

    fn open(&self, name: &str, flags: i32, mode: libc::mode_t) -> io::Result<File> {
        open_at(Some(&self.fd), Path::new(name), flags, mode)
    }

    fn unlink(&self, name: &str) {
        if let Ok(name) = CString::new(name) {
            // SAFETY: the descriptor is open and `name` is a valid C string.
            unsafe { libc::unlinkat(self.fd.as_raw_fd(), name.as_ptr(), 0) };
        }
    }
}

/// `openat(dir, name, flags | O_NOFOLLOW | O_CLOEXEC, mode)`; `dir` `None` opens
/// `name` from the working directory (an absolute path).
fn open_at(dir: Option<&File>, name: &Path, flags: i32, mode: libc::mode_t) -> io::Result<File> {
    use std::os::unix::ffi::OsStrExt;
    let name = CString::new(name.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL in a file name"))?;
    let dirfd = dir.map_or(libc::AT_FDCWD, |d| d.as_raw_fd());
    // SAFETY: `name` is a valid C string; the result is checked before it is owned.
    let fd = unsafe {
        libc::openat(
            dirfd,
            name.as_ptr(),
            flags | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            libc::c_uint::from(mode),
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` is a fresh descriptor nobody else owns.
    Ok(unsafe { File::from_raw_fd(fd) })
}

/// A write ticket: the locator the extension fills, reserved bytes and one blob.
#[derive(Clone, Debug)]
pub(crate) struct Ticket {
    pub conn: ConnId,
    pub owner: String,
    pub locator: String,
    pub capacity: u64,
    pub media_type: String,
}

#[derive(Clone, Debug)]
struct Lease {
    conn: ConnId,
    locator: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BlobState {
    /// Committed under the live call `parent` of `conn`; not yet exported.
    Provisional { conn: ConnId, parent: u64 },
    /// Published by a successful call.
    Exported,
}

#[derive(Clone, Debug)]
struct Blob {
    reference: BlobRef,
    owner: String,
    extension: String,
    snapshot: String,
    state: BlobState,
}

/// Bytes and blobs a host session holds, reservations included.
#[derive(Clone, Copy, Debug, Default)]
struct Usage {
    bytes: u64,
    blobs: u64,
}

#[derive(Debug, Default)]
struct State {
    next: u64,
    tickets: HashMap<String, Ticket>,
    leases: HashMap<String, Lease>,
    blobs: HashMap<String, Blob>,
    usage: HashMap<String, Usage>,
    /// The blobs the host handed each running call in its arguments, by (generation,
    /// request id); the tool's name with them.
    grants: HashMap<(ConnId, u64), (String, HashSet<String>)>,
}

/// Every bulk record of one host, and its two directories.
#[derive(Debug)]
pub(crate) struct BulkStore {
    /// The store's directory.
    root: PathBuf,
    transfer: Dir,
    objects: Dir,
    /// Retained blobs of a store in a configured directory; a temporary store has none
    /// and refuses durability.
    durable: Option<Dir>,
    limits: BulkLimits,
    prefix: String,
    state: Mutex<State>,
}

impl BulkStore {
    /// A store under `root`: `transfer/` (the negotiated transfer directory) and
    /// `objects/` (the snapshots), both owner-only.
    pub fn new(root: &Path, limits: BulkLimits, durable: bool) -> io::Result<Arc<BulkStore>> {
        let root = std::path::absolute(root)?;
        fs::create_dir_all(&root)?;
        fs::set_permissions(&root, fs::Permissions::from_mode(0o700))?;
        Ok(Arc::new(BulkStore {
            root: root.clone(),
            transfer: Dir::create(root.join("transfer"))?,
            objects: Dir::create(root.join("objects"))?,
            durable: match durable {
                true => Some(Dir::create(root.join("durable"))?),
                false => None,
            },
            limits,
            prefix: crate::hex::random(8)?,
            state: Mutex::new(State::default()),
        }))
    }

    /// The store `storage` configures: in its directory (durable), or in `scratch/bulk`
    /// (temporary). Limits outside 1..=2^53-1 are refused.
    pub fn for_storage(storage: &super::BulkStorage, scratch: &Path) -> io::Result<Arc<BulkStore>> {
        storage
            .limits
            .check()
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?;
        match &storage.directory {
            Some(dir) => BulkStore::new(dir, storage.limits, true),
            None => BulkStore::new(&scratch.join("bulk"), storage.limits, false),
        }
    }

    /// The store's directory, when it is not a temporary one.
    pub fn root(&self) -> Option<&Path> {
        self.durable.as_ref().map(|_| self.root.as_path())
    }

    /// The storage context offered in `initialize`.
    pub fn offer(&self) -> BulkObjectsOffer {
        BulkObjectsOffer {
            transfer_directory: self.transfer.path.clone(),
            limits: self.limits,
        }
    }

    fn token(state: &mut State, prefix: &str, kind: &str) -> String {
        state.next += 1;
        format!("{kind}-{prefix}-{}", state.next)
    }

    /// `bulk/write`: a ticket of `capacity` bytes for `owner`, with its locator.
    pub fn write(
        &self,
        conn: ConnId,
        owner: &str,
        capacity: u64,
        media_type: &str,
    ) -> Result<(String, String), BulkError> {
        let mut state = self.state.lock();
        if capacity > self.limits.object_bytes {
            return Err(BulkError::QuotaExceeded(format!(
                "a capacity of {capacity} bytes is over the object limit of {}",
                self.limits.object_bytes
            )));
        }
        let tickets = state.tickets.values().filter(|t| t.conn == conn).count() as u64;
        if tickets >= self.limits.write_tickets_per_generation {
            return Err(BulkError::QuotaExceeded(format!(
                "at most {} write tickets at once per generation",
                self.limits.write_tickets_per_generation
            )));
        }
        let usage = state.usage.get(owner).copied().unwrap_or_default();
        if usage.bytes + capacity > self.limits.owner_bytes {
            return Err(BulkError::QuotaExceeded(format!(
                "the session would hold more than {} bytes",
                self.limits.owner_bytes
            )));
        }
        if usage.blobs >= self.limits.blobs_per_owner {
            return Err(BulkError::QuotaExceeded(format!(
                "the session would hold more than {} blobs",
                self.limits.blobs_per_owner
            )));
        }
        let ticket = Self::token(&mut state, &self.prefix, "ticket");
        let locator = format!(
            "{LOCATOR_PREFIX}{}",
            Self::token(&mut state, &self.prefix, "w")
        );
        self.transfer
            .open(
                &locator,
                libc::O_CREAT | libc::O_EXCL | libc::O_WRONLY,
                0o600,
            )
            .map_err(|e| {
                BulkError::StorageUnavailable(format!("cannot create the locator: {e}"))
            })?;
        let usage = state.usage.entry(owner.to_string()).or_default();
        usage.bytes += capacity;
        usage.blobs += 1;
        state.tickets.insert(
            ticket.clone(),
            Ticket {
                conn,
                owner: owner.to_string(),
                locator: locator.clone(),
                capacity,
                media_type: media_type.to_string(),
            },
        );
        Ok((ticket, locator))
    }

    /// Consumes ticket `id` of `conn` (even when its commit then fails).
    pub fn take_ticket(&self, conn: ConnId, id: &str) -> Result<Ticket, BulkError> {
        let mut state = self.state.lock();
        match state.tickets.get(id) {
            Some(ticket) if ticket.conn == conn => {
                Ok(state.tickets.remove(id).expect("checked above"))
            }
            _ => Err(BulkError::unavailable(
                "no write ticket of this extension generation has that id",
            )),
        }
    }

    /// The I/O of `bulk/commit`, without the lock: the locator must be a regular file
    /// with one link, of exactly `bytes` (within the capacity); it is streamed into a
    /// new private snapshot while hashed, and must hash to `sha256`. The locator is
    /// removed whatever the outcome. Returns the snapshot's name.
    pub fn snapshot(&self, ticket: &Ticket, bytes: u64, sha256: &str) -> Result<String, BulkError> {
        let outcome = self.copy_checked(ticket, bytes, sha256);
        self.transfer.unlink(&ticket.locator);
        outcome
    }

    fn copy_checked(&self, ticket: &Ticket, bytes: u64, sha256: &str) -> Result<String, BulkError> {
        let source = self
            .transfer
            .open(&ticket.locator, libc::O_RDONLY | libc::O_NONBLOCK, 0)
            .map_err(|e| match e.raw_os_error() {
                Some(libc::ELOOP) => BulkError::unavailable(
                    "the locator is a symbolic link, which is never followed",
                ),
                _ => BulkError::unavailable(format!("the locator cannot be opened: {e}")),
            })?;
        let meta = source
            .metadata()
            .map_err(|e| BulkError::StorageUnavailable(e.to_string()))?;
        if !meta.file_type().is_file() {
            return Err(BulkError::unavailable("the locator is not a regular file"));
        }
        if meta.nlink() != 1 {
            return Err(BulkError::unavailable(
                "the locator has another hard link, so it is not the host's file",
            ));
        }
        if meta.len() != bytes || bytes > ticket.capacity {
            return Err(BulkError::SizeMismatch);
        }
        let name = {
            let mut state = self.state.lock();
            Self::token(&mut state, &self.prefix, "object")
        };
        let mut snapshot = self
            .objects
            .open(&name, libc::O_CREAT | libc::O_EXCL | libc::O_WRONLY, 0o600)
            .map_err(|e| BulkError::StorageUnavailable(format!("cannot create a snapshot: {e}")))?;
        let copied = copy_hashing(&source, &mut snapshot, bytes);
        let verdict = match copied {
            Ok((count, _)) if count != bytes => Err(BulkError::SizeMismatch),
            Ok((_, digest)) if digest != sha256 => Err(BulkError::IntegrityMismatch),
            Ok(_) => Ok(name.clone()),
            Err(e) => Err(BulkError::StorageUnavailable(format!(
                "the copy failed: {e}"
            ))),
        };
        if verdict.is_err() {
            self.objects.unlink(&name);
        }
        verdict
    }

    /// Ends a commit: the ticket's reservation becomes the blob's bytes, or goes. A
    /// failed commit (`snapshot` `None`), or one whose parent settled meanwhile
    /// (`cancelled`, read under the lock the parent's discard takes too), records
    /// nothing and removes the snapshot.
    #[allow(clippy::too_many_arguments)]
    pub fn finish_commit(
        &self,
        ticket: &Ticket,
        parent: u64,
        extension: &str,
        bytes: u64,
        sha256: &str,
        snapshot: Option<String>,
        cancelled: &crate::cancel_flag::CancelFlag,
    ) -> Option<BlobRef> {
        // A commit that failed before its copy still removes the locator.
        if snapshot.is_none() {
            self.transfer.unlink(&ticket.locator);
        }
        let mut state = self.state.lock();
        let record = !cancelled.is_cancelled();
        let usage = state.usage.entry(ticket.owner.clone()).or_default();
        usage.bytes -= ticket.capacity;
        usage.blobs -= 1;
        let snapshot = snapshot?;
        if !record {
            drop(state);
            self.objects.unlink(&snapshot);
            return None;
        }
        usage.bytes += bytes;
        usage.blobs += 1;
        let token = Self::token(&mut state, &self.prefix, "blob");
        let reference = BlobRef {
            token: token.clone(),
            bytes,
            sha256: sha256.to_string(),
            media_type: ticket.media_type.clone(),
        };
        state.blobs.insert(
            token,
            Blob {
                reference: reference.clone(),
                owner: ticket.owner.clone(),
                extension: extension.to_string(),
                snapshot,
                state: BlobState::Provisional {
                    conn: ticket.conn,
                    parent,
                },
            },
        );
        Some(reference)
    }

    /// `bulk/read`: the snapshot name of `blob` when the call `parent` of `conn` may
    /// read it, and a new lease and locator for it.
    pub fn lease(
        &self,
        conn: ConnId,
        parent: u64,
        extension: &str,
        owner: &str,
        blob: &BlobRef,
    ) -> Result<(String, String, String), BulkError> {
        let mut state = self.state.lock();
        let record = state
            .blobs
            .get(&blob.token)
            .filter(|b| b.reference == *blob)
            .ok_or_else(|| BulkError::unavailable("no blob the host holds matches that BlobRef"))?;
        let granted = state
            .grants
            .get(&(conn, parent))
            .is_some_and(|(_, tokens)| tokens.contains(&blob.token));
        let visible = match record.state {
            BlobState::Provisional { conn: c, parent: p } => c == conn && p == parent,
            BlobState::Exported => {
                record.owner == owner && (granted || record.extension == extension)
            }
        };
        if !visible {
            return Err(BulkError::unavailable(
                "the blob was neither made by this extension nor handed to this call",
            ));
        }
        let snapshot = record.snapshot.clone();
        let leases = state.leases.values().filter(|l| l.conn == conn).count() as u64;
        if leases >= self.limits.read_leases_per_generation {
            return Err(BulkError::QuotaExceeded(format!(
                "at most {} read leases at once per generation",
                self.limits.read_leases_per_generation
            )));
        }
        let lease = Self::token(&mut state, &self.prefix, "lease");
        let locator = format!(
            "{LOCATOR_PREFIX}{}",
            Self::token(&mut state, &self.prefix, "r")
        );
        state.leases.insert(
            lease.clone(),
            Lease {
                conn,
                locator: locator.clone(),
            },
        );
        Ok((lease, locator, snapshot))
    }

    /// The I/O of `bulk/read`, without the lock: a private copy of the snapshot at the
    /// lease's locator, so the reader can never alter the blob.
    pub fn fill_lease(&self, snapshot: &str, locator: &str) -> Result<(), BulkError> {
        let fill = || -> io::Result<()> {
            let source = self.objects.open(snapshot, libc::O_RDONLY, 0)?;
            let mut target = self.transfer.open(
                locator,
                libc::O_CREAT | libc::O_EXCL | libc::O_WRONLY,
                0o400,
            )?;
            io::copy(&mut &source, &mut target)?;
            target.flush()
        };
        fill().map_err(|e| {
            self.transfer.unlink(locator);
            BulkError::StorageUnavailable(format!("cannot fill the lease: {e}"))
        })
    }

    /// Forgets lease `id` (its copy failed).
    pub fn drop_lease(&self, id: &str) {
        if let Some(lease) = self.state.lock().leases.remove(id) {
            self.transfer.unlink(&lease.locator);
        }
    }

    /// `bulk/release`: ends ticket or lease `id` of `conn` and removes its locator.
    pub fn release(&self, conn: ConnId, id: &str) -> Result<(), BulkError> {
        let mut state = self.state.lock();
        if state.tickets.get(id).is_some_and(|t| t.conn == conn) {
            let ticket = state.tickets.remove(id).expect("checked above");
            let usage = state.usage.entry(ticket.owner).or_default();
            usage.bytes -= ticket.capacity;
            usage.blobs -= 1;
            drop(state);
            self.transfer.unlink(&ticket.locator);
            return Ok(());
        }
        if state.leases.get(id).is_some_and(|l| l.conn == conn) {
            let lease = state.leases.remove(id).expect("checked above");
            drop(state);
            self.transfer.unlink(&lease.locator);
            return Ok(());
        }
        Err(BulkError::unavailable(
            "no ticket or lease of this extension generation has that id",
        ))
    }

    /// The call `call` of `conn` (a `tool/call` of `tool`) was sent with `tokens`, the
    /// BlobRefs its arguments carry.
    pub fn grant(&self, conn: ConnId, call: u64, tool: &str, tokens: HashSet<String>) {
        self.state
            .lock()
            .grants
            .insert((conn, call), (tool.to_string(), tokens));
    }

    /// The call `call` of `conn` settled: its tool, and its grants are gone.
    pub fn take_grant(&self, conn: ConnId, call: u64) -> Option<String> {
        self.state
            .lock()
            .grants
            .remove(&(conn, call))
            .map(|(tool, _)| tool)
    }

    /// Checks the BlobRefs a successful call of `conn` returned: each must match a
    /// blob exactly and be either one it committed (to export) or an exported blob of
    /// its owner. Returns the tokens to export.
    pub fn check_outputs(
        &self,
        conn: ConnId,
        parent: u64,
        owner: &str,
        refs: &[BlobRef],
    ) -> Result<Vec<String>, String> {
        let state = self.state.lock();
        let mut exports = Vec::new();
        for blob in refs {
            let Some(record) = state.blobs.get(&blob.token) else {
                return Err(format!(
                    "no blob the host holds has the id {:?}",
                    blob.token
                ));
            };
            if record.reference != *blob {
                return Err(
                    "a BlobRef's bytes, digest or media type differ from the host's record".into(),
                );
            }
            match record.state {
                BlobState::Provisional { conn: c, parent: p } if c == conn && p == parent => {
                    exports.push(blob.token.clone())
                }
                BlobState::Exported if record.owner == owner => {}
                _ => return Err("a BlobRef names a blob this call may not publish".into()),
            }
        }
        Ok(exports)
    }

    /// Checks the BlobRefs of a successful result's `structured` content (at most
    /// [`crate::limits::MAX_RESULT_BLOBS`], each a valid BlobRef) with
    /// [`BulkStore::check_outputs`]: the tokens to export, or why the result is
    /// invalid.
    pub fn result_blobs(
        &self,
        conn: ConnId,
        call: u64,
        owner: &str,
        structured: &serde_json::Value,
    ) -> Result<Vec<String>, String> {
        use crate::limits::MAX_RESULT_BLOBS;
        let values = super::blob_values(structured, MAX_RESULT_BLOBS + 1);
        if values.len() > MAX_RESULT_BLOBS {
            return Err(format!(
                "a result carries at most {MAX_RESULT_BLOBS} BlobRefs"
            ));
        }
        let refs = values
            .into_iter()
            .map(|value| BlobRef::parse(value).map_err(|problem| problem.to_string()))
            .collect::<Result<Vec<_>, _>>()?;
        self.check_outputs(conn, call, owner, &refs)
    }

    /// True when the call `call` of `conn` committed a blob not yet published or
    /// discarded.
    pub fn has_provisional(&self, conn: ConnId, call: u64) -> bool {
        self.state
            .lock()
            .blobs
            .values()
            .any(|b| b.state == BlobState::Provisional { conn, parent: call })
    }

    /// The call `parent` of `conn` settled successfully: `exports` are published, its
    /// other provisional blobs discarded.
    pub fn export(&self, conn: ConnId, parent: u64, exports: &[String]) {
        {
            let mut state = self.state.lock();
            for token in exports {
                if let Some(blob) = state.blobs.get_mut(token) {
                    blob.state = BlobState::Exported;
                }
            }
        }
        self.discard(conn, Some(parent));
    }

    /// How many write tickets, read leases and per-call grants the store holds: the
    /// books of running generations (retained blobs are not counted).
    pub fn transfers(&self) -> usize {
        let state = self.state.lock();
        state.tickets.len() + state.leases.len() + state.grants.len()
    }

    /// Discards the provisional blobs of the call `parent` of `conn`, or of every call
    /// of `conn` (`None`: the generation went away, with its tickets and leases).
    pub fn discard(&self, conn: ConnId, parent: Option<u64>) {
        let mut state = self.state.lock();
        let gone: Vec<String> = state
            .blobs
            .iter()
            .filter(|(_, b)| match b.state {
                BlobState::Provisional { conn: c, parent: p } => {
                    c == conn && parent.is_none_or(|parent| parent == p)
                }
                BlobState::Exported => false,
            })
            .map(|(token, _)| token.clone())
            .collect();
        let mut unlink = Vec::new();
        for token in gone {
            let blob = state.blobs.remove(&token).expect("listed above");
            let usage = state.usage.entry(blob.owner).or_default();
            usage.bytes -= blob.reference.bytes;
            usage.blobs -= 1;
            unlink.push((true, blob.snapshot));
        }
        if parent.is_none() {
            let tickets: Vec<String> = state
                .tickets
                .iter()
                .filter(|(_, t)| t.conn == conn)
                .map(|(id, _)| id.clone())
                .collect();
            for id in tickets {
                let ticket = state.tickets.remove(&id).expect("listed above");
                let usage = state.usage.entry(ticket.owner).or_default();
                usage.bytes -= ticket.capacity;
                usage.blobs -= 1;
                unlink.push((false, ticket.locator));
            }
            let leases: Vec<String> = state
                .leases
                .iter()
                .filter(|(_, l)| l.conn == conn)
                .map(|(id, _)| id.clone())
                .collect();
            for id in leases {
                unlink.push((
                    false,
                    state.leases.remove(&id).expect("listed above").locator,
                ));
            }
            state.grants.retain(|(c, _), _| *c != conn);
        }
        drop(state);
        for (object, name) in unlink {
            if object {
                self.objects.unlink(&name);
            } else {
                self.transfer.unlink(&name);
            }
        }
    }
}

impl BulkStore {
    /// `BulkStorage::retain_durable`: keeps a verified copy of the exported blob `blob`
    /// of `owner` in the durable directory, named by its digest, for a later host to
    /// recover.
    pub fn retain_durable(&self, owner: &str, blob: &BlobRef) -> Result<(), BulkError> {
        let durable = self.durable.as_ref().ok_or_else(|| {
            BulkError::StorageUnavailable("a temporary store refuses durability".into())
        })?;
        let snapshot = {
            let state = self.state.lock();
            let record = state
                .blobs
                .get(&blob.token)
                .filter(|b| b.reference == *blob && b.owner == owner)
                .filter(|b| b.state == BlobState::Exported)
                .ok_or_else(|| {
                    BulkError::unavailable("no exported blob of this session matches")
                })?;
            record.snapshot.clone()
        };
        let storage = |e: io::Error| BulkError::StorageUnavailable(format!("cannot retain: {e}"));
        let source = self
            .objects
            .open(&snapshot, libc::O_RDONLY, 0)
            .map_err(storage)?;
        let partial = format!("{}.partial", blob.sha256);
        durable.unlink(&partial);
        let mut target = durable
            .open(
                &partial,
                libc::O_CREAT | libc::O_EXCL | libc::O_WRONLY,
                0o600,
            )
            .map_err(storage)?;
        let (count, digest) = copy_hashing(&source, &mut target, blob.bytes).map_err(storage)?;
        target.sync_all().map_err(storage)?;
        if count != blob.bytes || digest != blob.sha256 {
            durable.unlink(&partial);
            return Err(BulkError::IntegrityMismatch);
        }
        let meta = serde_json::json!({"bytes": blob.bytes, "media_type": blob.media_type});
        fs::write(
            durable.path.join(format!("{}.json", blob.sha256)),
            meta.to_string(),
        )
        .map_err(storage)?;
        fs::rename(
            durable.path.join(&partial),
            durable.path.join(format!("{}.bin", blob.sha256)),
        )
        .map_err(storage)
    }

    /// `BulkStorage::recover_durable`: the retained blob of `blob`'s digest, size and
    /// media type, verified again byte for byte, as a new exported blob of `owner` with
    /// a fresh id (the old id authorizes nothing).
    pub fn recover_durable(&self, owner: &str, blob: &BlobRef) -> Result<BlobRef, BulkError> {
        let durable = self.durable.as_ref().ok_or_else(|| {
            BulkError::StorageUnavailable("a temporary store refuses durability".into())
        })?;
        let unavailable = || BulkError::unavailable("no retained blob matches");
        let meta: serde_json::Value =
            fs::read_to_string(durable.path.join(format!("{}.json", blob.sha256)))
                .ok()
                .and_then(|t| serde_json::from_str(&t).ok())
                .ok_or_else(unavailable)?;
        if meta["bytes"].as_u64() != Some(blob.bytes)
            || meta["media_type"].as_str() != Some(&blob.media_type)
        {
            return Err(unavailable());
        }
        let source = durable
            .open(&format!("{}.bin", blob.sha256), libc::O_RDONLY, 0)
            .map_err(|_| unavailable())?;
        if !source
            .metadata()
            .is_ok_and(|m| m.file_type().is_file() && m.len() == blob.bytes)
        {
            return Err(BulkError::SizeMismatch);
        }
        let (name, token) = {
            let mut state = self.state.lock();
            let usage = state.usage.get(owner).copied().unwrap_or_default();
            if usage.bytes + blob.bytes > self.limits.owner_bytes
                || usage.blobs >= self.limits.blobs_per_owner
            {
                return Err(BulkError::QuotaExceeded(
                    "the session's bulk quota is full".into(),
                ));
            }
            (
                Self::token(&mut state, &self.prefix, "object"),
                Self::token(&mut state, &self.prefix, "blob"),
            )
        };
        let storage = |e: io::Error| BulkError::StorageUnavailable(format!("cannot recover: {e}"));
        let mut snapshot = self
            .objects
            .open(&name, libc::O_CREAT | libc::O_EXCL | libc::O_WRONLY, 0o600)
            .map_err(storage)?;
        let copied = copy_hashing(&source, &mut snapshot, blob.bytes).map_err(storage)?;
        if copied != (blob.bytes, blob.sha256.clone()) {
            self.objects.unlink(&name);
            return Err(BulkError::IntegrityMismatch);
        }
        let reference = BlobRef {
            token: token.clone(),
            ..blob.clone()
        };
        let mut state = self.state.lock();
        let usage = state.usage.entry(owner.to_string()).or_default();
        usage.bytes += blob.bytes;
        usage.blobs += 1;
        state.blobs.insert(
            token,
            Blob {
                reference: reference.clone(),
                owner: owner.to_string(),
                extension: String::new(),
                snapshot: name,
                state: BlobState::Exported,
            },
        );
        Ok(reference)
    }
}

impl BulkStore {
    /// How the blob `token` stands for the call `call` of `conn` of `owner`.
    pub fn standing(
        &self,
        conn: ConnId,
        call: u64,
        owner: &str,
        token: &str,
    ) -> Option<crate::validate::diagnostics::BlobStanding> {
        use crate::validate::diagnostics::BlobStanding;
        let state = self.state.lock();
        let blob = state.blobs.get(token)?;
        match blob.state {
            BlobState::Provisional { conn: c, parent } if c == conn && parent == call => {
                Some(BlobStanding::Provisional)
            }
            BlobState::Exported if blob.owner == owner => Some(BlobStanding::Exported),
            _ => None,
        }
    }
}

impl Drop for BulkStore {
    /// The store is the host's own: its snapshots and locators go with it.
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.transfer.path);
        let _ = fs::remove_dir_all(&self.objects.path);
    }
}

/// Copies at most `limit + 1` bytes of `source` into `target`, hashing them: the count
/// and the lowercase SHA-256. Memory stays at one chunk.
fn copy_hashing(mut source: &File, target: &mut File, limit: u64) -> io::Result<(u64, String)> {
    let mut buffer = vec![0u8; CHUNK];
    let mut digest = Sha256::new();
    let mut count = 0u64;
    loop {
        let n = match source.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        count += n as u64;
        if count > limit {
            return Ok((count, String::new()));
        }
        digest.update(&buffer[..n]);
        target.write_all(&buffer[..n])?;
    }
    target.flush()?;
    Ok((count, crate::hex::lower(&digest.finalize())))
}
