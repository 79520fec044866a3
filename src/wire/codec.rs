//! The two wire encodings a generation can speak, behind one type: [`Codec::JsonRpc`]
//! (API 0.1, 0.2 and 0.4) and [`Codec::Canonical`] (API 0.3, SUPPLEMENT "API 0.3
//! (canonical wire)").
//!
//! The manifest selects the API version, so the codec is known before the child
//! starts ([`Codec::for_api`]) and never changes for a generation.
//!
//! # The canonical wire
//!
//! Every frame is `octet-canonical-json-v1` ([`super::canonical`]) followed by one LF,
//! and the envelopes are closed:
//!
//! | message | members, in canonical order |
//! |---|---|
//! | request | `id`, `jsonrpc`, `method`, `params` |
//! | notification | `jsonrpc`, `method`, `params` (never `id`) |
//! | success response | `id`, `jsonrpc`, `result` |
//! | error response | `error`, `id`, `jsonrpc`, with `error` = `code`, `data`?, `message` |
//!
//! Any other member is [`FrameError::ClosedEnvelope`]. `params` is required and
//! non-null ([`FrameError::MissingParams`]); a message without parameters carries
//! `{}`. A frame that is not canonical (floats, unsorted keys, whitespace, a CR, an
//! empty frame, ...) is [`FrameError::NotCanonical`].
//!
//! Request ids on the canonical wire are the protocol's ids ([`RequestId`]):
//! non-negative integers, here also at most 2^53-1 (larger ones are not canonical), or
//! non-empty strings of at most 256 bytes (an empty one is [`IdError::EmptyString`]).
//! Encoding a numeric id above 2^53-1 fails with [`CodecEncodeError::NotCanonical`].
//! The only `null` id is that of an error response to a frame whose id could not be
//! read ([`Codec::encode_error_without_id`]); decoding one yields
//! [`FrameError::ErrorWithoutId`] as on the JSON-RPC wire.
//!
//! # Frame limits
//!
//! Every `limit` passed to the encoders, like the transport's frame limit, is the
//! largest frame in bytes *including* its LF, for both codecs. The API 0.3 contract's
//! `max_frame_bytes` *excludes* the LF, so on the canonical wire pass
//! [`canonical_frame_limit`]`(max_frame_bytes)`, which is `max_frame_bytes + 1`.

use std::fmt;

use serde::Serialize;
#[cfg(feature = "sdk")]
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::canonical::{decode_canonical, encode_canonical_frame, CanonicalError};
use super::id::{IdError, RequestId};
use super::message::{
    classify, decode, encode_error, encode_notification, encode_request, encode_result,
    EncodeError, FrameError, Message, Response, ResponseError,
};
use crate::limits::{CANONICAL_MAX_FRAME_BYTES, MAX_FRAME_BYTES};
use crate::manifest::ApiVersion;

/// The wire encoding of one generation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Codec {
    /// JSON-RPC 2.0, one JSON object per line (API 0.1, 0.2 and 0.4).
    #[default]
    JsonRpc,
    /// The API 0.3 canonical wire: `octet-canonical-json-v1` frames with closed
    /// envelopes (see the module documentation).
    Canonical,
}

/// The transport frame limit (LF included) for an API 0.3 `max_frame_bytes` (LF
/// excluded): `max_frame_bytes + 1`, saturating.
pub fn canonical_frame_limit(max_frame_bytes: usize) -> usize {
    max_frame_bytes.saturating_add(1)
}

/// Why a message could not be encoded into a frame.
#[derive(Debug)]
pub enum CodecEncodeError {
    /// The encoded frame, LF included, would exceed `limit`.
    TooLarge {
        /// Encoded size including the LF.
        bytes: usize,
        /// The bound that applied, LF included.
        limit: usize,
    },
    /// Canonical wire: a value has no canonical encoding (a float, an integer beyond
    /// +-(2^53-1), such as a numeric id, or nesting deeper than 32). The offset counts
    /// from the start of the frame.
    NotCanonical(CanonicalError),
    /// `params` is neither an object, an array, nor `null` (no params).
    ParamsNotStructured,
    /// JSON-RPC wire: serde_json failed.
    Json(serde_json::Error),
}

