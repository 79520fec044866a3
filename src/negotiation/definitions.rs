//! `ToolDefinition` and `CommandDefinition` (sections 1.1, 4), parsed by hand so every
//! error names the exact member, such as `tools[3].description`.
//!
//! Members this host does not know are ignored: the feature-negotiated wire is not
//! closed. Optional members set to `null` are treated as absent, except that an API 0.1
//! tool may not carry an `output_schema` member at all (the 0.1 shape is frozen).

use serde::Serialize;
use serde_json::{Map, Value};

use super::error::{CompositionProblem, NameProblem, NegotiationError, PromptMetadataProblem};
use super::feature::{Feature, FeatureSet};
use crate::limits;
use crate::manifest::ApiVersion;

/// A model-callable tool an extension defines (section 4 `ToolDefinition`).
///
/// It serializes in wire form, omitting absent optional members.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ToolDefinition {
    /// The tool's name.
    pub name: String,
    /// A non-empty description for the model.
    pub description: String,
    /// The JSON Schema object of the arguments.
    pub parameters: Value,
    /// The schema of `structured_content` (API 0.2+); `None` when absent or null.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// `output_schema`, compiled once at admission to validate `structured_content`.
    #[serde(skip)]
    pub compiled_output_schema: Option<CompiledOutputSchema>,
    /// Presentation-only prompt snippet (API 0.4, `tool_prompt_metadata_v1`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt_snippet: Option<String>,
    /// Presentation-only prompt guidelines (API 0.4, `tool_prompt_metadata_v1`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub prompt_guidelines: Vec<String>,
    /// The composition declaration (API 0.4, `tool_composition_v1`, section 2.25).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub composition: Option<Composition>,
    /// The operation descriptor (API 0.4, `operation_descriptors_v1`, section 2.26),
    /// checked against the tool's `parameters` and `output_schema`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub operation: Option<crate::validate::resource::OperationDescriptor>,
}

/// A compiled `output_schema`, shared by every call of the tool.
///
/// It is derived from [`ToolDefinition::output_schema`], so two of them always compare
/// equal: definitions are equal exactly when their schema values are.
#[derive(Clone, Debug)]
pub struct CompiledOutputSchema(pub std::sync::Arc<crate::validate::schema::OutputSchema>);

impl PartialEq for CompiledOutputSchema {
    fn eq(&self, _other: &Self) -> bool {
        true
    }
}

/// A tool's `composition` declaration (section 2.25).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Composition {
    /// Whether the tool is also a direct tool.
    pub mode: CompositionMode,
    /// Estimated tokens, 0 through `limits::MAX_COMPOSITION_INLINE_BUDGET`.
    pub inline_budget: u64,
    /// The provider grammar/regex contract, passed through unchanged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub constrained_sampling: Option<Value>,
}

/// `composition.mode` (section 2.25).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CompositionMode {
    /// `on`: ordinary direct tools plus composition.
    On,
    /// `only`: composition advertised, ordinary tools nested-only.
    Only,
}

/// A slash command an extension defines (section 4 `CommandDefinition`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CommandDefinition {
    /// The command's name, without the slash.
    pub name: String,
    /// A non-empty description.
    pub description: String,
    /// A usage hint, such as `/hello [name]`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<String>,
}

impl ToolDefinition {
    /// Parses one tool definition found at `path` (such as `tools[3]`) for an extension
    /// speaking `api` that negotiated `features`. Initialization and dynamic
    /// registration share this validation (section 1.1).
    pub fn parse(
        value: &Value,
        path: &str,
        api: ApiVersion,
        features: FeatureSet,
    ) -> Result<ToolDefinition, NegotiationError> {
        let map = as_object(value, path)?;
        let name = required_name(map, path)?;
        let description = required_description(map, path)?;
        let parameters = match map.get("parameters") {
            None => return Err(missing(path, "parameters")),
            Some(p @ Value::Object(_)) => p.clone(),
            Some(_) => return Err(NegotiationError::ParametersNotObject { tool: name }),
        };

        let (output_schema, compiled_output_schema) = if api == ApiVersion::V0_1 {
            if map.contains_key("output_schema") {
                return Err(NegotiationError::OutputSchemaOnV0_1 { tool: name });
            }
            (None, None)
        } else {
            match optional(map, "output_schema") {
                None => (None, None),
                Some(schema) => {
                    let compiled = check_output_schema(&name, schema)?;
                    (Some(schema.clone()), Some(compiled))
                }
            }
        };

        let (prompt_snippet, prompt_guidelines) = prompt_metadata(map, path, &name, features)?;

        let composition = match optional(map, "composition") {
            None => None,
            Some(value) => {
                require_feature(path, "composition", features, Feature::ToolCompositionV1)?;
                Some(composition(value, path, &name)?)
            }
        };

        let operation = match optional(map, "operation") {
            None => None,
            Some(value) => {
                require_feature(path, "operation", features, Feature::OperationDescriptorsV1)?;
                let descriptor = crate::validate::resource::OperationDescriptor::parse(
                    value,
                    &parameters,
                    output_schema.as_ref(),
                    features.contains(Feature::ResourceRefsV1),
                )
                .map_err(|problem| NegotiationError::InvalidOperation {
                    tool: name.clone(),
                    problem: Box::new(problem),
                })?;
                Some(descriptor)
            }
        };

        Ok(ToolDefinition {
            name,
            description,
            parameters,
            output_schema,
            compiled_output_schema,
            prompt_snippet,
            prompt_guidelines,
            composition,
            operation,
        })
    }
}

