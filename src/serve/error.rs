//! The errors `serve` reports: one stable code per failure, with the JSON-RPC code where
//! one applies.
//!
//! Every error travels as `{"code": "<stable code>", "message": "...", "rpc_code"?: n,
//! ...details}`. Codes are part of the protocol (docs/serve-protocol.md) and never change
//! meaning; messages are for people and may change. No message ever repeats a value the
//! client sent, so a secret typed into the wrong field cannot be echoed.

use serde_json::{Map, Value};

use crate::host::{CallError, StartError};
use crate::wire::codes;

/// The stable code of a `serve` error, as sent in `error.code`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// The control line is not valid UTF-8 JSON.
    InvalidJson,
    /// The control line exceeds [`super::MAX_CONTROL_LINE_BYTES`].
    LineTooLong,
    /// The control line is JSON but not an object.
    NotAnObject,
    /// `id` is neither a string nor an integer.
    InvalidId,
    /// A required member is absent (or null).
    MissingField,
    /// A member has the wrong JSON type.
    WrongType,
    /// A member has the right type but a value outside its allowed set.
    InvalidValue,
    /// `op` names no operation.
    UnknownOp,
    /// `call_id` is already used by an active call.
    DuplicateCallId,
    /// `cancel` names no active call.
    UnknownCallId,
    /// `answer_*` names no pending question.
    UnknownRequestId,
    /// `answer_confirmation` for an input request, or `answer_input` for a confirmation.
    RequestKindMismatch,
    /// No extension of that name is started in this session.
    NotStarted,
    /// No discovered extension has that name.
    UnknownExtension,
    /// The manifest breaks a rule, or excludes this host.
    InvalidManifest,
    /// The extension already has a live generation.
    AlreadyRunning,
    /// The manifest selects an API version this host does not speak.
    UnsupportedApiVersion,
    /// The entrypoint could not be resolved or spawned.
    SpawnFailed,
    /// Setting up the process failed.
    IoError,
    /// The extension answered `initialize` with an error.
    InitializeRejected,
    /// The `initialize` answer broke a rule of section 1.1.
    NegotiationFailed,
    /// No `initialize` answer within its deadline.
    InitializeTimeout,
    /// The connection to the extension was lost.
    TransportLost,
    /// A reload's candidate changed what the extension contributes; the running
    /// generation stays.
    ReRegistrationRequired,
    /// The extension is parked: it will not restart until a reload.
    Parked,
    /// A tool of the extension already belongs to another extension or the host.
    ToolConflict,
    /// A destructive menu action was not confirmed; nothing was sent.
    Declined,
    /// The host is shut down or shutting down.
    HostShutDown,
    /// The extension is not accepting calls in its current state.
    NotReady,
    /// The extension does not declare the tool, command, hook or renderer.
    NotDeclared,
    /// The extension answered with a JSON-RPC error.
    RemoteError,
    /// The call was cancelled before it settled.
    Cancelled,
    /// The call's deadline passed.
    DeadlineExceeded,
    /// The answer broke a protocol rule.
    InvalidResult,
    /// The answer came in a frame the host refuses (not canonical, oversized, or
    /// breaking an envelope rule).
    RefusedResponse,
    /// The request exceeds the frame bound.
    RequestTooLarge,
    /// Too many calls are waiting for this extension.
    Overloaded,
    /// The request could not be encoded.
    InvalidRequest,
    /// A Wave-1 notification was refused (its feature was not negotiated, a bound, or
    /// a shortcut or generation that is not current); `refusal` names the contract.
    NotificationRefused,
    /// An `agent_report` names no child spawned through this session, or a transition
    /// the protocol does not allow.
    ReportRefused,
    /// An input resource of the call was refused before anything was sent (section
    /// 2.26); `path` names the input and `resource_error` the protocol's name for why.
    ResourceRefused,
    /// `get_applicable_operations` was refused; `reason` says why (`not_enabled`,
    /// `invalid_arguments`, `resource_unavailable`, `stale_cursor`).
    DiscoveryRefused,
}

