//! Why a `presentation/update` was refused, with the exact field path.

use std::fmt;

use crate::services::OwnerError;
use crate::wire::codes::INVALID_PARAMS;

use super::url::UrlError;

/// A refused `presentation/update`: the field path (such as
/// `snapshot.collection.nodes[3].parent_id`, empty for the params object itself) and the
/// rule it broke. The whole update is refused; nothing of it is retained.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PresentationError {
    path: String,
    kind: PresentationErrorKind,
}

impl PresentationError {
    /// An error of `kind` at `path`.
    pub fn new(path: impl Into<String>, kind: PresentationErrorKind) -> PresentationError {
        PresentationError {
            path: path.into(),
            kind,
        }
    }

    /// The field path, such as `snapshot.activities[0].metrics.reasoning_tokens`; empty
    /// when the params object itself is at fault.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The rule that was broken.
    pub fn kind(&self) -> &PresentationErrorKind {
        &self.kind
    }

    /// The JSON-RPC code of the refusal: invalid params. `presentation/update` is a
    /// notification, so the code only travels in diagnostics.
    pub fn code(&self) -> i64 {
        INVALID_PARAMS
    }
}

impl fmt::Display for PresentationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "presentation/update params {}.", self.kind)
        } else {
            write!(f, "presentation/update `{}` {}.", self.path, self.kind)
        }
    }
}

impl std::error::Error for PresentationError {}

/// The JSON type a field must have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JsonType {
    /// A JSON object.
    Object,
    /// A JSON array.
    Array,
    /// A JSON string.
    String,
    /// `true` or `false`.
    Boolean,
    /// A non-negative integer (no fraction, no exponent form that parses as a float).
    UnsignedInteger,
}

impl fmt::Display for JsonType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            JsonType::Object => "an object",
            JsonType::Array => "an array",
            JsonType::String => "a string",
            JsonType::Boolean => "a boolean",
            JsonType::UnsignedInteger => "a non-negative integer",
        })
    }
}

/// The rule a `presentation/update` broke. Each variant's `Display` is the predicate of a
/// sentence whose subject is the field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PresentationErrorKind {
    /// A required member is absent or null.
    Missing,
    /// The field has the wrong JSON type.
    WrongType {
        /// The type the field must have.
        expected: JsonType,
    },
    /// An integer above the portable JSON integer bound (2^53 - 1).
    IntegerTooLarge {
        /// The bound.
        max: u64,
    },
    /// A closed object carries a member its type does not define.
    UnknownMember {
        /// The member's name (an excerpt when long).
        member: String,
    },
    /// Both `parent_request_id` and `resource_owner` are present; they are mutually
    /// exclusive.
    ConflictingScope,
    /// A process-scoped snapshot (neither `parent_request_id` nor `resource_owner`) carries
    /// a `session` reference, which is session-owned data.
    SessionReferenceInProcessScope,
    /// `resource_owner` is not a well-formed owner triple.
    Owner(OwnerError),
    /// A `state` is not one of the generic states.
    UnknownState {
        /// The value found (an excerpt when long).
        found: String,
    },
    /// A keyword is outside its closed set.
    UnknownValue {
        /// The value found (an excerpt when long).
        found: String,
        /// Every accepted value.
        allowed: &'static [&'static str],
    },
    /// An id that must not be empty is empty.
    Empty,
    /// Text longer than its bound.
    TooLong {
        /// Its length in UTF-8 bytes.
        bytes: usize,
        /// The bound in UTF-8 bytes.
        max: usize,
    },
    /// Text holds a control character (ANSI escape sequences start with one).
    ControlCharacter {
        /// The character's code point.
        code_point: u32,
        /// Its byte offset in the text.
        offset: usize,
    },
    /// Text holds markup: `<` followed by an ASCII letter, `/`, `!` or `?`.
    Markup {
        /// The byte offset of the `<`.
        offset: usize,
    },
    /// An array holds more elements than allowed.
    TooMany {
        /// Elements found.
        count: usize,
        /// The bound.
        max: usize,
    },
    /// The encoded snapshot is larger than allowed.
    SnapshotTooLarge {
        /// The bound in bytes.
        max: usize,
    },
    /// `reasoning_tokens` is larger than `output_tokens`, of which it is a subset.
    ReasoningExceedsOutput {
        /// The reasoning count.
        reasoning: u64,
        /// The output count.
        output: u64,
    },
    /// `reasoning_tokens` is given without the `output_tokens` it is a subset of.
    ReasoningWithoutOutput,
    /// An id repeats one used earlier in the same array.
    DuplicateId {
        /// The repeated id (an excerpt when long).
        id: String,
    },
    /// An action routes to a command the manifest did not declare.
    UndeclaredCommand {
        /// The command found (an excerpt when long).
        command: String,
    },
    /// An `action_ids` entry names no action of the snapshot.
    UnknownAction {
        /// The id found (an excerpt when long).
        id: String,
    },
    /// A node of a list collection has a parent.
    ParentInList,
    /// A tree node's `parent_id` names no node of the collection.
    MissingParent {
        /// The parent id found (an excerpt when long).
        parent_id: String,
    },
    /// Following `parent_id` from this node comes back to it.
    Cycle,
    /// A tree node sits deeper than allowed (a root node is level 1).
    TooDeep {
        /// The bound.
        max: usize,
    },
    /// `selected_node_id` names no node of the collection.
    UnknownSelectedNode {
        /// The id found (an excerpt when long).
        id: String,
    },
    /// `detail.node_id` differs from `selected_node_id`, or nothing is selected.
    DetailNotSelected {
        /// The detail's node id (an excerpt when long).
        node_id: String,
        /// The selected node id, if any (an excerpt when long).
        selected: Option<String>,
    },
    /// A `url` reference is not an acceptable URL.
    Url(UrlError),
}

