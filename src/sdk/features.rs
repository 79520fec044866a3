//! The optional protocol features an extension enables by name (API 0.2/0.4): pass them
//! to [`super::Extension::feature`]; some are enabled by the builder methods that need
//! them.
//!
//! Each name is the negotiation table's own ([`Feature::as_str`]), so the SDK and the
//! host cannot spell a feature differently.

use crate::negotiation::Feature;

/// The feature an extension must enable to send `$/progress` (section 2.6).
pub const FEATURE_REQUEST_PROGRESS: &str = Feature::RequestProgress.as_str();

/// The feature enabled automatically when a lifecycle handler is registered (section 1.10).
pub const FEATURE_LIFECYCLE_EVENTS: &str = Feature::LifecycleEvents.as_str();

/// The API 0.4 feature enabled automatically when a tool declares prompt metadata
/// (section 1.1).
pub const FEATURE_TOOL_PROMPT_METADATA: &str = Feature::ToolPromptMetadataV1.as_str();

/// The feature of `composer/*` (section 2.19).
pub const FEATURE_COMPOSER: &str = Feature::Composer.as_str();

/// The feature of `shortcut/register` and `shortcut/trigger` (sections 2.20, 1.11).
pub const FEATURE_SHORTCUTS: &str = Feature::Shortcuts.as_str();

/// The feature of `session/append_entry`, `set_name` and `set_label` (section 2.21).
pub const FEATURE_SESSION_ENTRIES: &str = Feature::SessionEntries.as_str();

/// The feature of `session/send_message`, `send_user_message` and `message/updated`
/// (sections 2.22, 1.11).
pub const FEATURE_MESSAGE_INJECTION: &str = Feature::MessageInjection.as_str();

/// The feature of `tools/set_active` (section 2.23).
pub const FEATURE_ACTIVE_TOOLS: &str = Feature::ActiveTools.as_str();

/// The API 0.4 feature of `session/wait_for_idle|create|fork|reload|switch`
/// (section 2.21b).
pub const FEATURE_SESSION_CONTROL: &str = Feature::SessionControlV1.as_str();

/// The API 0.4 feature of `session/compact`; it needs [`FEATURE_SESSION_CONTROL`] too
/// (section 2.21c).
pub const FEATURE_SESSION_COMPACTION: &str = Feature::SessionCompactionV1.as_str();

/// The conditional feature of child agent sessions (sections 2.13-2.18): offered only
/// to the extensions the embedder lets delegate.
pub const FEATURE_AGENT_SESSIONS: &str = Feature::AgentSessions.as_str();

/// Child model selection and `agent/models` (section 2.13); needs
/// [`FEATURE_AGENT_SESSIONS`].
pub const FEATURE_AGENT_MODEL_SELECTION: &str = Feature::AgentModelSelectionV1.as_str();

/// The API 0.4 feature of `agent/events` (section 2.18); needs
/// [`FEATURE_AGENT_SESSIONS`].
pub const FEATURE_AGENT_SESSION_EVENTS: &str = Feature::AgentSessionEventsV1.as_str();

/// The API 0.4 feature of `agent/stop` and the retained owner (section 2.18); needs
/// [`FEATURE_AGENT_SESSIONS`].
pub const FEATURE_AGENT_SESSION_LIFETIME: &str = Feature::AgentSessionLifetimeV1.as_str();

/// The API 0.4 feature of `composition/context`, `composition/call` and
/// `composition/store` (section 2.25): offered only when the embedder enables tool
/// composition.
pub const FEATURE_TOOL_COMPOSITION: &str = Feature::ToolCompositionV1.as_str();
