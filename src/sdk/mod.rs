//! The extension side: write an octet extension in Rust in a few lines.
//!
//! An [`Extension`] is built by registering handlers, then [`Extension::run`] speaks the
//! protocol on stdin and stdout until the host sends `shutdown` or closes stdin:
//!
//! ```no_run
//! use octet_host::sdk::{CommandOutput, Context, Extension, HookOutput, ToolOutput};
//! use serde_json::{json, Value};
//!
//! #[derive(serde::Deserialize)]
//! struct HelloArgs {
//!     name: String,
//! }
//!
//! fn main() {
//!     Extension::new()
//!         .tool(
//!             "hello_world",
//!             "Greet someone",
//!             json!({"type": "object", "properties": {"name": {"type": "string"}},
//!                    "required": ["name"]}),
//!             |args: HelloArgs, _cx: &Context| {
//!                 Ok(ToolOutput::text(format!("Hello, {}!", args.name)))
//!             },
//!         )
//!         .command("hello", "Show a greeting", Some("/hello [name]"), |_args, _cx| {
//!             Ok(CommandOutput::text("hi"))
//!         })
//!         .hook("before_prompt", |_payload: Value, _cx| Ok(HookOutput::continue_()))
//!         .run()
//!         .unwrap();
//! }
//! ```
//!
//! The API version comes from `OCTET_EXTENSION_API_VERSION` (the host sets it from the
//! manifest) or [`Extension::api_version`]. API 0.1 answers `initialize` without
//! `protocol` and sends tool results as one string; API 0.2 and 0.4 negotiate features
//! and send content parts. API 0.3 speaks the canonical wire: every frame in both
//! directions is `octet-canonical-json-v1` with a closed envelope, `initialize` is
//! answered with a contract selection (no `commands`), only selected methods are
//! handled or sent, and `shutdown` answers `{"terminal":"shutdown"}` (the runtime's
//! module documentation lists every rule, including how malformed input is answered).
//!
//! One writer thread owns stdout, so frames never interleave. Requests run on worker
//! threads: one at a time on API 0.1, up to the negotiated `max_concurrent_requests` on
//! API 0.2, 0.3 and 0.4. There is one worker at first; while requests wait behind busy
//! workers the pool grows to the CPUs, and beyond them, up to that limit, while every
//! worker is blocked. A handler that waits for the host's answer to a child request (a
//! confirmation, input, a service) is seen as blocked at once: a request waiting
//! behind it starts without delay. A handler that panics is answered -32603 and the
//! process lives on.
//! Handlers reach the host through their [`Context`]: cancellation, `$/progress`,
//! notifications, contributions, and blocking `confirmation/request` and
//! `input/request` round trips.

use std::time::Duration;

mod agents;
mod autocomplete;
mod bulk;
mod cancel;
mod composition;
mod context;
mod error;
pub mod examples;

/// Typed diagnostics for tool results (`ToolOutput::with_diagnostics`): the records
/// of `metadata.octet_diagnostics_v1` and their checks, shared with the host.
pub mod diagnostics {
    pub use crate::validate::diagnostics::{
        summary, validate, Attachment, AttachmentKind, Diagnostic, Edit, Fix, Location, Related,
        Severity, Source, Span, METADATA_KEY,
    };
}
mod extension;
mod features;
mod menu;
mod operation;
mod output;
mod request;
mod resources;
mod runtime;
mod services;
mod session_control;
mod terminal;

pub use crate::services::bound::MessageRole;
/// The typed API 0.2 hooks' payloads, for a handler to take as its `P`.
pub use crate::validate::{BeforePersistencePayload, PostMutationPayload, ProviderRetryPayload};
pub use autocomplete::{
    CompletionItem, CompletionQuery, Completions, FEATURE_AUTOCOMPLETE, FEATURE_AUTOCOMPLETE_EDIT,
};
pub use bulk::FEATURE_BULK_OBJECTS;
pub use composition::{ComposableTool, CompositionContext, CompositionLimits, NestedOutcome};
pub use context::{CancellationToken, Context};
pub use error::{ChildRequestError, HandlerError, RunError};
pub use extension::{Command, Extension, Tool, API_VERSION_ENV};
pub use features::{
    FEATURE_ACTIVE_TOOLS, FEATURE_AGENT_MODEL_SELECTION, FEATURE_AGENT_SESSIONS,
    FEATURE_AGENT_SESSION_EVENTS, FEATURE_AGENT_SESSION_LIFETIME, FEATURE_COMPOSER,
    FEATURE_LIFECYCLE_EVENTS, FEATURE_MESSAGE_INJECTION, FEATURE_REQUEST_PROGRESS,
    FEATURE_SESSION_COMPACTION, FEATURE_SESSION_CONTROL, FEATURE_SESSION_ENTRIES,
    FEATURE_SHORTCUTS, FEATURE_TOOL_COMPOSITION, FEATURE_TOOL_PROMPT_METADATA,
};
pub use menu::{Menu, MenuItem, MenuItemKind, MenuStatus, State};
pub use output::{
    CommandOutput, ContentPart, ContextContribution, Disposition, ExtensionNotification,
    HookOutput, NotificationLevel, PersistenceMetadata, Placement, RenderOutput, RenderSegment,
    RescanAdvice, RetryAdvice, StatusContribution, Surface, ToolOutput,
};
pub use request::TerminalNotice;
pub use request::{LifecycleNotice, OutputStream, RenderRequest, ResourceOwner, LIFECYCLE_EVENTS};
pub use resources::{
    resource_ref_schema, Operation, FEATURE_OPERATION_DESCRIPTORS, FEATURE_RESOURCE_REFS,
};
pub use services::MessageUpdate;
pub use terminal::{FEATURE_TERMINAL_HANDOFF, FEATURE_TERMINAL_INPUT};

/// Host requests an extension handles at once on API 0.2/0.4 unless
/// [`Extension::max_concurrent_requests`] says otherwise; the host's offer may lower it
/// (SDK policy). It is the host's own default offer, so a pipelining caller is not
/// held back by the extension: the worker pool, not this limit, bounds the threads
/// (one at first, one per CPU for waiting jobs, more only for handlers that block).
/// At 16, an SDK extension on API 0.4 with 64 calls in flight had its host send the
/// requests sixteen at a time and switched threads 2.4 times as often: 59-105k
/// calls/s against 102-129k at 64 (`benches/README.md`).
pub const DEFAULT_MAX_CONCURRENT_REQUESTS: u32 = 64;

/// Bytes read from stdin at a time (SDK policy).
const READ_CHUNK_BYTES: usize = 64 * 1024;

/// How long the SDK's worker and writer threads yield the CPU, checking for their
/// next job or frame, before they sleep: the host's default
/// ([`crate::host::DEFAULT_SPIN_BEFORE_SLEEP`]), for the same reason (a request
/// crosses two hand-offs inside the extension; see `crate::spin`).
const SPIN_BEFORE_SLEEP: Duration = crate::host::DEFAULT_SPIN_BEFORE_SLEEP;

/// Lifecycle notifications that may wait for the lifecycle handler before the reader
/// waits too (SDK policy).
const LIFECYCLE_QUEUE: usize = 64;

/// How long the runtime waits, when it stops, for the handlers still running (now
/// cancelled) to answer (SDK policy).
const SETTLE_TIMEOUT: Duration = Duration::from_millis(500);

/// How long the runtime waits, when it stops, for the writer to deliver the frames
/// already queued (SDK policy; below the host's 2 s exit wait, section 1.8).
const FINAL_FLUSH_TIMEOUT: Duration = Duration::from_secs(1);
