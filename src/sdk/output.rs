//! What handlers return: the SDK's own small serializable result types (sections 1.2 to
//! 1.7, 2.1, and section 4's ContextContribution, StatusContribution, ToolRenderSegment,
//! ExtensionNotification and ExtensionMenu).
//!
//! Everything serializes to the exact wire shape except [`ToolOutput`], whose shape
//! depends on the API version and is produced by [`ToolOutput::to_wire`]. Menus live in
//! [`super::menu`].

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::manifest::ApiVersion;
use crate::services::autocomplete::CompletionItem;
pub use crate::validate::{PersistenceMetadata, RescanAdvice, RetryAdvice};

/// One part of an API 0.2/0.4 tool result (section 1.2).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentPart {
    /// `{ "type": "text", "text": string }`.
    Text {
        /// The text.
        text: String,
    },
    /// An image published earlier with `artifact/publish` (needs `artifacts`).
    Image {
        /// The host-issued artifact id.
        artifact_id: String,
        /// The image's MIME type, such as `image/png`.
        mime_type: String,
        /// Alternative text.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        alt: Option<String>,
    },
    /// Audio published earlier with `artifact/publish` (needs `artifacts`).
    Audio {
        /// The host-issued artifact id.
        artifact_id: String,
        /// The audio's MIME type, such as `audio/wav`.
        mime_type: String,
        /// A transcript.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        transcript: Option<String>,
    },
}

impl ContentPart {
    /// A text part.
    pub fn text(text: impl Into<String>) -> ContentPart {
        ContentPart::Text { text: text.into() }
    }
}

/// The result of `tool/call` (section 1.2).
///
/// On API 0.1 it is sent as `{content: string, is_error, metadata?}`, where `content`
/// joins the text parts with newlines and media parts and structured content are
/// dropped. On API 0.2/0.4 it is sent as content parts; because the protocol requires
/// at least one explicit text part, an empty text part is put first when there is none.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ToolOutput {
    /// The ordered content parts.
    pub content: Vec<ContentPart>,
    /// Structured content, validated against the tool's `output_schema` (API 0.2+).
    pub structured_content: Option<Value>,
    /// Non-model-visible metadata.
    pub metadata: Option<Value>,
    /// Whether the host treats the result as a tool error.
    pub is_error: bool,
}

impl ToolOutput {
    /// A successful result of one text part.
    pub fn text(text: impl Into<String>) -> ToolOutput {
        ToolOutput {
            content: vec![ContentPart::text(text)],
            ..ToolOutput::default()
        }
    }

    /// A tool error (`is_error: true`) of one text part, shown to the model.
    pub fn error(text: impl Into<String>) -> ToolOutput {
        ToolOutput {
            is_error: true,
            ..ToolOutput::text(text)
        }
    }

    /// A successful result made of `parts`.
    pub fn parts(parts: Vec<ContentPart>) -> ToolOutput {
        ToolOutput {
            content: parts,
            ..ToolOutput::default()
        }
    }

    /// Appends a content part.
    pub fn with_part(mut self, part: ContentPart) -> ToolOutput {
        self.content.push(part);
        self
    }

    /// Sets `structured_content` (API 0.2+; dropped on API 0.1).
    pub fn with_structured_content(mut self, value: Value) -> ToolOutput {
        self.structured_content = Some(value);
        self
    }

    /// Sets `metadata`.
    pub fn with_metadata(mut self, value: Value) -> ToolOutput {
        self.metadata = Some(value);
        self
    }

