//! Why an `initialize` request could not be built or its response was rejected.
//!
//! Every variant names the rule that failed and where. Field paths use the response's
//! own member names with array indices, such as `tools[3].description`. A rejected
//! initialize response sends nothing back to the extension (the child is rejected), so
//! no variant carries a JSON-RPC error code; [`NegotiationError::code`] gives a stable
//! machine-readable name instead. (API 0.3 contract failures also name the code of the
//! 0.3 error table that describes them: [`ContractError::wire_code`].)

use std::fmt;

use super::contract::ContractError;
use super::feature::{Feature, LifecycleEvent};
use crate::manifest::ApiVersion;
use crate::wire::canonical::CanonicalError;

/// A failed `initialize` rule (section 1.1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NegotiationError {
    /// An API 0.3 `contract` rule failed: the host's offer or the extension's
    /// selection.
    Contract(ContractError),

    // ----- Building the request (the host's own inputs) -----
    /// A path sent in `initialize` is not absolute UTF-8.
    InvalidPath {
        /// The request member, such as `workspace`.
        field: &'static str,
        /// What is wrong with it.
        problem: PathProblem,
    },
    /// The offer lists a feature the manifest's API version cannot carry.
    OfferFeatureUnavailable {
        /// The offered feature.
        feature: Feature,
        /// The manifest's API version.
        api: ApiVersion,
    },
    /// The offer lists a required feature among the optional ones.
    OfferRequiredFeature {
        /// The required feature.
        feature: Feature,
    },
    /// The offer lists a feature without a feature it depends on, so the response could
    /// never negotiate it.
    OfferFeatureRequires {
        /// The offered feature.
        feature: Feature,
        /// The missing dependency.
        requires: Feature,
    },
    /// The offer lists a feature the manifest does not declare: `secrets` with an empty
    /// `[capabilities].secrets` allowlist, or `provider_credentials` without
    /// `[capabilities].provider_credentials = true`.
    OfferFeatureUndeclared {
        /// The offered feature.
        feature: Feature,
    },
    /// `bulk_objects_v1` is offered without bulk storage, or bulk storage without the
    /// feature (section 2.27).
    OfferBulkStorageMismatch,
    /// A bulk storage limit in the offer is zero or above the portable integer bound.
    OfferInvalidBulkLimit {
        /// The limit's member name, such as `object_bytes`.
        name: &'static str,
        /// The offered value.
        value: u64,
    },
    /// The offered `max_concurrent_requests` is zero or above the host bound
    /// (`limits::MAX_CONCURRENT_REQUESTS`).
    OfferInvalidConcurrency {
        /// The offered value.
        value: u32,
    },

    /// API 0.3: the `initialize` params have no canonical encoding (a float or an
    /// out-of-range integer in the host context, for example).
    NotCanonical(CanonicalError),

    // ----- Validating the response -----
    /// API 0.3: a closed object of the response has a member it does not allow (such
    /// as `commands` or `protocol` at the top level).
    UnknownMember {
        /// Where, such as `commands` or `contract.limits.max_bytes`.
        field: String,
    },
    /// A member has the wrong JSON type.
    WrongType {
        /// Where, such as `tools[0].parameters`; `result` for the result itself.
        field: String,
        /// What was expected, such as `"object"`.
        expected: &'static str,
    },
    /// A required member is absent.
    MissingMember {
        /// Where, such as `tools[2].name`.
        field: String,
    },
    /// The response's `api_version` is not the manifest's.
    ApiVersionMismatch {
        /// The manifest's version.
        expected: ApiVersion,
        /// What the response said.
        got: String,
    },
    /// An API 0.1 response contains `protocol`.
    ProtocolMemberForbidden,
    /// An API 0.2 or 0.4 response lacks `protocol`.
    ProtocolMemberMissing,
    /// `protocol.version` does not echo the requested protocol version.
    ProtocolVersionMismatch {
        /// The version the request offered.
        expected: &'static str,
        /// What the response said.
        got: String,
    },
    /// `protocol.features` lacks a required feature.
    MissingRequiredFeature {
        /// The missing feature.
        feature: Feature,
    },
    /// `protocol.features` names a feature this host does not know.
    UnknownFeature {
        /// The unknown name as sent.
        name: String,
    },
    /// `protocol.features` names a feature twice.
    DuplicateFeature {
        /// The repeated feature.
        feature: Feature,
    },
    /// `protocol.features` selects a feature that was not offered.
    FeatureNotOffered {
        /// The feature.
        feature: Feature,
    },
    /// `protocol.features` selects a feature without a feature it requires.
    FeatureRequires {
        /// The selected feature.
        feature: Feature,
        /// The feature it requires, which was not selected.
        requires: Feature,
    },
    /// `protocol.limits.max_concurrent_requests` is not an integer greater than zero.
    InvalidConcurrency {
        /// The value as JSON text.
        value: String,
    },
    /// `protocol.limits.resource_refs_v1` is echoed with other values than the host
    /// advertised (SUPPLEMENT "2.26 resource methods").
    ResourceLimitsEcho {
        /// The value as JSON text.
        value: String,
    },
    /// `protocol.lifecycle_events` breaks the subscription rules (section 1.1).
    InvalidLifecycleSubscription {
        /// Which rule.
        problem: LifecycleSubscriptionProblem,
    },
    /// More than `limits::MAX_TOOLS` tool definitions.
    TooManyTools {
        /// How many the response contains.
        count: usize,
    },
    /// More than `limits::MAX_COMMANDS` command definitions.
    TooManyCommands {
        /// How many the response contains.
        count: usize,
    },
    /// A tool or command name is not a valid identifier.
    InvalidName {
        /// Where, such as `commands[1].name`.
        field: String,
        /// What is wrong with it.
        problem: NameProblem,
    },
    /// Two tool definitions share a name.
    DuplicateTool {
        /// The repeated name.
        name: String,
    },
    /// Two command definitions share a name.
    DuplicateCommand {
        /// The repeated name.
        name: String,
    },
    /// Without `dynamic_tools`, the tool names differ from `contributes.tools`.
    ToolSetMismatch {
        /// Declared names the response lacks, sorted.
        missing: Vec<String>,
        /// Returned names the manifest does not declare, sorted.
        unexpected: Vec<String>,
    },
    /// Without `runtime_commands`, the command names differ from `contributes.commands`.
    CommandSetMismatch {
        /// Declared names the response lacks, sorted.
        missing: Vec<String>,
        /// Returned names the manifest does not declare, sorted.
        unexpected: Vec<String>,
    },
    /// A tool or command description is the empty string.
    EmptyDescription {
        /// Where, such as `tools[3].description`.
        field: String,
    },
    /// An API 0.3 tool description is longer than
    /// [`MAX_V0_3_TOOL_DESCRIPTION_BYTES`](crate::limits::MAX_V0_3_TOOL_DESCRIPTION_BYTES).
    DescriptionTooLong {
        /// Where, such as `tools[3].description`.
        field: String,
        /// Its length in UTF-8 bytes.
        bytes: usize,
    },
    /// A tool's `parameters` is not a JSON Schema object.
    ParametersNotObject {
        /// The tool's name.
        tool: String,
    },
    /// An API 0.1 tool definition declares `output_schema`.
    OutputSchemaOnV0_1 {
        /// The tool's name.
        tool: String,
    },
    /// A tool's `output_schema` is neither an object nor null.
    OutputSchemaNotObject {
        /// The tool's name.
        tool: String,
    },
    /// A tool's `output_schema` leaves the bounded subset of section 1.1 (an unsupported
    /// keyword, too deep, a property name too long, a malformed keyword value).
    OutputSchemaUnsupported {
        /// The tool's name.
        tool: String,
        /// What the schema checker found.
        error: crate::validate::schema::SchemaError,
    },
    /// A tool's `prompt_snippet` or `prompt_guidelines` breaks the API 0.4 rules.
    PromptMetadata {
        /// The tool's name.
        tool: String,
        /// Which rule.
        problem: PromptMetadataProblem,
    },
    /// A member that needs a feature appears without that feature negotiated
    /// (`composition` needs `tool_composition_v1`, `operation` needs
    /// `operation_descriptors_v1`).
    MemberRequiresFeature {
        /// Where, such as `tools[0].composition`.
        field: String,
        /// The feature it needs.
        feature: Feature,
    },
    /// A tool's `composition` declaration is malformed (section 2.25).
    InvalidComposition {
        /// The tool's name.
        tool: String,
        /// Which rule.
        problem: CompositionProblem,
    },
    /// A tool's `operation` descriptor breaks a rule of section 2.26.
    InvalidOperation {
        /// The tool.
        tool: String,
        /// The rule.
        problem: Box<crate::validate::resource::DescriptorProblem>,
    },
}

