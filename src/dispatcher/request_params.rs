//! A host request's params as they go into its frame: the generation's execution
//! contexts, built once (sections 1.2-1.7), and the members of each request, borrowed
//! rather than copied into a `Value`.

use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::command::HostRequest;
use super::connection::{Connection, EncodedContext};
use crate::negotiation::Feature;

/// The two `context` objects of a generation's requests, built once (sections
/// 1.2–1.7): with the `resource_owner` triple (API 0.2 and later, for model-tool,
/// command, hook, context and menu requests) and without it (API 0.1, and the
/// process-scoped status and renderer contexts).
pub(super) fn execution_contexts(
    shared: &super::Shared,
    c: &Connection,
) -> (EncodedContext, EncodedContext) {
    let mut context = Map::new();
    context.insert(
        "workspace".into(),
        Value::from(shared.workspace.to_string_lossy().as_ref()),
    );
    context.insert("execution_scope".into(), Value::Null);
    context.insert("host".into(), shared.host_value.clone());
    let process = Value::Object(context.clone());
    if c.api.has_v0_2_fields() {
        context.insert("resource_owner".into(), c.owner.to_value());
    }
    (
        EncodedContext::new(Value::Object(context)),
        EncodedContext::new(process),
    )
}

/// A request's params, borrowed from the request and from the generation's pre-built
/// execution context: serialized straight into the frame, without copying either into
/// a `Value` first. Members are in sorted order, as a `Value` object would write them.
#[derive(Serialize)]
#[serde(untagged)]
pub(super) enum RequestParams<'a> {
    ToolCall {
        arguments: &'a Value,
        #[serde(skip_serializing_if = "Option::is_none")]
        catalog_revision: Option<u64>,
        context: &'a RawValue,
        name: &'a str,
    },
    CommandExecute {
        arguments: &'a [String],
        context: &'a RawValue,
        name: &'a str,
    },
    HookRun {
        context: &'a RawValue,
        hook: &'a str,
        payload: &'a Value,
        #[serde(skip_serializing_if = "Option::is_none")]
        session_leaf: Option<&'a Value>,
    },
    ContextCollect {
        context: &'a RawValue,
        prompt: Option<&'a str>,
    },
    StatusCollect {
        context: &'a RawValue,
        surface: &'static str,
    },
    MenuCollect {
        context: &'a RawValue,
    },
    ToolRender {
        arguments: &'a Value,
        context: &'a RawValue,
        is_error: bool,
        name: &'a str,
        output: &'a str,
    },
    AutocompleteComplete {
        cursor: usize,
        revision: u64,
        text: &'a str,
    },
    MigrationImport {
        config_paths: &'a [String],
        source_root: &'a str,
    },
    MigrationDetect {
        source_root: &'a str,
    },
    ProviderStream {
        #[serde(skip_serializing_if = "Option::is_none")]
        authorization_lease: Option<&'a str>,
        model_id: &'a str,
        provider_id: &'a str,
        request: &'a Value,
        stream_id: &'a str,
    },
}

/// Builds a request's params around the generation's pre-built execution `context`;
/// `leaf` is the `session_leaf` grant of an awaited session-operation hook.
pub(super) fn request_params<'a>(
    c: &'a Connection,
    request: &'a HostRequest,
    leaf: Option<&'a Value>,
) -> RequestParams<'a> {
    let context = if request.has_resource_owner() {
        &c.owned_context.json
    } else {
        &c.process_context.json
    };
    match request {
        HostRequest::ToolCall { name, arguments } => {
            let dynamic = c
                .negotiated
                .as_ref()
                .is_some_and(|n| n.features.contains(Feature::DynamicTools));
            RequestParams::ToolCall {
                arguments,
                catalog_revision: dynamic.then_some(c.catalog_revision),
                context,
                name,
            }
        }
        HostRequest::CommandExecute { name, arguments } => RequestParams::CommandExecute {
            arguments,
            context,
            name,
        },
        HostRequest::HookRun { hook, payload, .. } => RequestParams::HookRun {
            context,
            hook,
            payload,
            session_leaf: leaf,
        },
        HostRequest::ContextCollect { prompt } => RequestParams::ContextCollect {
            context,
            prompt: prompt.as_deref(),
        },
        HostRequest::StatusCollect { surface } => RequestParams::StatusCollect {
            context,
            surface: surface.as_str(),
        },
        HostRequest::MenuCollect => RequestParams::MenuCollect { context },
        HostRequest::ToolRender {
            name,
            arguments,
            output,
            is_error,
        } => RequestParams::ToolRender {
            arguments,
            context,
            is_error: *is_error,
            name,
            output,
        },
        HostRequest::AutocompleteComplete {
            text,
            cursor,
            revision,
        } => RequestParams::AutocompleteComplete {
            cursor: *cursor,
            revision: *revision,
            text,
        },
        HostRequest::MigrationDetect { source_root } => {
            RequestParams::MigrationDetect { source_root }
        }
        HostRequest::MigrationImport {
            source_root,
            config_paths,
        } => RequestParams::MigrationImport {
            config_paths,
            source_root,
        },
        HostRequest::ProviderStream {
            stream_id,
            provider_id,
            model_id,
            request,
            authorization_lease,
        } => RequestParams::ProviderStream {
            authorization_lease: authorization_lease.as_deref(),
            model_id,
            provider_id,
            request,
            stream_id,
        },
    }
}
