//! Reading `metadata.octet_diagnostics_v1` by hand, so that each error names the field
//! and the rule it broke, and checking the objects it names against the host's records.

use std::fmt;

use serde_json::Value;

use super::{
    Attachment, AttachmentKind, Diagnostic, Edit, Fix, Location, Related, Severity, Source, Span,
};
use crate::limits::{
    MAX_DIAGNOSTICS, MAX_DIAGNOSTICS_BYTES, MAX_DIAGNOSTIC_ATTACHMENTS, MAX_DIAGNOSTIC_CODE_BYTES,
    MAX_DIAGNOSTIC_EDITS, MAX_DIAGNOSTIC_FIXES, MAX_DIAGNOSTIC_ID_BYTES, MAX_DIAGNOSTIC_OFFSET,
    MAX_DIAGNOSTIC_PATH_BYTES, MAX_DIAGNOSTIC_RELATED, MAX_DIAGNOSTIC_REPLACEMENT_BYTES,
    MAX_DIAGNOSTIC_TEXT_BYTES,
};
use crate::validate::content::ArtifactResolver;
use crate::validate::error::{excerpt, Expected, ResultError, ResultErrorKind};
use crate::validate::field::{as_array, as_object, as_str, Keyword, Object, ResultPath};
use crate::validate::path::Path;

/// The rule of the diagnostics profile a value broke.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DiagnosticRule {
    /// More than [`MAX_DIAGNOSTICS`] diagnostics.
    TooMany {
        /// How many there were.
        count: usize,
    },
    /// The encoded list is over [`MAX_DIAGNOSTICS_BYTES`].
    TooLarge {
        /// Its encoded size.
        bytes: usize,
    },
    /// An optional member is `null`: optional members are left out instead.
    NullMember,
    /// A `code` that is not 1 to 128 bytes of an ASCII letter followed by letters,
    /// digits, `_`, `.` or `-`.
    Code,
    /// Text that is empty, too long, or holds a control character other than LF or TAB.
    Text {
        /// The bound in UTF-8 bytes.
        max: usize,
    },
    /// A workspace path that is not normalized and relative.
    WorkspacePath,
    /// A revision that is not 64 lowercase hex digits.
    Revision,
    /// A span whose start is after its end, or past the portable integer range.
    Span,
    /// An id that is not 1 to 128 bytes of printable ASCII.
    Id,
    /// A list over its bound.
    TooManyItems {
        /// The bound.
        max: usize,
    },
    /// A fix without edits.
    NoEdits,
    /// A suggested edit outside the workspace.
    EditOutsideWorkspace,
    /// An artifact the answering generation was not issued for this owner.
    UnknownArtifact {
        /// The id (an excerpt when long).
        id: String,
    },
    /// A blob that is not this owner's.
    UnknownBlob {
        /// The id (an excerpt when long).
        id: String,
    },
    /// A failed call naming a blob it made: a failure publishes nothing.
    ProvisionalBlob {
        /// The id (an excerpt when long).
        id: String,
    },
}

