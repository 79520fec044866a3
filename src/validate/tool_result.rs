//! The result of `tool/call` (section 1.2), for API 0.1 and for the content-part APIs.
//!
//! API 0.1 (frozen): `content` is a string and becomes one text part; `is_error` is an
//! optional boolean, `false` when absent (the reference's example always carries it, its
//! field list does not mark it required); `metadata` is optional JSON of any shape, kept
//! as it is and not bounded (the 0.1 decoder accepts it for compatibility only). Members the
//! 0.1 decoder does not know, `structured_content` included, are ignored.
//!
//! API 0.2, 0.3 and 0.4: `content` is the content-part array of [`ContentPart`];
//! `structured_content` is required exactly when the tool declares `output_schema`, bounded,
//! then handed to the schema validator; `metadata` is optional, bounded JSON.
//!
//! API 0.3 models are closed (SUPPLEMENT "API 0.3", methods in brief): the result has
//! only `content`, `is_error`, `metadata` and `structured_content`; an unknown member is
//! refused, `is_error` is a required boolean and `metadata` a required member that may
//! be `null`.
//!
//! As everywhere in this module, an optional member whose value is `null` counts as absent.

use std::fmt;

use serde_json::Value;

use crate::manifest::ApiVersion;

use super::content::{content_parts, ContentPart, MediaPolicy};
use super::diagnostics;
use super::error::{ResultError, ResultErrorKind};
use super::field::{as_object, as_str, member, optional_bool, required, Object, ResultPath};
use super::json_bounds::{check_bounds, Bounds};
pub use super::names::StructuredViolation;
use super::path::Path;

/// A validated tool result.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolResult {
    /// The ordered content; API 0.1 text becomes one text part.
    pub content: Vec<ContentPart>,
    /// True when the tool reported an error.
    pub is_error: bool,
    /// Structured content, validated against the tool's output schema (API 0.2+).
    pub structured_content: Option<Value>,
    /// Result metadata; never model-visible.
    pub metadata: Option<Value>,
}

impl ToolResult {
    /// The text parts joined with `\n`, in order; media parts are skipped.
    pub fn text(&self) -> String {
        let texts: Vec<&str> = self
            .content
            .iter()
            .filter_map(ContentPart::as_text)
            .collect();
        texts.join("\n")
    }
}

/// Validates `structured_content` against one tool's output schema.
///
/// The bounded JSON Schema subset of section 1.1 implements this; any closure of the same
/// shape does too.
pub trait StructuredValidator {
    /// Accepts `structured_content` or names the first violation.
    fn validate(&self, structured_content: &Value) -> Result<(), StructuredViolation>;
}

impl<F> StructuredValidator for F
where
    F: Fn(&Value) -> Result<(), StructuredViolation>,
{
    fn validate(&self, structured_content: &Value) -> Result<(), StructuredViolation> {
        self(structured_content)
    }
}

/// Whether the called tool declares `output_schema` (API 0.2+).
#[derive(Clone, Copy, Default)]
pub enum OutputSchema<'a> {
    /// No output schema: `structured_content` is forbidden.
    #[default]
    NotDeclared,
    /// An output schema: `structured_content` is required, bounded, and then checked by
    /// `validator` when one is given. `None` checks the bounds only.
    Declared {
        /// The tool's compiled schema.
        validator: Option<&'a dyn StructuredValidator>,
    },
}

impl fmt::Debug for OutputSchema<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OutputSchema::NotDeclared => f.write_str("NotDeclared"),
            OutputSchema::Declared { validator } => f
                .debug_struct("Declared")
                .field("validator", &validator.map(|_| ".."))
                .finish(),
        }
    }
}

/// What validating one tool result needs to know about its call.
#[derive(Clone, Copy, Debug)]
pub struct ToolResultContext<'a> {
    /// The extension's wire version; 0.1 selects the frozen text result.
    pub api_version: ApiVersion,
    /// The called tool's output schema. Ignored for API 0.1, whose tools cannot declare one.
    pub output_schema: OutputSchema<'a>,
    /// How media parts are treated. Ignored for API 0.1.
    pub media: MediaPolicy<'a>,
}

impl ToolResultContext<'_> {
    /// A context for a tool without output schema and without the `artifacts` feature.
    pub fn new(api_version: ApiVersion) -> ToolResultContext<'static> {
        ToolResultContext {
            api_version,
            output_schema: OutputSchema::NotDeclared,
            media: MediaPolicy::NotNegotiated,
        }
    }
}

#[doc(hidden)]
/// Validates the `result` of one `tool/call`.
pub fn tool_output(result: &Value, ctx: &ToolResultContext) -> Result<ToolResult, ResultError> {
    tool_output_with_blobs(result, ctx, None)
}

