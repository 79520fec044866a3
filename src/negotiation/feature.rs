//! Feature names of the feature-negotiated wire (API 0.2 and 0.4), the set of features a
//! generation negotiated, and the lifecycle events an extension may subscribe to
//! (sections 1.1, 1.10 and 2.x).

use std::fmt;

use serde::{Serialize, Serializer};

use crate::manifest::ApiVersion;

/// One protocol feature name of the feature-negotiated wire.
///
/// The variants are every feature name the reference mentions. Which API versions may
/// carry a feature is [`Feature::available_on`]; which other features negotiating it needs
/// is [`Feature::requires`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Feature {
    /// `request_cancellation`: required; `$/cancelRequest` (section 1.9).
    RequestCancellation,
    /// `content_parts`: required; structured tool results (section 1.2).
    ContentParts,
    /// `request_progress`: `$/progress` (section 2.6).
    RequestProgress,
    /// `artifacts`: `artifact/publish` and media content parts (sections 1.2, 2.8).
    Artifacts,
    /// `lifecycle_events`: session, turn and tool lifecycle notifications (section 1.10).
    LifecycleEvents,
    /// `policy_intents`: `policy/evaluate` (section 2.9).
    PolicyIntents,
    /// `dynamic_tools`: `tools/register` and `tools/unregister` (sections 2.11, 2.12).
    DynamicTools,
    /// `runtime_commands`: the initialize command list is authoritative (section 1.1).
    RuntimeCommands,
    /// `approvals`: single-use approval tokens; conditional, requires `policy_intents`
    /// (sections 1.1, 2.9).
    Approvals,
    /// `secrets`: `secret/get`; conditional on a broker and a non-empty allowlist
    /// (sections 1.1, 2.10).
    Secrets,
    /// `provider_credentials`: `provider/credentials`; only for manifests that declare
    /// it (section 1.1).
    ProviderCredentials,
    /// `progress_decoration`: the `decoration` progress event (section 2.6).
    ProgressDecoration,
    /// `tool_prompt_metadata_v1`: `prompt_snippet` and `prompt_guidelines` on tool
    /// definitions (section 1.1, API 0.4).
    ToolPromptMetadataV1,
    /// `tool_composition_v1`: composition declarations and `composition/*` requests
    /// (section 2.25, API 0.4).
    ToolCompositionV1,
    /// `session_control_v1`: active-session control (section 2.21b, API 0.4).
    SessionControlV1,
    /// `session_compaction_v1`: `session/compact`; requires `session_control_v1`
    /// (section 2.21c, API 0.4).
    SessionCompactionV1,
    /// `agent_sessions`: the conditional child-session service, `agent/*` (section 2.13).
    /// The reference bundles it: a host offering it also offers
    /// `agent_model_selection_v1`, and on API 0.4 `agent_session_events_v1` and
    /// `agent_session_lifetime_v1`.
    AgentSessions,
    /// `agent_model_selection_v1`: child model selection; requires `agent_sessions`
    /// (section 1.1).
    AgentModelSelectionV1,
    /// `agent_session_events_v1`: `agent/events`; requires `agent_sessions`
    /// (section 2.18, API 0.4).
    AgentSessionEventsV1,
    /// `agent_session_lifetime_v1`: retained owners and `agent/stop`; requires
    /// `agent_sessions` (section 2.18, API 0.4).
    AgentSessionLifetimeV1,
    /// `session_entries`: `session/append_entry`, `session/set_name`,
    /// `session/set_label` and the API 0.4 model-turn hooks (sections 1.4b, 2.21).
    SessionEntries,
    /// `composer`: `composer/get`, `composer/set`, `composer/insert` (section 2.19).
    Composer,
    /// `shortcuts`: `shortcut/register` and `shortcut/trigger` (sections 1.11, 2.20).
    Shortcuts,
    /// `message_injection`: `session/send_message`, `session/send_user_message`
    /// (section 2.22).
    MessageInjection,
    /// `active_tools`: `tools/set_active` (section 2.23).
    ActiveTools,
    /// `terminal_handoff`: `terminal/acquire`, `terminal/release` (section 2.24).
    TerminalHandoff,
    /// `terminal_input`: observe-only `ui/terminal-input` and `ui/resize` notifications
    /// (section 2.24).
    TerminalInput,
    /// `autocomplete`: host-mediated autocomplete (section 2.24b).
    Autocomplete,
    /// `autocomplete_edit_v1`: autocomplete edit fields; requires `autocomplete`
    /// (section 2.24b, API 0.4).
    AutocompleteEditV1,
    /// `remote_ui`: the remote custom editor checkpoint of `composer/set`
    /// (section 2.19, "API 0.4 negotiated remote_ui").
    RemoteUi,
    /// `resource_refs_v1`: extension-local native resource values (section 2.26, API 0.4).
    ResourceRefsV1,
    /// `operation_descriptors_v1`: a tool definition's `operation` descriptor
    /// (section 2.26, API 0.4).
    OperationDescriptorsV1,
    /// `bulk_objects_v1`: immutable bulk objects; offered only with configured bulk
    /// storage (section 2.27, API 0.4).
    BulkObjectsV1,
}

