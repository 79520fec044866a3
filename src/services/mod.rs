//! Host services and the traits an embedder implements to bind a frontend or broker.

pub mod owner;

pub use owner::{OwnerError, ResourceOwner};
