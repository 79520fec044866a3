//! The features the runtime serves itself, as the dispatcher runs them: each is a
//! module of this folder and one row of [`FEATURES`], and implements
//! [`RuntimeFeature`]'s lifecycle hooks.
//!
//! The generic dispatcher names no feature. It calls the hooks at fixed points of a
//! call's and a generation's life ([`Dispatcher::each_feature`]), routes an
//! extension-to-host method whose answerer is [`Answerer::Feature`] to the feature that
//! lists it ([`RuntimeFeature::methods`]), and keeps each feature's per-generation
//! state in [`FeatureStates`], which only the features read.
//!
//! - `composition/`: tool composition (section 2.25);
//! - `resources.rs` and `exports.rs`: resource refs and operation descriptors (2.26),
//!   with a call's resource and blob outputs published together;
//! - `bulk.rs`: bulk objects (2.27);
//! - `agents.rs` and `agent_trees.rs`: the agent guard (2.13-2.18), which completes
//!   the embedder's agent service from the runtime's records.
//!
//! [`Answerer::Feature`]: super::route::Answerer::Feature

pub(super) mod agent_trees;
pub(super) mod agents;
pub(super) mod bulk;
pub(super) mod composition;
pub(super) mod exports;
pub(super) mod resources;

use std::collections::HashMap;

use serde_json::Value;

use super::connection::ChildRequest;
use super::route::HostMethod;
use super::Dispatcher;
use crate::model::call::{CallError, RawResult};
use crate::model::status::HostTables;
use crate::negotiation::Feature;
use crate::transport::ConnId;
use crate::wire::{RequestId, ResponseError};

/// The lifecycle hooks of a feature the runtime serves itself. Every hook has a
/// default that does nothing, so a feature implements the moments it cares about.
/// Hooks run on the dispatcher thread, in the order of [`FEATURES`].
pub(super) trait RuntimeFeature: Sync {
    /// The extension-to-host methods this feature answers (rows of the host method
    /// table whose answerer is `Feature`).
    fn methods(&self) -> &'static [HostMethod] {
        &[]
    }

    /// Answers the request `id` for one of [`RuntimeFeature::methods`], at once or
    /// later; an error is sent back to the extension as the answer.
    fn on_request(
        &self,
        _d: &mut Dispatcher,
        _conn: ConnId,
        _id: &RequestId,
        _method: HostMethod,
        _params: Option<&Value>,
    ) -> Result<(), ResponseError> {
        Ok(())
    }

    /// The tool call `id` is about to be sent; an error refuses it, and the call
    /// fails with it.
    fn admit_tool_call(
        &self,
        _d: &mut Dispatcher,
        _conn: ConnId,
        _id: u64,
        _tool: &str,
        _arguments: &Value,
    ) -> Result<(), CallError> {
        Ok(())
    }

    /// The tool call `id` was sent.
    fn tool_call_sent(&self, _d: &mut Dispatcher, _conn: ConnId, _id: u64, _tool: &str) {}

    /// The call `id` was answered with `raw`: the feature adds what the result's
    /// checks resolve against.
    fn scope_result(&self, _d: &Dispatcher, _conn: ConnId, _id: u64, _raw: &mut RawResult) {}

    /// The call `id` was answered with a result; an error fails the call instead.
    fn call_answered(
        &self,
        _d: &mut Dispatcher,
        _conn: ConnId,
        _id: u64,
        _raw: &RawResult,
    ) -> Option<CallError> {
        None
    }

    /// The call `id` ended without a result: cancelled, answered with an error, or
    /// answered with a frame the host refused.
    fn call_dropped(&self, _d: &mut Dispatcher, _conn: ConnId, _id: u64) {}

    /// The extension no longer holds the call `id`: answered (late or not), or
    /// never sent.
    fn call_released(&self, _d: &mut Dispatcher, _conn: ConnId, _id: u64) {}

    /// The host request `parent` of `conn` settled: what it admitted ends with it.
    fn parent_settled(&self, _d: &mut Dispatcher, _conn: ConnId, _parent: u64) {}

    /// The extension-to-host request `id` was withdrawn before it was answered.
    fn child_withdrawn(
        &self,
        _d: &mut Dispatcher,
        _conn: ConnId,
        _id: &RequestId,
        _child: &ChildRequest,
    ) {
    }

    /// The generation `conn` was launched; its connection is in the dispatcher's
    /// tables, before `initialize` is sent.
    fn generation_launched(&self, _d: &mut Dispatcher, _conn: ConnId) {}

    /// The generation `conn` is going away; it is still in the dispatcher's tables.
    fn generation_gone(&self, _d: &mut Dispatcher, _conn: ConnId) {}

    /// The frontend session `session_id` started (a lifecycle notification, section
    /// 1.7a).
    fn session_started(&self, _d: &mut Dispatcher, _session_id: &str) {}

    /// The frontend session `session_id` settled.
    fn session_settled(&self, _d: &mut Dispatcher, _session_id: &str) {}

    /// The answer to a request this feature sent
    /// ([`super::pending::PendingKind::Feature`]), with the state it kept.
    fn request_answered(
        &self,
        _d: &mut Dispatcher,
        _conn: ConnId,
        _state: Box<dyn std::any::Any + Send>,
        _outcome: Result<Value, ResponseError>,
    ) {
    }

    /// A request this feature sent got no answer within its deadline; it is no
    /// longer pending.
    fn request_deadline(
        &self,
        _d: &mut Dispatcher,
        _conn: ConnId,
        _state: Box<dyn std::any::Any + Send>,
    ) {
    }

    /// Adds what the feature holds to `tables` ([`crate::ExtensionHost::tables`]).
    fn count(&self, _d: &Dispatcher, _tables: &mut HostTables) {}
}