    /// Attaches typed `diagnostics` (`metadata.octet_diagnostics_v1`) and appends their
    /// plain-text summary as a text part (the first eight, at most 4 KiB), so the model
    /// sees them too. The records are checked against the profile exactly as the host
    /// checks them; the error names the first field that breaks it. Artifacts and blobs
    /// they name must be ones the host issued to this call's owner: the host refuses
    /// the whole result otherwise.
    ///
    /// ```
    /// use octet_host::sdk::diagnostics::{Diagnostic, Location, Severity};
    /// use octet_host::sdk::ToolOutput;
    ///
    /// let netlist = b"R1 a b 1x\n";
    /// let output = ToolOutput::error("The netlist has an unknown unit.")
    ///     .with_diagnostics(vec![Diagnostic::new(Severity::Error, "netlist.unit", "Unknown unit `x`.")
    ///         .at(Location::in_workspace_file("fixture.cir", netlist, 7, 9))])
    ///     .unwrap();
    /// assert_eq!(output.joined_text(), "The netlist has an unknown unit.\nerror[netlist.unit]: Unknown unit `x`.");
    /// ```
    pub fn with_diagnostics(
        mut self,
        diagnostics: Vec<crate::validate::diagnostics::Diagnostic>,
    ) -> Result<ToolOutput, crate::validate::ResultError> {
        use crate::validate::diagnostics;
        diagnostics::validate(&diagnostics)?;
        let mut metadata = match self.metadata.take() {
            Some(Value::Object(map)) => map,
            Some(_) => {
                return Err(crate::validate::ResultError::new(
                    "metadata",
                    crate::validate::ResultErrorKind::WrongType {
                        expected: crate::validate::Expected::Object,
                    },
                ))
            }
            None => Map::new(),
        };
        metadata.insert(
            diagnostics::METADATA_KEY.into(),
            diagnostics::to_value(&diagnostics),
        );
        self.metadata = Some(Value::Object(metadata));
        let summary = diagnostics::summary(&diagnostics);
        if !summary.is_empty() {
            self.content.push(ContentPart::text(summary));
        }
        Ok(self)
    }

    /// Sets `is_error`.
    pub fn with_is_error(mut self, is_error: bool) -> ToolOutput {
        self.is_error = is_error;
        self
    }

    /// The text parts joined with newlines: the API 0.1 `content` string.
    pub fn joined_text(&self) -> String {
        let texts: Vec<&str> = self
            .content
            .iter()
            .filter_map(|part| match part {
                ContentPart::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        texts.join("\n")
    }

    /// The `result` member for `api_version`.
    pub fn to_wire(&self, api_version: ApiVersion) -> Value {
        let mut result = Map::new();
        // Content parts from API 0.2 on (0.3 requires `content_parts`).
        if api_version.has_v0_2_fields() {
            let mut parts: Vec<Value> = Vec::with_capacity(self.content.len() + 1);
            let has_text = self
                .content
                .iter()
                .any(|p| matches!(p, ContentPart::Text { .. }));
            if !has_text {
                parts.push(to_value(&ContentPart::text("")));
            }
            parts.extend(self.content.iter().map(to_value));
            result.insert("content".into(), Value::Array(parts));
            if let Some(structured) = &self.structured_content {
                result.insert("structured_content".into(), structured.clone());
            }
        } else {
            result.insert("content".into(), Value::String(self.joined_text()));
        }
        result.insert("is_error".into(), Value::Bool(self.is_error));
        match &self.metadata {
            Some(metadata) => {
                result.insert("metadata".into(), metadata.clone());
            }
            // API 0.3's closed result requires `metadata`, which is nullable there.
            None if api_version == ApiVersion::V0_3 => {
                result.insert("metadata".into(), Value::Null);
            }
            None => {}
        }
        Value::Object(result)
    }
}

/// Serializes one of this module's types, which cannot fail (string keys only).
pub(crate) fn to_value<T: Serialize>(value: &T) -> Value {
    serde_json::to_value(value).expect("SDK output types always serialize")
}

/// A notification's severity (section 2.1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NotificationLevel {
    /// `"info"`, the default.
    #[default]
    Info,
    /// `"success"`.
    Success,
    /// `"warning"`.
    Warning,
    /// `"error"`.
    Error,
}

/// A user-visible notification (section 2.1; section 4 ExtensionNotification).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExtensionNotification {
    /// Severity.
    pub level: NotificationLevel,
    /// Short title.
    pub title: String,
    /// Message body.
    pub message: String,
}

impl ExtensionNotification {
    /// A notification of any level.
    pub fn new(
        level: NotificationLevel,
        title: impl Into<String>,
        message: impl Into<String>,
    ) -> ExtensionNotification {
        ExtensionNotification {
            level,
            title: title.into(),
            message: message.into(),
        }
    }

    /// An `info` notification.
    pub fn info(title: impl Into<String>, message: impl Into<String>) -> ExtensionNotification {
        ExtensionNotification::new(NotificationLevel::Info, title, message)
    }

    /// A `success` notification.
    pub fn success(title: impl Into<String>, message: impl Into<String>) -> ExtensionNotification {
        ExtensionNotification::new(NotificationLevel::Success, title, message)
    }

    /// A `warning` notification.
    pub fn warning(title: impl Into<String>, message: impl Into<String>) -> ExtensionNotification {
        ExtensionNotification::new(NotificationLevel::Warning, title, message)
    }

