//! Host lookup of the operations that apply to a resource (section 2.26): the
//! `get_applicable_operations` host tool, opt-in through
//! [`ExtensionHost::enable_operation_discovery`](crate::ExtensionHost::enable_operation_discovery).
//!
//! It is not an extension RPC: the embedder offers the tool to its model and runs it
//! with [`ExtensionHost::get_applicable_operations`](crate::ExtensionHost::get_applicable_operations).
//! The resource is validated first (a live, active value of some extension's current
//! generation); then the tools of that extension whose descriptor takes an input of
//! exactly the resource's type, that the host's live tool policy allows, ordered by
//! operation id and input path, are answered as cards, 8 by default and at most 32 a
//! page. A page's `next_cursor` is fenced to the resource, its generation and the
//! catalog revision: once any of them changed, the cursor is stale.

use std::fmt;

use serde::Serialize;
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

use crate::limits::{OPERATION_DISCOVERY_DEFAULT_LIMIT, OPERATION_DISCOVERY_MAX_LIMIT};
use crate::negotiation::ToolDefinition;
use crate::validate::resource::ResourceRef;

/// The host tool's name.
pub const TOOL_NAME: &str = "get_applicable_operations";

/// The host tool's definition, for the embedder to offer its model: its arguments are
/// `{"resource", "limit"?, "cursor"?}`.
pub fn tool_definition() -> Value {
    json!({
        "name": TOOL_NAME,
        "description": "List the operations (tools) that can act on a resource value, \
                        with the exact schema of each, best match first.",
        "parameters": {
            "type": "object",
            "properties": {
                "resource": {
                    "type": "object",
                    "properties": {
                        "$resource": {"type": "string"},
                        "type": {"type": "string"}
                    },
                    "required": ["$resource", "type"],
                    "additionalProperties": false
                },
                "limit": {"type": "integer", "minimum": 1, "maximum": OPERATION_DISCOVERY_MAX_LIMIT},
                "cursor": {"type": "string"}
            },
            "required": ["resource"],
            "additionalProperties": false
        }
    })
}

/// The checked arguments of one `get_applicable_operations` call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiscoveryRequest {
    /// The resource whose operations are asked for.
    pub resource: ResourceRef,
    /// Cards on this page: 1 to 32, default 8.
    pub limit: usize,
    /// The previous page's `next_cursor`.
    pub cursor: Option<String>,
}

impl DiscoveryRequest {
    /// Reads the closed arguments `{"resource", "limit"?, "cursor"?}`.
    pub fn parse(arguments: &Value) -> Result<DiscoveryRequest, DiscoveryError> {
        let invalid = |why: &str| DiscoveryError::InvalidArguments(why.to_string());
        let map = arguments
            .as_object()
            .ok_or_else(|| invalid("the arguments must be an object"))?;
        if let Some(name) = map
            .keys()
            .find(|k| !matches!(k.as_str(), "resource" | "limit" | "cursor"))
        {
            return Err(DiscoveryError::InvalidArguments(format!(
                "the arguments have the unknown member `{name}`"
            )));
        }
        let resource = map
            .get("resource")
            .ok_or_else(|| invalid("`resource` is required"))?;
        let resource = ResourceRef::parse(resource).map_err(|problem| {
            DiscoveryError::InvalidArguments(format!("`resource`: {problem}"))
        })?;
        let limit = match map.get("limit") {
            None => OPERATION_DISCOVERY_DEFAULT_LIMIT,
            Some(limit) => match limit.as_u64() {
                Some(n) if (1..=OPERATION_DISCOVERY_MAX_LIMIT as u64).contains(&n) => n as usize,
                _ => return Err(invalid("`limit` must be an integer from 1 to 32")),
            },
        };
        let cursor = match map.get("cursor") {
            None => None,
            Some(Value::String(cursor)) => Some(cursor.clone()),
            Some(_) => return Err(invalid("`cursor` must be a string")),
        };
        Ok(DiscoveryRequest {
            resource,
            limit,
            cursor,
        })
    }
}

/// One operation that applies to the resource.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OperationCard {
    /// The descriptor's operation id.
    pub operation_id: String,
    /// The input path the resource goes to.
    pub input_path: String,
    /// True when that input is the descriptor's receiver.
    pub receiver: bool,
    /// The extension that runs it.
    pub extension: String,
    /// The tool to call.
    pub tool: String,
    /// The tool's description.
    pub description: String,
    /// The tool's exact `parameters` schema.
    pub parameters: Value,
}

