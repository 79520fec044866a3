//! The extension side of tool composition (section 2.25, API 0.4): enable
//! [`FEATURE_TOOL_COMPOSITION`] with [`crate::sdk::Extension::feature`], and from a
//! tool handler read the frozen catalog of the host's tools, call them through the
//! host and commit one write to the tool's private store. The handler's `tool/call` is
//! the parent of every nested call; when it settles, the host revokes what is left.
//!
//! Answers too large for a frame arrive as a sidecar file in the scratch directory;
//! these calls read it with the reader's checks (a flat host-made name, no link
//! followed, a regular file of the announced size and SHA-256, UTF-8 JSON) and unlink
//! it, so the handler only ever sees the value.
//!
//! ```no_run
//! use octet_host::sdk::{Context, ToolOutput};
//! use serde_json::json;
//!
//! fn survey(ctx: &Context) -> Result<ToolOutput, octet_host::sdk::ChildRequestError> {
//!     let catalog = ctx.composition_context()?;
//!     let status = ctx.compose("git_status", json!({}))?;
//!     ctx.commit_composition_store(json!({"last": status}).as_object().unwrap().clone(), &[])?;
//!     Ok(ToolOutput::text(format!("{} tools; status: {status}", catalog.tools.len())))
//! }
//! ```
//!
//! [`FEATURE_TOOL_COMPOSITION`]: super::FEATURE_TOOL_COMPOSITION

use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::context::Context;
use super::error::ChildRequestError;
use crate::features::composition::sidecar;

/// One tool of the frozen snapshot `composition/context` answers with.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct ComposableTool {
    /// The name `compose` takes.
    pub name: String,
    /// Its description.
    pub description: String,
    /// Its arguments' schema.
    pub parameters: Value,
    /// Its structured result's schema, when it declares one.
    #[serde(default)]
    pub output_schema: Option<Value>,
}

/// The bounds of one parent's composition.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
pub struct CompositionLimits {
    /// The one deadline of all nested calls, from the parent's admission.
    pub timeout_ms: u64,
    /// Most nested calls.
    pub max_calls: u32,
}

/// The frozen outer-call snapshot (`composition/context`).
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct CompositionContext {
    /// Every tool the program may call.
    pub tools: Vec<ComposableTool>,
    /// The composing tool's store as last committed.
    pub store: Map<String, Value>,
    /// The bounds.
    pub limits: CompositionLimits,
}

/// A nested call's complete outcome (`full_outcome`): a failure of the tool is an
/// outcome too (`is_error`), not an error of the request.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct NestedOutcome {
    /// The ordered content parts, as the tool answered them.
    pub content: Vec<Value>,
    /// True when the tool failed (or the host refused the call before it ran).
    pub is_error: bool,
    /// Its structured content, when the tool declares an output schema.
    #[serde(default)]
    pub structured_content: Option<Value>,
    /// Its metadata.
    #[serde(default)]
    pub metadata: Option<Value>,
    /// The host-issued nested call: `{id, name, arguments}`.
    pub tool_call: Value,
}

impl Context {
    /// `composition/context`: the frozen tools, the store and the limits.
    pub fn composition_context(&self) -> Result<CompositionContext, ChildRequestError> {
        let answer = self.composition("composition/context", Map::new(), "context_file")?;
        serde_json::from_value(answer).map_err(|_| ChildRequestError::MalformedAnswer {
            method: "composition/context",
        })
    }

    /// `composition/call`: runs `tool` with `arguments` (an object) through the host and
    /// returns its value: the structured content of a tool that declares an output
    /// schema, its text otherwise. A tool that fails is an error of this request.
    pub fn compose(&self, tool: &str, arguments: Value) -> Result<Value, ChildRequestError> {
        let mut params = Map::new();
        params.insert("name".into(), json!(tool));
        params.insert("arguments".into(), arguments);
        let answer = self.composition("composition/call", params, "value_file")?;
        answer
            .get("value")
            .cloned()
            .ok_or(ChildRequestError::MalformedAnswer {
                method: "composition/call",
            })
    }

    /// `composition/call` with `full_outcome`: the complete outcome, a failure of the
    /// tool included.
    pub fn compose_outcome(
        &self,
        tool: &str,
        arguments: Value,
    ) -> Result<NestedOutcome, ChildRequestError> {
        let mut params = Map::new();
        params.insert("name".into(), json!(tool));
        params.insert("arguments".into(), arguments);
        params.insert("full_outcome".into(), json!(true));
        let answer = self.composition("composition/call", params, "value_file")?;
        answer
            .get("value")
            .cloned()
            .and_then(|value| serde_json::from_value(value).ok())
            .ok_or(ChildRequestError::MalformedAnswer {
                method: "composition/call",
            })
    }

    /// `composition/store`: the parent's one write batch, synced by the host before it
    /// answers. Commit only after the program succeeded; a second commit is refused.
    pub fn commit_composition_store(
        &self,
        set: Map<String, Value>,
        delete: &[String],
    ) -> Result<(), ChildRequestError> {
        let mut params = Map::new();
        params.insert("set".into(), Value::Object(set));
        params.insert("delete".into(), json!(delete));
        self.request("composition/store", params).map(|_| ())
    }

    /// One `composition/*` request, its sidecar (under `member`) read if it has one.
    fn composition(
        &self,
        method: &'static str,
        params: Map<String, Value>,
        member: &str,
    ) -> Result<Value, ChildRequestError> {
        let answer = self.request(method, params)?;
        let Some(envelope) = answer.get(member) else {
            return Ok(answer);
        };
        let scratch = std::env::var_os("OCTET_EXTENSION_SCRATCH").ok_or_else(|| {
            ChildRequestError::Sidecar {
                reason: "OCTET_EXTENSION_SCRATCH is not set".into(),
            }
        })?;
        sidecar::read(std::path::Path::new(&scratch), envelope).map_err(|e| {
            ChildRequestError::Sidecar {
                reason: e.to_string(),
            }
        })
    }
}
