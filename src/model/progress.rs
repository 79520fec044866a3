//! `$/progress` events (section 2.6), typed.

use base64::Engine;
use serde_json::Value;

use crate::limits::{
    PROGRESS_DECORATION_DETAIL_BYTES, PROGRESS_DECORATION_LABEL_BYTES, PROGRESS_OUTPUT_CHUNK_BYTES,
};
use crate::validate::ToolResult;

/// Which stream an output progress event carries (`"stdout"` or `"stderr"` on the
/// wire).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutputStream {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
}

/// One progress event of an active host request.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ProgressEvent {
    /// `status {message, current?, total?, unit?}`.
    Status {
        /// What is happening.
        message: String,
        /// Units done so far.
        current: Option<u64>,
        /// Units in all.
        total: Option<u64>,
        /// The unit's name.
        unit: Option<String>,
    },
    /// `output {stream, encoding, data}`, decoded, in chunks of at most 8 KiB.
    Output {
        /// The stream.
        stream: OutputStream,
        /// The bytes (decoded from base64 when the extension sent base64).
        data: Vec<u8>,
    },
    /// `decoration {label, detail?}` (needs `progress_decoration`): at most
    /// [`PROGRESS_DECORATION_LABEL_BYTES`] and [`PROGRESS_DECORATION_DETAIL_BYTES`].
    Decoration {
        /// A short label.
        label: String,
        /// Optional detail.
        detail: Option<String>,
    },
    /// `partial_result {result}` (section 2.25): a snapshot of an active `tool/call`'s
    /// result, with `request_progress` and `content_parts`. Validated like the final
    /// result (content-part limits, detail budgets, artifact resolution) except for the
    /// output schema, which only the final result must satisfy.
    PartialResult(Box<ToolResult>),
}

impl ProgressEvent {
    /// The event as the wire writes it (section 2.6), output bytes as `utf8` text when
    /// they are valid UTF-8 and as `base64` otherwise.
    pub fn to_value(&self) -> serde_json::Value {
        use serde_json::json;
        match self {
            ProgressEvent::Status {
                message,
                current,
                total,
                unit,
            } => json!({
                "type": "status", "message": message, "current": current, "total": total,
                "unit": unit,
            }),
            ProgressEvent::Output { stream, data } => {
                let stream = match stream {
                    OutputStream::Stdout => "stdout",
                    OutputStream::Stderr => "stderr",
                };
                let (encoding, data) = match std::str::from_utf8(data) {
                    Ok(text) => ("utf8", text.to_string()),
                    Err(_) => (
                        "base64",
                        base64::engine::general_purpose::STANDARD.encode(data),
                    ),
                };
                json!({"type": "output", "stream": stream, "encoding": encoding, "data": data})
            }
            ProgressEvent::Decoration { label, detail } => {
                json!({"type": "decoration", "label": label, "detail": detail})
            }
            ProgressEvent::PartialResult(result) => {
                json!({"type": "partial_result", "result": result.to_value()})
            }
        }
    }
}

/// A progress event with its correlation.
#[derive(Clone, Debug, PartialEq)]
pub struct Progress {
    /// The host request it belongs to (wire id in its generation).
    pub request_id: u64,
    /// The event's sequence number, strictly increasing per request.
    pub sequence: u64,
    /// The event.
    pub event: ProgressEvent,
}

