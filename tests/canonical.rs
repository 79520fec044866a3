//! `octet-canonical-json-v1` (SUPPLEMENT "API 0.3 (canonical wire)"): round trips, every
//! rejected form, key order, integer and depth bounds, pseudo-random structures and the
//! JSONTestSuite parsing files.

use std::fs;
use std::path::{Path, PathBuf};

use octet_host::limits::{CANONICAL_MAX_DEPTH, CANONICAL_MAX_INTEGER};
use octet_host::wire::canonical::{
    decode_canonical, encode_canonical, encode_canonical_frame, CanonicalError, Expected,
    ENCODING_NAME,
};
use octet_host::wire::codes::PARSE_ERROR;
use serde_json::{json, Map, Value};

/// The vendored JSONTestSuite files (`tests/data/json-parsing`).
fn test_parsing_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/json-parsing/test_parsing")
}

fn encode(value: &Value) -> Result<Vec<u8>, CanonicalError> {
    let mut out = Vec::new();
    encode_canonical(value, &mut out)?;
    Ok(out)
}

fn decode(text: &str) -> Result<Value, CanonicalError> {
    decode_canonical(text.as_bytes())
}

/// The defining property: the decoder accepts only the canonical encoding of what it
/// returns, and that encoding is also plain JSON meaning the same value.
fn assert_accepts_only_canonical(frame: &[u8]) {
    if let Ok(value) = decode_canonical(frame) {
        assert_eq!(
            encode(&value).expect("a decoded value is encodable"),
            frame,
            "accepted a non-canonical frame {:?}",
            String::from_utf8_lossy(frame)
        );
        let plain: Value = serde_json::from_slice(frame).expect("canonical frames are JSON");
        assert_eq!(plain, value);
    }
}

// ---------------------------------------------------------------------------
// Round trips.
// ---------------------------------------------------------------------------

#[test]
fn canonical_frames_round_trip_byte_for_byte() {
    let frames = [
        "null",
        "true",
        "false",
        "0",
        "-1",
        "9007199254740991",
        "-9007199254740991",
        r#""""#,
        r#""a/b\"c\\d""#,
        r#""\b\f\n\r\t\u0000\u0001\u000b\u000e\u001f""#,
        "\"\u{7f}\u{80}\u{2028}\u{2029}\u{ffff}\u{10ffff}😀\"",
        "[]",
        "{}",
        "[[],{},[{}]]",
        r#"{"":0,"a":[1,2,3],"b":{"c":null,"d":"e"}}"#,
        r#"{"id":1,"jsonrpc":"2.0","method":"tool/call","params":{"arguments":{},"name":"x"}}"#,
    ];
    for frame in frames {
        let value = decode(frame).unwrap_or_else(|e| panic!("{frame}: {e}"));
        assert_eq!(encode(&value).unwrap(), frame.as_bytes(), "{frame}");
        let plain: Value = serde_json::from_str(frame).unwrap();
        assert_eq!(plain, value, "{frame}");
    }
}

#[test]
fn encoding_sorts_keys_and_drops_whitespace() {
    let value: Value = serde_json::from_str(
        r#"{ "params": { "z": 1, "a": [ 1, 2 ] }, "jsonrpc": "2.0", "id": 7 }"#,
    )
    .unwrap();
    assert_eq!(
        encode(&value).unwrap(),
        br#"{"id":7,"jsonrpc":"2.0","params":{"a":[1,2],"z":1}}"#
    );
}

#[test]
fn frames_end_with_exactly_one_lf() {
    let mut out = Vec::new();
    encode_canonical_frame(&json!({"b": "\n", "a": 1}), &mut out).unwrap();
    assert_eq!(out, b"{\"a\":1,\"b\":\"\\n\"}\n");
    assert_eq!(out.iter().filter(|&&b| b == b'\n').count(), 1);
    assert_eq!(
        decode_canonical(&out[..out.len() - 1]).unwrap(),
        json!({"a": 1, "b": "\n"})
    );
}

#[test]
fn the_encoding_name_is_the_negotiated_one() {
    assert_eq!(ENCODING_NAME, "octet-canonical-json-v1");
}

// ---------------------------------------------------------------------------
// Rejections.
// ---------------------------------------------------------------------------

