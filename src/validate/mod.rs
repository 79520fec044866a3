//! Validation of what an extension answers: the typed results of every host-to-extension
//! method (sections 1.2 to 1.7), the extension-originated contributions that share their
//! shapes (sections 2.1, 2.3, 2.4), and JSON bounds.
//!
//! Every function here is pure: it takes the raw `serde_json::Value` of one result (or
//! params object) plus what the caller knows about that call, and returns a typed value or
//! a [`ResultError`] naming the exact field, such as `content[3].mime_type`. Parsing is by
//! hand rather than through serde derive so the errors can name the field and the rule.
//!
//! One rule holds for every optional member: `null` counts as absent.

pub mod command;
pub mod content;
pub mod context;
pub mod diagnostics;
pub mod error;
mod field;
pub mod hook;
pub mod hook_advice;
pub mod host_driven;
mod json;
pub mod json_bounds;
pub mod menu;
mod names;
pub(crate) mod path;
pub mod render;
pub mod resource;
pub mod schema;
pub mod state;
pub mod status;
pub mod tool_result;

pub use command::{CommandResult, Notification, NotificationLevel};
pub use content::{ArtifactResolver, ContentPart, MediaKind, MediaPolicy, VerifiedArtifact};
pub use context::{ContextContribution, Placement};
pub use error::{Expected, ResultError, ResultErrorKind};
pub use hook::{Disposition, HookName, HookPayload, HookResult, SessionOperation};
pub use hook_advice::{
    BeforePersistencePayload, HookAdvice, MutationKind, MutationState, PersistenceMetadata,
    PostMutationPayload, ProviderRetryPayload, RescanAdvice, RetryAdvice, RetryKind,
    RetryOperation,
};
pub use json_bounds::{Bounds, BoundsError, JsonMeasure};
pub use menu::{ExtensionMenu, ExtensionMenuItem, ExtensionMenuStatus, FallbackCommand};
pub use render::{RenderOutput, RenderSegment};
pub use state::GenericState;
pub use status::StatusContribution;
pub use tool_result::{
    OutputSchema, StructuredValidator, StructuredViolation, ToolResult, ToolResultContext,
};

// The validators the dispatcher runs on every answer: public for the crate's own tests
// and fuzz targets; embedders get their typed results from `host`.
#[doc(hidden)]
pub use command::{command_output, notification};
#[doc(hidden)]
pub use context::{context_collect, context_contribution};
#[doc(hidden)]
pub use hook::{hook_output, hook_run_params};
#[doc(hidden)]
pub use json_bounds::{check_bounds, encoded_len, measure};
#[doc(hidden)]
pub use menu::{fallback_menu, menu, menu_or_fallback};
#[doc(hidden)]
pub use render::render_output;
#[doc(hidden)]
pub use status::{status_collect, status_contribution};
#[doc(hidden)]
pub use tool_result::tool_output;