/// [`tool_output`], with the bulk objects (section 2.27) its diagnostics may name
/// resolved by `blobs`.
pub(crate) fn tool_output_with_blobs(
    result: &Value,
    ctx: &ToolResultContext,
    blobs: Option<&dyn diagnostics::BlobResolver>,
) -> Result<ToolResult, ResultError> {
    let root = Path::Root;
    let object = as_object(result, &root)?;
    if ctx.api_version == ApiVersion::V0_1 {
        return legacy_tool_output(object, &root);
    }
    if ctx.api_version == ApiVersion::V0_3 {
        canonical_members(object, &root)?;
    }
    let content = content_parts(
        required(object, "content", &root)?,
        &root.key("content"),
        ctx.media,
    )?;
    let is_error = optional_bool(object, "is_error", &root, false)?;
    let structured_content = structured_content(object, &root, ctx.output_schema)?;
    let metadata = match member(object, "metadata") {
        Some(metadata) => {
            check_bounds(metadata, Bounds::METADATA)
                .map_err(|error| root.key("metadata").error(ResultErrorKind::Bounds(error)))?;
            check_diagnostics(metadata, &root.key("metadata"), ctx.media, blobs, is_error)?;
            Some(metadata.clone())
        }
        None => None,
    };
    Ok(ToolResult {
        content,
        is_error,
        structured_content,
        metadata,
    })
}

/// The members of a closed API 0.3 `tool/call` result.
const CANONICAL_MEMBERS: [&str; 4] = ["content", "is_error", "metadata", "structured_content"];

/// The API 0.3 rules on the result's members: no unknown member, `is_error` present
/// (its type is checked with the other versions'), `metadata` present (nullable).
fn canonical_members(object: &Object, root: &Path) -> Result<(), ResultError> {
    if let Some(unknown) = object
        .keys()
        .find(|k| !CANONICAL_MEMBERS.contains(&k.as_str()))
    {
        return Err(root.key(unknown).error(ResultErrorKind::UnknownMember {
            member: unknown.clone(),
        }));
    }
    required(object, "is_error", root)?;
    if !object.contains_key("metadata") {
        return Err(root.key("metadata").error(ResultErrorKind::Missing));
    }
    Ok(())
}

/// The reserved `octet_diagnostics_v1` member of `metadata`, when present: the closed
/// profile, and every artifact or blob it names checked against the host's records
/// (the generation's artifacts for the call's owner; the owner's bulk objects, with
/// bulk storage).
fn check_diagnostics(
    metadata: &Value,
    path: &Path,
    media: MediaPolicy,
    blobs: Option<&dyn diagnostics::BlobResolver>,
    is_error: bool,
) -> Result<(), ResultError> {
    let Some(value) = metadata.get(diagnostics::METADATA_KEY) else {
        return Ok(());
    };
    let path = path.key(diagnostics::METADATA_KEY);
    let records = diagnostics::parse(value, &path)?;
    let artifacts = match media {
        MediaPolicy::Artifacts(resolver) => Some(resolver),
        MediaPolicy::NotNegotiated => None,
    };
    diagnostics::check_references(&records, &path, artifacts, blobs, is_error)
}

/// The frozen API 0.1 result.
fn legacy_tool_output(object: &Object, root: &Path) -> Result<ToolResult, ResultError> {
    let text = as_str(required(object, "content", root)?, &root.key("content"))?;
    Ok(ToolResult {
        content: vec![ContentPart::Text {
            text: text.to_owned(),
        }],
        is_error: optional_bool(object, "is_error", root, false)?,
        structured_content: None,
        metadata: member(object, "metadata").cloned(),
    })
}