impl fmt::Display for CodecEncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CodecEncodeError::TooLarge { bytes, limit } => {
                write!(f, "frame of {bytes} bytes exceeds the {limit}-byte bound")
            }
            CodecEncodeError::NotCanonical(e) => {
                write!(f, "cannot encode a canonical frame: {e}")
            }
            CodecEncodeError::ParamsNotStructured => {
                f.write_str("`params` must be an object, an array or null")
            }
            CodecEncodeError::Json(e) => write!(f, "cannot encode frame: {e}"),
        }
    }
}

impl std::error::Error for CodecEncodeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CodecEncodeError::NotCanonical(e) => Some(e),
            CodecEncodeError::Json(e) => Some(e),
            _ => None,
        }
    }
}

impl From<EncodeError> for CodecEncodeError {
    fn from(error: EncodeError) -> CodecEncodeError {
        match error {
            EncodeError::TooLarge { bytes, limit } => CodecEncodeError::TooLarge { bytes, limit },
            EncodeError::Json(e) => CodecEncodeError::Json(e),
        }
    }
}

/// The members a canonical request may carry.
const REQUEST_MEMBERS: [&str; 4] = ["id", "jsonrpc", "method", "params"];
/// The members a canonical response may carry.
const RESPONSE_MEMBERS: [&str; 4] = ["error", "id", "jsonrpc", "result"];
/// The members a canonical error object may carry.
const ERROR_MEMBERS: [&str; 3] = ["code", "data", "message"];

impl Codec {
    /// The codec of `api`: [`Codec::Canonical`] for API 0.3, [`Codec::JsonRpc`]
    /// otherwise.
    pub fn for_api(api: ApiVersion) -> Codec {
        match api {
            ApiVersion::V0_3 => Codec::Canonical,
            ApiVersion::V0_1 | ApiVersion::V0_2 | ApiVersion::V0_4 => Codec::JsonRpc,
        }
    }

    /// The transport frame limit (LF included) to apply before negotiation settles
    /// one: [`MAX_FRAME_BYTES`] for JSON-RPC; for the canonical wire the offered
    /// [`CANONICAL_MAX_FRAME_BYTES`] plus the LF.
    pub fn initial_frame_limit(self) -> usize {
        match self {
            Codec::JsonRpc => MAX_FRAME_BYTES,
            Codec::Canonical => canonical_frame_limit(CANONICAL_MAX_FRAME_BYTES),
        }
    }

    /// Encodes a request frame (LF included) of at most `limit` bytes.
    ///
    /// `params` is `null` when the request has none: JSON-RPC then omits the member,
    /// the canonical wire writes `{}`.
    pub fn encode_request(
        self,
        id: &RequestId,
        method: &str,
        params: &Value,
        limit: usize,
    ) -> Result<Vec<u8>, CodecEncodeError> {
        let params = structured(params)?;
        match self {
            Codec::JsonRpc => Ok(encode_request(id, method, params, limit)?),
            Codec::Canonical => {
                let mut envelope = envelope();
                envelope.insert("id".into(), id.to_value());
                envelope.insert("method".into(), Value::from(method));
                envelope.insert("params".into(), canonical_params(params));
                canonical_frame(envelope, limit)
            }
        }
    }

    /// [`Codec::encode_request`] for params that serialize to a JSON object, without
    /// building a `Value` on the JSON-RPC wire (the canonical wire needs one to sort
    /// and check).
    pub fn encode_request_object<P: Serialize>(
        self,
        id: &RequestId,
        method: &str,
        params: &P,
        limit: usize,
    ) -> Result<Vec<u8>, CodecEncodeError> {
        match self {
            Codec::JsonRpc => Ok(encode_request(id, method, Some(params), limit)?),
            Codec::Canonical => {
                let params = serde_json::to_value(params).map_err(CodecEncodeError::Json)?;
                self.encode_request(id, method, &params, limit)
            }
        }
    }

    /// Encodes a notification frame (LF included) of at most `limit` bytes; `params`
    /// as for [`Codec::encode_request`].
    pub fn encode_notification(
        self,
        method: &str,
        params: &Value,
        limit: usize,
    ) -> Result<Vec<u8>, CodecEncodeError> {
        let params = structured(params)?;
        match self {
            Codec::JsonRpc => Ok(encode_notification(method, params, limit)?),
            Codec::Canonical => {
                let mut envelope = envelope();
                envelope.insert("method".into(), Value::from(method));
                envelope.insert("params".into(), canonical_params(params));
                canonical_frame(envelope, limit)
            }
        }
    }