/// Why a path cannot be sent in `initialize`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathProblem {
    /// The path is not valid UTF-8, so it has no JSON string form.
    NotUtf8,
    /// The path is relative.
    NotAbsolute,
}

/// Why a tool or command name is invalid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NameProblem {
    /// The name is empty.
    Empty,
    /// The name exceeds `limits::MAX_CONTRIBUTION_NAME_BYTES`.
    TooLong {
        /// Its length in UTF-8 bytes.
        bytes: usize,
    },
    /// The name breaks the identifier rule every tool and command name follows, in the
    /// manifest, in `initialize` and in `tools/register` alike: an ASCII letter, then
    /// letters, digits, `-` or `_`.
    NotIdentifier {
        /// The character that breaks it.
        ch: char,
    },
}

/// Which `protocol.lifecycle_events` rule failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LifecycleSubscriptionProblem {
    /// A non-empty subscription without negotiated `lifecycle_events`.
    WithoutFeature,
    /// A name that is not one of the six lifecycle events.
    UnknownEvent {
        /// The name as sent.
        name: String,
    },
    /// An event listed twice.
    DuplicateEvent {
        /// The repeated event.
        event: LifecycleEvent,
    },
}

/// Which `prompt_snippet` / `prompt_guidelines` rule failed (section 1.1, API 0.4).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PromptMetadataProblem {
    /// Declared without negotiated `tool_prompt_metadata_v1` (always so before API 0.4).
    NotNegotiated,
    /// More than `limits::MAX_PROMPT_GUIDELINES` guidelines.
    TooManyGuidelines {
        /// How many were declared.
        count: usize,
    },
    /// A string exceeds `limits::MAX_PROMPT_METADATA_BYTES`.
    TooLong {
        /// The member, such as `prompt_guidelines[2]`.
        member: String,
        /// Its length in UTF-8 bytes.
        bytes: usize,
    },
    /// A string contains a control character other than newline and tab.
    ControlCharacter {
        /// The member, such as `prompt_snippet`.
        member: String,
    },
}

