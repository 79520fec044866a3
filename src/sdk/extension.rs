//! The [`Extension`] builder: declare tools, commands, hooks and the other handlers,
//! then [`Extension::run`] it over stdio.

use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::context::Context;
use super::error::HandlerError;
use super::menu::Menu;
use super::output::{
    CommandOutput, ContextContribution, HookOutput, RenderOutput, StatusContribution, Surface,
    ToolOutput,
};
use super::request::{LifecycleNotice, RenderRequest};
use super::DEFAULT_MAX_CONCURRENT_REQUESTS;
use crate::manifest::ApiVersion;

/// The environment variable carrying the manifest's `api_version` (SUPPLEMENT
/// "Environment of every extension child").
pub const API_VERSION_ENV: &str = "OCTET_EXTENSION_API_VERSION";

pub(crate) type ToolFn = dyn Fn(Value, &Context) -> Result<ToolOutput, HandlerError> + Send + Sync;
pub(crate) type CommandFn =
    dyn Fn(Vec<String>, &Context) -> Result<CommandOutput, HandlerError> + Send + Sync;
pub(crate) type HookFn = dyn Fn(Value, &Context) -> Result<HookOutput, HandlerError> + Send + Sync;
pub(crate) type ContextFn = dyn Fn(Option<String>, &Context) -> Result<Vec<ContextContribution>, HandlerError>
    + Send
    + Sync;
pub(crate) type StatusFn =
    dyn Fn(Surface, &Context) -> Result<Option<StatusContribution>, HandlerError> + Send + Sync;
pub(crate) type RenderFn =
    dyn Fn(RenderRequest, &Context) -> Result<RenderOutput, HandlerError> + Send + Sync;
pub(crate) type MenuFn = dyn Fn(&Context) -> Result<Menu, HandlerError> + Send + Sync;
pub(crate) type LifecycleFn = dyn Fn(LifecycleNotice, &Context) + Send + Sync;

pub(crate) type ShortcutFn = dyn Fn(&Context) + Send + Sync;
pub(crate) type MessageUpdateFn = dyn Fn(super::request::MessageUpdate, &Context) + Send + Sync;
/// The cleanup of one retired native resource: true when it was cleaned up.
pub(crate) type DisposeFn =
    dyn Fn(&crate::validate::resource::ResourceRef, &Context) -> bool + Send + Sync;
/// The handler of terminal notices (section 2.24).
pub(crate) type TerminalFn = dyn Fn(super::request::TerminalNotice, &Context) + Send + Sync;
/// The handler of `ui/autocomplete/complete`.
pub(crate) type AutocompleteFn = dyn Fn(
        crate::services::autocomplete::CompletionQuery,
        &Context,
    ) -> Result<super::output::Completions, HandlerError>
    + Send
    + Sync;

/// A registered chain: its revision and handler.
#[derive(Clone)]
pub(crate) struct AutocompleteEntry {
    pub(crate) revision: u64,
    pub(crate) handler: Arc<AutocompleteFn>,
}

/// A shortcut to register inside `initialize`, with the handler its trigger runs.
pub(crate) struct ShortcutEntry {
    pub id: String,
    pub key: String,
    pub description: String,
    pub handler: Arc<ShortcutFn>,
}

/// A tool definition (section 1.1 tools; section 4 ToolDefinition).
///
/// Fields that the selected API version does not have are left out of `initialize`:
/// `output_schema` on API 0.1, and the prompt metadata unless API 0.4 negotiated
/// `tool_prompt_metadata_v1`.
#[derive(Clone, Debug, PartialEq)]
pub struct Tool {
    /// The tool's name, unique within the extension.
    pub name: String,
    /// A non-empty description for the model.
    pub description: String,
    /// The JSON Schema object of its arguments.
    pub parameters: Value,
    /// The bounded JSON Schema of `structured_content` (API 0.2+).
    pub output_schema: Option<Value>,
    /// A prompt snippet (API 0.4, `tool_prompt_metadata_v1`).
    pub prompt_snippet: Option<String>,
    /// Prompt guidelines (API 0.4, `tool_prompt_metadata_v1`).
    pub prompt_guidelines: Vec<String>,
    /// The composition declaration (API 0.4, `tool_composition_v1`, section 2.25):
    /// sent only when the host offered the feature.
    pub composition: Option<crate::negotiation::Composition>,
    /// The operation descriptor (API 0.4, section 2.26): sent only when the host offered
    /// the features it needs.
    pub operation: Option<super::operation::Operation>,
}

