//! What handlers receive besides their typed arguments: the `tool/render` request,
//! lifecycle observations, `message/updated` batches and the resource owner of a
//! request context.

pub use crate::model::progress::OutputStream;
pub use crate::services::ResourceOwner;
use serde::Deserialize;
use serde_json::Value;

use crate::limits::MAX_MESSAGE_BATCH_DELTAS;
use crate::services::bound::{check_message_id, Refusal, ServiceRefusal};

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

/// One `message/updated` batch (section 1.11): the coalesced text of `deltas` deltas.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MessageUpdate {
    /// The message the text belongs to.
    pub message_id: String,
    /// The coalesced text, in order.
    pub delta: String,
    /// How many deltas it represents.
    pub deltas: u64,
}

impl MessageUpdate {
    /// Reads a batch: `deltas` is a count beside the coalesced `delta`, or an SDK-shaped
    /// array of strings (`deltas`, or its alias `updates`) whose concatenation is the
    /// text. An array of more than [`MAX_MESSAGE_BATCH_DELTAS`] is refused as
    /// `bounds_exceeded` and nothing is delivered.
    pub fn parse(params: &Value) -> Result<MessageUpdate, ServiceRefusal> {
        let invalid = |what: &str| Refusal::InvalidRequest.because(what.to_string());
        let Value::Object(map) = params else {
            return Err(invalid("message/updated params must be an object"));
        };
        let message_id = map
            .get("message_id")
            .and_then(Value::as_str)
            .ok_or_else(|| invalid("message_id must be a string"))?;
        check_message_id(message_id)?;
        let message_id = message_id.to_string();
        let array = map
            .get("deltas")
            .filter(|d| d.is_array())
            .or_else(|| map.get("updates"));
        if let Some(Value::Array(items)) = array {
            if items.len() > MAX_MESSAGE_BATCH_DELTAS {
                return Err(Refusal::BoundsExceeded.because(format!(
                    "{} deltas in one batch; at most {MAX_MESSAGE_BATCH_DELTAS}",
                    items.len()
                )));
            }
            let mut delta = String::new();
            for item in items {
                delta.push_str(
                    item.as_str()
                        .ok_or_else(|| invalid("every delta must be a string"))?,
                );
            }
            return Ok(MessageUpdate {
                message_id,
                delta,
                deltas: items.len() as u64,
            });
        }
        let delta = map
            .get("delta")
            .and_then(Value::as_str)
            .ok_or_else(|| invalid("delta must be a string"))?
            .to_string();
        let deltas = map
            .get("deltas")
            .and_then(Value::as_u64)
            .ok_or_else(|| invalid("deltas must be a count or an array of strings"))?;
        Ok(MessageUpdate {
            message_id,
            delta,
            deltas,
        })
    }
}

/// A terminal notification from the host.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TerminalNotice {
    /// `terminal/grant-lost`: the host took the terminal back; stop writing to it.
    GrantLost {
        /// Why.
        reason: String,
    },
    /// `ui/terminal-input`: what the person typed (observe only).
    Input {
        /// The input, at most 256 bytes.
        data: String,
    },
    /// `ui/resize`: the terminal's new size.
    Resize {
        /// Width in columns.
        columns: u16,
        /// Height in rows.
        rows: u16,
    },
}

impl TerminalNotice {
    /// The notice a host notification carries, if it is one.
    pub(crate) fn parse(method: &str, params: &Value) -> Option<TerminalNotice> {
        let text = |name: &str| params.get(name).and_then(Value::as_str).map(str::to_string);
        let size = |name: &str| {
            params
                .get(name)
                .and_then(Value::as_u64)
                .and_then(|n| u16::try_from(n).ok())
        };
        match method {
            "terminal/grant-lost" => Some(TerminalNotice::GrantLost {
                reason: text("reason").unwrap_or_default(),
            }),
            "ui/terminal-input" => Some(TerminalNotice::Input {
                data: text("data")?,
            }),
            "ui/resize" => Some(TerminalNotice::Resize {
                columns: size("columns")?,
                rows: size("rows")?,
            }),
            _ => None,
        }
    }
}