/// Which `composition` rule failed (section 2.25).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CompositionProblem {
    /// A member other than `mode`, `inline_budget` and `constrained_sampling`.
    UnknownMember {
        /// The member's name.
        name: String,
    },
    /// `mode` is absent.
    MissingMode,
    /// `mode` is not `"on"` or `"only"`.
    InvalidMode {
        /// The value as JSON text.
        value: String,
    },
    /// `inline_budget` is absent.
    MissingInlineBudget,
    /// `inline_budget` is not an integer from 0 through
    /// `limits::MAX_COMPOSITION_INLINE_BUDGET`.
    InvalidInlineBudget {
        /// The value as JSON text.
        value: String,
    },
}

impl NegotiationError {
    /// A stable machine-readable name for the failed rule, for `--json` output.
    pub fn code(&self) -> &'static str {
        match self {
            NegotiationError::Contract(e) => e.code(),
            NegotiationError::NotCanonical(_) => "not_canonical",
            NegotiationError::UnknownMember { .. } => "unknown_member",
            NegotiationError::InvalidPath { .. } => "invalid_path",
            NegotiationError::OfferFeatureUnavailable { .. } => "offer_feature_unavailable",
            NegotiationError::OfferRequiredFeature { .. } => "offer_required_feature",
            NegotiationError::OfferFeatureRequires { .. } => "offer_feature_requires",
            NegotiationError::OfferFeatureUndeclared { .. } => "offer_feature_undeclared",
            NegotiationError::OfferBulkStorageMismatch => "offer_bulk_storage_mismatch",
            NegotiationError::OfferInvalidBulkLimit { .. } => "offer_invalid_bulk_limit",
            NegotiationError::OfferInvalidConcurrency { .. } => "offer_invalid_concurrency",
            NegotiationError::WrongType { .. } => "wrong_type",
            NegotiationError::MissingMember { .. } => "missing_member",
            NegotiationError::ApiVersionMismatch { .. } => "api_version_mismatch",
            NegotiationError::ProtocolMemberForbidden => "protocol_member_forbidden",
            NegotiationError::ProtocolMemberMissing => "protocol_member_missing",
            NegotiationError::ProtocolVersionMismatch { .. } => "protocol_version_mismatch",
            NegotiationError::MissingRequiredFeature { .. } => "missing_required_feature",
            NegotiationError::UnknownFeature { .. } => "unknown_feature",
            NegotiationError::DuplicateFeature { .. } => "duplicate_feature",
            NegotiationError::FeatureNotOffered { .. } => "feature_not_offered",
            NegotiationError::FeatureRequires { .. } => "feature_requires",
            NegotiationError::InvalidConcurrency { .. } => "invalid_concurrency",
            NegotiationError::ResourceLimitsEcho { .. } => "resource_limits_echo",
            NegotiationError::InvalidLifecycleSubscription { .. } => {
                "invalid_lifecycle_subscription"
            }
            NegotiationError::TooManyTools { .. } => "too_many_tools",
            NegotiationError::TooManyCommands { .. } => "too_many_commands",
            NegotiationError::InvalidName { .. } => "invalid_name",
            NegotiationError::DuplicateTool { .. } => "duplicate_tool",
            NegotiationError::DuplicateCommand { .. } => "duplicate_command",
            NegotiationError::ToolSetMismatch { .. } => "tool_set_mismatch",
            NegotiationError::CommandSetMismatch { .. } => "command_set_mismatch",
            NegotiationError::EmptyDescription { .. } => "empty_description",
            NegotiationError::DescriptionTooLong { .. } => "description_too_long",
            NegotiationError::ParametersNotObject { .. } => "parameters_not_object",
            NegotiationError::OutputSchemaOnV0_1 { .. } => "output_schema_on_v0_1",
            NegotiationError::OutputSchemaNotObject { .. } => "output_schema_not_object",
            NegotiationError::OutputSchemaUnsupported { .. } => "output_schema_unsupported",
            NegotiationError::PromptMetadata { .. } => "prompt_metadata",
            NegotiationError::MemberRequiresFeature { .. } => "member_requires_feature",
            NegotiationError::InvalidComposition { .. } => "invalid_composition",
            NegotiationError::InvalidOperation { .. } => "invalid_operation",
        }
    }
}

