//! Why an `artifact/publish` request (section 2.8) failed, with its JSON-RPC code.
//!
//! No error, neither its `Display` nor its `Debug`, ever carries the published bytes or
//! the base64 text: at most a member name (cut to 64 bytes), a declared size or a
//! media type from the canonical list.

use std::fmt;
use std::io;

use crate::limits::{
    MAX_ARTIFACTS_PER_GENERATION, MAX_ARTIFACT_BYTES, MAX_ARTIFACT_GENERATION_BYTES,
    MAX_ARTIFACT_INLINE_BYTES, MAX_ARTIFACT_PATH_BYTES, MAX_ARTIFACT_PATH_COMPONENTS,
};
use crate::wire::codes::{INTERNAL_ERROR, INVALID_PARAMS, NO_OWNER};

use super::media::MediaType;

/// Longest excerpt of an extension-chosen member name kept in an error, in bytes.
const MEMBER_EXCERPT_BYTES: usize = 64;

/// A failed publication.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ArtifactError {
    /// The params were malformed, or the published bytes were rejected: -32602.
    InvalidParams {
        /// The offending member, such as `sha256`, `data.data` or `path`; `params` for
        /// the object itself.
        field: &'static str,
        /// The rule that was broken.
        reason: Rejection,
    },
    /// A section 2.8 quota would be exceeded: -32602 ("malformed or rejected publication
    /// uses -32602").
    QuotaExceeded {
        /// Which quota.
        which: Quota,
    },
    /// The owner handed in is not of this store's process generation, or the store's
    /// generation was retired (reload or settlement): there is no active host-owned
    /// session context for it, -32002.
    NoActiveOwner,
    /// A host-side I/O failure unrelated to what the extension sent, such as running out
    /// of file descriptors: -32603.
    Io {
        /// The kind of the underlying error.
        kind: io::ErrorKind,
    },
}

impl ArtifactError {
    /// The JSON-RPC error code of the `artifact/publish` error response.
    pub fn code(&self) -> i64 {
        match self {
            ArtifactError::InvalidParams { .. } | ArtifactError::QuotaExceeded { .. } => {
                INVALID_PARAMS
            }
            ArtifactError::NoActiveOwner => NO_OWNER,
            ArtifactError::Io { .. } => INTERNAL_ERROR,
        }
    }

    /// An [`ArtifactError::InvalidParams`] for `field`.
    pub(crate) fn invalid(field: &'static str, reason: Rejection) -> ArtifactError {
        ArtifactError::InvalidParams { field, reason }
    }
}

impl fmt::Display for ArtifactError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArtifactError::InvalidParams { field, reason } => {
                write!(f, "artifact/publish `{field}` {reason}")
            }
            ArtifactError::QuotaExceeded { which } => {
                write!(f, "artifact/publish exceeds {which}")
            }
            ArtifactError::NoActiveOwner => f.write_str(
                "artifact/publish has no active host-owned session context in this process generation",
            ),
            ArtifactError::Io { kind } => {
                write!(f, "artifact/publish failed on the host: {kind}")
            }
        }
    }
}

impl std::error::Error for ArtifactError {}

/// The rule a publication broke.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Rejection {
    /// The params (or `data`) is not a JSON object.
    NotAnObject,
    /// A member the closed object does not define (its name, cut to 64 bytes).
    UnknownMember {
        /// The member's name, cut to 64 bytes.
        member: String,
    },
    /// A required member is absent.
    Missing,
    /// The member has the wrong JSON type, or `size` is not an unsigned integer.
    WrongType,
    /// `mime_type` is not exactly one of the canonical types of [`MediaType`].
    NonCanonicalMimeType,
    /// `sha256` is not exactly 64 lowercase hexadecimal digits.
    MalformedDigest,
    /// `data.encoding` is not `"base64"`.
    UnsupportedEncoding,
    /// `data.data` is not strict standard-alphabet, padded base64 without whitespace.
    MalformedBase64,
    /// Neither `data` nor `path` is present.
    NoSource,
    /// Both `data` and `path` are present.
    BothSources,
    /// `path` is empty.
    EmptyPath,
    /// `path` is absolute.
    AbsolutePath,
    /// `path` is longer than 4096 bytes.
    PathTooLong,
    /// `path` has more than 64 components.
    TooManyComponents,
    /// `path` has an empty component (`a//b`, or a trailing `/`).
    EmptyComponent,
    /// `path` has a `.` component.
    DotComponent,
    /// `path` has a `..` component.
    ParentComponent,
    /// `path` contains a NUL byte.
    NulInPath,
    /// A component of `path` is a symbolic link.
    Symlink,
    /// A non-final component of `path` is not a directory.
    NotADirectory,
    /// `path` does not exist under the scratch directory.
    NotFound,
    /// The host may not open or read `path`.
    PermissionDenied,
    /// `path` names something other than a regular file (a directory, FIFO, socket or
    /// device).
    NotARegularFile,
    /// The bytes read are not exactly `size` long. `actual` is at most `declared + 1`:
    /// a longer file is read no further.
    SizeMismatch {
        /// The declared `size`.
        declared: u64,
        /// How many bytes were found (capped at `declared + 1`).
        actual: u64,
    },
    /// The SHA-256 of the bytes differs from `sha256`.
    DigestMismatch,
    /// The bytes do not carry the media signature of `mime_type`.
    SignatureMismatch {
        /// The declared media type.
        media_type: MediaType,
    },
}

