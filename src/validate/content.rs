//! API 0.2 content parts of a tool result (section 1.2) and the media rules.
//!
//! Parts are closed per type: a member the part's type does not define is rejected, as is
//! an unknown `type`. Media parts need the `artifacts` feature and a verified artifact.

use std::fmt;

use serde_json::Value;

use crate::limits::{MAX_CONTENT_PARTS, MAX_RESULT_MEDIA_BYTES};

use super::error::{excerpt, ResultError, ResultErrorKind};
use super::field::{
    as_array, as_object, keyword, optional_string, required, required_string, Keyword, ResultPath,
};
pub use super::names::MediaKind;
use super::path::Path;

/// One part of a tool result's content.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ContentPart {
    /// Model-visible text.
    Text {
        /// The text.
        text: String,
    },
    /// An image held as a verified artifact.
    Image {
        /// The artifact's opaque id.
        artifact_id: String,
        /// An `image/*` MIME type, equal to the artifact's.
        mime_type: String,
        /// Optional alternative text.
        alt: Option<String>,
    },
    /// Audio held as a verified artifact.
    Audio {
        /// The artifact's opaque id.
        artifact_id: String,
        /// An `audio/*` MIME type, equal to the artifact's.
        mime_type: String,
        /// Optional transcript.
        transcript: Option<String>,
    },
}

impl ContentPart {
    /// The text of a text part.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            ContentPart::Text { text } => Some(text),
            ContentPart::Image { .. } | ContentPart::Audio { .. } => None,
        }
    }
}

/// What the host knows about a verified artifact.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifiedArtifact {
    /// The artifact's MIME type as verified at publication.
    pub mime_type: String,
    /// The artifact's size in bytes.
    pub size_bytes: u64,
}

/// Looks up artifacts for one tool result.
///
/// An implementation answers only for artifacts verified for the active host-derived
/// session owner and process generation of the call being validated (section 1.2); any
/// other id, foreign or stale, is `None`.
pub trait ArtifactResolver {
    /// The verified artifact named `artifact_id`, if there is one in scope.
    fn resolve(&self, artifact_id: &str) -> Option<VerifiedArtifact>;
}

/// How media parts are treated.
#[derive(Clone, Copy)]
pub enum MediaPolicy<'a> {
    /// The `artifacts` feature was not negotiated: every image or audio part is rejected.
    NotNegotiated,
    /// The `artifacts` feature was negotiated: each media part must name an artifact this
    /// resolver verifies, of the same MIME type.
    Artifacts(&'a dyn ArtifactResolver),
}

impl fmt::Debug for MediaPolicy<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MediaPolicy::NotNegotiated => f.write_str("NotNegotiated"),
            MediaPolicy::Artifacts(_) => f.write_str("Artifacts(..)"),
        }
    }
}

/// The `type` of a content part.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PartType {
    Text,
    Image,
    Audio,
}

impl Keyword for PartType {
    const ALL: &'static [PartType] = &[PartType::Text, PartType::Image, PartType::Audio];
    const NAMES: &'static [&'static str] = &["text", "image", "audio"];
}

/// Parses and validates the API 0.2 `content` array at `path`.
pub(crate) fn content_parts(
    value: &Value,
    path: &Path,
    media: MediaPolicy,
) -> Result<Vec<ContentPart>, ResultError> {
    let items = as_array(value, path)?;
    if items.is_empty() {
        return Err(path.error(ResultErrorKind::EmptyContent));
    }
    if items.len() > MAX_CONTENT_PARTS {
        return Err(path.error(ResultErrorKind::TooManyContentParts {
            count: items.len(),
            max: MAX_CONTENT_PARTS,
        }));
    }
    let mut parts = Vec::with_capacity(items.len());
    let mut media_bytes: u64 = 0;
    for (index, item) in items.iter().enumerate() {
        let part_path = path.index(index);
        let part = content_part(item, &part_path, media)?;
        if let (MediaPolicy::Artifacts(resolver), Some((artifact_id, mime_type))) =
            (media, media_reference(&part))
        {
            let size = verify_artifact(resolver, artifact_id, mime_type, &part_path)?;
            media_bytes = media_bytes.saturating_add(size);
            if media_bytes > MAX_RESULT_MEDIA_BYTES {
                return Err(part_path.error(ResultErrorKind::MediaBytesExceeded {
                    max: MAX_RESULT_MEDIA_BYTES,
                }));
            }
        }
        parts.push(part);
    }
    if !parts.iter().any(|part| part.as_text().is_some()) {
        return Err(path.error(ResultErrorKind::NoTextPart));
    }
    Ok(parts)
}

