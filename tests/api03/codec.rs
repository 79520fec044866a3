//! `Codec::Canonical`: round trips of every message shape, byte-exact envelopes, and
//! every closed-envelope and canonical-form rejection.

use octet_host::wire::canonical::CanonicalError;
use octet_host::wire::codec::{canonical_frame_limit, Codec, CodecEncodeError};
use octet_host::wire::{
    FrameError, IdError, Message, Notification, Request, RequestId, Response, ResponseError,
};
use serde_json::{json, Value};

const C: Codec = Codec::Canonical;

fn decode(text: &str) -> Result<Message, FrameError> {
    C.decode(text.as_bytes())
}

fn every_shape() -> Vec<Message> {
    vec![
        Message::Request(Request {
            id: RequestId::Number(1),
            method: "tool/call".into(),
            params: Some(json!({"name": "echo", "arguments": {"z": [1, -2, "é\u{1}"], "a": null}})),
        }),
        Message::Request(Request {
            id: RequestId::String("sdk-1".into()),
            method: "confirmation/request".into(),
            params: Some(json!({"prompt": "?"})),
        }),
        Message::Notification(Notification {
            method: "$/cancelRequest".into(),
            params: Some(json!({"id": 9_007_199_254_740_991u64})),
        }),
        Message::Notification(Notification {
            method: "notification".into(),
            params: Some(json!([])),
        }),
        Message::Response(Response {
            id: RequestId::Number(3),
            outcome: Ok(json!({"terminal": "shutdown"})),
        }),
        Message::Response(Response {
            id: RequestId::Number(4),
            outcome: Ok(Value::Null),
        }),
        Message::Response(Response {
            id: RequestId::String("x".into()),
            outcome: Err(ResponseError::new(-32601, "unknown or unnegotiated method")),
        }),
        Message::Response(Response {
            id: RequestId::Number(5),
            outcome: Err(ResponseError {
                code: -32012,
                message: "resource_exhausted".into(),
                data: Some(json!({"limit": "max_concurrent_requests"})),
            }),
        }),
    ]
}

#[test]
fn every_shape_round_trips_through_canonical_bytes() {
    for message in every_shape() {
        let frame = C.encode(&message, 4096).unwrap();
        assert_eq!(frame.last(), Some(&b'\n'));
        let body = &frame[..frame.len() - 1];
        assert!(!body.contains(&b'\n') && !body.contains(&b'\r'));
        assert_eq!(
            C.decode(body).unwrap(),
            message,
            "{}",
            String::from_utf8_lossy(body)
        );
        // The same bytes are what any canonical encoder writes for that value.
        let value: Value = serde_json::from_slice(body).unwrap();
        let mut again = Vec::new();
        octet_host::wire::canonical::encode_canonical(&value, &mut again).unwrap();
        assert_eq!(again, body);
    }
}

#[test]
fn envelopes_are_byte_exact() {
    let request = C
        .encode_request(
            &RequestId::Number(2),
            "tool/call",
            &json!({"name": "hello_world", "arguments": {"name": "Ada"}}),
            4096,
        )
        .unwrap();
    assert_eq!(
        String::from_utf8(request).unwrap(),
        "{\"id\":2,\"jsonrpc\":\"2.0\",\"method\":\"tool/call\",\
         \"params\":{\"arguments\":{\"name\":\"Ada\"},\"name\":\"hello_world\"}}\n"
    );
    let notification = C
        .encode_notification("$/progress", &Value::Null, 4096)
        .unwrap();
    assert_eq!(
        notification,
        b"{\"jsonrpc\":\"2.0\",\"method\":\"$/progress\",\"params\":{}}\n"
    );
    let error = C
        .encode_error(
            &RequestId::Number(2),
            &ResponseError {
                code: -32602,
                message: "m".into(),
                data: Some(json!({"b": 1, "a": 2})),
            },
            4096,
        )
        .unwrap();
    assert_eq!(
        error,
        b"{\"error\":{\"code\":-32602,\"data\":{\"a\":2,\"b\":1},\"message\":\"m\"},\"id\":2,\"jsonrpc\":\"2.0\"}\n"
    );
}

