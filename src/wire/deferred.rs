//! Decoding a request with its `params.context` member kept as JSON text.
//!
//! Every request the host sends an extension carries an execution context (section
//! 2.7: `workspace`, `execution_scope`, `host`, and from API 0.2 on `resource_owner`),
//! the same for every request of a generation, and most handlers never read it.
//! Parsed into a `Value`, it was the larger part of an SDK extension's work per
//! `tool/call`: a map per object, a string per member name and value, all allocated
//! on the reader thread and freed on a worker. An SDK echo extension measured under
//! callgrind spent 44 thousand instructions per call on API 0.4 and 34 thousand on API
//! 0.1; with an empty context, 25 and 23 thousand (`benches/README.md`).
//!
//! [`decode_deferring_context`] reads the frame as [`super::decode`] does, except that a
//! request's `params.context` is kept as one [`RawValue`] and left out of `params`. The
//! text is still checked here as JSON: its grammar, its escapes and its UTF-8. Three
//! checks that a `Value` adds are left to whoever parses the text later: a `\u` escape
//! that is an unpaired surrogate, a number beyond an `f64` (`1e400`), and nesting deeper
//! than serde_json's limit of 128. Those are limits of the parser rather than of JSON
//! (RFC 8259, sections 6, 8.2 and 9; JSONTestSuite leaves each to the parser, and a
//! test here runs its files).
//!
//! Only requests keep their context as text: in a notification's params a `context`
//! member is parsed back into the map, so a notification reads exactly as with
//! [`super::decode`].

use std::fmt;

use serde::de::value::SeqAccessDeserializer;
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::message::{
    classify, classify_envelope, decode_envelope, parse_json, FrameError, Message,
};

/// The member of a request's params that [`decode_deferring_context`] keeps as text.
const CONTEXT: &str = "context";

/// A request's `params` with its `context` member, when it has one, kept as text.
#[derive(Debug)]
pub(crate) struct ContextDeferred {
    /// The params without `context`; any JSON value, as given.
    params: Value,
    /// The last `context` member of an object `params`.
    context: Option<Box<RawValue>>,
}

impl<'de> Deserialize<'de> for ContextDeferred {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<ContextDeferred, D::Error> {
        deserializer.deserialize_any(ContextDeferredVisitor)
    }
}

struct ContextDeferredVisitor;

impl ContextDeferredVisitor {
    fn value(params: Value) -> ContextDeferred {
        ContextDeferred {
            params,
            context: None,
        }
    }
}

