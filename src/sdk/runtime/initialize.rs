//! The extension's answer to `initialize` (section 1.1): the catalog, and on API
//! 0.2/0.4 the `protocol` selection from the host's offer (API 0.3 answers with a
//! contract selection instead, see [`super::contract`]).

use std::collections::BTreeSet;

use serde_json::{json, Map, Value};

use super::state::Session;
use crate::limits::MAX_CONCURRENT_REQUESTS;
use crate::manifest::ApiVersion;
use crate::sdk::error::HandlerError;
use crate::sdk::extension::Extension;
use crate::sdk::features::{
    FEATURE_LIFECYCLE_EVENTS, FEATURE_TOOL_COMPOSITION, FEATURE_TOOL_PROMPT_METADATA,
};
use crate::sdk::request::LIFECYCLE_EVENTS;

/// Required features this SDK implements (section 1.1: both are always required).
const SUPPORTED_REQUIRED_FEATURES: [&str; 2] = ["request_cancellation", "content_parts"];

/// Builds the `initialize` result and the session it establishes.
///
/// `params` are the request's params; the caller has already checked the version.
pub(crate) fn negotiate(
    ext: &Extension,
    api_version: ApiVersion,
    params: &Value,
) -> Result<(Value, Session), HandlerError> {
    if api_version == ApiVersion::V0_3 {
        return super::contract::negotiate(ext, params);
    }
    let workspace = params
        .get("workspace")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let mut result = Map::new();
    result.insert("api_version".into(), json!(api_version.as_str()));
    let mut session = Session {
        api_version,
        features: BTreeSet::new(),
        contract_methods: None,
        max_frame_bytes: None,
        max_concurrent_requests: 1,
        workspace,
        lifecycle_events: Vec::new(),
        catalog: None,
        transfer_directory: params
            .pointer("/protocol/bulk_objects_v1/transfer_directory")
            .and_then(Value::as_str)
            .map(std::path::PathBuf::from),
    };
    if api_version.is_feature_negotiated() {
        let protocol = params.get("protocol").ok_or_else(|| {
            HandlerError::invalid_params(format!(
                "initialize for API {api_version} lacks the `protocol` offer"
            ))
        })?;
        result.insert(
            "protocol".into(),
            select_protocol(ext, api_version, protocol, &mut session)?,
        );
    }
    if session.has_feature("dynamic_tools") {
        // Epoch 0 is exactly the catalog this answer carries (section 2.12).
        let names = ext.tools.iter().map(|t| t.tool.name.clone());
        session.catalog = Some(super::catalog::CatalogEpochs::new(names));
    }
    let prompt_metadata = session.has_feature(FEATURE_TOOL_PROMPT_METADATA);
    let composition = session.has_feature(FEATURE_TOOL_COMPOSITION);
    let operations = (
        session.has_feature(crate::sdk::FEATURE_OPERATION_DESCRIPTORS),
        session.has_feature(crate::sdk::FEATURE_RESOURCE_REFS),
    );
    let tools: Vec<Value> = ext
        .tools
        .iter()
        .map(|t| {
            t.tool
                .to_wire(api_version, prompt_metadata, composition, operations)
        })
        .collect();
    let commands: Vec<Value> = ext.commands.iter().map(|c| c.command.to_wire()).collect();
    result.insert("tools".into(), Value::Array(tools));
    result.insert("commands".into(), Value::Array(commands));
    Ok((Value::Object(result), session))
}