impl fmt::Display for PresentationErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PresentationErrorKind::Missing => f.write_str("is required but absent or null"),
            PresentationErrorKind::WrongType { expected } => write!(f, "must be {expected}"),
            PresentationErrorKind::IntegerTooLarge { max } => {
                write!(f, "is larger than the portable JSON integer bound {max}")
            }
            PresentationErrorKind::UnknownMember { member } => {
                write!(f, "has the member {member:?}, which its type does not define")
            }
            PresentationErrorKind::ConflictingScope => f.write_str(
                "carry both parent_request_id and resource_owner, which are mutually exclusive",
            ),
            PresentationErrorKind::SessionReferenceInProcessScope => f.write_str(
                "is a session reference, but process-scoped state must contain no session-owned data",
            ),
            PresentationErrorKind::Owner(error) => write!(f, "is malformed: {error}"),
            PresentationErrorKind::UnknownState { found } => {
                write!(f, "is {found:?}, which is not a generic state")
            }
            PresentationErrorKind::UnknownValue { found, allowed } => {
                write!(f, "is {found:?}, which is not one of ")?;
                for (i, name) in allowed.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{name:?}")?;
                }
                Ok(())
            }
            PresentationErrorKind::Empty => f.write_str("must not be empty"),
            PresentationErrorKind::TooLong { bytes, max } => {
                write!(f, "is {bytes} bytes long, more than the {max} allowed")
            }
            PresentationErrorKind::ControlCharacter { code_point, offset } => write!(
                f,
                "holds the control character U+{code_point:04X} at byte {offset}; it must be plain text"
            ),
            PresentationErrorKind::Markup { offset } => write!(
                f,
                "holds markup at byte {offset}; it must be plain text"
            ),
            PresentationErrorKind::TooMany { count, max } => {
                write!(f, "has {count} elements, more than the {max} allowed")
            }
            PresentationErrorKind::SnapshotTooLarge { max } => {
                write!(f, "encodes to more than {max} bytes")
            }
            PresentationErrorKind::ReasoningExceedsOutput { reasoning, output } => write!(
                f,
                "is {reasoning}, more than the {output} output tokens it is a subset of"
            ),
            PresentationErrorKind::ReasoningWithoutOutput => {
                f.write_str("is given without the output_tokens it is a subset of")
            }
            PresentationErrorKind::DuplicateId { id } => {
                write!(f, "is {id:?}, which an earlier element already uses")
            }
            PresentationErrorKind::UndeclaredCommand { command } => write!(
                f,
                "is {command:?}, which is not a command this extension declared"
            ),
            PresentationErrorKind::UnknownAction { id } => {
                write!(f, "is {id:?}, which names no action of the snapshot")
            }
            PresentationErrorKind::ParentInList => {
                f.write_str("is set, but nodes of a list cannot have parents")
            }
            PresentationErrorKind::MissingParent { parent_id } => {
                write!(f, "is {parent_id:?}, which names no node of the tree")
            }
            PresentationErrorKind::Cycle => f.write_str("closes a cycle of parents"),
            PresentationErrorKind::TooDeep { max } => {
                write!(f, "places the node deeper than the {max} tree levels allowed")
            }
            PresentationErrorKind::UnknownSelectedNode { id } => {
                write!(f, "is {id:?}, which names no node of the collection")
            }
            PresentationErrorKind::DetailNotSelected { node_id, selected } => match selected {
                Some(selected) => write!(
                    f,
                    "is {node_id:?}, but the selected node is {selected:?}"
                ),
                None => write!(f, "is {node_id:?}, but no node is selected"),
            },
            PresentationErrorKind::Url(error) => write!(f, "is not an acceptable URL: {error}"),
        }
    }
}