#[test]
fn every_non_canonical_form_is_rejected_with_its_error() {
    use CanonicalError::*;
    let syntax = |offset, expected| Syntax { offset, expected };
    let cases: Vec<(&[u8], CanonicalError)> = vec![
        // Framing.
        (b"", EmptyFrame),
        (b"\r", CarriageReturn { offset: 0 }),
        (b"{}\r", CarriageReturn { offset: 2 }),
        (b"[1,\r2]", CarriageReturn { offset: 3 }),
        (b"\"a\rb\"", ControlCharacter { offset: 2 }),
        // UTF-8.
        (b"\"\xff\"", NotUtf8 { offset: 1 }),
        (b"[\"\xc3\"]", NotUtf8 { offset: 2 }),
        (b"\"\xed\xa0\x80\"", NotUtf8 { offset: 1 }),
        // The byte order mark is valid UTF-8 but never a JSON token.
        (b"\xef\xbb\xbf{}", syntax(0, Expected::Value)),
        // Whitespace.
        (b" {}", Whitespace { offset: 0 }),
        (b"{} ", Whitespace { offset: 2 }),
        (b"{}\n", Whitespace { offset: 2 }),
        (b"{ }", Whitespace { offset: 1 }),
        (b"{\"a\" :1}", Whitespace { offset: 4 }),
        (b"{\"a\": 1}", Whitespace { offset: 5 }),
        (b"{\"a\":1 }", Whitespace { offset: 6 }),
        (b"[1, 2]", Whitespace { offset: 3 }),
        (b"[\t1]", Whitespace { offset: 1 }),
        (b"- 1", Whitespace { offset: 1 }),
        // Keys.
        (
            b"{\"a\":1,\"a\":2}",
            DuplicateKey {
                key: "a".into(),
                offset: 7,
            },
        ),
        (
            b"{\"b\":1,\"a\":2}",
            UnsortedKeys {
                key: "a".into(),
                offset: 7,
            },
        ),
        (
            b"{\"a\":{\"y\":1,\"x\":2}}",
            UnsortedKeys {
                key: "x".into(),
                offset: 12,
            },
        ),
        // Numbers.
        (b"1.0", Float { offset: 0 }),
        (b"[1.5]", Float { offset: 1 }),
        (b"1e2", Float { offset: 0 }),
        (b"1E2", Float { offset: 0 }),
        (b"-0.0", Float { offset: 0 }),
        (b"0e0", Float { offset: 0 }),
        (b"-0", NegativeZero { offset: 0 }),
        (b"[-0]", NegativeZero { offset: 1 }),
        (b"01", LeadingZero { offset: 0 }),
        (b"-01", LeadingZero { offset: 0 }),
        (b"00", LeadingZero { offset: 0 }),
        (b"9007199254740992", IntegerOutOfRange { offset: 0 }),
        (b"-9007199254740992", IntegerOutOfRange { offset: 0 }),
        (b"18446744073709551616", IntegerOutOfRange { offset: 0 }),
        (
            b"[123456789012345678901234567890]",
            IntegerOutOfRange { offset: 1 },
        ),
        (b"+1", syntax(0, Expected::Value)),
        (b"-", syntax(1, Expected::Digit)),
        (b"-a", syntax(1, Expected::Digit)),
        (b"1x", syntax(1, Expected::EndOfFrame)),
        (b"NaN", syntax(0, Expected::Value)),
        (b"Infinity", syntax(0, Expected::Value)),
        // Strings.
        (b"\"\\/\"", NonMinimalEscape { offset: 1 }),
        (b"\"\\u0041\"", NonMinimalEscape { offset: 1 }),
        (b"\"\\u00e9\"", NonMinimalEscape { offset: 1 }),
        (b"\"\\u2028\"", NonMinimalEscape { offset: 1 }),
        (b"\"\\u000a\"", NonMinimalEscape { offset: 1 }),
        (b"\"\\u0009\"", NonMinimalEscape { offset: 1 }),
        (b"\"\\u001F\"", NonMinimalEscape { offset: 1 }),
        (b"\"\\u000B\"", NonMinimalEscape { offset: 1 }),
        (b"\"\\ud800\"", NonMinimalEscape { offset: 1 }),
        (b"\"\\udc00\"", NonMinimalEscape { offset: 1 }),
        (b"\"\\ud83d\\ude00\"", NonMinimalEscape { offset: 1 }),
        (b"\"\x00\"", ControlCharacter { offset: 1 }),
        (b"\"a\tb\"", ControlCharacter { offset: 2 }),
        (b"\"a\nb\"", ControlCharacter { offset: 2 }),
        (b"\"\x1f\"", ControlCharacter { offset: 1 }),
        (b"\"\\x\"", syntax(2, Expected::EscapeCharacter)),
        (b"\"\\", syntax(2, Expected::EscapeCharacter)),
        (b"\"\\u12", syntax(5, Expected::HexDigit)),
        (b"\"\\u12g4\"", syntax(5, Expected::HexDigit)),
        (b"\"abc", syntax(4, Expected::EndOfString)),
        (b"'a'", syntax(0, Expected::Value)),
        // Structure.
        (b"[", syntax(1, Expected::ValueOrArrayEnd)),
        (b"[1", syntax(2, Expected::CommaOrArrayEnd)),
        (b"[1,]", syntax(3, Expected::Value)),
        (b"[,1]", syntax(1, Expected::ValueOrArrayEnd)),
        (b"{", syntax(1, Expected::KeyOrObjectEnd)),
        (b"{1:2}", syntax(1, Expected::KeyOrObjectEnd)),
        (b"{\"a\"}", syntax(4, Expected::Colon)),
        (b"{\"a\":}", syntax(5, Expected::Value)),
        (b"{\"a\":1,}", syntax(7, Expected::Key)),
        (b"{\"a\":1]", syntax(6, Expected::CommaOrObjectEnd)),
        (b"[1}", syntax(2, Expected::CommaOrArrayEnd)),
        (b"{}{}", syntax(2, Expected::EndOfFrame)),
        (b"nul", syntax(3, Expected::Literal)),
        (b"True", syntax(0, Expected::Value)),
        (b"\x00", syntax(0, Expected::Value)),
    ];
    for (frame, expected) in cases {
        assert_eq!(
            decode_canonical(frame),
            Err(expected),
            "{:?}",
            String::from_utf8_lossy(frame)
        );
    }
}

