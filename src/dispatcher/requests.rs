//! Host requests: starting a generation, admitting calls through the concurrency
//! semaphore, cancelling them (section 1.9) and settling them.

use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;

use super::command::InitRole;
use super::command::{CallRequest, HostRequest};
use super::connection::FailedStart;
use super::connection::{Connection, PendingKind};
use super::guards::AutocompleteChain;
use super::private_lane::PrivateLane;
use super::request_params::request_params;
use super::timers::Timer;
use super::{CallEntry, CallLocation, Dispatcher};
use crate::limits::{CANCELLATION_GRACE, MAX_POST_MUTATION_IDS};
use crate::model::call::{CallError, CallId, CancelReason, MediaScope, RawResult};
use crate::model::events::Diagnostic;
use crate::model::start::StartError;
use crate::model::status::LifecycleState;
use crate::negotiation::Feature;
use crate::services::bound::ServiceKind;
use crate::transport::ConnId;
use crate::validate::HookName;
use crate::wire;
use crate::wire::codec::CodecEncodeError;

/// Most calls that may wait for a concurrency slot on one generation; more fail at once
/// with [`CallError::Overloaded`] (issue 3: "excess calls queue fairly and are bounded").
pub(crate) const MAX_QUEUED_CALLS: usize = 4096;

impl Dispatcher {
    /// An embedder call: route it to the extension's generation and admit it.
    pub(super) fn on_call(&mut self, request: Box<CallRequest>) {
        if self.shutdown.is_some() {
            let _ = request.reply.send(Err(CallError::HostShutDown));
            return;
        }
        let Some(&conn) = self.routes.get(&request.extension) else {
            let error = match self.supervision.get(&request.extension) {
                Some(s) if s.parked.is_some() => CallError::Parked {
                    extension: request.extension,
                    reason: s.parked.clone().expect("checked"),
                },
                Some(s) if s.restart_pending => CallError::NotReady {
                    extension: request.extension,
                    state: LifecycleState::Crashed,
                },
                _ => CallError::NotStarted {
                    extension: request.extension,
                },
            };
            let _ = request.reply.send(Err(error));
            return;
        };
        let c = &self.conns[&conn];
        if c.state != LifecycleState::Ready {
            let _ = request.reply.send(Err(CallError::NotReady {
                extension: request.extension.clone(),
                state: c.state,
            }));
            return;
        }
        if let Err(e) = check_declared(c, &request.request) {
            let _ = request.reply.send(Err(e));
            return;
        }
        let c = self.conns.get_mut(&conn).expect("routed connection exists");
        if let Err(e) = first_post_mutation(c, &request.request) {
            let _ = request.reply.send(Err(e));
            return;
        }
        if c.queued.len() >= MAX_QUEUED_CALLS {
            let _ = request.reply.send(Err(CallError::Overloaded {
                queued: c.queued.len(),
            }));
            return;
        }
        let call = request.call;
        let deadline = request.deadline;
        self.timers
            .schedule(Instant::now() + deadline, Timer::CallDeadline { call });
        self.calls.insert(
            call,
            CallEntry {
                location: CallLocation::Queued(conn),
                deadline,
            },
        );
        c.queued.push_back(request);
        self.admit(conn);
    }

    /// Sends queued calls while the generation has free concurrency slots.
    pub(super) fn admit(&mut self, conn: ConnId) {
        loop {
            let Some(c) = self.conns.get_mut(&conn) else {
                return;
            };
            if c.state != LifecycleState::Ready || c.active() >= c.max_active() {
                return;
            }
            let Some(request) = c.queued.pop_front() else {
                return;
            };
            self.send_call(conn, *request);
        }
    }