/// Parses a progress `event` object. Output data is split into chunks of at most
/// [`PROGRESS_OUTPUT_CHUNK_BYTES`] (UTF-8 text on character boundaries), so one wire
/// event may yield several.
pub(crate) fn parse_event(event: &Value, decoration: bool) -> Result<Vec<ProgressEvent>, String> {
    let text = |name: &str| event.get(name).and_then(Value::as_str).map(str::to_string);
    let opt_u64 = |name: &str| -> Result<Option<u64>, String> {
        match event.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v
                .as_u64()
                .map(Some)
                .ok_or(format!("`{name}` must be an unsigned integer")),
        }
    };
    match event.get("type").and_then(Value::as_str) {
        Some("status") => {
            let message = text("message").ok_or("status needs a string `message`")?;
            Ok(vec![ProgressEvent::Status {
                message,
                current: opt_u64("current")?,
                total: opt_u64("total")?,
                unit: text("unit"),
            }])
        }
        Some("output") => {
            let stream = match event.get("stream").and_then(Value::as_str) {
                Some("stdout") => OutputStream::Stdout,
                Some("stderr") => OutputStream::Stderr,
                _ => return Err("output needs `stream` \"stdout\" or \"stderr\"".into()),
            };
            let data = text("data").ok_or("output needs a string `data`")?;
            match event.get("encoding").and_then(Value::as_str) {
                Some("utf8") => Ok(chunk_text(&data)
                    .into_iter()
                    .map(|chunk| ProgressEvent::Output {
                        stream,
                        data: chunk.as_bytes().to_vec(),
                    })
                    .collect()),
                Some("base64") => {
                    let bytes = base64::engine::general_purpose::STANDARD
                        .decode(data.as_bytes())
                        .map_err(|e| format!("output data is not base64: {e}"))?;
                    Ok(bytes
                        .chunks(PROGRESS_OUTPUT_CHUNK_BYTES)
                        .map(|chunk| ProgressEvent::Output {
                            stream,
                            data: chunk.to_vec(),
                        })
                        .collect())
                }
                _ => Err("output needs `encoding` \"utf8\" or \"base64\"".into()),
            }
        }
        Some("decoration") if decoration => {
            let label = text("label").ok_or("decoration needs a string `label`")?;
            if label.len() > PROGRESS_DECORATION_LABEL_BYTES {
                return Err(format!(
                    "decoration `label` is {} bytes; at most {PROGRESS_DECORATION_LABEL_BYTES}",
                    label.len()
                ));
            }
            let detail = match event.get("detail") {
                None | Some(Value::Null) => None,
                Some(Value::String(detail)) => Some(detail.clone()),
                Some(_) => return Err("decoration `detail` must be a string".into()),
            };
            if let Some(detail) = detail
                .as_ref()
                .filter(|d| d.len() > PROGRESS_DECORATION_DETAIL_BYTES)
            {
                return Err(format!(
                    "decoration `detail` is {} bytes; at most {PROGRESS_DECORATION_DETAIL_BYTES}",
                    detail.len()
                ));
            }
            Ok(vec![ProgressEvent::Decoration { label, detail }])
        }
        Some("decoration") => Err("decoration needs the progress_decoration feature".into()),
        Some("partial_result") => {
            Err("partial_result is only for an active tool/call with content_parts".into())
        }
        _ => Err("`type` must be status, output, decoration or partial_result".into()),
    }
}

/// Splits text into pieces of at most [`PROGRESS_OUTPUT_CHUNK_BYTES`] bytes on
/// character boundaries.
fn chunk_text(text: &str) -> Vec<&str> {
    let mut chunks = Vec::new();
    let mut rest = text;
    while rest.len() > PROGRESS_OUTPUT_CHUNK_BYTES {
        let chunk = crate::text::head(rest, PROGRESS_OUTPUT_CHUNK_BYTES);
        chunks.push(chunk);
        rest = &rest[chunk.len()..];
    }
    chunks.push(rest);
    chunks
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_each_variant() {
        let status = parse_event(
            &json!({"type": "status", "message": "m", "current": 3, "total": 10}),
            false,
        );
        assert_eq!(
            status,
            Ok(vec![ProgressEvent::Status {
                message: "m".into(),
                current: Some(3),
                total: Some(10),
                unit: None
            }])
        );
        let out = parse_event(
            &json!({"type": "output", "stream": "stderr", "encoding": "base64", "data": "aGk="}),
            false,
        );
        assert_eq!(
            out,
            Ok(vec![ProgressEvent::Output {
                stream: OutputStream::Stderr,
                data: b"hi".to_vec()
            }])
        );
        assert!(parse_event(&json!({"type": "decoration", "label": "x"}), false).is_err());
        assert!(parse_event(&json!({"type": "decoration", "label": "x"}), true).is_ok());
        assert!(parse_event(
            &json!({"type": "status", "message": "m", "current": -1}),
            false
        )
        .is_err());
        assert!(parse_event(&json!({"type": "nope"}), false).is_err());
    }

    #[test]
    fn output_is_chunked_at_8_kib_on_char_boundaries() {
        let text = "é".repeat(PROGRESS_OUTPUT_CHUNK_BYTES); // 2 bytes each
        let events = parse_event(
            &json!({"type": "output", "stream": "stdout", "encoding": "utf8", "data": text}),
            false,
        )
        .unwrap();
        assert_eq!(events.len(), 2);
        let mut joined = Vec::new();
        for e in &events {
            let ProgressEvent::Output { data, .. } = e else {
                panic!("output expected")
            };
            assert!(data.len() <= PROGRESS_OUTPUT_CHUNK_BYTES);
            assert!(std::str::from_utf8(data).is_ok());
            joined.extend_from_slice(data);
        }
        assert_eq!(joined, text.as_bytes());
    }
}
