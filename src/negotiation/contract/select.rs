//! Validating the API 0.3 `initialize` response: the contract selection and the tools.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::error::ContractError;
use super::{Capability, Contract, ContractLimits, ContractMethod};
use super::{CONTRACT_ENCODING, CONTRACT_SCHEMA};
use crate::limits::MAX_V0_3_TOOL_DESCRIPTION_BYTES;
use crate::manifest::{ApiVersion, LocatedManifest};
use crate::negotiation::definitions::{as_object, missing, wrong_type, ToolDefinition};
use crate::negotiation::error::NegotiationError;
use crate::negotiation::offer::InitializeOffer;
use crate::negotiation::result::{check_unique, set_difference, Negotiated};

/// The members of the response, all required.
const RESULT_MEMBERS: [&str; 3] = ["api_version", "contract", "tools"];
/// The members of `contract`, all required.
const CONTRACT_MEMBERS: [&str; 5] = ["capabilities", "encoding", "limits", "methods", "schema"];
/// The members of a tool definition (`output_schema` optional, the rest required).
const TOOL_MEMBERS: [&str; 4] = ["description", "name", "output_schema", "parameters"];
/// The members of `contract.limits`, all required.
const LIMIT_MEMBERS: [&str; 3] = ["max_concurrent_requests", "max_frame_bytes", "max_tools"];

/// Validates an API 0.3 `initialize` result (the offer was checked by the caller).
///
/// The result, `contract` and `contract.limits` are closed objects whose members are
/// all required ([`NegotiationError::UnknownMember`] names the first unknown member in
/// byte order; a `commands` or `protocol` member is one). Checked in this order: the
/// result's members; `api_version` is `"0.3"`; `contract`'s members; `schema` and
/// `encoding` echo the offer; `capabilities` and `methods` are arrays of strings, each
/// name offered (required ones count as offered) and listed once, every required one
/// present; each limit is an integer no larger than the offer, and
/// `max_frame_bytes` and `max_concurrent_requests` are at least 1; then `tools`: at most
/// the selected `max_tools`, each a closed API 0.3 tool (`name`, `description` of at
/// most 4,096 bytes, `parameters`, an optional `output_schema`; any other member is
/// [`NegotiationError::UnknownMember`]) and a valid [`ToolDefinition`], unique names, equal as a set to
/// `contributes.tools` (there are no dynamic tools on API 0.3).
pub(in crate::negotiation) fn validate_v0_3(
    located: &LocatedManifest,
    offer: &InitializeOffer,
    result: &Value,
) -> Result<Negotiated, NegotiationError> {
    let api = ApiVersion::V0_3;
    let map = as_object(result, "result")?;
    closed(map, "", &RESULT_MEMBERS)?;
    match map.get("api_version") {
        None => return Err(missing("", "api_version")),
        Some(Value::String(got)) if got == api.as_str() => {}
        Some(Value::String(got)) => {
            return Err(NegotiationError::ApiVersionMismatch {
                expected: api,
                got: got.clone(),
            })
        }
        Some(_) => return Err(wrong_type("", "api_version", "a string")),
    }
    let contract = match map.get("contract") {
        None => return Err(missing("", "contract")),
        Some(value) => contract(value, offer)?,
    };
    let features = contract.features();

    let items = match map.get("tools") {
        None => return Err(missing("", "tools")),
        Some(Value::Array(items)) => items,
        Some(_) => return Err(wrong_type("", "tools", "an array")),
    };
    if items.len() > contract.limits.max_tools {
        return Err(NegotiationError::Contract(ContractError::TooManyTools {
            count: items.len(),
            max_tools: contract.limits.max_tools,
        }));
    }
    let tools = items
        .iter()
        .enumerate()
        .map(|(i, item)| tool(item, &format!("tools[{i}]"), features))
        .collect::<Result<Vec<_>, _>>()?;
    check_unique(tools.iter().map(|t| &t.name), |name| {
        NegotiationError::DuplicateTool { name }
    })?;
    if let Some((missing, unexpected)) = set_difference(
        &located.manifest.contributes.tools,
        tools.iter().map(|t| &t.name),
    ) {
        return Err(NegotiationError::ToolSetMismatch {
            missing,
            unexpected,
        });
    }

    Ok(Negotiated {
        api_version: api,
        tools,
        commands: Vec::new(),
        features,
        max_concurrent_requests: contract.limits.max_concurrent_requests,
        lifecycle_subscriptions: Vec::new(),
        contract: Some(contract),
    })
}

/// One closed API 0.3 tool definition at `path`: `name`, `description` (at most
/// [`MAX_V0_3_TOOL_DESCRIPTION_BYTES`] bytes), `parameters` and an optional
/// `output_schema`, then the checks every version shares.
fn tool(
    value: &Value,
    path: &str,
    features: crate::negotiation::FeatureSet,
) -> Result<ToolDefinition, NegotiationError> {
    let map = as_object(value, path)?;
    closed(map, path, &TOOL_MEMBERS)?;
    if let Some(Value::String(description)) = map.get("description") {
        if description.len() > MAX_V0_3_TOOL_DESCRIPTION_BYTES {
            return Err(NegotiationError::DescriptionTooLong {
                field: format!("{path}.description"),
                bytes: description.len(),
            });
        }
    }
    ToolDefinition::parse(value, path, ApiVersion::V0_3, features)
}