/// Tool composition (section 2.25).
struct Composition;
/// Resource refs and operation descriptors (section 2.26), and a call's outputs.
struct ResourceRefs;
/// Bulk objects (section 2.27).
struct BulkObjects;

/// The registration table: every feature the runtime serves itself, in the order
/// their hooks run.
pub(super) static FEATURES: [&dyn RuntimeFeature; 4] =
    [&ResourceRefs, &BulkObjects, &Composition, &AgentGuard];

/// A question an embedder's handle asks a runtime-served feature.
pub(crate) enum FeatureCommand {
    /// Where a resource value lives: the routed, ready generation whose records hold
    /// it active (section 2.26, operation discovery).
    ResourceHome {
        resource: crate::validate::resource::ResourceRef,
        reply:
            crossbeam_channel::Sender<Option<crate::features::operation_discovery::ResourceHome>>,
    },
}

/// The dispatcher's own state of the runtime-served features, beside each
/// generation's ([`FeatureStates`]) and the host's ([`crate::features::HostFeatures`]).
pub(super) struct DispatcherFeatures {
    /// The last frozen registry of composition, with the catalogs it was made of.
    pub frozen: Option<composition::parent::Frozen>,
    /// The outcomes of composition's nested calls, which the dispatcher hands itself.
    pub nested_replies: crossbeam_channel::Receiver<composition::NestedReply>,
    /// Where a nested call's outcome is sent.
    pub nested_reply_sender: crossbeam_channel::Sender<composition::NestedReply>,
}

impl DispatcherFeatures {
    /// Nothing frozen, nothing nested.
    pub fn new() -> DispatcherFeatures {
        let (nested_reply_sender, nested_replies) = crossbeam_channel::unbounded();
        DispatcherFeatures {
            frozen: None,
            nested_replies,
            nested_reply_sender,
        }
    }
}

/// Each feature's state for one generation.
pub(super) struct FeatureStates {
    /// The generation's resource records (section 2.26).
    pub resources: crate::features::resources::ResourceTable,
    /// Compositions in progress, by the `tool/call` that admitted them (section 2.25).
    pub compositions: HashMap<u64, composition::parent::CompositionParent>,
}

impl FeatureStates {
    /// The state of a new generation; `owner` names its resource records.
    pub fn new(owner: String) -> FeatureStates {
        FeatureStates {
            resources: crate::features::resources::ResourceTable::new(owner),
            compositions: HashMap::new(),
        }
    }
}

