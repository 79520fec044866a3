//! The host methods the runtime answers itself, at once (`Answerer::Runtime` in
//! `route.rs`): artifacts (2.8) and dynamic tools (2.11, 2.12); and `presentation/update`
//! snapshots (2.5). Policy, secrets and provider credentials go to the embedder's engine or
//! broker off the dispatcher thread (`brokered.rs`).

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Instant;

use serde_json::{json, Value};

use super::route::HostMethod;
use super::timers::Timer;
use super::Dispatcher;
use crate::limits::MAX_TOOLS;
use crate::model::events::{Diagnostic, HostEvent};
use crate::negotiation::{Feature, ToolDefinition};
use crate::services::presentation::{parse_update, Offer, PresentationOwner, PresentationScope};
use crate::services::wipe_json;
use crate::transport::ConnId;
use crate::wire::{codes, ResponseError};

impl Dispatcher {
    /// Answers a host-served request. The answer is never logged: a secret may be in it.
    pub(super) fn on_service_request(
        &mut self,
        conn: ConnId,
        method: HostMethod,
        params: &Value,
    ) -> Result<Value, ResponseError> {
        let c = self.conns.get_mut(&conn).expect("connection is live");
        let features = c.features();
        let parent = c.live_parent(params);
        let owner = c.owner.clone();
        match method {
            HostMethod::ArtifactPublish => {
                if !features.contains(Feature::Artifacts) {
                    return Err(ResponseError::new(
                        codes::METHOD_NOT_FOUND,
                        "artifacts was not negotiated",
                    ));
                }
                let Some(parent) = parent else {
                    return Err(ResponseError::new(
                        codes::NO_OWNER,
                        "no active host request owns this publication",
                    ));
                };
                let _ = parent;
                let Some(store) = &c.artifacts else {
                    return Err(ResponseError::new(
                        codes::INTERNAL_ERROR,
                        "the artifact store is unavailable",
                    ));
                };
                let mut store = store.lock();
                match store.publish(params, c.scratch.path(), &owner) {
                    Ok(id) => Ok(id.publish_result()),
                    Err(e) => Err(ResponseError::new(e.code(), e.to_string())),
                }
            }
            HostMethod::ToolsRegister | HostMethod::ToolsUnregister => {
                self.on_catalog_mutation(conn, method, params)
            }
            _ => Err(ResponseError::new(
                codes::METHOD_NOT_FOUND,
                "unknown or unnegotiated method",
            )),
        }
    }

    /// `tools/register` and `tools/unregister` (sections 2.11, 2.12): validate the whole
    /// prospective catalog, refuse conflicts with other extensions' tools, then publish
    /// it atomically as the next epoch. Any refusal leaves the catalog unchanged.
    fn on_catalog_mutation(
        &mut self,
        conn: ConnId,
        method: HostMethod,
        params: &Value,
    ) -> Result<Value, ResponseError> {
        let invalid = |message: String| ResponseError::new(codes::INVALID_PARAMS, message);
        let c = &self.conns[&conn];
        let negotiated = c
            .negotiated
            .clone()
            .expect("ready generations are negotiated");
        if !negotiated.features.contains(Feature::DynamicTools) {
            return Err(ResponseError::new(
                codes::METHOD_NOT_FOUND,
                "dynamic_tools was not negotiated",
            ));
        }
        let mut catalog: Vec<ToolDefinition> = c.catalog.as_ref().clone();
        if method == HostMethod::ToolsRegister {
            let tools = params
                .get("tools")
                .and_then(Value::as_array)
                .ok_or_else(|| invalid("`tools` must be an array".into()))?;
            if tools.len() > MAX_TOOLS {
                return Err(invalid(format!("at most {MAX_TOOLS} tools per request")));
            }
            let mut seen = HashSet::new();
            let mut definitions = Vec::with_capacity(tools.len());
            for (i, tool) in tools.iter().enumerate() {
                let definition =
                    ToolDefinition::parse(tool, &format!("tools[{i}]"), c.api, negotiated.features)
                        .map_err(|e| invalid(e.to_string()))?;
                if !seen.insert(definition.name.clone()) {
                    return Err(invalid(format!("tool `{}` appears twice", definition.name)));
                }
                definitions.push(definition);
            }
            // The host's tool policy may omit requested tools (section 2.11); it is
            // embedder code, so it answers within a bound or refuses.
            if let Some(policy) = c.services.tool_policy_service() {
                let allowed = crate::services::tool_policy::allowed_within(
                    policy,
                    &c.source.extension,
                    &definitions,
                    crate::limits::TOOL_POLICY_TIMEOUT,
                );
                definitions = definitions
                    .into_iter()
                    .zip(allowed)
                    .filter_map(|(definition, allowed)| allowed.then_some(definition))
                    .collect();
            }
            for definition in definitions {
                match catalog.iter_mut().find(|t| t.name == definition.name) {
                    Some(existing) => *existing = definition,
                    None => catalog.push(definition),
                }
            }
            if catalog.len() > MAX_TOOLS {
                return Err(invalid(format!(
                    "the catalog would exceed {MAX_TOOLS} tools"
                )));
            }
            let shared_namespace =
                self.shared.tool_namespace == crate::model::settings::ToolNamespace::Host;
            let taken: HashSet<&str> = self
                .conns
                .values()
                .filter(|other| shared_namespace && other.source.extension != c.source.extension)
                .flat_map(|other| other.catalog.iter().map(|t| t.name.as_str()))
                .collect();
            if let Some(clash) = catalog.iter().find(|t| taken.contains(t.name.as_str())) {
                return Err(invalid(format!(
                    "tool `{}` belongs to another extension",
                    clash.name
                )));
            }
            if let Some(clash) = catalog.iter().find(|t| self.shared.is_host_tool(&t.name)) {
                return Err(invalid(format!(
                    "tool `{}` is one of the host's own tools",
                    clash.name
                )));
            }
        } else {
            let names = params
                .get("names")
                .and_then(Value::as_array)
                .ok_or_else(|| invalid("`names` must be an array".into()))?;
            if names.len() > MAX_TOOLS {
                return Err(invalid(format!("at most {MAX_TOOLS} names per request")));
            }
            let mut seen = HashSet::new();
            for name in names {
                let name = name
                    .as_str()
                    .ok_or_else(|| invalid("every name must be a string".into()))?;
                if crate::manifest::rules::check_contribution_name(name).is_err() {
                    return Err(invalid(format!("`{name}` is not a valid tool identifier")));
                }
                if !seen.insert(name) {
                    return Err(invalid(format!("`{name}` appears twice")));
                }
            }
            catalog.retain(|t| !seen.contains(t.name.as_str()));
        }
        let c = self.conns.get_mut(&conn).expect("connection is live");
        c.catalog_revision += 1;
        c.catalog = Arc::new(catalog);
        let names: Vec<&str> = c.catalog.iter().map(|t| t.name.as_str()).collect();
        let answer = json!({"revision": c.catalog_revision, "tools": names});
        self.emit_tools(conn);
        Ok(answer)
    }

