//! The values of single control-line members: each parser names the member and the
//! rule it breaks, never the value that was sent (`control` explains why).

use serde_json::Value;

use super::bindings::ServeBinding;
use super::error::{ErrorCode, ServeError};
use super::fields::Fields;
use crate::features::offers::RuntimeOffers;
use crate::host::{LifecycleNotification, Outcome, Settlement};
use crate::limits::MAX_HOST_NOTIFICATION_BYTES;
use crate::manifest::UiSurface;
use crate::negotiation::Feature;
use crate::services::bound::{Refusal, ServiceRefusal};
use crate::validate::{ExtensionMenuItem, HookName, HookPayload};

/// `item`: the menu action to run, as the `menu` result shows it (`id`, `label`,
/// `command`, `arguments`, `destructive`, `description`).
pub(super) fn menu_item(f: &Fields) -> Result<ExtensionMenuItem, ServeError> {
    let item = match f.object.get("item") {
        None | Some(Value::Null) => return Err(ServeError::missing("item")),
        Some(Value::Object(item)) => item,
        Some(_) => return Err(ServeError::wrong_type("item", "an object")),
    };
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
pub(super) fn surface(f: &Fields) -> Result<UiSurface, ServeError> {
    match f.opt_string("surface")? {
        None => Ok(UiSurface::Status),
        Some(name) => UiSurface::parse(&name)
            .ok_or_else(|| ServeError::invalid_value("surface", &["status", "header", "footer"])),
    }
}

/// `hook` and `payload`, typed per hook as the host sends it (section 1.4).
pub(super) fn hook_payload(f: &Fields) -> Result<HookPayload, ServeError> {
    let name = f.string("hook")?;
    let hook = HookName::parse(&name).ok_or_else(|| {
        let names: Vec<&str> = HookName::ALL.iter().map(|h| h.as_str()).collect();
        ServeError::invalid_value("hook", &names)
    })?;
    let payload = match f.object.get("payload") {
        None | Some(Value::Null) => return Err(ServeError::missing("payload")),
        Some(Value::Object(payload)) => payload,
        Some(_) => return Err(ServeError::wrong_type("payload", "an object")),
    };
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

/// Every outcome, for parsing.
const OUTCOMES: [Outcome; 7] = [
    Outcome::Completed,
    Outcome::Failed,
    Outcome::Cancelled,
    Outcome::Interrupted,
    Outcome::FrontendDisconnected,
    Outcome::Shutdown,
    Outcome::LimitReached,
];

/// The lifecycle event names, as `event` takes them (the notification methods).
const LIFECYCLE_EVENTS: &[&str] = &[
    "session/started",
    "session/settled",
    "turn/started",
    "turn/settled",
    "tool/started",
    "tool/settled",
];

/// `event` plus the notification's params, flattened as on the wire (section 1.10).
pub(super) fn lifecycle(f: &Fields) -> Result<LifecycleNotification, ServeError> {
    let event = f.string("event")?;
    let settlement = || -> Result<Settlement, ServeError> {
        let outcome = f.string("outcome")?;
        let outcome = OUTCOMES
            .into_iter()
            .find(|o| o.as_str() == outcome)
            .ok_or_else(|| {
                let names: Vec<&str> = OUTCOMES.iter().map(|o| o.as_str()).collect();
                ServeError::invalid_value("outcome", &names)
            })?;
        Ok(Settlement {
            outcome,
            duration_ms: f.u64("duration_ms")?,
            reason: f.opt_string("reason")?,
        })
    };
    let session_id = f.string("session_id")?;
    Ok(match event.as_str() {
        "session/started" => LifecycleNotification::SessionStarted { session_id },
        "session/settled" => LifecycleNotification::SessionSettled {
            session_id,
            settlement: settlement()?,
        },
        "turn/started" => LifecycleNotification::TurnStarted {
            session_id,
            run_id: f.string("run_id")?,
            turn_id: f.string("turn_id")?,
        },
        "turn/settled" => LifecycleNotification::TurnSettled {
            session_id,
            run_id: f.string("run_id")?,
            turn_id: f.string("turn_id")?,
            settlement: settlement()?,
        },
        "tool/started" => LifecycleNotification::ToolStarted {
            session_id,
            run_id: f.string("run_id")?,
            turn_id: f.string("turn_id")?,
            tool_call_id: f.string("tool_call_id")?,
            tool_name: f.string("tool_name")?,
        },
        "tool/settled" => LifecycleNotification::ToolSettled {
            session_id,
            run_id: f.string("run_id")?,
            turn_id: f.string("turn_id")?,
            tool_call_id: f.string("tool_call_id")?,
            tool_name: f.string("tool_name")?,
            settlement: settlement()?,
        },
        _ => return Err(ServeError::invalid_value("event", LIFECYCLE_EVENTS)),
    })
}

/// An unsigned 16-bit member (a terminal size).
pub(super) fn u16_field(f: &Fields, name: &str) -> Result<u16, ServeError> {
    u16::try_from(f.u64(name)?)
        .map_err(|_| ServeError::wrong_type(&f.name(name), "an integer from 0 to 65535"))
}

/// `services`: the request services (feature or capability names) and brokers the
/// client will answer.
pub(super) fn services(f: &Fields) -> Result<Vec<ServeBinding>, ServeError> {
    let names = ServeBinding::names();
    let mut bindings = Vec::new();
    for name in f.opt_strings("services")? {
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
pub(super) fn runtime_features(f: &Fields) -> Result<Vec<Feature>, ServeError> {
    let names: Vec<&str> = RuntimeOffers::FEATURES.iter().map(|f| f.as_str()).collect();
    let mut features = Vec::new();
    for name in f.opt_strings("features")? {
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
pub(super) fn message_deltas(f: &Fields) -> Result<Vec<String>, ServeError> {
    if let Some(delta) = f.opt_string("delta")? {
        return Ok(vec![delta]);
    }
    let name = if f.get("deltas").is_some() {
        "deltas"
    } else {
        "updates"
    };
    if f.get(name).is_none() {
        return Err(ServeError::missing("delta"));
    }
    f.opt_strings(name)
}