    /// An `error` notification.
    pub fn error(title: impl Into<String>, message: impl Into<String>) -> ExtensionNotification {
        ExtensionNotification::new(NotificationLevel::Error, title, message)
    }
}

/// Where prompt context goes (section 1.5).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Placement {
    /// Before the system prompt.
    SystemPrefix,
    /// After the system prompt.
    SystemSuffix,
    /// Before the user's prompt.
    PromptPrefix,
    /// After the user's prompt (the default).
    #[default]
    PromptSuffix,
}

/// Prompt context (sections 1.3, 1.4, 1.5, 2.3; section 4 ContextContribution).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ContextContribution {
    /// A short label naming the source.
    pub label: String,
    /// The context text.
    pub content: String,
    /// Where it goes.
    #[serde(default)]
    pub placement: Placement,
}

impl ContextContribution {
    /// A contribution with the default placement, `prompt_suffix`.
    pub fn new(label: impl Into<String>, content: impl Into<String>) -> ContextContribution {
        ContextContribution {
            label: label.into(),
            content: content.into(),
            placement: Placement::default(),
        }
    }

    /// Sets the placement.
    pub fn with_placement(mut self, placement: Placement) -> ContextContribution {
        self.placement = placement;
        self
    }
}

/// The result of `command/execute` (section 1.3).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct CommandOutput {
    /// Text shown to the person.
    pub text: String,
    /// Notifications to show.
    pub notifications: Vec<ExtensionNotification>,
    /// Prompt context to add.
    pub context: Vec<ContextContribution>,
}

impl CommandOutput {
    /// A result with `text` and nothing else.
    pub fn text(text: impl Into<String>) -> CommandOutput {
        CommandOutput {
            text: text.into(),
            ..CommandOutput::default()
        }
    }

    /// Appends a notification.
    pub fn with_notification(mut self, notification: ExtensionNotification) -> CommandOutput {
        self.notifications.push(notification);
        self
    }

    /// Appends a context contribution.
    pub fn with_context(mut self, contribution: ContextContribution) -> CommandOutput {
        self.context.push(contribution);
        self
    }
}

/// A hook's decision (section 1.4).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Disposition {
    /// `{ "action": "continue" }`: proceed normally.
    #[default]
    Continue,
    /// `{ "action": "deny", "reason": ... }`: deny the intercepted operation.
    Deny {
        /// Why.
        reason: String,
    },
}

/// The result of `hook/run` (section 1.4).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct HookOutput {
    /// Continue or deny.
    pub disposition: Disposition,
    /// Prompt context to add.
    pub context: Vec<ContextContribution>,
    /// Notifications to show.
    pub notifications: Vec<ExtensionNotification>,
    /// `provider_retry`'s advice (API 0.2), when it gives one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider_retry: Option<RetryAdvice>,
    /// `before_persistence`'s metadata (API 0.2), when it gives any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub persistence_metadata: Option<PersistenceMetadata>,
    /// `post_mutation`'s advice (API 0.2), when it gives one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub post_mutation: Option<RescanAdvice>,
}

impl HookOutput {
    /// Continues with `provider_retry` advice: retry, stop, or retry after waiting
    /// longer (at most 5 s added to a run's retries; advice never shortens a retry).
    pub fn retry_advice(advice: RetryAdvice) -> HookOutput {
        HookOutput {
            provider_retry: Some(advice),
            ..HookOutput::default()
        }
    }

    /// Continues with metadata for `before_persistence` to persist beside the message:
    /// an object of at most 32 namespaces, 16 KiB each and 128 KiB in all (the host
    /// refuses more).
    pub fn persistence_metadata(value: Value, public: bool) -> HookOutput {
        HookOutput {
            persistence_metadata: Some(PersistenceMetadata { value, public }),
            ..HookOutput::default()
        }
    }

    /// Continues with `post_mutation` advice: no rescan, or a rescan of resources the
    /// mutation affected.
    pub fn rescan_advice(advice: RescanAdvice) -> HookOutput {
        HookOutput {
            post_mutation: Some(advice),
            ..HookOutput::default()
        }
    }

    /// Proceed normally, adding nothing.
    pub fn continue_() -> HookOutput {
        HookOutput::default()
    }

    /// Deny the intercepted operation.
    pub fn deny(reason: impl Into<String>) -> HookOutput {
        HookOutput {
            disposition: Disposition::Deny {
                reason: reason.into(),
            },
            ..HookOutput::default()
        }
    }

