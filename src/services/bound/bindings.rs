//! Which services an embedder bound, by feature: the host-wide set on the builder, and
//! per extension on the builder or at [`crate::host::StartOptions::services`].

use std::collections::BTreeMap;
use std::sync::Arc;

use super::kind::ServiceKind;
use super::v0_3::{ProviderAuthService, ProviderCatalogService, Routed03, SessionLifecycleService};
use super::wave1::{
    ActiveToolsService, ComposerService, MessageInjectionService, RawService, Routed,
    SessionEntryService, ShortcutService,
};

/// The services bound for a host or an extension, keyed by the [`ServiceKind`] each one
/// serves. A kind is offered in `initialize` only when its service is bound and the
/// reference's own conditions hold: the Wave-1 features on API 0.2 and 0.4, the
/// `provider_auth`, `provider_catalog` and `session_lifecycle` capabilities (with their
/// methods) on API 0.3. A request for a feature that was not negotiated is refused with
/// -32601 `unsupported_feature`.
///
/// ```
/// use octet_host::services::bound::{ComposerService, ComposerText, Reply, ServiceBindings, ServiceCall};
/// use std::sync::Mutex;
///
/// #[derive(Default)]
/// struct Composer(Mutex<String>);
///
/// impl ComposerService for Composer {
///     fn get(&self, _call: ServiceCall, reply: Reply<ComposerText>) {
///         reply.ok(ComposerText(self.0.lock().unwrap().clone()));
///     }
///     fn set(&self, _call: ServiceCall, text: String, reply: Reply<()>) {
///         *self.0.lock().unwrap() = text;
///         reply.ok(());
///     }
///     fn insert(&self, _call: ServiceCall, text: String, reply: Reply<()>) {
///         self.0.lock().unwrap().push_str(&text);
///         reply.ok(());
///     }
/// }
///
/// let services = ServiceBindings::new().composer(Composer::default());
/// assert_eq!(services.kinds().count(), 1);
/// ```
#[derive(Clone, Default)]
pub struct ServiceBindings {
    bound: BTreeMap<ServiceKind, Arc<dyn RawService>>,
}

impl ServiceBindings {
    /// No services.
    pub fn new() -> ServiceBindings {
        ServiceBindings::default()
    }

    /// Binds the composer (feature `composer`, section 2.19).
    pub fn composer(self, service: impl ComposerService) -> ServiceBindings {
        let service: Arc<dyn ComposerService> = Arc::new(service);
        self.bind(ServiceKind::Composer, Arc::new(Routed(service)))
    }

    /// Binds runtime shortcuts (feature `shortcuts`, section 2.20).
    pub fn shortcuts(self, service: impl ShortcutService) -> ServiceBindings {
        let service: Arc<dyn ShortcutService> = Arc::new(service);
        self.bind(ServiceKind::Shortcuts, Arc::new(Routed(service)))
    }

    /// Binds session entries (feature `session_entries`, section 2.21).
    pub fn session_entries(self, service: impl SessionEntryService) -> ServiceBindings {
        let service: Arc<dyn SessionEntryService> = Arc::new(service);
        self.bind(ServiceKind::SessionEntries, Arc::new(Routed(service)))
    }

    /// Binds message injection (feature `message_injection`, section 2.22). It also
    /// lets the host send `message/updated` batches (section 1.11).
    pub fn message_injection(self, service: impl MessageInjectionService) -> ServiceBindings {
        let service: Arc<dyn MessageInjectionService> = Arc::new(service);
        self.bind(ServiceKind::MessageInjection, Arc::new(Routed(service)))
    }

    /// Binds the active tool set (feature `active_tools`, section 2.23).
    pub fn active_tools(self, service: impl ActiveToolsService) -> ServiceBindings {
        let service: Arc<dyn ActiveToolsService> = Arc::new(service);
        self.bind(ServiceKind::ActiveTools, Arc::new(Routed(service)))
    }

    /// Binds API 0.3 `provider_auth` (`provider/auth/request`, `provider/auth/revoke`).
    pub fn provider_auth(self, service: impl ProviderAuthService) -> ServiceBindings {
        let service: Arc<dyn ProviderAuthService> = Arc::new(service);
        self.bind(ServiceKind::ProviderAuth, Arc::new(Routed03(service)))
    }

    /// Binds API 0.3 `provider_catalog` (`providers/register|update|unregister`,
    /// `providers/complete`).
    pub fn provider_catalog(self, service: impl ProviderCatalogService) -> ServiceBindings {
        let service: Arc<dyn ProviderCatalogService> = Arc::new(service);
        self.bind(ServiceKind::ProviderCatalog, Arc::new(Routed03(service)))
    }

    /// Binds API 0.3 `session_lifecycle` (`session/create|fork|reload|switch`).
    pub fn session_lifecycle(self, service: impl SessionLifecycleService) -> ServiceBindings {
        let service: Arc<dyn SessionLifecycleService> = Arc::new(service);
        self.bind(ServiceKind::SessionLifecycle, Arc::new(Routed03(service)))
    }

    /// The bound kinds, in a stable order.
    pub fn kinds(&self) -> impl Iterator<Item = ServiceKind> + '_ {
        self.bound.keys().copied()
    }

    /// True when `kind` has a service.
    pub fn is_bound(&self, kind: ServiceKind) -> bool {
        self.bound.contains_key(&kind)
    }

    /// True when nothing is bound.
    pub fn is_empty(&self) -> bool {
        self.bound.is_empty()
    }

    /// Binds `kind` to a JSON-level service (how `serve` forwards to its client).
    pub(crate) fn bind(
        mut self,
        kind: ServiceKind,
        service: Arc<dyn RawService>,
    ) -> ServiceBindings {
        self.bound.insert(kind, service);
        self
    }

    /// The service of `kind`.
    pub(crate) fn get(&self, kind: ServiceKind) -> Option<&Arc<dyn RawService>> {
        self.bound.get(&kind)
    }

    /// These bindings over `base`: each kind bound here replaces base's.
    pub(crate) fn over(&self, base: &ServiceBindings) -> ServiceBindings {
        let mut merged = base.clone();
        for (kind, service) in &self.bound {
            merged.bound.insert(*kind, service.clone());
        }
        merged
    }
}

impl std::fmt::Debug for ServiceBindings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.bound.keys().map(|k| k.name()))
            .finish()
    }
}
