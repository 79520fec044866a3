//! The values of single control-line members: each parser names the member and the
//! rule it breaks, never the value that was sent (`control` explains why).

use serde_json::{Map, Value};

use super::bindings::ServeBinding;
use super::error::{ErrorCode, ServeError};
use super::fields::Fields;
use crate::features::offers::RuntimeOffers;
use crate::limits::MAX_HOST_NOTIFICATION_BYTES;
use crate::manifest::UiSurface;
use crate::negotiation::Feature;
use crate::services::bound::{Refusal, ServiceRefusal};
use crate::validate::{ExtensionMenuItem, HookName, HookPayload};

/// `item`: the menu action to run, as the `menu` result shows it (`id`, `label`,
/// `command`, `arguments`, `destructive`, `description`).
pub(super) fn menu_item(item: &Map<String, Value>) -> Result<ExtensionMenuItem, ServeError> {
    let i = Fields::new(item, "item.");
    Ok(ExtensionMenuItem::Action {
        id: i.string("id")?,
        label: i.string("label")?,
        command: i.string("command")?,
        arguments: i.opt_strings("arguments")?,
        recommended: false,
        destructive: i.opt_bool("destructive")?.unwrap_or(false),
        description: i.opt_string("description")?,
    })
}

/// `surface`: `"status"` (the default), `"header"` or `"footer"`.
pub(super) fn surface(name: Option<&str>) -> Result<UiSurface, ServeError> {
    match name {
        None => Ok(UiSurface::Status),
        Some(name) => UiSurface::parse(name)
            .ok_or_else(|| ServeError::invalid_value("surface", &["status", "header", "footer"])),
    }
}

/// `hook` and `payload`, typed per hook as the host sends it (section 1.4).
/// The schema leaves `payload` optional (a hook names its own members); every hook
/// this serve runs has one.
pub(super) fn hook_payload(
    name: &str,
    payload: Option<&Map<String, Value>>,
) -> Result<HookPayload, ServeError> {
    let hook = HookName::parse(name).ok_or_else(|| {
        let names: Vec<&str> = HookName::ALL.iter().map(|h| h.as_str()).collect();
        ServeError::invalid_value("hook", &names)
    })?;
    let payload = payload.ok_or_else(|| ServeError::missing("payload"))?;
    let p = Fields::new(payload, "payload.");
    Ok(match hook {
        HookName::BeforePrompt => HookPayload::BeforePrompt {
            prompt: p.string("prompt")?,
        },
        HookName::AfterResponse => HookPayload::AfterResponse {
            response: p.string("response")?,
        },
        HookName::BeforeToolCall => HookPayload::BeforeToolCall {
            name: p.string("name")?,
            arguments: p.object_or_empty("arguments")?,
        },
        HookName::AfterToolCall => HookPayload::AfterToolCall {
            name: p.string("name")?,
            arguments: p.object_or_empty("arguments")?,
            output: p.string("output")?,
            is_error: p.bool("is_error")?,
        },
        HookName::ModelTurnStart => HookPayload::ModelTurnStart {
            run_id: p.string("run_id")?,
            turn_index: p.u64("turn_index")?,
            timestamp_ms: p.u64("timestamp_ms")?,
        },
        HookName::ModelTurnEnd => HookPayload::ModelTurnEnd {
            run_id: p.string("run_id")?,
            turn_index: p.u64("turn_index")?,
            timestamp_ms: p.u64("timestamp_ms")?,
            assistant_entry: p.value("assistant_entry")?,
            tool_result_entries: p.array("tool_result_entries")?,
        },
        HookName::ProviderRetry => HookPayload::ProviderRetry(typed_payload(payload)?),
        HookName::BeforePersistence => HookPayload::BeforePersistence(typed_payload(payload)?),
        HookName::PostMutation => {
            let mutation: crate::validate::PostMutationPayload = typed_payload(payload)?;
            mutation.check().map_err(|why| {
                ServeError::new(ErrorCode::InvalidValue, format!("`payload`: {why}"))
            })?;
            HookPayload::PostMutation(mutation)
        }
        HookName::SessionBeforeCompact | HookName::SessionCompact => HookPayload::Other {
            hook,
            payload: Value::Object(payload.clone()),
        },
    })
}