    /// After a catalog acknowledgement was queued: if it cannot be delivered, host and
    /// extension would disagree on the catalog, so the dynamic group is removed and the
    /// generation terminated (section 2.11).
    pub(super) fn check_catalog_ack(&mut self, conn: ConnId) {
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        if c.writer_failed {
            if let Some(negotiated) = &c.negotiated {
                c.catalog = Arc::new(negotiated.tools.clone());
            }
            c.last_error = Some("a catalog acknowledgement could not be delivered".into());
            self.terminate(conn, crate::model::status::LifecycleState::Degraded);
        }
    }

    /// `presentation/update` (section 2.5): validate the whole snapshot, resolve its
    /// owner (a live parent, an issued triple, or the process), drop stale revisions,
    /// retain it, and emit it through the 32-per-second throttle.
    pub(super) fn on_presentation(&mut self, conn: ConnId, params: &Value) {
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        let source = c.source.clone();
        let refuse = |reason: String| Diagnostic::Refused {
            method: "presentation/update".into(),
            reason,
        };
        if !c.api.has_v0_2_fields() || !c.located.manifest.contributes.presentation {
            self.shared.events.diagnostic(
                &source,
                refuse("the manifest does not declare presentation".into()),
            );
            return;
        }
        let update = match parse_update(params, &c.located.manifest.contributes.commands) {
            Ok(update) => update,
            Err(e) => {
                self.shared
                    .events
                    .diagnostic(&source, refuse(e.to_string()));
                return;
            }
        };
        let owner = match &update.scope {
            PresentationScope::Parent(id) => {
                if !c.pending.is_call(id) {
                    self.shared.events.diagnostic(
                        &source,
                        refuse(format!("request {id} is not an active host request")),
                    );
                    return;
                }
                PresentationOwner::Resource(c.owner.clone())
            }
            PresentationScope::Owner(triple) if *triple == c.owner => {
                PresentationOwner::Resource(triple.clone())
            }
            PresentationScope::Owner(_) => {
                self.shared
                    .events
                    .diagnostic(&source, refuse("a stale or foreign resource_owner".into()));
                return;
            }
            PresentationScope::Process => PresentationOwner::Process,
        };
        let store = self
            .presentations
            .entry(source.extension.clone())
            .or_default();
        if let Err(stale) = store.accept(source.generation, owner.clone(), update.snapshot.clone())
        {
            self.shared
                .events
                .diagnostic(&source, refuse(format!("stale snapshot: {stale}")));
            return;
        }
        let now = Instant::now();
        let c = self.conns.get_mut(&conn).expect("connection is live");
        match c.presentation.offer(now, owner.clone(), update.snapshot) {
            Offer::Emit(snapshot) => self.shared.events.emit(HostEvent::Presentation {
                source,
                owner,
                snapshot: Box::new(snapshot),
            }),
            Offer::Coalesced { diagnose } => {
                if diagnose {
                    self.shared.events.diagnostic(
                        &source,
                        refuse(
                            "more than 32 snapshots in one second; coalescing, newest wins".into(),
                        ),
                    );
                }
                if let Some(at) = c.presentation.next_wakeup() {
                    self.timers.schedule(at, Timer::PresentationPoll { conn });
                }
            }
        }
    }

    /// The throttle window opened again: emit the held snapshots.
    pub(super) fn on_presentation_poll(&mut self, conn: ConnId) {
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        let source = c.source.clone();
        let now = Instant::now();
        while let Some((owner, snapshot)) = c.presentation.poll(now) {
            self.shared.events.emit(HostEvent::Presentation {
                source: source.clone(),
                owner,
                snapshot: Box::new(snapshot),
            });
        }
        if let Some(at) = c.presentation.next_wakeup() {
            self.timers.schedule(at, Timer::PresentationPoll { conn });
        }
    }
}

/// Wipes a served secret from a result value once it has been encoded (best effort;
/// the extension's copy is its own, section 2.10).
pub(super) fn wipe_result(mut value: Value) {
    wipe_json(&mut value);
}