impl Feature {
    /// Every feature, in declaration order (the order of [`FeatureSet::iter`]).
    pub const ALL: [Feature; 33] = [
        Feature::RequestCancellation,
        Feature::ContentParts,
        Feature::RequestProgress,
        Feature::Artifacts,
        Feature::LifecycleEvents,
        Feature::PolicyIntents,
        Feature::DynamicTools,
        Feature::RuntimeCommands,
        Feature::Approvals,
        Feature::Secrets,
        Feature::ProviderCredentials,
        Feature::ProgressDecoration,
        Feature::ToolPromptMetadataV1,
        Feature::ToolCompositionV1,
        Feature::SessionControlV1,
        Feature::SessionCompactionV1,
        Feature::AgentSessions,
        Feature::AgentModelSelectionV1,
        Feature::AgentSessionEventsV1,
        Feature::AgentSessionLifetimeV1,
        Feature::SessionEntries,
        Feature::Composer,
        Feature::Shortcuts,
        Feature::MessageInjection,
        Feature::ActiveTools,
        Feature::TerminalHandoff,
        Feature::TerminalInput,
        Feature::Autocomplete,
        Feature::AutocompleteEditV1,
        Feature::RemoteUi,
        Feature::ResourceRefsV1,
        Feature::OperationDescriptorsV1,
        Feature::BulkObjectsV1,
    ];

    /// The features every feature-negotiated initialize requires, in the order the
    /// request lists them (section 1.1 `required_features`).
    pub const REQUIRED: [Feature; 2] = [Feature::RequestCancellation, Feature::ContentParts];

    /// The optional feature whose negotiation the reference requires before an
    /// extension may send the request `method` on API 0.2 or 0.4, for the methods
    /// this host does not serve through a bound service: such a request is refused
    /// with `unsupported_feature` (section 3), not as an unknown method.
    pub fn of_request(method: &str) -> Option<Feature> {
        // The methods of bound services (session control, the terminal, autocomplete,
        // ...) are rows of the method table, refused by its own admission.
        Some(match method {
            "composition/context" | "composition/call" | "composition/store" => {
                Feature::ToolCompositionV1
            }
            "resource/register" | "resource/release" => Feature::ResourceRefsV1,
            "bulk/write" | "bulk/commit" | "bulk/read" | "bulk/release" => Feature::BulkObjectsV1,
            _ if method.starts_with("agent/") => Feature::AgentSessions,
            _ => return None,
        })
    }

