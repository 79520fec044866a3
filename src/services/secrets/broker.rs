//! The secret broker and the `secret/get` flow (section 2.10).

use std::collections::HashMap;
use std::fmt;

use serde_json::{Map, Value};

use super::value::SecretValue;
use crate::limits::MAX_SECRET_VALUE_BYTES;
use crate::manifest::rules::check_secret_name;
use crate::negotiation::{Feature, FeatureSet};
use crate::services::operation::{
    closed_object, parent_request_id, required_str, OperationContext, ParamsError, ServiceError,
};
use crate::services::owner::ResourceOwner;

/// One secret lookup, with the identity the host derived from the active parent
/// rather than from the request (section 2.10).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SecretRequest<'a> {
    /// The requesting extension's name.
    pub extension: &'a str,
    /// The active parent's complete resource owner.
    pub owner: &'a ResourceOwner,
    /// The active parent's host request id.
    pub parent_request_id: u64,
    /// The exact logical secret name, declared in the manifest's allowlist.
    pub name: &'a str,
    /// Set once the answer is no longer wanted (the parent settled, the extension
    /// cancelled the request): a service that waits, on a person or a remote client,
    /// can stop waiting then. `None` where nothing can cancel it.
    pub cancelled: Option<&'a crate::cancel_flag::CancelFlag>,
}

/// Why a broker or credential resolver could not answer. The host keeps this to
/// itself: the extension only ever sees the one -32004 response.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BrokerError {
    /// The provider behind the broker could not be reached.
    Unreachable,
    /// The provider refused this identity, owner or name.
    Refused,
    /// Any other provider failure.
    Failed,
}

impl fmt::Display for BrokerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BrokerError::Unreachable => "the secret provider could not be reached",
            BrokerError::Refused => "the secret provider refused the request",
            BrokerError::Failed => "the secret provider failed",
        })
    }
}

impl std::error::Error for BrokerError {}

/// A host-side secret broker an embedder binds (section 2.10). It is consulted on the
/// thread that runs [`secret_get`], so it must answer promptly.
pub trait SecretBroker: Send + Sync {
    /// Looks one secret up: `Ok(None)` when it has no value for the request.
    fn get(&self, request: &SecretRequest<'_>) -> Result<Option<SecretValue>, BrokerError>;
}

/// An in-memory reference broker for tests and demonstrations: values keyed by the
/// exact extension name and secret name.
#[derive(Debug, Default)]
pub struct InMemorySecretBroker {
    secrets: HashMap<(String, String), SecretValue>,
}

impl InMemorySecretBroker {
    /// A broker without secrets.
    pub fn new() -> InMemorySecretBroker {
        InMemorySecretBroker::default()
    }

    /// Adds (or replaces) `extension`'s secret `name`.
    pub fn with_secret(
        mut self,
        extension: impl Into<String>,
        name: impl Into<String>,
        value: impl Into<SecretValue>,
    ) -> InMemorySecretBroker {
        self.secrets
            .insert((extension.into(), name.into()), value.into());
        self
    }
}

impl SecretBroker for InMemorySecretBroker {
    fn get(&self, request: &SecretRequest<'_>) -> Result<Option<SecretValue>, BrokerError> {
        let key = (request.extension.to_owned(), request.name.to_owned());
        Ok(self
            .secrets
            .get(&key)
            .map(|value| SecretValue::from(value.expose())))
    }
}

#[doc(hidden)]
/// Answers one `secret/get` request (section 2.10) with `{"value": string}`.
///
/// The steps, in order:
///
/// 1. Without negotiated `secrets` the method does not exist: -32601.
/// 2. `params` is the closed object `{parent_request_id, name}`, `parent_request_id`
///    an unsigned integer, `name` a string: -32602 otherwise.
/// 3. `name` must be a valid secret name (section 1.1) and exactly (byte for byte)
///    one of `declared`, the manifest's `[capabilities].secrets`: -32602 otherwise.
/// 4. Without a broker: -32002. When `parent_request_id` is not the active parent of
///    `ctx` or that parent has no resource owner: -32002.
/// 5. The broker gets the extension, the complete owner, the parent id and the name.
///    No value, a failure, and a value over [`MAX_SECRET_VALUE_BYTES`] (64 KiB;
///    sections 2.10 and 4 cap values there, and this host refuses rather than
///    truncates) all give the same -32004 "secret is unavailable"; an over-long value
///    is wiped at once.
///
/// The returned object owns the only host copy of the value: wipe it with
/// [`super::wipe_json`] once its frame is written (and the frame with
/// [`super::wipe_bytes`]).
pub fn secret_get(
    params: &Value,
    declared: &[String],
    features: &FeatureSet,
    broker: Option<&dyn SecretBroker>,
    ctx: &OperationContext<'_>,
) -> Result<Value, ServiceError> {
    if !features.contains(Feature::Secrets) {
        return Err(ServiceError::NotNegotiated);
    }
    let map = closed_object(params, "params", &["parent_request_id", "name"])?;
    let parent = parent_request_id(params)?;
    let name = required_str(map, "name", "name")?;
    check_secret_name(name).map_err(ParamsError::InvalidSecretName)?;
    if !declared.iter().any(|declared| declared == name) {
        return Err(ParamsError::UndeclaredSecret.into());
    }
    let broker = broker.ok_or(ServiceError::NoService)?;
    let owner = ctx.owner_of(parent)?;
    let request = SecretRequest {
        extension: ctx.extension,
        owner,
        parent_request_id: parent,
        name,
        cancelled: ctx.cancelled,
    };
    match broker.get(&request) {
        Ok(Some(value)) if value.len() <= MAX_SECRET_VALUE_BYTES => {
            let mut result = Map::new();
            result.insert("value".to_owned(), Value::String(value.into_string()));
            Ok(Value::Object(result))
        }
        Ok(_) | Err(_) => Err(ServiceError::SecretUnavailable),
    }
}
