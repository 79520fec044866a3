//! `octet-canonical-json-v1`: the API 0.3 wire encoding (SUPPLEMENT "API 0.3 (canonical
//! wire)").
//!
//! Every JSON value has exactly one canonical encoding. The host writes frames with
//! [`encode_canonical`] (or [`encode_canonical_frame`], which adds the LF) and reads them
//! with [`decode_canonical`], which accepts a frame only when it is byte-for-byte the
//! canonical encoding of the value it denotes. So for every input `x`,
//! `decode_canonical(x) == Ok(v)` implies that `encode_canonical(v)` writes exactly `x`.
//!
//! # The rules
//!
//! - **Whitespace.** No insignificant whitespace at all: no space, tab, LF or CR
//!   between tokens, before the value or after it.
//! - **Objects.** Members are written as `"key":value` joined by `,` inside `{}`. Keys are
//!   sorted in ascending order of their UTF-8 bytes, compared lexicographically; this is
//!   the same as Unicode code point order. (It is not RFC 8785's UTF-16 code unit order:
//!   `"\u{FF61}"` sorts before `"\u{1F600}"` here.) Keys are unique, so the order is
//!   strict: a key equal to the one before it is a duplicate, a smaller one is unsorted.
//! - **Arrays.** Elements are joined by `,` inside `[]`, in their own order.
//! - **Numbers.** Integers only, within `-(2^53-1)..=2^53-1`
//!   ([`CANONICAL_MAX_INTEGER`]), written in decimal as `-?(0|[1-9][0-9]*)`: no fraction,
//!   no exponent, no `+`, no leading zero and no `-0`. A JSON number with a fraction or
//!   an exponent is rejected even when its value is integral (`1.0`, `1e2`).
//! - **Strings.** Written raw as UTF-8 except for exactly these escapes: `"` as `\"`,
//!   `\` as `\\`, and the control characters U+0000..=U+001F as `\b` (U+0008), `\f`
//!   (U+000C), `\n` (U+000A), `\r` (U+000D), `\t` (U+0009) or, for the other 27,
//!   `\u00xx` with two lowercase hexadecimal digits. Everything else is written raw:
//!   `/`, U+007F, non-ASCII characters, U+2028 and U+2029, noncharacters. Any other
//!   escape (`\/`, `\u0041`, uppercase hexadecimal digits, a `\u` escape of a character
//!   that has a short form, any `\u` escape of a surrogate, paired or lone) is
//!   non-minimal and rejected, and so is a raw control character inside a string.
//! - **Literals.** `true`, `false` and `null`.
//! - **Depth.** The depth of a value is the number of arrays and objects it is nested
//!   in, counting itself: a scalar has depth 0, `{}` and `[]` depth 1, `[[]]` depth 2.
//!   A value deeper than [`CANONICAL_MAX_DEPTH`] (32) is rejected.
//! - **Top level.** Any value may stand at the top level; requiring an object is the
//!   envelope's job, not the encoding's.
//!
//! # Framing
//!
//! A frame is one canonical value followed by exactly one LF. Framing splits on LF
//! elsewhere ([`super::FrameSplitter`]); [`decode_canonical`] takes a frame without its
//! LF. An empty frame is an error ([`CanonicalError::EmptyFrame`]), never a blank line
//! to skip, and a CR anywhere outside a string, including just before the LF, is an
//! error ([`CanonicalError::CarriageReturn`]); inside a string a raw CR is a
//! [`CanonicalError::ControlCharacter`].
//!
//! Every rejection is a parse error on the wire (`-32700`, see [`CanonicalError::code`]).
//!
//! [`CANONICAL_MAX_INTEGER`]: crate::limits::CANONICAL_MAX_INTEGER
//! [`CANONICAL_MAX_DEPTH`]: crate::limits::CANONICAL_MAX_DEPTH

mod decode;
mod encode;
mod error;

pub use decode::decode_canonical;
pub use encode::{encode_canonical, encode_canonical_frame};
pub use error::{CanonicalError, Expected};

/// The encoding's name, as negotiated in the API 0.3 `contract` (`encoding`).
pub const ENCODING_NAME: &str = "octet-canonical-json-v1";