impl Tool {
    /// A tool with a name, description and parameter schema.
    pub fn new(name: impl Into<String>, description: impl Into<String>, parameters: Value) -> Tool {
        Tool {
            name: name.into(),
            description: description.into(),
            parameters,
            output_schema: None,
            prompt_snippet: None,
            prompt_guidelines: Vec::new(),
            composition: None,
            operation: None,
        }
    }

    /// Declares the tool's operation (API 0.4, section 2.26): the resources it takes
    /// and returns. The paths must reach [`resource_ref_schema`](super::resource_ref_schema)
    /// values through `properties` of `parameters` (inputs) and `output_schema`
    /// (outputs).
    pub fn operation(mut self, operation: super::operation::Operation) -> Tool {
        self.operation = Some(operation);
        self
    }

    /// Declares the tool a composing tool (API 0.4, section 2.25): its handler may run
    /// a bounded program over the host's other tools. `inline_budget` is 0 through
    /// 16,000 estimated tokens. The extension then asks for
    /// [`FEATURE_TOOL_COMPOSITION`](super::FEATURE_TOOL_COMPOSITION); a host that does
    /// not offer it gets the tool without the declaration.
    pub fn composition(
        mut self,
        mode: crate::negotiation::CompositionMode,
        inline_budget: u64,
    ) -> Tool {
        self.composition = Some(crate::negotiation::Composition {
            mode,
            inline_budget,
            constrained_sampling: None,
        });
        self
    }

    /// Declares the schema of `structured_content` (API 0.2+). With it, every result
    /// must carry structured content; without it, results must not.
    pub fn output_schema(mut self, schema: Value) -> Tool {
        self.output_schema = Some(schema);
        self
    }

    /// Sets the API 0.4 prompt snippet.
    pub fn prompt_snippet(mut self, snippet: impl Into<String>) -> Tool {
        self.prompt_snippet = Some(snippet.into());
        self
    }

    /// Sets the API 0.4 prompt guidelines.
    pub fn prompt_guidelines<I, S>(mut self, guidelines: I) -> Tool
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.prompt_guidelines = guidelines.into_iter().map(Into::into).collect();
        self
    }

    /// Whether the tool declares API 0.4 prompt metadata.
    pub fn has_prompt_metadata(&self) -> bool {
        self.prompt_snippet.is_some() || !self.prompt_guidelines.is_empty()
    }

    /// The definition as sent in the `initialize` answer.
    pub(crate) fn to_wire(
        &self,
        api_version: ApiVersion,
        prompt_metadata: bool,
        composition: bool,
        operations: (bool, bool),
    ) -> Value {
        let mut def = Map::new();
        def.insert("name".into(), Value::from(self.name.as_str()));
        def.insert("description".into(), Value::from(self.description.as_str()));
        def.insert("parameters".into(), self.parameters.clone());
        if api_version.has_v0_2_fields() {
            if let Some(schema) = &self.output_schema {
                def.insert("output_schema".into(), schema.clone());
            }
        }
        if let (true, Some(declared)) = (composition, &self.composition) {
            def.insert(
                "composition".into(),
                serde_json::to_value(declared).expect("a composition serializes"),
            );
        }
        // (operation_descriptors_v1, resource_refs_v1) negotiated.
        if let (true, Some(operation)) = (operations.0, &self.operation) {
            if operations.1 || !operation.is_resource_bearing() {
                def.insert("operation".into(), operation.to_wire());
            }
        }
        if prompt_metadata {
            if let Some(snippet) = &self.prompt_snippet {
                def.insert("prompt_snippet".into(), Value::from(snippet.as_str()));
            }
            if !self.prompt_guidelines.is_empty() {
                def.insert(
                    "prompt_guidelines".into(),
                    Value::from(self.prompt_guidelines.clone()),
                );
            }
        }
        Value::Object(def)
    }
}

