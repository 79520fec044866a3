//! Host services and the traits an embedder implements to bind a frontend or broker.

pub mod artifacts;
pub mod owner;

pub use artifacts::{Artifact, ArtifactError, ArtifactId, ArtifactStore, OwnerArtifacts};
pub use owner::{OwnerError, ResourceOwner};
