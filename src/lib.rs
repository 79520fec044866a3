//! # octet-host
//!
//! A synchronous, thread-per-extension host runtime for octet extensions: child
//! processes that speak JSON-RPC 2.0, one JSON object per line, over stdin and stdout.
//! No async runtime is involved anywhere.
//!
//! Each extension generation (one child process) gets a reader, a writer and a stderr
//! thread; all generations talk to one dispatcher thread that owns every piece of
//! protocol state. The embedder talks to the dispatcher through cloneable handles.
//!
//! Where to start:
//! - [`host`]: build an [`ExtensionHost`], start extensions, call them, read events;
//! - [`services::bound`]: the services an embedder binds (composer, shortcuts, session
//!   entries, message injection, active tools, terminal handoff, autocomplete, session
//!   control and compaction, child agent sessions with model selection, events and
//!   lifetime; API 0.3 provider auth and catalog, session lifecycle; the policy
//!   engine, approver, secret broker and credential resolver): implement a trait, bind it with
//!   [`ExtensionHostBuilder::bind`], and the runtime checks every request before your
//!   code sees it and every answer before the extension does;
//! - [`serve`]: the same as a JSON-lines sidecar for any language;
//! - `sdk` (feature `sdk`): write an extension in Rust;
//! - [`manifest`], [`negotiation`], [`validate`], [`services`], [`supervisor`]: the
//!   typed values the host hands out and the services an embedder binds;
//! - [`wire`] and [`limits`]: the protocol's frames, codes and bounds.
//!
//! How these docs cite the protocol: "section 1.8" (or "1.8") names a section of the
//! octet wire protocol reference, and "SUPPLEMENT" names a heading of its supplement
//! (environment, manifest schema, default bounds, API 0.3). Every bound they set is a
//! named constant in [`limits`], whose doc comment names its section.

#![warn(missing_docs)]

#[cfg(feature = "cli")]
#[doc(hidden)]
pub mod bench;
mod cancel_flag;
#[cfg(feature = "cli")]
#[doc(hidden)]
pub mod cli;
mod crowd;
pub(crate) mod dispatcher;
pub mod examples;
pub mod features;
mod generation;
mod hex;
pub mod host;
pub mod limits;
pub mod manifest;
pub mod model;
pub mod negotiation;
#[cfg(feature = "sdk")]
pub mod sdk;
pub mod serve;
pub mod services;
mod slice;
mod spin;
mod suggest;
pub mod supervisor;
mod text;
// The process and pipe machinery under the host. Public for the crate's own tests,
// benches and fuzz targets; not part of the API an embedder uses.
#[doc(hidden)]
pub mod transport;
pub mod validate;
mod wipe;
pub mod wire;

/// The channel crate whose types appear in the API ([`PendingCall::answer`],
/// [`ExtensionHost::events`]): select across calls and your own channels with
/// `octet_host::channel::select!` without adding a dependency.
pub use crossbeam_channel as channel;

pub use host::{
    CallError, CallOptions, ExtensionHandle, ExtensionHost, ExtensionHostBuilder, HostEvent,
    PendingCall, StartError,
};

/// Compiles the README's examples as doc-tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