/// A slash command definition (section 1.1 commands; section 4 CommandDefinition).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Command {
    /// The command's name, without the slash.
    pub name: String,
    /// A description.
    pub description: String,
    /// Usage text such as `/hello [name]`.
    pub usage: Option<String>,
}

impl Command {
    /// The definition as sent in the `initialize` answer.
    pub(crate) fn to_wire(&self) -> Value {
        let mut def = Map::new();
        def.insert("name".into(), Value::from(self.name.as_str()));
        def.insert("description".into(), Value::from(self.description.as_str()));
        if let Some(usage) = &self.usage {
            def.insert("usage".into(), Value::from(usage.as_str()));
        }
        Value::Object(def)
    }
}

/// A registered tool and its handler.
pub(crate) struct ToolEntry {
    pub(crate) tool: Tool,
    pub(crate) handler: Arc<ToolFn>,
}

/// A registered command and its handler.
pub(crate) struct CommandEntry {
    pub(crate) command: Command,
    pub(crate) handler: Arc<CommandFn>,
}

/// Lifecycle subscription: the methods (empty means all six) and the handler.
pub(crate) struct LifecycleEntry {
    pub(crate) events: Vec<String>,
    pub(crate) handler: Arc<LifecycleFn>,
}

/// An octet extension under construction, then running.
///
/// ```no_run
/// use octet_host::sdk::{Context, Extension, HandlerError, ToolOutput};
/// use serde_json::json;
///
/// #[derive(serde::Deserialize)]
/// struct HelloArgs {
///     name: String,
/// }
///
/// Extension::new()
///     .tool(
///         "hello_world",
///         "Greet someone",
///         json!({"type": "object", "properties": {"name": {"type": "string"}},
///                "required": ["name"]}),
///         |args: HelloArgs, _cx: &Context| Ok(ToolOutput::text(format!("Hello, {}!", args.name))),
///     )
///     .run()
///     .unwrap();
/// ```
///
/// Registering a name a second time replaces the earlier registration.
pub struct Extension {
    pub(crate) api_version: Option<ApiVersion>,
    pub(crate) tools: Vec<ToolEntry>,
    /// Handlers of tools added at run time (`tools/register`); not in `initialize`.
    pub(crate) dynamic_tools: Vec<ToolEntry>,
    pub(crate) commands: Vec<CommandEntry>,
    pub(crate) hooks: Vec<(String, Arc<HookFn>)>,
    pub(crate) context: Option<Arc<ContextFn>>,
    pub(crate) status: Option<Arc<StatusFn>>,
    pub(crate) renderers: Vec<(String, Arc<RenderFn>)>,
    pub(crate) menu: Option<Arc<MenuFn>>,
    pub(crate) lifecycle: Option<LifecycleEntry>,
    pub(crate) features: Vec<String>,
    pub(crate) max_concurrent_requests: u32,
    /// Runtime shortcuts registered inside `initialize` (section 2.20).
    pub(crate) shortcuts: Vec<ShortcutEntry>,
    /// The handler of `message/updated` batches (section 1.11).
    pub(crate) message_update: Option<Arc<MessageUpdateFn>>,
    /// The completion chain registered after `initialize` (section 2.24b).
    pub(crate) autocomplete: Option<AutocompleteEntry>,
    /// The handler of terminal notices (section 2.24).
    pub(crate) terminal: Option<Arc<TerminalFn>>,
    /// The cleanup of native resources the host retired (section 2.26).
    pub(crate) resource_dispose: Option<Arc<DisposeFn>>,
}