    fn send_call(&mut self, conn: ConnId, request: CallRequest) {
        let CallRequest {
            call,
            request,
            reply,
            deadline,
            progress,
            preapproved,
            stream,
            relay,
            ..
        } = request;
        let c = self
            .conns
            .get_mut(&conn)
            .expect("admitting on a live connection");
        let id = c.next_request_id();
        let leaf = open_private_lane(c, id, &request);
        let params = request_params(c, &request, leaf.as_ref());
        let bytes = match c.encode_request(id, request.method(), &params) {
            Ok(bytes) => bytes,
            Err(CodecEncodeError::TooLarge { bytes, limit }) => {
                self.calls.remove(&call);
                let _ = reply.send(Err(CallError::RequestTooLarge { bytes, limit }));
                return;
            }
            Err(e) => {
                self.calls.remove(&call);
                let _ = reply.send(Err(CallError::InvalidRequest {
                    reason: e.to_string(),
                }));
                return;
            }
        };
        if let HostRequest::ToolCall { name, arguments } = &request {
            if let Err(error) = self.admit_tool_call_features(conn, id, name, arguments) {
                self.calls.remove(&call);
                let _ = reply.send(Err(error));
                return;
            }
        }
        let c = self
            .conns
            .get_mut(&conn)
            .expect("admitting on a live connection");
        if let (HostRequest::ProviderStream { stream_id, .. }, Some(events)) = (&request, stream) {
            c.streams.open(stream_id.clone(), events);
        }
        let catalog = c.catalog.clone();
        let tool_call = matches!(request, HostRequest::ToolCall { .. });
        let delegating = tool_call || matches!(request, HostRequest::CommandExecute { .. });
        c.send_request(
            id,
            PendingKind::Call {
                call,
                reply,
                progress,
                catalog,
                tool_call,
                delegating,
                preapproved,
                relay,
            },
            bytes,
        );
        self.calls.insert(
            call,
            CallEntry {
                location: CallLocation::Sent(conn, id),
                deadline,
            },
        );
        if let HostRequest::ToolCall { name, .. } = &request {
            self.each_feature(|f, d| f.tool_call_sent(d, conn, id, name));
        }
    }

    /// Cancels a call exactly as section 1.9 says: a frame the writer has not started
    /// is skipped and nothing is sent; otherwise the complete frame goes out followed
    /// by at most one `$/cancelRequest` (API 0.2 and 0.4 only). The waiter is answered at
    /// once and the id is tombstoned; the extension then has the grace period to settle.
    pub(super) fn cancel_call(&mut self, call: CallId, reason: CancelReason) {
        let Some(entry) = self.calls.remove(&call) else {
            return;
        };
        let error = match reason {
            CancelReason::Timeout => CallError::DeadlineExceeded {
                after: entry.deadline,
            },
            reason => CallError::Cancelled { reason },
        };
        match entry.location {
            CallLocation::Queued(conn) => {
                let Some(c) = self.conns.get_mut(&conn) else {
                    return;
                };
                if let Some(at) = c.queued.iter().position(|r| r.call == call) {
                    let request = c.queued.remove(at).expect("position is in range");
                    let _ = request.reply.send(Err(error));
                }
            }
            CallLocation::Sent(conn, id) => {
                let Some(c) = self.conns.get_mut(&conn) else {
                    return;
                };
                let Some(pending) = c.pending.remove(&id) else {
                    return;
                };
                // Children are withdrawn before the waiter hears the outcome, so a
                // service answer that comes after the outcome is always refused.
                self.settle_children(conn, id);
                self.each_feature(|f, d| f.call_dropped(d, conn, id));
                if let PendingKind::Call { reply, .. } = pending.kind {
                    let _ = reply.send(Err(error));
                }
                let frame = pending.frame;
                let now = Instant::now();
                if frame.try_skip() {
                    // Never sent: the extension holds nothing of it.
                    self.each_feature(|f, d| f.call_released(d, conn, id));
                    let c = self.conns.get_mut(&conn).expect("connection is live");
                    c.tombstones.insert(id, now, false);
                    self.admit(conn);
                    return;
                }
                let c = self.conns.get_mut(&conn).expect("connection is live");
                c.send_cancel_notification(id, reason);
                c.tombstones.insert(id, now, true);
                self.timers
                    .schedule(now + CANCELLATION_GRACE, Timer::CancelGrace { conn, id });
            }
        }
    }

    /// A cancelled request's grace period ended: if the extension still has not
    /// settled it, the generation is degraded and terminated (section 1.9).
    pub(super) fn on_cancel_grace(&mut self, conn: ConnId, id: u64) {
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        let now = Instant::now();
        match c.tombstones.get(id, now) {
            Some(t) if t.awaiting_settlement => {
                let diagnostic = Diagnostic::CancellationUnsettled {
                    id: wire::RequestId::Number(id),
                    grace: CANCELLATION_GRACE,
                };
                c.last_error = Some(diagnostic.to_string());
                self.shared.events.diagnostic(&c.source, diagnostic);
                self.set_state(conn, LifecycleState::Degraded);
                self.terminate(conn, LifecycleState::Degraded);
            }
            _ => {}
        }
    }

