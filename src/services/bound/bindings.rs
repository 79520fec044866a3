//! Which services an embedder bound: the host-wide set on the builder, and per
//! extension on the builder or at [`crate::host::StartOptions::services`]. One object
//! binds every service the host answers with embedder code: the request services by
//! kind, and the policy engine, approver, secret broker, credential resolver and tool
//! policy.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use super::lane::{Serial, SerialLane};
use super::methods::ServiceKind;
use super::route::RawService;
use super::row::Lane;
use crate::negotiation::Feature;
use crate::services::{
    Approver, CredentialResolver, DenyAll, PolicyEngine, SecretBroker, ToolPolicy,
};

/// The services bound for a host or an extension, keyed by the [`ServiceKind`] each one
/// serves. A kind is offered in `initialize` only when its service is bound and the
/// reference's own conditions hold: the Wave-1 features on API 0.2 and 0.4, the
/// `provider_auth`, `provider_catalog` and `session_lifecycle` capabilities (with their
/// methods) on API 0.3. A request for a feature that was not negotiated is refused with
/// -32601 `unsupported_feature`.
///
/// ```
/// use octet_host::services::bound::{
///     ComposerEdit, ComposerService, ComposerText, NoParams, Reply, ServiceBindings, ServiceCall,
/// };
/// use std::sync::Mutex;
///
/// #[derive(Default)]
/// struct Composer(Mutex<String>);
///
/// impl ComposerService for Composer {
///     fn get(&self, _call: ServiceCall, _params: NoParams, reply: Reply<ComposerText>) {
///         reply.ok(ComposerText(self.0.lock().unwrap().clone()));
///     }
///     fn set(&self, _call: ServiceCall, params: ComposerEdit, reply: Reply<()>) {
///         *self.0.lock().unwrap() = params.text;
///         reply.ok(());
///     }
///     fn insert(&self, _call: ServiceCall, params: ComposerEdit, reply: Reply<()>) {
///         self.0.lock().unwrap().push_str(&params.text);
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
    /// The bound kinds served by the runtime's own defaults (the `agent_sessions`
    /// companions, `features::agents::defaults`), not by the embedder.
    defaults: BTreeSet<ServiceKind>,
    /// The one queue of this binding's serial kinds.
    serial: Arc<SerialLane>,
    /// Features the frontend supports that have no service of their own.
    frontend: BTreeSet<Feature>,
    policy: Option<Arc<dyn PolicyEngine>>,
    approver: Option<Arc<dyn Approver>>,
    secrets: Option<Arc<dyn SecretBroker>>,
    credentials: Option<Arc<dyn CredentialResolver>>,
    tool_policy: Option<Arc<dyn ToolPolicy>>,
}

impl ServiceBindings {
    /// No services.
    pub fn new() -> ServiceBindings {
        ServiceBindings::default()
    }

    /// Binds the policy engine that classifies `policy/evaluate` intents (section 2.9;
    /// feature `policy_intents`). Unbound, every intent is denied ([`DenyAll`]).
    pub fn policy(mut self, engine: impl PolicyEngine + 'static) -> ServiceBindings {
        self.policy = Some(Arc::new(engine));
        self
    }

    /// Binds the approver of intents classified `ask` (section 2.9). The `approvals`
    /// feature, and with it single-use approval tokens, is offered only while one is
    /// bound.
    pub fn approver(mut self, approver: impl Approver + 'static) -> ServiceBindings {
        self.approver = Some(Arc::new(approver));
        self
    }

    /// Binds the secret broker that answers `secret/get` (section 2.10). The `secrets`
    /// feature is offered only while one is bound and the manifest's allowlist is not
    /// empty. Secret values never reach a diagnostic, log line, wire trace or event.
    pub fn secrets(mut self, broker: impl SecretBroker + 'static) -> ServiceBindings {
        self.secrets = Some(Arc::new(broker));
        self
    }

    /// Binds the resolver that answers `provider/credentials` (section 1.1) for
    /// manifests that declare `[capabilities].provider_credentials`.
    pub fn credentials(mut self, resolver: impl CredentialResolver + 'static) -> ServiceBindings {
        self.credentials = Some(Arc::new(resolver));
        self
    }

    /// Binds the policy deciding which tools extensions may register at run time
    /// (section 2.11); every valid registration is accepted while none is bound. It is
    /// asked during `tools/register` and must answer within
    /// [`crate::limits::TOOL_POLICY_TIMEOUT`]; a later answer counts as a refusal.
    pub fn tool_policy(mut self, policy: impl ToolPolicy + 'static) -> ServiceBindings {
        self.tool_policy = Some(Arc::new(policy));
        self
    }

