//! The closed BlobRef value (section 2.27).

use std::fmt;

use serde_json::{json, Value};

/// Most bytes of a BlobRef's `media_type`.
const MAX_MEDIA_TYPE_BYTES: usize = 255;

/// `{"$blob": token, "bytes": n, "digest": {"algorithm": "sha256", "value": hex},
/// "media_type": "type/subtype"}`. Identity is `$blob`, never the digest.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct BlobRef {
    /// The opaque host token.
    pub token: String,
    /// The size in bytes.
    pub bytes: u64,
    /// The SHA-256, 64 lowercase hex digits.
    pub sha256: String,
    /// The media type.
    pub media_type: String,
}

impl BlobRef {
    /// Reads a BlobRef: exactly its four members, a 1-128 printable ASCII token, a
    /// portable non-negative size (at most 2^53 - 1), a closed sha256 digest of 64
    /// lowercase hex digits and a `type/subtype` media type.
    pub fn parse(value: &Value) -> Result<BlobRef, BlobRefProblem> {
        let map = value.as_object().ok_or(BlobRefProblem::NotAnObject)?;
        if let Some(name) = map
            .keys()
            .find(|k| !matches!(k.as_str(), "$blob" | "bytes" | "digest" | "media_type"))
        {
            return Err(BlobRefProblem::UnknownMember { name: name.clone() });
        }
        let token = match map.get("$blob") {
            Some(Value::String(t)) if crate::validate::resource::is_token(t) => t.clone(),
            _ => return Err(BlobRefProblem::Token),
        };
        let bytes = map
            .get("bytes")
            .and_then(Value::as_u64)
            .filter(|n| *n < (1 << 53))
            .ok_or(BlobRefProblem::Bytes)?;
        let sha256 = parse_digest(map.get("digest")).ok_or(BlobRefProblem::Digest)?;
        let media_type = match map.get("media_type") {
            Some(Value::String(m)) if is_media_type(m) => m.clone(),
            _ => return Err(BlobRefProblem::MediaType),
        };
        Ok(BlobRef {
            token,
            bytes,
            sha256,
            media_type,
        })
    }

    /// The wire value.
    pub fn to_value(&self) -> Value {
        json!({
            "$blob": self.token,
            "bytes": self.bytes,
            "digest": {"algorithm": "sha256", "value": self.sha256},
            "media_type": self.media_type,
        })
    }
}

/// The `value` of a closed `{"algorithm":"sha256","value"}` digest.
pub(crate) fn parse_digest(digest: Option<&Value>) -> Option<String> {
    let map = digest?.as_object()?;
    if map.len() != 2 || map.get("algorithm")?.as_str()? != "sha256" {
        return None;
    }
    let value = map.get("value")?.as_str()?;
    crate::hex::is_sha256(value).then(|| value.to_string())
}

/// True for a `type/subtype` of RFC 6838 restricted names, without parameters.
pub(crate) fn is_media_type(text: &str) -> bool {
    use crate::validate::content::restricted_name;
    text.len() <= MAX_MEDIA_TYPE_BYTES
        && text
            .split_once('/')
            .is_some_and(|(kind, sub)| restricted_name(kind) && restricted_name(sub))
}

/// Why a value is not a BlobRef.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum BlobRefProblem {
    /// Not an object.
    NotAnObject,
    /// A member outside the closed shape.
    UnknownMember {
        /// Its name.
        name: String,
    },
    /// `$blob` is not a token of 1 to 128 printable ASCII bytes.
    Token,
    /// `bytes` is not an integer from 0 to 2^53 - 1.
    Bytes,
    /// `digest` is not `{"algorithm":"sha256","value":<64 lowercase hex digits>}`.
    Digest,
    /// `media_type` is not a `type/subtype`.
    MediaType,
}

impl fmt::Display for BlobRefProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BlobRefProblem::NotAnObject => f.write_str("a BlobRef must be an object"),
            BlobRefProblem::UnknownMember { name } => write!(
                f,
                "a BlobRef has exactly `$blob`, `bytes`, `digest` and `media_type`, not `{name}`"
            ),
            BlobRefProblem::Token => {
                f.write_str("`$blob` must be a token of 1 to 128 printable ASCII bytes")
            }
            BlobRefProblem::Bytes => f.write_str("`bytes` must be an integer from 0 to 2^53 - 1"),
            BlobRefProblem::Digest => f.write_str(
                "`digest` must be {\"algorithm\":\"sha256\",\"value\":<64 lowercase hex digits>}",
            ),
            BlobRefProblem::MediaType => f.write_str("`media_type` must be a type/subtype"),
        }
    }
}

impl std::error::Error for BlobRefProblem {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blob_refs_are_closed_and_exact() {
        let good = json!({"$blob": "blob-1", "bytes": 1024,
            "digest": {"algorithm": "sha256", "value": "0".repeat(64)},
            "media_type": "application/octet-stream"});
        assert_eq!(BlobRef::parse(&good).unwrap().to_value(), good);
        let mut bad = good.clone();
        bad["digest"]["value"] = json!("A".repeat(64));
        assert_eq!(BlobRef::parse(&bad), Err(BlobRefProblem::Digest));
        let mut bad = good.clone();
        bad["bytes"] = json!(-1);
        assert_eq!(BlobRef::parse(&bad), Err(BlobRefProblem::Bytes));
        let mut bad = good.clone();
        bad["digest"]["algorithm"] = json!("sha1");
        assert_eq!(BlobRef::parse(&bad), Err(BlobRefProblem::Digest));
        let mut bad = good.clone();
        bad["media_type"] = json!("octet-stream");
        assert_eq!(BlobRef::parse(&bad), Err(BlobRefProblem::MediaType));
        let mut bad = good;
        bad["path"] = json!("/etc/passwd");
        assert!(matches!(
            BlobRef::parse(&bad),
            Err(BlobRefProblem::UnknownMember { .. })
        ));
    }
}
