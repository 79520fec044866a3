//! Reading canonical frames: a recursive-descent parser that accepts only canonical form.
//!
//! Recursion is bounded by the depth limit (at most 33 nested calls), so no input can
//! overflow the stack.

use serde_json::{Map, Number, Value};

use super::error::{CanonicalError, Expected};
use crate::limits::{CANONICAL_MAX_DEPTH, CANONICAL_MAX_INTEGER};

/// Decodes one frame, given without its LF, accepting it only if it is exactly the
/// canonical encoding of the value it denotes.
///
/// The whole frame is checked for UTF-8 first; after that the first deviation from
/// canonical form, in reading order, is reported. An empty frame is
/// [`CanonicalError::EmptyFrame`]; a CR outside a string, trailing or embedded, is
/// [`CanonicalError::CarriageReturn`].
pub fn decode_canonical(frame: &[u8]) -> Result<Value, CanonicalError> {
    if frame.is_empty() {
        return Err(CanonicalError::EmptyFrame);
    }
    let text = std::str::from_utf8(frame).map_err(|error| CanonicalError::NotUtf8 {
        offset: error.valid_up_to(),
    })?;
    let mut parser = Parser { text, pos: 0 };
    let value = parser.value(0)?;
    if parser.pos != text.len() {
        return Err(parser.unexpected(Expected::EndOfFrame));
    }
    Ok(value)
}

/// The frame being parsed and the position of the next unread byte.
struct Parser<'a> {
    text: &'a str,
    pos: usize,
}

