//! The services through which an extension contributes model providers: `provider_auth`
//! and `provider_catalog` (API 0.3 capabilities), their traits and how each is routed
//! from a validated request. Their refusals use API 0.3's fixed error table (-32602
//! "invalid params", with the detail in `error.data`), the family their table rows name.

use serde_json::Value;

use super::call::{RawReply, Reply, ServiceCall, ServiceResult};
use super::provider_models::{
    CatalogRevision, ProviderAuthAnswer, ProviderAuthParams, ProviderRegistration, SessionId,
};
use super::request::ServiceRequest;
use super::route::{misrouted, RawService, Routed};

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
#[allow(unused_variables)] // default bodies refuse without reading the params
pub trait ProviderAuthService: Send + Sync + 'static {
    /// `provider/auth/request`.
    fn request(
        &self,
        call: ServiceCall,
        params: ProviderAuthParams,
        reply: Reply<ProviderAuthAnswer>,
    ) {
        reply.unsupported(&call);
    }
    /// `provider/auth/revoke`.
    fn revoke(
        &self,
        call: ServiceCall,
        params: ProviderAuthParams,
        reply: Reply<ProviderAuthAnswer>,
    ) {
        reply.unsupported(&call);
    }
}

/// `provider_catalog` (API 0.3): the providers and models an extension contributes.
#[allow(unused_variables)] // default bodies refuse without reading the params
pub trait ProviderCatalogService: Send + Sync + 'static {
    /// `providers/register`.
    fn register(
        &self,
        call: ServiceCall,
        registration: ProviderRegistration,
        reply: Reply<CatalogRevision>,
    ) {
        reply.unsupported(&call);
    }
    /// `providers/update`.
    fn update(
        &self,
        call: ServiceCall,
        registration: ProviderRegistration,
        reply: Reply<CatalogRevision>,
    ) {
        reply.unsupported(&call);
    }
    /// `providers/unregister`.
    fn unregister(&self, call: ServiceCall, provider_id: String, reply: Reply<CatalogRevision>) {
        reply.unsupported(&call);
    }
    /// `providers/complete`: the extension registered everything it will at start. A
    /// notification: nothing is answered.
    fn complete(&self, call: ServiceCall) {
        let _ = call;
    }
}

impl RawService for Routed<dyn ProviderAuthService> {
    fn serve(&self, call: ServiceCall, request: ServiceRequest, reply: RawReply) {
        match request {
            ServiceRequest::ProviderAuthRequest(p) => self.0.request(call, p, Reply::new(reply)),
            ServiceRequest::ProviderAuthRevoke(p) => self.0.revoke(call, p, Reply::new(reply)),
            other => misrouted(&other, reply),
        }
    }
}

impl RawService for Routed<dyn ProviderCatalogService> {
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
