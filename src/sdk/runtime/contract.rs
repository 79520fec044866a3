//! The extension's answer to an API 0.3 `initialize`: the contract selection
//! (SUPPLEMENT "API 0.3 (canonical wire)").
//!
//! The answer is `{"api_version":"0.3","contract":{"capabilities","encoding","limits",
//! "methods","schema"},"tools":[...]}`, with no `commands` member. The SDK selects:
//! - every required capability and method (it refuses the offer with -32011
//!   `capability_mismatch` when one is required that it does not implement);
//! - the optional capability `request_progress` and method `$/progress` when the
//!   extension enabled [`FEATURE_REQUEST_PROGRESS`];
//! - the optional host-to-extension methods the extension has handlers for
//!   (`command/execute`, `context/collect`, `menu/collect`, `status/collect`,
//!   `tool/render`), when an older host offers them; never `hook/run`, which on 0.3
//!   carries only `lifecycle_events`' session hooks;
//! - every offered extension-to-host method the SDK can send (`notification`,
//!   `confirmation/request`, `input/request`, `status/contribution`,
//!   `context/contribution`), since handlers decide at run time whether to use them;
//! - the offered limits, with `max_frame_bytes` capped at the SDK's bound and
//!   `max_concurrent_requests` at the extension's own limit.
//!
//! A schema or encoding other than the SDK's is -32010 `version_mismatch`; more tools
//! than the offered `max_tools` is -32012 `resource_exhausted`; a malformed offer is
//! -32602.

use std::collections::BTreeSet;

use serde_json::{json, Map, Value};

use super::state::Session;
use crate::limits::{CANONICAL_MAX_FRAME_BYTES, MAX_TOOLS};
use crate::manifest::ApiVersion;
use crate::negotiation::{CONTRACT_ENCODING, CONTRACT_SCHEMA};
use crate::sdk::error::HandlerError;
use crate::sdk::extension::Extension;
use crate::sdk::features::FEATURE_REQUEST_PROGRESS;
use crate::wire::codes;

/// Capabilities this SDK implements.
const SUPPORTED_CAPABILITIES: [&str; 5] = [
    "content_parts",
    "core",
    "request_cancellation",
    "request_progress",
    "tool_call",
];

/// Methods this SDK implements, in either direction.
const SUPPORTED_METHODS: [&str; 16] = [
    "$/cancelRequest",
    "$/progress",
    "command/execute",
    "confirmation/request",
    "context/collect",
    "context/contribution",
    "hook/run",
    "initialize",
    "input/request",
    "menu/collect",
    "notification",
    "shutdown",
    "status/collect",
    "status/contribution",
    "tool/call",
    "tool/render",
];