impl CommandDefinition {
    /// Parses one command definition found at `path` (such as `commands[0]`).
    pub fn parse(value: &Value, path: &str) -> Result<CommandDefinition, NegotiationError> {
        let map = as_object(value, path)?;
        let name = required_name(map, path)?;
        let description = required_description(map, path)?;
        let usage = match optional(map, "usage") {
            None => None,
            Some(Value::String(usage)) => Some(usage.clone()),
            Some(_) => return Err(wrong_type(path, "usage", "a string")),
        };
        Ok(CommandDefinition {
            name,
            description,
            usage,
        })
    }
}

/// Admits an `output_schema`: it must be an object and stay inside the bounded JSON
/// Schema subset of section 1.1 (listed keywords only, nesting at most 32, property
/// names at most 256 bytes). Any other keyword rejects the tool definition, naming it.
fn check_output_schema(
    tool: &str,
    schema: &Value,
) -> Result<CompiledOutputSchema, NegotiationError> {
    if !schema.is_object() {
        return Err(NegotiationError::OutputSchemaNotObject {
            tool: tool.to_owned(),
        });
    }
    crate::validate::schema::check_output_schema(schema)
        .map(|compiled| CompiledOutputSchema(std::sync::Arc::new(compiled)))
        .map_err(|error| NegotiationError::OutputSchemaUnsupported {
            tool: tool.to_owned(),
            error,
        })
}

/// `prompt_snippet` and `prompt_guidelines` (section 1.1, API 0.4): only with negotiated
/// `tool_prompt_metadata_v1`, at most 16 guidelines, each string at most 1,024 UTF-8
/// bytes with no control character other than newline and tab.
fn prompt_metadata(
    map: &Map<String, Value>,
    path: &str,
    tool: &str,
    features: FeatureSet,
) -> Result<(Option<String>, Vec<String>), NegotiationError> {
    let snippet = optional(map, "prompt_snippet");
    let guidelines = optional(map, "prompt_guidelines");
    if snippet.is_none() && guidelines.is_none() {
        return Ok((None, Vec::new()));
    }
    let problem = |problem| NegotiationError::PromptMetadata {
        tool: tool.to_owned(),
        problem,
    };
    if !features.contains(Feature::ToolPromptMetadataV1) {
        return Err(problem(PromptMetadataProblem::NotNegotiated));
    }
    let snippet = match snippet {
        None => None,
        Some(Value::String(text)) => {
            check_prompt_text(text, "prompt_snippet").map_err(problem)?;
            Some(text.clone())
        }
        Some(_) => return Err(wrong_type(path, "prompt_snippet", "a string")),
    };
    let guidelines = match guidelines {
        None => Vec::new(),
        Some(Value::Array(items)) => {
            if items.len() > limits::MAX_PROMPT_GUIDELINES {
                return Err(problem(PromptMetadataProblem::TooManyGuidelines {
                    count: items.len(),
                }));
            }
            let mut texts = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                let member = format!("prompt_guidelines[{i}]");
                let Value::String(text) = item else {
                    return Err(wrong_type(path, &member, "a string"));
                };
                check_prompt_text(text, &member).map_err(problem)?;
                texts.push(text.clone());
            }
            texts
        }
        Some(_) => return Err(wrong_type(path, "prompt_guidelines", "an array of strings")),
    };
    Ok((snippet, guidelines))
}

fn check_prompt_text(text: &str, member: &str) -> Result<(), PromptMetadataProblem> {
    if text.len() > limits::MAX_PROMPT_METADATA_BYTES {
        return Err(PromptMetadataProblem::TooLong {
            member: member.to_owned(),
            bytes: text.len(),
        });
    }
    if text
        .chars()
        .any(|c| c.is_control() && c != '\n' && c != '\t')
    {
        return Err(PromptMetadataProblem::ControlCharacter {
            member: member.to_owned(),
        });
    }
    Ok(())
}

