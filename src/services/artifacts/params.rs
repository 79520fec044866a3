//! The `artifact/publish` params object (section 2.8), parsed and checked before any
//! byte is read.
//!
//! The object is closed: `mime_type`, `size`, `sha256` and exactly one of `data` or
//! `path`. `parent_request_id` belongs to the routing and is accepted and ignored here;
//! the caller resolves it before publishing. As everywhere in the host's parsing, an
//! optional member whose value is `null` counts as absent, so `"path": null` next to
//! `data` is one source, not two.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use serde_json::{Map, Value};

use crate::limits::{MAX_ARTIFACT_BYTES, MAX_ARTIFACT_INLINE_BYTES};

use super::error::{ArtifactError, Quota, Rejection};
use super::media::MediaType;
use super::path::ScratchPath;

/// The members of the params object.
const PARAMS_MEMBERS: &[&str] = &[
    "parent_request_id",
    "mime_type",
    "size",
    "sha256",
    "data",
    "path",
];

/// The members of the inline `data` object.
const DATA_MEMBERS: &[&str] = &["encoding", "data"];

/// A SHA-256 digest given as exactly 64 lowercase hexadecimal digits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sha256Hex(String);

impl Sha256Hex {
    /// Accepts exactly 64 characters from `0-9a-f`.
    pub fn parse(text: &str) -> Option<Sha256Hex> {
        let lower_hex = |b: &u8| b.is_ascii_digit() || (b'a'..=b'f').contains(b);
        (text.len() == 64 && text.as_bytes().iter().all(lower_hex))
            .then(|| Sha256Hex(text.to_owned()))
    }

    /// The lowercase digits.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Where the published bytes come from.
#[derive(Debug)]
pub(crate) enum Source {
    /// Inline data, already decoded (at most 256 KiB).
    Inline(Vec<u8>),
    /// A file under the scratch directory.
    Path(ScratchPath),
}

/// A well-formed publication whose bytes are still to be read and verified.
#[derive(Debug)]
pub(crate) struct PublishParams {
    pub media_type: MediaType,
    /// The declared size, at most 20 MiB.
    pub size: u64,
    pub sha256: Sha256Hex,
    pub source: Source,
}

impl PublishParams {
    /// Parses `params`, checking the per-artifact and inline bounds but not the
    /// generation's quotas.
    pub fn parse(params: &Value) -> Result<PublishParams, ArtifactError> {
        let object = closed_object(params, "params", PARAMS_MEMBERS)?;
        let mime_type = required_str(object, "mime_type")?;
        let media_type = MediaType::from_canonical(mime_type)
            .ok_or_else(|| ArtifactError::invalid("mime_type", Rejection::NonCanonicalMimeType))?;
        let size = required(object, "size")?
            .as_u64()
            .ok_or_else(|| ArtifactError::invalid("size", Rejection::WrongType))?;
        if size > MAX_ARTIFACT_BYTES {
            return Err(ArtifactError::QuotaExceeded {
                which: Quota::ArtifactBytes,
            });
        }
        let sha256 = Sha256Hex::parse(required_str(object, "sha256")?)
            .ok_or_else(|| ArtifactError::invalid("sha256", Rejection::MalformedDigest))?;
        let source = match (present(object, "data"), present(object, "path")) {
            (Some(_), Some(_)) => {
                return Err(ArtifactError::invalid("params", Rejection::BothSources))
            }
            (None, None) => return Err(ArtifactError::invalid("params", Rejection::NoSource)),
            (Some(data), None) => Source::Inline(inline(data)?),
            (None, Some(path)) => {
                let path = path
                    .as_str()
                    .ok_or_else(|| ArtifactError::invalid("path", Rejection::WrongType))?;
                Source::Path(
                    ScratchPath::parse(path)
                        .map_err(|reason| ArtifactError::invalid("path", reason))?,
                )
            }
        };
        Ok(PublishParams {
            media_type,
            size,
            sha256,
            source,
        })
    }
}

/// Decodes the inline `data` object.
fn inline(data: &Value) -> Result<Vec<u8>, ArtifactError> {
    let object = closed_object(data, "data", DATA_MEMBERS)?;
    let encoding = object
        .get("encoding")
        .filter(|value| !value.is_null())
        .ok_or_else(|| ArtifactError::invalid("data.encoding", Rejection::Missing))?;
    match encoding.as_str() {
        Some("base64") => {}
        Some(_) => {
            return Err(ArtifactError::invalid(
                "data.encoding",
                Rejection::UnsupportedEncoding,
            ))
        }
        None => {
            return Err(ArtifactError::invalid(
                "data.encoding",
                Rejection::WrongType,
            ))
        }
    }
    let text = match object.get("data") {
        None | Some(Value::Null) => {
            return Err(ArtifactError::invalid("data.data", Rejection::Missing))
        }
        Some(Value::String(text)) => text,
        Some(_) => return Err(ArtifactError::invalid("data.data", Rejection::WrongType)),
    };
    // Refuse oversized text before decoding: padded base64 takes 4 characters per 3 bytes.
    let max_encoded = MAX_ARTIFACT_INLINE_BYTES.div_ceil(3) * 4;
    if u64::try_from(text.len()).map_or(true, |len| len > max_encoded) {
        return Err(ArtifactError::QuotaExceeded {
            which: Quota::InlineBytes,
        });
    }
    let bytes = STANDARD
        .decode(text)
        .map_err(|_| ArtifactError::invalid("data.data", Rejection::MalformedBase64))?;
    if u64::try_from(bytes.len()).map_or(true, |len| len > MAX_ARTIFACT_INLINE_BYTES) {
        return Err(ArtifactError::QuotaExceeded {
            which: Quota::InlineBytes,
        });
    }
    Ok(bytes)
}

/// `value` as an object with no member outside `members`.
fn closed_object<'a>(
    value: &'a Value,
    field: &'static str,
    members: &[&str],
) -> Result<&'a Map<String, Value>, ArtifactError> {
    let Value::Object(object) = value else {
        return Err(ArtifactError::invalid(field, Rejection::NotAnObject));
    };
    if let Some(unknown) = object.keys().find(|key| !members.contains(&key.as_str())) {
        return Err(ArtifactError::invalid(
            field,
            Rejection::unknown_member(unknown),
        ));
    }
    Ok(object)
}

