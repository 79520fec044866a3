//! The typed error of the canonical codec.

use std::fmt;

use crate::limits::{CANONICAL_MAX_DEPTH, CANONICAL_MAX_INTEGER};
use crate::wire::codes::PARSE_ERROR;

/// Why a value cannot be encoded canonically, or why a frame is not canonical.
///
/// Offsets are byte offsets. For the decoder they index the frame passed to
/// [`super::decode_canonical`] and point at the first byte of the offending token (the
/// backslash of an escape, the `-` or first digit of a number, the `"` of a key, the `[`
/// or `{` that is too deep). For the encoder they index the bytes that
/// [`super::encode_canonical`] would have written, at the place the offending value
/// would have started.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CanonicalError {
    /// The frame is empty (a blank line).
    EmptyFrame,
    /// The frame is not valid UTF-8; `offset` is where the first invalid sequence starts.
    NotUtf8 {
        /// Byte offset of the first invalid sequence.
        offset: usize,
    },
    /// A CR outside a string.
    CarriageReturn {
        /// Byte offset of the CR.
        offset: usize,
    },
    /// Insignificant whitespace (space, tab or LF) outside a string.
    Whitespace {
        /// Byte offset of the whitespace character.
        offset: usize,
    },
    /// A raw control character (U+0000..=U+001F) inside a string.
    ControlCharacter {
        /// Byte offset of the control character.
        offset: usize,
    },
    /// A string escape that is not the canonical way to write its character, or a `\u`
    /// escape of a surrogate.
    NonMinimalEscape {
        /// Byte offset of the backslash.
        offset: usize,
    },
    /// An object key equal to the key before it.
    DuplicateKey {
        /// The repeated key.
        key: String,
        /// Byte offset of the second occurrence's opening quote.
        offset: usize,
    },
    /// An object key that sorts before the key before it.
    UnsortedKeys {
        /// The key that is out of order.
        key: String,
        /// Byte offset of its opening quote.
        offset: usize,
    },
    /// A number with a fraction or an exponent, or (encoding) a floating-point number.
    Float {
        /// Byte offset of the number.
        offset: usize,
    },
    /// The number `-0`.
    NegativeZero {
        /// Byte offset of the `-`.
        offset: usize,
    },
    /// An integer with a leading zero, such as `01` or `-01`.
    LeadingZero {
        /// Byte offset of the number.
        offset: usize,
    },
    /// An integer whose magnitude exceeds 2^53-1.
    IntegerOutOfRange {
        /// Byte offset of the number.
        offset: usize,
    },
    /// An array or object nested deeper than 32 levels.
    TooDeep {
        /// Byte offset of the first `[` or `{` past the limit.
        offset: usize,
    },
    /// The bytes are not JSON at all.
    Syntax {
        /// Byte offset of the unexpected byte, or the frame length at an early end.
        offset: usize,
        /// What would have been valid there.
        expected: Expected,
    },
}

impl CanonicalError {
    /// The JSON-RPC code for rejecting an incoming frame with this error: always
    /// `-32700` (parse error), since a non-canonical frame cannot be parsed as
    /// `octet-canonical-json-v1` (SUPPLEMENT "API 0.3": fixed error table).
    pub fn code(&self) -> i64 {
        PARSE_ERROR
    }
}

impl fmt::Display for CanonicalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CanonicalError::EmptyFrame => f.write_str("empty frame"),
            CanonicalError::NotUtf8 { offset } => {
                write!(f, "invalid UTF-8 at byte {offset}")
            }
            CanonicalError::CarriageReturn { offset } => {
                write!(f, "carriage return at byte {offset}")
            }
            CanonicalError::Whitespace { offset } => {
                write!(f, "insignificant whitespace at byte {offset}")
            }
            CanonicalError::ControlCharacter { offset } => {
                write!(f, "raw control character in a string at byte {offset}")
            }
            CanonicalError::NonMinimalEscape { offset } => {
                write!(f, "non-canonical string escape at byte {offset}")
            }
            CanonicalError::DuplicateKey { key, offset } => {
                write!(f, "duplicate object key {key:?} at byte {offset}")
            }
            CanonicalError::UnsortedKeys { key, offset } => {
                write!(f, "object key {key:?} out of order at byte {offset}")
            }
            CanonicalError::Float { offset } => {
                write!(f, "non-integer number at byte {offset}")
            }
            CanonicalError::NegativeZero { offset } => write!(f, "-0 at byte {offset}"),
            CanonicalError::LeadingZero { offset } => {
                write!(f, "integer with a leading zero at byte {offset}")
            }
            CanonicalError::IntegerOutOfRange { offset } => write!(
                f,
                "integer outside +-{CANONICAL_MAX_INTEGER} at byte {offset}"
            ),
            CanonicalError::TooDeep { offset } => write!(
                f,
                "nesting deeper than {CANONICAL_MAX_DEPTH} at byte {offset}"
            ),
            CanonicalError::Syntax { offset, expected } => {
                write!(f, "invalid JSON at byte {offset}: expected {expected}")
            }
        }
    }
}

impl std::error::Error for CanonicalError {}

/// What the decoder would have accepted where it found something else.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expected {
    /// Any JSON value.
    Value,
    /// A value or the `]` of an empty array.
    ValueOrArrayEnd,
    /// A key or the `}` of an empty object.
    KeyOrObjectEnd,
    /// A key, after a `,` in an object.
    Key,
    /// The `:` after a key.
    Colon,
    /// A `,` or `}` after an object member.
    CommaOrObjectEnd,
    /// A `,` or `]` after an array element.
    CommaOrArrayEnd,
    /// A decimal digit, after a `-`.
    Digit,
    /// One of `"`, `\`, `/`, `b`, `f`, `n`, `r`, `t`, `u` after a backslash.
    EscapeCharacter,
    /// A hexadecimal digit in a `\u` escape.
    HexDigit,
    /// The closing `"` of a string.
    EndOfString,
    /// The rest of `true`, `false` or `null`.
    Literal,
    /// Nothing more: the value is complete and the frame must end.
    EndOfFrame,
}

impl fmt::Display for Expected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Expected::Value => "a value",
            Expected::ValueOrArrayEnd => "a value or `]`",
            Expected::KeyOrObjectEnd => "a string key or `}`",
            Expected::Key => "a string key",
            Expected::Colon => "`:`",
            Expected::CommaOrObjectEnd => "`,` or `}`",
            Expected::CommaOrArrayEnd => "`,` or `]`",
            Expected::Digit => "a digit",
            Expected::EscapeCharacter => "an escape character",
            Expected::HexDigit => "a hexadecimal digit",
            Expected::EndOfString => "the end of the string",
            Expected::Literal => "`true`, `false` or `null`",
            Expected::EndOfFrame => "the end of the frame",
        })
    }
}
