//! JSON-RPC error codes used by the protocol (section 3; sections 2.x for the
//! host-specific codes).

/// Invalid JSON was received (JSON-RPC 2.0).
pub const PARSE_ERROR: i64 = -32700;
/// The JSON sent is not a valid request object (JSON-RPC 2.0).
pub const INVALID_REQUEST: i64 = -32600;
/// The method does not exist or was not negotiated (section 3).
pub const METHOD_NOT_FOUND: i64 = -32601;
/// Invalid method parameters (section 3).
pub const INVALID_PARAMS: i64 = -32602;
/// Internal error (JSON-RPC 2.0).
pub const INTERNAL_ERROR: i64 = -32603;
/// No active owner, parent or service for an extension-originated request
/// (`not_foreground_owner`; sections 2, 2.8, 2.10).
pub const NO_OWNER: i64 = -32002;
/// A resource or bulk-object refusal, its name in `message` and `data.code`
/// (SUPPLEMENT 2.26, 2.27).
pub const SERVER_ERROR: i64 = -32000;
/// A secret broker miss or failure (section 2.10).
pub const SECRET_UNAVAILABLE: i64 = -32004;
/// API 0.3: the offered and requested versions do not match (SUPPLEMENT "API 0.3").
pub const VERSION_MISMATCH: i64 = -32010;
/// API 0.3: the required capabilities cannot be met (SUPPLEMENT "API 0.3").
pub const CAPABILITY_MISMATCH: i64 = -32011;
/// A bounded resource is exhausted (section 2.21b; SUPPLEMENT "API 0.3").
pub const RESOURCE_EXHAUSTED: i64 = -32012;
/// The request was cancelled (section 1.9).
pub const REQUEST_CANCELLED: i64 = -32800;

/// API 0.3: the exact `error.message` its error table gives `code` (SUPPLEMENT "Error
/// table (code and message exact)"), or `None` for a code the table does not list.
pub fn v0_3_message(code: i64) -> Option<&'static str> {
    Some(match code {
        PARSE_ERROR => "parse error",
        INVALID_REQUEST => "invalid request",
        METHOD_NOT_FOUND => "unknown or unnegotiated method",
        INVALID_PARAMS => "invalid params",
        INTERNAL_ERROR => "internal error",
        VERSION_MISMATCH => "extension API version mismatch",
        CAPABILITY_MISMATCH => "extension capability mismatch",
        RESOURCE_EXHAUSTED => "extension resource exhausted",
        REQUEST_CANCELLED => "request cancelled",
        _ => return None,
    })
}