impl std::fmt::Debug for Extension {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Extension")
            .field("api_version", &self.api_version)
            .field("tools", &self.tools().map(|t| &t.name).collect::<Vec<_>>())
            .field(
                "dynamic_tools",
                &self.dynamic_tools().map(|t| &t.name).collect::<Vec<_>>(),
            )
            .field(
                "commands",
                &self.commands().map(|c| &c.name).collect::<Vec<_>>(),
            )
            .field("hooks", &self.hook_names().collect::<Vec<_>>())
            .field("renderers", &self.renderer_names().collect::<Vec<_>>())
            .field("context", &self.has_context())
            .field("status", &self.has_status())
            .field("menu", &self.has_menu())
            .field("lifecycle", &self.lifecycle.as_ref().map(|l| &l.events))
            .field("features", &self.features)
            .field("max_concurrent_requests", &self.max_concurrent_requests)
            .field(
                "shortcuts",
                &self.shortcuts.iter().map(|s| &s.id).collect::<Vec<_>>(),
            )
            .field("message_update", &self.message_update.is_some())
            .field(
                "autocomplete",
                &self.autocomplete.as_ref().map(|a| a.revision),
            )
            .finish()
    }
}

impl Default for Extension {
    fn default() -> Extension {
        Extension::new()
    }
}

impl Extension {
    /// An extension with nothing registered. Its API version comes from
    /// `OCTET_EXTENSION_API_VERSION` when it runs, unless [`Extension::api_version`]
    /// sets it; with neither, it adopts the version the host's `initialize` names.
    pub fn new() -> Extension {
        Extension {
            api_version: None,
            tools: Vec::new(),
            dynamic_tools: Vec::new(),
            commands: Vec::new(),
            hooks: Vec::new(),
            context: None,
            status: None,
            renderers: Vec::new(),
            menu: None,
            lifecycle: None,
            features: Vec::new(),
            max_concurrent_requests: DEFAULT_MAX_CONCURRENT_REQUESTS,
            shortcuts: Vec::new(),
            message_update: None,
            autocomplete: None,
            terminal: None,
            resource_dispose: None,
        }
    }

    /// Fixes the API version, overriding `OCTET_EXTENSION_API_VERSION`.
    pub fn api_version(mut self, version: ApiVersion) -> Extension {
        self.api_version = Some(version);
        self
    }

    /// Enables an optional protocol feature (API 0.2/0.4), such as
    /// [`FEATURE_REQUEST_PROGRESS`](super::FEATURE_REQUEST_PROGRESS). It is negotiated only when the host offers it.
    pub fn feature(mut self, name: impl Into<String>) -> Extension {
        let name = name.into();
        if !self.features.contains(&name) {
            self.features.push(name);
        }
        self
    }

    /// The most host requests handled at once on API 0.2/0.4 (at least 1; default
    /// [`DEFAULT_MAX_CONCURRENT_REQUESTS`]). The negotiated value is the smaller of
    /// this and the host's offer. API 0.1 requests are always handled one at a time.
    pub fn max_concurrent_requests(mut self, limit: u32) -> Extension {
        self.max_concurrent_requests = limit.max(1);
        self
    }

    /// Registers a model-callable tool whose arguments deserialize into `A`; arguments
    /// that do not are answered with -32602.
    pub fn tool<A, F>(
        self,
        name: impl Into<String>,
        description: impl Into<String>,
        parameters: Value,
        handler: F,
    ) -> Extension
    where
        A: DeserializeOwned,
        F: Fn(A, &Context) -> Result<ToolOutput, HandlerError> + Send + Sync + 'static,
    {
        self.tool_def(Tool::new(name, description, parameters), handler)
    }