    /// Appends a context contribution.
    pub fn with_context(mut self, contribution: ContextContribution) -> HookOutput {
        self.context.push(contribution);
        self
    }

    /// Appends a notification.
    pub fn with_notification(mut self, notification: ExtensionNotification) -> HookOutput {
        self.notifications.push(notification);
        self
    }
}

/// A frontend surface (section 1.6).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Surface {
    /// The status line.
    Status,
    /// The header.
    Header,
    /// The footer.
    Footer,
}

/// A status, header or footer contribution (sections 1.6, 2.4; section 4
/// StatusContribution).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StatusContribution {
    /// The surface it is for.
    pub surface: Surface,
    /// The text.
    pub text: String,
    /// A semantic style role such as `extension.hello_world.status`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub style_role: Option<String>,
    /// Ordering among contributions; higher first.
    #[serde(default)]
    pub priority: i64,
}

impl StatusContribution {
    /// A contribution of priority 0 without a style role.
    pub fn new(surface: Surface, text: impl Into<String>) -> StatusContribution {
        StatusContribution {
            surface,
            text: text.into(),
            style_role: None,
            priority: 0,
        }
    }

    /// Sets the style role.
    pub fn with_style_role(mut self, role: impl Into<String>) -> StatusContribution {
        self.style_role = Some(role.into());
        self
    }

    /// Sets the priority.
    pub fn with_priority(mut self, priority: i64) -> StatusContribution {
        self.priority = priority;
        self
    }
}

/// One styled run of renderer output (section 1.7; section 4 ToolRenderSegment).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RenderSegment {
    /// The text.
    pub text: String,
    /// Its semantic style role; `null` for unstyled text.
    pub style_role: Option<String>,
}

impl RenderSegment {
    /// Unstyled text.
    pub fn plain(text: impl Into<String>) -> RenderSegment {
        RenderSegment {
            text: text.into(),
            style_role: None,
        }
    }

    /// Text with a style role.
    pub fn styled(text: impl Into<String>, role: impl Into<String>) -> RenderSegment {
        RenderSegment {
            text: text.into(),
            style_role: Some(role.into()),
        }
    }
}

/// The result of `tool/render` (section 1.7).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RenderOutput {
    /// The styled segments, in order.
    pub segments: Vec<RenderSegment>,
}

