//! The API 0.3 extension-to-host services on the bound-service mechanism (SUPPLEMENT
//! "API 0.3 (canonical wire)", "Methods in brief"): `provider_auth`,
//! `provider_catalog` and `session_lifecycle`, with their closed models, their bounds,
//! and the traits an embedder implements.
//!
//! Every model is closed: an unknown member is refused, as is a missing required one.
//! On API 0.3 refusals use the fixed error table (-32602 "invalid params", with the
//! detail in `error.data.reason`), not the Wave-1 vocabulary.

use std::collections::HashSet;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::call::{RawReply, Reply, ServiceCall, ServiceResult};
use super::refusal::{Refusal, ServiceRefusal};
use super::wave1::RawService;
use super::{ServiceMethod, ServiceRequest};
use crate::limits::{
    CANONICAL_MAX_INTEGER, MAX_PROVIDER_ID_BYTES, MAX_PROVIDER_LEASE_BYTES, MAX_PROVIDER_MODELS,
    MAX_PROVIDER_SCOPES, MAX_PROVIDER_TEXT_BYTES, MAX_SESSION_ID_BYTES,
};
use serde_json::Map;

/// What a `provider/auth/*` request asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AuthAction {
    /// `authorize`.
    Authorize,
    /// `refresh`.
    Refresh,
    /// `revoke`.
    Revoke,
}

/// The params of `provider/auth/request` and `provider/auth/revoke`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderAuthParams {
    /// The provider, 1 to [`MAX_PROVIDER_ID_BYTES`] bytes.
    pub provider_id: String,
    /// What to do.
    pub action: AuthAction,
    /// Whether the person may be asked.
    pub interactive: bool,
    /// Requested scopes, at most [`MAX_PROVIDER_SCOPES`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes: Option<Vec<String>>,
}

/// The state a `provider/auth/*` answer reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AuthStatus {
    /// `ready`.
    Ready,
    /// `pending`.
    Pending,
    /// `denied`.
    Denied,
    /// `unavailable`.
    Unavailable,
    /// `revoked`.
    Revoked,
}

/// The answer of `provider/auth/request` and `provider/auth/revoke`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderAuthAnswer {
    /// The state.
    pub status: AuthStatus,
    /// An opaque lease, at most [`MAX_PROVIDER_LEASE_BYTES`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease: Option<String>,
}

/// How a provider authenticates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProviderAuthKind {
    /// `none`.
    None,
    /// `oauth`.
    Oauth,
    /// `host_credential`.
    HostCredential,
}

/// A provider's `auth` member.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderAuthInfo {
    /// The kind.
    pub kind: ProviderAuthKind,
    /// The subject, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    /// Scopes, at most [`MAX_PROVIDER_SCOPES`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes: Option<Vec<String>>,
}

/// A provider of `providers/register` and `providers/update`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderInfo {
    /// 1 to [`MAX_PROVIDER_ID_BYTES`] bytes.
    pub id: String,
    /// What people see.
    pub label: String,
    /// How it authenticates.
    pub auth: ProviderAuthInfo,
}

/// The wire protocol a model speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ModelProtocol {
    /// `openai_chat`.
    OpenaiChat,
    /// `openai_responses`.
    OpenaiResponses,
    /// `anthropic_messages`.
    AnthropicMessages,
}

/// What a model can do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelCapabilities {
    /// Tool calls.
    pub tools: bool,
    /// Parallel tool calls.
    pub parallel_tool_calls: bool,
    /// Structured output.
    pub structured_output: bool,
    /// Reasoning.
    pub reasoning: bool,
}

/// A model of `providers/register` and `providers/update`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderModel {
    /// Unique within the registration.
    pub id: String,
    /// The provider's name for it.
    pub api_name: String,
    /// Its wire protocol.
    pub protocol: ModelProtocol,
    /// Tokens of context, at least 1.
    pub context_window: u64,
    /// Most output tokens, at least 1.
    pub max_output_tokens: u64,
    /// What it can do.
    pub capabilities: ModelCapabilities,
    /// What people see.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
}

/// The params of `providers/register` and `providers/update`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderRegistration {
    /// The provider.
    pub provider: ProviderInfo,
    /// Its models, at most [`MAX_PROVIDER_MODELS`] with unique ids.
    pub models: Vec<ProviderModel>,
}