    /// Encodes a success response frame (LF included) of at most `limit` bytes.
    pub fn encode_result(
        self,
        id: &RequestId,
        result: &Value,
        limit: usize,
    ) -> Result<Vec<u8>, CodecEncodeError> {
        match self {
            Codec::JsonRpc => Ok(encode_result(id, result, limit)?),
            Codec::Canonical => {
                let mut envelope = envelope();
                envelope.insert("id".into(), id.to_value());
                envelope.insert("result".into(), result.clone());
                canonical_frame(envelope, limit)
            }
        }
    }

    /// Encodes an error response frame (LF included) of at most `limit` bytes.
    pub fn encode_error(
        self,
        id: &RequestId,
        error: &ResponseError,
        limit: usize,
    ) -> Result<Vec<u8>, CodecEncodeError> {
        match self {
            Codec::JsonRpc => Ok(encode_error(id, error, limit)?),
            Codec::Canonical => {
                let mut envelope = envelope();
                envelope.insert("id".into(), id.to_value());
                envelope.insert("error".into(), error_object(error));
                canonical_frame(envelope, limit)
            }
        }
    }

    /// Encodes an error response with `"id": null`, the answer to a frame whose id
    /// could not be read (JSON-RPC 2.0: parse errors and unreadable requests).
    pub fn encode_error_without_id(
        self,
        error: &ResponseError,
        limit: usize,
    ) -> Result<Vec<u8>, CodecEncodeError> {
        match self {
            Codec::JsonRpc => {
                let frame = NullIdErrorFrame {
                    jsonrpc: "2.0",
                    id: (),
                    error,
                };
                let mut bytes = serde_json::to_vec(&frame).map_err(CodecEncodeError::Json)?;
                bytes.push(b'\n');
                bounded(bytes, limit)
            }
            Codec::Canonical => {
                let mut envelope = envelope();
                envelope.insert("id".into(), Value::Null);
                envelope.insert("error".into(), error_object(error));
                canonical_frame(envelope, limit)
            }
        }
    }

    /// Encodes any message; a request or notification without params is encoded as
    /// with `null` params (see [`Codec::encode_request`]).
    pub fn encode(self, message: &Message, limit: usize) -> Result<Vec<u8>, CodecEncodeError> {
        let params = |p: &Option<Value>| p.clone().unwrap_or(Value::Null);
        match message {
            Message::Request(r) => self.encode_request(&r.id, &r.method, &params(&r.params), limit),
            Message::Notification(n) => {
                self.encode_notification(&n.method, &params(&n.params), limit)
            }
            Message::Response(Response {
                id,
                outcome: Ok(result),
            }) => self.encode_result(id, result, limit),
            Message::Response(Response {
                id,
                outcome: Err(error),
            }) => self.encode_error(id, error, limit),
        }
    }

    /// Decodes and classifies one frame, given without its LF.
    ///
    /// JSON-RPC: [`super::decode`]. Canonical: the frame must be canonical
    /// ([`FrameError::NotCanonical`]), an object, with a closed envelope
    /// ([`FrameError::ClosedEnvelope`], checked in key order), `jsonrpc` exactly
    /// `"2.0"`, and, for requests and notifications, non-null `params`
    /// ([`FrameError::MissingParams`]); then the JSON-RPC rules apply. Decoded requests
    /// and notifications always have `Some(params)`.
    pub fn decode(self, frame: &[u8]) -> Result<Message, FrameError> {
        match self {
            Codec::JsonRpc => decode(frame),
            Codec::Canonical => decode_canonical_message(frame),
        }
    }

    /// [`Codec::decode`], but a JSON-RPC request's `params.context` comes back as JSON
    /// text beside the message instead of inside its params (`wire::deferred`), for a
    /// reader that may never need it. The canonical wire leaves it in the params.
    #[cfg(feature = "sdk")]
    pub(crate) fn decode_deferring_context(
        self,
        frame: &[u8],
    ) -> Result<(Message, Option<Box<RawValue>>), FrameError> {
        match self {
            Codec::JsonRpc => super::deferred::decode_deferring_context(frame),
            Codec::Canonical => Ok((decode_canonical_message(frame)?, None)),
        }
    }
}