impl Parser<'_> {
    /// The next unread byte, if any.
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.pos).copied()
    }

    /// The error for finding something other than `expected` at the current position:
    /// whitespace and CR get their own errors, anything else is a syntax error.
    fn unexpected(&self, expected: Expected) -> CanonicalError {
        let offset = self.pos;
        match self.peek() {
            Some(b'\r') => CanonicalError::CarriageReturn { offset },
            Some(b' ' | b'\t' | b'\n') => CanonicalError::Whitespace { offset },
            _ => CanonicalError::Syntax { offset, expected },
        }
    }

    /// Parses a value nested inside `depth` arrays and objects.
    fn value(&mut self, depth: usize) -> Result<Value, CanonicalError> {
        match self.peek() {
            Some(b'{') => self.object(depth + 1),
            Some(b'[') => self.array(depth + 1),
            Some(b'"') => self.string().map(Value::String),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(b't') => self.literal("true", Value::Bool(true)),
            Some(b'f') => self.literal("false", Value::Bool(false)),
            Some(b'n') => self.literal("null", Value::Null),
            _ => Err(self.unexpected(Expected::Value)),
        }
    }

    /// Fails with [`CanonicalError::TooDeep`] if a container of depth `depth` starts here.
    fn check_depth(&self, depth: usize) -> Result<(), CanonicalError> {
        if depth > CANONICAL_MAX_DEPTH {
            return Err(CanonicalError::TooDeep { offset: self.pos });
        }
        Ok(())
    }

    /// Parses an object of depth `depth`, at its `{`, requiring strictly sorted keys.
    fn object(&mut self, depth: usize) -> Result<Value, CanonicalError> {
        self.check_depth(depth)?;
        self.pos += 1;
        let mut map = Map::new();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(Value::Object(map));
        }
        // The latest member is held back until the next key has been compared with it,
        // so that no key needs to be cloned.
        let mut latest: Option<(String, Value)> = None;
        loop {
            if self.peek() != Some(b'"') {
                let expected = match latest {
                    None => Expected::KeyOrObjectEnd,
                    Some(_) => Expected::Key,
                };
                return Err(self.unexpected(expected));
            }
            let key_offset = self.pos;
            let key = self.string()?;
            if let Some((previous, previous_value)) = latest.take() {
                if key == previous {
                    return Err(CanonicalError::DuplicateKey {
                        key,
                        offset: key_offset,
                    });
                }
                // `str` orders by UTF-8 bytes, which is code point order.
                if key < previous {
                    return Err(CanonicalError::UnsortedKeys {
                        key,
                        offset: key_offset,
                    });
                }
                map.insert(previous, previous_value);
            }
            if self.peek() != Some(b':') {
                return Err(self.unexpected(Expected::Colon));
            }
            self.pos += 1;
            let value = self.value(depth)?;
            latest = Some((key, value));
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    break;
                }
                _ => return Err(self.unexpected(Expected::CommaOrObjectEnd)),
            }
        }
        if let Some((key, value)) = latest {
            map.insert(key, value);
        }
        Ok(Value::Object(map))
    }

    /// Parses an array of depth `depth`, at its `[`.
    fn array(&mut self, depth: usize) -> Result<Value, CanonicalError> {
        self.check_depth(depth)?;
        self.pos += 1;
        let mut elements = Vec::new();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(Value::Array(elements));
        }
        loop {
            if elements.is_empty() && !starts_value(self.peek()) {
                return Err(self.unexpected(Expected::ValueOrArrayEnd));
            }
            elements.push(self.value(depth)?);
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(Value::Array(elements));
                }
                _ => return Err(self.unexpected(Expected::CommaOrArrayEnd)),
            }
        }
    }

    /// Parses `word`, whose first byte is at the current position.
    fn literal(&mut self, word: &str, value: Value) -> Result<Value, CanonicalError> {
        let rest = &self.text.as_bytes()[self.pos..];
        let matched = word
            .bytes()
            .zip(rest)
            .take_while(|(want, have)| want == *have)
            .count();
        if matched < word.len() {
            return Err(CanonicalError::Syntax {
                offset: self.pos + matched,
                expected: Expected::Literal,
            });
        }
        self.pos += word.len();
        Ok(value)
    }

    /// Parses an integer `-?(0|[1-9][0-9]*)` within +-(2^53-1).
    fn number(&mut self) -> Result<Value, CanonicalError> {
        let bytes = self.text.as_bytes();
        let start = self.pos;
        let negative = bytes[start] == b'-';
        if negative {
            self.pos += 1;
        }
        let mut magnitude: u64 = 0;
        match self.peek() {
            Some(b'0') => {
                self.pos += 1;
                if matches!(self.peek(), Some(b'0'..=b'9')) {
                    return Err(CanonicalError::LeadingZero { offset: start });
                }
            }
            Some(b'1'..=b'9') => {
                while let Some(digit @ b'0'..=b'9') = self.peek() {
                    // Saturating keeps an overlong number out of range without overflow.
                    magnitude = magnitude
                        .saturating_mul(10)
                        .saturating_add(u64::from(digit - b'0'));
                    self.pos += 1;
                }
            }
            _ => return Err(self.unexpected(Expected::Digit)),
        }
        if matches!(self.peek(), Some(b'.' | b'e' | b'E')) {
            return Err(CanonicalError::Float { offset: start });
        }
        if negative && magnitude == 0 {
            return Err(CanonicalError::NegativeZero { offset: start });
        }
        if magnitude > CANONICAL_MAX_INTEGER {
            return Err(CanonicalError::IntegerOutOfRange { offset: start });
        }
        let number = if negative {
            // In range, so the magnitude fits an i64 and its negation cannot overflow.
            Number::from(-(magnitude as i64))
        } else {
            Number::from(magnitude)
        };
        Ok(Value::Number(number))
    }

    /// Parses a string at its opening quote, allowing only the canonical escapes.
    fn string(&mut self) -> Result<String, CanonicalError> {
        let bytes = self.text.as_bytes();
        self.pos += 1;
        let mut string = String::new();
        loop {
            let run_start = self.pos;
            while let Some(&byte) = bytes.get(self.pos) {
                if byte == b'"' || byte == b'\\' || byte < 0x20 {
                    break;
                }
                self.pos += 1;
            }
            // The run ends at an ASCII byte or at the end, so it is a char boundary.
            string.push_str(&self.text[run_start..self.pos]);
            match self.peek() {
                None => {
                    return Err(CanonicalError::Syntax {
                        offset: self.pos,
                        expected: Expected::EndOfString,
                    })
                }
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(string);
                }
                Some(b'\\') => string.push(self.escape()?),
                Some(_) => return Err(CanonicalError::ControlCharacter { offset: self.pos }),
            }
        }
    }

    /// Parses one escape at its backslash and returns the character it stands for, if
    /// it is the canonical escape of that character.
    fn escape(&mut self) -> Result<char, CanonicalError> {
        let offset = self.pos;
        let non_minimal = Err(CanonicalError::NonMinimalEscape { offset });
        let Some(&kind) = self.text.as_bytes().get(offset + 1) else {
            return Err(CanonicalError::Syntax {
                offset: offset + 1,
                expected: Expected::EscapeCharacter,
            });
        };
        let character = match kind {
            b'"' => '"',
            b'\\' => '\\',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'/' => return non_minimal,
            b'u' => {
                let code = self.hex4(offset + 2)?;
                self.pos = offset + 6;
                // Only control characters without a short escape may use `\u00xx`,
                // written with lowercase digits; every other character (surrogate
                // halves included) must appear raw.
                let lowercase = !self.text.as_bytes()[offset + 2..offset + 6]
                    .iter()
                    .any(u8::is_ascii_uppercase);
                let has_short_form = matches!(code, 0x08 | 0x09 | 0x0a | 0x0c | 0x0d);
                if code >= 0x20 || has_short_form || !lowercase {
                    return non_minimal;
                }
                return Ok(char::from(code as u8));
            }
            _ => {
                return Err(CanonicalError::Syntax {
                    offset: offset + 1,
                    expected: Expected::EscapeCharacter,
                })
            }
        };
        self.pos = offset + 2;
        Ok(character)
    }

    /// Reads four hexadecimal digits starting at `at`.
    fn hex4(&self, at: usize) -> Result<u32, CanonicalError> {
        let bytes = self.text.as_bytes();
        let mut code = 0;
        for offset in at..at + 4 {
            let digit = bytes
                .get(offset)
                .and_then(|&byte| char::from(byte).to_digit(16))
                .ok_or(CanonicalError::Syntax {
                    offset: offset.min(bytes.len()),
                    expected: Expected::HexDigit,
                })?;
            code = code * 16 + digit;
        }
        Ok(code)
    }
}

