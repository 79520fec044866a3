//! Tool composition (section 2.25, `tool_composition_v1`): the dispatcher's side.
//!
//! When a generation that negotiated the feature is sent a `tool/call`, the host
//! freezes the registry of every routed extension's model-visible tools for it
//! ([`Dispatcher::freeze_composition`]) with one 30 s deadline and room for 256 nested
//! calls. The call's program may then ask, with that call as `parent_request_id`:
//!
//! - `composition/context`: the frozen tools, the composing tool's store and the limits,
//!   answered at once;
//! - `composition/call`: one nested call, checked against the frozen tool and its
//!   schema before anything runs, then sent to its target's current generation like
//!   any call (with a host-issued id, its own catalog validation and cancellation).
//!   A parent's nested calls run one at a time, in the order they came; a thread per
//!   running call turns its answer into the composition answer (a value, the complete
//!   outcome, or a sidecar file when it does not fit in a frame);
//! - `composition/store`: the parent's one write batch, synced on a thread before it
//!   is acknowledged.
//!
//! A parent that settles, an extension that withdraws its request and a generation
//! that goes away revoke the nested calls: a running one is cancelled on its target
//! (`$/cancelRequest`), queued ones never start, and the sidecars nobody read are
//! removed.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use serde_json::{json, Value};

use crate::dispatcher::command::{CallRequest, HostRequest};
use crate::dispatcher::connection::{ChildKind, ChildRequest};
pub(in crate::dispatcher) use crate::dispatcher::reply::NestedReply;
use crate::dispatcher::reply::{Relay, ReplyTo};
use crate::dispatcher::route::HostMethod;
use crate::dispatcher::Dispatcher;
use crate::features::composition::params::{self, CallParams};
use crate::features::composition::{sidecar, Registry};
use crate::limits::{
    MAX_COMPOSITION_CALLS, MAX_COMPOSITION_SIDECARS, MAX_COMPOSITION_SIDECAR_BYTES,
    MAX_COMPOSITION_UPDATES,
};
use crate::model::call::{CallError, CallId, CallReply, CancelReason};
use crate::model::frontend::CancelFlag;
use crate::model::status::LifecycleState;
use crate::negotiation::{Feature, ToolDefinition};
use crate::services::bound::{Outcome, ServiceAnswer};
use crate::text::head;
use crate::transport::{ConnId, OutboundFrame};
use crate::wire::codec::CodecEncodeError;
use crate::wire::{codes, RequestId, ResponseError};

/// The methods of composition (section 2.25).
pub(in crate::dispatcher) const METHODS: &[HostMethod] = &[
    HostMethod::CompositionContext,
    HostMethod::CompositionCall,
    HostMethod::CompositionStore,
];

pub(in crate::dispatcher) mod parent;

use parent::{CompositionParent, Nested};

/// Most bytes of a failed nested tool's text that its error quotes.
const ERROR_TEXT_BYTES: usize = 4096;

fn refused(message: impl Into<String>) -> ResponseError {
    ResponseError::new(codes::NO_OWNER, message)
}

fn invalid(message: impl Into<String>) -> ResponseError {
    ResponseError::new(codes::INVALID_PARAMS, message)
}

impl Dispatcher {
    /// The frozen snapshot of every routed, ready extension's tools, by name. The last
    /// snapshot is kept with the catalogs it was made of: while no catalog changed, the
    /// next `tool/call` shares it instead of compiling every schema again.
    pub(in crate::dispatcher) fn freeze_composition(&mut self) -> Arc<Registry> {
        let mut routed: Vec<(&String, &ConnId)> = self.routes.iter().collect();
        routed.sort();
        let catalogs: Vec<(String, Arc<Vec<ToolDefinition>>)> = routed
            .into_iter()
            .filter_map(|(name, conn)| {
                let c = self.conns.get(conn)?;
                (c.state == LifecycleState::Ready).then(|| (name.clone(), c.catalog.clone()))
            })
            .collect();
        if let Some(frozen) = &self.features.frozen {
            let same = frozen.made_of.len() == catalogs.len()
                && frozen
                    .made_of
                    .iter()
                    .zip(&catalogs)
                    .all(|(a, b)| a.0 == b.0 && Arc::ptr_eq(&a.1, &b.1));
            if same {
                return frozen.registry.clone();
            }
        }
        let registry = Arc::new(Registry::freeze(
            catalogs
                .iter()
                .map(|(name, catalog)| (name.as_str(), catalog)),
        ));
        self.features.frozen = Some(parent::Frozen {
            made_of: catalogs,
            registry: registry.clone(),
        });
        registry
    }