/// One page of applicable operations.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ApplicableOperations {
    /// The resource asked about.
    #[serde(serialize_with = "serialize_ref")]
    pub resource: ResourceRef,
    /// The cards of this page, ordered by operation id and input path.
    pub operations: Vec<OperationCard>,
    /// The cursor of the next page, when there is one.
    pub next_cursor: Option<String>,
}

fn serialize_ref<S: serde::Serializer>(r: &ResourceRef, s: S) -> Result<S::Ok, S::Error> {
    r.to_value().serialize(s)
}

impl ApplicableOperations {
    /// The page as the tool's structured result.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Object(Map::new()))
    }
}

/// Why a `get_applicable_operations` call was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DiscoveryError {
    /// The embedder did not enable operation discovery.
    NotEnabled,
    /// The arguments are malformed (the words say which member).
    InvalidArguments(String),
    /// No extension's current generation holds the resource as a live value.
    ResourceUnavailable,
    /// The cursor belongs to an earlier page set: the resource's generation or its
    /// extension's catalog changed since, or it was never issued.
    StaleCursor,
}

impl DiscoveryError {
    /// A stable name, such as `stale_cursor`.
    pub fn name(&self) -> &'static str {
        match self {
            DiscoveryError::NotEnabled => "not_enabled",
            DiscoveryError::InvalidArguments(_) => "invalid_arguments",
            DiscoveryError::ResourceUnavailable => "resource_unavailable",
            DiscoveryError::StaleCursor => "stale_cursor",
        }
    }
}

impl fmt::Display for DiscoveryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DiscoveryError::NotEnabled => f.write_str(
                "operation discovery is not enabled (ExtensionHost::enable_operation_discovery)",
            ),
            DiscoveryError::InvalidArguments(why) => write!(f, "invalid arguments: {why}"),
            DiscoveryError::ResourceUnavailable => f.write_str(
                "resource_unavailable: no running extension holds that resource value",
            ),
            DiscoveryError::StaleCursor => f.write_str(
                "stale_cursor: the catalog or the resource changed since that page; ask again without a cursor",
            ),
        }
    }
}

impl std::error::Error for DiscoveryError {}

/// Where a resource lives: what the dispatcher knows of the generation whose records
/// hold it.
#[derive(Clone, Debug)]
pub struct ResourceHome {
    /// The extension.
    pub extension: String,
    /// Its current generation.
    pub generation: u64,
    /// Its catalog revision.
    pub revision: u64,
    /// Its live catalog.
    pub catalog: std::sync::Arc<Vec<ToolDefinition>>,
}

/// One page of the operations in `home` that take `request.resource`, the tools
/// `allowed` by the live policy only.
pub(crate) fn select(
    request: &DiscoveryRequest,
    home: &ResourceHome,
    allowed: impl Fn(&ToolDefinition) -> bool,
) -> Result<ApplicableOperations, DiscoveryError> {
    let fence = fence(&request.resource, home);
    let offset = match &request.cursor {
        None => 0,
        Some(cursor) => cursor
            .strip_prefix(&fence)
            .and_then(|rest| rest.strip_prefix(':'))
            .and_then(|n| n.parse::<usize>().ok())
            .ok_or(DiscoveryError::StaleCursor)?,
    };
    let mut cards: Vec<OperationCard> = Vec::new();
    for tool in home.catalog.iter() {
        let Some(operation) = &tool.operation else {
            continue;
        };
        let slots: Vec<_> = operation
            .resource_inputs
            .iter()
            .filter(|slot| slot.type_id == request.resource.type_id)
            .collect();
        if slots.is_empty() || !allowed(tool) {
            continue;
        }
        for slot in slots {
            cards.push(OperationCard {
                operation_id: operation.id.clone(),
                input_path: slot.path.to_string(),
                receiver: operation.receiver.as_ref() == Some(&slot.path),
                extension: home.extension.clone(),
                tool: tool.name.clone(),
                description: tool.description.clone(),
                parameters: tool.parameters.clone(),
            });
        }
    }
    cards.sort_by(|a, b| {
        (&a.operation_id, &a.input_path, &a.tool).cmp(&(&b.operation_id, &b.input_path, &b.tool))
    });
    if offset > cards.len() {
        return Err(DiscoveryError::StaleCursor);
    }
    let end = (offset + request.limit).min(cards.len());
    let next_cursor = (end < cards.len()).then(|| format!("{fence}:{end}"));
    Ok(ApplicableOperations {
        resource: request.resource.clone(),
        operations: cards.drain(offset..end).collect(),
        next_cursor,
    })
}

