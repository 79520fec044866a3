//! `wire::canonical` (API 0.3, `octet-canonical-json-v1`) on arbitrary bytes.
//!
//! Invariants:
//! - `decode_canonical` never panics, and when it accepts a frame, `encode_canonical`
//!   of the value reproduces the frame byte for byte (the codec's module promise);
//! - when the bytes are JSON at all (parsed leniently by serde_json) and
//!   `encode_canonical` accepts the value, the encoding decodes back to the same value
//!   and re-encodes to itself; when it refuses, the output buffer is left untouched;
//! - `encode_canonical_frame` is `encode_canonical` plus one LF.

#![no_main]

use libfuzzer_sys::fuzz_target;
use octet_host::wire::canonical::{decode_canonical, encode_canonical, encode_canonical_frame};
use serde_json::Value;

const PREFIX: &[u8] = b"prefix:";

fn encode(value: &Value) -> Option<Vec<u8>> {
    let mut out = PREFIX.to_vec();
    let result = encode_canonical(value, &mut out);
    assert!(
        out.starts_with(PREFIX),
        "encode_canonical touched earlier bytes"
    );
    let mut frame = PREFIX.to_vec();
    let frame_result = encode_canonical_frame(value, &mut frame);
    assert_eq!(result.is_ok(), frame_result.is_ok());
    match result {
        Ok(()) => {
            assert_eq!(frame.last(), Some(&b'\n'));
            assert_eq!(&frame[..frame.len() - 1], &out[..]);
            Some(out.split_off(PREFIX.len()))
        }
        Err(error) => {
            assert_eq!(out, PREFIX, "a failed encode left bytes behind");
            assert_eq!(frame, PREFIX, "a failed frame encode left bytes behind");
            let _ = error.to_string();
            let _ = error.code();
            None
        }
    }
}

fuzz_target!(|data: &[u8]| {
    match decode_canonical(data) {
        Ok(value) => {
            let encoded = encode(&value).expect("a decoded value encodes");
            assert_eq!(
                encoded, data,
                "decode_canonical accepted a non-canonical frame"
            );
        }
        Err(error) => {
            let _ = error.to_string();
            let _ = error.code();
        }
    }
    if let Ok(value) = serde_json::from_slice::<Value>(data) {
        if let Some(encoded) = encode(&value) {
            let decoded = decode_canonical(&encoded).expect("an encoding decodes");
            assert_eq!(decoded, value, "the encoding denotes another value");
        }
    }
});