    /// A `tool/call` was sent as request `id` on `conn`: if the generation composes,
    /// its program may now compose under it.
    pub(in crate::dispatcher) fn composition_admitted(
        &mut self,
        conn: ConnId,
        id: u64,
        tool: &str,
    ) {
        let composes = self
            .conns
            .get(&conn)
            .is_some_and(|c| c.features().contains(Feature::ToolCompositionV1));
        if !composes {
            return;
        }
        let registry = self.freeze_composition();
        if let Some(c) = self.conns.get_mut(&conn) {
            let store = store_scope(&c.source.extension, tool);
            c.features.compositions.insert(
                id,
                CompositionParent {
                    registry,
                    store,
                    deadline: Instant::now() + self.shared.features.composition.timeout,
                    calls: 0,
                    committed: false,
                    running: None,
                    queued: VecDeque::new(),
                    sidecars: Vec::new(),
                },
            );
        }
    }

    /// The parent `id` on `conn` settled: its sidecars nobody read are removed (its
    /// nested calls were withdrawn with its children).
    pub(in crate::dispatcher) fn composition_settled(&mut self, conn: ConnId, id: u64) {
        let Some(parent) = self
            .conns
            .get_mut(&conn)
            .and_then(|c| c.features.compositions.remove(&id))
        else {
            return;
        };
        for path in parent.sidecars {
            let _ = std::fs::remove_file(path);
        }
    }

    /// A `composition/*` request: checked against its live parent, then answered.
    pub(in crate::dispatcher) fn on_composition_request(
        &mut self,
        conn: ConnId,
        id: &RequestId,
        method: HostMethod,
        params: Option<&Value>,
    ) -> Result<(), ResponseError> {
        let c = self.conns.get_mut(&conn).expect("connection is live");
        if !c.features().contains(Feature::ToolCompositionV1) {
            return Err(crate::services::bound::Refusal::UnsupportedFeature
                .because(format!(
                    "{} needs tool_composition_v1, which was not negotiated",
                    method.name()
                ))
                .to_response());
        }
        let params = params.cloned().unwrap_or(Value::Null);
        let parent = params::parent_of(&params).map_err(invalid)?;
        if !c.features.compositions.contains_key(&parent) || !c.pending.is_tool_call(&parent) {
            return Err(refused(format!(
                "parent_request_id {parent} is not a live model tool/call of this generation"
            )));
        }
        match method {
            HostMethod::CompositionContext => {
                params::context(&params).map_err(invalid)?;
                self.composition_context(conn, id, parent)
            }
            HostMethod::CompositionCall => {
                let call = params::call(&params).map_err(invalid)?;
                self.composition_call(conn, id, call)
            }
            _ => {
                let store = params::store(&params).map_err(invalid)?;
                self.composition_store(conn, id, store)
            }
        }
    }

    fn composition_context(
        &mut self,
        conn: ConnId,
        id: &RequestId,
        parent: u64,
    ) -> Result<(), ResponseError> {
        let c = self.conns.get_mut(&conn).expect("connection is live");
        let state = &c.features.compositions[&parent];
        let store = self
            .shared
            .features
            .composition
            .store
            .load(&state.store)
            .map_err(|e| refused(e.to_string()))?;
        let context = json!({
            "tools": state.registry.to_value(),
            "store": Value::Object(store),
            "limits": {
                "timeout_ms": self.shared.features.composition.timeout.as_millis() as u64,
                "max_calls": MAX_COMPOSITION_CALLS,
            },
        });
        self.answer_composed(conn, id, parent, &context, "context_file");
        Ok(())
    }