    /// Refuses a generation during `initialize`: it is terminated, and whoever waits
    /// hears `error` once it is gone.
    pub(super) fn refuse_start(&mut self, conn: ConnId, role: InitRole, error: StartError) {
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        c.last_error = Some(error.to_string());
        c.failed_start = Some((role, FailedStart::Refused(error)));
        self.terminate(conn, LifecycleState::Stopped);
    }

    /// The `initialize` deadline passed.
    pub(super) fn on_request_deadline(&mut self, conn: ConnId, id: u64) {
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        let Some(pending) = c.pending.remove(&id) else {
            return;
        };
        if let PendingKind::Feature(request) = pending.kind {
            Dispatcher::feature_named(request.feature).request_deadline(self, conn, request.state);
            return;
        }
        if let PendingKind::LifecycleHook = pending.kind {
            // Best effort: the hook is abandoned like any timed-out request.
            let source = c.source.clone();
            if !pending.frame.try_skip() {
                c.send_cancel_notification(id, crate::model::call::CancelReason::Timeout);
            }
            c.tombstones.insert(id, Instant::now(), false);
            self.shared.events.diagnostic(
                &source,
                crate::model::events::Diagnostic::Refused {
                    method: "hook/run".into(),
                    reason: "the lifecycle hook was not answered within its deadline".into(),
                },
            );
            return;
        }
        if let PendingKind::Initialize { role, .. } = pending.kind {
            c.last_error = Some("no initialize answer within the deadline".into());
            let error = StartError::InitializeTimeout {
                after: c.startup_timeout,
                evidence: Box::new(c.startup_evidence(None)),
            };
            self.refuse_start(conn, role, error);
        }
    }

    /// A response to one of our requests.
    pub(super) fn on_response(&mut self, conn: ConnId, response: wire::Response) {
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        let Some(id) = response.id.as_u64() else {
            self.shared
                .events
                .diagnostic(&c.source, Diagnostic::UnknownResponseId { id: response.id });
            return;
        };
        if let Some(pending) = c.pending.remove(&id) {
            match pending.kind {
                PendingKind::Initialize { role, offer } => {
                    // Registrations still waiting end with `initialize` (section 2.20).
                    self.settle_children(conn, id);
                    self.on_initialize_answer(conn, role, offer, response.outcome);
                    self.initialize_settled(conn);
                }
                PendingKind::Shutdown => self.on_shutdown_ack(conn),
                PendingKind::LifecycleHook => self.on_lifecycle_hook_answer(conn, response.outcome),
                PendingKind::Feature(request) => Dispatcher::feature_named(request.feature)
                    .request_answered(self, conn, request.state, response.outcome),
                PendingKind::Call {
                    call,
                    reply,
                    catalog,
                    ..
                } => {
                    self.calls.remove(&call);
                    let negotiated = c
                        .negotiated
                        .clone()
                        .expect("calls only reach ready generations");
                    // Only a generation that negotiated `artifacts` may answer with media
                    // parts; for every other answer there is nothing to copy.
                    let media = c
                        .artifacts
                        .as_ref()
                        .filter(|_| negotiated.features.contains(Feature::Artifacts))
                        .map(|store| MediaScope {
                            store: Arc::clone(store),
                            owner: c.owner.clone(),
                        });
                    let mut answer = match response.outcome {
                        Ok(value) => {
                            let mut raw = RawResult::new(value, negotiated, catalog, media);
                            self.each_feature(|f, d| f.scope_result(d, conn, id, &mut raw));
                            Ok(raw)
                        }
                        Err(error) => Err(CallError::Remote(error)),
                    };
                    // Withdraw the children first: see `cancel_call`.
                    self.settle_children(conn, id);
                    match &answer {
                        Ok(raw) => {
                            if let Some(error) = self.call_answered_features(conn, id, raw) {
                                answer = Err(error);
                            }
                        }
                        Err(_) => self.each_feature(|f, d| f.call_dropped(d, conn, id)),
                    }
                    self.each_feature(|f, d| f.call_released(d, conn, id));
                    let _ = reply.send(answer);
                    self.admit(conn);
                    self.maybe_finish_drain(conn);
                }
            }
            return;
        }
        let now = Instant::now();
        if c.tombstones.get(id, now).is_some() {
            c.tombstones.settle(id);
            self.each_feature(|f, d| f.call_released(d, conn, id));
            let c = self.conns.get_mut(&conn).expect("connection is live");
            self.shared
                .events
                .diagnostic(&c.source, Diagnostic::LateResponse { id: response.id });
            self.admit(conn);
        } else {
            self.shared
                .events
                .diagnostic(&c.source, Diagnostic::UnknownResponseId { id: response.id });
        }
    }

