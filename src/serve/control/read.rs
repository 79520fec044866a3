//! Reads a control line's members as [`Wire`] through serde, and turns serde's errors
//! into serve's: each names the member by its path (`timeout_ms`, `arguments[2]`) and
//! the rule it breaks, and never repeats the value that was sent (serde's own messages
//! do, and a secret typed into the wrong member must not come back in an error reply).

use serde_json::{Map, Value};
use serde_path_to_error::Segment;

use super::super::error::{ErrorCode, ServeError};
use super::ops;
use super::wire::Wire;

/// The members of a line whose `op` is `op` (`op` and `id` removed, members set to
/// `null` dropped), read as that operation's variant.
pub(super) fn read(op: &str, members: Map<String, Value>) -> Result<Wire, ServeError> {
    let tagged = Value::Object(Map::from_iter([(op.to_string(), Value::Object(members))]));
    serde_path_to_error::deserialize(tagged).map_err(error)
}

/// serve's error for what serde found, from its path and the kind of its message.
fn error(error: serde_path_to_error::Error<serde_json::Error>) -> ServeError {
    // The first segment is the variant: the operation itself.
    let mut field = String::new();
    for segment in error.path().iter().skip(1) {
        match segment {
            Segment::Seq { index } => field.push_str(&format!("[{index}]")),
            Segment::Map { key } | Segment::Enum { variant: key } => {
                if !field.is_empty() {
                    field.push('.');
                }
                field.push_str(key);
            }
            Segment::Unknown => field.push_str(if field.is_empty() { "?" } else { ".?" }),
        }
    }
    let message = error.into_inner().to_string();
    if message.starts_with("unknown variant") && field.is_empty() {
        return unknown_op();
    }
    if let Some(rest) = message.strip_prefix("missing field `") {
        let member = rest.split('`').next().unwrap_or_default();
        let path = match field.is_empty() {
            true => member.to_string(),
            false => format!("{field}.{member}"),
        };
        return ServeError::missing(&path);
    }
    // "invalid type: <what was sent>, expected <what the member takes>": only the part
    // after the last ", expected " is ours to repeat.
    let expected = message
        .rsplit_once(", expected ")
        .map_or("a value of another type", |(_, expected)| expected);
    ServeError::wrong_type(&field, words(expected))
}

/// The words for what a member takes, as serve's other errors say it.
fn words(expected: &str) -> &str {
    match expected {
        "u64" => "an unsigned 64-bit integer",
        "a map" => "an object",
        "a sequence" => "an array",
        other => other,
    }
}

/// The error for an `op` serve does not have, listing those it has.
pub(super) fn unknown_op() -> ServeError {
    ServeError::new(
        ErrorCode::UnknownOp,
        format!(
            "`op` must be one of {}",
            ops().collect::<Vec<_>>().join(", ")
        ),
    )
    .with("field", "op")
}
