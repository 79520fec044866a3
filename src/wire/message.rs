//! JSON-RPC 2.0 envelopes: decoding one frame into a classified [`Message`], and encoding
//! messages into frames.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::canonical::CanonicalError;
use super::envelope::Envelope;
use super::id::{IdError, RequestId};
use crate::limits::MAX_FRAME_BYTES;

/// A request: a method call that expects a response with the same id.
#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    /// The id the response must carry.
    pub id: RequestId,
    /// The method name, such as `tool/call`.
    pub method: String,
    /// The `params` member, when present.
    pub params: Option<Value>,
}

/// A notification: a method call without an id, never answered.
#[derive(Clone, Debug, PartialEq)]
pub struct Notification {
    /// The method name, such as `$/progress`.
    pub method: String,
    /// The `params` member, when present.
    pub params: Option<Value>,
}

/// A response to a request, carrying either a result or an error.
#[derive(Clone, Debug, PartialEq)]
pub struct Response {
    /// The id of the request this answers.
    pub id: RequestId,
    /// `Ok(result)` or `Err(error)`.
    pub outcome: Result<Value, ResponseError>,
}

/// The `error` member of an error response.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ResponseError {
    /// The JSON-RPC error code (see [`super::codes`]).
    pub code: i64,
    /// A short description.
    pub message: String,
    /// Optional extra data.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl ResponseError {
    /// An error with `code` and `message` and no data.
    pub fn new(code: i64, message: impl Into<String>) -> ResponseError {
        ResponseError {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// This error as API 0.3 sends it: the exact message of the error table for its
    /// code (SUPPLEMENT "Error table (code and message exact)"), with the words it
    /// carried moved into `data.reason` so that the detail is not lost. An error whose
    /// code the table does not list, or whose message already is the table's, is
    /// returned unchanged; `data` that is not an object is kept as it is.
    pub fn in_v0_3_table(mut self) -> ResponseError {
        let Some(exact) = super::codes::v0_3_message(self.code) else {
            return self;
        };
        if self.message == exact {
            return self;
        }
        let reason = std::mem::replace(&mut self.message, exact.to_string());
        match &mut self.data {
            None => self.data = Some(serde_json::json!({ "reason": reason })),
            Some(Value::Object(map)) => {
                map.entry("reason").or_insert(Value::String(reason));
            }
            Some(_) => {}
        }
        self
    }
}

impl fmt::Display for ResponseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (code {})", self.message, self.code)
    }
}

/// One classified JSON-RPC message.
#[derive(Clone, Debug, PartialEq)]
pub enum Message {
    /// A request (has `method` and `id`).
    Request(Request),
    /// A notification (has `method`, no `id`).
    Notification(Notification),
    /// A response (has `id` and exactly one of `result` / `error`).
    Response(Response),
}

/// Why a frame is not a usable JSON-RPC message.
///
/// The host never answers such a frame with an error frame; it reports it as a
/// diagnostic and carries on (issue 2, "Wire").
#[derive(Clone, Debug, PartialEq)]
pub enum FrameError {
    /// The bytes are not one JSON value (including an empty or blank frame).
    Parse {
        /// serde_json's description, with line and column.
        message: String,
    },
    /// The value is valid JSON but not an object.
    NotObject,
    /// `jsonrpc` is missing or not exactly `"2.0"`.
    BadVersion,
    /// `method` is present but not a string.
    MethodNotString,
    /// `params` is present but neither an object nor an array.
    ParamsNotStructured,
    /// The `id` breaks the id rules.
    BadId(IdError),
    /// A response carries both `result` and `error`, or neither.
    ResultAndErrorMismatch,
    /// The `error` member is not `{code: integer, message: string, data?}`.
    BadErrorObject,
    /// An error response whose id is `null`: the peer could not read one of our frames.
    ErrorWithoutId(ResponseError),
    /// API 0.3: the frame is not `octet-canonical-json-v1` (including an empty frame and
    /// a CR before the LF).
    NotCanonical(CanonicalError),
    /// API 0.3: the envelope (or its `error` object) has a member the closed envelope
    /// does not allow.
    ClosedEnvelope {
        /// The member's name; inside the error object it is prefixed with `error.`.
        member: String,
    },
    /// API 0.3: a request or notification without `params`, or with `params: null`.
    MissingParams,
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameError::Parse { message } => write!(f, "invalid JSON: {message}"),
            FrameError::NotObject => f.write_str("frame is not a JSON object"),
            FrameError::BadVersion => f.write_str("`jsonrpc` is missing or not \"2.0\""),
            FrameError::MethodNotString => f.write_str("`method` is not a string"),
            FrameError::ParamsNotStructured => {
                f.write_str("`params` is neither an object nor an array")
            }
            FrameError::BadId(e) => write!(f, "invalid id: {e}"),
            FrameError::ResultAndErrorMismatch => {
                f.write_str("a response must carry exactly one of `result` and `error`")
            }
            FrameError::BadErrorObject => {
                f.write_str("`error` is not {code: integer, message: string}")
            }
            FrameError::ErrorWithoutId(e) => write!(f, "error response with null id: {e}"),
            FrameError::NotCanonical(e) => write!(f, "not octet-canonical-json-v1: {e}"),
            FrameError::ClosedEnvelope { member } => {
                write!(f, "the closed envelope does not allow member {member:?}")
            }
            FrameError::MissingParams => {
                f.write_str("`params` is required and must not be null on API 0.3")
            }
        }
    }
}

