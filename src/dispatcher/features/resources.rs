//! Native resource refs (section 2.26): the dispatcher's side of
//! `features::resources`.
//!
//! - `resource/register` and `resource/release`, answered at once under a live
//!   `tool/call` parent ([`Dispatcher::on_resource_request`]).
//! - A `tool/call` pins its input resources when it is actually sent
//!   ([`Dispatcher::pin_resources`]) and releases them when the extension settles it
//!   ([`Dispatcher::unpin_resources`]): its answer, a refused answer, or a cancelled
//!   call's late answer; a frame the writer never started releases them at once.
//! - A call's answer exports its declared outputs, checked on the dispatcher with the
//!   whole result so that activation is atomic (`exports.rs`); a failed, invalid or
//!   cancelled call retires what it registered.
//! - Retired values are disposed of with host-to-extension `resource/dispose`
//!   requests of at most 32 refs; an answer without a known status for every ref, an
//!   error answer or none within the deadline ends the generation.

use std::time::Instant;

use serde_json::{json, Value};

use crate::dispatcher::pending::{FeatureRequest, PendingKind};
use crate::dispatcher::route::HostMethod;
use crate::dispatcher::timers::Timer;
use crate::dispatcher::Dispatcher;
use crate::features::resources::ResourceError;
use crate::limits::{MAX_DISPOSE_RESOURCES, RESOURCE_DISPOSE_TIMEOUT};
use crate::model::call::CallError;
use crate::model::status::LifecycleState;
use crate::negotiation::Feature;
use crate::transport::ConnId;
use crate::validate::resource::{ResourceRef, TypeId};
use crate::wire::ResponseError;

/// A malformed resource request.
fn invalid(why: &str) -> ResourceError {
    ResourceError::Invalid(why.to_string())
}

/// The closed params of `resource/register` or `resource/release`: the parent, and the
/// one other member the method takes.
fn read_params<'a>(params: &'a Value, other: &str) -> Result<(u64, &'a Value), ResourceError> {
    let map = params
        .as_object()
        .ok_or_else(|| invalid("params must be an object"))?;
    if let Some(name) = map
        .keys()
        .find(|k| *k != "parent_request_id" && k.as_str() != other)
    {
        return Err(ResourceError::Invalid(format!(
            "the params have the unknown member `{name}`"
        )));
    }
    let parent = map
        .get("parent_request_id")
        .and_then(Value::as_u64)
        .ok_or_else(|| invalid("`parent_request_id` must be the id of a live tool/call"))?;
    let value = map
        .get(other)
        .ok_or_else(|| ResourceError::Invalid(format!("`{other}` is required")))?;
    Ok((parent, value))
}

impl Dispatcher {
    /// `resource/register` or `resource/release` of `conn`.
    pub(in crate::dispatcher) fn on_resource_request(
        &mut self,
        conn: ConnId,
        method: HostMethod,
        params: &Value,
    ) -> Result<Value, ResponseError> {
        let answer = self.resource_request(conn, method, params);
        if let Err(error) = &answer {
            self.report_refused(conn, method.name(), error.to_string());
        }
        answer.map_err(|error| error.to_response_error())
    }

    fn resource_request(
        &mut self,
        conn: ConnId,
        method: HostMethod,
        params: &Value,
    ) -> Result<Value, ResourceError> {
        let c = self.conns.get_mut(&conn).expect("connection is live");
        if !c.features().contains(Feature::ResourceRefsV1) {
            return Err(ResourceError::UnsupportedFeature);
        }
        match method {
            HostMethod::ResourceRegister => {
                let (parent, type_id) = read_params(params, "type")?;
                if !c.pending.is_tool_call(&parent) {
                    return Err(invalid("`parent_request_id` names no live tool/call"));
                }
                let type_id = type_id
                    .as_str()
                    .and_then(TypeId::parse)
                    .ok_or_else(|| invalid("`type` must be a nominal type id"))?;
                // Registration grants nothing by itself: only a type the parent's tool
                // can export is worth a record.
                let exportable = c
                    .features
                    .resources
                    .outputs_of(parent)
                    .is_some_and(|slots| slots.iter().any(|slot| slot.type_id == type_id));
                if !exportable {
                    return Err(ResourceError::TypeMismatch);
                }
                let resource = c.features.resources.register(parent, type_id)?;
                Ok(resource.to_value())
            }
            HostMethod::ResourceRelease => {
                let (parent, resource) = read_params(params, "resource")?;
                if !c.pending.is_tool_call(&parent) {
                    return Err(invalid("`parent_request_id` names no live tool/call"));
                }
                let resource = ResourceRef::parse(resource)
                    .map_err(|problem| ResourceError::Invalid(problem.to_string()))?;
                let retired = c.features.resources.release(parent, &resource)?;
                self.dispose(conn, vec![retired]);
                Ok(json!({"retired": true, "cleanup": "pending"}))
            }
            _ => Err(invalid("not a resource method")),
        }
    }

