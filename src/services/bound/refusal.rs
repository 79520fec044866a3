//! The refusal vocabulary of bound services: the four Wave-1 contract names (section 3)
//! and the two execution refusals of section 2.21b, each with its JSON-RPC code.

use std::fmt;

use crate::limits::MAX_REFUSAL_DETAIL_BYTES;
use crate::wire::{codes, ResponseError};

/// A Wave-1 refusal (section 3). The extension receives its code, and its contract
/// name as the first token of `error.message`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Refusal {
    /// -32601 `unsupported_feature`: the feature was not negotiated, or the host
    /// cannot serve the request at all.
    UnsupportedFeature,
    /// -32602 `invalid_request`: the params break the method's shape or rules.
    InvalidRequest,
    /// -32602 `bounds_exceeded`: a value is over its bound.
    BoundsExceeded,
    /// -32002 `not_foreground_owner`: the request's owner is not the foreground one.
    NotForegroundOwner,
    /// -32012 "extension resource exhausted", the detail in `data.reason`: a bounded
    /// queue or worker pool of the host is full (section 2.21b, the lifecycle queue).
    ResourceExhausted,
    /// -32603 "internal error", the detail in `data.reason`: the host's service is
    /// unavailable or its execution failed (section 2.21b); never a success-shaped value.
    Unavailable,
}

impl Refusal {
    /// Every refusal, in the reference's order.
    pub const ALL: [Refusal; 6] = [
        Refusal::UnsupportedFeature,
        Refusal::InvalidRequest,
        Refusal::BoundsExceeded,
        Refusal::NotForegroundOwner,
        Refusal::ResourceExhausted,
        Refusal::Unavailable,
    ];

    /// The contract name, such as `bounds_exceeded`.
    pub fn name(self) -> &'static str {
        match self {
            Refusal::UnsupportedFeature => "unsupported_feature",
            Refusal::InvalidRequest => "invalid_request",
            Refusal::BoundsExceeded => "bounds_exceeded",
            Refusal::NotForegroundOwner => "not_foreground_owner",
            Refusal::ResourceExhausted => "resource_exhausted",
            Refusal::Unavailable => "unavailable",
        }
    }

    /// The refusal a contract name names.
    pub fn from_name(name: &str) -> Option<Refusal> {
        Refusal::ALL.into_iter().find(|r| r.name() == name)
    }

    /// The JSON-RPC error code.
    pub fn code(self) -> i64 {
        match self {
            Refusal::UnsupportedFeature => codes::METHOD_NOT_FOUND,
            Refusal::InvalidRequest | Refusal::BoundsExceeded => codes::INVALID_PARAMS,
            Refusal::NotForegroundOwner => codes::NO_OWNER,
            Refusal::ResourceExhausted => codes::RESOURCE_EXHAUSTED,
            Refusal::Unavailable => codes::INTERNAL_ERROR,
        }
    }

    /// This refusal with a detail in words.
    pub fn because(self, detail: impl Into<String>) -> ServiceRefusal {
        ServiceRefusal {
            refusal: self,
            detail: detail.into(),
        }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A refusal with its detail, as a service returns it and the extension receives it:
/// `error.message` is `"<name>: <detail>"` (or `"<name>"` without a detail), the detail
/// cut at [`MAX_REFUSAL_DETAIL_BYTES`] on a character boundary.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServiceRefusal {
    /// Which refusal.
    pub refusal: Refusal,
    /// Why, in words the extension's author can act on.
    pub detail: String,
}

impl ServiceRefusal {
    /// The JSON-RPC error the extension receives: the contract name first in the
    /// message for the four Wave-1 refusals; the fixed message of the code with the
    /// detail in `data.reason` for [`Refusal::ResourceExhausted`] and
    /// [`Refusal::Unavailable`].
    pub fn to_response(&self) -> ResponseError {
        match self.refusal {
            Refusal::ResourceExhausted | Refusal::Unavailable => {
                let message = match self.refusal {
                    Refusal::ResourceExhausted => "extension resource exhausted",
                    _ => "internal error",
                };
                let mut error = ResponseError::new(self.refusal.code(), message);
                error.data = Some(serde_json::json!({ "reason": self.detail() }));
                error
            }
            _ => ResponseError::new(self.refusal.code(), self.to_string()),
        }
    }

    /// The detail, cut at [`MAX_REFUSAL_DETAIL_BYTES`] on a character boundary.
    pub fn detail(&self) -> &str {
        crate::text::head(&self.detail, MAX_REFUSAL_DETAIL_BYTES)
    }
}

impl fmt::Display for ServiceRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.detail() {
            "" => f.write_str(self.refusal.name()),
            detail => write!(f, "{}: {detail}", self.refusal.name()),
        }
    }
}

impl std::error::Error for ServiceRefusal {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_carry_code_and_contract_name_first() {
        let response = Refusal::BoundsExceeded.because("too long").to_response();
        assert_eq!(response.code, -32602);
        assert_eq!(response.message, "bounds_exceeded: too long");
        let owner = Refusal::NotForegroundOwner.because("").to_response();
        assert_eq!(
            (owner.code, owner.message.as_str()),
            (-32002, "not_foreground_owner")
        );
        assert_eq!(Refusal::UnsupportedFeature.code(), -32601);
        assert_eq!(Refusal::InvalidRequest.code(), -32602);
        let full = Refusal::ResourceExhausted
            .because("queue full")
            .to_response();
        assert_eq!(
            (full.code, full.message.as_str()),
            (-32012, "extension resource exhausted")
        );
        assert_eq!(full.data, Some(serde_json::json!({"reason": "queue full"})));
        let failed = Refusal::Unavailable.because("no session").to_response();
        assert_eq!(
            (failed.code, failed.message.as_str()),
            (-32603, "internal error")
        );
    }

    #[test]
    fn details_are_cut_on_a_character_boundary() {
        let long = Refusal::InvalidRequest.because("é".repeat(600)).to_string();
        assert!(long.len() <= "invalid_request: ".len() + MAX_REFUSAL_DETAIL_BYTES);
        assert!(long.starts_with("invalid_request: é"));
    }

    #[test]
    fn names_round_trip() {
        for refusal in Refusal::ALL {
            assert_eq!(Refusal::from_name(refusal.name()), Some(refusal));
        }
        assert_eq!(Refusal::from_name("denied"), None);
    }
}
