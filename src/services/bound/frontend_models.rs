//! The params and results of the frontend kinds: autocomplete registration (section
//! 2.24b) and the terminal handoff (section 2.24).

use serde::{Deserialize, Serialize};

use super::params::ServiceParams;
use super::refusal::{Refusal, ServiceRefusal};
use super::results::ClosedResult;
use crate::limits::MAX_TERMINAL_GRANT_ID_BYTES;

/// `ui/autocomplete/register` (section 2.24b): the extension's provider revision.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AutocompleteRegistration {
    /// The revision of the extension's completion provider.
    pub revision: u64,
}

impl ServiceParams for AutocompleteRegistration {}

/// The acknowledgement of a registration an interactive frontend admitted:
/// `{"accepted": true}`. A frontend that cannot admit one refuses instead (section
/// 2.24b: "an unavailable frontend refuses rather than fabricating an active chain").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "AcceptedMember", into = "AcceptedMember")]
pub struct Accepted;

/// `{"accepted": true}`: how [`Accepted`] is written.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct AcceptedMember {
    accepted: bool,
}

impl TryFrom<AcceptedMember> for Accepted {
    type Error = &'static str;
    fn try_from(member: AcceptedMember) -> Result<Accepted, &'static str> {
        match member.accepted {
            true => Ok(Accepted),
            false => {
                Err("the result is {\"accepted\": true}; refuse a registration you cannot admit")
            }
        }
    }
}

impl From<Accepted> for AcceptedMember {
    fn from(_: Accepted) -> AcceptedMember {
        AcceptedMember { accepted: true }
    }
}

impl ClosedResult for Accepted {}

/// A live terminal grant the frontend minted (`terminal/acquire`, section 2.24).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TerminalGrant {
    /// The grant's id, 1 to [`MAX_TERMINAL_GRANT_ID_BYTES`] bytes.
    pub grant_id: String,
    /// The terminal's width in columns.
    pub columns: u16,
    /// The terminal's height in rows.
    pub rows: u16,
}

impl ClosedResult for TerminalGrant {
    fn check_bounds(&self) -> Result<(), String> {
        self.check().map_err(|e| e.detail)
    }
}

impl TerminalGrant {
    /// The grant id's bounds.
    pub fn check(&self) -> Result<(), ServiceRefusal> {
        if self.grant_id.is_empty() || self.grant_id.len() > MAX_TERMINAL_GRANT_ID_BYTES {
            return Err(Refusal::BoundsExceeded.because(format!(
                "`grant_id` must be 1 to {MAX_TERMINAL_GRANT_ID_BYTES} bytes"
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::services::bound::ServiceResult;
    use serde_json::json;

    #[test]
    fn only_an_acceptance_is_an_answer() {
        assert_eq!(Accepted::check(&json!({"accepted": true})), Ok(()));
        assert!(Accepted::check(&json!({"accepted": false})).is_err());
        assert!(Accepted::check(&json!({"accepted": true, "x": 1})).is_err());
        assert!(Accepted::check(&json!({})).is_err());
    }

    #[test]
    fn a_grant_is_closed_and_bounded() {
        let good = json!({"grant_id": "g1", "columns": 80, "rows": 24});
        assert_eq!(<TerminalGrant as ServiceResult>::check(&good), Ok(()));
        let wide = json!({"grant_id": "g1", "columns": 70000, "rows": 24});
        assert!(<TerminalGrant as ServiceResult>::check(&wide).is_err());
        let long = json!({"grant_id": "g".repeat(129), "columns": 80, "rows": 24});
        assert!(<TerminalGrant as ServiceResult>::check(&long).is_err());
        let extra = json!({"grant_id": "g", "columns": 80, "rows": 24, "pty": "/dev/pts/1"});
        assert!(<TerminalGrant as ServiceResult>::check(&extra).is_err());
    }
}
