//! The artifact store of one process generation (section 2.8).

use std::collections::HashMap;
use std::fmt;
use std::io;
use std::path::Path;
use std::sync::Arc;

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::limits::{MAX_ARTIFACTS_PER_GENERATION, MAX_ARTIFACT_GENERATION_BYTES};
use crate::services::ResourceOwner;
use crate::validate::{ArtifactResolver, VerifiedArtifact};

use super::error::{ArtifactError, Quota, Rejection};
use super::media::MediaType;
use super::params::{PublishParams, Sha256Hex, Source};

/// Prefix of every artifact id.
const ID_PREFIX: &str = "artifact-";

/// Domain separation for the id derivation, so the secret's hashes mean nothing else.
const ID_DOMAIN: &[u8] = b"octet-host artifact id v1\0";

/// Bytes of the digest kept in an id (32 hexadecimal digits).
const ID_DIGEST_BYTES: usize = 16;

/// An opaque artifact id, such as `artifact-` followed by 32 hexadecimal digits.
///
/// Ids are derived from a per-store random secret, the process generation and a counter
/// that only grows, so no id is ever issued twice and none can be guessed.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ArtifactId(String);

impl ArtifactId {
    /// The id as sent on the wire.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The success result of `artifact/publish`: `{"artifact_id": "..."}`.
    pub fn publish_result(&self) -> Value {
        json!({ "artifact_id": self.0 })
    }
}

impl fmt::Display for ArtifactId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A verified artifact: immutable bytes whose size, SHA-256, canonical MIME type and
/// media signature were checked at publication.
///
/// Cloning is cheap: the bytes are shared, never copied, and never change.
#[derive(Clone)]
pub struct Artifact {
    id: ArtifactId,
    owner: ResourceOwner,
    media_type: MediaType,
    sha256: Sha256Hex,
    bytes: Arc<[u8]>,
}

impl Artifact {
    /// The artifact's id.
    pub fn id(&self) -> &ArtifactId {
        &self.id
    }

    /// The host-derived owner that published it.
    pub fn owner(&self) -> &ResourceOwner {
        &self.owner
    }

    /// The verified media type.
    pub fn media_type(&self) -> MediaType {
        self.media_type
    }

    /// The verified, canonical MIME type.
    pub fn mime_type(&self) -> &'static str {
        self.media_type.as_str()
    }

    /// The size in bytes.
    pub fn size(&self) -> u64 {
        // A slice never holds more than u64::MAX bytes.
        u64::try_from(self.bytes.len()).unwrap_or(u64::MAX)
    }

    /// The verified SHA-256, 64 lowercase hexadecimal digits.
    pub fn sha256(&self) -> &str {
        self.sha256.as_str()
    }

    /// The bytes, snapshotted at publication.
    pub fn bytes(&self) -> &Arc<[u8]> {
        &self.bytes
    }

    /// What the tool-result validator needs to know (section 1.2).
    pub fn verified(&self) -> VerifiedArtifact {
        VerifiedArtifact {
            mime_type: self.mime_type().to_owned(),
            size_bytes: self.size(),
        }
    }
}

impl fmt::Debug for Artifact {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never the bytes themselves.
        f.debug_struct("Artifact")
            .field("id", &self.id.as_str())
            .field("owner", &self.owner)
            .field("media_type", &self.media_type)
            .field("size", &self.bytes.len())
            .field("sha256", &self.sha256.as_str())
            .finish()
    }
}

/// The verified artifacts of one process generation.
///
/// One store belongs to one process generation (one child process): the dispatcher keeps
/// it with the generation's connection and drops it, or calls [`ArtifactStore::retire`],
/// when the generation is reloaded, restarted or settled. The section 2.8 quotas (64
/// artifacts, 64 MiB) count everything the generation published, whichever session owner
/// it published for. Each artifact remembers its full [`ResourceOwner`] and answers only
/// to that same triple, so another session, host build or generation sees an unknown id.
///
/// Keeping stores apart per generation also separates extensions: two extensions of one
/// host may be issued equal owner triples, but each resolves only through its own store.
pub struct ArtifactStore {
    process_generation: u64,
    secret: [u8; 32],
    next_serial: u64,
    artifacts: HashMap<String, Artifact>,
    total_bytes: u64,
    retired: bool,
}

impl ArtifactStore {
    /// An empty store for `process_generation`, with a fresh random id secret from the
    /// operating system.
    pub fn new(process_generation: u64) -> io::Result<ArtifactStore> {
        let secret = crate::hex::random_bytes::<32>()?;
        Ok(ArtifactStore {
            process_generation,
            secret,
            next_serial: 0,
            artifacts: HashMap::new(),
            total_bytes: 0,
            retired: false,
        })
    }

    /// The process generation this store belongs to.
    pub fn process_generation(&self) -> u64 {
        self.process_generation
    }

    /// How many artifacts are held.
    pub fn len(&self) -> usize {
        self.artifacts.len()
    }

    /// True when no artifact is held.
    pub fn is_empty(&self) -> bool {
        self.artifacts.is_empty()
    }

    /// The bytes held, counted against the 64 MiB generation quota.
    pub fn total_bytes(&self) -> u64 {
        self.total_bytes
    }

    /// True once [`ArtifactStore::retire`] was called.
    pub fn is_retired(&self) -> bool {
        self.retired
    }

