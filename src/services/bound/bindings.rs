//! Which services an embedder bound, by feature: the host-wide set on the builder, and
//! per extension on the builder or at [`crate::host::StartOptions::services`].

use std::collections::BTreeMap;
use std::sync::Arc;

use super::wave1::{
    ActiveToolsService, ComposerService, MessageInjectionService, RawService, Routed,
    SessionEntryService, ShortcutService,
};
use crate::negotiation::Feature;

/// The services bound for a host or an extension, keyed by the feature each one
/// serves. A feature is offered in `initialize` only when its service is bound (and
/// the reference's own conditions hold: API 0.2 or 0.4); a request for a feature that
/// was not negotiated is refused with -32601 `unsupported_feature`.
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
/// assert_eq!(services.features().count(), 1);
/// ```
#[derive(Clone, Default)]
pub struct ServiceBindings {
    bound: BTreeMap<Feature, Arc<dyn RawService>>,
}

impl ServiceBindings {
    /// No services.
    pub fn new() -> ServiceBindings {
        ServiceBindings::default()
    }

    /// Binds the composer (feature `composer`, section 2.19).
    pub fn composer(self, service: impl ComposerService) -> ServiceBindings {
        let service: Arc<dyn ComposerService> = Arc::new(service);
        self.bind(Feature::Composer, Arc::new(Routed(service)))
    }

    /// Binds runtime shortcuts (feature `shortcuts`, section 2.20).
    pub fn shortcuts(self, service: impl ShortcutService) -> ServiceBindings {
        let service: Arc<dyn ShortcutService> = Arc::new(service);
        self.bind(Feature::Shortcuts, Arc::new(Routed(service)))
    }

    /// Binds session entries (feature `session_entries`, section 2.21).
    pub fn session_entries(self, service: impl SessionEntryService) -> ServiceBindings {
        let service: Arc<dyn SessionEntryService> = Arc::new(service);
        self.bind(Feature::SessionEntries, Arc::new(Routed(service)))
    }

    /// Binds message injection (feature `message_injection`, section 2.22). It also
    /// lets the host send `message/updated` batches (section 1.11).
    pub fn message_injection(self, service: impl MessageInjectionService) -> ServiceBindings {
        let service: Arc<dyn MessageInjectionService> = Arc::new(service);
        self.bind(Feature::MessageInjection, Arc::new(Routed(service)))
    }

    /// Binds the active tool set (feature `active_tools`, section 2.23).
    pub fn active_tools(self, service: impl ActiveToolsService) -> ServiceBindings {
        let service: Arc<dyn ActiveToolsService> = Arc::new(service);
        self.bind(Feature::ActiveTools, Arc::new(Routed(service)))
    }

    /// The bound features, in a stable order.
    pub fn features(&self) -> impl Iterator<Item = Feature> + '_ {
        self.bound.keys().copied()
    }

    /// True when `feature` has a service.
    pub fn is_bound(&self, feature: Feature) -> bool {
        self.bound.contains_key(&feature)
    }

    /// True when nothing is bound.
    pub fn is_empty(&self) -> bool {
        self.bound.is_empty()
    }

    /// Binds `feature` to a JSON-level service (how `serve` forwards to its client).
    pub(crate) fn bind(
        mut self,
        feature: Feature,
        service: Arc<dyn RawService>,
    ) -> ServiceBindings {
        self.bound.insert(feature, service);
        self
    }

    /// The service of `feature`.
    pub(crate) fn get(&self, feature: Feature) -> Option<&Arc<dyn RawService>> {
        self.bound.get(&feature)
    }

    /// These bindings over `base`: each feature bound here replaces base's.
    pub(crate) fn over(&self, base: &ServiceBindings) -> ServiceBindings {
        let mut merged = base.clone();
        for (feature, service) in &self.bound {
            merged.bound.insert(*feature, service.clone());
        }
        merged
    }
}

impl std::fmt::Debug for ServiceBindings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.bound.keys().map(|f| f.as_str()))
            .finish()
    }
}