fn string_list(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// Chooses the `protocol` member of the answer from the host's `offer`.
fn select_protocol(
    ext: &Extension,
    api_version: ApiVersion,
    offer: &Value,
    session: &mut Session,
) -> Result<Value, HandlerError> {
    let version = offer
        .get("version")
        .and_then(Value::as_str)
        .unwrap_or(api_version.as_str());
    let required = string_list(offer.get("required_features"));
    let optional = string_list(offer.get("optional_features"));
    let unsupported: Vec<&str> = required
        .iter()
        .map(String::as_str)
        .filter(|f| !SUPPORTED_REQUIRED_FEATURES.contains(f))
        .collect();
    if !unsupported.is_empty() {
        return Err(HandlerError::invalid_params(format!(
            "the host requires features this extension does not implement: {}",
            unsupported.join(", ")
        )));
    }

    let mut wanted: Vec<&str> = ext.features.iter().map(String::as_str).collect();
    if ext.lifecycle.is_some() {
        wanted.push(FEATURE_LIFECYCLE_EVENTS);
    }
    if api_version == ApiVersion::V0_4 && ext.tools.iter().any(|t| t.tool.has_prompt_metadata()) {
        wanted.push(FEATURE_TOOL_PROMPT_METADATA);
    }
    if api_version == ApiVersion::V0_4 && ext.tools.iter().any(|t| t.tool.composition.is_some()) {
        wanted.push(FEATURE_TOOL_COMPOSITION);
    }
    let operations = || ext.tools.iter().filter_map(|t| t.tool.operation.as_ref());
    if api_version == ApiVersion::V0_4 && operations().next().is_some() {
        wanted.push(crate::sdk::FEATURE_OPERATION_DESCRIPTORS);
    }
    if api_version == ApiVersion::V0_4 && operations().any(|o| o.is_resource_bearing()) {
        wanted.push(crate::sdk::FEATURE_RESOURCE_REFS);
    }
    let mut features: Vec<String> = Vec::new();
    for feature in required
        .iter()
        .chain(optional.iter().filter(|f| wanted.contains(&f.as_str())))
    {
        if !features.contains(feature) {
            features.push(feature.clone());
        }
    }

    let offered_limit = offer
        .get("limits")
        .and_then(|l| l.get("max_concurrent_requests"))
        .and_then(Value::as_u64)
        .map(|n| u32::try_from(n).unwrap_or(u32::MAX))
        .unwrap_or(MAX_CONCURRENT_REQUESTS)
        .max(1);
    let limit = ext.max_concurrent_requests.min(offered_limit);

    let mut protocol = Map::new();
    protocol.insert("version".into(), json!(version));
    protocol.insert("features".into(), json!(features));
    protocol.insert("limits".into(), json!({ "max_concurrent_requests": limit }));
    if let Some(lifecycle) = &ext.lifecycle {
        if features.iter().any(|f| f == FEATURE_LIFECYCLE_EVENTS) {
            let events: Vec<String> = lifecycle
                .events
                .iter()
                .filter(|e| LIFECYCLE_EVENTS.contains(&e.as_str()))
                .cloned()
                .collect();
            if !events.is_empty() {
                protocol.insert("lifecycle_events".into(), json!(events));
            }
            session.lifecycle_events = if events.is_empty() {
                LIFECYCLE_EVENTS.iter().map(|e| (*e).to_owned()).collect()
            } else {
                events
            };
        }
    }
    session.features = features.into_iter().collect();
    session.max_concurrent_requests = limit;
    Ok(Value::Object(protocol))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sdk::{Context, ToolOutput};
    use serde_json::json;

    fn offer() -> Value {
        json!({
            "api_version": "0.4",
            "workspace": "/w",
            "protocol": {
                "version": "0.2",
                "required_features": ["request_cancellation", "content_parts"],
                "optional_features": ["request_progress", "artifacts", "lifecycle_events",
                    "tool_prompt_metadata_v1"],
                "limits": {"max_concurrent_requests": 8}
            }
        })
    }

    fn ext() -> Extension {
        Extension::new()
            .feature("request_progress")
            .feature("dynamic_tools")
            .tool_def(
                crate::sdk::Tool::new("t", "d", json!({"type": "object"}))
                    .output_schema(json!({"type": "object"}))
                    .prompt_snippet("use t")
                    .prompt_guidelines(["a", "b"]),
                |_: Value, _: &Context| Ok(ToolOutput::text("x")),
            )
            .command("c", "cd", None, |_, _| {
                Ok(crate::sdk::CommandOutput::text(""))
            })
    }

    #[test]
    fn api_0_4_selects_offered_features_and_limits() {
        let (result, session) = negotiate(&ext(), ApiVersion::V0_4, &offer()).unwrap();
        assert_eq!(
            result,
            json!({
                "api_version": "0.4",
                "tools": [{"name": "t", "description": "d", "parameters": {"type": "object"},
                    "output_schema": {"type": "object"}, "prompt_snippet": "use t",
                    "prompt_guidelines": ["a", "b"]}],
                "commands": [{"name": "c", "description": "cd"}],
                "protocol": {
                    "version": "0.2",
                    "features": ["request_cancellation", "content_parts", "request_progress",
                        "tool_prompt_metadata_v1"],
                    "limits": {"max_concurrent_requests": 8}
                }
            })
        );
        assert_eq!(session.max_concurrent_requests, 8);
        assert_eq!(session.workspace.as_deref(), Some("/w"));
        assert!(session.has_feature("request_progress"));
        assert!(!session.has_feature("dynamic_tools"));
    }

    #[test]
    fn api_0_1_omits_protocol_and_new_tool_fields() {
        let (result, session) = negotiate(&ext(), ApiVersion::V0_1, &json!({})).unwrap();
        assert_eq!(
            result,
            json!({
                "api_version": "0.1",
                "tools": [{"name": "t", "description": "d", "parameters": {"type": "object"}}],
                "commands": [{"name": "c", "description": "cd"}]
            })
        );
        assert!(session.features.is_empty());
        assert_eq!(session.max_concurrent_requests, 1);
    }

    #[test]
    fn api_0_2_keeps_output_schema_but_no_prompt_metadata() {
        let mut params = offer();
        params["protocol"]["limits"]["max_concurrent_requests"] = json!(64);
        let (result, session) = negotiate(&ext(), ApiVersion::V0_2, &params).unwrap();
        assert_eq!(
            result["tools"][0],
            json!({"name": "t", "description": "d", "parameters": {"type": "object"},
                "output_schema": {"type": "object"}})
        );
        assert_eq!(session.max_concurrent_requests, 64);
    }

    #[test]
    fn lifecycle_subscription_is_negotiated() {
        let all = Extension::new().lifecycle(&[], |_, _| {});
        let (result, session) = negotiate(&all, ApiVersion::V0_2, &offer()).unwrap();
        assert!(result["protocol"].get("lifecycle_events").is_none());
        assert_eq!(session.lifecycle_events.len(), 6);
        let some = Extension::new().lifecycle(&["turn/started"], |_, _| {});
        let (result, session) = negotiate(&some, ApiVersion::V0_2, &offer()).unwrap();
        assert_eq!(
            result["protocol"]["lifecycle_events"],
            json!(["turn/started"])
        );
        assert_eq!(session.lifecycle_events, vec!["turn/started".to_owned()]);
        let mut no_offer = offer();
        no_offer["protocol"]["optional_features"] = json!([]);
        let (result, session) = negotiate(&some, ApiVersion::V0_2, &no_offer).unwrap();
        assert!(result["protocol"].get("lifecycle_events").is_none());
        assert!(session.lifecycle_events.is_empty());
    }

    #[test]
    fn unknown_required_features_and_missing_offer_are_refused() {
        let mut params = offer();
        params["protocol"]["required_features"] = json!(["content_parts", "teleport"]);
        let err = negotiate(&ext(), ApiVersion::V0_2, &params).unwrap_err();
        assert_eq!(err.code(), -32602);
        assert!(err.message().contains("teleport"));
        let err = negotiate(&ext(), ApiVersion::V0_2, &json!({})).unwrap_err();
        assert_eq!(err.code(), -32602);
    }
}
