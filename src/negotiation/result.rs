//! Validating the `initialize` response (section 1.1).

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::contract::{validate_v0_3, Contract};
use super::definitions::{
    as_object, missing, optional, wrong_type, CommandDefinition, ToolDefinition,
};
use super::error::{LifecycleSubscriptionProblem, NegotiationError};
use super::feature::{Feature, FeatureSet, LifecycleEvent};
use super::offer::InitializeOffer;
use super::params::protocol_version;
use crate::limits;
use crate::manifest::{ApiVersion, LocatedManifest};

/// What a successful `initialize` settled for one process generation.
#[derive(Clone, Debug, PartialEq)]
pub struct Negotiated {
    /// The manifest's API version, echoed by the response.
    pub api_version: ApiVersion,
    /// The tool catalog (epoch 0 with `dynamic_tools`), in response order.
    pub tools: Vec<ToolDefinition>,
    /// The command catalog, fixed for the generation, in response order.
    pub commands: Vec<CommandDefinition>,
    /// The negotiated features; empty for API 0.1. On API 0.3, the features the
    /// selected capabilities grant ([`Contract::features`]): `request_cancellation`,
    /// `content_parts`, and `request_progress` when selected.
    pub features: FeatureSet,
    /// Host requests admitted at once: the response's value capped by the offer, or
    /// the offer when the response names none (always the offer for API 0.1). On API
    /// 0.3, the selected `contract.limits.max_concurrent_requests`.
    pub max_concurrent_requests: u32,
    /// The subscribed lifecycle notifications, in [`LifecycleEvent::ALL`] order
    /// (always empty on API 0.3).
    pub lifecycle_subscriptions: Vec<LifecycleEvent>,
    /// API 0.3: the selected contract (capabilities, methods, limits); `None` on every
    /// other version.
    pub contract: Option<Contract>,
}

#[doc(hidden)]
/// Validates an `initialize` result against the manifest and the offer the request
/// carried, applying every rule of section 1.1.
///
/// Checked, in this order: the offer must pass [`InitializeOffer::check`]; on API 0.3
/// the rest is the contract validation of [`super::contract`] (closed objects, the
/// selection within the offer, tools as below within the selected `max_tools`, no
/// `commands`); otherwise the result is an object; `api_version` equals the
/// manifest's; API 0.1 has no `protocol` member while 0.2 and 0.4 must have one, whose
/// `version` echoes the request, whose `features` contain both required features and
/// otherwise only offered, known, non-repeated ones with their dependencies, whose
/// `limits.max_concurrent_requests` (optional) is an integer above zero, and whose
/// `lifecycle_events` subscription is valid; then `tools` (at most 256, unique names,
/// each a valid [`ToolDefinition`]) and `commands` (at most 256, unique names, each a
/// valid [`CommandDefinition`]); finally, unless `dynamic_tools` / `runtime_commands`
/// was negotiated, the tool / command names must equal `contributes.tools` /
/// `contributes.commands`.
///
/// Decisions where the reference is silent:
/// - Unknown top-level members (and unknown members of `protocol`, `limits` and the
///   definitions) are ignored: the feature-negotiated wire is not closed.
/// - `tools` and `commands` are required on every version ("the response must retain
///   top-level api_version, tools, and commands"); an extension with none sends `[]`.
/// - A `max_concurrent_requests` above the offer is capped to the offer rather than
///   rejected ("capped by the host"); when `limits` or the member is absent or null the
///   offer applies.
/// - An optional member set to `null` counts as absent, except `protocol` on API 0.1,
///   whose mere presence is rejected, and `protocol` on 0.2/0.4, which must be an object.
pub fn validate_initialize_result(
    located: &LocatedManifest,
    offer: &InitializeOffer,
    result: &Value,
) -> Result<Negotiated, NegotiationError> {
    let manifest = &located.manifest;
    let api = manifest.api_version;
    offer.check(located)?;
    if api == ApiVersion::V0_3 {
        return validate_v0_3(located, offer, result);
    }
    let map = as_object(result, "result")?;

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

    let protocol = match protocol_version(api) {
        None if map.contains_key("protocol") => {
            return Err(NegotiationError::ProtocolMemberForbidden)
        }
        None => ProtocolSelection {
            features: FeatureSet::new(),
            max_concurrent_requests: offer.max_concurrent_requests(),
            lifecycle_subscriptions: Vec::new(),
        },
        Some(version) => match map.get("protocol") {
            None => return Err(NegotiationError::ProtocolMemberMissing),
            Some(value) => protocol_selection(value, version, offer)?,
        },
    };

    let tools = definitions(map, "tools", limits::MAX_TOOLS, |value, path| {
        ToolDefinition::parse(value, path, api, protocol.features)
    })?;
    check_unique(tools.iter().map(|t| &t.name), |name| {
        NegotiationError::DuplicateTool { name }
    })?;
    let commands = definitions(
        map,
        "commands",
        limits::MAX_COMMANDS,
        CommandDefinition::parse,
    )?;
    check_unique(commands.iter().map(|c| &c.name), |name| {
        NegotiationError::DuplicateCommand { name }
    })?;

    if !protocol.features.contains(Feature::DynamicTools) {
        if let Some((missing, unexpected)) =
            set_difference(&manifest.contributes.tools, tools.iter().map(|t| &t.name))
        {
            return Err(NegotiationError::ToolSetMismatch {
                missing,
                unexpected,
            });
        }
    }
    if !protocol.features.contains(Feature::RuntimeCommands) {
        if let Some((missing, unexpected)) = set_difference(
            &manifest.contributes.commands,
            commands.iter().map(|c| &c.name),
        ) {
            return Err(NegotiationError::CommandSetMismatch {
                missing,
                unexpected,
            });
        }
    }

    Ok(Negotiated {
        api_version: api,
        tools,
        commands,
        features: protocol.features,
        max_concurrent_requests: protocol.max_concurrent_requests,
        lifecycle_subscriptions: protocol.lifecycle_subscriptions,
        contract: None,
    })
}