impl fmt::Display for NegotiationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NegotiationError::Contract(e) => e.fmt(f),
            NegotiationError::NotCanonical(e) => {
                write!(f, "the initialize params have no canonical encoding: {e}")
            }
            NegotiationError::UnknownMember { field } => {
                write!(f, "initialize response has unknown member `{field}`")
            }
            NegotiationError::InvalidPath { field, problem } => match problem {
                PathProblem::NotUtf8 => write!(f, "initialize `{field}` is not valid UTF-8"),
                PathProblem::NotAbsolute => write!(f, "initialize `{field}` is not absolute"),
            },
            NegotiationError::OfferFeatureUnavailable { feature, api } => {
                write!(f, "feature `{feature}` cannot be offered on API {api}")
            }
            NegotiationError::OfferRequiredFeature { feature } => write!(
                f,
                "feature `{feature}` is required and cannot be offered as optional"
            ),
            NegotiationError::OfferFeatureRequires { feature, requires } => write!(
                f,
                "feature `{feature}` cannot be offered without offering `{requires}`"
            ),
            NegotiationError::OfferFeatureUndeclared { feature } => write!(
                f,
                "feature `{feature}` cannot be offered: the manifest does not declare it"
            ),
            NegotiationError::OfferBulkStorageMismatch => f.write_str(
                "feature `bulk_objects_v1` must be offered exactly when bulk storage is configured",
            ),
            NegotiationError::OfferInvalidBulkLimit { name, value } => write!(
                f,
                "bulk storage limit `{name}` = {value} is not a positive portable integer"
            ),
            NegotiationError::OfferInvalidConcurrency { value } => write!(
                f,
                "offered max_concurrent_requests {value} is not within 1..={}",
                crate::limits::MAX_CONCURRENT_REQUESTS
            ),
            NegotiationError::WrongType { field, expected } => {
                write!(f, "initialize response `{field}` must be {expected}")
            }
            NegotiationError::MissingMember { field } => {
                write!(f, "initialize response lacks `{field}`")
            }
            NegotiationError::ApiVersionMismatch { expected, got } => write!(
                f,
                "initialize response api_version {got:?} does not match the manifest's \"{expected}\""
            ),
            NegotiationError::ProtocolMemberForbidden => {
                f.write_str("an API 0.1 initialize response must omit `protocol`")
            }
            NegotiationError::ProtocolMemberMissing => {
                f.write_str("initialize response lacks the `protocol` member")
            }
            NegotiationError::ProtocolVersionMismatch { expected, got } => write!(
                f,
                "protocol.version {got:?} does not echo the offered \"{expected}\""
            ),
            NegotiationError::MissingRequiredFeature { feature } => {
                write!(f, "protocol.features lacks required feature `{feature}`")
            }
            NegotiationError::UnknownFeature { name } => {
                write!(f, "protocol.features names unknown feature {name:?}")
            }
            NegotiationError::DuplicateFeature { feature } => {
                write!(f, "protocol.features names `{feature}` twice")
            }
            NegotiationError::FeatureNotOffered { feature } => {
                write!(f, "protocol.features selects `{feature}`, which was not offered")
            }
            NegotiationError::FeatureRequires { feature, requires } => write!(
                f,
                "protocol.features selects `{feature}` without `{requires}`, which it requires"
            ),
            NegotiationError::InvalidConcurrency { value } => write!(
                f,
                "protocol.limits.max_concurrent_requests {value} is not an integer greater than zero"
            ),
            NegotiationError::ResourceLimitsEcho { value } => write!(
                f,
                "protocol.limits.resource_refs_v1 {value} is not the host's advertised \
                 {{\"max_records\":256,\"max_registrations_per_parent\":32}}; echo it exactly \
                 or leave it out"
            ),
            NegotiationError::InvalidLifecycleSubscription { problem } => match problem {
                LifecycleSubscriptionProblem::WithoutFeature => f.write_str(
                    "protocol.lifecycle_events is non-empty but `lifecycle_events` was not negotiated",
                ),
                LifecycleSubscriptionProblem::UnknownEvent { name } => {
                    write!(f, "protocol.lifecycle_events names unknown event {name:?}")
                }
                LifecycleSubscriptionProblem::DuplicateEvent { event } => {
                    write!(f, "protocol.lifecycle_events names `{event}` twice")
                }
            },
            NegotiationError::TooManyTools { count } => write!(
                f,
                "initialize response has {count} tools; at most {} are allowed",
                crate::limits::MAX_TOOLS
            ),
            NegotiationError::TooManyCommands { count } => write!(
                f,
                "initialize response has {count} commands; at most {} are allowed",
                crate::limits::MAX_COMMANDS
            ),
            NegotiationError::InvalidName { field, problem } => match problem {
                NameProblem::Empty => write!(f, "`{field}` is empty"),
                NameProblem::NotIdentifier { ch } => write!(
                    f,
                    "`{field}` is not an identifier: {ch:?} is not allowed (an ASCII letter, \
                     then letters, digits, `-` or `_`)"
                ),
                NameProblem::TooLong { bytes } => write!(
                    f,
                    "`{field}` is {bytes} bytes; at most {} are allowed",
                    crate::limits::MAX_CONTRIBUTION_NAME_BYTES
                ),
            },
            NegotiationError::DuplicateTool { name } => {
                write!(f, "initialize response defines tool {name:?} twice")
            }
            NegotiationError::DuplicateCommand { name } => {
                write!(f, "initialize response defines command {name:?} twice")
            }
            NegotiationError::ToolSetMismatch {
                missing,
                unexpected,
            } => write!(
                f,
                "tools differ from contributes.tools: missing {missing:?}, unexpected {unexpected:?}"
            ),
            NegotiationError::CommandSetMismatch {
                missing,
                unexpected,
            } => write!(
                f,
                "commands differ from contributes.commands: missing {missing:?}, unexpected {unexpected:?}"
            ),
            NegotiationError::EmptyDescription { field } => write!(f, "`{field}` is empty"),
            NegotiationError::DescriptionTooLong { field, bytes } => write!(
                f,
                "`{field}` is {bytes} bytes; API 0.3 allows at most {} (shorten it)",
                crate::limits::MAX_V0_3_TOOL_DESCRIPTION_BYTES
            ),
            NegotiationError::ParametersNotObject { tool } => write!(
                f,
                "tool {tool:?}: parameters must be a JSON Schema object"
            ),
            NegotiationError::OutputSchemaOnV0_1 { tool } => write!(
                f,
                "tool {tool:?}: an API 0.1 tool cannot declare output_schema"
            ),
            NegotiationError::OutputSchemaNotObject { tool } => write!(
                f,
                "tool {tool:?}: output_schema must be a JSON Schema object or null"
            ),
            NegotiationError::OutputSchemaUnsupported { tool, error } => {
                write!(f, "tool {tool:?}: output_schema is not supported: {error}")
            }
            NegotiationError::PromptMetadata { tool, problem } => match problem {
                PromptMetadataProblem::NotNegotiated => write!(
                    f,
                    "tool {tool:?}: prompt metadata needs negotiated `tool_prompt_metadata_v1`"
                ),
                PromptMetadataProblem::TooManyGuidelines { count } => write!(
                    f,
                    "tool {tool:?}: {count} prompt_guidelines; at most {} are allowed",
                    crate::limits::MAX_PROMPT_GUIDELINES
                ),
                PromptMetadataProblem::TooLong { member, bytes } => write!(
                    f,
                    "tool {tool:?}: {member} is {bytes} bytes; at most {} are allowed",
                    crate::limits::MAX_PROMPT_METADATA_BYTES
                ),
                PromptMetadataProblem::ControlCharacter { member } => write!(
                    f,
                    "tool {tool:?}: {member} contains a control character other than newline or tab"
                ),
            },
            NegotiationError::MemberRequiresFeature { field, feature } => {
                write!(f, "`{field}` needs negotiated `{feature}`")
            }
            NegotiationError::InvalidOperation { tool, problem } => {
                write!(f, "tool `{tool}`: invalid `operation` descriptor: {problem}")
            }
            NegotiationError::InvalidComposition { tool, problem } => match problem {
                CompositionProblem::UnknownMember { name } => {
                    write!(f, "tool {tool:?}: unknown composition member {name:?}")
                }
                CompositionProblem::MissingMode => {
                    write!(f, "tool {tool:?}: composition lacks `mode`")
                }
                CompositionProblem::InvalidMode { value } => write!(
                    f,
                    "tool {tool:?}: composition mode {value} is not \"on\" or \"only\""
                ),
                CompositionProblem::MissingInlineBudget => {
                    write!(f, "tool {tool:?}: composition lacks `inline_budget`")
                }
                CompositionProblem::InvalidInlineBudget { value } => write!(
                    f,
                    "tool {tool:?}: composition inline_budget {value} is not an integer within 0..={}",
                    crate::limits::MAX_COMPOSITION_INLINE_BUDGET
                ),
            },
        }
    }
}

impl std::error::Error for NegotiationError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            NegotiationError::Contract(e) => Some(e),
            NegotiationError::NotCanonical(e) => Some(e),
            _ => None,
        }
    }
}

/// The JSON string form of an absolute UTF-8 path sent as `field`.
pub(super) fn path_string(
    path: &std::path::Path,
    field: &'static str,
) -> Result<String, NegotiationError> {
    let text = path.to_str().ok_or(NegotiationError::InvalidPath {
        field,
        problem: PathProblem::NotUtf8,
    })?;
    if !path.is_absolute() {
        return Err(NegotiationError::InvalidPath {
            field,
            problem: PathProblem::NotAbsolute,
        });
    }
    Ok(text.to_owned())
}