/// Builds the API 0.3 `initialize` result and the session it establishes.
pub(crate) fn negotiate(ext: &Extension, params: &Value) -> Result<(Value, Session), HandlerError> {
    let offer = params
        .get("contract")
        .and_then(Value::as_object)
        .ok_or_else(|| HandlerError::invalid_params("initialize lacks the `contract` offer"))?;
    for (member, expected) in [("schema", CONTRACT_SCHEMA), ("encoding", CONTRACT_ENCODING)] {
        let got = offer.get(member).and_then(Value::as_str);
        if got != Some(expected) {
            return Err(HandlerError::new(
                codes::VERSION_MISMATCH,
                format!("contract.{member} is {got:?}; this extension speaks {expected:?}"),
            ));
        }
    }

    let progress = ext.features.iter().any(|f| f == FEATURE_REQUEST_PROGRESS);
    let capabilities = select(offer, "capabilities", &SUPPORTED_CAPABILITIES, |name| {
        name == FEATURE_REQUEST_PROGRESS && progress
    })?;
    let methods = select(offer, "methods", &SUPPORTED_METHODS, |name| match name {
        "$/progress" => progress,
        "command/execute" => !ext.commands.is_empty(),
        "context/collect" => ext.context.is_some(),
        // On API 0.3 `hook/run` carries only `lifecycle_events`' session hooks, which
        // this SDK does not implement: its hooks are the 0.2 ones.
        "hook/run" => false,
        "menu/collect" => ext.menu.is_some(),
        "status/collect" => ext.status.is_some(),
        "tool/render" => !ext.renderers.is_empty(),
        "notification"
        | "confirmation/request"
        | "input/request"
        | "status/contribution"
        | "context/contribution" => true,
        _ => false,
    })?;

    let limits = offer
        .get("limits")
        .and_then(Value::as_object)
        .ok_or_else(|| HandlerError::invalid_params("the contract offer lacks `limits`"))?;
    let max_frame_bytes =
        offered_limit(limits, "max_frame_bytes", 1)?.min(CANONICAL_MAX_FRAME_BYTES as u64) as usize;
    let max_concurrent_requests = offered_limit(limits, "max_concurrent_requests", 1)?
        .min(u64::from(ext.max_concurrent_requests)) as u32;
    let max_tools = offered_limit(limits, "max_tools", 0)?.min(MAX_TOOLS as u64) as usize;
    if ext.tools.len() > max_tools {
        return Err(HandlerError::new(
            codes::RESOURCE_EXHAUSTED,
            format!(
                "this extension defines {} tools; the host allows {max_tools}",
                ext.tools.len()
            ),
        ));
    }

    let tools: Vec<Value> = ext
        .tools
        .iter()
        .map(|t| {
            t.tool
                .to_wire(ApiVersion::V0_3, false, false, (false, false))
        })
        .collect();
    let result = json!({
        "api_version": ApiVersion::V0_3.as_str(),
        "contract": {
            "schema": CONTRACT_SCHEMA,
            "encoding": CONTRACT_ENCODING,
            "capabilities": capabilities,
            "methods": methods,
            "limits": {
                "max_frame_bytes": max_frame_bytes,
                "max_concurrent_requests": max_concurrent_requests,
                "max_tools": max_tools,
            },
        },
        "tools": tools,
    });
    let session = Session {
        api_version: ApiVersion::V0_3,
        features: capabilities,
        contract_methods: Some(methods),
        max_frame_bytes: Some(max_frame_bytes),
        max_concurrent_requests,
        workspace: params
            .get("workspace")
            .and_then(Value::as_str)
            .map(str::to_owned),
        lifecycle_events: Vec::new(),
        // API 0.3 has no dynamic tools.
        catalog: None,
        transfer_directory: None,
    };
    Ok((result, session))
}

/// The selection for `required_<kind>` and `optional_<kind>`: every required name
/// (each must be `supported`, else -32011) and the optional names `wanted` accepts
/// (and the SDK supports), in byte order.
fn select(
    offer: &Map<String, Value>,
    kind: &str,
    supported: &[&str],
    wanted: impl Fn(&str) -> bool,
) -> Result<BTreeSet<String>, HandlerError> {
    let list = |member: String| -> Result<Vec<String>, HandlerError> {
        let items = offer
            .get(&member)
            .and_then(Value::as_array)
            .ok_or_else(|| {
                HandlerError::invalid_params(format!(
                    "contract.{member} is not an array of strings"
                ))
            })?;
        items
            .iter()
            .map(|item| {
                item.as_str().map(str::to_owned).ok_or_else(|| {
                    HandlerError::invalid_params(format!(
                        "contract.{member} is not an array of strings"
                    ))
                })
            })
            .collect()
    };
    let required = list(format!("required_{kind}"))?;
    let optional = list(format!("optional_{kind}"))?;
    let unsupported: Vec<&str> = required
        .iter()
        .map(String::as_str)
        .filter(|name| !supported.contains(name))
        .collect();
    if !unsupported.is_empty() {
        return Err(HandlerError::new(
            codes::CAPABILITY_MISMATCH,
            format!(
                "the host requires {kind} this extension does not implement: {}",
                unsupported.join(", ")
            ),
        ));
    }
    let chosen = optional
        .into_iter()
        .filter(|name| supported.contains(&name.as_str()) && wanted(name));
    Ok(required.into_iter().chain(chosen).collect())
}