/// Applies the `output_schema` rule to `structured_content`.
fn structured_content(
    object: &Object,
    root: &Path,
    output_schema: OutputSchema,
) -> Result<Option<Value>, ResultError> {
    let path = root.key("structured_content");
    let value = member(object, "structured_content");
    match (output_schema, value) {
        (OutputSchema::NotDeclared, None) => Ok(None),
        (OutputSchema::NotDeclared, Some(_)) => {
            Err(path.error(ResultErrorKind::StructuredContentForbidden))
        }
        (OutputSchema::Declared { .. }, None) => {
            Err(path.error(ResultErrorKind::StructuredContentRequired))
        }
        (OutputSchema::Declared { validator }, Some(value)) => {
            check_bounds(value, Bounds::STRUCTURED_CONTENT)
                .map_err(|error| path.error(ResultErrorKind::Bounds(error)))?;
            if let Some(validator) = validator {
                validator.validate(value).map_err(|violation| {
                    path.error(ResultErrorKind::StructuredContentInvalid(violation))
                })?;
            }
            Ok(Some(value.clone()))
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn api_0_3_results_are_closed_and_carry_is_error_and_metadata() {
        let ctx = ToolResultContext::new(ApiVersion::V0_3);
        let text = json!([{"type": "text", "text": "hi"}]);
        let ok = json!({"content": text, "is_error": false, "metadata": null});
        assert!(tool_output(&ok, &ctx).is_ok());
        let cases = [
            (
                json!({"content": text, "is_error": false, "metadata": null, "extra": 1}),
                "extra",
            ),
            (json!({"content": text, "metadata": null}), "is_error"),
            (
                json!({"content": text, "is_error": null, "metadata": null}),
                "is_error",
            ),
            (json!({"content": text, "is_error": false}), "metadata"),
        ];
        for (result, member) in cases {
            let error = tool_output(&result, &ctx).unwrap_err();
            assert!(error.to_string().contains(member), "{error}");
        }
        // The same results pass the open API 0.2 model.
        let open = json!({"content": text, "extra": 1});
        assert!(tool_output(&open, &ToolResultContext::new(ApiVersion::V0_2)).is_ok());
    }
    use crate::validate::content::{ArtifactResolver, VerifiedArtifact};

    struct OneArtifact;

    impl ArtifactResolver for OneArtifact {
        fn resolve(&self, artifact_id: &str) -> Option<VerifiedArtifact> {
            (artifact_id == "artifact-opaque-id").then(|| VerifiedArtifact {
                mime_type: "image/png".into(),
                size_bytes: 1000,
            })
        }
    }

    #[test]
    fn reference_example_api_0_1() {
        let result = json!({
            "content": "branch=main\nstate=clean\ncounts=staged:0,modified:0,untracked:0,ignored:0,conflicted:0",
            "is_error": false
        });
        let output = tool_output(&result, &ToolResultContext::new(ApiVersion::V0_1)).unwrap();
        assert_eq!(
            output,
            ToolResult {
                content: vec![ContentPart::Text {
                    text: "branch=main\nstate=clean\ncounts=staged:0,modified:0,untracked:0,ignored:0,conflicted:0".into()
                }],
                is_error: false,
                structured_content: None,
                metadata: None,
            }
        );
        assert_eq!(output.text(), "branch=main\nstate=clean\ncounts=staged:0,modified:0,untracked:0,ignored:0,conflicted:0");
    }

    #[test]
    fn reference_example_api_0_2() {
        let result = json!({
            "content": [
                {"type": "text", "text": "Found 3 sources."},
                {
                    "type": "image",
                    "artifact_id": "artifact-opaque-id",
                    "mime_type": "image/png",
                    "alt": "Search result preview"
                }
            ],
            "structured_content": {
                "sources": [{"title": "Example", "url": "https://example.com"}]
            },
            "is_error": false,
            "metadata": {"cache": "miss"}
        });
        let resolver = OneArtifact;
        let ctx = ToolResultContext {
            api_version: ApiVersion::V0_2,
            output_schema: OutputSchema::Declared { validator: None },
            media: MediaPolicy::Artifacts(&resolver),
        };
        let output = tool_output(&result, &ctx).unwrap();
        assert_eq!(
            output,
            ToolResult {
                content: vec![
                    ContentPart::Text {
                        text: "Found 3 sources.".into()
                    },
                    ContentPart::Image {
                        artifact_id: "artifact-opaque-id".into(),
                        mime_type: "image/png".into(),
                        alt: Some("Search result preview".into()),
                    },
                ],
                is_error: false,
                structured_content: Some(
                    json!({"sources": [{"title": "Example", "url": "https://example.com"}]})
                ),
                metadata: Some(json!({"cache": "miss"})),
            }
        );
        assert_eq!(output.text(), "Found 3 sources.");
    }

    #[test]
    fn api_0_1_is_error_defaults_to_false_and_metadata_is_kept() {
        let ctx = ToolResultContext::new(ApiVersion::V0_1);
        let output = tool_output(&json!({"content": "x", "metadata": [1, 2]}), &ctx).unwrap();
        assert!(!output.is_error);
        assert_eq!(output.metadata, Some(json!([1, 2])));
        let output = tool_output(&json!({"content": "x", "is_error": true}), &ctx).unwrap();
        assert!(output.is_error);
    }

    #[test]
    fn api_0_1_content_must_be_a_string() {
        let ctx = ToolResultContext::new(ApiVersion::V0_1);
        let error =
            tool_output(&json!({"content": [{"type": "text", "text": "x"}]}), &ctx).unwrap_err();
        assert_eq!(error.path(), "content");
        let error = tool_output(&json!({"is_error": false}), &ctx).unwrap_err();
        assert_eq!(error.path(), "content");
        assert_eq!(error.kind(), &ResultErrorKind::Missing);
        let error = tool_output(&json!({"content": "x", "is_error": "no"}), &ctx).unwrap_err();
        assert_eq!(error.path(), "is_error");
    }

    #[test]
    fn validator_violation_is_reported_at_structured_content() {
        let reject = |_: &Value| {
            Err(StructuredViolation {
                path: "/sources".into(),
                message: "must be an array".into(),
            })
        };
        let ctx = ToolResultContext {
            output_schema: OutputSchema::Declared {
                validator: Some(&reject),
            },
            ..ToolResultContext::new(ApiVersion::V0_4)
        };
        let result = json!({"content": [{"type": "text", "text": "x"}], "structured_content": {}});
        let error = tool_output(&result, &ctx).unwrap_err();
        assert_eq!(error.path(), "structured_content");
        assert_eq!(
            error.to_string(),
            "`structured_content` does not match the tool's output_schema: at /sources: must be an array."
        );
    }
}