    /// Answers `id` with `value`; an answer too large for the generation's frame is
    /// written to a sidecar file (recorded with `parent`, so that it is removed if
    /// nobody reads it) and answered with the envelope naming it under `member`.
    fn answer_composed(
        &mut self,
        conn: ConnId,
        id: &RequestId,
        parent: u64,
        value: &Value,
        member: &str,
    ) {
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        match c.encode_result(id, value) {
            Ok(bytes) => {
                return c.push_frame(OutboundFrame {
                    bytes,
                    state: None,
                    wipe: false,
                })
            }
            Err(CodecEncodeError::TooLarge { .. }) => {}
            Err(e) => {
                let error = ResponseError::new(codes::INTERNAL_ERROR, e.to_string());
                return self.send_error(conn, id, &error);
            }
        }
        let state = c.features.compositions.get_mut(&parent);
        let room = state
            .as_ref()
            .is_some_and(|s| s.sidecars.len() < MAX_COMPOSITION_SIDECARS);
        match write_sidecar(c.scratch.path(), room, value, member) {
            Ok((envelope, path)) => {
                if let Some(state) = state {
                    state.sidecars.push(path);
                }
                self.answer_with(conn, id, &envelope, false);
            }
            Err(error) => self.send_error(conn, id, &error),
        }
    }

    fn composition_call(
        &mut self,
        conn: ConnId,
        id: &RequestId,
        params: CallParams,
    ) -> Result<(), ResponseError> {
        let parent = params.parent_request_id;
        let c = self.conns.get_mut(&conn).expect("connection is live");
        let state = c
            .features
            .compositions
            .get_mut(&parent)
            .expect("checked by the caller");
        if state.calls >= MAX_COMPOSITION_CALLS {
            return Err(refused(format!(
                "a parent makes at most {MAX_COMPOSITION_CALLS} nested calls"
            )));
        }
        if Instant::now() >= state.deadline {
            return Err(refused(format!(
                "the parent's {} ms composition deadline passed",
                self.shared.features.composition.timeout.as_millis()
            )));
        }
        // Unknown tools and arguments that break the frozen schema never reach a
        // target. With `full_outcome` they become host-created error outcomes (raw,
        // non-object arguments are admitted only there); otherwise they are refused.
        let tool = state.registry.get(&params.name).cloned();
        let failure = match &tool {
            None => Some(format!(
                "`{}` is not a tool of the frozen snapshot (see composition/context)",
                params.name
            )),
            Some(_) if !params.arguments.is_object() => {
                Some("arguments must be an object".to_string())
            }
            Some(tool) => tool.arguments.as_ref().and_then(|schema| {
                let e = schema.validate(&params.arguments).err()?;
                Some(format!(
                    "arguments for `{}` break its schema at `{}`: {e}",
                    params.name, e.instance_path
                ))
            }),
        };
        if let Some(why) = failure {
            if !params.full_outcome {
                return Err(invalid(why));
            }
            state.calls += 1;
            let nested_id = format!("{parent}/{}", state.calls);
            let outcome = error_outcome(&nested_id, &params.name, &params.arguments, &why);
            self.answer_with(conn, id, &outcome, false);
            return Ok(());
        }
        let tool = tool.expect("a failure otherwise");
        state.calls += 1;
        let nested_id = format!("{parent}/{}", state.calls);
        c.children.insert(
            id.clone(),
            ChildRequest {
                kind: ChildKind::Nested { call: None },
                parent: Some(parent),
                cancelled: CancelFlag::default(),
            },
        );
        state.queued.push_back(Nested {
            id: id.clone(),
            tool,
            params,
            nested_id,
        });
        self.next_nested(conn, parent);
        Ok(())
    }

    /// Starts the parent's next queued nested call when none is running.
    fn next_nested(&mut self, conn: ConnId, parent: u64) {
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        let live = c.pending.is_tool_call(&parent);
        let Some(state) = c.features.compositions.get_mut(&parent) else {
            return;
        };
        if state.running.is_some() {
            return;
        }
        if !live {
            // The parent is settling: what is queued never starts.
            state.queued.clear();
            return;
        }
        let Some(nested) = state.queued.pop_front() else {
            return;
        };
        let remaining = state.deadline.saturating_duration_since(Instant::now());
        let call = CallId(
            self.shared
                .next_call
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        );
        if let Some(child) = c.children.get_mut(&nested.id) {
            child.kind = ChildKind::Nested { call: Some(call) };
        }
        let request = CallRequest {
            call,
            extension: nested.tool.extension.clone(),
            request: HostRequest::ToolCall {
                name: nested.tool.definition.name.clone(),
                arguments: nested.params.arguments.clone(),
            },
            deadline: remaining,
            progress: None,
            reply: ReplyTo::Nested {
                conn,
                request: nested.id.clone(),
                to: self.features.nested_reply_sender.clone(),
            },
            preapproved: false,
            stream: None,
            relay: nested.params.updates.then(|| {
                Relay::new(
                    conn,
                    nested.id.clone(),
                    "composition/update",
                    MAX_COMPOSITION_UPDATES,
                )
            }),
        };
        state.running = Some(nested);
        self.on_call(Box::new(request));
    }