#[test]
fn the_frame_limit_counts_the_lf_and_max_frame_bytes_does_not() {
    // A frame whose body is exactly `max_frame_bytes` long fits the canonical limit.
    let filler = |n: usize| json!({"t": "x".repeat(n)});
    let overhead = C
        .encode_notification("m", &filler(0), usize::MAX)
        .unwrap()
        .len()
        - 1;
    let max_frame_bytes = 200;
    let params = filler(max_frame_bytes - overhead);
    let frame = C
        .encode_notification("m", &params, canonical_frame_limit(max_frame_bytes))
        .unwrap();
    assert_eq!(frame.len(), max_frame_bytes + 1);
    let over = filler(max_frame_bytes - overhead + 1);
    assert!(matches!(
        C.encode_notification("m", &over, canonical_frame_limit(max_frame_bytes)),
        Err(CodecEncodeError::TooLarge { bytes, limit })
            if bytes == max_frame_bytes + 2 && limit == max_frame_bytes + 1
    ));
}

#[test]
fn encoding_refuses_what_has_no_canonical_form() {
    assert!(matches!(
        C.encode_request(&RequestId::Number(1), "m", &json!({"x": 1.5}), 4096),
        Err(CodecEncodeError::NotCanonical(CanonicalError::Float { .. }))
    ));
    assert!(matches!(
        C.encode_notification("m", &json!({"n": -9_007_199_254_740_992i64}), 4096),
        Err(CodecEncodeError::NotCanonical(
            CanonicalError::IntegerOutOfRange { .. }
        ))
    ));
    assert!(matches!(
        C.encode_request(&RequestId::Number(1u64 << 53), "m", &json!({}), 4096),
        Err(CodecEncodeError::NotCanonical(
            CanonicalError::IntegerOutOfRange { .. }
        ))
    ));
    assert!(matches!(
        C.encode_request(&RequestId::Number(1), "m", &json!(true), 4096),
        Err(CodecEncodeError::ParamsNotStructured)
    ));
}

fn closed(member: &str) -> Result<Message, FrameError> {
    Err(FrameError::ClosedEnvelope {
        member: member.into(),
    })
}

