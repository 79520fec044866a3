//! The features the runtime serves itself, each a module of its own: tool composition
//! (section 2.25), resource refs and operation descriptors (2.26), operation discovery
//! (2.26), bulk objects (2.27). What they act on is the host's own (its extensions'
//! tools, their native resources, files in a host-owned directory), so no embedder
//! service is bound for them; [`offers`] says who they are offered to.
//!
//! The traits an embedder implements to bind a frontend or a broker are in
//! [`crate::services`].

pub mod bulk;
pub mod composition;
pub mod offers;
pub mod operation_discovery;
pub mod resources;