    /// A nested call settled: its `composition/call` is answered (unless it was
    /// withdrawn meanwhile) and the parent's next nested call may start. The answer is
    /// made here, on the dispatcher, which spares the nested call a thread and two
    /// hand-offs: a small result is checked in microseconds, and only an answer too
    /// large for a frame is written to its sidecar file first.
    pub(in crate::dispatcher) fn on_nested_reply(&mut self, nested: NestedReply) {
        let NestedReply {
            conn,
            request,
            reply,
        } = nested;
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        let Some(child) = c.children.remove(&request) else {
            return;
        };
        let Some(parent) = child.parent else {
            return;
        };
        let Some(state) = c.features.compositions.get_mut(&parent) else {
            return;
        };
        let Some(running) = state.running.take().filter(|n| n.id == request) else {
            return;
        };
        match nested_outcome(reply, &running) {
            Ok(value) => self.answer_composed(conn, &request, parent, &value, "value_file"),
            Err(error) => self.send_error(conn, &request, &error),
        }
        self.next_nested(conn, parent);
    }

    /// The nested call of `id` ended: the parent's next one may start.
    fn nested_done(&mut self, conn: ConnId, parent: u64, id: &RequestId) {
        if let Some(state) = self
            .conns
            .get_mut(&conn)
            .and_then(|c| c.features.compositions.get_mut(&parent))
        {
            if state.running.as_ref().is_some_and(|n| &n.id == id) {
                state.running = None;
            }
            state.queued.retain(|n| &n.id != id);
        }
        self.next_nested(conn, parent);
    }

    /// The generation `conn` goes away: its running nested calls are cancelled on their
    /// targets and the sidecars nobody read are removed.
    pub(in crate::dispatcher) fn composition_gone(&mut self, conn: ConnId) {
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        // A registry frozen from this generation's catalog is not kept past it: the
        // next composition freezes the catalogs of the generations that run then.
        if self
            .features
            .frozen
            .as_ref()
            .is_some_and(|f| f.holds(&c.catalog))
        {
            self.features.frozen = None;
        }
        let running: Vec<CallId> = c
            .children
            .values()
            .filter_map(|child| match child.kind {
                ChildKind::Nested { call } => call,
                _ => None,
            })
            .collect();
        let parents: Vec<u64> = c.features.compositions.keys().copied().collect();
        for call in running {
            self.cancel_call(call, CancelReason::Shutdown);
        }
        for parent in parents {
            self.composition_settled(conn, parent);
        }
    }

    /// A `composition/call` was withdrawn before its answer (its parent settled, the
    /// extension cancelled it, the generation went away): a running nested call is
    /// cancelled on its target, a queued one never starts.
    pub(in crate::dispatcher) fn composed_withdrawn(
        &mut self,
        conn: ConnId,
        id: &RequestId,
        child: &ChildRequest,
    ) {
        let ChildKind::Nested { call } = &child.kind else {
            return;
        };
        if let Some(call) = call {
            self.cancel_call(*call, CancelReason::User);
        }
        if let Some(parent) = child.parent {
            self.nested_done(conn, parent, id);
        }
    }

    fn composition_store(
        &mut self,
        conn: ConnId,
        id: &RequestId,
        store: params::StoreParams,
    ) -> Result<(), ResponseError> {
        let parent = store.parent_request_id;
        let c = self.conns.get_mut(&conn).expect("connection is live");
        let state = c
            .features
            .compositions
            .get_mut(&parent)
            .expect("checked by the caller");
        if state.committed {
            return Err(refused("a parent commits its store at most once"));
        }
        state.committed = true;
        let scope = state.store.clone();
        c.children.insert(
            id.clone(),
            ChildRequest {
                kind: ChildKind::Brokered,
                parent: Some(parent),
                cancelled: CancelFlag::default(),
            },
        );
        let stores = self.shared.features.composition.store.clone();
        let answers = self.service_answer_sender.clone();
        let request = id.clone();
        let job = move || {
            let outcome = match stores.commit(&scope, store.set, &store.delete) {
                Ok(()) => Outcome::Answered(json!({})),
                Err(e) => Outcome::Error(refused(e.to_string())),
            };
            let _ = answers.send(ServiceAnswer {
                conn,
                id: request,
                outcome,
            });
        };
        if let Err(e) = std::thread::Builder::new()
            .name("octet-compose-store".into())
            .spawn(job)
        {
            if let Some(c) = self.conns.get_mut(&conn) {
                c.children.remove(id);
            }
            return Err(refused(format!("no thread to write the store: {e}")));
        }
        Ok(())
    }
}

