//! The API 0.3 extension-to-host services an embedder binds: `provider_auth`,
//! `provider_catalog` and `session_lifecycle`, and how each is routed from a validated
//! request. On API 0.3 refusals use the fixed error table (-32602 "invalid params",
//! with the detail in `error.data`), not the Wave-1 vocabulary.

use std::sync::Arc;

use serde_json::Value;

use super::call::{RawReply, Reply, ServiceCall, ServiceResult};
use super::models03::{
    CatalogRevision, ProviderAuthAnswer, ProviderAuthParams, ProviderRegistration, SessionId,
};
use super::refusal::Refusal;
use super::request::ServiceRequest;
use super::wave1::RawService;

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