    /// Offers `autocomplete_edit_v1` (section 2.24b, API 0.4): the frontend applies the
    /// edit fields of a completion item ([`crate::services::autocomplete`]). Offered only
    /// together with a bound `autocomplete` service and only on API 0.4; otherwise the
    /// start succeeds without it.
    pub fn autocomplete_edit(mut self) -> ServiceBindings {
        self.frontend.insert(Feature::AutocompleteEditV1);
        self
    }

    /// Offers `terminal_input` (section 2.24): the embedder forwards its editor's
    /// terminal input and resizes with [`crate::ExtensionHandle::notify`]
    /// (`ui/terminal-input`, `ui/resize`), never to the holder of a live terminal grant.
    pub fn terminal_input(mut self) -> ServiceBindings {
        self.frontend.insert(Feature::TerminalInput);
        self
    }

    /// The features to offer for what is bound: each bound kind's feature and the
    /// frontend features, before the API version and companion rules.
    pub(crate) fn features(&self) -> impl Iterator<Item = Feature> + '_ {
        let kinds = self.bound.keys().filter_map(|kind| kind.feature());
        kinds.chain(self.frontend.iter().copied())
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
            && self.frontend.is_empty()
            && self.policy.is_none()
            && self.approver.is_none()
            && self.secrets.is_none()
            && self.credentials.is_none()
            && self.tool_policy.is_none()
    }

    /// The policy engine ([`DenyAll`] when none is bound).
    pub(crate) fn policy_engine(&self) -> Arc<dyn PolicyEngine> {
        self.policy.clone().unwrap_or_else(|| Arc::new(DenyAll))
    }

    /// The approver, if bound.
    pub(crate) fn approver_service(&self) -> Option<&Arc<dyn Approver>> {
        self.approver.as_ref()
    }

    /// The secret broker, if bound.
    pub(crate) fn secret_broker(&self) -> Option<&Arc<dyn SecretBroker>> {
        self.secrets.as_ref()
    }

    /// The credential resolver, if bound.
    pub(crate) fn credential_resolver(&self) -> Option<&Arc<dyn CredentialResolver>> {
        self.credentials.as_ref()
    }

    /// The tool policy, if bound.
    pub(crate) fn tool_policy_service(&self) -> Option<&Arc<dyn ToolPolicy>> {
        self.tool_policy.as_ref()
    }

    /// Binds `kind` to a JSON-level service (how `serve` forwards to its client).
    pub(crate) fn bind(
        mut self,
        kind: ServiceKind,
        service: Arc<dyn RawService>,
    ) -> ServiceBindings {
        let service: Arc<dyn RawService> = match kind.lane() {
            Lane::Concurrent => service,
            Lane::Serial => Arc::new(Serial {
                lane: self.serial.clone(),
                service,
            }),
        };
        self.bound.insert(kind, service);
        self.defaults.remove(&kind);
        self
    }

    /// Marks `kind`, just bound, as the runtime's own default.
    pub(crate) fn mark_runtime_default(mut self, kind: ServiceKind) -> ServiceBindings {
        self.defaults.insert(kind);
        self
    }

    /// True when `kind` is served by the runtime's default rather than the embedder.
    pub(crate) fn is_runtime_default(&self, kind: ServiceKind) -> bool {
        self.defaults.contains(&kind)
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
            merged.defaults.remove(kind);
        }
        merged.defaults.extend(self.defaults.iter().copied());
        merged.frontend.extend(self.frontend.iter().copied());
        fn pick<T: ?Sized>(own: &Option<Arc<T>>, base: &mut Option<Arc<T>>) {
            if own.is_some() {
                base.clone_from(own);
            }
        }
        pick(&self.policy, &mut merged.policy);
        pick(&self.approver, &mut merged.approver);
        pick(&self.secrets, &mut merged.secrets);
        pick(&self.credentials, &mut merged.credentials);
        pick(&self.tool_policy, &mut merged.tool_policy);
        merged
    }
}

impl std::fmt::Debug for ServiceBindings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let brokers = [
            ("policy", self.policy.is_some()),
            ("approvals", self.approver.is_some()),
            ("secrets", self.secrets.is_some()),
            ("provider_credentials", self.credentials.is_some()),
            ("tool_policy", self.tool_policy.is_some()),
        ];
        f.debug_list()
            .entries(self.bound.keys().map(|k| k.name()))
            .entries(self.frontend.iter().map(|f| f.as_str()))
            .entries(
                brokers
                    .iter()
                    .filter(|(_, bound)| *bound)
                    .map(|(name, _)| name),
            )
            .finish()
    }
}