    /// A `tool/call` of `tool` with `arguments` is about to be sent as request `id`:
    /// its declared inputs that the arguments carry are checked and pinned for it,
    /// all or none, and its declared outputs are remembered for its settlement.
    pub(in crate::dispatcher) fn pin_resources(
        &mut self,
        conn: ConnId,
        id: u64,
        tool: &str,
        arguments: &Value,
    ) -> Result<(), CallError> {
        let Some(c) = self.conns.get_mut(&conn) else {
            return Ok(());
        };
        if !c.features().contains(Feature::ResourceRefsV1) {
            return Ok(());
        }
        let Some(operation) = c
            .catalog
            .iter()
            .find(|t| t.name == tool)
            .and_then(|t| t.operation.as_ref())
        else {
            return Ok(());
        };
        let mut inputs = Vec::new();
        for slot in &operation.resource_inputs {
            let Some(value) = slot.path.lookup(arguments) else {
                continue;
            };
            let refused = |error| CallError::ResourceRefused {
                path: slot.path.to_string(),
                error,
            };
            let resource = ResourceRef::parse(value)
                .map_err(|problem| refused(ResourceError::Invalid(problem.to_string())))?;
            if resource.type_id != slot.type_id {
                return Err(refused(ResourceError::TypeMismatch));
            }
            inputs.push((slot.path.to_string(), resource));
        }
        let refs: Vec<ResourceRef> = inputs.iter().map(|(_, r)| r.clone()).collect();
        if let Err(error) = c.features.resources.pin(id, &refs) {
            // Name the first input that is refused on its own.
            let path = inputs
                .iter()
                .find(|(_, r)| !c.features.resources.is_active(r))
                .or(inputs.first())
                .map(|(path, _)| path.clone())
                .unwrap_or_default();
            return Err(CallError::ResourceRefused { path, error });
        }
        if !operation.resource_outputs.is_empty() {
            let outputs = operation.resource_outputs.clone();
            c.features.resources.expect_outputs(id, tool, outputs);
        }
        Ok(())
    }

    /// The extension settled request `id` (or it was never sent): its pins are
    /// released, and the values invalidated meanwhile are disposed of.
    pub(in crate::dispatcher) fn unpin_resources(&mut self, conn: ConnId, id: u64) {
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        let dispose = c.features.resources.unpin(id);
        self.dispose(conn, dispose);
    }

    /// The call `id` ended without a successful answer (an error, a refused answer, a
    /// cancellation that won): what it registered is retired.
    pub(in crate::dispatcher) fn retire_resources(&mut self, conn: ConnId, id: u64) {
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        c.features.resources.forget_outputs(id);
        let retired = c.features.resources.retire_parent(id);
        self.dispose(conn, retired);
    }

    /// Every live value of `conn` is invalidated (its owner went away); they are
    /// disposed of, each pinned one once its call settles.
    pub(in crate::dispatcher) fn invalidate_resources(&mut self, conn: ConnId) {
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        let retired = c.features.resources.invalidate();
        self.dispose(conn, retired);
    }

