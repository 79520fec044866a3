//! The values the host and its event loop share: calls and their outcomes, starts and
//! their errors, events, lifecycle reports, progress, status, the frontend and the
//! bound services. Both [`crate::host`] (which re-exports all of it) and the dispatcher
//! stand on this layer, so the embedder's API and the event loop never import each
//! other's types: the layers read top-down, host -> dispatcher -> model -> transport
//! -> wire.

pub mod call;
pub mod catalog;
pub mod encode;
pub mod events;
pub mod frontend;
pub mod lifecycle;
pub mod notify;
pub mod progress;
pub mod settings;
pub mod start;
pub mod status;
pub mod trace;
