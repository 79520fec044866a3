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
//!
//! A refused *request* is answered, never left waiting, whenever its `id` can be read
//! (section 2: every readable request gets an answer). [`salvage_frame`] finds it:
//! when the frame would decode with its `params` replaced by `{}`, the problem lies in
//! the params alone (a lone surrogate escape in a text, say), and id and method are
//! read exactly by the codec; otherwise the `id` (an unsigned integer or a string) and
//! a string `method` are read lexically. The params themselves are never read.

use crate::wire::codec::Codec;
use crate::wire::{Message, RequestId};

/// How many bytes of an oversized frame the splitter keeps for [`salvage`].
pub const SALVAGE_HEAD_BYTES: usize = 256;

/// Characters of a refused frame kept as an excerpt for error messages.
pub const EXCERPT_CHARS: usize = 80;

/// The longest `method` name read from a refused frame; a longer one is left out.
const MAX_SALVAGED_METHOD_BYTES: usize = 256;

/// What [`salvage`] read of a refused frame.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Salvage {
    /// The top-level `id`, when it is an unsigned integer and the frame looks like a
    /// response (it has `result` or `error` and no `method`).
    pub response_id: Option<u64>,
    /// The frame looks like a request: it has a top-level `method` and an `id` member.
    pub is_request: bool,
    /// The request, when its `id` and `method` can still be read.
    pub request: Option<RefusedRequest>,
}

/// A refused request whose `id` and `method` could still be read: it is answered with
/// an error, and its params are never passed on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RefusedRequest {
    /// The id its answer carries.
    pub id: RequestId,
    /// The method it names.
    pub method: String,
    /// The frame has a top-level `params` member.
    pub has_params: bool,
    /// The frame decodes once its `params` are replaced by `{}`: what is wrong lies in
    /// the params alone.
    pub params_only: bool,
    /// The params hold a lone UTF-16 surrogate escape (`\ud800` without its pair), as
    /// JavaScript string slicing makes: the likely cause, named in the answer.
    pub lone_surrogate: bool,
}

/// Scans `bytes` (a whole frame or the start of one) for its top-level members.
pub fn salvage(bytes: &[u8]) -> Salvage {
    salvage_members(bytes).0
}

/// [`salvage`] of a whole refused frame, which also finds out whether the frame's only
/// fault lies inside its `params` by decoding it with `codec` once more, its params
/// replaced by `{}`.
pub fn salvage_frame(bytes: &[u8], codec: Codec) -> Salvage {
    let (mut salvage, params) = salvage_members(bytes);
    // The canonical wire has no empty string id: such a request is answered with a
    // null id, never with an id the extension may not use.
    if codec == Codec::Canonical
        && salvage
            .request
            .as_ref()
            .is_some_and(|r| r.id == RequestId::String(String::new()))
    {
        salvage.request = None;
        return salvage;
    }
    let Some(span) = params.filter(|_| salvage.is_request) else {
        return salvage;
    };
    let mut stripped = Vec::with_capacity(bytes.len() - span.len() + 2);
    stripped.extend_from_slice(&bytes[..span.start]);
    stripped.extend_from_slice(b"{}");
    stripped.extend_from_slice(&bytes[span.end..]);
    if let Ok(Message::Request(request)) = codec.decode(&stripped) {
        salvage.request = Some(RefusedRequest {
            id: request.id,
            method: request.method,
            has_params: true,
            params_only: true,
            lone_surrogate: has_lone_surrogate(&bytes[span]),
        });
    }
    salvage
}

/// The salvage of `bytes`, and the byte range of its `params` value when it is whole.
fn salvage_members(bytes: &[u8]) -> (Salvage, Option<std::ops::Range<usize>>) {
    let mut scan = Scan {
        bytes,
        at: 0,
        depth: 0,
    };
    let (mut id, mut request_id, mut method, mut params) = (None, None, None, None);
    let (mut has_id, mut has_method, mut has_outcome, mut has_params) =
        (false, false, false, false);
    while let Some(key) = scan.next_top_level_key() {
        match key {
            b"id" => {
                has_id = true;
                let token = scan.value_span();
                id = token.clone().and_then(|t| unsigned(&bytes[t]));
                request_id = token.and_then(|t| {
                    let value: serde_json::Value = serde_json::from_slice(&bytes[t]).ok()?;
                    RequestId::from_value(&value).ok()
                });
            }
            b"method" => {
                has_method = true;
                method = scan
                    .value_span()
                    .filter(|t| t.len() <= MAX_SALVAGED_METHOD_BYTES + 2)
                    .and_then(|t| serde_json::from_slice::<String>(&bytes[t]).ok());
            }
            b"params" => {
                has_params = true;
                params = scan.value_span();
            }
            b"result" | b"error" => has_outcome = true,
            _ => {}
        }
    }
    let request = match (request_id, method) {
        (Some(id), Some(method)) => Some(RefusedRequest {
            id,
            method,
            has_params,
            params_only: false,
            lone_surrogate: false,
        }),
        _ => None,
    };
    let salvage = Salvage {
        response_id: id.filter(|_| has_outcome && !has_method),
        is_request: has_method && has_id,
        request,
    };
    (salvage, params)
}