/// Parses one part at `path`.
fn content_part(
    value: &Value,
    path: &Path,
    media: MediaPolicy,
) -> Result<ContentPart, ResultError> {
    let object = as_object(value, path)?;
    let type_path = path.key("type");
    let part_type: PartType = keyword(required(object, "type", path)?, &type_path)?;
    let members: &[&str] = match part_type {
        PartType::Text => &["type", "text"],
        PartType::Image => &["type", "artifact_id", "mime_type", "alt"],
        PartType::Audio => &["type", "artifact_id", "mime_type", "transcript"],
    };
    let kind = match part_type {
        PartType::Text => None,
        PartType::Image => Some(MediaKind::Image),
        PartType::Audio => Some(MediaKind::Audio),
    };
    if let (Some(kind), MediaPolicy::NotNegotiated) = (kind, media) {
        return Err(path.error(ResultErrorKind::MediaNotNegotiated { kind }));
    }
    // Like every optional member, a null-valued one counts as absent.
    let unknown = object
        .iter()
        .find(|(key, value)| !value.is_null() && !members.contains(&key.as_str()));
    if let Some((unknown, _)) = unknown {
        return Err(path.error(ResultErrorKind::UnknownMember {
            member: excerpt(unknown),
        }));
    }
    let Some(kind) = kind else {
        return Ok(ContentPart::Text {
            text: required_string(object, "text", path)?,
        });
    };
    let artifact_id = required_string(object, "artifact_id", path)?;
    if artifact_id.is_empty() {
        return Err(path.key("artifact_id").error(ResultErrorKind::Empty));
    }
    let mime_type = required_string(object, "mime_type", path)?;
    check_mime_kind(&mime_type, kind, &path.key("mime_type"))?;
    Ok(match kind {
        MediaKind::Image => ContentPart::Image {
            artifact_id,
            mime_type,
            alt: optional_string(object, "alt", path)?,
        },
        MediaKind::Audio => ContentPart::Audio {
            artifact_id,
            mime_type,
            transcript: optional_string(object, "transcript", path)?,
        },
    })
}

/// The artifact id and MIME type of a media part.
fn media_reference(part: &ContentPart) -> Option<(&str, &str)> {
    match part {
        ContentPart::Text { .. } => None,
        ContentPart::Image {
            artifact_id,
            mime_type,
            ..
        }
        | ContentPart::Audio {
            artifact_id,
            mime_type,
            ..
        } => Some((artifact_id, mime_type)),
    }
}

/// Resolves a media part's artifact and returns its size.
fn verify_artifact(
    resolver: &dyn ArtifactResolver,
    artifact_id: &str,
    mime_type: &str,
    path: &Path,
) -> Result<u64, ResultError> {
    let Some(artifact) = resolver.resolve(artifact_id) else {
        return Err(path
            .key("artifact_id")
            .error(ResultErrorKind::UnverifiedArtifact {
                artifact_id: excerpt(artifact_id),
            }));
    };
    let same = match (mime_essence(mime_type), mime_essence(&artifact.mime_type)) {
        (Some(part), Some(verified)) => part.eq_ignore_ascii_case(verified),
        _ => false,
    };
    if !same {
        return Err(path
            .key("mime_type")
            .error(ResultErrorKind::ArtifactMimeMismatch {
                part: excerpt(mime_type),
                artifact: excerpt(&artifact.mime_type),
            }));
    }
    Ok(artifact.size_bytes)
}