    /// Registers a tool from a full [`Tool`] definition (output schema, prompt metadata).
    pub fn tool_def<A, F>(mut self, tool: Tool, handler: F) -> Extension
    where
        A: DeserializeOwned,
        F: Fn(A, &Context) -> Result<ToolOutput, HandlerError> + Send + Sync + 'static,
    {
        let entry = tool_entry(tool, handler);
        self.tools.retain(|t| t.tool.name != entry.tool.name);
        self.tools.push(entry);
        self
    }

    /// Registers the handler of a tool this extension adds at run time with
    /// `tools/register` (section 2.11, feature `dynamic_tools`). The tool is dispatched
    /// like a declared one but is not part of the `initialize` catalog: the host only
    /// calls it once a handler sent its definition ([`Extension::dynamic_tools`] lists
    /// them). A declared tool of the same name takes precedence.
    pub fn dynamic_tool<A, F>(mut self, tool: Tool, handler: F) -> Extension
    where
        A: DeserializeOwned,
        F: Fn(A, &Context) -> Result<ToolOutput, HandlerError> + Send + Sync + 'static,
    {
        let entry = tool_entry(tool, handler);
        self.dynamic_tools
            .retain(|t| t.tool.name != entry.tool.name);
        self.dynamic_tools.push(entry);
        self
    }

    /// Registers a slash command; its handler receives the literal arguments.
    pub fn command<F>(
        mut self,
        name: impl Into<String>,
        description: impl Into<String>,
        usage: Option<&str>,
        handler: F,
    ) -> Extension
    where
        F: Fn(Vec<String>, &Context) -> Result<CommandOutput, HandlerError> + Send + Sync + 'static,
    {
        let command = Command {
            name: name.into(),
            description: description.into(),
            usage: usage.map(str::to_owned),
        };
        self.commands.retain(|c| c.command.name != command.name);
        self.commands.push(CommandEntry {
            command,
            handler: Arc::new(handler),
        });
        self
    }

    /// Registers a lifecycle hook such as `before_prompt` (section 1.4); its payload
    /// deserializes into `P` (use `serde_json::Value` to take it as it is).
    pub fn hook<P, F>(mut self, name: impl Into<String>, handler: F) -> Extension
    where
        P: DeserializeOwned,
        F: Fn(P, &Context) -> Result<HookOutput, HandlerError> + Send + Sync + 'static,
    {
        let name = name.into();
        let hook_name = name.clone();
        let handler: Arc<HookFn> = Arc::new(move |payload: Value, cx: &Context| {
            let payload = serde_json::from_value::<P>(payload).map_err(|e| {
                HandlerError::invalid_params(format!("invalid payload for hook `{hook_name}`: {e}"))
            })?;
            handler(payload, cx)
        });
        self.hooks.retain(|(n, _)| *n != name);
        self.hooks.push((name, handler));
        self
    }

    /// Answers `context/collect` (section 1.5); the handler receives the prompt.
    pub fn context<F>(mut self, handler: F) -> Extension
    where
        F: Fn(Option<String>, &Context) -> Result<Vec<ContextContribution>, HandlerError>
            + Send
            + Sync
            + 'static,
    {
        self.context = Some(Arc::new(handler));
        self
    }

    /// Answers `status/collect` (section 1.6); `None` contributes nothing.
    pub fn status<F>(mut self, handler: F) -> Extension
    where
        F: Fn(Surface, &Context) -> Result<Option<StatusContribution>, HandlerError>
            + Send
            + Sync
            + 'static,
    {
        self.status = Some(Arc::new(handler));
        self
    }

    /// Answers `tool/render` for calls of `tool` (section 1.7).
    pub fn renderer<F>(mut self, tool: impl Into<String>, handler: F) -> Extension
    where
        F: Fn(RenderRequest, &Context) -> Result<RenderOutput, HandlerError>
            + Send
            + Sync
            + 'static,
    {
        let tool = tool.into();
        self.renderers.retain(|(n, _)| *n != tool);
        self.renderers.push((tool, Arc::new(handler)));
        self
    }

