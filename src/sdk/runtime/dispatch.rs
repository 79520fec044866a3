//! Host-to-extension methods (sections 1.2 to 1.7): which ones this extension answers,
//! and running the matching handler on a worker.

use std::panic::{self, AssertUnwindSafe};

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::manifest::ApiVersion;
use crate::sdk::context::Context;
use crate::sdk::error::HandlerError;
use crate::sdk::extension::Extension;
use crate::sdk::output::{to_value, Surface};
use crate::sdk::request::RenderRequest;

/// A host request method served by a handler.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Method {
    /// `tool/call` (section 1.2).
    ToolCall,
    /// `command/execute` (section 1.3).
    CommandExecute,
    /// `hook/run` (section 1.4).
    HookRun,
    /// `context/collect` (section 1.5).
    ContextCollect,
    /// `status/collect` (section 1.6).
    StatusCollect,
    /// `menu/collect` (section 1.6b, API 0.2+).
    MenuCollect,
    /// `tool/render` (section 1.7).
    ToolRender,
    /// `ui/autocomplete/complete` (section 2.24b).
    AutocompleteComplete,
    /// `resource/dispose` (section 2.26, API 0.4).
    ResourceDispose,
}

impl Method {
    /// The method named `name` if `ext` answers it on `api_version`; `None` means
    /// -32601.
    pub(crate) fn resolve(name: &str, api_version: ApiVersion, ext: &Extension) -> Option<Method> {
        let method = match name {
            "tool/call" => Method::ToolCall,
            "command/execute" => Method::CommandExecute,
            "hook/run" => Method::HookRun,
            "context/collect" if ext.context.is_some() => Method::ContextCollect,
            "status/collect" if ext.status.is_some() => Method::StatusCollect,
            "menu/collect" if ext.menu.is_some() && api_version.has_v0_2_fields() => {
                Method::MenuCollect
            }
            "tool/render" if !ext.renderers.is_empty() => Method::ToolRender,
            "ui/autocomplete/complete" if ext.autocomplete.is_some() => {
                Method::AutocompleteComplete
            }
            "resource/dispose" if api_version == ApiVersion::V0_4 => Method::ResourceDispose,
            _ => return None,
        };
        Some(method)
    }
}

/// Runs the handler for `method`; a panicking handler becomes -32603.
pub(crate) fn execute(
    ext: &Extension,
    method: Method,
    params: Map<String, Value>,
    cx: &Context,
) -> Result<Value, HandlerError> {
    match panic::catch_unwind(AssertUnwindSafe(|| run(ext, method, params, cx))) {
        Ok(outcome) => outcome,
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a non-string payload".to_owned());
            Err(HandlerError::internal(format!(
                "the handler panicked: {what}"
            )))
        }
    }
}

fn run(
    ext: &Extension,
    method: Method,
    mut params: Map<String, Value>,
    cx: &Context,
) -> Result<Value, HandlerError> {
    match method {
        Method::ToolCall => {
            let name: String = required(&mut params, "name")?;
            let arguments = params
                .remove("arguments")
                .unwrap_or_else(|| Value::Object(Map::new()));
            let revision: Option<u64> = optional(&mut params, "catalog_revision")?;
            if let Some(catalog) = cx.catalog() {
                // Dispatch against the epoch the model saw (section 1.2).
                catalog
                    .check(revision, &name)
                    .map_err(HandlerError::invalid_params)?;
            }
            let tool = ext
                .find_tool(&name)
                .ok_or_else(|| HandlerError::invalid_params(format!("unknown tool `{name}`")))?;
            let output = (tool.handler)(arguments, cx)?;
            Ok(output.to_wire(cx.api_version()))
        }
        Method::CommandExecute => {
            let name: String = required(&mut params, "name")?;
            let arguments: Vec<String> = optional(&mut params, "arguments")?.unwrap_or_default();
            let command = ext
                .find_command(&name)
                .ok_or_else(|| HandlerError::invalid_params(format!("unknown command `{name}`")))?;
            Ok(to_value(&(command.handler)(arguments, cx)?))
        }
        Method::HookRun => {
            let name: String = required(&mut params, "hook")?;
            // An awaited session-operation hook's private grant (section 1.4b).
            if let Some(Value::Object(leaf)) = params.remove("session_leaf") {
                cx.open_private_lane(&leaf);
            }
            let payload = params
                .remove("payload")
                .unwrap_or_else(|| Value::Object(Map::new()));
            let hook = ext
                .find_hook(&name)
                .ok_or_else(|| HandlerError::invalid_params(format!("unknown hook `{name}`")))?;
            Ok(to_value(&hook(payload, cx)?))
        }
        Method::ContextCollect => {
            let prompt: Option<String> = optional(&mut params, "prompt")?;
            let handler = ext.context.as_ref().expect("resolved only with a handler");
            Ok(to_value(&handler(prompt, cx)?))
        }
        Method::StatusCollect => {
            let surface: Surface = required(&mut params, "surface")?;
            let handler = ext.status.as_ref().expect("resolved only with a handler");
            Ok(to_value(&handler(surface, cx)?))
        }
        Method::MenuCollect => {
            let handler = ext.menu.as_ref().expect("resolved only with a handler");
            Ok(to_value(&handler(cx)?))
        }
        Method::AutocompleteComplete => crate::sdk::autocomplete::complete(ext, params, cx),
        Method::ResourceDispose => Ok(crate::sdk::resources::dispose(ext, &params, cx)),
        Method::ToolRender => {
            let request: RenderRequest =
                serde_json::from_value(Value::Object(params)).map_err(|e| {
                    HandlerError::invalid_params(format!("invalid tool/render params: {e}"))
                })?;
            let renderer = ext.find_renderer(&request.name).ok_or_else(|| {
                HandlerError::invalid_params(format!("no renderer for tool `{}`", request.name))
            })?;
            Ok(to_value(&renderer(request, cx)?))
        }
    }
}

fn optional<T: DeserializeOwned>(
    params: &mut Map<String, Value>,
    key: &str,
) -> Result<Option<T>, HandlerError> {
    match params.remove(key) {
        None | Some(Value::Null) => Ok(None),
        Some(value) => serde_json::from_value(value)
            .map(Some)
            .map_err(|e| HandlerError::invalid_params(format!("invalid `{key}`: {e}"))),
    }
}

fn required<T: DeserializeOwned>(
    params: &mut Map<String, Value>,
    key: &str,
) -> Result<T, HandlerError> {
    optional(params, key)?.ok_or_else(|| HandlerError::invalid_params(format!("missing `{key}`")))
}
