//! Error families: the error vocabulary a method table row answers its refusals in.
//! One [`Refusal`] becomes the JSON-RPC error of the row's family, so a service (or
//! the runtime's own admission) refuses in one vocabulary and the extension receives
//! exactly what the reference says for that method.

use serde_json::json;

use super::refusal::{Refusal, ServiceRefusal};
use crate::wire::{codes, ResponseError};

/// Which error vocabulary answers a method's refusals.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorFamily {
    /// The contract name first in `error.message` (section 3: the refusal vocabulary
    /// the reference calls Wave-1).
    ContractTokens,
    /// API 0.3's fixed error table, the contract name and detail in `data`
    /// (SUPPLEMENT "Error table").
    V0_3Table,
    /// Active-session control (sections 2.21b, 2.21c): admission refusals are Wave-1
    /// tokens; a full lifecycle queue or no worker is -32012 and an unavailable or
    /// failed execution -32603, each with `data.reason`.
    SessionControl,
    /// Agent sessions and composition (sections 2.24a, 2.25): malformed params are
    /// -32602 and a feature that was not negotiated -32601, each with the contract
    /// name first; every other refusal (no service or owner, a foreign owner, an
    /// exhausted delegation or worker limit, a failed execution) is -32002.
    AgentSessions,
    /// Resource lifetimes (section 2.26): `{code: -32000, message: <name>, data:
    /// {code: <name>}}`, the name one of `unsupported_feature`, `quota_exceeded` or
    /// `resource_unavailable`; malformed params are -32602 "invalid resource request"
    /// with `data.code` `resource_unavailable`.
    Resources,
    /// Bulk objects (section 2.27): `{code: -32000, message: <name>, data: {code:
    /// <name>}}`, the name one of `unsupported_feature`, `quota_exceeded`,
    /// `storage_unavailable` or `blob_unavailable`, which also answers malformed params
    /// and a bad parent.
    Bulk,
}

impl ErrorFamily {
    /// Every family.
    pub const ALL: [ErrorFamily; 6] = [
        ErrorFamily::ContractTokens,
        ErrorFamily::V0_3Table,
        ErrorFamily::SessionControl,
        ErrorFamily::AgentSessions,
        ErrorFamily::Resources,
        ErrorFamily::Bulk,
    ];

    /// The JSON-RPC error the extension receives for `refusal` in this family. The
    /// detail, cut at [`crate::limits::MAX_REFUSAL_DETAIL_BYTES`], is always kept: in
    /// the message after the contract name, or in `data.reason`.
    pub fn respond(self, refusal: &ServiceRefusal) -> ResponseError {
        match self {
            ErrorFamily::ContractTokens | ErrorFamily::SessionControl => refusal.to_response(),
            ErrorFamily::V0_3Table => v0_3_table(refusal),
            ErrorFamily::AgentSessions => match refusal.refusal {
                Refusal::UnsupportedFeature | Refusal::InvalidRequest | Refusal::BoundsExceeded => {
                    refusal.to_response()
                }
                _ => ResponseError::new(codes::NO_OWNER, refusal.to_string()),
            },
            ErrorFamily::Resources => match refusal.refusal {
                Refusal::InvalidRequest | Refusal::BoundsExceeded => with_code(
                    ResponseError::new(codes::INVALID_PARAMS, "invalid resource request"),
                    "resource_unavailable",
                    refusal,
                ),
                Refusal::UnsupportedFeature => server_error("unsupported_feature", refusal),
                Refusal::ResourceExhausted => server_error("quota_exceeded", refusal),
                _ => server_error("resource_unavailable", refusal),
            },
            ErrorFamily::Bulk => match refusal.refusal {
                Refusal::UnsupportedFeature => server_error("unsupported_feature", refusal),
                Refusal::ResourceExhausted => server_error("quota_exceeded", refusal),
                Refusal::Unavailable => server_error("storage_unavailable", refusal),
                _ => server_error("blob_unavailable", refusal),
            },
        }
    }
}

/// API 0.3's fixed error table: the table's exact message, the contract name and the
/// detail in `data`.
fn v0_3_table(refusal: &ServiceRefusal) -> ResponseError {
    let (code, message) = match refusal.refusal {
        Refusal::UnsupportedFeature => (codes::METHOD_NOT_FOUND, "unknown or unnegotiated method"),
        Refusal::ResourceExhausted => (codes::RESOURCE_EXHAUSTED, "extension resource exhausted"),
        Refusal::Unavailable => (codes::INTERNAL_ERROR, "internal error"),
        _ => (codes::INVALID_PARAMS, "invalid params"),
    };
    let mut error = ResponseError::new(code, message);
    error.data = Some(json!({
        "refusal": refusal.refusal.name(),
        "reason": refusal.to_string(),
    }));
    error
}

