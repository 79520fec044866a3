//! The one error type of result validation: which field broke which rule.

use std::fmt;

use crate::manifest::UiSurface;
use crate::wire::codes::INVALID_PARAMS;

use super::json_bounds::BoundsError;
use super::names::{HookName, MediaKind, StructuredViolation};

/// Longest excerpt of an offending value kept in an error, in bytes.
const EXCERPT_BYTES: usize = 64;

/// A result (or extension-originated params object) that broke a protocol rule.
///
/// The error names the exact field, such as `content[3].mime_type`, relative to the
/// validated value; an empty path means the value itself. These are host-side result
/// errors: they reject one call's answer, they are never sent back to the extension.
#[derive(Clone, Debug, PartialEq)]
pub struct ResultError {
    path: String,
    kind: ResultErrorKind,
}

impl ResultError {
    /// An error of `kind` at `path` (dotted members and `[index]` elements).
    pub fn new(path: impl Into<String>, kind: ResultErrorKind) -> ResultError {
        ResultError {
            path: path.into(),
            kind,
        }
    }

    /// The offending field, such as `content[3].mime_type`; empty for the whole value.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The rule that was broken.
    pub fn kind(&self) -> &ResultErrorKind {
        &self.kind
    }

    /// The JSON-RPC code these errors correspond to, invalid params (-32602).
    pub fn code(&self) -> i64 {
        INVALID_PARAMS
    }
}

impl fmt::Display for ResultError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "the value {}.", self.kind)
        } else {
            write!(f, "`{}` {}.", self.path, self.kind)
        }
    }
}

impl std::error::Error for ResultError {}

/// The JSON type a field must have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expected {
    /// A JSON object.
    Object,
    /// A JSON array.
    Array,
    /// A JSON string.
    String,
    /// `true` or `false`.
    Boolean,
    /// An integer within the signed 64-bit range.
    Integer,
    /// An array, or null.
    ArrayOrNull,
    /// An object, or null.
    ObjectOrNull,
}

impl fmt::Display for Expected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Expected::Object => "an object",
            Expected::Array => "an array",
            Expected::String => "a string",
            Expected::Boolean => "a boolean",
            Expected::Integer => "an integer within the signed 64-bit range",
            Expected::ArrayOrNull => "an array or null",
            Expected::ObjectOrNull => "an object or null",
        })
    }
}