impl RenderOutput {
    /// Output made of `segments`.
    pub fn new(segments: Vec<RenderSegment>) -> RenderOutput {
        RenderOutput { segments }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tool_output_on_api_0_1_is_one_string() {
        let out = ToolOutput::text("a")
            .with_part(ContentPart::Image {
                artifact_id: "x".into(),
                mime_type: "image/png".into(),
                alt: None,
            })
            .with_part(ContentPart::text("b"))
            .with_structured_content(json!({"k": 1}));
        assert_eq!(
            out.to_wire(ApiVersion::V0_1),
            json!({"content": "a\nb", "is_error": false})
        );
        let err = ToolOutput::error("boom").with_metadata(json!({"m": true}));
        assert_eq!(
            err.to_wire(ApiVersion::V0_1),
            json!({"content": "boom", "is_error": true, "metadata": {"m": true}})
        );
    }

    #[test]
    fn tool_output_on_api_0_2_and_0_4_is_content_parts() {
        let out = ToolOutput::text("Found 3 sources.")
            .with_part(ContentPart::Image {
                artifact_id: "artifact-opaque-id".into(),
                mime_type: "image/png".into(),
                alt: Some("Search result preview".into()),
            })
            .with_structured_content(json!({"sources": []}))
            .with_metadata(json!({"cache": "miss"}));
        let expected = json!({
            "content": [
                {"type": "text", "text": "Found 3 sources."},
                {"type": "image", "artifact_id": "artifact-opaque-id",
                 "mime_type": "image/png", "alt": "Search result preview"}
            ],
            "structured_content": {"sources": []},
            "is_error": false,
            "metadata": {"cache": "miss"}
        });
        assert_eq!(out.to_wire(ApiVersion::V0_2), expected);
        assert_eq!(out.to_wire(ApiVersion::V0_4), expected);
    }

    #[test]
    fn typed_hook_advice_is_what_the_host_reads() {
        use crate::validate::{hook_output, HookAdvice, HookName};
        let cases = [
            (
                HookName::ProviderRetry,
                HookOutput::retry_advice(RetryAdvice::Delay {
                    additional_delay_ms: 250,
                }),
            ),
            (
                HookName::BeforePersistence,
                HookOutput::persistence_metadata(json!({"ns": {"k": 1}}), false),
            ),
            (
                HookName::PostMutation,
                HookOutput::rescan_advice(RescanAdvice::NoRescan),
            ),
        ];
        for (hook, output) in cases {
            let wire = to_value(&output);
            let read = hook_output(&wire, hook).unwrap();
            let advice = read.advice.expect("the advice arrives");
            assert_eq!(advice.hook(), hook);
            match (&advice, &output) {
                (
                    HookAdvice::ProviderRetry(a),
                    HookOutput {
                        provider_retry: Some(b),
                        ..
                    },
                ) => {
                    assert_eq!(a, b)
                }
                (
                    HookAdvice::Persistence(a),
                    HookOutput {
                        persistence_metadata: Some(b),
                        ..
                    },
                ) => {
                    assert_eq!(a, b)
                }
                (
                    HookAdvice::PostMutation(a),
                    HookOutput {
                        post_mutation: Some(b),
                        ..
                    },
                ) => {
                    assert_eq!(a, b)
                }
                other => panic!("{other:?}"),
            }
        }
        // Hooks without advice serialize as before.
        assert!(to_value(&HookOutput::continue_())
            .get("provider_retry")
            .is_none());
    }

    #[test]
    fn api_0_3_results_always_carry_metadata() {
        let out = ToolOutput::text("done");
        assert_eq!(
            out.to_wire(ApiVersion::V0_3),
            json!({"content": [{"type": "text", "text": "done"}], "is_error": false,
                   "metadata": null})
        );
        assert!(out.to_wire(ApiVersion::V0_2).get("metadata").is_none());
    }

    #[test]
    fn content_parts_always_carry_a_text_part() {
        let audio = ToolOutput::parts(vec![ContentPart::Audio {
            artifact_id: "a".into(),
            mime_type: "audio/wav".into(),
            transcript: None,
        }]);
        assert_eq!(
            audio.to_wire(ApiVersion::V0_2),
            json!({"content": [
                {"type": "text", "text": ""},
                {"type": "audio", "artifact_id": "a", "mime_type": "audio/wav"}
            ], "is_error": false})
        );
        assert_eq!(
            ToolOutput::default().to_wire(ApiVersion::V0_4),
            json!({"content": [{"type": "text", "text": ""}], "is_error": false})
        );
    }

    #[test]
    fn command_and_hook_outputs_match_sections_1_3_and_1_4() {
        let out = CommandOutput::text("preview").with_notification(ExtensionNotification::info(
            "Read-only checkpoint",
            "No commit or filesystem mutation was performed.",
        ));
        assert_eq!(
            to_value(&out),
            json!({"text": "preview", "notifications": [{"level": "info",
                "title": "Read-only checkpoint",
                "message": "No commit or filesystem mutation was performed."}], "context": []})
        );
        let hook = HookOutput::continue_().with_context(
            ContextContribution::new("l", "c").with_placement(Placement::SystemSuffix),
        );
        assert_eq!(
            to_value(&hook),
            json!({"disposition": {"action": "continue"},
                "context": [{"label": "l", "content": "c", "placement": "system_suffix"}],
                "notifications": []})
        );
        assert_eq!(
            to_value(&HookOutput::deny("no")),
            json!({"disposition": {"action": "deny", "reason": "no"}, "context": [], "notifications": []})
        );
    }

    #[test]
    fn status_render_and_context_shapes() {
        let status = StatusContribution::new(Surface::Status, "hello")
            .with_style_role("extension.hello_world.status");
        assert_eq!(
            to_value(&status),
            json!({"surface": "status", "text": "hello",
                "style_role": "extension.hello_world.status", "priority": 0})
        );
        let render = RenderOutput::new(vec![
            RenderSegment::styled("git · clean", "extension.git_tools.clean"),
            RenderSegment::plain("\n"),
        ]);
        assert_eq!(
            to_value(&render),
            json!({"segments": [
                {"text": "git · clean", "style_role": "extension.git_tools.clean"},
                {"text": "\n", "style_role": null}
            ]})
        );
        assert_eq!(
            to_value(&ContextContribution::new("a", "b")),
            json!({"label": "a", "content": "b", "placement": "prompt_suffix"})
        );
    }
}

/// A reply to one query: the exact text before the cursor the items replace, and the
/// items (none leaves the query to the next chain).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Completions {
    /// The exact suffix of the text before the cursor.
    pub prefix: String,
    /// At most 32 items.
    pub items: Vec<CompletionItem>,
}