#[test]
fn every_rejection_is_a_parse_error_with_a_message() {
    let error = decode("{\"a\":1,\"a\":2}").unwrap_err();
    assert_eq!(error.code(), PARSE_ERROR);
    assert_eq!(error.to_string(), "duplicate object key \"a\" at byte 7");
    assert_eq!(
        decode("[1 ]").unwrap_err().to_string(),
        "insignificant whitespace at byte 2"
    );
    assert_eq!(
        decode("[").unwrap_err().to_string(),
        "invalid JSON at byte 1: expected a value or `]`"
    );
}

// ---------------------------------------------------------------------------
// Key order.
// ---------------------------------------------------------------------------

#[test]
fn keys_sort_by_utf8_bytes_not_utf16_units() {
    // In UTF-8 byte (code point) order; U+FF61 comes before U+1F600 although its UTF-16
    // code unit (0xFF61) is larger than the lead surrogate 0xD83D.
    let keys = [
        "", "A", "B", "Z", "_", "a", "aa", "b", "\u{7f}", "é", "\u{2028}", "€", "\u{ff61}", "😀",
    ];
    for pair in keys.windows(2) {
        assert!(pair[0].as_bytes() < pair[1].as_bytes());
    }
    let mut map = Map::new();
    for (index, key) in keys.iter().enumerate().rev() {
        map.insert((*key).to_owned(), json!(index));
    }
    let encoded = encode(&Value::Object(map.clone())).unwrap();
    let expected: String = {
        let members: Vec<String> = keys
            .iter()
            .enumerate()
            .map(|(index, key)| format!("{}:{index}", serde_json::to_string(key).unwrap()))
            .collect();
        format!("{{{}}}", members.join(","))
    };
    assert_eq!(String::from_utf8(encoded.clone()).unwrap(), expected);
    assert_eq!(decode_canonical(&encoded).unwrap(), Value::Object(map));

    let swapped = "{\"😀\":0,\"\u{ff61}\":1}";
    assert_eq!(
        decode(swapped),
        Err(CanonicalError::UnsortedKeys {
            key: "\u{ff61}".into(),
            offset: 10,
        })
    );
    assert_eq!(
        decode("{\"é\":0,\"z\":1}"),
        Err(CanonicalError::UnsortedKeys {
            key: "z".into(),
            offset: 8,
        })
    );
}

