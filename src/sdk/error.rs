//! Errors of the extension side: what a handler returns, what a host round trip can
//! fail with, and why [`super::Extension::run`] stopped.

use std::fmt;
use std::io;

use serde_json::Value;

use crate::manifest::ApiVersion;
use crate::wire::codes;
use crate::wire::{FrameError, ResponseError};

/// A handler's failure, answered to the host as a JSON-RPC error response.
///
/// A tool that ran and failed in a way the model should see returns
/// `Ok(ToolOutput::error(..))` instead; this type is for protocol-level failures such
/// as invalid arguments or cancellation.
#[derive(Clone, Debug, PartialEq)]
pub struct HandlerError {
    code: i64,
    message: String,
    data: Option<Value>,
}

impl HandlerError {
    /// An error with a JSON-RPC `code` (section 3; extension-specific errors use
    /// -32000 to -32099) and a short `message`.
    pub fn new(code: i64, message: impl Into<String>) -> HandlerError {
        HandlerError {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// Invalid parameters (-32602, section 3).
    pub fn invalid_params(message: impl Into<String>) -> HandlerError {
        HandlerError::new(codes::INVALID_PARAMS, message)
    }

    /// An internal error (-32603).
    pub fn internal(message: impl Into<String>) -> HandlerError {
        HandlerError::new(codes::INTERNAL_ERROR, message)
    }

    /// The request was cancelled by the host (-32800, section 1.9).
    pub fn cancelled() -> HandlerError {
        HandlerError::new(codes::REQUEST_CANCELLED, "request cancelled")
    }

    /// Adds the optional `data` member of the error object.
    pub fn with_data(mut self, data: Value) -> HandlerError {
        self.data = Some(data);
        self
    }

    /// The JSON-RPC error code.
    pub fn code(&self) -> i64 {
        self.code
    }

    /// The error message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The optional `data` member.
    pub fn data(&self) -> Option<&Value> {
        self.data.as_ref()
    }

    /// True for the cancellation code -32800.
    pub fn is_cancelled(&self) -> bool {
        self.code == codes::REQUEST_CANCELLED
    }

    /// The `error` object sent on the wire.
    pub fn to_response_error(&self) -> ResponseError {
        ResponseError {
            code: self.code,
            message: self.message.clone(),
            data: self.data.clone(),
        }
    }
}

impl fmt::Display for HandlerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (code {})", self.message, self.code)
    }
}

impl std::error::Error for HandlerError {}

impl From<ChildRequestError> for HandlerError {
    /// Cancellation stays cancellation (-32800); a host error keeps its code; anything
    /// else is an internal error (-32603).
    fn from(error: ChildRequestError) -> HandlerError {
        match error {
            ChildRequestError::Cancelled => HandlerError::cancelled(),
            ChildRequestError::Host(e) => HandlerError {
                code: e.code,
                message: e.message,
                data: e.data,
            },
            other => HandlerError::internal(other.to_string()),
        }
    }
}

impl From<io::Error> for HandlerError {
    /// An I/O failure inside a handler is an internal error (-32603).
    fn from(error: io::Error) -> HandlerError {
        HandlerError::internal(error.to_string())
    }
}

/// Why an extension-originated request (`confirmation/request`, `input/request`, ...)
/// did not produce a result.
#[derive(Clone, Debug, PartialEq)]
pub enum ChildRequestError {
    /// The host answered with a JSON-RPC error.
    Host(ResponseError),
    /// The host's answer did not have the documented shape.
    MalformedAnswer {
        /// The method that was asked.
        method: &'static str,
    },
    /// The handler's own request was cancelled while waiting, or the host cancelled
    /// the child request (section 1.9).
    Cancelled,
    /// The connection ended (shutdown or stdin EOF) before the host answered.
    Closed,
    /// API 0.2/0.4 operation-scoped requests need an active host request as parent
    /// (section 2), and this context has none.
    NoParent,
    /// The method does not exist on the selected API version (for example
    /// `input/request` on API 0.1).
    Unsupported {
        /// The method that was asked.
        method: &'static str,
        /// The selected API version.
        api_version: ApiVersion,
    },
    /// The request would break a protocol rule or bound (blank or oversized prompt,
    /// outstanding requests, ids per generation, frame size), so it was not sent.
    Invalid(&'static str),
    /// API 0.3: the contract did not select the method, so it may not be sent.
    NotNegotiated {
        /// The method that was asked.
        method: &'static str,
    },
    /// API 0.3: the host's answer broke the envelope rules (closed envelope, error
    /// object, ...), so it carries no usable outcome.
    InvalidResponse(FrameError),
    /// A Wave-1 request refused locally before anything was written: its feature was
    /// not negotiated, or it breaks the method's shape or a bound (section 2.19).
    Refused(crate::services::bound::ServiceRefusal),
    /// A composition answer's sidecar file failed the reader's checks (section 2.25);
    /// it was unlinked.
    Sidecar {
        /// Which check, in words.
        reason: String,
    },
}

impl fmt::Display for ChildRequestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChildRequestError::Host(e) => write!(f, "host refused the request: {e}"),
            ChildRequestError::MalformedAnswer { method } => {
                write!(f, "the host's answer to {method} is malformed")
            }
            ChildRequestError::Cancelled => f.write_str("the request was cancelled"),
            ChildRequestError::Closed => f.write_str("the connection to the host closed"),
            ChildRequestError::NoParent => {
                f.write_str("no active host request to use as parent_request_id")
            }
            ChildRequestError::Unsupported {
                method,
                api_version,
            } => write!(f, "{method} is not available on API {api_version}"),
            ChildRequestError::Invalid(what) => write!(f, "protocol bound exceeded: {what}"),
            ChildRequestError::NotNegotiated { method } => {
                write!(f, "{method} was not negotiated in the API 0.3 contract")
            }
            ChildRequestError::InvalidResponse(e) => {
                write!(f, "the host's answer is not a valid response: {e}")
            }
            ChildRequestError::Refused(refusal) => write!(f, "refused before sending: {refusal}"),
            ChildRequestError::Sidecar { reason } => write!(f, "the answer's sidecar: {reason}"),
        }
    }
}

impl std::error::Error for ChildRequestError {}

/// Why [`super::Extension::run`] returned an error.
#[derive(Debug)]
pub enum RunError {
    /// Reading stdin failed.
    Io(io::Error),
    /// `OCTET_EXTENSION_API_VERSION` holds something other than 0.1, 0.2, 0.3 or 0.4.
    InvalidApiVersion(String),
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::Io(e) => write!(f, "extension I/O failed: {e}"),
            RunError::InvalidApiVersion(text) => write!(
                f,
                "OCTET_EXTENSION_API_VERSION is {text:?}, not one of 0.1, 0.2, 0.3, 0.4"
            ),
        }
    }
}

impl std::error::Error for RunError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RunError::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl From<io::Error> for RunError {
    fn from(error: io::Error) -> RunError {
        RunError::Io(error)
    }
}

impl From<RunError> for io::Error {
    /// Lets `run()` be used where an `io::Result` is expected.
    fn from(error: RunError) -> io::Error {
        match error {
            RunError::Io(e) => e,
            other => io::Error::new(io::ErrorKind::Unsupported, other),
        }
    }
}
