//! What handlers receive besides their typed arguments: the `tool/render` request,
//! lifecycle observations and the resource owner of a request context.

pub use crate::model::progress::OutputStream;
pub use crate::services::ResourceOwner;
use serde::Deserialize;
use serde_json::Value;

/// The params of `tool/render` (section 1.7), without `context`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct RenderRequest {
    /// The tool whose call is rendered.
    pub name: String,
    /// The call's arguments.
    #[serde(default)]
    pub arguments: Value,
    /// The call's output: a string on API 0.1; the host may send content parts on
    /// API 0.2/0.4. Use [`RenderRequest::output_text`] to read it as text.
    #[serde(default)]
    pub output: Value,
    /// Whether the call failed.
    #[serde(default)]
    pub is_error: bool,
}

impl RenderRequest {
    /// The output as text: the string itself, or the text parts of a content-part
    /// array joined with newlines.
    pub fn output_text(&self) -> String {
        match &self.output {
            Value::String(text) => text.clone(),
            Value::Array(parts) => parts
                .iter()
                .filter(|p| p.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n"),
            Value::Object(map) => match map.get("content") {
                Some(content) => RenderRequest {
                    output: content.clone(),
                    ..self.clone()
                }
                .output_text(),
                None => String::new(),
            },
            _ => String::new(),
        }
    }
}

/// One lifecycle notification the extension subscribed to (section 1.10).
#[derive(Clone, Debug, PartialEq)]
pub struct LifecycleNotice {
    /// The method, such as `turn/settled`.
    pub method: String,
    /// Its params: identifiers, and for settled events `outcome`, `duration_ms` and
    /// `reason`.
    pub params: Value,
}

/// The six lifecycle notifications of section 1.10.
pub const LIFECYCLE_EVENTS: [&str; 6] = [
    "session/started",
    "session/settled",
    "turn/started",
    "turn/settled",
    "tool/started",
    "tool/settled",
];

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn render_output_text_reads_every_shape() {
        let mut request: RenderRequest = serde_json::from_value(json!({
            "name": "git_status", "arguments": {}, "output": "a\nb", "is_error": false
        }))
        .unwrap();
        assert_eq!(request.output_text(), "a\nb");
        request.output = json!([{"type": "text", "text": "x"}, {"type": "image"},
            {"type": "text", "text": "y"}]);
        assert_eq!(request.output_text(), "x\ny");
        request.output = json!({"content": [{"type": "text", "text": "z"}], "is_error": false});
        assert_eq!(request.output_text(), "z");
    }
}