/// True when `json` holds a `\uXXXX` escape of a surrogate without its pair.
fn has_lone_surrogate(json: &[u8]) -> bool {
    let escape = |at: usize| -> Option<u16> {
        let hex = json.get(at..at + 6)?;
        if &hex[..2] != b"\\u" {
            return None;
        }
        u16::from_str_radix(std::str::from_utf8(&hex[2..]).ok()?, 16).ok()
    };
    let mut at = 0;
    while at < json.len() {
        if json[at] != b'\\' {
            at += 1;
            continue;
        }
        match escape(at) {
            Some(0xD800..=0xDBFF) => match escape(at + 6) {
                Some(0xDC00..=0xDFFF) => at += 12,
                _ => return true,
            },
            Some(0xDC00..=0xDFFF) => return true,
            Some(_) => at += 6,
            // Any other escape is two bytes, `\\` included.
            None => at += 2,
        }
    }
    false
}

/// The unsigned integer `token` is, if that is what it is.
fn unsigned(token: &[u8]) -> Option<u64> {
    if token.is_empty() || !token.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(token).ok()?.parse().ok()
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

    /// Skips the value that follows (after blanks) and returns its byte range, or
    /// `None` when the bytes end before it does.
    fn value_span(&mut self) -> Option<std::ops::Range<usize>> {
        self.skip_blanks();
        let start = self.at;
        match *self.bytes.get(self.at)? {
            b'"' => {
                self.at += 1;
                self.skip_string()?;
            }
            b'{' | b'[' => {
                let mut depth = 0usize;
                loop {
                    match *self.bytes.get(self.at)? {
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => depth -= 1,
                        b'"' => {
                            self.at += 1;
                            self.skip_string()?;
                            continue;
                        }
                        _ => {}
                    }
                    self.at += 1;
                    if depth == 0 {
                        break;
                    }
                }
            }
            _ => {
                while self.bytes.get(self.at).is_some_and(|b| {
                    !matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\r' | b'\n')
                }) {
                    self.at += 1;
                }
                if self.at == self.bytes.len() {
                    return None;
                }
            }
        }
        Some(start..self.at)
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
    fn reads_the_id_and_method_of_a_request() {
        let read = salvage(br#"{"id":"r-1","jsonrpc":"2.0","method":"composer/set","params":{"#);
        let request = read.request.expect("a readable request");
        assert_eq!(request.id, RequestId::String("r-1".into()));
        assert_eq!(request.method, "composer/set");
        assert!(request.has_params && !request.params_only);
        let numeric = salvage(br#"{"jsonrpc":"2.0","id":7,"method":"m"#);
        assert_eq!(numeric.request, None, "the method string is cut off");
        let escaped = salvage(br#"{"id":"a\"b","method":"x\u0041","jsonrpc":2}"#);
        let request = escaped.request.expect("escapes are read");
        assert_eq!(request.id, RequestId::String("a\"b".into()));
        assert_eq!(request.method, "xA");
        assert_eq!(salvage(br#"{"id":-1,"method":"m"}"#).request, None);
    }

    #[test]
    fn a_fault_inside_params_alone_is_found() {
        let lone =
            br#"{"id":3,"jsonrpc":"2.0","method":"composer/set","params":{"text":"\ud800"}}"#;
        let read = salvage_frame(lone, Codec::JsonRpc);
        let request = read.request.expect("a readable request");
        assert_eq!(request.id, RequestId::Number(3));
        assert!(request.params_only);
        let outside = br#"{"id":3,"jsonrpc":"2.0","method":"m","params":{},"x":tru}"#;
        let request = salvage_frame(outside, Codec::JsonRpc).request.unwrap();
        assert!(!request.params_only);
        let canonical = br#"{"id":3,"jsonrpc":"2.0","method":"m","params":{"b":1,"a":2}}"#;
        let request = salvage_frame(canonical, Codec::Canonical).request.unwrap();
        assert!(request.params_only, "unsorted keys inside params");
        let envelope = br#"{"jsonrpc":"2.0","id":3,"method":"m","params":{}}"#;
        let request = salvage_frame(envelope, Codec::Canonical).request.unwrap();
        assert!(!request.params_only, "unsorted envelope keys");
    }

    #[test]
    fn lone_surrogates_are_found() {
        assert!(has_lone_surrogate(br#"{"t":"\ud800"}"#));
        assert!(has_lone_surrogate(br#"{"t":"a\udc00b"}"#));
        assert!(has_lone_surrogate(br#"{"t":"\ud83d\u0041"}"#));
        assert!(!has_lone_surrogate(br#"{"t":"\ud83d\ude00"}"#));
        assert!(
            !has_lone_surrogate(br#"{"t":"\\ud800"}"#),
            "an escaped backslash"
        );
        assert!(!has_lone_surrogate(br#"{"t":"\u0041"}"#));
    }

    #[test]
    fn excerpts_are_short_and_printable() {
        assert_eq!(excerpt(b"hello\tworld"), "hello world");
        let long = excerpt(&[b'x'; 500]);
        assert_eq!(long.chars().count(), EXCERPT_CHARS + 1);
        assert!(long.ends_with('…'));
    }
}