impl fmt::Display for DiagnosticRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DiagnosticRule::TooMany { count } => write!(
                f,
                "holds {count} diagnostics, more than the {MAX_DIAGNOSTICS} allowed"
            ),
            DiagnosticRule::TooLarge { bytes } => write!(
                f,
                "is {bytes} bytes encoded, more than the {MAX_DIAGNOSTICS_BYTES} allowed"
            ),
            DiagnosticRule::NullMember => {
                f.write_str("is null; leave an optional diagnostic member out instead")
            }
            DiagnosticRule::Code => write!(
                f,
                "must be 1 to {MAX_DIAGNOSTIC_CODE_BYTES} bytes: an ASCII letter, then \
                 letters, digits, `_`, `.` or `-`"
            ),
            DiagnosticRule::Text { max } => write!(
                f,
                "must be plain text of at most {max} bytes (LF and TAB are the only controls \
                 allowed)"
            ),
            DiagnosticRule::WorkspacePath => f.write_str(
                "must be a normalized workspace-relative path (`/` separators; no empty, `.` \
                 or `..` component; no backslash, colon or control character)",
            ),
            DiagnosticRule::Revision => {
                f.write_str("must be the file's SHA-256 as 64 lowercase hex digits")
            }
            DiagnosticRule::Span => f.write_str(
                "must have start_byte <= end_byte, both below 2^53 (a zero-based half-open range)",
            ),
            DiagnosticRule::Id => write!(
                f,
                "must be a host-issued id of 1 to {MAX_DIAGNOSTIC_ID_BYTES} printable ASCII bytes"
            ),
            DiagnosticRule::TooManyItems { max } => write!(f, "has more than {max} items"),
            DiagnosticRule::NoEdits => f.write_str("must have at least one edit"),
            DiagnosticRule::EditOutsideWorkspace => {
                f.write_str("must be in a workspace file: fixes only suggest workspace edits")
            }
            DiagnosticRule::UnknownArtifact { id } => write!(
                f,
                "names artifact {id:?}, which this generation did not publish for the call's owner"
            ),
            DiagnosticRule::UnknownBlob { id } => {
                write!(f, "names blob {id:?}, which is not one of this owner's")
            }
            DiagnosticRule::ProvisionalBlob { id } => write!(
                f,
                "names blob {id:?}, which this failed call made: a failed operation publishes \
                 no new reference, diagnostics included"
            ),
        }
    }
}

/// Where a blob a diagnostic names stands in the host's records (section 2.27).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlobStanding {
    /// Exported to the owner by an admitted result.
    Exported,
    /// Committed by the call being answered and not yet published.
    Provisional,
}

/// The host's bulk-object records, as far as diagnostics need them.
pub trait BlobResolver {
    /// Where blob `id` stands for the call's owner, or `None` when it is not one of
    /// the owner's (unknown, foreign and released blobs alike).
    fn blob(&self, id: &str) -> Option<BlobStanding>;
}

impl Keyword for Severity {
    const ALL: &'static [Self] = &[
        Severity::Error,
        Severity::Warning,
        Severity::Info,
        Severity::Hint,
    ];
    const NAMES: &'static [&'static str] = &["error", "warning", "info", "hint"];
}

impl Keyword for AttachmentKind {
    const ALL: &'static [Self] = &[AttachmentKind::Blob, AttachmentKind::Artifact];
    const NAMES: &'static [&'static str] = &["blob", "artifact"];
}

/// Reads the diagnostics list `value` found at `path` (the shape and bounds only; see
/// [`check_references`] for the objects it names).
pub(crate) fn parse(value: &Value, path: &Path) -> Result<Vec<Diagnostic>, ResultError> {
    let items = as_array(value, path)?;
    if items.len() > MAX_DIAGNOSTICS {
        return Err(rule(path, DiagnosticRule::TooMany { count: items.len() }));
    }
    let bytes = crate::validate::encoded_len(value);
    if bytes > MAX_DIAGNOSTICS_BYTES {
        return Err(rule(path, DiagnosticRule::TooLarge { bytes }));
    }
    items
        .iter()
        .enumerate()
        .map(|(index, item)| diagnostic(item, &path.index(index)))
        .collect()
}