/// The answer of `providers/register`, `providers/update` and `providers/unregister`:
/// the host catalog after the change.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CatalogRevision {
    /// The catalog's revision.
    pub revision: u64,
    /// Every provider registered now.
    pub provider_ids: Vec<String>,
    /// Every model registered now.
    pub model_ids: Vec<String>,
}

/// The answer of `session/create|fork|reload|switch`: the session now meant.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionId {
    /// 1 to [`MAX_SESSION_ID_BYTES`] bytes.
    pub session_id: String,
}

impl ServiceResult for ProviderAuthAnswer {
    fn into_result(self) -> Value {
        serde_json::to_value(self).expect("plain data serializes")
    }
}

impl ServiceResult for CatalogRevision {
    fn into_result(self) -> Value {
        serde_json::to_value(self).expect("plain data serializes")
    }
}

impl ServiceResult for SessionId {
    fn into_result(self) -> Value {
        serde_json::to_value(self).expect("plain data serializes")
    }
}

/// `provider_auth` (API 0.3): the host's authentication for an extension's providers.
pub trait ProviderAuthService: Send + Sync + 'static {
    /// `provider/auth/request`.
    fn request(
        &self,
        call: ServiceCall,
        params: ProviderAuthParams,
        reply: Reply<ProviderAuthAnswer>,
    );
    /// `provider/auth/revoke`.
    fn revoke(
        &self,
        call: ServiceCall,
        params: ProviderAuthParams,
        reply: Reply<ProviderAuthAnswer>,
    );
}

/// `provider_catalog` (API 0.3): the providers and models an extension contributes.
pub trait ProviderCatalogService: Send + Sync + 'static {
    /// `providers/register`.
    fn register(
        &self,
        call: ServiceCall,
        registration: ProviderRegistration,
        reply: Reply<CatalogRevision>,
    );
    /// `providers/update`.
    fn update(
        &self,
        call: ServiceCall,
        registration: ProviderRegistration,
        reply: Reply<CatalogRevision>,
    );
    /// `providers/unregister`.
    fn unregister(&self, call: ServiceCall, provider_id: String, reply: Reply<CatalogRevision>);
    /// `providers/complete`: the extension registered everything it will at start. A
    /// notification: nothing is answered.
    fn complete(&self, call: ServiceCall);
}

/// `session_lifecycle` (API 0.3): the extension asks for session changes.
pub trait SessionLifecycleService: Send + Sync + 'static {
    /// `session/create`: a new session.
    fn create(&self, call: ServiceCall, reply: Reply<SessionId>);
    /// `session/fork`: a fork of the current session.
    fn fork(&self, call: ServiceCall, reply: Reply<SessionId>);
    /// `session/reload`: the current session, reopened.
    fn reload(&self, call: ServiceCall, reply: Reply<SessionId>);
    /// `session/switch`: make `session_id` current.
    fn switch(&self, call: ServiceCall, session_id: String, reply: Reply<SessionId>);
}

/// Routes requests of one API 0.3 capability to its trait.
pub(crate) struct Routed03<S: ?Sized>(pub Arc<S>);

fn misrouted(request: &ServiceRequest, reply: RawReply) {
    reply.refuse(
        Refusal::UnsupportedFeature.because(format!("{} is not bound here", request.method())),
    );
}

impl RawService for Routed03<dyn ProviderAuthService> {
    fn serve(&self, call: ServiceCall, request: ServiceRequest, reply: RawReply) {
        match request {
            ServiceRequest::ProviderAuthRequest(p) => self.0.request(call, p, Reply::new(reply)),
            ServiceRequest::ProviderAuthRevoke(p) => self.0.revoke(call, p, Reply::new(reply)),
            other => misrouted(&other, reply),
        }
    }
}

impl RawService for Routed03<dyn ProviderCatalogService> {
    fn serve(&self, call: ServiceCall, request: ServiceRequest, reply: RawReply) {
        match request {
            ServiceRequest::ProvidersRegister(r) => self.0.register(call, r, Reply::new(reply)),
            ServiceRequest::ProvidersUpdate(r) => self.0.update(call, r, Reply::new(reply)),
            ServiceRequest::ProvidersUnregister { provider_id } => {
                self.0.unregister(call, provider_id, Reply::new(reply))
            }
            ServiceRequest::ProvidersComplete => {
                self.0.complete(call);
                reply.discard();
            }
            other => misrouted(&other, reply),
        }
    }
}