    /// Answers `menu/collect` (section 1.6b, API 0.2+; the manifest needs `menu = true`
    /// and a command). On API 0.1 the method does not exist and is answered -32601.
    pub fn menu<F>(mut self, handler: F) -> Extension
    where
        F: Fn(&Context) -> Result<Menu, HandlerError> + Send + Sync + 'static,
    {
        self.menu = Some(Arc::new(handler));
        self
    }

    /// Subscribes to lifecycle notifications (section 1.10, API 0.2/0.4) and enables
    /// the `lifecycle_events` feature. `events` lists methods from
    /// [`super::LIFECYCLE_EVENTS`]; empty means all six. Handlers run one at a time,
    /// in arrival order, on a thread of their own; their context has no request.
    pub fn lifecycle<F>(mut self, events: &[&str], handler: F) -> Extension
    where
        F: Fn(LifecycleNotice, &Context) + Send + Sync + 'static,
    {
        self.lifecycle = Some(LifecycleEntry {
            events: events.iter().map(|e| (*e).to_owned()).collect(),
            handler: Arc::new(handler),
        });
        self
    }

    /// The registered tool definitions, in registration order.
    pub fn tools(&self) -> impl Iterator<Item = &Tool> {
        self.tools.iter().map(|t| &t.tool)
    }

    /// The definitions of the tools added at run time, in registration order.
    pub fn dynamic_tools(&self) -> impl Iterator<Item = &Tool> {
        self.dynamic_tools.iter().map(|t| &t.tool)
    }

    /// The registered command definitions, in registration order.
    pub fn commands(&self) -> impl Iterator<Item = &Command> {
        self.commands.iter().map(|c| &c.command)
    }

    /// The registered hook names.
    pub fn hook_names(&self) -> impl Iterator<Item = &str> {
        self.hooks.iter().map(|(n, _)| n.as_str())
    }

    /// The tools this extension renders.
    pub fn renderer_names(&self) -> impl Iterator<Item = &str> {
        self.renderers.iter().map(|(n, _)| n.as_str())
    }

    /// Whether `context/collect` is answered (manifest `context = true`).
    pub fn has_context(&self) -> bool {
        self.context.is_some()
    }

    /// Whether `status/collect` is answered.
    pub fn has_status(&self) -> bool {
        self.status.is_some()
    }

    /// Whether `menu/collect` is answered (manifest `menu = true`, API 0.2+).
    pub fn has_menu(&self) -> bool {
        self.menu.is_some()
    }

    pub(crate) fn find_tool(&self, name: &str) -> Option<&ToolEntry> {
        self.tools
            .iter()
            .chain(&self.dynamic_tools)
            .find(|t| t.tool.name == name)
    }

    pub(crate) fn find_command(&self, name: &str) -> Option<&CommandEntry> {
        self.commands.iter().find(|c| c.command.name == name)
    }

    pub(crate) fn find_hook(&self, name: &str) -> Option<&Arc<HookFn>> {
        self.hooks.iter().find(|(n, _)| n == name).map(|(_, h)| h)
    }

    pub(crate) fn find_renderer(&self, name: &str) -> Option<&Arc<RenderFn>> {
        self.renderers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, h)| h)
    }
}

/// A tool entry whose handler deserializes its arguments into `A` first; arguments
/// that do not deserialize are answered with -32602.
fn tool_entry<A, F>(tool: Tool, handler: F) -> ToolEntry
where
    A: DeserializeOwned,
    F: Fn(A, &Context) -> Result<ToolOutput, HandlerError> + Send + Sync + 'static,
{
    let name = tool.name.clone();
    let handler: Arc<ToolFn> = Arc::new(move |args: Value, cx: &Context| {
        let args = serde_json::from_value::<A>(args).map_err(|e| {
            HandlerError::invalid_params(format!("invalid arguments for tool `{name}`: {e}"))
        })?;
        handler(args, cx)
    });
    ToolEntry { tool, handler }
}
