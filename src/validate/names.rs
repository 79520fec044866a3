//! The vocabulary results and their errors share: hook names, media kinds and output
//! schema violations. A leaf: the validators and [`super::error`] both build on it.

use std::fmt;

/// A lifecycle hook a manifest can declare (SUPPLEMENT "Manifest", `[contributes].hooks`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum HookName {
    /// Before a prompt is sent (legacy; may deny).
    BeforePrompt,
    /// After a successful, complete assistant response (legacy).
    AfterResponse,
    /// Before a tool call runs (legacy; may deny).
    BeforeToolCall,
    /// After a tool call settled (legacy).
    AfterToolCall,
    /// Retry advice for a provider failure (API 0.2).
    ProviderRetry,
    /// Before an entry is persisted (API 0.2).
    BeforePersistence,
    /// After a workspace mutation (API 0.2).
    PostMutation,
    /// At the start of one model turn (API 0.4, `session_entries`).
    ModelTurnStart,
    /// At the end of one model turn (API 0.4, `session_entries`).
    ModelTurnEnd,
    /// Before a prepared local compaction (API 0.4, `session_entries`): may cancel it or
    /// replace its summary.
    SessionBeforeCompact,
    /// After a compaction's durable entry committed (API 0.4, `session_entries`).
    SessionCompact,
}

impl HookName {
    /// Every hook, legacy first.
    pub const ALL: [HookName; 11] = [
        HookName::BeforePrompt,
        HookName::AfterResponse,
        HookName::BeforeToolCall,
        HookName::AfterToolCall,
        HookName::ProviderRetry,
        HookName::BeforePersistence,
        HookName::PostMutation,
        HookName::ModelTurnStart,
        HookName::ModelTurnEnd,
        HookName::SessionBeforeCompact,
        HookName::SessionCompact,
    ];

    /// The wire name, such as `"before_prompt"`.
    pub fn as_str(self) -> &'static str {
        match self {
            HookName::BeforePrompt => "before_prompt",
            HookName::AfterResponse => "after_response",
            HookName::BeforeToolCall => "before_tool_call",
            HookName::AfterToolCall => "after_tool_call",
            HookName::ProviderRetry => "provider_retry",
            HookName::BeforePersistence => "before_persistence",
            HookName::PostMutation => "post_mutation",
            HookName::ModelTurnStart => "model_turn_start",
            HookName::ModelTurnEnd => "model_turn_end",
            HookName::SessionBeforeCompact => "session_before_compact",
            HookName::SessionCompact => "session_compact",
        }
    }

    /// Parses a wire name exactly.
    pub fn parse(text: &str) -> Option<HookName> {
        HookName::ALL.into_iter().find(|hook| hook.as_str() == text)
    }

    /// True for the hooks whose deny stops the intercepted operation.
    pub fn honors_deny(self) -> bool {
        matches!(self, HookName::BeforePrompt | HookName::BeforeToolCall)
    }

    /// True for the API 0.4 model-turn observations of section 1.4b.
    pub fn is_model_turn(self) -> bool {
        matches!(self, HookName::ModelTurnStart | HookName::ModelTurnEnd)
    }

    /// True for the compaction callbacks of sections 1.4b and 1.11.
    pub fn is_compaction(self) -> bool {
        matches!(
            self,
            HookName::SessionBeforeCompact | HookName::SessionCompact
        )
    }

    /// True for the awaited session-operation hooks (section 1.4b): the model-turn
    /// observations and the compaction callbacks. They go only to API 0.4 extensions
    /// that negotiated `session_entries`, each invocation with a private grant.
    pub fn is_session_operation(self) -> bool {
        self.is_model_turn() || self.is_compaction()
    }
}

impl fmt::Display for HookName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The kind of a media part.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MediaKind {
    /// `image` parts, `image/*` MIME types.
    Image,
    /// `audio` parts, `audio/*` MIME types.
    Audio,
}

impl MediaKind {
    /// `"image"` or `"audio"`: the part type and the MIME top-level type.
    pub fn as_str(self) -> &'static str {
        match self {
            MediaKind::Image => "image",
            MediaKind::Audio => "audio",
        }
    }
}

impl fmt::Display for MediaKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why `structured_content` does not satisfy an output schema, as reported by a
/// [`StructuredValidator`](super::StructuredValidator).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StructuredViolation {
    /// Where inside `structured_content` the violation is (validator-defined notation;
    /// empty for the whole value).
    pub path: String,
    /// The schema rule that failed, as a sentence.
    pub message: String,
}

impl fmt::Display for StructuredViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "at {}: {}", self.path, self.message)
        }
    }
}
