//! `provider/credentials` (section 1.1): one named native provider/model credential,
//! resolved through the host's own authentication.
//!
//! The reference names the method and its guarantees but not its params or result.
//! This host's choice: params are the closed object
//! `{"parent_request_id": u64, "provider": string, "model": string}`, both names
//! non-empty, at most [`MAX_PROVIDER_IDENTITY_BYTES`] UTF-8 bytes and free of control
//! characters; the result is `{"provider": string, "model": string, "credential":
//! string}` echoing exactly the requested identity. Errors follow `secret/get`.
//!
//! [`MAX_PROVIDER_IDENTITY_BYTES`]: crate::limits::MAX_PROVIDER_IDENTITY_BYTES

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::broker::BrokerError;
use super::value::SecretValue;
use crate::limits::{MAX_PROVIDER_CREDENTIAL_BYTES, MAX_PROVIDER_IDENTITY_BYTES};
use crate::negotiation::{Feature, FeatureSet};
use crate::services::operation::{
    check_label, closed_object, parent_request_id, required_str, OperationContext, ServiceError,
};
use crate::services::owner::ResourceOwner;

/// One credential lookup, with the identity the host derived from the active parent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CredentialRequest<'a> {
    /// The requesting extension's name.
    pub extension: &'a str,
    /// The active parent's complete resource owner.
    pub owner: &'a ResourceOwner,
    /// The active parent's host request id.
    pub parent_request_id: u64,
    /// The exact provider named.
    pub provider: &'a str,
    /// The exact model named.
    pub model: &'a str,
    /// Set once the answer is no longer wanted (the parent settled, the extension
    /// cancelled the request): a service that waits, on a person or a remote client,
    /// can stop waiting then. `None` where nothing can cancel it.
    pub cancelled: Option<&'a crate::cancel_flag::CancelFlag>,
}

/// A resolved credential and the identity it belongs to.
#[derive(Debug)]
pub struct ProviderCredential {
    /// The provider the credential is for.
    pub provider: String,
    /// The model the credential is for.
    pub model: String,
    /// The credential itself.
    pub credential: SecretValue,
}

/// The host's own authentication resolution, which an embedder binds (section 1.1).
/// It is consulted on the thread that runs [`provider_credentials`], so it must answer
/// promptly.
pub trait CredentialResolver: Send + Sync {
    /// Resolves the credential of exactly the named provider and model: `Ok(None)`
    /// when there is none.
    fn resolve(
        &self,
        request: &CredentialRequest<'_>,
    ) -> Result<Option<ProviderCredential>, BrokerError>;
}

/// An in-memory reference resolver for tests and demonstrations: credentials keyed by
/// the exact provider and model.
#[derive(Debug, Default)]
pub struct InMemoryCredentialResolver {
    credentials: HashMap<(String, String), SecretValue>,
}

impl InMemoryCredentialResolver {
    /// A resolver without credentials.
    pub fn new() -> InMemoryCredentialResolver {
        InMemoryCredentialResolver::default()
    }

    /// Adds (or replaces) the credential of `provider`/`model`.
    pub fn with_credential(
        mut self,
        provider: impl Into<String>,
        model: impl Into<String>,
        credential: impl Into<SecretValue>,
    ) -> InMemoryCredentialResolver {
        self.credentials
            .insert((provider.into(), model.into()), credential.into());
        self
    }
}

impl CredentialResolver for InMemoryCredentialResolver {
    fn resolve(
        &self,
        request: &CredentialRequest<'_>,
    ) -> Result<Option<ProviderCredential>, BrokerError> {
        let key = (request.provider.to_owned(), request.model.to_owned());
        Ok(self
            .credentials
            .get(&key)
            .map(|credential| ProviderCredential {
                provider: key.0.clone(),
                model: key.1.clone(),
                credential: SecretValue::from(credential.expose()),
            }))
    }
}

#[doc(hidden)]
/// Answers one `provider/credentials` request (section 1.1; shape in the module
/// documentation).
///
/// The steps, in order:
///
/// 1. Unless the manifest `declared` `[capabilities].provider_credentials = true` and
///    the generation negotiated `provider_credentials`, the method does not exist:
///    -32601.
/// 2. Malformed params: -32602.
/// 3. Without a resolver: -32002. When `parent_request_id` is not the active parent of
///    `ctx` or that parent has no resource owner: -32002.
/// 4. The resolver gets the extension, owner, parent id, provider and model. No
///    credential, a failure, a credential for any other provider or model (never
///    widened), and a credential over [`MAX_PROVIDER_CREDENTIAL_BYTES`] all give the
///    same -32004 "provider credential is unavailable".
///
/// The returned object owns the only host copy of the credential: wipe it with
/// [`super::wipe_json`] once its frame is written.
pub fn provider_credentials(
    params: &Value,
    declared: bool,
    features: &FeatureSet,
    resolver: Option<&dyn CredentialResolver>,
    ctx: &OperationContext<'_>,
) -> Result<Value, ServiceError> {
    if !declared || !features.contains(Feature::ProviderCredentials) {
        return Err(ServiceError::NotNegotiated);
    }
    let map = closed_object(
        params,
        "params",
        &["parent_request_id", "provider", "model"],
    )?;
    let parent = parent_request_id(params)?;
    let provider = required_str(map, "provider", "provider")?;
    check_label(provider, "provider", MAX_PROVIDER_IDENTITY_BYTES)?;
    let model = required_str(map, "model", "model")?;
    check_label(model, "model", MAX_PROVIDER_IDENTITY_BYTES)?;
    let resolver = resolver.ok_or(ServiceError::NoService)?;
    let owner = ctx.owner_of(parent)?;
    let request = CredentialRequest {
        extension: ctx.extension,
        owner,
        parent_request_id: parent,
        provider,
        model,
        cancelled: ctx.cancelled,
    };
    match resolver.resolve(&request) {
        Ok(Some(resolved))
            if resolved.provider == provider
                && resolved.model == model
                && resolved.credential.len() <= MAX_PROVIDER_CREDENTIAL_BYTES =>
        {
            let mut result = Map::new();
            result.insert("provider".to_owned(), Value::from(provider));
            result.insert("model".to_owned(), Value::from(model));
            result.insert(
                "credential".to_owned(),
                Value::String(resolved.credential.into_string()),
            );
            Ok(Value::Object(result))
        }
        Ok(_) | Err(_) => Err(ServiceError::CredentialUnavailable),
    }
}
