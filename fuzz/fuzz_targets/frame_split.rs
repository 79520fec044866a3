//! `wire::FrameSplitter` under arbitrary chunkings, and `wire::decode` on every frame.
//!
//! Input layout: byte 0 picks the small limit (1..=64), byte 1 the number `k` (0..=15)
//! of chunk-length bytes that follow; the rest is the stream. The stream is pushed in
//! chunks whose lengths cycle through those `k` bytes (a zero length pushes an empty
//! slice and then one byte), or in one piece when `k` is zero.
//!
//! Invariants, for the small limit and for the default limit (`MAX_FRAME_BYTES`):
//! - no frame holds an LF or exceeds the limit, and every oversized report exceeds it;
//! - frames + their LFs + oversized bytes + the unterminated tail == the stream length;
//! - the chunked split equals the one-shot split, and both equal a model that splits
//!   the stream on LF and sorts each piece by its length alone;
//! - `wire::decode` returns exactly what `wire::classify(wire::parse_json(..))` does
//!   (its envelope reader skips the map a `Value` would build);
//! - a frame that decodes re-encodes (`wire::encode`) to a frame that decodes to the
//!   same message, when it carries no floating-point number (serde_json's default float
//!   parsing is not exact, so floats may legitimately move by one ulp).

#![no_main]

use libfuzzer_sys::fuzz_target;
use octet_host::limits::MAX_FRAME_BYTES;
use octet_host::wire::{self, FrameSplitter, Message, Split};
use serde_json::Value;

/// One item a splitter produced: a frame's bytes or an oversized frame's size.
#[derive(Debug, PartialEq, Eq)]
enum Item {
    Frame(Vec<u8>),
    Oversized(usize),
}

/// Everything a splitter produced for a stream, ending with `finish()`.
#[derive(Debug, PartialEq, Eq)]
struct Outcome {
    items: Vec<Item>,
    unterminated: Option<usize>,
}

fn split(limit: usize, chunks: &[&[u8]]) -> Outcome {
    let mut splitter = FrameSplitter::new(limit);
    let mut items = Vec::new();
    for chunk in chunks {
        splitter.push(chunk, |item| match item {
            Split::Frame(frame) => items.push(Item::Frame(frame.to_vec())),
            Split::Oversized { bytes, .. } => items.push(Item::Oversized(bytes)),
        });
    }
    let unterminated = splitter.finish();
    assert_eq!(
        splitter.finish(),
        None,
        "finish() must leave the splitter empty"
    );
    Outcome {
        items,
        unterminated,
    }
}

/// The specification of splitting, written without any state.
fn model(limit: usize, stream: &[u8]) -> Outcome {
    let mut pieces: Vec<&[u8]> = stream.split(|&b| b == b'\n').collect();
    let tail = pieces.pop().unwrap_or_default();
    let items = pieces
        .into_iter()
        .map(|piece| {
            if piece.len() < limit {
                Item::Frame(piece.to_vec())
            } else {
                Item::Oversized(piece.len() + 1)
            }
        })
        .collect();
    Outcome {
        items,
        unterminated: (!tail.is_empty()).then_some(tail.len()),
    }
}

fn chunk<'a>(stream: &'a [u8], lengths: &[u8]) -> Vec<&'a [u8]> {
    if lengths.is_empty() {
        return vec![stream];
    }
    let mut chunks = Vec::new();
    let mut rest = stream;
    for &length in lengths.iter().cycle() {
        if rest.is_empty() {
            break;
        }
        let length = if length == 0 {
            chunks.push(&rest[..0]);
            1
        } else {
            usize::from(length).min(rest.len())
        };
        let (head, tail) = rest.split_at(length);
        chunks.push(head);
        rest = tail;
    }
    chunks
}

fn has_float(value: &Value) -> bool {
    match value {
        Value::Number(n) => n.is_f64(),
        Value::Array(items) => items.iter().any(has_float),
        Value::Object(map) => map.values().any(has_float),
        _ => false,
    }
}

fn message_has_float(message: &Message) -> bool {
    match message {
        Message::Request(r) => r.params.as_ref().is_some_and(has_float),
        Message::Notification(n) => n.params.as_ref().is_some_and(has_float),
        Message::Response(r) => match &r.outcome {
            Ok(result) => has_float(result),
            Err(error) => error.data.as_ref().is_some_and(has_float),
        },
    }
}

fn classify(frame: &[u8]) {
    let decoded = wire::decode(frame);
    // `decode` reads an object's envelope without a map; it must agree exactly,
    // error messages included, with parsing into a `Value` first.
    let reference = wire::parse_json(frame).and_then(wire::classify);
    assert_eq!(
        decoded, reference,
        "decode differs from classify(parse_json(..))"
    );
    match decoded {
        Ok(message) => {
            if message_has_float(&message) {
                return;
            }
            // The re-encoding is never larger than the frame, which fit the default limit.
            let encoded = wire::encode(&message).expect("a decoded message re-encodes");
            assert_eq!(encoded.last(), Some(&b'\n'));
            let again =
                wire::decode(&encoded[..encoded.len() - 1]).expect("a re-encoded message decodes");
            assert_eq!(again, message, "decode(encode(m)) != m");
        }
        Err(error) => {
            let _ = error.to_string();
        }
    }
}

fn check(limit: usize, stream: &[u8], chunks: &[&[u8]]) {
    let chunked = split(limit, chunks);
    let mut accounted = chunked.unterminated.unwrap_or(0);
    for item in &chunked.items {
        match item {
            Item::Frame(frame) => {
                assert!(
                    frame.len() < limit,
                    "frame of {} bytes + LF over {limit}",
                    frame.len()
                );
                assert!(!frame.contains(&b'\n'), "frame holds an LF");
                accounted += frame.len() + 1;
            }
            Item::Oversized(bytes) => {
                assert!(*bytes > limit, "oversized report of {bytes} within {limit}");
                accounted += bytes;
            }
        }
    }
    assert_eq!(accounted, stream.len(), "bytes not accounted for");
    assert_eq!(
        chunked,
        split(limit, &[stream]),
        "chunking changed the split"
    );
    assert_eq!(
        chunked,
        model(limit, stream),
        "split differs from the model"
    );
}

fuzz_target!(|data: &[u8]| {
    let [limit, k, rest @ ..] = data else {
        return;
    };
    let small_limit = 1 + usize::from(*limit % 64);
    let k = usize::from(*k % 16).min(rest.len());
    let (lengths, stream) = rest.split_at(k);
    let chunks = chunk(stream, lengths);

    check(small_limit, stream, &chunks);
    check(MAX_FRAME_BYTES, stream, &chunks);

    // Classify what a host reader would deliver.
    let mut splitter = FrameSplitter::new(MAX_FRAME_BYTES);
    for piece in &chunks {
        splitter.push(piece, |item| {
            if let Split::Frame(frame) = item {
                classify(frame);
            }
        });
    }
});
