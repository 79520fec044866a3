//! Tool composition (section 2.25, API 0.4 `tool_composition_v1`): a live model
//! `tool/call` runs a bounded program that calls other tools of the host through the
//! runtime. Unlike the services an embedder binds, the runtime serves this itself:
//! what composition acts on is its own, the tools of the extensions it hosts.
//!
//! - [`Registry`]: the frozen outer-call snapshot, the model-visible tools of every
//!   routed extension when the outer `tool/call` was admitted (composition tools
//!   removed, so nothing recurses), with their schemas.
//! - [`params`]: the closed params of `composition/context`, `composition/call` and
//!   `composition/store`, with their bounds.
//! - [`store::CompositionStore`]: the private store of each composing tool, in a
//!   host-owned directory, synced before a commit is acknowledged.
//!
//! The dispatcher (`dispatcher/composition/`) admits the requests against the live
//! parent, runs each nested call on its target's generation like any call, and revokes
//! them when the parent settles. The reference lets safe host reads overlap, four at a
//! time, and runs "mutations, shell and extension effects" alone: every tool this host
//! composes is an extension's, so a parent's nested calls run one at a time, in the
//! order they came.

pub mod params;
pub mod sidecar;
pub mod store;

use std::sync::Arc;

use serde_json::{json, Value};

use crate::negotiation::ToolDefinition;
use crate::validate::schema::OutputSchema;

/// One tool of the frozen snapshot.
#[derive(Clone, Debug)]
pub struct FrozenTool {
    /// The name a `composition/call` uses: the tool's own name, or
    /// `<extension>/<tool>` when two extensions offer the same name.
    pub name: String,
    /// The extension that offers it.
    pub extension: String,
    /// Its definition, as it was when the outer call was admitted.
    pub definition: ToolDefinition,
    /// Its `parameters`, compiled when they are in the host's schema subset; `None`
    /// accepts any object (the subset is documented in `validate::schema`).
    pub arguments: Option<Arc<OutputSchema>>,
}

/// The frozen outer-call snapshot of every model-visible tool the host runs.
#[derive(Clone, Debug, Default)]
pub struct Registry {
    tools: Vec<Arc<FrozenTool>>,
}

impl Registry {
    /// The snapshot of `catalogs` (each extension's name and its current catalog, in
    /// start order): tools that declare `composition` are left out, and a name two
    /// extensions share is qualified with the extension's name.
    pub fn freeze<'a>(
        catalogs: impl IntoIterator<Item = (&'a str, &'a Arc<Vec<ToolDefinition>>)>,
    ) -> Registry {
        let mut tools: Vec<FrozenTool> = Vec::new();
        for (extension, catalog) in catalogs {
            for definition in catalog.iter().filter(|t| t.composition.is_none()) {
                tools.push(FrozenTool {
                    name: definition.name.clone(),
                    extension: extension.to_string(),
                    definition: definition.clone(),
                    arguments: OutputSchema::compile(&definition.parameters)
                        .ok()
                        .map(Arc::new),
                });
            }
        }
        let shared: Vec<String> = tools
            .iter()
            .filter(|t| tools.iter().filter(|o| o.name == t.name).count() > 1)
            .map(|t| t.name.clone())
            .collect();
        for tool in &mut tools {
            if shared.contains(&tool.name) {
                tool.name = format!("{}/{}", tool.extension, tool.definition.name);
            }
        }
        Registry {
            tools: tools.into_iter().map(Arc::new).collect(),
        }
    }

    /// The tool a `composition/call` names exactly.
    pub fn get(&self, name: &str) -> Option<&Arc<FrozenTool>> {
        self.tools.iter().find(|t| t.name == name)
    }

    /// Every frozen tool.
    pub fn tools(&self) -> &[Arc<FrozenTool>] {
        &self.tools
    }

    /// The `tools` member of `composition/context`: each tool's name, description,
    /// parameters and output schema.
    pub fn to_value(&self) -> Value {
        Value::Array(
            self.tools
                .iter()
                .map(|t| {
                    let mut tool = json!({
                        "name": t.name,
                        "description": t.definition.description,
                        "parameters": t.definition.parameters,
                    });
                    if let Some(schema) = &t.definition.output_schema {
                        tool["output_schema"] = schema.clone();
                    }
                    tool
                })
                .collect(),
        )
    }
}

/// Where composing tools' stores live (who composition is offered to is the host's
/// [`RuntimeOffers`](crate::features::offers::RuntimeOffers)).
#[derive(Debug)]
pub struct CompositionSettings {
    /// The host-owned stores (created on the first commit).
    pub store: Arc<store::CompositionStore>,
    /// The one deadline of a parent's nested calls (`limits.timeout_ms`), within
    /// [`crate::limits::MIN_COMPOSITION_TIMEOUT`] and
    /// [`crate::limits::MAX_COMPOSITION_TIMEOUT`].
    pub timeout: std::time::Duration,
}