    /// Handles `artifact/publish` for `owner`, the host-derived owner of the request's
    /// active parent (the caller has already resolved `parent_request_id`, which is
    /// ignored here).
    ///
    /// `params` is the request's params object; `scratch_dir` the generation's
    /// `OCTET_EXTENSION_SCRATCH`, under which a `path` source is read. On success the
    /// bytes are held in memory and the new id is returned; answer the request with
    /// [`ArtifactId::publish_result`], or a failure with [`ArtifactError::code`] and its
    /// `Display`.
    pub fn publish(
        &mut self,
        params: &Value,
        scratch_dir: &Path,
        owner: &ResourceOwner,
    ) -> Result<ArtifactId, ArtifactError> {
        if self.retired || owner.process_generation != self.process_generation {
            return Err(ArtifactError::NoActiveOwner);
        }
        let params = PublishParams::parse(params)?;
        if self.artifacts.len() >= MAX_ARTIFACTS_PER_GENERATION {
            return Err(ArtifactError::QuotaExceeded {
                which: Quota::GenerationCount,
            });
        }
        if self.total_bytes.saturating_add(params.size) > MAX_ARTIFACT_GENERATION_BYTES {
            return Err(ArtifactError::QuotaExceeded {
                which: Quota::GenerationBytes,
            });
        }
        let bytes = match params.source {
            Source::Inline(bytes) => bytes,
            Source::Path(path) => path.read(scratch_dir, params.size.saturating_add(1))?,
        };
        verify(params.media_type, params.size, &params.sha256, &bytes)?;
        let id = self.mint_id();
        let artifact = Artifact {
            id: id.clone(),
            owner: owner.clone(),
            media_type: params.media_type,
            sha256: params.sha256,
            bytes: Arc::from(bytes),
        };
        self.total_bytes += artifact.size();
        self.artifacts.insert(id.0.clone(), artifact);
        Ok(id)
    }

    /// The artifact `id`, if `owner` (all three fields) published it in this store and
    /// the store is not retired. Every other case, a foreign owner included, is `None`,
    /// exactly as for an id never issued.
    pub fn resolve(&self, id: &str, owner: &ResourceOwner) -> Option<&Artifact> {
        self.artifacts
            .get(id)
            .filter(|artifact| artifact.owner == *owner)
    }

    /// The artifact `id`, whoever published it: for the embedder, which may show any
    /// artifact of its extensions (an extension resolves only its own, with
    /// [`ArtifactStore::resolve`]).
    pub fn get(&self, id: &str) -> Option<&Artifact> {
        self.artifacts.get(id)
    }

    /// A view answering only for `owner`, to validate that owner's tool results:
    /// pass it as `MediaPolicy::Artifacts(&view)`.
    pub fn owner_view<'a>(&'a self, owner: &'a ResourceOwner) -> OwnerArtifacts<'a> {
        OwnerArtifacts { store: self, owner }
    }

    /// Makes every handle unavailable and frees the bytes, on reload, restart or
    /// settlement of the generation. Later publications fail with
    /// [`ArtifactError::NoActiveOwner`]. Artifacts already handed out as [`Artifact`]
    /// clones keep their bytes alive until dropped; no id resolves again.
    pub fn retire(&mut self) {
        self.retired = true;
        self.artifacts.clear();
        self.total_bytes = 0;
    }

    /// The next id: `artifact-` and the first 16 bytes of
    /// SHA-256(domain, secret, generation, serial) in hexadecimal.
    fn mint_id(&mut self) -> ArtifactId {
        let serial = self.next_serial;
        self.next_serial += 1;
        let digest = Sha256::new()
            .chain_update(ID_DOMAIN)
            .chain_update(self.secret)
            .chain_update(self.process_generation.to_be_bytes())
            .chain_update(serial.to_be_bytes())
            .finalize();
        ArtifactId(format!("{ID_PREFIX}{}", hex(&digest[..ID_DIGEST_BYTES])))
    }
}

impl fmt::Debug for ArtifactStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never the secret or the bytes.
        f.debug_struct("ArtifactStore")
            .field("process_generation", &self.process_generation)
            .field("artifacts", &self.artifacts.len())
            .field("total_bytes", &self.total_bytes)
            .field("retired", &self.retired)
            .finish()
    }
}

/// The artifacts of one owner in one store: the [`ArtifactResolver`] for that owner's
/// tool results (section 1.2).
///
/// The validator checks that a media part's MIME type equals the artifact's (and so is
/// of the part's kind) and adds `size_bytes` once per reference, repeated references
/// included, against the 64 MiB per-result bound.
#[derive(Clone, Copy, Debug)]
pub struct OwnerArtifacts<'a> {
    store: &'a ArtifactStore,
    owner: &'a ResourceOwner,
}

impl OwnerArtifacts<'_> {
    /// The owner this view answers for.
    pub fn owner(&self) -> &ResourceOwner {
        self.owner
    }

    /// The full artifact `id`, if this view's owner published it.
    pub fn get(&self, id: &str) -> Option<&Artifact> {
        self.store.resolve(id, self.owner)
    }
}

impl ArtifactResolver for OwnerArtifacts<'_> {
    fn resolve(&self, artifact_id: &str) -> Option<VerifiedArtifact> {
        self.get(artifact_id).map(Artifact::verified)
    }
}

/// Checks the bytes against the declared size, digest and media type.
fn verify(
    media_type: MediaType,
    size: u64,
    sha256: &Sha256Hex,
    bytes: &[u8],
) -> Result<(), ArtifactError> {
    let actual = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
    if actual != size {
        return Err(ArtifactError::invalid(
            "size",
            Rejection::SizeMismatch {
                declared: size,
                actual,
            },
        ));
    }
    if hex(&Sha256::digest(bytes)) != sha256.as_str() {
        return Err(ArtifactError::invalid("sha256", Rejection::DigestMismatch));
    }
    if !media_type.signature_matches(bytes) {
        return Err(ArtifactError::invalid(
            "mime_type",
            Rejection::SignatureMismatch { media_type },
        ));
    }
    Ok(())
}

pub(crate) use crate::hex::{lower as hex, random as random_hex};
