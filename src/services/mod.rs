//! Host services and the traits an embedder implements to bind a frontend or broker.

pub mod owner;
pub mod presentation;

pub use owner::{OwnerError, ResourceOwner};
pub use presentation::{
    parse_update, PresentationError, PresentationStore, PresentationThrottle, PresentationUpdate,
};
