//! The host services an embedder binds (sections 2.9, 2.10 and 1.1): policy,
//! approvals, secrets and provider credentials. Everything is denied or unavailable
//! unless the embedder binds an implementation.

use std::sync::Arc;

use crate::services::bound::ServiceBindings;
use crate::services::{
    Approver, CredentialResolver, DenyAll, PolicyEngine, SecretBroker, ToolPolicy,
};

/// What the embedder bound.
#[derive(Clone)]
pub struct HostServices {
    /// Classifies `policy/evaluate` intents; [`DenyAll`] by default.
    pub policy: Arc<dyn PolicyEngine>,
    /// Approves `ask` intents and so enables single-use approval tokens (the
    /// `approvals` feature is offered only when this is bound).
    pub approver: Option<Arc<dyn Approver>>,
    /// Serves `secret/get` (the `secrets` feature is offered only when this is bound and
    /// the manifest's secret allowlist is not empty).
    pub secrets: Option<Arc<dyn SecretBroker>>,
    /// Serves `provider/credentials` for manifests that declare it.
    pub credentials: Option<Arc<dyn CredentialResolver>>,
    /// Which tools extensions may register at run time (section 2.11); every valid
    /// registration is accepted when none is bound.
    pub tool_policy: Option<Arc<dyn ToolPolicy>>,
    /// Host-wide bindings of the Wave-1 services (sections 2.19-2.23): each bound
    /// feature is offered to every API 0.2 and 0.4 extension.
    pub bound: ServiceBindings,
}

impl Default for HostServices {
    fn default() -> HostServices {
        HostServices {
            policy: Arc::new(DenyAll),
            approver: None,
            secrets: None,
            credentials: None,
            tool_policy: None,
            bound: ServiceBindings::new(),
        }
    }
}

impl std::fmt::Debug for HostServices {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostServices")
            .field("approver", &self.approver.is_some())
            .field("secrets", &self.secrets.is_some())
            .field("credentials", &self.credentials.is_some())
            .field("tool_policy", &self.tool_policy.is_some())
            .field("bound", &self.bound)
            .finish_non_exhaustive()
    }
}
