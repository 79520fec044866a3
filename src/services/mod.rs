//! Host services and the traits an embedder implements to bind a frontend or broker.