/// Checks every artifact and blob `diagnostics` name against the host's records:
/// `artifacts` are the answering generation's for the call's owner (`None` when the
/// generation cannot publish any), `blobs` the owner's (`None` without bulk objects).
/// A failed call (`is_error`) may not name a blob it made itself.
pub(crate) fn check_references(
    diagnostics: &[Diagnostic],
    path: &Path,
    artifacts: Option<&dyn ArtifactResolver>,
    blobs: Option<&dyn BlobResolver>,
    is_error: bool,
) -> Result<(), ResultError> {
    for (index, diagnostic) in diagnostics.iter().enumerate() {
        let at = path.index(index);
        let sources = diagnostic
            .primary
            .iter()
            .map(|l| (&l.source, "primary"))
            .chain(
                diagnostic
                    .related
                    .iter()
                    .map(|r| (&r.location.source, "related")),
            );
        for (source, member) in sources {
            let here = at.key(member);
            match source {
                Source::Artifact { id } => check_artifact(id, &here, artifacts)?,
                Source::Blob { id } => check_blob(id, &here, blobs, is_error)?,
                Source::Workspace { .. } => {}
            }
        }
        for (n, attachment) in diagnostic.attachments.iter().enumerate() {
            let attachments = at.key("attachments");
            let here = attachments.index(n);
            match attachment.kind {
                AttachmentKind::Artifact => check_artifact(&attachment.id, &here, artifacts)?,
                AttachmentKind::Blob => check_blob(&attachment.id, &here, blobs, is_error)?,
            }
        }
    }
    Ok(())
}

fn check_artifact(
    id: &str,
    path: &Path,
    artifacts: Option<&dyn ArtifactResolver>,
) -> Result<(), ResultError> {
    match artifacts.and_then(|a| a.resolve(id)) {
        Some(_) => Ok(()),
        None => Err(rule(
            path,
            DiagnosticRule::UnknownArtifact { id: excerpt(id) },
        )),
    }
}

fn check_blob(
    id: &str,
    path: &Path,
    blobs: Option<&dyn BlobResolver>,
    is_error: bool,
) -> Result<(), ResultError> {
    match blobs.and_then(|b| b.blob(id)) {
        Some(BlobStanding::Exported) => Ok(()),
        Some(BlobStanding::Provisional) if !is_error => Ok(()),
        Some(BlobStanding::Provisional) => Err(rule(
            path,
            DiagnosticRule::ProvisionalBlob { id: excerpt(id) },
        )),
        None => Err(rule(path, DiagnosticRule::UnknownBlob { id: excerpt(id) })),
    }
}

fn rule(path: &Path, rule: DiagnosticRule) -> ResultError {
    path.error(ResultErrorKind::Diagnostic(rule))
}

/// The object at `path`, whose members must all be in `allowed`.
fn closed<'v>(value: &'v Value, path: &Path, allowed: &[&str]) -> Result<&'v Object, ResultError> {
    let object = as_object(value, path)?;
    if let Some(member) = object.keys().find(|k| !allowed.contains(&k.as_str())) {
        return Err(path.error(ResultErrorKind::UnknownMember {
            member: excerpt(member),
        }));
    }
    Ok(object)
}

fn required<'v>(object: &'v Object, key: &str, path: &Path) -> Result<&'v Value, ResultError> {
    match object.get(key) {
        Some(Value::Null) | None => Err(path.key(key).error(ResultErrorKind::Missing)),
        Some(value) => Ok(value),
    }
}

/// An optional member: absent is `None`; `null` breaks the profile.
fn optional<'v>(
    object: &'v Object,
    key: &str,
    path: &Path,
) -> Result<Option<&'v Value>, ResultError> {
    match object.get(key) {
        Some(Value::Null) => Err(rule(&path.key(key), DiagnosticRule::NullMember)),
        other => Ok(other),
    }
}

/// Plain text of at most `max` bytes: LF and TAB are the only controls; empty only
/// when `empty`.
fn text(value: &Value, path: &Path, max: usize, empty: bool) -> Result<String, ResultError> {
    let text = as_str(value, path)?;
    let plain = !text
        .chars()
        .any(|c| c.is_control() && c != '\n' && c != '\t');
    if (text.is_empty() && !empty) || text.len() > max || !plain {
        return Err(rule(path, DiagnosticRule::Text { max }));
    }
    Ok(text.to_owned())
}

