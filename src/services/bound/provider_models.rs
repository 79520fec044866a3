//! The closed models of the API 0.3 extension-to-host services (SUPPLEMENT "API 0.3
//! (canonical wire)", "Methods in brief") and their bounds: `provider_auth`,
//! `provider_catalog`, `session_lifecycle`. Every model is closed: an unknown member is
//! refused, as is a missing required one.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

use super::params::ServiceParams;
use super::refusal::{Refusal, ServiceRefusal};
use super::results::ClosedResult;
use crate::limits::{
    CANONICAL_MAX_INTEGER, MAX_PROVIDER_ID_BYTES, MAX_PROVIDER_LEASE_BYTES, MAX_PROVIDER_MODELS,
    MAX_PROVIDER_SCOPES, MAX_PROVIDER_TEXT_BYTES, MAX_SESSION_ID_BYTES,
};

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

/// The params of `providers/unregister`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderRef {
    /// The provider, 1 to [`MAX_PROVIDER_ID_BYTES`] bytes.
    pub provider_id: String,
}

impl ServiceParams for ProviderAuthParams {
    fn check(&self) -> Result<(), ServiceRefusal> {
        text("provider_id", &self.provider_id, MAX_PROVIDER_ID_BYTES)?;
        scopes("scopes", &self.scopes)
    }
}

impl ServiceParams for ProviderRegistration {
    /// Checks a registration's bounds: ids, texts, scopes, unique models, positive counts.
    fn check(&self) -> Result<(), ServiceRefusal> {
        text("provider.id", &self.provider.id, MAX_PROVIDER_ID_BYTES)?;
        text(
            "provider.label",
            &self.provider.label,
            MAX_PROVIDER_TEXT_BYTES,
        )?;
        if let Some(subject) = &self.provider.auth.subject {
            text("provider.auth.subject", subject, MAX_PROVIDER_TEXT_BYTES)?;
        }
        scopes("provider.auth.scopes", &self.provider.auth.scopes)?;
        if self.models.len() > MAX_PROVIDER_MODELS {
            return Err(Refusal::BoundsExceeded.because(format!(
                "{} models; at most {MAX_PROVIDER_MODELS}",
                self.models.len()
            )));
        }
        let mut ids = HashSet::new();
        for model in &self.models {
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
}

impl ServiceParams for ProviderRef {
    fn check(&self) -> Result<(), ServiceRefusal> {
        text("provider_id", &self.provider_id, MAX_PROVIDER_ID_BYTES)
    }
}

/// `session/switch` names the session to make current.
impl ServiceParams for SessionId {
    fn check(&self) -> Result<(), ServiceRefusal> {
        text("session_id", &self.session_id, MAX_SESSION_ID_BYTES)
    }
}

impl ClosedResult for ProviderAuthAnswer {
    fn check_bounds(&self) -> Result<(), String> {
        match &self.lease {
            Some(lease) if lease.is_empty() || lease.len() > MAX_PROVIDER_LEASE_BYTES => Err(
                format!("`lease` must be 1 to {MAX_PROVIDER_LEASE_BYTES} bytes"),
            ),
            _ => Ok(()),
        }
    }
}

impl ClosedResult for CatalogRevision {
    fn check_bounds(&self) -> Result<(), String> {
        if self.revision > CANONICAL_MAX_INTEGER {
            return Err(format!(
                "`revision` must be at most {CANONICAL_MAX_INTEGER}"
            ));
        }
        Ok(())
    }
}

impl ClosedResult for SessionId {
    fn check_bounds(&self) -> Result<(), String> {
        ServiceParams::check(self).map_err(|e| e.detail)
    }
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
