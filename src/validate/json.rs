//! The JSON forms of the typed results, as the wire and the reference write them. One
//! form per type, shared by every place that prints results (`octet-host --json`,
//! `serve`).

use serde_json::{json, Value};

use super::{
    CommandResult, ContentPart, ContextContribution, Disposition, HookResult, Notification,
    RenderOutput, SessionOperation, StatusContribution, ToolResult,
};

impl ContentPart {
    /// The part as in section 1.2.
    pub fn to_value(&self) -> Value {
        match self {
            ContentPart::Text { text } => json!({"type": "text", "text": text}),
            ContentPart::Image {
                artifact_id,
                mime_type,
                alt,
            } => json!({
                "type": "image", "artifact_id": artifact_id, "mime_type": mime_type, "alt": alt
            }),
            ContentPart::Audio {
                artifact_id,
                mime_type,
                transcript,
            } => json!({
                "type": "audio", "artifact_id": artifact_id, "mime_type": mime_type,
                "transcript": transcript,
            }),
        }
    }
}

impl ToolResult {
    /// `content` parts, `is_error`, `structured_content` and `metadata` (section 1.2).
    pub fn to_value(&self) -> Value {
        json!({
            "content": self.content.iter().map(ContentPart::to_value).collect::<Vec<_>>(),
            "is_error": self.is_error,
            "structured_content": self.structured_content,
            "metadata": self.metadata,
        })
    }
}

impl Notification {
    /// The notification as in section 2.1.
    pub fn to_value(&self) -> Value {
        json!({"level": self.level.as_str(), "title": self.title, "message": self.message})
    }
}

impl ContextContribution {
    /// The contribution as in sections 1.5 and 2.3.
    pub fn to_value(&self) -> Value {
        json!({"label": self.label, "content": self.content, "placement": self.placement.as_str()})
    }
}

impl StatusContribution {
    /// The contribution as in sections 1.6 and 2.4.
    pub fn to_value(&self) -> Value {
        json!({
            "surface": self.surface.as_str(), "text": self.text, "style_role": self.style_role,
            "priority": self.priority,
        })
    }
}

impl CommandResult {
    /// The result as in section 1.3.
    pub fn to_value(&self) -> Value {
        json!({
            "text": self.text,
            "notifications": self.notifications.iter().map(Notification::to_value).collect::<Vec<_>>(),
            "context": self.context.iter().map(ContextContribution::to_value).collect::<Vec<_>>(),
        })
    }
}

impl Disposition {
    /// `{"action": "continue"}` or `{"action": "deny", "reason": ..}` (section 1.4).
    pub fn to_value(&self) -> Value {
        match self {
            Disposition::Continue => json!({"action": "continue"}),
            Disposition::Deny { reason } => json!({"action": "deny", "reason": reason}),
        }
    }
}

impl HookResult {
    /// The result as in sections 1.4 and 1.4b, plus the disposition the host acts on.
    pub fn to_value(&self) -> Value {
        let mut value = json!({
            "hook": self.hook.as_str(),
            "disposition": self.disposition.to_value(),
            "effective_disposition": self.effective_disposition().to_value(),
            "denial_ignored": self.denial_ignored(),
            "context": self.context.iter().map(ContextContribution::to_value).collect::<Vec<_>>(),
            "notifications": self.notifications.iter().map(Notification::to_value).collect::<Vec<_>>(),
            "session_operation": self.session_operation.as_ref().map(|op| match op {
                SessionOperation::Continue => json!({"action": "continue"}),
                SessionOperation::Cancel => json!({"action": "cancel"}),
                SessionOperation::ReplaceCompaction { summary, first_kept } => json!({
                    "action": "replace_compaction",
                    "replacement": {"summary": summary, "first_kept": first_kept},
                }),
            }),
        });
        // A typed API 0.2 hook's advice, under the member the extension answered it in.
        if let Some(advice) = &self.advice {
            let (member, advice) = advice.to_member();
            value[member] = advice;
        }
        value
    }
}

impl RenderOutput {
    /// The result as in section 1.7.
    pub fn to_value(&self) -> Value {
        let segments: Vec<Value> = self
            .segments
            .iter()
            .map(|s| json!({"text": s.text, "style_role": s.style_role}))
            .collect();
        json!({"segments": segments})
    }
}