impl RawService for Routed03<dyn SessionLifecycleService> {
    fn serve(&self, call: ServiceCall, request: ServiceRequest, reply: RawReply) {
        match request {
            ServiceRequest::SessionCreate => self.0.create(call, Reply::new(reply)),
            ServiceRequest::SessionFork => self.0.fork(call, Reply::new(reply)),
            ServiceRequest::SessionReload => self.0.reload(call, Reply::new(reply)),
            ServiceRequest::SessionSwitch { session_id } => {
                self.0.switch(call, session_id, Reply::new(reply))
            }
            other => misrouted(&other, reply),
        }
    }
}

impl ServiceRequest {
    /// The API 0.3 methods: closed models, no parent, no owner.
    pub(super) fn parse_v0_3(
        method: ServiceMethod,
        params: &Map<String, Value>,
    ) -> Result<Self, ServiceRefusal> {
        let value = Value::Object(params.clone());
        let empty = || match params.keys().next() {
            None => Ok(()),
            Some(extra) => Err(Refusal::InvalidRequest
                .because(format!("{} has no member `{extra}`", method.name()))),
        };
        #[derive(serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        struct ProviderIdParams {
            provider_id: String,
        }
        #[derive(serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        struct SwitchParams {
            session_id: String,
        }
        Ok(match method {
            ServiceMethod::ProviderAuthRequest | ServiceMethod::ProviderAuthRevoke => {
                let p: ProviderAuthParams = model(&value)?;
                check_auth(&p)?;
                if method == ServiceMethod::ProviderAuthRequest {
                    ServiceRequest::ProviderAuthRequest(p)
                } else {
                    ServiceRequest::ProviderAuthRevoke(p)
                }
            }
            ServiceMethod::ProvidersRegister | ServiceMethod::ProvidersUpdate => {
                let r: ProviderRegistration = model(&value)?;
                check_registration(&r)?;
                if method == ServiceMethod::ProvidersRegister {
                    ServiceRequest::ProvidersRegister(r)
                } else {
                    ServiceRequest::ProvidersUpdate(r)
                }
            }
            ServiceMethod::ProvidersUnregister => {
                let p: ProviderIdParams = model(&value)?;
                if p.provider_id.is_empty()
                    || p.provider_id.len() > crate::limits::MAX_PROVIDER_ID_BYTES
                {
                    return Err(Refusal::BoundsExceeded.because(format!(
                        "`provider_id` must be 1 to {} bytes",
                        crate::limits::MAX_PROVIDER_ID_BYTES
                    )));
                }
                ServiceRequest::ProvidersUnregister {
                    provider_id: p.provider_id,
                }
            }
            ServiceMethod::SessionSwitch => {
                let p: SwitchParams = model(&value)?;
                check_session_id(&p.session_id)?;
                ServiceRequest::SessionSwitch {
                    session_id: p.session_id,
                }
            }
            ServiceMethod::ProvidersComplete => {
                empty()?;
                ServiceRequest::ProvidersComplete
            }
            ServiceMethod::SessionCreate => {
                empty()?;
                ServiceRequest::SessionCreate
            }
            ServiceMethod::SessionFork => {
                empty()?;
                ServiceRequest::SessionFork
            }
            ServiceMethod::SessionReload => {
                empty()?;
                ServiceRequest::SessionReload
            }
            _ => unreachable!("the Wave-1 requests are parsed above"),
        })
    }
}

/// Reads a closed model.
pub(super) fn model<T: DeserializeOwned>(value: &Value) -> Result<T, ServiceRefusal> {
    T::deserialize(value).map_err(|e| Refusal::InvalidRequest.because(e.to_string()))
}

fn text(what: &str, value: &str, max: usize) -> Result<(), ServiceRefusal> {
    if value.is_empty() {
        return Err(Refusal::InvalidRequest.because(format!("`{what}` must not be empty")));
    }
    if value.len() > max {
        return Err(Refusal::BoundsExceeded
            .because(format!("`{what}` is {} bytes; at most {max}", value.len())));
    }
    Ok(())
}