impl std::error::Error for FrameError {}

#[doc(hidden)]
/// Decodes and classifies one frame (without its LF).
///
/// The same as [`classify`] after [`parse_json`], for every input; an object is read
/// without building a map for its envelope (see `wire::envelope`).
pub fn decode(frame: &[u8]) -> Result<Message, FrameError> {
    match decode_envelope(frame)? {
        Some(envelope) => classify_envelope(envelope),
        None => classify(parse_json(frame)?),
    }
}

/// Reads an object frame's envelope, its `params` as a `P`, without building a map for
/// it. `None` when the frame's first token is not `{`: such a frame is left to the
/// `Value` path ([`parse_json`] and [`classify`]), so that its errors read the same.
pub(crate) fn decode_envelope<'a, P: Deserialize<'a>>(
    frame: &'a [u8],
) -> Result<Option<Envelope<P>>, FrameError> {
    let first = frame
        .iter()
        .find(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'));
    if first != Some(&b'{') {
        return Ok(None);
    }
    serde_json::from_slice(frame)
        .map(Some)
        .map_err(|e| FrameError::Parse {
            message: e.to_string(),
        })
}

#[doc(hidden)]
/// Parses one frame (without its LF) as exactly one JSON value, the first step of
/// [`decode`]. Empty or blank input, trailing data, invalid UTF-8 and nesting deeper
/// than serde_json's recursion limit are all [`FrameError::Parse`].
pub fn parse_json(frame: &[u8]) -> Result<Value, FrameError> {
    serde_json::from_slice(frame).map_err(|e| FrameError::Parse {
        message: e.to_string(),
    })
}

#[doc(hidden)]
/// Classifies an already decoded JSON value.
pub fn classify(value: Value) -> Result<Message, FrameError> {
    let Value::Object(map) = value else {
        return Err(FrameError::NotObject);
    };
    classify_envelope(Envelope::from_map(map))
}

/// Classifies an object's envelope members.
pub(crate) fn classify_envelope(envelope: Envelope) -> Result<Message, FrameError> {
    if envelope.jsonrpc != Some(true) {
        return Err(FrameError::BadVersion);
    }
    if let Some(method) = envelope.method {
        let Value::String(method) = method else {
            return Err(FrameError::MethodNotString);
        };
        let params = structured_params(envelope.params)?;
        return match &envelope.id {
            None => Ok(Message::Notification(Notification { method, params })),
            Some(id) => {
                let id = RequestId::from_value(id).map_err(FrameError::BadId)?;
                Ok(Message::Request(Request { id, method, params }))
            }
        };
    }
    let outcome = match (envelope.result, envelope.error) {
        (Some(result), None) => Ok(result),
        (None, Some(error)) => Err(decode_error_object(error)?),
        _ => return Err(FrameError::ResultAndErrorMismatch),
    };
    let id = match &envelope.id {
        None => return Err(FrameError::BadId(IdError::Null)),
        Some(id) => RequestId::from_value(id),
    };
    match (id, outcome) {
        (Ok(id), outcome) => Ok(Message::Response(Response { id, outcome })),
        (Err(IdError::Null), Err(error)) => Err(FrameError::ErrorWithoutId(error)),
        (Err(e), _) => Err(FrameError::BadId(e)),
    }
}

fn structured_params(params: Option<Value>) -> Result<Option<Value>, FrameError> {
    match params {
        None => Ok(None),
        Some(p @ (Value::Object(_) | Value::Array(_))) => Ok(Some(p)),
        Some(_) => Err(FrameError::ParamsNotStructured),
    }
}

fn decode_error_object(error: Value) -> Result<ResponseError, FrameError> {
    let Value::Object(mut map) = error else {
        return Err(FrameError::BadErrorObject);
    };
    let code = map
        .get("code")
        .and_then(Value::as_i64)
        .ok_or(FrameError::BadErrorObject)?;
    let message = match map.remove("message") {
        Some(Value::String(m)) => m,
        _ => return Err(FrameError::BadErrorObject),
    };
    Ok(ResponseError {
        code,
        message,
        data: map.remove("data"),
    })
}

/// Why a message could not be encoded into a frame.
#[derive(Debug)]
pub enum EncodeError {
    /// The encoded frame, LF included, would exceed the frame bound.
    TooLarge {
        /// Encoded size including the LF.
        bytes: usize,
        /// The bound that applied.
        limit: usize,
    },
    /// serde_json failed (a map with non-string keys, for example).
    Json(serde_json::Error),
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EncodeError::TooLarge { bytes, limit } => {
                write!(f, "frame of {bytes} bytes exceeds the {limit}-byte bound")
            }
            EncodeError::Json(e) => write!(f, "cannot encode frame: {e}"),
        }
    }
}