/// The scope of the store of `extension`'s composing tool `tool` (section 2.25: "scoped
/// by the composing tool's host-derived name"): the name qualified with its extension,
/// the form the host derives for a tool name two extensions share. It is always
/// qualified, so that which other extensions run never changes a tool's scope, and two
/// extensions' composing tools of one name never share a store.
fn store_scope(extension: &str, tool: &str) -> String {
    format!("{extension}/{tool}")
}

/// `value`, which is too large for a frame, in a new sidecar file in `scratch` (when
/// the parent has `room` for one more): the envelope naming it under `member`, and its
/// path.
fn write_sidecar(
    scratch: &std::path::Path,
    room: bool,
    value: &Value,
    member: &str,
) -> Result<(Value, PathBuf), ResponseError> {
    if !room {
        return Err(refused(format!(
            "the answer needs a sidecar file, and this parent has its \
             {MAX_COMPOSITION_SIDECARS}; read the ones it has, or ask for less"
        )));
    }
    let bytes = serde_json::to_vec(value).expect("JSON values serialize");
    if bytes.len() > MAX_COMPOSITION_SIDECAR_BYTES {
        return Err(refused(format!(
            "the answer is {} bytes, more than the {MAX_COMPOSITION_SIDECAR_BYTES} a sidecar \
             carries; ask for less",
            bytes.len()
        )));
    }
    let written = sidecar::write(scratch, &bytes)
        .map_err(|e| refused(format!("the sidecar could not be written: {e}")))?;
    Ok((written.envelope(member), written.path))
}

/// A host-created error outcome of a complete-outcome call of the tool `name`.
fn error_outcome(nested_id: &str, name: &str, arguments: &Value, why: &str) -> Value {
    json!({"value": {
        "content": [{"type": "text", "text": why}],
        "is_error": true,
        "tool_call": {"id": nested_id, "name": name, "arguments": arguments},
    }})
}

/// What the composing request is answered once its nested call settled.
fn nested_outcome(received: CallReply, nested: &Nested) -> Result<Value, ResponseError> {
    let tool = &nested.tool;
    let full = nested.params.full_outcome;
    let result = received.and_then(|raw| raw.tool_output(&tool.definition.name));
    let value = match result {
        Ok(output) if full => {
            let mut value = output.to_value();
            value["tool_call"] = json!({
                "id": nested.nested_id,
                "name": tool.name,
                "arguments": nested.params.arguments,
            });
            json!({ "value": value })
        }
        Ok(output) if output.is_error => {
            let text = output.text();
            let mut error = ResponseError::new(
                codes::NO_OWNER,
                format!(
                    "`{}` reported an error: {}",
                    tool.name,
                    head(&text, ERROR_TEXT_BYTES)
                ),
            );
            error.data = Some(
                json!({"tool": tool.name, "is_error": true, "text": head(&text, ERROR_TEXT_BYTES)}),
            );
            return Err(error);
        }
        Ok(output) => match (&tool.definition.output_schema, &output.structured_content) {
            (Some(_), Some(structured)) => json!({ "value": structured.clone() }),
            _ => json!({ "value": output.text() }),
        },
        Err(CallError::Cancelled { .. }) => {
            return Err(ResponseError::new(
                codes::REQUEST_CANCELLED,
                "the nested call was cancelled",
            ))
        }
        Err(error) if full && !revoked(&error) => error_outcome(
            &nested.nested_id,
            &tool.name,
            &nested.params.arguments,
            &error.to_string(),
        ),
        Err(error) => {
            return Err(refused(format!(
                "the nested call of `{}` failed: {error}",
                tool.name
            )))
        }
    };
    Ok(value)
}

/// Failures that revoke the call rather than describe its outcome: they stay RPC
/// errors even for a complete outcome.
fn revoked(error: &CallError) -> bool {
    matches!(
        error,
        CallError::Cancelled { .. }
            | CallError::DeadlineExceeded { .. }
            | CallError::TransportLost { .. }
            | CallError::HostShutDown
    )
}