fn scopes(what: &str, scopes: &Option<Vec<String>>) -> Result<(), ServiceRefusal> {
    let Some(scopes) = scopes else {
        return Ok(());
    };
    if scopes.len() > MAX_PROVIDER_SCOPES {
        return Err(Refusal::BoundsExceeded.because(format!(
            "`{what}` holds {} scopes; at most {MAX_PROVIDER_SCOPES}",
            scopes.len()
        )));
    }
    scopes
        .iter()
        .try_for_each(|s| text(what, s, MAX_PROVIDER_TEXT_BYTES))
}

/// Checks a `provider/auth/*` request's bounds.
pub(super) fn check_auth(params: &ProviderAuthParams) -> Result<(), ServiceRefusal> {
    text("provider_id", &params.provider_id, MAX_PROVIDER_ID_BYTES)?;
    scopes("scopes", &params.scopes)
}

/// Checks a registration's bounds: ids, texts, scopes, unique models, positive counts.
pub(super) fn check_registration(r: &ProviderRegistration) -> Result<(), ServiceRefusal> {
    text("provider.id", &r.provider.id, MAX_PROVIDER_ID_BYTES)?;
    text("provider.label", &r.provider.label, MAX_PROVIDER_TEXT_BYTES)?;
    if let Some(subject) = &r.provider.auth.subject {
        text("provider.auth.subject", subject, MAX_PROVIDER_TEXT_BYTES)?;
    }
    scopes("provider.auth.scopes", &r.provider.auth.scopes)?;
    if r.models.len() > MAX_PROVIDER_MODELS {
        return Err(Refusal::BoundsExceeded.because(format!(
            "{} models; at most {MAX_PROVIDER_MODELS}",
            r.models.len()
        )));
    }
    let mut ids = HashSet::new();
    for model in &r.models {
        text("models[].id", &model.id, MAX_PROVIDER_TEXT_BYTES)?;
        text(
            "models[].api_name",
            &model.api_name,
            MAX_PROVIDER_TEXT_BYTES,
        )?;
        if let Some(name) = &model.display_name {
            text("models[].display_name", name, MAX_PROVIDER_TEXT_BYTES)?;
        }
        for (what, n) in [
            ("context_window", model.context_window),
            ("max_output_tokens", model.max_output_tokens),
        ] {
            if n == 0 || n > CANONICAL_MAX_INTEGER {
                return Err(Refusal::InvalidRequest.because(format!(
                    "models[].{what} must lie within 1..={CANONICAL_MAX_INTEGER}"
                )));
            }
        }
        if !ids.insert(model.id.as_str()) {
            return Err(
                Refusal::InvalidRequest.because(format!("model `{}` appears twice", model.id))
            );
        }
    }
    Ok(())
}

/// Checks a session id's bounds.
pub(super) fn check_session_id(id: &str) -> Result<(), ServiceRefusal> {
    text("session_id", id, MAX_SESSION_ID_BYTES)
}

/// Checks an answer of `provider/auth/*`.
pub(super) fn check_auth_answer(value: &Value) -> Result<(), String> {
    let answer: ProviderAuthAnswer = model(value).map_err(|e| e.detail)?;
    match answer.lease {
        Some(lease) if lease.is_empty() || lease.len() > MAX_PROVIDER_LEASE_BYTES => Err(format!(
            "`lease` must be 1 to {MAX_PROVIDER_LEASE_BYTES} bytes"
        )),
        _ => Ok(()),
    }
}

/// Checks an answer of `providers/*`.
pub(super) fn check_revision(value: &Value) -> Result<(), String> {
    let answer: CatalogRevision = model(value).map_err(|e| e.detail)?;
    if answer.revision > CANONICAL_MAX_INTEGER {
        return Err(format!(
            "`revision` must be at most {CANONICAL_MAX_INTEGER}"
        ));
    }
    Ok(())
}

/// Checks an answer of `session/*`.
pub(super) fn check_session_answer(value: &Value) -> Result<(), String> {
    let answer: SessionId = model(value).map_err(|e| e.detail)?;
    check_session_id(&answer.session_id).map_err(|e| e.detail)
}