impl std::error::Error for EncodeError {}

#[derive(Serialize)]
struct RequestFrame<'a, P: Serialize> {
    jsonrpc: &'static str,
    id: &'a RequestId,
    method: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    params: Option<&'a P>,
}

#[derive(Serialize)]
struct NotificationFrame<'a, P: Serialize> {
    jsonrpc: &'static str,
    method: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    params: Option<&'a P>,
}

#[derive(Serialize)]
struct ResultFrame<'a, R: Serialize> {
    jsonrpc: &'static str,
    id: &'a RequestId,
    result: &'a R,
}

#[derive(Serialize)]
struct ErrorFrame<'a> {
    jsonrpc: &'static str,
    id: &'a RequestId,
    error: &'a ResponseError,
}

fn finish(mut bytes: Vec<u8>, limit: usize) -> Result<Vec<u8>, EncodeError> {
    bytes.push(b'\n');
    if bytes.len() > limit {
        return Err(EncodeError::TooLarge {
            bytes: bytes.len(),
            limit,
        });
    }
    Ok(bytes)
}

#[doc(hidden)]
/// Encodes a request frame (LF included), bounded by `limit` bytes.
pub fn encode_request<P: Serialize>(
    id: &RequestId,
    method: &str,
    params: Option<&P>,
    limit: usize,
) -> Result<Vec<u8>, EncodeError> {
    let frame = RequestFrame {
        jsonrpc: "2.0",
        id,
        method,
        params,
    };
    // Room for a typical request (a `tool/call` with its execution context is about
    // 450 bytes), so it is written without growing the buffer.
    let mut bytes = Vec::with_capacity(512);
    serde_json::to_writer(&mut bytes, &frame).map_err(EncodeError::Json)?;
    finish(bytes, limit)
}

#[doc(hidden)]
/// Encodes a notification frame (LF included), bounded by `limit` bytes.
pub fn encode_notification<P: Serialize>(
    method: &str,
    params: Option<&P>,
    limit: usize,
) -> Result<Vec<u8>, EncodeError> {
    let frame = NotificationFrame {
        jsonrpc: "2.0",
        method,
        params,
    };
    finish(
        serde_json::to_vec(&frame).map_err(EncodeError::Json)?,
        limit,
    )
}

#[doc(hidden)]
/// Encodes a success response frame (LF included), bounded by `limit` bytes.
pub fn encode_result<R: Serialize>(
    id: &RequestId,
    result: &R,
    limit: usize,
) -> Result<Vec<u8>, EncodeError> {
    let frame = ResultFrame {
        jsonrpc: "2.0",
        id,
        result,
    };
    finish(
        serde_json::to_vec(&frame).map_err(EncodeError::Json)?,
        limit,
    )
}

#[doc(hidden)]
/// Encodes an error response frame (LF included), bounded by `limit` bytes.
pub fn encode_error(
    id: &RequestId,
    error: &ResponseError,
    limit: usize,
) -> Result<Vec<u8>, EncodeError> {
    let frame = ErrorFrame {
        jsonrpc: "2.0",
        id,
        error,
    };
    finish(
        serde_json::to_vec(&frame).map_err(EncodeError::Json)?,
        limit,
    )
}