/// The rule a result broke. Each variant's `Display` is the predicate of a sentence whose
/// subject is the field.
#[derive(Clone, Debug, PartialEq)]
pub enum ResultErrorKind {
    /// A required member is absent or null.
    Missing,
    /// The field has the wrong JSON type.
    WrongType {
        /// The type the field must have.
        expected: Expected,
    },
    /// A keyword field holds a value outside its closed set.
    UnknownValue {
        /// The value found (an excerpt when long).
        found: String,
        /// Every accepted value.
        allowed: &'static [&'static str],
    },
    /// A closed object (a content part) carries a member its type does not define.
    UnknownMember {
        /// The member's name (an excerpt when long).
        member: String,
    },
    /// A string that must not be empty is empty.
    Empty,
    /// The encoded value exceeds a size, depth, node or key bound.
    Bounds(BoundsError),
    /// API 0.2 `content` is an empty array (section 1.2).
    EmptyContent,
    /// API 0.2 `content` has more parts than allowed (section 1.2).
    TooManyContentParts {
        /// Parts found.
        count: usize,
        /// The bound.
        max: usize,
    },
    /// API 0.2 `content` has no text part (section 1.2).
    NoTextPart,
    /// A media part arrived although the `artifacts` feature was not negotiated.
    MediaNotNegotiated {
        /// The part's kind.
        kind: MediaKind,
    },
    /// A `mime_type` is not a well-formed `type/subtype`.
    InvalidMimeType {
        /// The value found (an excerpt when long).
        mime_type: String,
    },
    /// A `mime_type` is not of the part's media kind (for example `text/plain` on an image).
    MimeKindMismatch {
        /// The part's kind.
        kind: MediaKind,
        /// The value found (an excerpt when long).
        mime_type: String,
    },
    /// An `artifact_id` does not name a verified artifact of the active owner and generation.
    UnverifiedArtifact {
        /// The id found (an excerpt when long).
        artifact_id: String,
    },
    /// The verified artifact's MIME type differs from the part's.
    ArtifactMimeMismatch {
        /// The part's `mime_type` (an excerpt when long).
        part: String,
        /// The artifact's MIME type (an excerpt when long).
        artifact: String,
    },
    /// Media referenced by one result exceeds the aggregate bound (repeats count again).
    MediaBytesExceeded {
        /// The bound in bytes.
        max: u64,
    },
    /// The tool declares `output_schema` but the result has no `structured_content`.
    StructuredContentRequired,
    /// The tool declares no `output_schema` but the result has `structured_content`.
    StructuredContentForbidden,
    /// `structured_content` does not satisfy the tool's output schema.
    StructuredContentInvalid(StructuredViolation),
    /// A model-turn hook answered with disposition deny (section 1.4b).
    DenyNotAllowed {
        /// The hook that answered.
        hook: HookName,
    },
    /// A hook answered with a session operation it cannot perform (section 1.4b).
    SessionOperationNotAllowed {
        /// The hook that answered.
        hook: HookName,
        /// The action found.
        action: &'static str,
    },
    /// A model-turn hook answered with prompt-context contributions (section 1.4b).
    ContextNotAllowed {
        /// The hook that answered.
        hook: HookName,
    },
    /// An autocomplete reply breaks a rule of section 2.24b (the reason in words).
    Autocomplete {
        /// What is wrong.
        reason: String,
    },
    /// A typed API 0.2 hook's advice breaks its rule (section 1.4, SUPPLEMENT "API 0.2
    /// typed hooks"; the rule in words).
    HookAdvice {
        /// The hook that answered.
        hook: HookName,
        /// The rule it broke.
        rule: String,
    },
    /// A `status/collect` answer names another surface than the one requested (section 1.6).
    SurfaceMismatch {
        /// The surface the host asked for.
        requested: UiSurface,
        /// The surface the answer named.
        found: UiSurface,
    },
    /// A menu action routes to a command the extension did not declare (section 1.6b).
    UndeclaredCommand {
        /// The command found (an excerpt when long).
        command: String,
    },
    /// A menu has more items across all levels than allowed (section 1.6b).
    TooManyMenuItems {
        /// The bound.
        max: usize,
    },
    /// A menu nests deeper than allowed (section 1.6b).
    MenuTooDeep {
        /// The bound, counting the top level as 1.
        max: usize,
    },
    /// Two items of one menu level share an id (section 1.6b).
    DuplicateItemId {
        /// The repeated id (an excerpt when long).
        id: String,
    },
    /// A second item of one menu level is recommended (section 1.6b).
    MultipleRecommended {
        /// The id of the first recommended item of the level (an excerpt when long).
        first: String,
    },
    /// A submenu carries `arguments` or `destructive` (section 1.6b).
    SubmenuMember {
        /// The member found.
        member: &'static str,
    },
    /// A menu item has both `command` and `items`.
    AmbiguousMenuItem,
    /// A menu item has neither `command` nor `items`.
    MenuItemKindMissing,
    /// `metadata.octet_diagnostics_v1` breaks a rule of the typed-diagnostics profile.
    Diagnostic(super::diagnostics::DiagnosticRule),
    /// A declared resource output is not a provisional value this call registered, of
    /// the slot's type (section 2.26); the words say which.
    Resource {
        /// What is wrong.
        reason: String,
    },
}