impl ErrorCode {
    /// Every code, in the order of the schema's `$defs.error_codes`.
    pub const ALL: [ErrorCode; 42] = [
        ErrorCode::InvalidJson,
        ErrorCode::LineTooLong,
        ErrorCode::NotAnObject,
        ErrorCode::InvalidId,
        ErrorCode::MissingField,
        ErrorCode::WrongType,
        ErrorCode::InvalidValue,
        ErrorCode::UnknownOp,
        ErrorCode::DuplicateCallId,
        ErrorCode::UnknownCallId,
        ErrorCode::UnknownRequestId,
        ErrorCode::RequestKindMismatch,
        ErrorCode::NotStarted,
        ErrorCode::UnknownExtension,
        ErrorCode::InvalidManifest,
        ErrorCode::AlreadyRunning,
        ErrorCode::UnsupportedApiVersion,
        ErrorCode::SpawnFailed,
        ErrorCode::IoError,
        ErrorCode::InitializeRejected,
        ErrorCode::NegotiationFailed,
        ErrorCode::InitializeTimeout,
        ErrorCode::TransportLost,
        ErrorCode::ReRegistrationRequired,
        ErrorCode::Parked,
        ErrorCode::ToolConflict,
        ErrorCode::Declined,
        ErrorCode::HostShutDown,
        ErrorCode::NotReady,
        ErrorCode::NotDeclared,
        ErrorCode::RemoteError,
        ErrorCode::Cancelled,
        ErrorCode::DeadlineExceeded,
        ErrorCode::InvalidResult,
        ErrorCode::RefusedResponse,
        ErrorCode::RequestTooLarge,
        ErrorCode::Overloaded,
        ErrorCode::InvalidRequest,
        ErrorCode::NotificationRefused,
        ErrorCode::ReportRefused,
        ErrorCode::ResourceRefused,
        ErrorCode::DiscoveryRefused,
    ];

    /// The code as sent on the wire, such as `"duplicate_call_id"`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidJson => "invalid_json",
            ErrorCode::LineTooLong => "line_too_long",
            ErrorCode::NotAnObject => "not_an_object",
            ErrorCode::InvalidId => "invalid_id",
            ErrorCode::MissingField => "missing_field",
            ErrorCode::WrongType => "wrong_type",
            ErrorCode::InvalidValue => "invalid_value",
            ErrorCode::UnknownOp => "unknown_op",
            ErrorCode::DuplicateCallId => "duplicate_call_id",
            ErrorCode::UnknownCallId => "unknown_call_id",
            ErrorCode::UnknownRequestId => "unknown_request_id",
            ErrorCode::RequestKindMismatch => "request_kind_mismatch",
            ErrorCode::NotStarted => "not_started",
            ErrorCode::UnknownExtension => "unknown_extension",
            ErrorCode::InvalidManifest => "invalid_manifest",
            ErrorCode::AlreadyRunning => "already_running",
            ErrorCode::UnsupportedApiVersion => "unsupported_api_version",
            ErrorCode::SpawnFailed => "spawn_failed",
            ErrorCode::IoError => "io_error",
            ErrorCode::InitializeRejected => "initialize_rejected",
            ErrorCode::NegotiationFailed => "negotiation_failed",
            ErrorCode::InitializeTimeout => "initialize_timeout",
            ErrorCode::TransportLost => "transport_lost",
            ErrorCode::ReRegistrationRequired => "re_registration_required",
            ErrorCode::Parked => "parked",
            ErrorCode::ToolConflict => "tool_conflict",
            ErrorCode::Declined => "declined",
            ErrorCode::HostShutDown => "host_shut_down",
            ErrorCode::NotReady => "not_ready",
            ErrorCode::NotDeclared => "not_declared",
            ErrorCode::RemoteError => "remote_error",
            ErrorCode::Cancelled => "cancelled",
            ErrorCode::DeadlineExceeded => "deadline_exceeded",
            ErrorCode::InvalidResult => "invalid_result",
            ErrorCode::RefusedResponse => "refused_response",
            ErrorCode::RequestTooLarge => "request_too_large",
            ErrorCode::Overloaded => "overloaded",
            ErrorCode::InvalidRequest => "invalid_request",
            ErrorCode::NotificationRefused => "notification_refused",
            ErrorCode::ReportRefused => "report_refused",
            ErrorCode::ResourceRefused => "resource_refused",
            ErrorCode::DiscoveryRefused => "discovery_refused",
        }
    }

    /// The JSON-RPC code that describes a malformed control line, where one applies.
    fn control_rpc_code(self) -> Option<i64> {
        match self {
            ErrorCode::InvalidJson | ErrorCode::LineTooLong => Some(codes::PARSE_ERROR),
            ErrorCode::NotAnObject | ErrorCode::InvalidId => Some(codes::INVALID_REQUEST),
            ErrorCode::UnknownOp => Some(codes::METHOD_NOT_FOUND),
            ErrorCode::MissingField | ErrorCode::WrongType | ErrorCode::InvalidValue => {
                Some(codes::INVALID_PARAMS)
            }
            _ => None,
        }
    }
}

