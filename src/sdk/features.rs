//! The optional protocol features an extension enables by name (API 0.2/0.4): pass them
//! to [`super::Extension::feature`]; some are enabled by the builder methods that need
//! them.

/// The feature an extension must enable to send `$/progress` (section 2.6).
pub const FEATURE_REQUEST_PROGRESS: &str = "request_progress";

/// The feature enabled automatically when a lifecycle handler is registered (section 1.10).
pub const FEATURE_LIFECYCLE_EVENTS: &str = "lifecycle_events";

/// The API 0.4 feature enabled automatically when a tool declares prompt metadata
/// (section 1.1).
pub const FEATURE_TOOL_PROMPT_METADATA: &str = "tool_prompt_metadata_v1";

/// The feature of `composer/*` (section 2.19).
pub const FEATURE_COMPOSER: &str = "composer";

/// The feature of `shortcut/register` and `shortcut/trigger` (sections 2.20, 1.11).
pub const FEATURE_SHORTCUTS: &str = "shortcuts";

/// The feature of `session/append_entry`, `set_name` and `set_label` (section 2.21).
pub const FEATURE_SESSION_ENTRIES: &str = "session_entries";

/// The feature of `session/send_message`, `send_user_message` and `message/updated`
/// (sections 2.22, 1.11).
pub const FEATURE_MESSAGE_INJECTION: &str = "message_injection";

/// The feature of `tools/set_active` (section 2.23).
pub const FEATURE_ACTIVE_TOOLS: &str = "active_tools";

/// The API 0.4 feature of `session/wait_for_idle|create|fork|reload|switch`
/// (section 2.21b).
pub const FEATURE_SESSION_CONTROL: &str = "session_control_v1";

/// The API 0.4 feature of `session/compact`; it needs [`FEATURE_SESSION_CONTROL`] too
/// (section 2.21c).
pub const FEATURE_SESSION_COMPACTION: &str = "session_compaction_v1";

/// The conditional feature of child agent sessions (sections 2.13-2.18): offered only
/// to the extensions the embedder lets delegate.
pub const FEATURE_AGENT_SESSIONS: &str = "agent_sessions";

/// Child model selection and `agent/models` (section 2.13); needs
/// [`FEATURE_AGENT_SESSIONS`].
pub const FEATURE_AGENT_MODEL_SELECTION: &str = "agent_model_selection_v1";

/// The API 0.4 feature of `agent/events` (section 2.18); needs
/// [`FEATURE_AGENT_SESSIONS`].
pub const FEATURE_AGENT_SESSION_EVENTS: &str = "agent_session_events_v1";

/// The API 0.4 feature of `agent/stop` and the retained owner (section 2.18); needs
/// [`FEATURE_AGENT_SESSIONS`].
pub const FEATURE_AGENT_SESSION_LIFETIME: &str = "agent_session_lifetime_v1";

/// The API 0.4 feature of `composition/context`, `composition/call` and
/// `composition/store` (section 2.25): offered only when the embedder enables tool
/// composition.
pub const FEATURE_TOOL_COMPOSITION: &str = "tool_composition_v1";