/// The member `name`, unless absent or null.
fn present<'a>(object: &'a Map<String, Value>, name: &str) -> Option<&'a Value> {
    object.get(name).filter(|value| !value.is_null())
}

/// The required member `name`.
fn required<'a>(
    object: &'a Map<String, Value>,
    name: &'static str,
) -> Result<&'a Value, ArtifactError> {
    present(object, name).ok_or_else(|| ArtifactError::invalid(name, Rejection::Missing))
}

/// The required string member `name`.
fn required_str<'a>(
    object: &'a Map<String, Value>,
    name: &'static str,
) -> Result<&'a str, ArtifactError> {
    required(object, name)?
        .as_str()
        .ok_or_else(|| ArtifactError::invalid(name, Rejection::WrongType))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const DIGEST: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    fn parse(params: Value) -> Result<PublishParams, ArtifactError> {
        PublishParams::parse(&params)
    }

    fn invalid(field: &'static str, reason: Rejection) -> Result<(), ArtifactError> {
        Err(ArtifactError::InvalidParams { field, reason })
    }

    fn outcome(params: Value) -> Result<(), ArtifactError> {
        parse(params).map(|_| ())
    }

    #[test]
    fn reference_example_shapes_parse() {
        let inline = parse(json!({
            "parent_request_id": 2,
            "mime_type": "image/png",
            "size": 3,
            "sha256": DIGEST,
            "data": {"encoding": "base64", "data": "AQID"}
        }))
        .unwrap();
        assert_eq!(inline.media_type, MediaType::Png);
        assert_eq!(inline.size, 3);
        assert_eq!(inline.sha256.as_str(), DIGEST);
        assert!(matches!(inline.source, Source::Inline(ref bytes) if bytes == &[1, 2, 3]));
        let path = parse(json!({
            "mime_type": "image/png",
            "size": 1234,
            "sha256": DIGEST,
            "path": "screenshots/result.png",
            "data": null
        }))
        .unwrap();
        assert!(
            matches!(path.source, Source::Path(ref p) if p.components().collect::<Vec<_>>() == ["screenshots", "result.png"])
        );
    }

    #[test]
    fn params_are_closed_and_typed() {
        let base = json!({"mime_type": "image/png", "size": 3, "sha256": DIGEST,
            "data": {"encoding": "base64", "data": "AQID"}});
        let with = |key: &str, value: Value| {
            let mut params = base.clone();
            params[key] = value;
            params
        };
        let without = |key: &str| {
            let mut params = base.clone();
            params.as_object_mut().unwrap().remove(key);
            params
        };
        assert_eq!(
            outcome(json!([])),
            invalid("params", Rejection::NotAnObject)
        );
        assert_eq!(
            outcome(with("owner", json!(1))),
            invalid(
                "params",
                Rejection::UnknownMember {
                    member: "owner".into()
                }
            )
        );
        assert_eq!(
            outcome(without("mime_type")),
            invalid("mime_type", Rejection::Missing)
        );
        assert_eq!(
            outcome(without("size")),
            invalid("size", Rejection::Missing)
        );
        assert_eq!(
            outcome(without("sha256")),
            invalid("sha256", Rejection::Missing)
        );
        assert_eq!(
            outcome(with("mime_type", json!(1))),
            invalid("mime_type", Rejection::WrongType)
        );
        for size in [json!(-1), json!(1.5), json!("3"), json!(true)] {
            assert_eq!(
                outcome(with("size", size)),
                invalid("size", Rejection::WrongType)
            );
        }
        assert_eq!(
            outcome(with("size", json!(MAX_ARTIFACT_BYTES + 1))),
            Err(ArtifactError::QuotaExceeded {
                which: Quota::ArtifactBytes
            })
        );
        for mime in ["image/jpg", "IMAGE/PNG", "image/png;q=1", "audio/mp3"] {
            assert_eq!(
                outcome(with("mime_type", json!(mime))),
                invalid("mime_type", Rejection::NonCanonicalMimeType)
            );
        }
        let upper = DIGEST.to_uppercase();
        for digest in [
            upper.as_str(),
            &DIGEST[1..],
            "g".repeat(64).as_str(),
            &format!("{DIGEST}0"),
        ] {
            assert_eq!(
                outcome(with("sha256", json!(digest))),
                invalid("sha256", Rejection::MalformedDigest)
            );
        }
        let long_unknown = "k".repeat(100);
        let error = outcome(with(&long_unknown, json!(1))).unwrap_err();
        assert_eq!(
            error,
            ArtifactError::InvalidParams {
                field: "params",
                reason: Rejection::UnknownMember {
                    member: "k".repeat(64)
                }
            }
        );
    }

    #[test]
    fn exactly_one_source() {
        let base = json!({"mime_type": "image/png", "size": 3, "sha256": DIGEST});
        assert_eq!(
            outcome(base.clone()),
            invalid("params", Rejection::NoSource)
        );
        let mut both = base.clone();
        both["data"] = json!({"encoding": "base64", "data": "AQID"});
        both["path"] = json!("a.png");
        assert_eq!(outcome(both), invalid("params", Rejection::BothSources));
        let mut nulls = base.clone();
        nulls["data"] = Value::Null;
        nulls["path"] = Value::Null;
        assert_eq!(outcome(nulls), invalid("params", Rejection::NoSource));
        let mut number = base;
        number["path"] = json!(7);
        assert_eq!(outcome(number), invalid("path", Rejection::WrongType));
    }

    #[test]
    fn inline_data_is_strict_base64() {
        let with_data = |data: Value| json!({"mime_type": "image/png", "size": 3, "sha256": DIGEST, "data": data});
        assert_eq!(
            outcome(with_data(json!("AQID"))),
            invalid("data", Rejection::NotAnObject)
        );
        assert_eq!(
            outcome(with_data(
                json!({"encoding": "base64", "data": "AQID", "x": 1})
            )),
            invalid("data", Rejection::UnknownMember { member: "x".into() })
        );
        assert_eq!(
            outcome(with_data(json!({"data": "AQID"}))),
            invalid("data.encoding", Rejection::Missing)
        );
        assert_eq!(
            outcome(with_data(json!({"encoding": "base64url", "data": "AQID"}))),
            invalid("data.encoding", Rejection::UnsupportedEncoding)
        );
        assert_eq!(
            outcome(with_data(json!({"encoding": "base64"}))),
            invalid("data.data", Rejection::Missing)
        );
        assert_eq!(
            outcome(with_data(json!({"encoding": "base64", "data": 1}))),
            invalid("data.data", Rejection::WrongType)
        );
        // Whitespace, missing padding, URL-safe alphabet, non-zero trailing bits.
        for text in ["AQ ID", "AQID\n", "AQ", "-_8=", "AR=="] {
            assert_eq!(
                outcome(with_data(json!({"encoding": "base64", "data": text}))),
                invalid("data.data", Rejection::MalformedBase64),
                "{text:?}"
            );
        }
        assert!(outcome(with_data(json!({"encoding": "base64", "data": "AQ=="}))).is_ok());
        assert!(outcome(with_data(json!({"encoding": "base64", "data": ""}))).is_ok());
    }

    #[test]
    fn inline_data_is_bounded() {
        let limit = usize::try_from(MAX_ARTIFACT_INLINE_BYTES).unwrap();
        let at_limit = STANDARD.encode(vec![7u8; limit]);
        let params = |text: &str| {
            json!({"mime_type": "image/png", "size": 3, "sha256": DIGEST,
                "data": {"encoding": "base64", "data": text}})
        };
        assert!(outcome(params(&at_limit)).is_ok());
        let over = STANDARD.encode(vec![7u8; limit + 1]);
        assert_eq!(
            outcome(params(&over)),
            Err(ArtifactError::QuotaExceeded {
                which: Quota::InlineBytes
            })
        );
        let huge = "A".repeat(4 * limit);
        assert_eq!(
            outcome(params(&huge)),
            Err(ArtifactError::QuotaExceeded {
                which: Quota::InlineBytes
            })
        );
    }
}