/// The fence of a page set: the resource, its generation and the catalog revision.
fn fence(resource: &ResourceRef, home: &ResourceHome) -> String {
    let mut digest = Sha256::new();
    for part in [
        resource.token.as_str(),
        resource.type_id.as_str(),
        home.extension.as_str(),
    ] {
        digest.update(part.as_bytes());
        digest.update([0]);
    }
    digest.update(home.generation.to_be_bytes());
    digest.update(home.revision.to_be_bytes());
    crate::hex::lower(&digest.finalize()[..12])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::ApiVersion;
    use crate::negotiation::{Feature, FeatureSet};

    fn tool(name: &str, id: &str, inputs: &[(&str, &str)]) -> ToolDefinition {
        let ref_schema = |t: &str| {
            json!({"type": "object", "properties": {"$resource": {"type": "string"},
                   "type": {"const": t}}, "required": ["$resource", "type"],
                   "additionalProperties": false})
        };
        let mut properties = Map::new();
        for (path, t) in inputs {
            properties.insert(path.to_string(), ref_schema(t));
        }
        let slots: Vec<Value> = inputs
            .iter()
            .map(|(p, t)| json!({"path": format!("/{p}"), "type": t, "access": "exclusive"}))
            .collect();
        let definition = json!({
            "name": name, "description": format!("Tool {name}"),
            "parameters": {"type": "object", "properties": properties},
            "operation": {"id": id, "resource_inputs": slots, "resource_outputs": []}
        });
        let mut features = FeatureSet::new();
        features.insert(Feature::ResourceRefsV1);
        features.insert(Feature::OperationDescriptorsV1);
        ToolDefinition::parse(&definition, "tools[0]", ApiVersion::V0_4, features).unwrap()
    }

    fn home(revision: u64) -> ResourceHome {
        ResourceHome {
            extension: "circuits".into(),
            generation: 1,
            revision,
            catalog: std::sync::Arc::new(vec![
                tool("zap", "b.zap", &[("circuit", "Circuit")]),
                tool(
                    "probe",
                    "a.probe",
                    &[("left", "Circuit"), ("right", "Circuit")],
                ),
                tool("paint", "a.paint", &[("part", "Part")]),
                tool("hidden", "a.hidden", &[("circuit", "Circuit")]),
            ]),
        }
    }

    fn request(arguments: Value) -> DiscoveryRequest {
        DiscoveryRequest::parse(&arguments).unwrap()
    }

    const CIRCUIT: &str = r#"{"$resource":"res-1","type":"Circuit"}"#;

    #[test]
    fn exact_type_matches_the_policy_allows_are_ordered_and_paged() {
        let circuit: Value = serde_json::from_str(CIRCUIT).unwrap();
        let allowed = |t: &ToolDefinition| t.name != "hidden";
        let first = select(
            &request(json!({"resource": circuit, "limit": 2})),
            &home(0),
            allowed,
        )
        .unwrap();
        let order: Vec<(&str, &str)> = first
            .operations
            .iter()
            .map(|c| (c.operation_id.as_str(), c.input_path.as_str()))
            .collect();
        assert_eq!(order, [("a.probe", "/left"), ("a.probe", "/right")]);
        let cursor = first.next_cursor.clone().unwrap();
        let second = select(
            &request(json!({"resource": circuit, "limit": 2, "cursor": cursor})),
            &home(0),
            allowed,
        )
        .unwrap();
        assert_eq!(second.operations.len(), 1);
        assert_eq!(second.operations[0].tool, "zap");
        assert_eq!(second.next_cursor, None);
        // A catalog change fences the cursor off.
        let stale = select(
            &request(json!({"resource": circuit, "cursor": first.next_cursor.unwrap()})),
            &home(1),
            allowed,
        );
        assert_eq!(stale, Err(DiscoveryError::StaleCursor));
        let all = select(&request(json!({"resource": circuit})), &home(0), allowed).unwrap();
        assert_eq!(all.operations.len(), 3);
    }

    #[test]
    fn arguments_are_closed_and_bounded() {
        let circuit: Value = serde_json::from_str(CIRCUIT).unwrap();
        for bad in [
            json!({}),
            json!({"resource": circuit, "limit": 0}),
            json!({"resource": circuit, "limit": 33}),
            json!({"resource": circuit, "extra": true}),
            json!({"resource": {"$resource": "x"}}),
            json!({"resource": circuit, "cursor": 3}),
        ] {
            assert!(
                matches!(
                    DiscoveryRequest::parse(&bad),
                    Err(DiscoveryError::InvalidArguments(_))
                ),
                "{bad}"
            );
        }
        assert_eq!(request(json!({"resource": circuit})).limit, 8);
    }
}