impl Dispatcher {
    /// A feature's host-wide state changed ([`crate::features::HostFeatures::wakeups`]):
    /// a child agent session's record changed.
    pub(super) fn on_feature_wakeup(&mut self) {
        self.on_agents_changed();
    }

    /// Answers a [`FeatureCommand`].
    pub(super) fn on_feature_command(&mut self, command: FeatureCommand) {
        match command {
            FeatureCommand::ResourceHome { resource, reply } => {
                let _ = reply.send(self.resource_home(&resource));
            }
        }
    }

    /// Adds what every feature holds to `tables`.
    pub(super) fn count_features(&self, tables: &mut HostTables) {
        for feature in FEATURES {
            feature.count(self, tables);
        }
    }

    /// Runs `hook` for every registered feature, in the table's order.
    pub(super) fn each_feature(
        &mut self,
        mut hook: impl FnMut(&dyn RuntimeFeature, &mut Dispatcher),
    ) {
        for feature in FEATURES {
            hook(feature, self);
        }
    }

    /// Routes a request for a feature's method to the feature that lists it.
    pub(super) fn on_feature_request(
        &mut self,
        conn: ConnId,
        id: &RequestId,
        method: HostMethod,
        params: Option<&Value>,
    ) -> Result<(), ResponseError> {
        let feature = FEATURES
            .iter()
            .find(|feature| feature.methods().contains(&method))
            .expect("every Feature-answered method is registered by a feature");
        feature.on_request(self, conn, id, method, params)
    }

    /// Runs every feature's admission of the tool call `id`; the first refusal wins,
    /// and what the features before it admitted is dropped and released again (the
    /// call is never sent).
    pub(super) fn admit_tool_call_features(
        &mut self,
        conn: ConnId,
        id: u64,
        tool: &str,
        arguments: &Value,
    ) -> Result<(), CallError> {
        for feature in FEATURES {
            if let Err(error) = feature.admit_tool_call(self, conn, id, tool, arguments) {
                self.each_feature(|f, d| {
                    f.call_dropped(d, conn, id);
                    f.call_released(d, conn, id);
                });
                return Err(error);
            }
        }
        Ok(())
    }

    /// Runs every feature's look at the result of call `id`; the first error wins.
    pub(super) fn call_answered_features(
        &mut self,
        conn: ConnId,
        id: u64,
        raw: &RawResult,
    ) -> Option<CallError> {
        FEATURES
            .iter()
            .find_map(|feature| feature.call_answered(self, conn, id, raw))
    }
}

impl RuntimeFeature for ResourceRefs {
    fn methods(&self) -> &'static [HostMethod] {
        &[HostMethod::ResourceRegister, HostMethod::ResourceRelease]
    }

    fn on_request(
        &self,
        d: &mut Dispatcher,
        conn: ConnId,
        id: &RequestId,
        method: HostMethod,
        params: Option<&Value>,
    ) -> Result<(), ResponseError> {
        let params = params.cloned().unwrap_or(Value::Null);
        let result = d.on_resource_request(conn, method, &params)?;
        d.answer_with(conn, id, &result, false);
        Ok(())
    }

    fn admit_tool_call(
        &self,
        d: &mut Dispatcher,
        conn: ConnId,
        id: u64,
        tool: &str,
        arguments: &Value,
    ) -> Result<(), CallError> {
        d.pin_resources(conn, id, tool, arguments)
    }

    fn call_answered(
        &self,
        d: &mut Dispatcher,
        conn: ConnId,
        id: u64,
        raw: &RawResult,
    ) -> Option<CallError> {
        // A call's resource and blob outputs are published together, by a generation
        // that negotiated either.
        let features = &raw.negotiated.features;
        (features.contains(Feature::ResourceRefsV1) || features.contains(Feature::BulkObjectsV1))
            .then(|| d.settle_outputs(conn, id, raw))
            .flatten()
    }

    fn call_dropped(&self, d: &mut Dispatcher, conn: ConnId, id: u64) {
        d.retire_resources(conn, id);
    }

    fn call_released(&self, d: &mut Dispatcher, conn: ConnId, id: u64) {
        d.unpin_resources(conn, id);
    }

    fn request_answered(
        &self,
        d: &mut Dispatcher,
        conn: ConnId,
        state: Box<dyn std::any::Any + Send>,
        outcome: Result<Value, ResponseError>,
    ) {
        if let Ok(dispose) = state.downcast::<resources::Dispose>() {
            d.on_dispose_answer(conn, dispose.tokens, outcome);
        }
    }

    fn request_deadline(
        &self,
        d: &mut Dispatcher,
        conn: ConnId,
        _state: Box<dyn std::any::Any + Send>,
    ) {
        d.on_dispose_deadline(conn);
    }

    fn count(&self, d: &Dispatcher, tables: &mut HostTables) {
        tables.resource_records += d
            .conns
            .values()
            .map(|c| c.features.resources.len())
            .sum::<usize>();
    }
}

