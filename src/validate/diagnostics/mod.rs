//! Typed diagnostics in tool results: the closed records of
//! `metadata.octet_diagnostics_v1` ("Typed diagnostics in tool results").
//!
//! A [`Diagnostic`] has a severity, a stable `code` and a plain-text `message`, and
//! optionally a revision-bound `primary` location, `related` locations, suggested
//! `fixes` and `attachments` naming existing host-issued artifacts or blobs. Every
//! record is closed and bounded (`crate::limits`, "Typed diagnostics"); an optional
//! member is absent, never `null`.
//!
//! The host checks the profile in every tool result before it keeps the result
//! ([`from_metadata`]), and checks each artifact or blob a diagnostic names against its own
//! records ([`check_authority`]): an artifact issued to the answering generation for
//! the call's owner, a blob of that owner, and never a blob still provisional to a call
//! that failed. Nothing here grants access: a location is not permission to read, a
//! fix is a suggestion and never applied, an attachment does not create or keep an
//! object.
//!
//! Extensions build the records with the constructors here and attach them with the
//! SDK's `ToolOutput::with_diagnostics`, which runs the same checks and appends the
//! bounded plain-text [`summary`].

mod parse;
#[cfg(test)]
mod tests;

use std::fmt;

use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::limits::{DIAGNOSTIC_SUMMARY_COUNT, MAX_DIAGNOSTIC_SUMMARY_BYTES};
use crate::validate::path::Path;
use crate::validate::ResultError;

pub(crate) use parse::{check_references, parse};
pub use parse::{BlobResolver, BlobStanding, DiagnosticRule};

/// The reserved metadata key that holds the diagnostics of a tool result.
pub const METADATA_KEY: &str = "octet_diagnostics_v1";

/// How much a diagnostic matters, independent of the result's `is_error`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// The operation could not be done as asked.
    Error,
    /// The result needs attention.
    Warning,
    /// Context worth knowing.
    Info,
    /// A suggested improvement.
    Hint,
}

impl Severity {
    /// The wire name, such as `"error"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
            Severity::Hint => "hint",
        }
    }
}

/// What a location points into: content at an exact revision, never a bare name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Source {
    /// A workspace file at an exact content revision.
    Workspace {
        /// Normalized workspace-relative path: `/`-separated, no empty, `.` or `..`
        /// component, no backslash, colon or control character.
        path: String,
        /// Lowercase SHA-256 of the file's bytes the span refers to.
        revision: String,
    },
    /// An immutable bulk object (section 2.27), by its host-issued id.
    Blob {
        /// The `$blob` id.
        id: String,
    },
    /// A published media artifact (section 2.8), by its host-issued id.
    Artifact {
        /// The `artifact_id`.
        id: String,
    },
}

/// A zero-based, half-open byte range of a source revision.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Span {
    /// The first byte.
    pub start_byte: u64,
    /// One past the last byte (equal to `start_byte` for an empty range).
    pub end_byte: u64,
}

/// A byte range of a source revision.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Location {
    /// What the range is in.
    pub source: Source,
    /// The range.
    pub span: Span,
}

impl Location {
    /// The bytes `start_byte..end_byte` of workspace file `path` whose content is
    /// `bytes` (its revision is their SHA-256).
    pub fn in_workspace_file(
        path: impl Into<String>,
        bytes: &[u8],
        start_byte: u64,
        end_byte: u64,
    ) -> Location {
        let revision = crate::hex::lower(&Sha256::digest(bytes));
        Location {
            source: Source::Workspace {
                path: path.into(),
                revision,
            },
            span: Span {
                start_byte,
                end_byte,
            },
        }
    }

    /// The bytes `start_byte..end_byte` of artifact `id`.
    pub fn in_artifact(id: impl Into<String>, start_byte: u64, end_byte: u64) -> Location {
        Location {
            source: Source::Artifact { id: id.into() },
            span: Span {
                start_byte,
                end_byte,
            },
        }
    }
}

/// A supporting location and why it matters.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Related {
    /// How it relates.
    pub message: String,
    /// Where.
    pub location: Location,
}

/// One suggested replacement in a workspace file, checked against its revision by
/// whoever applies it. Never applied by the host.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Edit {
    /// The bytes to replace; the source must be a workspace file.
    pub location: Location,
    /// The text that replaces them (may be empty).
    pub replacement: String,
}

/// A suggested fix: a title and the edits that make it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Fix {
    /// What the fix does.
    pub title: String,
    /// Its edits, at least one.
    pub edits: Vec<Edit>,
}

/// What kind of host-issued object an attachment names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AttachmentKind {
    /// A bulk object (section 2.27).
    Blob,
    /// A media artifact (section 2.8).
    Artifact,
}