#[test]
fn key_order_uses_the_unescaped_key() {
    // "\n" (U+000A) sorts before " " (U+0020) although `\` (0x5C) > ` ` (0x20) in the
    // escaped form.
    assert_eq!(decode(r#"{"\n":1," ":2}"#), Ok(json!({"\n": 1, " ": 2})));
    assert_eq!(
        decode(r#"{" ":2,"\n":1}"#),
        Err(CanonicalError::UnsortedKeys {
            key: "\n".into(),
            offset: 7,
        })
    );
    assert_eq!(
        encode(&json!({" ": 2, "\n": 1})).unwrap(),
        br#"{"\n":1," ":2}"#
    );
}

// ---------------------------------------------------------------------------
// Integer bounds.
// ---------------------------------------------------------------------------

#[test]
fn integers_are_bounded_by_2_pow_53_minus_1_exactly() {
    let max = CANONICAL_MAX_INTEGER;
    assert_eq!(max, (1 << 53) - 1);
    let max_i = max as i64;

    assert_eq!(decode("9007199254740991"), Ok(json!(max)));
    assert_eq!(decode("-9007199254740991"), Ok(json!(-max_i)));
    assert_eq!(encode(&json!(max)).unwrap(), b"9007199254740991");
    assert_eq!(encode(&json!(-max_i)).unwrap(), b"-9007199254740991");

    let out_of_range = CanonicalError::IntegerOutOfRange { offset: 0 };
    assert_eq!(decode("9007199254740992"), Err(out_of_range.clone()));
    assert_eq!(decode("-9007199254740992"), Err(out_of_range.clone()));
    for value in [
        json!(max + 1),
        json!(-max_i - 1),
        json!(u64::MAX),
        json!(i64::MIN),
        json!(i64::MAX),
    ] {
        assert_eq!(encode(&value), Err(out_of_range.clone()), "{value}");
    }
    assert_eq!(
        encode(&json!({"n": max + 1})),
        Err(CanonicalError::IntegerOutOfRange { offset: 5 })
    );
    assert_eq!(
        encode(&json!([0.5])),
        Err(CanonicalError::Float { offset: 1 })
    );
    assert_eq!(
        encode(&json!(1e300)),
        Err(CanonicalError::Float { offset: 0 })
    );
}

// ---------------------------------------------------------------------------
// Depth.
// ---------------------------------------------------------------------------

fn nested_arrays(depth: usize) -> String {
    format!("{}{}", "[".repeat(depth), "]".repeat(depth))
}

fn nested_objects(depth: usize) -> String {
    let mut text = String::from("{}");
    for _ in 1..depth {
        text = format!("{{\"k\":{text}}}");
    }
    text
}

#[test]
fn depth_32_is_accepted_and_33_rejected() {
    assert_eq!(CANONICAL_MAX_DEPTH, 32);
    for (limit, over) in [
        (nested_arrays(32), nested_arrays(33)),
        (nested_objects(32), nested_objects(33)),
    ] {
        let value = decode(&limit).unwrap();
        assert_eq!(encode(&value).unwrap(), limit.as_bytes());

        let error = decode(&over).unwrap_err();
        let CanonicalError::TooDeep { offset } = error else {
            panic!("expected TooDeep, got {error:?}");
        };
        // The offending container is the 33rd opening bracket.
        let opening: Vec<usize> = over
            .bytes()
            .enumerate()
            .filter(|(_, b)| matches!(b, b'[' | b'{'))
            .map(|(i, _)| i)
            .collect();
        assert_eq!(offset, opening[32]);

        let deep: Value = serde_json::from_str(&over).unwrap();
        assert_eq!(encode(&deep), Err(CanonicalError::TooDeep { offset }));
    }
    // Mixed nesting counts arrays and objects alike; scalars add no depth.
    let mixed_32 = format!("{}{{\"a\":[1]}}{}", "{\"a\":[".repeat(15), "]}".repeat(15));
    assert_eq!(
        encode(&decode(&mixed_32).unwrap()).unwrap(),
        mixed_32.as_bytes()
    );
    let mixed_33 = format!("[{mixed_32}]");
    assert!(matches!(
        decode(&mixed_33),
        Err(CanonicalError::TooDeep { .. })
    ));
}

#[test]
fn very_deep_input_is_rejected_without_overflowing_the_stack() {
    let frame = "[".repeat(1_000_000);
    assert_eq!(decode(&frame), Err(CanonicalError::TooDeep { offset: 32 }));
}

// ---------------------------------------------------------------------------
// Pseudo-random structures.
// ---------------------------------------------------------------------------

/// SplitMix64: a small deterministic generator, so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const PALETTE: &[char] = &[
    'a',
    'b',
    'Z',
    '0',
    ' ',
    '"',
    '\\',
    '/',
    '\u{0}',
    '\u{8}',
    '\t',
    '\n',
    '\u{b}',
    '\u{c}',
    '\r',
    '\u{1f}',
    '\u{7f}',
    'é',
    '€',
    '\u{2028}',
    '\u{2029}',
    '\u{ffff}',
    '\u{ff61}',
    '😀',
    '\u{10ffff}',
];

fn random_string(rng: &mut Rng, max_len: usize) -> String {
    let len = rng.below(max_len + 1);
    (0..len)
        .map(|_| PALETTE[rng.below(PALETTE.len())])
        .collect()
}

fn random_integer(rng: &mut Rng) -> Value {
    let max = CANONICAL_MAX_INTEGER as i64;
    match rng.below(6) {
        0 => json!(max),
        1 => json!(-max),
        2 => json!(0),
        3 => json!(rng.below(1000) as i64 - 500),
        _ => json!((rng.next() % (2 * max as u64 + 1)) as i64 - max),
    }
}

/// A value nested inside `depth` containers, never deeper than the limit.
fn random_value(rng: &mut Rng, depth: usize) -> Value {
    let can_nest = depth < CANONICAL_MAX_DEPTH;
    // Favour containers near the top, scalars further down.
    let container = can_nest && rng.below(depth + 2) < 2;
    if container {
        let len = rng.below(6);
        if rng.below(2) == 0 {
            Value::Array((0..len).map(|_| random_value(rng, depth + 1)).collect())
        } else {
            let mut map = Map::new();
            for _ in 0..len {
                let key = random_string(rng, 3);
                map.insert(key, random_value(rng, depth + 1));
            }
            Value::Object(map)
        }
    } else {
        match rng.below(5) {
            0 => Value::Null,
            1 => Value::Bool(rng.below(2) == 0),
            2 | 3 => random_integer(rng),
            _ => Value::String(random_string(rng, 12)),
        }
    }
}

/// A chain reaching exactly the depth limit, with random siblings on the way.
fn random_deep_value(rng: &mut Rng) -> Value {
    let mut value = random_value(rng, CANONICAL_MAX_DEPTH);
    for level in (0..CANONICAL_MAX_DEPTH).rev() {
        let sibling = random_value(rng, level + 1);
        value = if rng.below(2) == 0 {
            json!([sibling, value])
        } else {
            let mut map = Map::new();
            map.insert(random_string(rng, 2), sibling);
            map.insert("deep".to_owned(), value);
            Value::Object(map)
        };
    }
    value
}

fn depth_of(value: &Value) -> usize {
    match value {
        Value::Array(elements) => 1 + elements.iter().map(depth_of).max().unwrap_or(0),
        Value::Object(map) => 1 + map.values().map(depth_of).max().unwrap_or(0),
        _ => 0,
    }
}

#[test]
fn random_structures_round_trip() {
    let mut rng = Rng(0x0c7e_7000_0000_0001);
    let mut total_bytes = 0;
    let mut reached_limit = false;
    for round in 0..300 {
        let value = if round % 10 == 0 {
            random_deep_value(&mut rng)
        } else {
            random_value(&mut rng, 0)
        };
        reached_limit |= depth_of(&value) == CANONICAL_MAX_DEPTH;
        let frame = encode(&value).unwrap();
        total_bytes += frame.len();
        assert_eq!(
            decode_canonical(&frame).as_ref(),
            Ok(&value),
            "round {round}"
        );
        let plain: Value = serde_json::from_slice(&frame).unwrap();
        assert_eq!(plain, value, "round {round}");
        // Whatever way the same value was written, it encodes to the same bytes.
        let pretty = serde_json::to_vec_pretty(&value).unwrap();
        let reparsed: Value = serde_json::from_slice(&pretty).unwrap();
        assert_eq!(encode(&reparsed).unwrap(), frame, "round {round}");
    }
    assert!(reached_limit);
    assert!(total_bytes > 50_000, "only {total_bytes} bytes generated");
}

#[test]
fn mutated_frames_are_rejected_unless_canonical() {
    const INSERTS: &[u8] = b" \t\n\r0-.e\\\",:}]u1";
    let mut rng = Rng(0x0c7e_7000_0000_0002);
    let mut rejected = 0;
    let mut mutations = 0;
    for _ in 0..60 {
        let value = random_value(&mut rng, 0);
        let frame = encode(&value).unwrap();
        for _ in 0..100 {
            let mut mutated = frame.clone();
            let at = rng.below(mutated.len() + 1);
            match rng.below(3) {
                0 => mutated.insert(at, INSERTS[rng.below(INSERTS.len())]),
                1 if at < mutated.len() => {
                    mutated.remove(at);
                }
                _ if at < mutated.len() => mutated[at] = INSERTS[rng.below(INSERTS.len())],
                _ => mutated.push(b' '),
            }
            mutations += 1;
            if decode_canonical(&mutated).is_err() {
                rejected += 1;
            }
            assert_accepts_only_canonical(&mutated);
        }
    }
    // Most single-byte edits break canonical form; the rest must still be canonical.
    assert!(
        rejected * 2 > mutations,
        "{rejected} of {mutations} rejected"
    );
}

// ---------------------------------------------------------------------------
// JSONTestSuite.
// ---------------------------------------------------------------------------

fn test_parsing_files() -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = fs::read_dir(test_parsing_dir())
        .expect("JSONTestSuite test_parsing directory")
        .map(|entry| {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, fs::read(&path).unwrap())
        })
        .collect();
    files.sort();
    assert_eq!(files.len(), 318);
    files
}