    /// The extension answered call `id` with a frame the host refused (`reason`): the
    /// call fails at once, as if answered with an error, and so does a start whose
    /// `initialize` was answered so. A refused answer to a cancelled id settles it like
    /// any late answer.
    pub(super) fn refuse_answer(&mut self, conn: ConnId, id: u64, reason: String) {
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        if c.pending.initialize_id() == Some(id) {
            let Some(PendingKind::Initialize { role, .. }) = c.pending.remove(&id).map(|p| p.kind)
            else {
                return;
            };
            self.settle_children(conn, id);
            self.refuse_start(conn, role, StartError::RefusedInitializeAnswer { reason });
            return;
        }
        if !c.pending.is_call(&id) {
            if c.tombstones.settle(id) {
                self.each_feature(|f, d| f.call_released(d, conn, id));
                self.admit(conn);
            }
            return;
        }
        let Some(pending) = c.pending.remove(&id) else {
            return;
        };
        // A second answer to the id is then a late response, not an unknown one.
        c.tombstones.insert(id, Instant::now(), false);
        self.settle_children(conn, id);
        self.each_feature(|f, d| {
            f.call_dropped(d, conn, id);
            f.call_released(d, conn, id);
        });
        if let PendingKind::Call { call, reply, .. } = pending.kind {
            self.calls.remove(&call);
            let _ = reply.send(Err(CallError::RefusedResponse { reason }));
        }
        self.admit(conn);
        self.maybe_finish_drain(conn);
    }

    /// Fails every call of `conn` (pending and queued) with `error`, and a pending
    /// `initialize` with the matching start error.
    pub(super) fn fail_all(&mut self, conn: ConnId, error: CallError) {
        self.drop_children(conn);
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        let mut initializing = None;
        for (_, pending) in c.pending.drain() {
            match pending.kind {
                PendingKind::Call { call, reply, .. } => {
                    self.calls.remove(&call);
                    let _ = reply.send(Err(error.clone()));
                }
                PendingKind::Initialize { role, .. } => initializing = Some(role),
                PendingKind::Shutdown | PendingKind::LifecycleHook | PendingKind::Feature(_) => {}
            }
        }
        for request in c.queued.drain(..) {
            self.calls.remove(&request.call);
            let _ = request.reply.send(Err(error.clone()));
        }
        match (initializing, &error) {
            // Reported once the child is reaped, with how it exited (`finish`).
            (Some(role), CallError::TransportLost { reason }) => {
                c.failed_start = Some((role, FailedStart::Lost(reason.clone())));
            }
            (Some(role), _) => self.on_initialize_failed(conn, role, StartError::HostShutDown),
            (None, _) => {}
        }
    }
}

/// Checks that the extension declared what the request names.
/// A `post_mutation` hook reaches a generation once per mutation id within the last
/// [`MAX_POST_MUTATION_IDS`] (SUPPLEMENT "API 0.2 typed hooks": "mutation ids
/// deduplicated over a window of 256"); its id is recorded when it is sent.
fn first_post_mutation(c: &mut Connection, request: &HostRequest) -> Result<(), CallError> {
    let HostRequest::HookRun { hook, payload, .. } = request else {
        return Ok(());
    };
    let Some(id) = payload
        .get("mutation_id")
        .and_then(Value::as_str)
        .filter(|_| hook == "post_mutation")
    else {
        return Ok(());
    };
    if c.recent_mutations.iter().any(|m| m == id) {
        return Err(CallError::InvalidRequest {
            reason: format!(
                "post_mutation `{id}` was sent to this generation already; mutation ids are \
                 deduplicated over the last {MAX_POST_MUTATION_IDS}"
            ),
        });
    }
    if c.recent_mutations.len() == MAX_POST_MUTATION_IDS {
        c.recent_mutations.pop_front();
    }
    c.recent_mutations.push_back(id.to_string());
    Ok(())
}