/// `params` as the JSON-RPC encoder takes it: `None` for `null`, structured otherwise.
fn structured(params: &Value) -> Result<Option<&Value>, CodecEncodeError> {
    match params {
        Value::Null => Ok(None),
        Value::Object(_) | Value::Array(_) => Ok(Some(params)),
        _ => Err(CodecEncodeError::ParamsNotStructured),
    }
}

/// The canonical `params` member: `{}` when there are none.
fn canonical_params(params: Option<&Value>) -> Value {
    params.cloned().unwrap_or_else(|| Value::Object(Map::new()))
}

/// An envelope holding `"jsonrpc": "2.0"`.
fn envelope() -> Map<String, Value> {
    let mut map = Map::new();
    map.insert("jsonrpc".into(), Value::from("2.0"));
    map
}

/// The `error` member: `code`, `message` and `data` when present.
fn error_object(error: &ResponseError) -> Value {
    let mut map = Map::new();
    map.insert("code".into(), Value::from(error.code));
    map.insert("message".into(), Value::from(error.message.as_str()));
    if let Some(data) = &error.data {
        map.insert("data".into(), data.clone());
    }
    Value::Object(map)
}

/// Encodes `envelope` canonically with its LF, within `limit` bytes.
fn canonical_frame(
    envelope: Map<String, Value>,
    limit: usize,
) -> Result<Vec<u8>, CodecEncodeError> {
    let mut bytes = Vec::new();
    encode_canonical_frame(&Value::Object(envelope), &mut bytes)
        .map_err(CodecEncodeError::NotCanonical)?;
    bounded(bytes, limit)
}

fn bounded(bytes: Vec<u8>, limit: usize) -> Result<Vec<u8>, CodecEncodeError> {
    if bytes.len() > limit {
        return Err(CodecEncodeError::TooLarge {
            bytes: bytes.len(),
            limit,
        });
    }
    Ok(bytes)
}

#[derive(Serialize)]
struct NullIdErrorFrame<'a> {
    jsonrpc: &'static str,
    id: (),
    error: &'a ResponseError,
}