    /// The routed, ready generation whose records hold `resource` active.
    pub(in crate::dispatcher) fn resource_home(
        &self,
        resource: &ResourceRef,
    ) -> Option<crate::features::operation_discovery::ResourceHome> {
        self.routes.values().find_map(|conn| {
            let c = self.conns.get(conn)?;
            (c.state == LifecycleState::Ready && c.features.resources.is_active(resource)).then(
                || crate::features::operation_discovery::ResourceHome {
                    extension: c.source.extension.clone(),
                    generation: c.source.generation,
                    revision: c.catalog_revision,
                    catalog: c.catalog.clone(),
                },
            )
        })
    }

    /// Sends `resource/dispose` for `retired`, 32 refs a request.
    pub(in crate::dispatcher) fn dispose(&mut self, conn: ConnId, retired: Vec<ResourceRef>) {
        if retired.is_empty() {
            return;
        }
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        if !c.transport_alive() || c.stage != crate::dispatcher::connection::ShutdownStage::None {
            // The generation is going away, and its native objects with it.
            return;
        }
        for batch in retired.chunks(MAX_DISPOSE_RESOURCES) {
            let id = c.next_request_id();
            let resources: Vec<Value> = batch.iter().map(ResourceRef::to_value).collect();
            let params = json!({"resources": resources, "reason": "retired"});
            let Ok(bytes) = c.encode_request(id, "resource/dispose", &params) else {
                continue;
            };
            let tokens = batch.iter().map(|r| r.token.clone()).collect();
            let request = FeatureRequest {
                feature: super::RuntimeFeature::name(&super::ResourceRefs),
                state: Box::new(Dispose { tokens }),
            };
            c.send_request(id, PendingKind::Feature(request), bytes);
            self.timers.schedule(
                Instant::now() + RESOURCE_DISPOSE_TIMEOUT,
                Timer::RequestDeadline { conn, id },
            );
        }
    }

    /// The answer to a `resource/dispose` of `tokens`: every ref needs a status of
    /// `completed` or `failed`; anything else is unknown cleanup, which ends the
    /// generation (section 2.26).
    pub(in crate::dispatcher) fn on_dispose_answer(
        &mut self,
        conn: ConnId,
        tokens: Vec<String>,
        outcome: Result<Value, ResponseError>,
    ) {
        let unknown = match &outcome {
            Ok(value) => unknown_cleanup(value, &tokens),
            Err(error) => Some(format!("it answered with an error: {}", error.message)),
        };
        match unknown {
            None => {
                if let Some(c) = self.conns.get_mut(&conn) {
                    for token in &tokens {
                        c.features.resources.disposed(token);
                    }
                }
            }
            Some(why) => self.end_for_unknown_cleanup(conn, &why),
        }
    }

    /// A `resource/dispose` got no answer within its deadline.
    pub(in crate::dispatcher) fn on_dispose_deadline(&mut self, conn: ConnId) {
        self.end_for_unknown_cleanup(
            conn,
            &format!(
                "it was not answered within {} s",
                RESOURCE_DISPOSE_TIMEOUT.as_secs()
            ),
        );
    }

    fn end_for_unknown_cleanup(&mut self, conn: ConnId, why: &str) {
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        let reason = format!(
            "the cleanup of native resources is unknown, so the generation was ended: \
             resource/dispose {why}"
        );
        c.last_error = Some(reason.clone());
        self.report_refused(conn, "resource/dispose", reason);
        self.set_state(conn, LifecycleState::Degraded);
        self.terminate(conn, LifecycleState::Degraded);
    }
}

/// A `resource/dispose` in flight: the tokens of the refs it disposes.
pub(super) struct Dispose {
    pub tokens: Vec<String>,
}

/// Why a dispose answer leaves the cleanup of `tokens` unknown, if it does.
fn unknown_cleanup(value: &Value, tokens: &[String]) -> Option<String> {
    let Some(results) = value.get("results").and_then(Value::as_array) else {
        return Some("answered without a `results` array".into());
    };
    for token in tokens {
        let status = results
            .iter()
            .find(|r| r.get("resource").and_then(|v| v.get("$resource")) == Some(&json!(token)))
            .and_then(|r| r.get("status"))
            .and_then(Value::as_str);
        match status {
            Some("completed" | "failed") => {}
            Some(other) => return Some(format!("answered the unknown status {other:?}")),
            None => {
                return Some("answered no status for a resource it was asked to dispose".into())
            }
        }
    }
    None
}
