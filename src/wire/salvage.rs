//! What can still be read of a frame the host refuses.
//!
//! A frame that is not canonical (API 0.3), breaks an envelope rule, or exceeds the
//! frame bound is never processed as a message. But when its top-level `id` can still
//! be read, the request it answers need not wait for its deadline: the call fails at
//! once with a protocol error. And an extension request whose `id` is unusable still
//! deserves a JSON-RPC error reply with `id: null`. This module scans the raw bytes
//! (or, for an oversized frame, its first bytes) lexically for exactly that, without
//! building any value: top-level member names, and the `id` when it is an unsigned
//! integer. It never fails; what it cannot read it leaves out.

/// How many bytes of an oversized frame the splitter keeps for [`salvage`].
pub const SALVAGE_HEAD_BYTES: usize = 256;

/// Characters of a refused frame kept as an excerpt for error messages.
pub const EXCERPT_CHARS: usize = 80;

/// What [`salvage`] read of a refused frame.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Salvage {
    /// The top-level `id`, when it is an unsigned integer and the frame looks like a
    /// response (it has `result` or `error` and no `method`).
    pub response_id: Option<u64>,
    /// The frame looks like a request: it has a top-level `method` and an `id` member.
    pub is_request: bool,
}

/// Scans `bytes` (a whole frame or the start of one) for its top-level members.
pub fn salvage(bytes: &[u8]) -> Salvage {
    let mut scan = Scan {
        bytes,
        at: 0,
        depth: 0,
    };
    let mut id = None;
    let (mut has_id, mut has_method, mut has_outcome) = (false, false, false);
    while let Some(key) = scan.next_top_level_key() {
        match key {
            b"id" => {
                has_id = true;
                id = scan.unsigned();
            }
            b"method" => has_method = true,
            b"result" | b"error" => has_outcome = true,
            _ => {}
        }
    }
    Salvage {
        response_id: id.filter(|_| has_outcome && !has_method),
        is_request: has_method && has_id,
    }
}

/// The first [`EXCERPT_CHARS`] characters of `bytes`, lossily decoded, with control
/// characters shown as spaces.
pub fn excerpt(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(4 * EXCERPT_CHARS)]);
    let mut out: String = text
        .chars()
        .take(EXCERPT_CHARS)
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if text.chars().count() > EXCERPT_CHARS || bytes.len() > 4 * EXCERPT_CHARS {
        out.push('…');
    }
    out
}

/// A lexical cursor over JSON text that tracks nesting and strings.
struct Scan<'a> {
    bytes: &'a [u8],
    at: usize,
    depth: usize,
}

impl<'a> Scan<'a> {
    /// Advances to the next member name of the top-level object and past its `:`.
    fn next_top_level_key(&mut self) -> Option<&'a [u8]> {
        while self.at < self.bytes.len() {
            let b = self.bytes[self.at];
            self.at += 1;
            match b {
                b'{' | b'[' => self.depth += 1,
                b'}' | b']' => self.depth = self.depth.saturating_sub(1),
                b'"' => {
                    let start = self.at;
                    let end = self.skip_string()?;
                    if self.depth == 1 && self.followed_by_colon() {
                        return Some(&self.bytes[start..end]);
                    }
                }
                _ => {}
            }
        }
        None
    }

    /// Skips the rest of a string whose opening quote was consumed; returns the index
    /// of its closing quote.
    fn skip_string(&mut self) -> Option<usize> {
        while self.at < self.bytes.len() {
            match self.bytes[self.at] {
                b'\\' => self.at += 2,
                b'"' => {
                    self.at += 1;
                    return Some(self.at - 1);
                }
                _ => self.at += 1,
            }
        }
        None
    }

    /// True (and past it) when the next non-blank byte is `:`.
    fn followed_by_colon(&mut self) -> bool {
        self.skip_blanks();
        if self.bytes.get(self.at) == Some(&b':') {
            self.at += 1;
            return true;
        }
        false
    }

    /// Reads an unsigned integer value, if that is what follows.
    fn unsigned(&mut self) -> Option<u64> {
        self.skip_blanks();
        let start = self.at;
        while self.bytes.get(self.at).is_some_and(u8::is_ascii_digit) {
            self.at += 1;
        }
        let digits = std::str::from_utf8(&self.bytes[start..self.at]).ok()?;
        match self.bytes.get(self.at) {
            // A fraction or an exponent makes it something else.
            Some(b'.' | b'e' | b'E') => None,
            _ => digits.parse().ok(),
        }
    }

    fn skip_blanks(&mut self) {
        while self
            .bytes
            .get(self.at)
            .is_some_and(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
        {
            self.at += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_id_of_a_response_in_any_member_order() {
        let canonical =
            br#"{"id":42,"jsonrpc":"2.0","result":{"content":[{"text":"a\"}","type":"text"}]}}"#;
        assert_eq!(salvage(canonical).response_id, Some(42));
        let loose = br#"{ "jsonrpc" : "2.0", "result" : {"id": 7}, "id" : 9 }"#;
        assert_eq!(salvage(loose).response_id, Some(9));
        let error = br#"{"error":{"code":-1,"message":"x"},"id":3,"jsonrpc":"2.0"}"#;
        assert_eq!(salvage(error).response_id, Some(3));
    }

    #[test]
    fn reads_the_head_of_an_oversized_frame() {
        let head = br#"{"id":5,"jsonrpc":"2.0","result":{"content":"xxxxxxxx"#;
        assert_eq!(salvage(head).response_id, Some(5));
    }

    #[test]
    fn leaves_out_what_is_not_a_response_id() {
        assert_eq!(salvage(br#"{"id":"a","result":{}}"#).response_id, None);
        assert_eq!(salvage(br#"{"id":1.5,"result":{}}"#).response_id, None);
        assert_eq!(salvage(br#"{"id":-1,"result":{}}"#).response_id, None);
        assert_eq!(salvage(br#"{"id":1}"#).response_id, None);
        assert_eq!(salvage(br#"{"result":{"id":1}}"#).response_id, None);
        assert_eq!(salvage(b"not json at all").response_id, None);
        let request = salvage(br#"{"id":1,"method":"m","result":1}"#);
        assert_eq!(request.response_id, None);
        assert!(request.is_request);
        assert!(salvage(br#"{"jsonrpc":"2.0","id":{"x":1},"method":"m"}"#).is_request);
        assert!(!salvage(br#"{"jsonrpc":"2.0","method":"m"}"#).is_request);
        assert!(!salvage(br#"{"params":{"method":"m","id":1}}"#).is_request);
    }

    #[test]
    fn excerpts_are_short_and_printable() {
        assert_eq!(excerpt(b"hello\tworld"), "hello world");
        let long = excerpt(&[b'x'; 500]);
        assert_eq!(long.chars().count(), EXCERPT_CHARS + 1);
        assert!(long.ends_with('…'));
    }
}