/// `{code: -32000, message: <name>, data: {code: <name>, reason}}`.
fn server_error(name: &'static str, refusal: &ServiceRefusal) -> ResponseError {
    with_code(ResponseError::new(codes::SERVER_ERROR, name), name, refusal)
}

/// `error` with `data.code` and the refusal's detail in `data.reason`.
fn with_code(
    mut error: ResponseError,
    name: &'static str,
    refusal: &ServiceRefusal,
) -> ResponseError {
    error.data = Some(json!({ "code": name, "reason": refusal.detail() }));
    error
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(family: ErrorFamily, refusal: Refusal) -> (i64, String, Option<serde_json::Value>) {
        let error = family.respond(&refusal.because("why"));
        (error.code, error.message, error.data)
    }

    #[test]
    fn contract_tokens_put_the_contract_name_first() {
        let (code, message, data) = answer(ErrorFamily::ContractTokens, Refusal::BoundsExceeded);
        assert_eq!(
            (code, message.as_str(), data),
            (-32602, "bounds_exceeded: why", None)
        );
    }

    #[test]
    fn the_0_3_table_keeps_its_exact_messages() {
        let (code, message, data) = answer(ErrorFamily::V0_3Table, Refusal::Unavailable);
        assert_eq!((code, message.as_str()), (-32603, "internal error"));
        assert_eq!(
            data,
            Some(json!({"refusal": "unavailable", "reason": "unavailable: why"}))
        );
        let (code, message, _) = answer(ErrorFamily::V0_3Table, Refusal::NotForegroundOwner);
        assert_eq!((code, message.as_str()), (-32602, "invalid params"));
    }

    #[test]
    fn session_control_puts_execution_failures_in_data_reason() {
        let (code, message, data) = answer(ErrorFamily::SessionControl, Refusal::ResourceExhausted);
        assert_eq!(
            (code, message.as_str()),
            (-32012, "extension resource exhausted")
        );
        assert_eq!(data, Some(json!({"reason": "why"})));
    }

    #[test]
    fn agent_sessions_answer_everything_but_params_and_features_with_32002() {
        for (refusal, code) in [
            (Refusal::UnsupportedFeature, -32601),
            (Refusal::InvalidRequest, -32602),
            (Refusal::BoundsExceeded, -32602),
            (Refusal::NotForegroundOwner, -32002),
            (Refusal::ResourceExhausted, -32002),
            (Refusal::Unavailable, -32002),
        ] {
            let (got, message, data) = answer(ErrorFamily::AgentSessions, refusal);
            assert_eq!(got, code, "{refusal}");
            assert_eq!(message, format!("{}: why", refusal.name()));
            assert_eq!(data, None);
        }
    }

    #[test]
    fn resources_and_bulk_name_their_code_in_message_and_data() {
        let cases = [
            (
                ErrorFamily::Resources,
                Refusal::ResourceExhausted,
                -32000,
                "quota_exceeded",
            ),
            (
                ErrorFamily::Resources,
                Refusal::NotForegroundOwner,
                -32000,
                "resource_unavailable",
            ),
            (
                ErrorFamily::Resources,
                Refusal::UnsupportedFeature,
                -32000,
                "unsupported_feature",
            ),
            (
                ErrorFamily::Bulk,
                Refusal::InvalidRequest,
                -32000,
                "blob_unavailable",
            ),
            (
                ErrorFamily::Bulk,
                Refusal::NotForegroundOwner,
                -32000,
                "blob_unavailable",
            ),
            (
                ErrorFamily::Bulk,
                Refusal::Unavailable,
                -32000,
                "storage_unavailable",
            ),
            (
                ErrorFamily::Bulk,
                Refusal::ResourceExhausted,
                -32000,
                "quota_exceeded",
            ),
        ];
        for (family, refusal, code, name) in cases {
            let (got, message, data) = answer(family, refusal);
            assert_eq!(
                (got, message.as_str()),
                (code, name),
                "{family:?} {refusal}"
            );
            assert_eq!(data, Some(json!({"code": name, "reason": "why"})));
        }
        let (code, message, data) = answer(ErrorFamily::Resources, Refusal::InvalidRequest);
        assert_eq!(
            (code, message.as_str()),
            (-32602, "invalid resource request")
        );
        assert_eq!(
            data,
            Some(json!({"code": "resource_unavailable", "reason": "why"}))
        );
    }
}