impl<'de> Visitor<'de> for ContextDeferredVisitor {
    type Value = ContextDeferred;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ContextDeferred, A::Error> {
        let mut params = Map::new();
        let mut context = None;
        while let Some(name) = map.next_key::<String>()? {
            if name == CONTEXT {
                context = Some(map.next_value::<Box<RawValue>>()?);
            } else {
                params.insert(name, map.next_value()?);
            }
        }
        Ok(ContextDeferred {
            params: Value::Object(params),
            context,
        })
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<ContextDeferred, A::Error> {
        Value::deserialize(SeqAccessDeserializer::new(seq)).map(Self::value)
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<ContextDeferred, E> {
        Ok(Self::value(Value::Bool(v)))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<ContextDeferred, E> {
        Ok(Self::value(Value::from(v)))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<ContextDeferred, E> {
        Ok(Self::value(Value::from(v)))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<ContextDeferred, E> {
        Ok(Self::value(Value::from(v)))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<ContextDeferred, E> {
        Ok(Self::value(Value::from(v)))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<ContextDeferred, E> {
        Ok(Self::value(Value::String(v)))
    }

    fn visit_unit<E: de::Error>(self) -> Result<ContextDeferred, E> {
        Ok(Self::value(Value::Null))
    }
}

/// Decodes and classifies one JSON-RPC frame (without its LF) as [`super::decode`] does,
/// but returns a request's `params.context` as JSON text beside the message instead
/// of inside its params (see the module documentation for what is checked when).
pub(crate) fn decode_deferring_context(
    frame: &[u8],
) -> Result<(Message, Option<Box<RawValue>>), FrameError> {
    let Some(mut envelope) = decode_envelope::<ContextDeferred>(frame)? else {
        return Ok((classify(parse_json(frame)?)?, None));
    };
    let context = envelope.params.as_mut().and_then(|p| p.context.take());
    let message = classify_envelope(envelope.map_params(|p| p.params))?;
    match (message, context) {
        (Message::Notification(mut notification), Some(context)) => {
            let parsed = parse_json(context.get().as_bytes())?;
            if let Some(Value::Object(params)) = &mut notification.params {
                params.insert(CONTEXT.to_owned(), parsed);
            }
            Ok((Message::Notification(notification), None))
        }
        (message @ Message::Request(_), context) => Ok((message, context)),
        (message, _) => Ok((message, None)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::decode;

    /// `message`, a request, with `context` put back into its params.
    fn rejoin(message: Message, context: Value) -> Message {
        let Message::Request(mut request) = message else {
            panic!("a context beside a message that is not a request: {message:?}");
        };
        let Some(Value::Object(params)) = &mut request.params else {
            panic!("a context outside object params: {request:?}");
        };
        params.insert(CONTEXT.into(), context);
        Message::Request(request)
    }

    /// The deferring decode of `frame`, with the context parsed back into the params:
    /// what [`decode`] makes of it.
    fn rejoined(frame: &str) -> Result<Message, FrameError> {
        let (message, context) = decode_deferring_context(frame.as_bytes())?;
        Ok(match context {
            Some(context) => rejoin(message, serde_json::from_str(context.get()).unwrap()),
            None => message,
        })
    }

    #[test]
    fn a_request_keeps_its_context_as_text_and_loses_nothing_else() {
        let frame = r#"{"jsonrpc":"2.0","id":7,"method":"tool/call","params":{"name":"echo","context":{"workspace":"/w","host":{"model":null}},"arguments":{"a":[1,2]}}}"#;
        let (message, context) = decode_deferring_context(frame.as_bytes()).unwrap();
        let Message::Request(request) = &message else {
            panic!("not a request: {message:?}");
        };
        assert_eq!(
            context.unwrap().get(),
            r#"{"workspace":"/w","host":{"model":null}}"#
        );
        assert_eq!(
            request.params,
            Some(serde_json::json!({"name": "echo", "arguments": {"a": [1, 2]}}))
        );
        assert_eq!(rejoined(frame), decode(frame.as_bytes()));
    }

    #[test]
    fn every_other_frame_decodes_as_without_deferring() {
        for frame in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tool/call","params":{"name":"x"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tool/call","params":{"context":1,"context":{"b":2}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tool/call","params":[{"context":1}]}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tool/call","params":"context"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tool/call","params":null}"#,
            r#"{"jsonrpc":"2.0","method":"lifecycle/x","params":{"context":{"w":"/"},"n":1}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"context":{"a":1}},"params":{"context":2}}"#,
            r#"{"jsonrpc":"1.0","id":1,"method":"tool/call","params":{"context":{}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tool/call","params":{"context":{]}}"#,
            r#"[1]"#,
            r#"  "#,
        ] {
            match (rejoined(frame), decode(frame.as_bytes())) {
                (Ok(deferred), Ok(whole)) => assert_eq!(deferred, whole, "{frame}"),
                (Err(_), Err(_)) => {}
                (deferred, whole) => panic!("{frame}: {deferred:?} against {whole:?}"),
            }
        }
    }

    #[test]
    fn a_request_context_with_an_unpaired_surrogate_is_left_to_its_reader() {
        let frame = r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"context":"\ud800"}}"#;
        let (_, context) = decode_deferring_context(frame.as_bytes()).unwrap();
        let context = context.unwrap();
        assert_eq!(context.get(), r#""\ud800""#);
        assert!(serde_json::from_str::<Value>(context.get()).is_err());
    }

    #[test]
    fn a_notification_context_is_checked_as_strictly_as_by_a_value() {
        let frame = r#"{"jsonrpc":"2.0","method":"x","params":{"context":"\ud800"}}"#;
        assert!(matches!(
            decode_deferring_context(frame.as_bytes()),
            Err(FrameError::Parse { .. })
        ));
        assert!(decode(frame.as_bytes()).is_err());
    }

    #[test]
    fn invalid_utf8_in_a_context_is_a_parse_error() {
        let frame =
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":{\"context\":\"\xff\"}}";
        assert!(matches!(
            decode_deferring_context(frame),
            Err(FrameError::Parse { .. })
        ));
    }

    #[test]
    fn every_json_test_suite_file_as_a_context_decodes_as_without_deferring() {
        // nst/JSONTestSuite, vendored for tests/json_conformance.rs: each file's bytes
        // become a request's context. Where the whole frame decodes, the deferring
        // decode gives the same message; where it does not, neither does the deferring
        // decode, but for the checks left to the context's reader, all on files the
        // suite leaves to the parser (`i_`).
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/json-parsing/test_parsing");
        let mut left_to_reader = Vec::new();
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let mut frame =
                br#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"context":"#.to_vec();
            frame.extend_from_slice(&std::fs::read(&path).unwrap());
            frame.extend_from_slice(b"}}");
            let whole = decode(&frame);
            match decode_deferring_context(&frame) {
                Ok((message, context)) => {
                    let Some(context) = context else {
                        panic!("{path:?}: no context kept");
                    };
                    match (whole, serde_json::from_str::<Value>(context.get())) {
                        (Ok(whole), Ok(parsed)) => {
                            assert_eq!(rejoin(message, parsed), whole, "{path:?}");
                        }
                        (Err(_), Err(e)) => {
                            let reason = e.to_string();
                            let name = path.file_name().unwrap().to_string_lossy();
                            assert!(
                                name.starts_with("i_")
                                    && ["escape", "recursion limit", "number out of range"]
                                        .iter()
                                        .any(|why| reason.contains(why)),
                                "{path:?}: {reason}"
                            );
                            left_to_reader.push(path);
                        }
                        (whole, parsed) => panic!("{path:?}: {whole:?} against {parsed:?}"),
                    }
                }
                Err(_) => assert!(whole.is_err(), "{path:?}: only the deferring decode failed"),
            }
        }
        assert!(
            !left_to_reader.is_empty(),
            "the suite has unpaired surrogates"
        );
    }
}