impl RuntimeFeature for BulkObjects {
    fn methods(&self) -> &'static [HostMethod] {
        &[
            HostMethod::BulkWrite,
            HostMethod::BulkCommit,
            HostMethod::BulkRead,
            HostMethod::BulkRelease,
        ]
    }

    fn on_request(
        &self,
        d: &mut Dispatcher,
        conn: ConnId,
        id: &RequestId,
        method: HostMethod,
        params: Option<&Value>,
    ) -> Result<(), ResponseError> {
        d.on_bulk_request(conn, id, method, params)
    }

    fn admit_tool_call(
        &self,
        d: &mut Dispatcher,
        conn: ConnId,
        id: u64,
        tool: &str,
        arguments: &Value,
    ) -> Result<(), CallError> {
        d.grant_blobs(conn, id, tool, arguments);
        Ok(())
    }

    fn scope_result(&self, d: &Dispatcher, conn: ConnId, id: u64, raw: &mut RawResult) {
        let Some(c) = d.conns.get(&conn) else {
            return;
        };
        raw.bulk = d
            .shared
            .features
            .bulk
            .get()
            .filter(|_| raw.negotiated.features.contains(Feature::BulkObjectsV1))
            .map(|store| crate::model::call::BulkScope {
                store: store.clone(),
                conn,
                call: id,
                owner: c.owner.session_id.clone(),
            });
    }

    fn call_dropped(&self, d: &mut Dispatcher, conn: ConnId, id: u64) {
        d.discard_blobs(conn, id);
    }

    fn generation_gone(&self, d: &mut Dispatcher, conn: ConnId) {
        d.drop_bulk_generation(conn);
    }

    fn count(&self, d: &Dispatcher, tables: &mut HostTables) {
        tables.bulk_transfers += d
            .shared
            .features
            .bulk
            .get()
            .map_or(0, |store| store.transfers());
    }
}

impl RuntimeFeature for Composition {
    fn methods(&self) -> &'static [HostMethod] {
        composition::METHODS
    }

    fn on_request(
        &self,
        d: &mut Dispatcher,
        conn: ConnId,
        id: &RequestId,
        method: HostMethod,
        params: Option<&Value>,
    ) -> Result<(), ResponseError> {
        d.on_composition_request(conn, id, method, params)
    }

    fn tool_call_sent(&self, d: &mut Dispatcher, conn: ConnId, id: u64, tool: &str) {
        d.composition_admitted(conn, id, tool);
    }

    fn parent_settled(&self, d: &mut Dispatcher, conn: ConnId, parent: u64) {
        d.composition_settled(conn, parent);
    }

    fn child_withdrawn(
        &self,
        d: &mut Dispatcher,
        conn: ConnId,
        id: &RequestId,
        child: &ChildRequest,
    ) {
        d.composed_withdrawn(conn, id, child);
    }

    fn generation_gone(&self, d: &mut Dispatcher, conn: ConnId) {
        d.composition_gone(conn);
    }

    fn count(&self, d: &Dispatcher, tables: &mut HostTables) {
        tables.compositions += d
            .conns
            .values()
            .map(|c| c.features.compositions.len())
            .sum::<usize>();
        tables.frozen_catalogs += d.features.frozen.as_ref().map_or(0, |f| f.catalogs());
    }
}