/// A typed API 0.2 hook's closed payload (SUPPLEMENT "API 0.2 typed hooks").
fn typed_payload<T: serde::de::DeserializeOwned>(
    payload: &serde_json::Map<String, Value>,
) -> Result<T, ServeError> {
    serde_json::from_value(Value::Object(payload.clone())).map_err(|e| {
        ServeError::new(ErrorCode::InvalidValue, format!("`payload`: {e}")).with("field", "payload")
    })
}

/// An unsigned 16-bit member (a terminal size).
pub(super) fn u16_field(f: &Fields, name: &str) -> Result<u16, ServeError> {
    u16::try_from(f.u64(name)?)
        .map_err(|_| ServeError::wrong_type(&f.name(name), "an integer from 0 to 65535"))
}

/// `services`: the request services (feature or capability names) and brokers the
/// client will answer.
pub(super) fn services(requested: Vec<String>) -> Result<Vec<ServeBinding>, ServeError> {
    let names = ServeBinding::names();
    let mut bindings = Vec::new();
    for name in requested {
        let binding = ServeBinding::from_name(&name)
            .ok_or_else(|| ServeError::invalid_value("services", &names))?;
        if !bindings.contains(&binding) {
            bindings.push(binding);
        }
    }
    Ok(bindings)
}

/// `features`: the runtime-served features (of [`RuntimeOffers::FEATURES`]) to offer
/// the extension.
pub(super) fn runtime_features(requested: Vec<String>) -> Result<Vec<Feature>, ServeError> {
    let names: Vec<&str> = RuntimeOffers::FEATURES.iter().map(|f| f.as_str()).collect();
    let mut features = Vec::new();
    for name in requested {
        let feature = Feature::parse(&name)
            .filter(|feature| RuntimeOffers::FEATURES.contains(feature))
            .ok_or_else(|| ServeError::invalid_value("features", &names))?;
        if !features.contains(&feature) {
            features.push(feature);
        }
    }
    Ok(features)
}

/// The params of a `notify`: a closed object with only `members` (section 1.11: "every
/// payload is a bounded plain object"), of at most [`MAX_HOST_NOTIFICATION_BYTES`] as
/// compact JSON. Anything else is refused with `notification_refused` and never sent.
pub(super) fn closed_notification<'a>(
    method: &str,
    params: &'a Value,
    members: &[&str],
) -> Result<Fields<'a>, ServeError> {
    let object = params.as_object().expect("object_or_empty gives an object");
    let size = serde_json::to_vec(params).map_or(usize::MAX, |bytes| bytes.len());
    if size > MAX_HOST_NOTIFICATION_BYTES {
        return Err(refused_notification(Refusal::BoundsExceeded.because(
            format!("a {method} payload of {size} bytes; at most {MAX_HOST_NOTIFICATION_BYTES}"),
        )));
    }
    if let Some(member) = object.keys().find(|k| !members.contains(&k.as_str())) {
        return Err(refused_notification(Refusal::InvalidRequest.because(
            format!("{method} has no member `{member}`; its params are exactly {members:?}"),
        )));
    }
    Ok(Fields::new(object, "params."))
}

/// The `notification_refused` error for `refusal`, with the contract name.
pub(crate) fn refused_notification(refusal: ServiceRefusal) -> ServeError {
    ServeError::new(ErrorCode::NotificationRefused, refusal.to_string())
        .with("refusal", refusal.refusal.name())
}

/// `delta` (one string) or `deltas` (an array of strings; `updates` is an alias).
pub(super) fn message_deltas(
    delta: Option<String>,
    deltas: Option<Vec<String>>,
    updates: Option<Vec<String>>,
) -> Result<Vec<String>, ServeError> {
    match (delta, deltas.or(updates)) {
        (Some(delta), _) => Ok(vec![delta]),
        (None, Some(deltas)) => Ok(deltas),
        (None, None) => Err(ServeError::missing("delta")),
    }
}