#[test]
fn closed_envelopes_reject_every_unknown_member() {
    // Requests: exactly id, jsonrpc, method, params.
    assert_eq!(
        decode(r#"{"id":1,"jsonrpc":"2.0","method":"m","params":{},"x":1}"#),
        closed("x")
    );
    assert_eq!(
        decode(r#"{"id":1,"jsonrpc":"2.0","meta":{},"method":"m","params":{}}"#),
        closed("meta")
    );
    // Notifications: jsonrpc, method, params; a result member is not allowed.
    assert_eq!(
        decode(r#"{"jsonrpc":"2.0","method":"m","params":{},"result":1}"#),
        closed("result")
    );
    // Responses: id, jsonrpc and one of result/error; no method-side members.
    assert_eq!(
        decode(r#"{"id":1,"jsonrpc":"2.0","params":{},"result":1}"#),
        closed("params")
    );
    assert_eq!(
        decode(r#"{"extra":true,"id":1,"jsonrpc":"2.0","result":1}"#),
        closed("extra")
    );
    // Error objects: code, message, data.
    assert_eq!(
        decode(r#"{"error":{"code":1,"message":"m","stack":"s"},"id":1,"jsonrpc":"2.0"}"#),
        closed("error.stack")
    );
    assert!(
        decode(r#"{"error":{"code":1,"data":null,"message":"m"},"id":1,"jsonrpc":"2.0"}"#).is_ok()
    );
}

#[test]
fn params_are_required_and_non_null() {
    assert_eq!(
        decode(r#"{"id":1,"jsonrpc":"2.0","method":"shutdown"}"#),
        Err(FrameError::MissingParams)
    );
    assert_eq!(
        decode(r#"{"jsonrpc":"2.0","method":"$/cancelRequest"}"#),
        Err(FrameError::MissingParams)
    );
    assert_eq!(
        decode(r#"{"jsonrpc":"2.0","method":"m","params":null}"#),
        Err(FrameError::MissingParams)
    );
    assert_eq!(
        decode(r#"{"jsonrpc":"2.0","method":"m","params":1}"#),
        Err(FrameError::ParamsNotStructured)
    );
    assert_eq!(
        decode(r#"{"id":1,"jsonrpc":"2.0","method":"shutdown","params":{}}"#),
        Ok(Message::Request(Request {
            id: RequestId::Number(1),
            method: "shutdown".into(),
            params: Some(json!({})),
        }))
    );
}

#[test]
fn the_json_rpc_rules_still_apply() {
    assert_eq!(decode("[1]"), Err(FrameError::NotObject));
    assert_eq!(
        decode(r#"{"id":1,"result":1}"#),
        Err(FrameError::BadVersion)
    );
    assert_eq!(
        decode(r#"{"id":1,"jsonrpc":"1.0","result":1}"#),
        Err(FrameError::BadVersion)
    );
    assert_eq!(
        decode(r#"{"error":{"code":1,"message":"m"},"id":1,"jsonrpc":"2.0","result":1}"#),
        Err(FrameError::ResultAndErrorMismatch)
    );
    assert_eq!(
        decode(r#"{"id":1,"jsonrpc":"2.0"}"#),
        Err(FrameError::ResultAndErrorMismatch)
    );
    assert_eq!(
        decode(r#"{"jsonrpc":"2.0","method":5,"params":{}}"#),
        Err(FrameError::MethodNotString)
    );
    assert_eq!(
        decode(r#"{"id":-1,"jsonrpc":"2.0","result":1}"#),
        Err(FrameError::BadId(IdError::NotUnsigned64))
    );
    assert_eq!(
        decode(r#"{"id":true,"jsonrpc":"2.0","method":"m","params":{}}"#),
        Err(FrameError::BadId(IdError::WrongType))
    );
    let long = format!(
        r#"{{"id":"{}","jsonrpc":"2.0","result":1}}"#,
        "a".repeat(257)
    );
    assert_eq!(
        decode(&long),
        Err(FrameError::BadId(IdError::StringTooLong { bytes: 257 }))
    );
    assert_eq!(
        decode(r#"{"error":{"code":"x","message":"m"},"id":1,"jsonrpc":"2.0"}"#),
        Err(FrameError::BadErrorObject)
    );
    assert_eq!(
        decode(r#"{"error":{"code":-32700,"message":"parse error"},"id":null,"jsonrpc":"2.0"}"#),
        Err(FrameError::ErrorWithoutId(ResponseError::new(
            -32700,
            "parse error"
        )))
    );
}

#[test]
fn non_canonical_frames_are_rejected_whatever_they_carry() {
    let not_canonical = |text: &[u8]| match C.decode(text) {
        Err(FrameError::NotCanonical(error)) => error,
        other => panic!("{:?} gave {other:?}", String::from_utf8_lossy(text)),
    };
    assert_eq!(not_canonical(b""), CanonicalError::EmptyFrame);
    assert!(matches!(
        not_canonical(b"{\"id\":1,\"jsonrpc\":\"2.0\",\"result\":1}\r"),
        CanonicalError::CarriageReturn { .. }
    ));
    assert!(matches!(
        not_canonical(br#"{"jsonrpc":"2.0","id":1,"result":1}"#),
        CanonicalError::UnsortedKeys { .. }
    ));
    assert!(matches!(
        not_canonical(br#"{"id":1, "jsonrpc":"2.0","result":1}"#),
        CanonicalError::Whitespace { .. }
    ));
    assert!(matches!(
        not_canonical(br#"{"id":1,"jsonrpc":"2.0","result":1.0}"#),
        CanonicalError::Float { .. }
    ));
    assert!(matches!(
        not_canonical(br#"{"id":1,"jsonrpc":"2.0","result":9007199254740992}"#),
        CanonicalError::IntegerOutOfRange { .. }
    ));
    assert!(matches!(
        not_canonical(br#"{"id":1,"id":1,"jsonrpc":"2.0","result":1}"#),
        CanonicalError::DuplicateKey { .. }
    ));
    assert!(matches!(
        not_canonical(br#"{"id":1,"jsonrpc":"2.0","result":"\u0041"}"#),
        CanonicalError::NonMinimalEscape { .. }
    ));
    let deep = format!(
        r#"{{"id":1,"jsonrpc":"2.0","result":{}{}}}"#,
        "[".repeat(32),
        "]".repeat(32)
    );
    assert!(matches!(
        not_canonical(deep.as_bytes()),
        CanonicalError::TooDeep { .. }
    ));
}

#[test]
fn json_rpc_codec_is_the_old_wire() {
    let text = br#"{"jsonrpc":"2.0","id":1,"method":"shutdown"}"#;
    assert_eq!(Codec::JsonRpc.decode(text), octet_host::wire::decode(text));
    assert!(matches!(
        C.decode(text),
        Err(FrameError::NotCanonical(
            CanonicalError::UnsortedKeys { .. }
        ))
    ));
}
