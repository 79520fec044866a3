//! The host's artifact store: `artifact/publish` (section 2.8) and the media references
//! of tool results (section 1.2).
//!
//! One [`ArtifactStore`] belongs to one process generation. The dispatcher, which owns
//! all protocol state, is expected to use it like this:
//!
//! 1. When a generation starts, create `ArtifactStore::new(generation)` next to its
//!    scratch directory.
//! 2. On `artifact/publish` (only with the `artifacts` feature negotiated), resolve
//!    `parent_request_id` to an active host-owned call and its [`ResourceOwner`] (answer
//!    -32002 when there is none), then call [`ArtifactStore::publish`] with the params,
//!    the scratch directory and that owner. Answer success with
//!    [`ArtifactId::publish_result`], failure with [`ArtifactError::code`] and the
//!    error's `Display` as the message.
//! 3. When a tool result arrives, validate it with
//!    `MediaPolicy::Artifacts(&store.owner_view(&owner))`, `owner` being the call's own
//!    host-derived owner; fetch the bytes of each media part with
//!    [`OwnerArtifacts::get`].
//! 4. On reload, restart or settlement of the generation, call
//!    [`ArtifactStore::retire`] or drop the store.
//!
//! Publication checks, in order: the params object is closed and well typed, the MIME
//! type canonical ([`MediaType`]), the digest 64 lowercase hex digits, exactly one
//! source; the per-artifact and inline bounds; the generation's count and byte quotas;
//! then the bytes are read (inline: strict base64; path: a no-follow `openat` walk, see
//! [`ScratchPath`]), and their exact size, SHA-256 and media signature verified. Only
//! then is an id issued. Nothing of a failed publication is kept or counted.
//!
//! [`ResourceOwner`]: crate::services::ResourceOwner

mod error;
mod media;
mod params;
mod path;
mod store;

#[cfg(test)]
mod tests;

pub use error::{ArtifactError, Quota, Rejection};
pub use media::MediaType;
pub use params::Sha256Hex;
pub use path::ScratchPath;
pub(crate) use store::{hex, random_hex};
pub use store::{Artifact, ArtifactId, ArtifactStore, OwnerArtifacts};