/// [`Codec::decode`] for the canonical wire.
fn decode_canonical_message(frame: &[u8]) -> Result<Message, FrameError> {
    let value = decode_canonical(frame).map_err(FrameError::NotCanonical)?;
    let Value::Object(map) = &value else {
        return Err(FrameError::NotObject);
    };
    let is_call = map.contains_key("method");
    let allowed: &[&str] = if is_call {
        &REQUEST_MEMBERS
    } else {
        &RESPONSE_MEMBERS
    };
    if let Some(member) = map.keys().find(|k| !allowed.contains(&k.as_str())) {
        return Err(FrameError::ClosedEnvelope {
            member: member.clone(),
        });
    }
    match map.get("jsonrpc") {
        Some(Value::String(v)) if v == "2.0" => {}
        _ => return Err(FrameError::BadVersion),
    }
    if is_call && map.get("params").is_none_or(Value::is_null) {
        return Err(FrameError::MissingParams);
    }
    if map.get("id").and_then(Value::as_str) == Some("") {
        return Err(FrameError::BadId(IdError::EmptyString));
    }
    if let Some(Value::Object(error)) = map.get("error") {
        if let Some(member) = error.keys().find(|k| !ERROR_MEMBERS.contains(&k.as_str())) {
            return Err(FrameError::ClosedEnvelope {
                member: format!("error.{member}"),
            });
        }
    }
    classify(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn text(bytes: Vec<u8>) -> String {
        String::from_utf8(bytes).unwrap()
    }

    #[test]
    fn canonical_ids_are_never_the_empty_string() {
        let c = Codec::Canonical;
        let request = br#"{"id":"","jsonrpc":"2.0","method":"shutdown","params":{}}"#;
        assert_eq!(
            c.decode(request),
            Err(FrameError::BadId(IdError::EmptyString))
        );
        let response = br#"{"id":"","jsonrpc":"2.0","result":{}}"#;
        assert_eq!(
            c.decode(response),
            Err(FrameError::BadId(IdError::EmptyString))
        );
        // The JSON-RPC wire of the other versions keeps accepting it.
        assert!(Codec::JsonRpc.decode(request).is_ok());
    }

    #[test]
    fn canonical_envelopes_are_sorted_and_params_always_present() {
        let c = Codec::Canonical;
        let id = RequestId::Number(7);
        assert_eq!(
            text(
                c.encode_request(&id, "shutdown", &Value::Null, 1024)
                    .unwrap()
            ),
            "{\"id\":7,\"jsonrpc\":\"2.0\",\"method\":\"shutdown\",\"params\":{}}\n"
        );
        assert_eq!(
            text(
                c.encode_notification("$/cancelRequest", &json!({"id": 7}), 1024)
                    .unwrap()
            ),
            "{\"jsonrpc\":\"2.0\",\"method\":\"$/cancelRequest\",\"params\":{\"id\":7}}\n"
        );
        assert_eq!(
            text(
                c.encode_result(&id, &json!({"terminal": "shutdown"}), 1024)
                    .unwrap()
            ),
            "{\"id\":7,\"jsonrpc\":\"2.0\",\"result\":{\"terminal\":\"shutdown\"}}\n"
        );
        let error = ResponseError::new(-32601, "unknown or unnegotiated method");
        assert_eq!(
            text(
                c.encode_error(&RequestId::String("a".into()), &error, 1024)
                    .unwrap()
            ),
            "{\"error\":{\"code\":-32601,\"message\":\"unknown or unnegotiated method\"},\
             \"id\":\"a\",\"jsonrpc\":\"2.0\"}\n"
        );
        assert_eq!(
            text(
                c.encode_error_without_id(&ResponseError::new(-32700, "p"), 1024)
                    .unwrap()
            ),
            "{\"error\":{\"code\":-32700,\"message\":\"p\"},\"id\":null,\"jsonrpc\":\"2.0\"}\n"
        );
    }

    #[test]
    fn json_rpc_keeps_its_member_order_and_omits_null_params() {
        let c = Codec::JsonRpc;
        assert_eq!(
            text(
                c.encode_request(&RequestId::Number(1), "shutdown", &Value::Null, 1024)
                    .unwrap()
            ),
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"shutdown\"}\n"
        );
        assert_eq!(
            text(
                c.encode_error_without_id(&ResponseError::new(-32700, "p"), 1024)
                    .unwrap()
            ),
            "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"p\"}}\n"
        );
    }

    #[test]
    fn the_limit_includes_the_lf() {
        let c = Codec::Canonical;
        let frame = c.encode_notification("m", &json!({}), 1024).unwrap();
        let exact = frame.len();
        assert!(c.encode_notification("m", &json!({}), exact).is_ok());
        assert!(matches!(
            c.encode_notification("m", &json!({}), exact - 1),
            Err(CodecEncodeError::TooLarge { bytes, limit }) if bytes == exact && limit == exact - 1
        ));
        assert_eq!(canonical_frame_limit(CANONICAL_MAX_FRAME_BYTES), 1_048_577);
        assert_eq!(Codec::Canonical.initial_frame_limit(), 1_048_577);
        assert_eq!(Codec::JsonRpc.initial_frame_limit(), MAX_FRAME_BYTES);
    }

    #[test]
    fn canonical_encoding_rejects_floats_big_ids_and_scalar_params() {
        let c = Codec::Canonical;
        assert!(matches!(
            c.encode_result(&RequestId::Number(1), &json!({"x": 0.5}), 1024),
            Err(CodecEncodeError::NotCanonical(CanonicalError::Float { .. }))
        ));
        assert!(matches!(
            c.encode_result(&RequestId::Number(1 << 53), &json!({}), 1024),
            Err(CodecEncodeError::NotCanonical(
                CanonicalError::IntegerOutOfRange { .. }
            ))
        ));
        assert!(matches!(
            c.encode_notification("m", &json!(3), 1024),
            Err(CodecEncodeError::ParamsNotStructured)
        ));
        assert!(matches!(
            Codec::JsonRpc.encode_notification("m", &json!("x"), 1024),
            Err(CodecEncodeError::ParamsNotStructured)
        ));
    }

    #[test]
    fn for_api_selects_canonical_only_for_0_3() {
        for api in ApiVersion::ALL {
            let expected = if api == ApiVersion::V0_3 {
                Codec::Canonical
            } else {
                Codec::JsonRpc
            };
            assert_eq!(Codec::for_api(api), expected);
        }
        assert_eq!(Codec::default(), Codec::JsonRpc);
    }
}
