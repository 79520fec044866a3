//! `serve` driven in-process over channels: the JSON-lines control protocol against the
//! SDK `test-extension` and the raw Python peer.
//!
//! The modules live in `tests/serve/`: `calls`, the `session` around them, and `menu`
//! actions.

mod support;

#[path = "serve/calls.rs"]
mod calls;
#[path = "serve/menu.rs"]
mod menu;
#[path = "serve/session.rs"]
mod session;
