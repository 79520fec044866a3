//! Writing values in canonical form.

use serde_json::{Map, Number, Value};

use super::error::CanonicalError;
use crate::limits::{CANONICAL_MAX_DEPTH, CANONICAL_MAX_INTEGER};

/// Appends the canonical encoding of `value` to `out`, without a trailing LF.
///
/// Fails on a floating-point number, an integer outside +-(2^53-1) and nesting deeper
/// than 32 (see the module documentation for every rule). On failure `out` is left as
/// it was before the call.
pub fn encode_canonical(value: &Value, out: &mut Vec<u8>) -> Result<(), CanonicalError> {
    let start = out.len();
    let result = Encoder { out, start }.value(value, 0);
    if result.is_err() {
        out.truncate(start);
    }
    result
}

/// Appends one canonical frame to `out`: the encoding of `value` and its LF.
///
/// On failure `out` is left as it was before the call.
pub fn encode_canonical_frame(value: &Value, out: &mut Vec<u8>) -> Result<(), CanonicalError> {
    encode_canonical(value, out)?;
    out.push(b'\n');
    Ok(())
}

/// The output buffer and where this encoding started in it.
struct Encoder<'a> {
    out: &'a mut Vec<u8>,
    start: usize,
}

impl Encoder<'_> {
    /// The offset, relative to the start of this encoding, of the next byte written.
    fn offset(&self) -> usize {
        self.out.len() - self.start
    }

    /// Writes `value`, which is nested inside `depth` arrays and objects.
    fn value(&mut self, value: &Value, depth: usize) -> Result<(), CanonicalError> {
        match value {
            Value::Null => self.out.extend_from_slice(b"null"),
            Value::Bool(true) => self.out.extend_from_slice(b"true"),
            Value::Bool(false) => self.out.extend_from_slice(b"false"),
            Value::Number(number) => self.number(number)?,
            Value::String(string) => write_string(string, self.out),
            Value::Array(elements) => {
                self.enter(depth)?;
                self.out.push(b'[');
                for (index, element) in elements.iter().enumerate() {
                    if index > 0 {
                        self.out.push(b',');
                    }
                    self.value(element, depth + 1)?;
                }
                self.out.push(b']');
            }
            Value::Object(map) => {
                self.enter(depth)?;
                self.object(map, depth + 1)?;
            }
        }
        Ok(())
    }

    /// Checks that an array or object nested inside `depth` containers is allowed.
    fn enter(&self, depth: usize) -> Result<(), CanonicalError> {
        if depth + 1 > CANONICAL_MAX_DEPTH {
            return Err(CanonicalError::TooDeep {
                offset: self.offset(),
            });
        }
        Ok(())
    }

    /// Writes an object whose own depth is `depth`, with its keys in UTF-8 byte order.
    fn object(&mut self, map: &Map<String, Value>, depth: usize) -> Result<(), CanonicalError> {
        self.out.push(b'{');
        // Without serde_json's `preserve_order` the map already iterates in byte order;
        // sort only when some dependency turned that feature on.
        let sorted = map.keys().zip(map.keys().skip(1)).all(|(a, b)| a < b);
        if sorted {
            for (index, (key, value)) in map.iter().enumerate() {
                self.member(index, key, value, depth)?;
            }
        } else {
            let mut members: Vec<(&String, &Value)> = map.iter().collect();
            members.sort_unstable_by(|a, b| a.0.cmp(b.0));
            for (index, (key, value)) in members.into_iter().enumerate() {
                self.member(index, key, value, depth)?;
            }
        }
        self.out.push(b'}');
        Ok(())
    }

    /// Writes the `index`th member of an object whose own depth is `depth`.
    fn member(
        &mut self,
        index: usize,
        key: &str,
        value: &Value,
        depth: usize,
    ) -> Result<(), CanonicalError> {
        if index > 0 {
            self.out.push(b',');
        }
        write_string(key, self.out);
        self.out.push(b':');
        self.value(value, depth)
    }

    /// Writes an integer within +-(2^53-1) in minimal decimal.
    fn number(&mut self, number: &Number) -> Result<(), CanonicalError> {
        let offset = self.offset();
        let (negative, magnitude) = if let Some(n) = number.as_u64() {
            (false, n)
        } else if let Some(n) = number.as_i64() {
            // `as_u64` failed, so `n` is negative.
            (true, n.unsigned_abs())
        } else {
            return Err(CanonicalError::Float { offset });
        };
        if magnitude > CANONICAL_MAX_INTEGER {
            return Err(CanonicalError::IntegerOutOfRange { offset });
        }
        if negative {
            self.out.push(b'-');
        }
        write_decimal(magnitude, self.out);
        Ok(())
    }
}

/// Writes `n` in decimal without leading zeros.
fn write_decimal(mut n: u64, out: &mut Vec<u8>) {
    let mut digits = [0u8; 20];
    let mut start = digits.len();
    loop {
        start -= 1;
        digits[start] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[start..]);
}

/// Writes `string` quoted, escaping only `"`, `\` and U+0000..=U+001F.
fn write_string(string: &str, out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bytes = string.as_bytes();
    out.push(b'"');
    // Every byte that needs an escape is ASCII, so copying the runs between them byte
    // for byte keeps multi-byte characters intact.
    let mut run_start = 0;
    for (index, &byte) in bytes.iter().enumerate() {
        let short: &[u8] = match byte {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            0x08 => b"\\b",
            0x0c => b"\\f",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x00..=0x1f => b"",
            _ => continue,
        };
        out.extend_from_slice(&bytes[run_start..index]);
        run_start = index + 1;
        if short.is_empty() {
            out.extend_from_slice(b"\\u00");
            out.push(HEX[usize::from(byte >> 4)]);
            out.push(HEX[usize::from(byte & 0x0f)]);
        } else {
            out.extend_from_slice(short);
        }
    }
    out.extend_from_slice(&bytes[run_start..]);
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn encode(value: &Value) -> Result<String, CanonicalError> {
        let mut out = Vec::new();
        encode_canonical(value, &mut out)?;
        Ok(String::from_utf8(out).expect("canonical output is UTF-8"))
    }

    #[test]
    fn escapes_exactly_quote_backslash_and_control_characters() {
        let value = Value::String("\"\\/\u{0}\u{8}\t\n\u{b}\u{c}\r\u{1f}\u{7f}é\u{2028}".into());
        assert_eq!(
            encode(&value).unwrap(),
            "\"\\\"\\\\/\\u0000\\b\\t\\n\\u000b\\f\\r\\u001f\u{7f}é\u{2028}\""
        );
    }

    #[test]
    fn writes_integers_minimally() {
        assert_eq!(
            encode(&json!([0, 7, -7, 10, -100])).unwrap(),
            "[0,7,-7,10,-100]"
        );
    }

    #[test]
    fn rejects_floats_even_when_integral() {
        assert_eq!(
            encode(&json!({"a": 1.0})),
            Err(CanonicalError::Float { offset: 5 })
        );
    }

    #[test]
    fn failure_leaves_the_buffer_unchanged() {
        let mut out = b"prefix".to_vec();
        let error = encode_canonical(&json!([1, 2, 0.5]), &mut out).unwrap_err();
        assert_eq!(error, CanonicalError::Float { offset: 5 });
        assert_eq!(out, b"prefix");
    }

    #[test]
    fn frame_ends_with_one_lf() {
        let mut out = Vec::new();
        encode_canonical_frame(&json!({"b": [], "a": {}}), &mut out).unwrap();
        assert_eq!(out, b"{\"a\":{},\"b\":[]}\n");
    }
}