fn check_declared(c: &Connection, request: &HostRequest) -> Result<(), CallError> {
    let negotiated = c
        .negotiated
        .as_ref()
        .expect("ready generations are negotiated");
    let allowed = match &negotiated.contract {
        Some(contract) => contract.allows(request.method()),
        None => !request.is_v0_3_only(),
    };
    if !allowed {
        return Err(CallError::NotDeclared {
            kind: "method",
            name: request.method().to_string(),
        });
    }
    let contributes = &c.located.manifest.contributes;
    let missing = |kind: &'static str, name: &str| CallError::NotDeclared {
        kind,
        name: name.to_string(),
    };
    match request {
        HostRequest::ToolCall { name, .. } => {
            if !c.catalog.iter().any(|t| &t.name == name) {
                return Err(missing("tool", name));
            }
        }
        HostRequest::CommandExecute { name, .. } => {
            if !negotiated.commands.iter().any(|t| &t.name == name) {
                return Err(missing("command", name));
            }
        }
        HostRequest::HookRun { hook, .. } => {
            if !contributes.hooks.contains(hook) {
                return Err(missing("hook", hook));
            }
            // The model-turn observations go only to an extension that negotiated
            // `session_entries` (section 1.4b; the manifest already requires API 0.4).
            let model_turn = HookName::parse(hook).is_some_and(HookName::is_session_operation);
            if model_turn && !negotiated.features.contains(Feature::SessionEntries) {
                return Err(missing("feature", Feature::SessionEntries.as_str()));
            }
        }
        HostRequest::ContextCollect { .. } => {
            if !contributes.context {
                return Err(missing("context provider", "context/collect"));
            }
        }
        HostRequest::StatusCollect { surface } => {
            if !contributes.ui.contains(surface) {
                return Err(missing("surface", surface.as_str()));
            }
        }
        HostRequest::MenuCollect => {
            if !contributes.menu {
                return Err(missing("menu", "menu/collect"));
            }
        }
        HostRequest::ToolRender { name, .. } => {
            if !contributes.tool_renderers.contains(name) {
                return Err(missing("renderer", name));
            }
        }
        HostRequest::AutocompleteComplete { .. } => {
            // Only a chain the frontend admitted is queried (section 2.24b).
            if !negotiated.features.contains(Feature::Autocomplete) {
                return Err(missing("feature", Feature::Autocomplete.as_str()));
            }
            let chain = c.guards.get::<AutocompleteChain>(ServiceKind::Autocomplete);
            if chain.and_then(AutocompleteChain::registered).is_none() {
                return Err(missing("admitted chain", "ui/autocomplete/register"));
            }
        }
        // Gated by the contract alone.
        HostRequest::MigrationDetect { .. }
        | HostRequest::MigrationImport { .. }
        | HostRequest::ProviderStream { .. } => {}
    }
    Ok(())
}

/// For a `hook/run` with a [`LeafScope`](crate::model::call::LeafScope): opens the
/// private lane for request `id` and returns its `session_leaf` grant (section 1.4b:
/// `{grant_id, activation_epoch, operation_id, owner, expected_head}`).
fn open_private_lane(c: &mut Connection, id: u64, request: &HostRequest) -> Option<Value> {
    static OPERATIONS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    let HostRequest::HookRun {
        session_leaf: Some(scope),
        ..
    } = request
    else {
        return None;
    };
    let operation = OPERATIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let operation_id = format!("session-operation:{operation}");
    let instance = c.owner.extension_instance_id.clone();
    let lane = c
        .guards
        .get_typed_mut::<PrivateLane>(ServiceKind::SessionEntries)?;
    let grant_id = lane.open(id, scope.activation_epoch, operation_id.clone(), &instance);
    Some(serde_json::json!({
        "grant_id": grant_id,
        "activation_epoch": scope.activation_epoch,
        "operation_id": operation_id,
        "owner": c.owner.to_value(),
        "expected_head": scope.expected_head,
    }))
}