#[doc(hidden)]
/// Encodes any message with the default frame bound; used by tests and tools.
pub fn encode(message: &Message) -> Result<Vec<u8>, EncodeError> {
    match message {
        Message::Request(r) => encode_request(&r.id, &r.method, r.params.as_ref(), MAX_FRAME_BYTES),
        Message::Notification(n) => {
            encode_notification(&n.method, n.params.as_ref(), MAX_FRAME_BYTES)
        }
        Message::Response(Response {
            id,
            outcome: Ok(result),
        }) => encode_result(id, result, MAX_FRAME_BYTES),
        Message::Response(Response {
            id,
            outcome: Err(error),
        }) => encode_error(id, error, MAX_FRAME_BYTES),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn classifies_the_four_shapes() {
        let m = decode(br#"{"jsonrpc":"2.0","id":1,"method":"tool/call","params":{}}"#).unwrap();
        assert!(matches!(
            m,
            Message::Request(Request {
                id: RequestId::Number(1),
                ..
            })
        ));
        let m = decode(br#"{"jsonrpc":"2.0","method":"notification","params":{"a":1}}"#).unwrap();
        assert!(matches!(m, Message::Notification(_)));
        let m = decode(br#"{"jsonrpc":"2.0","id":"x","result":null}"#).unwrap();
        assert_eq!(
            m,
            Message::Response(Response {
                id: RequestId::String("x".into()),
                outcome: Ok(json!(null))
            })
        );
        let m =
            decode(br#"{"jsonrpc":"2.0","id":3,"error":{"code":-32800,"message":"cancelled"}}"#)
                .unwrap();
        assert_eq!(
            m,
            Message::Response(Response {
                id: RequestId::Number(3),
                outcome: Err(ResponseError::new(-32800, "cancelled")),
            })
        );
    }

    #[test]
    fn rejects_malformed_envelopes() {
        assert!(matches!(decode(b""), Err(FrameError::Parse { .. })));
        assert!(matches!(decode(b" "), Err(FrameError::Parse { .. })));
        assert_eq!(decode(b"[1]"), Err(FrameError::NotObject));
        assert_eq!(
            decode(br#"{"id":1,"result":1}"#),
            Err(FrameError::BadVersion)
        );
        assert_eq!(
            decode(br#"{"jsonrpc":"1.0","id":1,"result":1}"#),
            Err(FrameError::BadVersion)
        );
        assert_eq!(
            decode(br#"{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":""}}"#),
            Err(FrameError::ResultAndErrorMismatch)
        );
        assert_eq!(
            decode(br#"{"jsonrpc":"2.0","id":1}"#),
            Err(FrameError::ResultAndErrorMismatch)
        );
        assert_eq!(
            decode(br#"{"jsonrpc":"2.0","id":-1,"result":1}"#),
            Err(FrameError::BadId(IdError::NotUnsigned64))
        );
        assert_eq!(
            decode(br#"{"jsonrpc":"2.0","method":5}"#),
            Err(FrameError::MethodNotString)
        );
        assert_eq!(
            decode(br#"{"jsonrpc":"2.0","method":"m","params":3}"#),
            Err(FrameError::ParamsNotStructured)
        );
        assert_eq!(
            decode(br#"{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m"}}"#),
            Err(FrameError::BadErrorObject)
        );
        assert_eq!(
            decode(br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse"}}"#),
            Err(FrameError::ErrorWithoutId(ResponseError::new(
                -32700, "parse"
            )))
        );
    }

    #[test]
    fn encodes_one_line_with_jsonrpc_first() {
        let bytes =
            encode_request(&RequestId::Number(7), "shutdown", Some(&json!({})), 1024).unwrap();
        assert_eq!(
            bytes,
            b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"shutdown\",\"params\":{}}\n"
        );
        let err = encode_notification("x", Some(&json!({"d": "a".repeat(100)})), 64).unwrap_err();
        assert!(matches!(err, EncodeError::TooLarge { limit: 64, .. }));
    }

    #[test]
    fn round_trips_every_shape() {
        for text in [
            r#"{"jsonrpc":"2.0","id":"c-1","method":"confirmation/request","params":{"prompt":"?"}}"#,
            r#"{"jsonrpc":"2.0","method":"notification","params":{"level":"info"}}"#,
            r#"{"jsonrpc":"2.0","id":2,"result":{"content":"x","is_error":false}}"#,
            r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"no","data":[1]}}"#,
        ] {
            let message = decode(text.as_bytes()).unwrap();
            let frame = encode(&message).unwrap();
            assert_eq!(decode(&frame[..frame.len() - 1]).unwrap(), message);
        }
    }
}
