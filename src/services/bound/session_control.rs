//! The params and results of active-session control (section 2.21b,
//! `session_control_v1`) and `session/compact` (section 2.21c,
//! `session_compaction_v1`), both API 0.4. `session/switch` takes and every control
//! method returns a [`SessionId`](super::SessionId), shared with API 0.3's
//! `session_lifecycle`.

use serde::{Deserialize, Serialize};

use super::params::ServiceParams;
use super::refusal::{Refusal, ServiceRefusal};
use super::results::ClosedResult;
use crate::limits::{
    MAX_COMPACTION_SUMMARY_BYTES, MAX_COMPACT_INSTRUCTIONS_BYTES, MAX_ENTRY_ID_BYTES,
};

/// The params of `session/wait_for_idle`, `session/create`, `session/fork` and
/// `session/reload` (section 2.21b): nothing beyond the parent and owner. `session_id`
/// may be present only as `null` ("absent/null for all other methods").
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionTarget {
    /// Always absent or `null` once checked; a value is `invalid_request`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
}

impl ServiceParams for SessionTarget {
    fn check(&self) -> Result<(), ServiceRefusal> {
        match &self.session_id {
            None => Ok(()),
            Some(_) => Err(Refusal::InvalidRequest.because(
                "`session_id` is accepted only by session/switch; send it absent or null",
            )),
        }
    }
}

/// The params of `session/compact` (section 2.21c).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompactRequest {
    /// At most [`MAX_COMPACT_INSTRUCTIONS_BYTES`]; LF and TAB are the only control
    /// characters. Blank is valid (the host normalizes it to absent).
    #[serde(default)]
    pub custom_instructions: Option<String>,
}

impl ServiceParams for CompactRequest {
    fn check(&self) -> Result<(), ServiceRefusal> {
        let Some(text) = &self.custom_instructions else {
            return Ok(());
        };
        if text.len() > MAX_COMPACT_INSTRUCTIONS_BYTES {
            return Err(Refusal::BoundsExceeded.because(format!(
                "`custom_instructions` is {} bytes; at most {MAX_COMPACT_INSTRUCTIONS_BYTES} are allowed",
                text.len()
            )));
        }
        match text.chars().find(|c| c.is_control() && !matches!(c, '\n' | '\t')) {
            Some(c) => Err(Refusal::InvalidRequest.because(format!(
                "`custom_instructions` holds the control character U+{:04X}; only LF and TAB are allowed",
                c as u32
            ))),
            None => Ok(()),
        }
    }
}

/// The answer of `session/compact` (section 2.21c): the three strings of the newly
/// appended compaction entry, nothing more.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Compaction {
    /// The compaction entry's id, 1 to [`MAX_ENTRY_ID_BYTES`] bytes.
    pub entry_id: String,
    /// The stored summary, 1 to [`MAX_COMPACTION_SUMMARY_BYTES`] bytes.
    pub summary: String,
    /// The first entry kept after it, 1 to [`MAX_ENTRY_ID_BYTES`] bytes.
    pub first_kept: String,
}

impl ClosedResult for Compaction {
    fn check_bounds(&self) -> Result<(), String> {
        for (name, value, max) in [
            ("entry_id", &self.entry_id, MAX_ENTRY_ID_BYTES),
            ("summary", &self.summary, MAX_COMPACTION_SUMMARY_BYTES),
            ("first_kept", &self.first_kept, MAX_ENTRY_ID_BYTES),
        ] {
            if value.is_empty() || value.len() > max {
                return Err(format!("`{name}` must be a string of 1 to {max} bytes"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::services::bound::params::closed;
    use crate::services::bound::ServiceResult;
    use serde_json::{json, Value};

    fn parse<T: ServiceParams>(value: Value) -> Result<T, Refusal> {
        let params: T = closed(value).map_err(|e| e.refusal)?;
        params.check().map_err(|e| e.refusal)?;
        Ok(params)
    }

    #[test]
    fn a_session_id_is_refused_except_as_null() {
        assert!(parse::<SessionTarget>(json!({})).is_ok());
        assert!(parse::<SessionTarget>(json!({"session_id": null})).is_ok());
        assert_eq!(
            parse::<SessionTarget>(json!({"session_id": "s"})),
            Err(Refusal::InvalidRequest)
        );
        assert_eq!(
            parse::<SessionTarget>(json!({"extra": 1})),
            Err(Refusal::InvalidRequest)
        );
    }

    #[test]
    fn instructions_are_bounded_and_allow_only_lf_and_tab() {
        let ok = json!({"custom_instructions": "Keep\tthe open\nquestions."});
        assert!(parse::<CompactRequest>(ok).is_ok());
        assert!(parse::<CompactRequest>(json!({"custom_instructions": null})).is_ok());
        assert!(parse::<CompactRequest>(json!({"custom_instructions": "  "})).is_ok());
        let cr = json!({"custom_instructions": "a\rb"});
        assert_eq!(parse::<CompactRequest>(cr), Err(Refusal::InvalidRequest));
        let long = json!({"custom_instructions": "x".repeat(MAX_COMPACT_INSTRUCTIONS_BYTES + 1)});
        assert_eq!(parse::<CompactRequest>(long), Err(Refusal::BoundsExceeded));
        let exact = json!({"custom_instructions": "x".repeat(MAX_COMPACT_INSTRUCTIONS_BYTES)});
        assert!(parse::<CompactRequest>(exact).is_ok());
    }

    #[test]
    fn a_compaction_answer_is_closed_and_non_empty() {
        let good = json!({"entry_id": "c1", "summary": "Summary.", "first_kept": "e7"});
        assert_eq!(Compaction::check(&good), Ok(()));
        let extra = json!({"entry_id": "c1", "summary": "S", "first_kept": "e7", "tokens": 3});
        assert!(Compaction::check(&extra).is_err());
        let empty = json!({"entry_id": "c1", "summary": "", "first_kept": "e7"});
        assert!(Compaction::check(&empty).is_err());
    }
}