/// A `composition` declaration (section 2.25): `mode` is `on` or `only`,
/// `inline_budget` an integer from 0 through 16,000; the optional
/// `constrained_sampling` is passed through; other members are rejected. The reference
/// gives no default for either required member, so both must be present.
fn composition(value: &Value, path: &str, tool: &str) -> Result<Composition, NegotiationError> {
    let map = as_object(value, &format!("{path}.composition"))?;
    let invalid = |problem| NegotiationError::InvalidComposition {
        tool: tool.to_owned(),
        problem,
    };
    if let Some(name) = map.keys().find(|k| {
        !matches!(
            k.as_str(),
            "mode" | "inline_budget" | "constrained_sampling"
        )
    }) {
        return Err(invalid(CompositionProblem::UnknownMember {
            name: name.clone(),
        }));
    }
    let mode = match map.get("mode") {
        None => return Err(invalid(CompositionProblem::MissingMode)),
        Some(Value::String(mode)) if mode == "on" => CompositionMode::On,
        Some(Value::String(mode)) if mode == "only" => CompositionMode::Only,
        Some(other) => {
            return Err(invalid(CompositionProblem::InvalidMode {
                value: other.to_string(),
            }))
        }
    };
    let inline_budget = match map.get("inline_budget") {
        None => return Err(invalid(CompositionProblem::MissingInlineBudget)),
        Some(budget) => match budget.as_u64() {
            Some(n) if n <= limits::MAX_COMPOSITION_INLINE_BUDGET => n,
            _ => {
                return Err(invalid(CompositionProblem::InvalidInlineBudget {
                    value: budget.to_string(),
                }))
            }
        },
    };
    Ok(Composition {
        mode,
        inline_budget,
        constrained_sampling: optional(map, "constrained_sampling").cloned(),
    })
}

fn require_feature(
    path: &str,
    member: &str,
    features: FeatureSet,
    feature: Feature,
) -> Result<(), NegotiationError> {
    if features.contains(feature) {
        return Ok(());
    }
    Err(NegotiationError::MemberRequiresFeature {
        field: format!("{path}.{member}"),
        feature,
    })
}

/// A required `name`: an identifier of at most `limits::MAX_CONTRIBUTION_NAME_BYTES`
/// bytes, by the one rule every tool and command name follows
/// ([`crate::manifest::rules::check_contribution_name`]).
fn required_name(map: &Map<String, Value>, path: &str) -> Result<String, NegotiationError> {
    use crate::manifest::IdentifierRule;
    let name = required_string(map, path, "name")?;
    let problem = match crate::manifest::rules::check_contribution_name(name) {
        Ok(()) => None,
        Err(IdentifierRule::Empty) => Some(NameProblem::Empty),
        Err(IdentifierRule::TooLong { .. }) => Some(NameProblem::TooLong { bytes: name.len() }),
        Err(IdentifierRule::FirstCharacter { ch } | IdentifierRule::Character { ch }) => {
            Some(NameProblem::NotIdentifier { ch })
        }
    };
    match problem {
        Some(problem) => Err(NegotiationError::InvalidName {
            field: format!("{path}.name"),
            problem,
        }),
        None => Ok(name.to_owned()),
    }
}

/// A required, non-empty `description`. The reference says "non-empty", so a
/// whitespace-only description is accepted.
fn required_description(map: &Map<String, Value>, path: &str) -> Result<String, NegotiationError> {
    let description = required_string(map, path, "description")?;
    if description.is_empty() {
        return Err(NegotiationError::EmptyDescription {
            field: format!("{path}.description"),
        });
    }
    Ok(description.to_owned())
}

fn required_string<'a>(
    map: &'a Map<String, Value>,
    path: &str,
    member: &str,
) -> Result<&'a str, NegotiationError> {
    match map.get(member) {
        None => Err(missing(path, member)),
        Some(Value::String(text)) => Ok(text),
        Some(_) => Err(wrong_type(path, member, "a string")),
    }
}

/// The member's value, or `None` when it is absent or null.
pub(super) fn optional<'a>(map: &'a Map<String, Value>, member: &str) -> Option<&'a Value> {
    map.get(member).filter(|v| !v.is_null())
}

pub(super) fn as_object<'a>(
    value: &'a Value,
    field: &str,
) -> Result<&'a Map<String, Value>, NegotiationError> {
    value
        .as_object()
        .ok_or_else(|| NegotiationError::WrongType {
            field: field.to_owned(),
            expected: "an object",
        })
}

pub(super) fn missing(path: &str, member: &str) -> NegotiationError {
    NegotiationError::MissingMember {
        field: join(path, member),
    }
}

pub(super) fn wrong_type(path: &str, member: &str, expected: &'static str) -> NegotiationError {
    NegotiationError::WrongType {
        field: join(path, member),
        expected,
    }
}

fn join(path: &str, member: &str) -> String {
    if path.is_empty() {
        member.to_owned()
    } else {
        format!("{path}.{member}")
    }
}