/// The validated `protocol` member of a response.
struct ProtocolSelection {
    features: FeatureSet,
    max_concurrent_requests: u32,
    lifecycle_subscriptions: Vec<LifecycleEvent>,
}

fn protocol_selection(
    value: &Value,
    version: &'static str,
    offer: &InitializeOffer,
) -> Result<ProtocolSelection, NegotiationError> {
    let map = as_object(value, "protocol")?;
    match map.get("version") {
        None => return Err(missing("protocol", "version")),
        Some(Value::String(got)) if got == version => {}
        Some(Value::String(got)) => {
            return Err(NegotiationError::ProtocolVersionMismatch {
                expected: version,
                got: got.clone(),
            })
        }
        Some(_) => return Err(wrong_type("protocol", "version", "a string")),
    }
    let features = selected_features(map, offer)?;
    let max_concurrent_requests = concurrency(map, offer)?;
    resource_limits_echo(map)?;
    let lifecycle_subscriptions = lifecycle_subscriptions(map, features)?;
    Ok(ProtocolSelection {
        features,
        max_concurrent_requests,
        lifecycle_subscriptions,
    })
}

/// `protocol.features`: every name known, listed once and offered (required features
/// count as offered); both required features present; every dependency selected.
fn selected_features(
    protocol: &Map<String, Value>,
    offer: &InitializeOffer,
) -> Result<FeatureSet, NegotiationError> {
    let items = match protocol.get("features") {
        None => return Err(missing("protocol", "features")),
        Some(Value::Array(items)) => items,
        Some(_) => return Err(wrong_type("protocol", "features", "an array of strings")),
    };
    let mut features = FeatureSet::new();
    for (i, item) in items.iter().enumerate() {
        let Value::String(name) = item else {
            return Err(wrong_type(
                "protocol",
                &format!("features[{i}]"),
                "a string",
            ));
        };
        let feature = Feature::parse(name)
            .ok_or_else(|| NegotiationError::UnknownFeature { name: name.clone() })?;
        if !features.insert(feature) {
            return Err(NegotiationError::DuplicateFeature { feature });
        }
        if !offer.offers(feature) {
            return Err(NegotiationError::FeatureNotOffered { feature });
        }
    }
    if let Some(feature) = Feature::REQUIRED
        .into_iter()
        .find(|f| !features.contains(*f))
    {
        return Err(NegotiationError::MissingRequiredFeature { feature });
    }
    for feature in features.iter() {
        if let Some(&requires) = feature.requires().iter().find(|r| !features.contains(**r)) {
            return Err(NegotiationError::FeatureRequires { feature, requires });
        }
    }
    Ok(features)
}

/// `protocol.limits.max_concurrent_requests`: an integer greater than zero, capped by
/// the offer; the offer when absent.
fn concurrency(
    protocol: &Map<String, Value>,
    offer: &InitializeOffer,
) -> Result<u32, NegotiationError> {
    let Some(limits) = optional(protocol, "limits") else {
        return Ok(offer.max_concurrent_requests());
    };
    let limits = as_object(limits, "protocol.limits")?;
    let Some(value) = optional(limits, "max_concurrent_requests") else {
        return Ok(offer.max_concurrent_requests());
    };
    match value.as_u64() {
        Some(n) if n > 0 => Ok(n.min(u64::from(offer.max_concurrent_requests())) as u32),
        _ => Err(NegotiationError::InvalidConcurrency {
            value: value.to_string(),
        }),
    }
}