/// One error: a stable code, a message for people, the JSON-RPC code where one
/// applies, and code-specific details (such as the offending `field`).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ServeError {
    pub code: ErrorCode,
    pub message: String,
    pub rpc_code: Option<i64>,
    pub details: Map<String, Value>,
}

impl ServeError {
    /// An error of `code`; control-line codes get their JSON-RPC code.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> ServeError {
        ServeError {
            code,
            message: message.into(),
            rpc_code: code.control_rpc_code(),
            details: Map::new(),
        }
    }

    /// Adds a detail member.
    pub fn with(mut self, key: &str, value: impl Into<Value>) -> ServeError {
        self.details.insert(key.to_string(), value.into());
        self
    }

    /// Sets the JSON-RPC code.
    pub fn with_rpc_code(mut self, rpc_code: Option<i64>) -> ServeError {
        self.rpc_code = rpc_code;
        self
    }

    /// A required member is absent or null.
    pub fn missing(field: &str) -> ServeError {
        ServeError::new(ErrorCode::MissingField, format!("`{field}` is required"))
            .with("field", field)
    }

    /// A member has the wrong type; `expected` completes "must be ...".
    pub fn wrong_type(field: &str, expected: &str) -> ServeError {
        ServeError::new(
            ErrorCode::WrongType,
            format!("`{field}` must be {expected}"),
        )
        .with("field", field)
    }

    /// A member holds a value outside `allowed`.
    pub fn invalid_value(field: &str, allowed: &[&str]) -> ServeError {
        ServeError::new(
            ErrorCode::InvalidValue,
            format!("`{field}` must be one of {}", allowed.join(", ")),
        )
        .with("field", field)
    }

    /// The error object as sent in replies and results.
    pub fn to_value(&self) -> Value {
        let mut object = Map::new();
        object.insert("code".into(), Value::from(self.code.as_str()));
        object.insert("message".into(), Value::from(self.message.as_str()));
        if let Some(rpc_code) = self.rpc_code {
            object.insert("rpc_code".into(), Value::from(rpc_code));
        }
        for (key, value) in &self.details {
            object.insert(key.clone(), value.clone());
        }
        Value::Object(object)
    }
}

impl From<&StartError> for ServeError {
    fn from(error: &StartError) -> ServeError {
        let code = match error {
            StartError::UnknownExtension { .. } => ErrorCode::UnknownExtension,
            StartError::ManifestRejected { .. } => ErrorCode::InvalidManifest,
            StartError::Manifest(_) => ErrorCode::InvalidManifest,
            StartError::AlreadyRunning { .. } => ErrorCode::AlreadyRunning,
            StartError::UnsupportedApiVersion { .. } => ErrorCode::UnsupportedApiVersion,
            StartError::Spawn(_) => ErrorCode::SpawnFailed,
            StartError::Io(_) => ErrorCode::IoError,
            StartError::Encode(_) => ErrorCode::InvalidRequest,
            StartError::InitializeRejected(_) => ErrorCode::InitializeRejected,
            StartError::Negotiation(_) | StartError::RefusedInitializeAnswer { .. } => {
                ErrorCode::NegotiationFailed
            }
            StartError::InitializeTimeout { .. } => ErrorCode::InitializeTimeout,
            StartError::TransportLost { .. } => ErrorCode::TransportLost,
            StartError::ReRegistrationRequired { .. } => ErrorCode::ReRegistrationRequired,
            StartError::ToolConflict { .. } => ErrorCode::ToolConflict,
            StartError::NotStarted { .. } => ErrorCode::NotStarted,
            StartError::HostShutDown => ErrorCode::HostShutDown,
        };
        let serve = ServeError::new(code, error.to_string());
        match error {
            StartError::InitializeRejected(e) => {
                let serve = serve.with_rpc_code(Some(e.code));
                match &e.data {
                    Some(data) => serve.with("data", data.clone()),
                    None => serve,
                }
            }
            StartError::UnknownExtension { discovered, .. } => {
                serve.with("discovered", discovered.clone())
            }
            StartError::ManifestRejected { diagnostics, .. } => {
                serve.with("diagnostics", diagnostics.clone())
            }
            StartError::TransportLost { evidence, .. }
            | StartError::InitializeTimeout { evidence, .. } => serve
                .with("exit_status", evidence.exit_status.clone())
                .with("stderr_tail", evidence.stderr_tail.clone())
                .with("non_json_stdout_lines", evidence.non_json_lines)
                .with("first_non_json_line", evidence.first_non_json.clone()),
            _ => serve,
        }
    }
}