impl fmt::Display for ResultErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ResultErrorKind::Diagnostic(rule) => write!(f, "{rule}"),
            ResultErrorKind::Resource { reason } => f.write_str(reason),
            ResultErrorKind::Missing => f.write_str("is required but absent or null"),
            ResultErrorKind::WrongType { expected } => write!(f, "must be {expected}"),
            ResultErrorKind::UnknownValue { found, allowed } => {
                write!(f, "is {found:?}, which is not one of ")?;
                for (i, name) in allowed.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{name:?}")?;
                }
                Ok(())
            }
            ResultErrorKind::UnknownMember { member } => {
                write!(f, "has the member {member:?}, which its type does not define")
            }
            ResultErrorKind::Empty => f.write_str("must not be empty"),
            ResultErrorKind::Bounds(error) => write!(f, "{error}"),
            ResultErrorKind::EmptyContent => f.write_str("must contain at least one part"),
            ResultErrorKind::TooManyContentParts { count, max } => {
                write!(f, "has {count} parts, more than the {max} allowed")
            }
            ResultErrorKind::NoTextPart => f.write_str("must contain at least one text part"),
            ResultErrorKind::MediaNotNegotiated { kind } => write!(
                f,
                "is an {kind} part, but the artifacts feature was not negotiated"
            ),
            ResultErrorKind::InvalidMimeType { mime_type } => {
                write!(f, "is {mime_type:?}, which is not a well-formed MIME type")
            }
            ResultErrorKind::MimeKindMismatch { kind, mime_type } => {
                write!(f, "is {mime_type:?}, which is not an {kind}/* MIME type")
            }
            ResultErrorKind::UnverifiedArtifact { artifact_id } => write!(
                f,
                "is {artifact_id:?}, which names no verified artifact of this session owner and process generation"
            ),
            ResultErrorKind::ArtifactMimeMismatch { part, artifact } => write!(
                f,
                "is {part:?}, but the artifact's MIME type is {artifact:?}"
            ),
            ResultErrorKind::MediaBytesExceeded { max } => write!(
                f,
                "brings the media referenced by this result over the {max}-byte aggregate bound"
            ),
            ResultErrorKind::StructuredContentRequired => {
                f.write_str("is required because the tool declares an output_schema")
            }
            ResultErrorKind::StructuredContentForbidden => {
                f.write_str("is forbidden because the tool declares no output_schema")
            }
            ResultErrorKind::StructuredContentInvalid(violation) => {
                write!(f, "does not match the tool's output_schema: {violation}")
            }
            ResultErrorKind::DenyNotAllowed { hook } => {
                write!(f, "must not be deny for the {hook} hook")
            }
            ResultErrorKind::SessionOperationNotAllowed { hook, action } => {
                write!(f, "must not be {action:?} for the {hook} hook")
            }
            ResultErrorKind::ContextNotAllowed { hook } => write!(
                f,
                "must be empty for the {hook} hook, which cannot contribute prompt context"
            ),
            ResultErrorKind::Autocomplete { reason } => f.write_str(reason),
            ResultErrorKind::HookAdvice { hook, rule } => write!(f, "({hook} advice) {rule}"),
            ResultErrorKind::SurfaceMismatch { requested, found } => {
                write!(
                    f,
                    "is {:?}, but the host asked for {:?}",
                    found.as_str(),
                    requested.as_str()
                )
            }
            ResultErrorKind::UndeclaredCommand { command } => write!(
                f,
                "is {command:?}, which is not a command this extension declared"
            ),
            ResultErrorKind::TooManyMenuItems { max } => write!(
                f,
                "would bring the menu over the {max} items allowed across all levels"
            ),
            ResultErrorKind::MenuTooDeep { max } => {
                write!(f, "would nest the menu deeper than {max} levels")
            }
            ResultErrorKind::DuplicateItemId { id } => {
                write!(f, "is {id:?}, which another item of the same level already uses")
            }
            ResultErrorKind::MultipleRecommended { first } => write!(
                f,
                "is true, but item {first:?} of the same level is already recommended"
            ),
            ResultErrorKind::SubmenuMember { member } => {
                write!(f, "is a submenu, which must not carry {member:?}")
            }
            ResultErrorKind::AmbiguousMenuItem => f.write_str(
                "has both command and items, so it is neither an action nor a submenu",
            ),
            ResultErrorKind::MenuItemKindMissing => f.write_str(
                "has neither command nor items, so it is neither an action nor a submenu",
            ),
        }
    }
}

/// A copy of `text` cut to at most [`EXCERPT_BYTES`] at a character boundary, with an
/// ellipsis when cut, so errors about huge values stay small. Presentation errors quote
/// extension-chosen values through this too.
pub(crate) fn excerpt(text: &str) -> String {
    if text.len() <= EXCERPT_BYTES {
        return text.to_owned();
    }
    format!("{}…", crate::text::head(text, EXCERPT_BYTES))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_the_path_and_the_rule() {
        let error = ResultError::new(
            "content[3].mime_type",
            ResultErrorKind::WrongType {
                expected: Expected::String,
            },
        );
        assert_eq!(
            error.to_string(),
            "`content[3].mime_type` must be a string."
        );
        assert_eq!(error.path(), "content[3].mime_type");
        assert_eq!(error.code(), -32602);
    }

    #[test]
    fn display_of_the_whole_value() {
        let error = ResultError::new(
            "",
            ResultErrorKind::WrongType {
                expected: Expected::Object,
            },
        );
        assert_eq!(error.to_string(), "the value must be an object.");
    }

    #[test]
    fn unknown_value_lists_the_allowed_values() {
        let kind = ResultErrorKind::UnknownValue {
            found: "loud".into(),
            allowed: &["info", "error"],
        };
        assert_eq!(
            kind.to_string(),
            "is \"loud\", which is not one of \"info\", \"error\""
        );
    }

    #[test]
    fn excerpt_cuts_long_text_at_a_char_boundary() {
        assert_eq!(excerpt("short"), "short");
        let long = "é".repeat(100);
        let cut = excerpt(&long);
        assert!(cut.ends_with('…'));
        assert!(cut.len() <= EXCERPT_BYTES + '…'.len_utf8());
        assert!(cut.trim_end_matches('…').chars().all(|c| c == 'é'));
    }
}