/// The agent guard (sections 2.13-2.18): completes the embedder's child-session
/// service from the runtime's own records.
struct AgentGuard;

impl RuntimeFeature for AgentGuard {
    fn generation_launched(&self, d: &mut Dispatcher, conn: ConnId) {
        d.register_agent_guard(conn);
    }

    /// A session's start begins its owner's run of child trees.
    fn session_started(&self, d: &mut Dispatcher, session_id: &str) {
        d.begin_owning_run(session_id);
    }

    /// A session's settlement retires it as an owner of child trees.
    fn session_settled(&self, d: &mut Dispatcher, session_id: &str) {
        d.retire_session_owner(session_id);
    }
}

/// The services `manifest`'s generation is bound with once the runtime-served features
/// had their say, and the bound features it must not be offered; `own` are the
/// bindings of this extension alone, if it has any.
///
/// `agent_sessions` is conditional (section 2.13): offered to an extension it was bound
/// for, or that the embedder allowed to use the host-wide binding; the features that
/// require it go with it. With it go its companions: those the embedder did not bind,
/// the runtime serves itself.
pub(super) fn bind_runtime_services(
    shared: &super::Shared,
    manifest: &crate::manifest::Manifest,
    services: crate::services::bound::ServiceBindings,
    own: Option<&crate::services::bound::ServiceBindings>,
) -> (crate::services::bound::ServiceBindings, Vec<Feature>) {
    use crate::services::bound::ServiceKind;
    let bound_for_it = own.is_some_and(|own| own.is_bound(ServiceKind::AgentSessions));
    if bound_for_it || shared.features.agent_delegates.contains(&manifest.name) {
        let services = crate::services::bound::agents::defaults::with_agent_defaults(
            services,
            &shared.host_context,
        );
        (services, Vec::new())
    } else {
        (services, vec![Feature::AgentSessions])
    }
}

/// `offer` with the features the runtime serves itself: on API 0.4 only, to the
/// extensions the embedder enabled them for (sections 2.25-2.27); bulk objects only
/// with configured storage.
pub(super) fn offer_runtime_features(
    shared: &super::Shared,
    manifest: &crate::manifest::Manifest,
    mut offer: crate::negotiation::InitializeOffer,
) -> crate::negotiation::InitializeOffer {
    if manifest.api_version != crate::manifest::ApiVersion::V0_4 {
        return offer;
    }
    let offered = shared.features.runtime_offers.offered_to(&manifest.name);
    for feature in crate::features::offers::RuntimeOffers::FEATURES {
        if offered.contains(feature) && feature != Feature::BulkObjectsV1 {
            offer = offer.with_feature(feature);
        }
    }
    if let (Some(store), true) = (
        shared.features.bulk.get(),
        offered.contains(Feature::BulkObjectsV1),
    ) {
        offer = offer.with_bulk_objects(store.offer());
    }
    offer
}

/// What a service call carries for the runtime-served features: the report handle of
/// the agent guard, for every kind it decides.
pub(super) type CallReports = Option<crate::services::bound::AgentReports>;

/// The report handle a service call of `method` carries: for every kind the
/// `agent_sessions` guard decides (the sessions and their companions), none for the
/// others.
pub(super) fn call_reports(
    shared: &super::Shared,
    guards: &super::guards::KindGuards,
    method: crate::services::bound::ServiceMethod,
) -> CallReports {
    use crate::services::bound::{AgentReports, ServiceKind};
    (guards.decided_by(method.kind()) == ServiceKind::AgentSessions)
        .then(|| AgentReports(shared.features.agents.clone()))
}

/// The feature that brings the retained-owner contract: an explicit `resource_owner`
/// may outlive its parent (section 2).
pub(super) const RETAINED_OWNER: Feature = Feature::AgentSessionLifetimeV1;

/// True when `features` bring the retained-owner contract ([`RETAINED_OWNER`]).
pub(super) fn retains_owner(features: &crate::negotiation::FeatureSet) -> bool {
    features.contains(RETAINED_OWNER)
}
