//! The features the runtime serves itself, as the dispatcher runs them: each is a
//! module of this folder and one row of [`FEATURES`], and implements
//! [`RuntimeFeature`]'s lifecycle hooks.
//!
//! The generic dispatcher names no feature. It calls the hooks at fixed points of a
//! call's and a generation's life ([`Dispatcher::each_feature`]), routes an
//! extension-to-host method whose answerer is [`Answerer::Feature`] to the feature that
//! lists it ([`RuntimeFeature::methods`]), and keeps each feature's per-generation
//! state in [`states::FeatureStates`], which only the features read.
//!
//! - `composition/`: tool composition (section 2.25);
//! - `resources.rs` and `exports.rs`: resource refs and operation descriptors (2.26),
//!   with a call's resource and blob outputs published together;
//! - `bulk.rs`: bulk objects (2.27);
//! - `agents.rs` and `agent_trees.rs`: the agent guard (2.13-2.18), which completes
//!   the embedder's agent service from the runtime's records;
//! - `offering.rs`: what a generation is offered and bound with for the features, and
//!   what its service calls carry for them; `states.rs`: each generation's state.
//!
//! [`Answerer::Feature`]: super::route::Answerer::Feature

pub(super) mod agent_trees;
pub(super) mod agents;
pub(super) mod bulk;
pub(super) mod composition;
pub(super) mod exports;
pub(super) mod offering;
pub(super) mod resources;
pub(super) mod states;

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
    /// The feature's name in the registration table, which the requests it sends
    /// carry ([`super::pending::FeatureRequest`]).
    fn name(&self) -> &'static str;

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

    /// The registered feature named `name`.
    pub(super) fn feature_named(name: &str) -> &'static dyn RuntimeFeature {
        *FEATURES
            .iter()
            .find(|feature| feature.name() == name)
            .expect("a feature request names a registered feature")
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
    fn name(&self) -> &'static str {
        "resource_refs"
    }

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
    fn name(&self) -> &'static str {
        "bulk_objects"
    }

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
    fn name(&self) -> &'static str {
        "composition"
    }

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
    fn name(&self) -> &'static str {
        "agent_guard"
    }

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