/// Whether `byte` can start a JSON value.
fn starts_value(byte: Option<u8>) -> bool {
    matches!(
        byte,
        Some(b'{' | b'[' | b'"' | b'-' | b'0'..=b'9' | b't' | b'f' | b'n')
    )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn decode(text: &str) -> Result<Value, CanonicalError> {
        decode_canonical(text.as_bytes())
    }

    #[test]
    fn accepts_canonical_values() {
        assert_eq!(
            decode(r#"{"a":[1,-2,true,false,null,"x\n"],"b":{}}"#),
            Ok(json!({"a": [1, -2, true, false, null, "x\n"], "b": {}}))
        );
    }

    #[test]
    fn accepts_the_allowed_escapes_only() {
        assert_eq!(
            decode(r#""\"\\\b\f\n\r\t\u0000\u001f\u000b""#),
            Ok(json!("\"\\\u{8}\u{c}\n\r\t\u{0}\u{1f}\u{b}"))
        );
        for escape in [r"\/", r"\u0041", r"\u000A", r"\u000a", r"\u001F", r"\u00e9"] {
            assert_eq!(
                decode(&format!("\"x{escape}\"")),
                Err(CanonicalError::NonMinimalEscape { offset: 2 }),
                "{escape}"
            );
        }
    }

    #[test]
    fn reports_structural_errors_with_offsets() {
        assert_eq!(
            decode(r#"{"a":1,}"#),
            Err(CanonicalError::Syntax {
                offset: 7,
                expected: Expected::Key
            })
        );
        assert_eq!(
            decode("[1 ]"),
            Err(CanonicalError::Whitespace { offset: 2 })
        );
        assert_eq!(
            decode("[1]\r"),
            Err(CanonicalError::CarriageReturn { offset: 3 })
        );
        assert_eq!(
            decode(r#""\u12x4""#),
            Err(CanonicalError::Syntax {
                offset: 5,
                expected: Expected::HexDigit
            })
        );
        assert_eq!(
            decode("tru"),
            Err(CanonicalError::Syntax {
                offset: 3,
                expected: Expected::Literal
            })
        );
    }

    #[test]
    fn the_literal_error_points_at_the_first_wrong_byte() {
        assert_eq!(
            decode("[nul1]"),
            Err(CanonicalError::Syntax {
                offset: 4,
                expected: Expected::Literal
            })
        );
    }
}