/// The optional list member `key` of at most `max` items, each read by `item`.
fn list<T>(
    object: &Object,
    key: &str,
    path: &Path,
    max: usize,
    item: fn(&Value, &Path) -> Result<T, ResultError>,
) -> Result<Vec<T>, ResultError> {
    let Some(value) = optional(object, key, path)? else {
        return Ok(Vec::new());
    };
    let at = path.key(key);
    let items = as_array(value, &at)?;
    if items.len() > max {
        return Err(rule(&at, DiagnosticRule::TooManyItems { max }));
    }
    items
        .iter()
        .enumerate()
        .map(|(n, value)| item(value, &at.index(n)))
        .collect()
}

fn diagnostic(value: &Value, path: &Path) -> Result<Diagnostic, ResultError> {
    let object = closed(
        value,
        path,
        &[
            "severity",
            "code",
            "message",
            "primary",
            "related",
            "fixes",
            "attachments",
        ],
    )?;
    let severity = crate::validate::field::keyword(
        required(object, "severity", path)?,
        &path.key("severity"),
    )?;
    let code = as_str(required(object, "code", path)?, &path.key("code"))?;
    let valid_code = code.len() <= MAX_DIAGNOSTIC_CODE_BYTES
        && code.as_bytes().first().is_some_and(u8::is_ascii_alphabetic)
        && code
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b));
    if !valid_code {
        return Err(rule(&path.key("code"), DiagnosticRule::Code));
    }
    let message = text(
        required(object, "message", path)?,
        &path.key("message"),
        MAX_DIAGNOSTIC_TEXT_BYTES,
        false,
    )?;
    let primary = match optional(object, "primary", path)? {
        Some(value) => Some(location(value, &path.key("primary"))?),
        None => None,
    };
    let related = list(object, "related", path, MAX_DIAGNOSTIC_RELATED, related_one)?;
    let fixes = list(object, "fixes", path, MAX_DIAGNOSTIC_FIXES, fix)?;
    let attachments = list(
        object,
        "attachments",
        path,
        MAX_DIAGNOSTIC_ATTACHMENTS,
        attachment,
    )?;
    Ok(Diagnostic {
        severity,
        code: code.to_owned(),
        message,
        primary,
        related,
        fixes,
        attachments,
    })
}

fn related_one(value: &Value, path: &Path) -> Result<Related, ResultError> {
    let object = closed(value, path, &["message", "location"])?;
    Ok(Related {
        message: text(
            required(object, "message", path)?,
            &path.key("message"),
            MAX_DIAGNOSTIC_TEXT_BYTES,
            false,
        )?,
        location: location(required(object, "location", path)?, &path.key("location"))?,
    })
}

fn fix(value: &Value, path: &Path) -> Result<Fix, ResultError> {
    let object = closed(value, path, &["title", "edits"])?;
    let title = text(
        required(object, "title", path)?,
        &path.key("title"),
        MAX_DIAGNOSTIC_TEXT_BYTES,
        false,
    )?;
    let edits_path = path.key("edits");
    let items = as_array(required(object, "edits", path)?, &edits_path)?;
    if items.is_empty() {
        return Err(rule(&edits_path, DiagnosticRule::NoEdits));
    }
    if items.len() > MAX_DIAGNOSTIC_EDITS {
        return Err(rule(
            &edits_path,
            DiagnosticRule::TooManyItems {
                max: MAX_DIAGNOSTIC_EDITS,
            },
        ));
    }
    let edits = items
        .iter()
        .enumerate()
        .map(|(n, item)| edit(item, &edits_path.index(n)))
        .collect::<Result<_, _>>()?;
    Ok(Fix { title, edits })
}

fn edit(value: &Value, path: &Path) -> Result<Edit, ResultError> {
    let object = closed(value, path, &["location", "replacement"])?;
    let location_path = path.key("location");
    let location = location(required(object, "location", path)?, &location_path)?;
    if !matches!(location.source, Source::Workspace { .. }) {
        return Err(rule(
            &location_path.key("source"),
            DiagnosticRule::EditOutsideWorkspace,
        ));
    }
    // The replacement may be empty (a deletion), so it is required but may be "".
    let replacement = match object.get("replacement") {
        None | Some(Value::Null) => {
            return Err(path.key("replacement").error(ResultErrorKind::Missing))
        }
        Some(value) => text(
            value,
            &path.key("replacement"),
            MAX_DIAGNOSTIC_REPLACEMENT_BYTES,
            true,
        )?,
    };
    Ok(Edit {
        location,
        replacement,
    })
}