impl From<&CallError> for ServeError {
    fn from(error: &CallError) -> ServeError {
        let message = error.to_string();
        let serve = match error {
            CallError::NotStarted { .. } => ServeError::new(ErrorCode::NotStarted, message),
            CallError::NotReady { state, .. } => {
                ServeError::new(ErrorCode::NotReady, message).with("state", state.as_str())
            }
            CallError::NotDeclared { kind, name } => {
                ServeError::new(ErrorCode::NotDeclared, message)
                    .with("kind", *kind)
                    .with("name", name.as_str())
            }
            CallError::Remote(e) => {
                let serve = ServeError::new(ErrorCode::RemoteError, message);
                match &e.data {
                    Some(data) => serve.with("data", data.clone()),
                    None => serve,
                }
            }
            CallError::Cancelled { reason } => {
                ServeError::new(ErrorCode::Cancelled, message).with("reason", reason.as_str())
            }
            CallError::DeadlineExceeded { after } => {
                let after_ms = u64::try_from(after.as_millis()).unwrap_or(u64::MAX);
                ServeError::new(ErrorCode::DeadlineExceeded, message).with("after_ms", after_ms)
            }
            CallError::TransportLost { .. } => ServeError::new(ErrorCode::TransportLost, message),
            CallError::InvalidResult(e) => {
                ServeError::new(ErrorCode::InvalidResult, message).with("path", e.path())
            }
            CallError::RefusedResponse { .. } => {
                ServeError::new(ErrorCode::RefusedResponse, message)
            }
            CallError::RequestTooLarge { bytes, limit } => {
                ServeError::new(ErrorCode::RequestTooLarge, message)
                    .with("bytes", *bytes)
                    .with("limit", *limit)
            }
            CallError::Overloaded { queued } => {
                ServeError::new(ErrorCode::Overloaded, message).with("queued", *queued)
            }
            CallError::InvalidRequest { .. } => ServeError::new(ErrorCode::InvalidRequest, message),
            CallError::Parked { reason, .. } => {
                ServeError::new(ErrorCode::Parked, message).with("reason", reason.to_string())
            }
            CallError::Declined { .. } => ServeError::new(ErrorCode::Declined, message),
            CallError::ResourceRefused { path, error } => {
                ServeError::new(ErrorCode::ResourceRefused, message)
                    .with("path", path.as_str())
                    .with("resource_error", error.name())
            }
            CallError::HostShutDown => ServeError::new(ErrorCode::HostShutDown, message),
        };
        serve.with_rpc_code(error.code())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::CancelReason;

    #[test]
    fn control_errors_carry_their_json_rpc_code() {
        let error = ServeError::missing("call_id");
        assert_eq!(
            error.to_value(),
            serde_json::json!({"code": "missing_field", "message": "`call_id` is required",
                               "rpc_code": -32602, "field": "call_id"})
        );
        let unknown = ServeError::new(ErrorCode::UnknownOp, "x").to_value();
        assert_eq!(unknown["rpc_code"], -32601);
        let duplicate = ServeError::new(ErrorCode::DuplicateCallId, "x").to_value();
        assert!(duplicate.get("rpc_code").is_none());
    }

    #[test]
    fn call_errors_map_to_stable_codes() {
        let cancelled = ServeError::from(&CallError::Cancelled {
            reason: CancelReason::User,
        });
        assert_eq!(cancelled.code.as_str(), "cancelled");
        assert_eq!(cancelled.rpc_code, Some(codes::REQUEST_CANCELLED));
        assert_eq!(cancelled.details["reason"], "user");
        let remote = ServeError::from(&CallError::Remote(crate::wire::ResponseError::new(
            -32001, "nope",
        )));
        assert_eq!(remote.code, ErrorCode::RemoteError);
        assert_eq!(remote.rpc_code, Some(-32001));
        let lost = ServeError::from(&CallError::HostShutDown);
        assert_eq!(lost.code.as_str(), "host_shut_down");
        assert_eq!(lost.rpc_code, None);
    }
}