    /// The wire name, such as `"request_cancellation"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Feature::RequestCancellation => "request_cancellation",
            Feature::ContentParts => "content_parts",
            Feature::RequestProgress => "request_progress",
            Feature::Artifacts => "artifacts",
            Feature::LifecycleEvents => "lifecycle_events",
            Feature::PolicyIntents => "policy_intents",
            Feature::DynamicTools => "dynamic_tools",
            Feature::RuntimeCommands => "runtime_commands",
            Feature::Approvals => "approvals",
            Feature::Secrets => "secrets",
            Feature::ProviderCredentials => "provider_credentials",
            Feature::ProgressDecoration => "progress_decoration",
            Feature::ToolPromptMetadataV1 => "tool_prompt_metadata_v1",
            Feature::ToolCompositionV1 => "tool_composition_v1",
            Feature::SessionControlV1 => "session_control_v1",
            Feature::SessionCompactionV1 => "session_compaction_v1",
            Feature::AgentSessions => "agent_sessions",
            Feature::AgentModelSelectionV1 => "agent_model_selection_v1",
            Feature::AgentSessionEventsV1 => "agent_session_events_v1",
            Feature::AgentSessionLifetimeV1 => "agent_session_lifetime_v1",
            Feature::SessionEntries => "session_entries",
            Feature::Composer => "composer",
            Feature::Shortcuts => "shortcuts",
            Feature::MessageInjection => "message_injection",
            Feature::ActiveTools => "active_tools",
            Feature::TerminalHandoff => "terminal_handoff",
            Feature::TerminalInput => "terminal_input",
            Feature::Autocomplete => "autocomplete",
            Feature::AutocompleteEditV1 => "autocomplete_edit_v1",
            Feature::RemoteUi => "remote_ui",
            Feature::ResourceRefsV1 => "resource_refs_v1",
            Feature::OperationDescriptorsV1 => "operation_descriptors_v1",
            Feature::BulkObjectsV1 => "bulk_objects_v1",
        }
    }

    /// Parses a wire name exactly (case-sensitive, no trimming).
    pub fn parse(text: &str) -> Option<Feature> {
        Feature::ALL.into_iter().find(|f| f.as_str() == text)
    }

    /// True for the two features every feature-negotiated initialize requires.
    pub fn is_required(self) -> bool {
        Feature::REQUIRED.contains(&self)
    }

    /// True for features the reference makes API 0.4 only ("API 0.1, 0.2 and canonical
    /// 0.3 cannot select it", "unavailable in API 0.2/0.3", or a section titled API 0.4).
    pub fn is_api_0_4_only(self) -> bool {
        matches!(
            self,
            Feature::ToolPromptMetadataV1
                | Feature::ToolCompositionV1
                | Feature::SessionControlV1
                | Feature::SessionCompactionV1
                | Feature::AgentSessionEventsV1
                | Feature::AgentSessionLifetimeV1
                | Feature::AutocompleteEditV1
                | Feature::RemoteUi
                | Feature::ResourceRefsV1
                | Feature::OperationDescriptorsV1
                | Feature::BulkObjectsV1
        )
    }

    /// Whether an initialize for `api` may carry this feature at all. API 0.1 has no
    /// features and API 0.3 negotiates capabilities on its own wire, so only 0.2 and
    /// 0.4 carry any.
    pub fn available_on(self, api: ApiVersion) -> bool {
        match api {
            ApiVersion::V0_2 => !self.is_api_0_4_only(),
            ApiVersion::V0_4 => true,
            ApiVersion::V0_1 | ApiVersion::V0_3 => false,
        }
    }

    /// The features that must also be negotiated when this one is (section 1.1 and the
    /// feature sections it points to).
    pub fn requires(self) -> &'static [Feature] {
        match self {
            Feature::Approvals => &[Feature::PolicyIntents],
            Feature::SessionCompactionV1 => &[Feature::SessionControlV1],
            Feature::AgentModelSelectionV1
            | Feature::AgentSessionEventsV1
            | Feature::AgentSessionLifetimeV1 => &[Feature::AgentSessions],
            Feature::AutocompleteEditV1 => &[Feature::Autocomplete],
            Feature::ProgressDecoration => &[Feature::RequestProgress],
            _ => &[],
        }
    }

    fn bit(self) -> u64 {
        1 << (self as u32)
    }
}