/// An existing host-issued object the diagnostic points at. It does not create the
/// object, keep it alive or grant access to it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Attachment {
    /// Which namespace `id` is in.
    pub kind: AttachmentKind,
    /// The host-issued id, never a path.
    pub id: String,
    /// A display label.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
}

/// One typed diagnostic of a tool result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    /// How much it matters.
    pub severity: Severity,
    /// A stable, machine-readable id such as `solver.nonconvergent`.
    pub code: String,
    /// What happened, in plain text.
    pub message: String,
    /// Where, when it is known. Never made up.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub primary: Option<Location>,
    /// Supporting locations.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub related: Vec<Related>,
    /// Suggested fixes.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub fixes: Vec<Fix>,
    /// Existing objects it points at.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<Attachment>,
}

impl Diagnostic {
    /// A diagnostic without locations, fixes or attachments.
    pub fn new(severity: Severity, code: impl Into<String>, message: impl Into<String>) -> Self {
        Diagnostic {
            severity,
            code: code.into(),
            message: message.into(),
            primary: None,
            related: Vec::new(),
            fixes: Vec::new(),
            attachments: Vec::new(),
        }
    }

    /// Sets the primary location.
    pub fn at(mut self, location: Location) -> Self {
        self.primary = Some(location);
        self
    }

    /// Adds a related location.
    pub fn with_related(mut self, message: impl Into<String>, location: Location) -> Self {
        self.related.push(Related {
            message: message.into(),
            location,
        });
        self
    }

    /// Adds a suggested fix of one or more edits.
    pub fn with_fix(mut self, title: impl Into<String>, edits: Vec<Edit>) -> Self {
        self.fixes.push(Fix {
            title: title.into(),
            edits,
        });
        self
    }

    /// Adds an attachment naming an existing artifact or blob.
    pub fn with_attachment(mut self, kind: AttachmentKind, id: impl Into<String>) -> Self {
        self.attachments.push(Attachment {
            kind,
            id: id.into(),
            label: None,
        });
        self
    }
}

impl fmt::Display for Diagnostic {
    /// The summary line: `severity[code]: message`, LF and TAB as spaces.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}[{}]: {}",
            self.severity.as_str(),
            self.code,
            self.message.replace(['\n', '\t'], " ")
        )
    }
}

/// The plain-text projection of `diagnostics` a result carries in its content: one
/// line per diagnostic for the first [`DIAGNOSTIC_SUMMARY_COUNT`], at most
/// [`MAX_DIAGNOSTIC_SUMMARY_BYTES`] in all (cut on a character boundary).
pub fn summary(diagnostics: &[Diagnostic]) -> String {
    let mut text = String::new();
    for diagnostic in diagnostics.iter().take(DIAGNOSTIC_SUMMARY_COUNT) {
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&diagnostic.to_string());
        if text.len() >= MAX_DIAGNOSTIC_SUMMARY_BYTES {
            let end = crate::text::head(&text, MAX_DIAGNOSTIC_SUMMARY_BYTES).len();
            text.truncate(end);
            break;
        }
    }
    text
}

/// Reads the diagnostics of a result's `metadata` object: none when it has no
/// [`METADATA_KEY`] member, else the closed records, or the error naming the field
/// (`octet_diagnostics_v1[2].code`) and the rule. The shape and bounds only: which
/// artifacts and blobs exist is the host's to check.
pub fn from_metadata(metadata: &serde_json::Value) -> Result<Vec<Diagnostic>, ResultError> {
    match metadata.get(METADATA_KEY) {
        Some(value) => parse(value, &Path::Root.key(METADATA_KEY)),
        None => Ok(Vec::new()),
    }
}

/// Checks every artifact and blob `diagnostics` name, as the host does before it keeps
/// a result: `artifacts` resolves the answering generation's artifacts for the call's
/// owner (`None` when it published none), `blobs` the owner's bulk objects (`None`
/// without them), and a failed call (`is_error`) may not name a blob it made.
pub fn check_authority(
    diagnostics: &[Diagnostic],
    artifacts: Option<&dyn crate::validate::ArtifactResolver>,
    blobs: Option<&dyn BlobResolver>,
    is_error: bool,
) -> Result<(), ResultError> {
    let path = Path::Root.key(METADATA_KEY);
    check_references(diagnostics, &path, artifacts, blobs, is_error)
}

/// Checks `diagnostics` against the profile exactly as the host will: the SDK runs
/// this before it sends them.
pub fn validate(diagnostics: &[Diagnostic]) -> Result<(), ResultError> {
    parse(&to_value(diagnostics), &Path::Root.key(METADATA_KEY)).map(|_| ())
}

/// The wire value of `diagnostics`: the `metadata.octet_diagnostics_v1` list.
pub fn to_value(diagnostics: &[Diagnostic]) -> serde_json::Value {
    serde_json::to_value(diagnostics).expect("diagnostics serialize")
}