/// Checks that `mime_type` is well formed and of the top-level type of `kind`.
fn check_mime_kind(mime_type: &str, kind: MediaKind, path: &Path) -> Result<(), ResultError> {
    let Some(essence) = mime_essence(mime_type) else {
        return Err(path.error(ResultErrorKind::InvalidMimeType {
            mime_type: excerpt(mime_type),
        }));
    };
    let top_level = essence.split('/').next().unwrap_or_default();
    if !top_level.eq_ignore_ascii_case(kind.as_str()) {
        return Err(path.error(ResultErrorKind::MimeKindMismatch {
            kind,
            mime_type: excerpt(mime_type),
        }));
    }
    Ok(())
}

/// The `type/subtype` of a well-formed MIME type, without parameters.
///
/// Both names must be RFC 6838 restricted names (a letter or digit, then letters, digits
/// and `!#$&-^_.+`, at most 127 characters). Parameters after `;` are kept out of the
/// comparison and may hold no control characters.
fn mime_essence(mime_type: &str) -> Option<&str> {
    let (essence, parameters) = match mime_type.split_once(';') {
        Some((essence, parameters)) => (essence.trim_end_matches([' ', '\t']), parameters),
        None => (mime_type, ""),
    };
    if parameters.chars().any(char::is_control) {
        return None;
    }
    let (top, sub) = essence.split_once('/')?;
    (restricted_name(top) && restricted_name(sub)).then_some(essence)
}

/// True for an RFC 6838 `restricted-name`.
pub(crate) fn restricted_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    let Some(first) = bytes.next() else {
        return false;
    };
    name.len() <= 127
        && first.is_ascii_alphanumeric()
        && bytes.all(|b| b.is_ascii_alphanumeric() || b"!#$&-^_.+".contains(&b))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn mime_essence_accepts_well_formed_types() {
        assert_eq!(mime_essence("image/png"), Some("image/png"));
        assert_eq!(
            mime_essence("image/svg+xml; charset=utf-8"),
            Some("image/svg+xml")
        );
        assert_eq!(mime_essence("audio/ogg;codecs=opus"), Some("audio/ogg"));
        assert_eq!(mime_essence("image"), None);
        assert_eq!(mime_essence("image/"), None);
        assert_eq!(mime_essence("/png"), None);
        assert_eq!(mime_essence("image/p ng"), None);
        assert_eq!(mime_essence("image/png;\nx=1"), None);
    }

    #[test]
    fn mime_kind_is_case_insensitive() {
        let root = Path::Root;
        assert!(check_mime_kind("IMAGE/PNG", MediaKind::Image, &root).is_ok());
        let error = check_mime_kind("audio/mpeg", MediaKind::Image, &root).unwrap_err();
        assert!(matches!(
            error.kind(),
            ResultErrorKind::MimeKindMismatch {
                kind: MediaKind::Image,
                ..
            }
        ));
        let error = check_mime_kind("imagepng", MediaKind::Image, &root).unwrap_err();
        assert!(matches!(
            error.kind(),
            ResultErrorKind::InvalidMimeType { .. }
        ));
    }

    #[test]
    fn text_part_is_closed() {
        let error = content_parts(
            &json!([{"type": "text", "text": "a", "alt": "b"}]),
            &Path::Root.key("content"),
            MediaPolicy::NotNegotiated,
        )
        .unwrap_err();
        assert_eq!(error.path(), "content[0]");
        assert_eq!(
            error.kind(),
            &ResultErrorKind::UnknownMember {
                member: "alt".into()
            }
        );
    }
}