impl fmt::Display for Feature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Feature {
    /// Serializes as the wire name.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// A set of features, such as the ones a generation negotiated.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct FeatureSet {
    bits: u64,
}

impl FeatureSet {
    /// The empty set.
    pub fn new() -> FeatureSet {
        FeatureSet::default()
    }

    /// Whether `feature` is in the set.
    pub fn contains(&self, feature: Feature) -> bool {
        self.bits & feature.bit() != 0
    }

    /// Adds `feature`; returns false when it was already present.
    pub fn insert(&mut self, feature: Feature) -> bool {
        let fresh = !self.contains(feature);
        self.bits |= feature.bit();
        fresh
    }

    /// Removes `feature`; returns false when it was absent.
    pub fn remove(&mut self, feature: Feature) -> bool {
        let present = self.contains(feature);
        self.bits &= !feature.bit();
        present
    }

    /// How many features the set holds.
    pub fn len(&self) -> usize {
        self.bits.count_ones() as usize
    }

    /// True when the set holds no feature.
    pub fn is_empty(&self) -> bool {
        self.bits == 0
    }

    /// The features in declaration order of [`Feature`].
    pub fn iter(&self) -> impl Iterator<Item = Feature> + '_ {
        Feature::ALL.into_iter().filter(|f| self.contains(*f))
    }
}

impl Serialize for FeatureSet {
    /// Serializes as an array of wire names in declaration order.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

impl FromIterator<Feature> for FeatureSet {
    fn from_iter<I: IntoIterator<Item = Feature>>(iter: I) -> FeatureSet {
        let mut set = FeatureSet::new();
        for feature in iter {
            set.insert(feature);
        }
        set
    }
}

/// A lifecycle notification an extension may subscribe to (section 1.10).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LifecycleEvent {
    /// `session/started`.
    SessionStarted,
    /// `session/settled`.
    SessionSettled,
    /// `turn/started`.
    TurnStarted,
    /// `turn/settled`.
    TurnSettled,
    /// `tool/started`.
    ToolStarted,
    /// `tool/settled`.
    ToolSettled,
}

impl LifecycleEvent {
    /// All six events, in the order of the reference's subscription example.
    pub const ALL: [LifecycleEvent; 6] = [
        LifecycleEvent::SessionStarted,
        LifecycleEvent::SessionSettled,
        LifecycleEvent::TurnStarted,
        LifecycleEvent::TurnSettled,
        LifecycleEvent::ToolStarted,
        LifecycleEvent::ToolSettled,
    ];

    /// The notification method, such as `"turn/settled"`.
    pub fn method(self) -> &'static str {
        match self {
            LifecycleEvent::SessionStarted => "session/started",
            LifecycleEvent::SessionSettled => "session/settled",
            LifecycleEvent::TurnStarted => "turn/started",
            LifecycleEvent::TurnSettled => "turn/settled",
            LifecycleEvent::ToolStarted => "tool/started",
            LifecycleEvent::ToolSettled => "tool/settled",
        }
    }

    /// Parses a method name exactly.
    pub fn parse(text: &str) -> Option<LifecycleEvent> {
        LifecycleEvent::ALL.into_iter().find(|e| e.method() == text)
    }
}

impl fmt::Display for LifecycleEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.method())
    }
}

impl Serialize for LifecycleEvent {
    /// Serializes as the method name.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.method())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_feature_round_trips_and_has_a_distinct_bit() {
        let mut set = FeatureSet::new();
        for feature in Feature::ALL {
            assert_eq!(Feature::parse(feature.as_str()), Some(feature));
            assert!(set.insert(feature), "{feature} shares a bit");
        }
        assert_eq!(set.len(), Feature::ALL.len());
        assert!(set.iter().eq(Feature::ALL));
    }

    #[test]
    fn declaration_order_matches_all() {
        for (i, feature) in Feature::ALL.into_iter().enumerate() {
            assert_eq!(feature as usize, i);
        }
    }
}