/// `protocol.limits.resource_refs_v1`, when an extension echoes it: exactly the limits
/// the host advertised.
fn resource_limits_echo(protocol: &Map<String, Value>) -> Result<(), NegotiationError> {
    let Some(echo) = optional(protocol, "limits")
        .and_then(Value::as_object)
        .and_then(|limits| optional(limits, "resource_refs_v1"))
    else {
        return Ok(());
    };
    let advertised = serde_json::json!({
        "max_records": limits::RESOURCE_REFS_MAX_RECORDS,
        "max_registrations_per_parent": limits::RESOURCE_REFS_MAX_REGISTRATIONS_PER_PARENT,
    });
    if *echo == advertised {
        Ok(())
    } else {
        Err(NegotiationError::ResourceLimitsEcho {
            value: crate::text::head(&echo.to_string(), 256).to_string(),
        })
    }
}

/// `protocol.lifecycle_events`: with the feature, omitted or empty means all six and
/// otherwise it is a duplicate-free subset of the six; without the feature it must be
/// omitted or empty.
fn lifecycle_subscriptions(
    protocol: &Map<String, Value>,
    features: FeatureSet,
) -> Result<Vec<LifecycleEvent>, NegotiationError> {
    let negotiated = features.contains(Feature::LifecycleEvents);
    let items = match optional(protocol, "lifecycle_events") {
        None => &[][..],
        Some(Value::Array(items)) => items.as_slice(),
        Some(_) => {
            return Err(wrong_type(
                "protocol",
                "lifecycle_events",
                "an array of strings",
            ))
        }
    };
    if items.is_empty() {
        return Ok(if negotiated {
            LifecycleEvent::ALL.to_vec()
        } else {
            Vec::new()
        });
    }
    let invalid = |problem| NegotiationError::InvalidLifecycleSubscription { problem };
    if !negotiated {
        return Err(invalid(LifecycleSubscriptionProblem::WithoutFeature));
    }
    let mut events = BTreeSet::new();
    for (i, item) in items.iter().enumerate() {
        let Value::String(name) = item else {
            return Err(wrong_type(
                "protocol",
                &format!("lifecycle_events[{i}]"),
                "a string",
            ));
        };
        let event = LifecycleEvent::parse(name).ok_or_else(|| {
            invalid(LifecycleSubscriptionProblem::UnknownEvent { name: name.clone() })
        })?;
        if !events.insert(event) {
            return Err(invalid(LifecycleSubscriptionProblem::DuplicateEvent {
                event,
            }));
        }
    }
    Ok(events.into_iter().collect())
}

/// The required array `member` of the result, at most `max` long, each element parsed
/// by `parse` with its path (such as `tools[3]`).
fn definitions<T>(
    result: &Map<String, Value>,
    member: &'static str,
    max: usize,
    parse: impl Fn(&Value, &str) -> Result<T, NegotiationError>,
) -> Result<Vec<T>, NegotiationError> {
    let items = match result.get(member) {
        None => return Err(missing("", member)),
        Some(Value::Array(items)) => items,
        Some(_) => return Err(wrong_type("", member, "an array")),
    };
    if items.len() > max {
        let count = items.len();
        return Err(if member == "tools" {
            NegotiationError::TooManyTools { count }
        } else {
            NegotiationError::TooManyCommands { count }
        });
    }
    items
        .iter()
        .enumerate()
        .map(|(i, item)| parse(item, &format!("{member}[{i}]")))
        .collect()
}

pub(super) fn check_unique<'a>(
    names: impl Iterator<Item = &'a String>,
    duplicate: impl Fn(String) -> NegotiationError,
) -> Result<(), NegotiationError> {
    let mut seen = BTreeSet::new();
    for name in names {
        if !seen.insert(name) {
            return Err(duplicate(name.clone()));
        }
    }
    Ok(())
}

/// `None` when `returned` equals `declared` as sets; otherwise the sorted names missing
/// from `returned` and the sorted names `declared` lacks.
pub(super) fn set_difference<'a>(
    declared: &[String],
    returned: impl Iterator<Item = &'a String>,
) -> Option<(Vec<String>, Vec<String>)> {
    let declared: BTreeSet<&String> = declared.iter().collect();
    let returned: BTreeSet<&String> = returned.collect();
    if declared == returned {
        return None;
    }
    let missing = declared
        .difference(&returned)
        .map(|s| (*s).clone())
        .collect();
    let unexpected = returned
        .difference(&declared)
        .map(|s| (*s).clone())
        .collect();
    Some((missing, unexpected))
}