#[test]
fn json_test_suite_n_files_are_rejected() {
    let mut count = 0;
    for (name, bytes) in test_parsing_files() {
        if !name.starts_with("n_") {
            continue;
        }
        count += 1;
        assert!(decode_canonical(&bytes).is_err(), "{name} accepted");
        // Taking one trailing LF as the frame terminator does not make any valid.
        if let Some(frame) = bytes.strip_suffix(b"\n") {
            assert!(
                decode_canonical(frame).is_err(),
                "{name} without LF accepted"
            );
        }
    }
    assert_eq!(count, 188);
}

#[test]
fn json_test_suite_files_never_crash_and_accept_only_canonical_frames() {
    let mut accepted = Vec::new();
    for (name, bytes) in test_parsing_files() {
        assert_accepts_only_canonical(&bytes);
        if decode_canonical(&bytes).is_ok() {
            accepted.push(name);
        }
    }
    // Every accepted file is a `y_` file in canonical form: 40 of the 95.
    assert!(
        accepted.iter().all(|name| name.starts_with("y_")),
        "{accepted:?}"
    );
    assert_eq!(accepted.len(), 40, "{accepted:?}");
    for name in [
        "y_structure_lonely_int.json",
        "y_string_u+2028_line_sep.json",
        "y_object_empty.json",
        "y_string_escaped_control_character.json",
        "y_string_unescaped_char_delete.json",
    ] {
        assert!(accepted.iter().any(|a| a == name), "{name} rejected");
    }
}

#[test]
fn json_test_suite_y_files_round_trip_after_canonicalization() {
    let mut canonicalized = 0;
    for (name, bytes) in test_parsing_files() {
        if !name.starts_with("y_") {
            continue;
        }
        let value: Value = serde_json::from_slice(&bytes).unwrap();
        match encode(&value) {
            Ok(frame) => {
                canonicalized += 1;
                assert_eq!(decode_canonical(&frame).as_ref(), Ok(&value), "{name}");
                assert_eq!(encode(&value).unwrap(), frame, "{name}");
            }
            Err(error) => assert!(
                matches!(
                    error,
                    CanonicalError::Float { .. } | CanonicalError::IntegerOutOfRange { .. }
                ),
                "{name}: {error}"
            ),
        }
    }
    assert!(
        canonicalized > 70,
        "only {canonicalized} y_ files canonicalized"
    );
}