impl Rejection {
    /// An [`Rejection::UnknownMember`] naming `member`, cut to 64 bytes on a character
    /// boundary.
    pub(crate) fn unknown_member(member: &str) -> Rejection {
        Rejection::UnknownMember {
            member: crate::text::head(member, MEMBER_EXCERPT_BYTES).to_owned(),
        }
    }
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rejection::NotAnObject => f.write_str("must be an object"),
            Rejection::UnknownMember { member } => {
                write!(f, "has an unknown member `{}`", member.escape_debug())
            }
            Rejection::Missing => f.write_str("is required"),
            Rejection::WrongType => f.write_str("has the wrong type"),
            Rejection::NonCanonicalMimeType => f.write_str(
                "must be one of image/png, image/jpeg, image/gif, image/webp, audio/wav, \
                 audio/mpeg, audio/flac, audio/opus, audio/aac, audio/mp4",
            ),
            Rejection::MalformedDigest => {
                f.write_str("must be exactly 64 lowercase hexadecimal digits")
            }
            Rejection::UnsupportedEncoding => f.write_str("must be \"base64\""),
            Rejection::MalformedBase64 => {
                f.write_str("is not strict padded standard base64 without whitespace")
            }
            Rejection::NoSource => f.write_str("needs exactly one source: `data` or `path`"),
            Rejection::BothSources => {
                f.write_str("has both `data` and `path`; exactly one source is allowed")
            }
            Rejection::EmptyPath => f.write_str("is empty"),
            Rejection::AbsolutePath => f.write_str("must be relative to the scratch directory"),
            Rejection::PathTooLong => {
                write!(f, "is longer than {MAX_ARTIFACT_PATH_BYTES} bytes")
            }
            Rejection::TooManyComponents => {
                write!(f, "has more than {MAX_ARTIFACT_PATH_COMPONENTS} components")
            }
            Rejection::EmptyComponent => f.write_str("has an empty component"),
            Rejection::DotComponent => f.write_str("has a `.` component"),
            Rejection::ParentComponent => f.write_str("has a `..` component"),
            Rejection::NulInPath => f.write_str("contains a NUL byte"),
            Rejection::Symlink => f.write_str("goes through a symbolic link"),
            Rejection::NotADirectory => f.write_str("goes through something not a directory"),
            Rejection::NotFound => f.write_str("does not exist in the scratch directory"),
            Rejection::PermissionDenied => f.write_str("cannot be opened or read by the host"),
            Rejection::NotARegularFile => f.write_str("is not a regular file"),
            Rejection::SizeMismatch { declared, actual } if actual > declared => {
                write!(f, "holds more than the declared {declared} bytes")
            }
            Rejection::SizeMismatch { declared, actual } => {
                write!(f, "holds {actual} bytes, not the declared {declared}")
            }
            Rejection::DigestMismatch => f.write_str("does not match the published bytes"),
            Rejection::SignatureMismatch { media_type } => {
                write!(f, "names bytes without the {media_type} media signature")
            }
        }
    }
}

/// A section 2.8 quota.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quota {
    /// 256 KiB of decoded inline data.
    InlineBytes,
    /// 20 MiB per artifact.
    ArtifactBytes,
    /// 64 MiB of artifacts per process generation.
    GenerationBytes,
    /// 64 artifacts per process generation.
    GenerationCount,
}

impl fmt::Display for Quota {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Quota::InlineBytes => write!(
                f,
                "the inline limit of {MAX_ARTIFACT_INLINE_BYTES} decoded bytes"
            ),
            Quota::ArtifactBytes => {
                write!(f, "the per-artifact limit of {MAX_ARTIFACT_BYTES} bytes")
            }
            Quota::GenerationBytes => write!(
                f,
                "the per-generation limit of {MAX_ARTIFACT_GENERATION_BYTES} artifact bytes"
            ),
            Quota::GenerationCount => write!(
                f,
                "the per-generation limit of {MAX_ARTIFACTS_PER_GENERATION} artifacts"
            ),
        }
    }
}