/// Rejects the first member of `map` (at `path`) that `allowed` does not list.
fn closed(map: &Map<String, Value>, path: &str, allowed: &[&str]) -> Result<(), NegotiationError> {
    match map.keys().find(|k| !allowed.contains(&k.as_str())) {
        None => Ok(()),
        Some(member) => Err(NegotiationError::UnknownMember {
            field: if path.is_empty() {
                member.clone()
            } else {
                format!("{path}.{member}")
            },
        }),
    }
}

/// The validated `contract` selection.
fn contract(value: &Value, offer: &InitializeOffer) -> Result<Contract, NegotiationError> {
    let map = as_object(value, "contract")?;
    closed(map, "contract", &CONTRACT_MEMBERS)?;
    let schema = required_string(map, "schema")?;
    if schema != CONTRACT_SCHEMA {
        return Err(NegotiationError::Contract(ContractError::SchemaMismatch {
            got: schema.to_owned(),
        }));
    }
    let encoding = required_string(map, "encoding")?;
    if encoding != CONTRACT_ENCODING {
        return Err(NegotiationError::Contract(
            ContractError::EncodingMismatch {
                got: encoding.to_owned(),
            },
        ));
    }
    let contract_offer = &offer.contract;
    let capabilities = selection(
        map,
        "capabilities",
        |name| {
            Capability::parse(name)
                .filter(|c| c.is_required() || contract_offer.optional_capabilities.contains(c))
        },
        |name| ContractError::CapabilityNotOffered { name },
        |name| ContractError::DuplicateCapability { name },
    )?;
    if let Some(&capability) = Capability::REQUIRED
        .iter()
        .find(|c| !capabilities.contains(c))
    {
        return Err(NegotiationError::Contract(
            ContractError::MissingRequiredCapability { capability },
        ));
    }
    let methods = selection(
        map,
        "methods",
        |name| {
            ContractMethod::parse(name)
                .filter(|m| m.is_required() || contract_offer.optional_methods.contains(m))
        },
        |name| ContractError::MethodNotOffered { name },
        |name| ContractError::DuplicateMethod { name },
    )?;
    if let Some(&method) = ContractMethod::REQUIRED
        .iter()
        .find(|m| !methods.contains(m))
    {
        return Err(NegotiationError::Contract(
            ContractError::MissingRequiredMethod { method },
        ));
    }
    if let Some(&method) = methods
        .iter()
        .find(|m| !capabilities.contains(&m.capability()))
    {
        return Err(NegotiationError::Contract(
            ContractError::MethodWithoutCapability {
                method,
                capability: method.capability(),
            },
        ));
    }
    let limits = match map.get("limits") {
        None => return Err(missing("contract", "limits")),
        Some(value) => selected_limits(value, offer.contract_limits())?,
    };
    Ok(Contract {
        capabilities,
        methods,
        limits,
    })
}

fn required_string<'a>(
    map: &'a Map<String, Value>,
    member: &str,
) -> Result<&'a str, NegotiationError> {
    match map.get(member) {
        None => Err(missing("contract", member)),
        Some(Value::String(text)) => Ok(text),
        Some(_) => Err(wrong_type("contract", member, "a string")),
    }
}

/// `contract.<member>`: an array of strings, each offered (`parse` yields it) and
/// listed once.
fn selection<T: Ord>(
    map: &Map<String, Value>,
    member: &str,
    parse: impl Fn(&str) -> Option<T>,
    not_offered: impl Fn(String) -> ContractError,
    duplicate: impl Fn(String) -> ContractError,
) -> Result<BTreeSet<T>, NegotiationError> {
    let items = match map.get(member) {
        None => return Err(missing("contract", member)),
        Some(Value::Array(items)) => items,
        Some(_) => return Err(wrong_type("contract", member, "an array of strings")),
    };
    let mut selected = BTreeSet::new();
    for (i, item) in items.iter().enumerate() {
        let Value::String(name) = item else {
            return Err(wrong_type(
                "contract",
                &format!("{member}[{i}]"),
                "a string",
            ));
        };
        let value =
            parse(name).ok_or_else(|| NegotiationError::Contract(not_offered(name.clone())))?;
        if !selected.insert(value) {
            return Err(NegotiationError::Contract(duplicate(name.clone())));
        }
    }
    Ok(selected)
}

/// `contract.limits`: a closed object with all three limits, each an integer at most
/// the offer; `max_frame_bytes` and `max_concurrent_requests` at least 1.
fn selected_limits(
    value: &Value,
    offered: ContractLimits,
) -> Result<ContractLimits, NegotiationError> {
    let map = as_object(value, "contract.limits")?;
    closed(map, "contract.limits", &LIMIT_MEMBERS)?;
    let limit = |name: &'static str, offered: u64, minimum: u64| -> Result<u64, NegotiationError> {
        let value = map
            .get(name)
            .ok_or_else(|| missing("contract.limits", name))?;
        let Some(n) = value.as_u64().filter(|n| *n >= minimum) else {
            return Err(NegotiationError::Contract(ContractError::InvalidLimit {
                name,
                value: value.to_string(),
            }));
        };
        if n > offered {
            return Err(NegotiationError::Contract(ContractError::LimitAboveOffer {
                name,
                value: n,
                offered,
            }));
        }
        Ok(n)
    };
    // Each value is at most its offer, which fits the target type.
    let max_concurrent_requests = limit(
        "max_concurrent_requests",
        u64::from(offered.max_concurrent_requests),
        1,
    )? as u32;
    let max_frame_bytes = limit("max_frame_bytes", offered.max_frame_bytes as u64, 1)? as usize;
    let max_tools = limit("max_tools", offered.max_tools as u64, 0)? as usize;
    Ok(ContractLimits {
        max_frame_bytes,
        max_concurrent_requests,
        max_tools,
    })
}