/// `contract.limits.<name>`: an integer of at least `minimum`.
fn offered_limit(
    limits: &Map<String, Value>,
    name: &str,
    minimum: u64,
) -> Result<u64, HandlerError> {
    limits
        .get(name)
        .and_then(Value::as_u64)
        .filter(|n| *n >= minimum)
        .ok_or_else(|| {
            HandlerError::invalid_params(format!(
                "contract.limits.{name} is not an integer of at least {minimum}"
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sdk::{Context, HookOutput, ToolOutput};

    fn offer() -> Value {
        super::super::tests::contract_offer(&[
            "$/progress",
            "hook/run",
            "input/request",
            "notification",
            "status/collect",
            "tool/render",
        ])
    }

    fn ext() -> Extension {
        Extension::new()
            .tool_def(
                crate::sdk::Tool::new("t", "d", json!({"type": "object"}))
                    .output_schema(json!({"type": "object"}))
                    .prompt_snippet("never sent on 0.3"),
                |_: Value, _: &Context| Ok(ToolOutput::text("x")),
            )
            .command("c", "cd", None, |_, _| {
                Ok(crate::sdk::CommandOutput::text(""))
            })
            .hook("before_prompt", |_: Value, _| Ok(HookOutput::continue_()))
    }

    #[test]
    fn selects_required_entries_handlers_and_sendable_methods() {
        let (result, session) = negotiate(&ext(), &offer()).unwrap();
        assert_eq!(
            result,
            json!({
                "api_version": "0.3",
                "contract": {
                    "schema": "octet.extension.api/0.3",
                    "encoding": "octet-canonical-json-v1",
                    "capabilities": ["content_parts", "core", "request_cancellation", "tool_call"],
                    "methods": ["$/cancelRequest", "initialize", "input/request",
                        "notification", "shutdown", "tool/call"],
                    "limits": {"max_frame_bytes": 1048576, "max_concurrent_requests": 64,
                        "max_tools": 256}
                },
                "tools": [{"name": "t", "description": "d", "parameters": {"type": "object"},
                    "output_schema": {"type": "object"}}]
            })
        );
        assert_eq!(session.max_concurrent_requests, 64);
        assert_eq!(session.max_frame_bytes, Some(1_048_576));
        assert!(session.allows("notification"));
        assert!(!session.allows("status/contribution"));
        assert!(!session.allows("$/progress"));
        assert_eq!(session.workspace.as_deref(), Some("/w"));
    }

    #[test]
    fn progress_is_selected_when_enabled_and_offered() {
        let ext = ext().feature(FEATURE_REQUEST_PROGRESS);
        let (result, session) = negotiate(&ext, &offer()).unwrap();
        assert_eq!(
            result["contract"]["capabilities"],
            json!([
                "content_parts",
                "core",
                "request_cancellation",
                "request_progress",
                "tool_call"
            ])
        );
        assert!(session.has_feature(FEATURE_REQUEST_PROGRESS));
        assert!(session.allows("$/progress"));
    }

    #[test]
    fn refusals_use_the_fixed_error_table() {
        let mut params = offer();
        params["contract"]["schema"] = json!("octet.extension.api/0.4");
        assert_eq!(
            negotiate(&ext(), &params).unwrap_err().code(),
            codes::VERSION_MISMATCH
        );
        let mut params = offer();
        params["contract"]["required_capabilities"] = json!(["core", "teleport"]);
        let error = negotiate(&ext(), &params).unwrap_err();
        assert_eq!(error.code(), codes::CAPABILITY_MISMATCH);
        assert!(error.message().contains("teleport"));
        let mut params = offer();
        params["contract"]["required_methods"] = json!(["tool/call", "session/start"]);
        assert_eq!(
            negotiate(&ext(), &params).unwrap_err().code(),
            codes::CAPABILITY_MISMATCH
        );
        let mut params = offer();
        params["contract"]["limits"]["max_tools"] = json!(0);
        assert_eq!(
            negotiate(&ext(), &params).unwrap_err().code(),
            codes::RESOURCE_EXHAUSTED
        );
        let mut params = offer();
        params["contract"]["limits"]["max_frame_bytes"] = json!(0);
        assert_eq!(
            negotiate(&ext(), &params).unwrap_err().code(),
            codes::INVALID_PARAMS
        );
        assert_eq!(
            negotiate(&ext(), &json!({"api_version": "0.3"}))
                .unwrap_err()
                .code(),
            codes::INVALID_PARAMS
        );
    }
}