fn attachment(value: &Value, path: &Path) -> Result<Attachment, ResultError> {
    let object = closed(value, path, &["kind", "id", "label"])?;
    let kind = crate::validate::field::keyword(required(object, "kind", path)?, &path.key("kind"))?;
    let id = id(required(object, "id", path)?, &path.key("id"))?;
    let label = match optional(object, "label", path)? {
        Some(value) => Some(text(
            value,
            &path.key("label"),
            MAX_DIAGNOSTIC_TEXT_BYTES,
            false,
        )?),
        None => None,
    };
    Ok(Attachment { kind, id, label })
}

fn id(value: &Value, path: &Path) -> Result<String, ResultError> {
    let id = as_str(value, path)?;
    if id.is_empty()
        || id.len() > MAX_DIAGNOSTIC_ID_BYTES
        || !id.bytes().all(|b| b.is_ascii_graphic())
    {
        return Err(rule(path, DiagnosticRule::Id));
    }
    Ok(id.to_owned())
}

fn location(value: &Value, path: &Path) -> Result<Location, ResultError> {
    let object = closed(value, path, &["source", "span"])?;
    let source = source(required(object, "source", path)?, &path.key("source"))?;
    let span_path = path.key("span");
    let span_object = closed(
        required(object, "span", path)?,
        &span_path,
        &["start_byte", "end_byte"],
    )?;
    let offset = |key: &str| -> Result<u64, ResultError> {
        let value = required(span_object, key, &span_path)?;
        value
            .as_u64()
            .ok_or_else(|| span_path.key(key).wrong_type(Expected::Integer))
    };
    let span = Span {
        start_byte: offset("start_byte")?,
        end_byte: offset("end_byte")?,
    };
    if span.start_byte > span.end_byte || span.end_byte > MAX_DIAGNOSTIC_OFFSET {
        return Err(rule(&span_path, DiagnosticRule::Span));
    }
    Ok(Location { source, span })
}

fn source(value: &Value, path: &Path) -> Result<Source, ResultError> {
    let kind = as_str(
        required(as_object(value, path)?, "kind", path)?,
        &path.key("kind"),
    )?;
    match kind {
        "workspace" => {
            let object = closed(value, path, &["kind", "path", "revision"])?;
            let file = as_str(required(object, "path", path)?, &path.key("path"))?;
            let normalized = !file.is_empty()
                && file.len() <= MAX_DIAGNOSTIC_PATH_BYTES
                && !file
                    .chars()
                    .any(|c| c.is_control() || c == '\\' || c == ':')
                && file.split('/').all(|part| !matches!(part, "" | "." | ".."));
            if !normalized {
                return Err(rule(&path.key("path"), DiagnosticRule::WorkspacePath));
            }
            let revision = as_str(required(object, "revision", path)?, &path.key("revision"))?;
            if !crate::hex::is_sha256(revision) {
                return Err(rule(&path.key("revision"), DiagnosticRule::Revision));
            }
            Ok(Source::Workspace {
                path: file.to_owned(),
                revision: revision.to_owned(),
            })
        }
        "blob" | "artifact" => {
            let object = closed(value, path, &["kind", "id"])?;
            let id = id(required(object, "id", path)?, &path.key("id"))?;
            Ok(if kind == "blob" {
                Source::Blob { id }
            } else {
                Source::Artifact { id }
            })
        }
        other => Err(path.key("kind").error(ResultErrorKind::UnknownValue {
            found: excerpt(other),
            allowed: &["workspace", "blob", "artifact"],
        })),
    }
}
