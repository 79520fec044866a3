//! Generations: registering and negotiating them, supervising restarts after
//! unexpected exits, reloading candidate-first, and draining the replaced generation
//! (sections 1.1 and 5).

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;

use super::command::{InitRole, StartRequest};
use super::connection::{Connection, PendingKind, ShutdownStage};
use super::launch;
use super::launcher::{Launch, LaunchJob};
use super::timers::Timer;
use super::Dispatcher;
use crate::limits::{MAX_MANIFEST_BYTES_DISCOVERY, RELOAD_DRAIN_TIMEOUT};
use crate::manifest::{self, LocatedManifest};
use crate::model::events::GenerationRef;
use crate::model::start::StartError;
use crate::model::start::StartedExtension;
use crate::model::status::LifecycleState;
use crate::negotiation::{self, Feature, Negotiated, NegotiationError};
use crate::services::ResourceOwner;
use crate::supervisor::{backoff, ParkReason, Supervision};
use crate::transport::ConnId;
use crate::wire::codec::Codec;
use crate::wire::{self, RequestId};

impl Dispatcher {
    /// A first start: hand the launch to a launcher thread ([`super::launcher`]); its
    /// outcome comes back to [`Self::on_launched`]. An extension already running,
    /// starting or being launched is refused at once.
    pub(super) fn on_start_command(
        &mut self,
        located: LocatedManifest,
        startup_timeout: std::time::Duration,
        reply: crossbeam_channel::Sender<Result<StartedExtension, StartError>>,
    ) {
        if self.shutdown.is_some() {
            let _ = reply.send(Err(StartError::HostShutDown));
            return;
        }
        let name = &located.manifest.name;
        let busy = self.routes.contains_key(name)
            || self.launching.contains_key(name)
            || self
                .conns
                .values()
                .any(|c| c.source.extension == *name && c.state == LifecycleState::Initializing);
        if busy {
            let error = StartError::AlreadyRunning {
                extension: name.clone(),
            };
            let _ = reply.send(Err(error));
            return;
        }
        self.launch(located, InitRole::Start { reply }, startup_timeout);
    }

    /// Hands a launch to the launcher threads.
    fn launch(
        &mut self,
        located: LocatedManifest,
        role: InitRole,
        startup_timeout: std::time::Duration,
    ) {
        *self
            .launching
            .entry(located.manifest.name.clone())
            .or_insert(0) += 1;
        let job = LaunchJob {
            located,
            role,
            startup_timeout,
        };
        // The launcher threads live as long as the dispatcher; should one be gone, the
        // launch runs here rather than be lost.
        if let Err(crossbeam_channel::SendError(job)) = self.launch_jobs.send(job) {
            let result = launch::launch(&self.shared, job.located.clone());
            self.on_launched(Launch { job, result });
        }
    }

    /// A launch came back: register the generation and send `initialize`, or report
    /// the failure to whoever waits. A first start's failure is a parked generation-0
    /// entry, never retried; a restart's counts against its budget.
    pub(super) fn on_launched(&mut self, launch: Launch) {
        let Launch { job, result } = launch;
        let name = job.located.manifest.name.clone();
        if let Some(count) = self.launching.get_mut(&name) {
            *count -= 1;
            if *count == 0 {
                self.launching.remove(&name);
            }
        }
        let LaunchJob {
            located,
            role,
            startup_timeout,
        } = job;
        match (result, role) {
            (Ok(launched), role) => self.on_start(StartRequest {
                launched,
                role,
                startup_timeout,
            }),
            (Err(error), InitRole::Start { reply }) => {
                self.record_initial_failure(&name, Some(located), error.to_string());
                let _ = reply.send(Err(error));
            }
            (Err(error), InitRole::Restart) => self.on_restart_failed(&name, &error),
            (Err(error), InitRole::Reload { reply }) => {
                let _ = reply.send(Err(error));
            }
        }
    }

    /// Registers a spawned generation and sends `initialize` (section 1.1).
    pub(super) fn on_start(&mut self, request: StartRequest) {
        let StartRequest {
            launched,
            role,
            startup_timeout,
        } = request;
        let name = launched.located.manifest.name.clone();
        if self.shutdown.is_some() {
            self.on_initialize_failed(launched.conn, role, StartError::HostShutDown);
            return;
        }
        if let InitRole::Start { .. } = role {
            let busy = self.routes.contains_key(&name)
                || self
                    .conns
                    .values()
                    .any(|c| c.source.extension == name && c.state == LifecycleState::Initializing);
            if busy {
                self.on_initialize_failed(
                    launched.conn,
                    role,
                    StartError::AlreadyRunning { extension: name },
                );
                return;
            }
        }
        let source = GenerationRef {
            extension: name,
            generation: launched.generation,
        };
        let params = match negotiation::initialize_params(
            &launched.located,
            &self.shared.workspace,
            &self.shared.host_context,
            &launched.offer,
        ) {
            Ok(params) => params,
            Err(e) => {
                self.on_initialize_failed(launched.conn, role, StartError::Negotiation(e));
                return;
            }
        };
        let conn = launched.conn;
        let offer = launched.offer.clone();
        let mut c = Connection::new(
            conn,
            source,
            launched.located,
            launched.child,
            launched.io,
            launched.scratch,
            launched.frame_limit,
            ResourceOwner {
                session_id: self.shared.session_id.clone(),
                extension_instance_id: self.shared.instance_id.clone(),
                process_generation: launched.generation,
            },
        );
        c.wire_trace = self.shared.wire_trace.clone();
        c.services = launched.services;
        c.guards = super::guards::guards_for(conn, &self.terminal);
        (c.owned_context, c.process_context) =
            super::request_params::execution_contexts(&self.shared, &c);
        let id = c.next_request_id();
        let limit = c.frame_limit.load(Ordering::Relaxed);
        // The feature wire keeps the reference example's member order; the canonical
        // wire sorts members anyway.
        let encoded = match c.codec {
            Codec::JsonRpc => {
                wire::encode_request(&RequestId::Number(id), "initialize", Some(&params), limit)
                    .map_err(|e| e.to_string())
            }
            Codec::Canonical => c
                .encode_request(id, "initialize", &params.to_value())
                .map_err(|e| e.to_string()),
        };
        let bytes = match encoded {
            Ok(bytes) => bytes,
            Err(e) => {
                self.on_initialize_failed(conn, role, StartError::Encode(e));
                return;
            }
        };
        c.send_request(id, PendingKind::Initialize { role, offer }, bytes);
        c.startup_timeout = startup_timeout;
        self.timers.schedule(
            Instant::now() + startup_timeout,
            Timer::RequestDeadline { conn, id },
        );
        self.emit_state(&c);
        self.conns.insert(conn, c);
        self.each_feature(|f, d| f.generation_launched(d, conn));
        self.schedule_health_poll(conn);
    }

    /// Validates the `initialize` answer; a rejected generation is terminated.
    pub(super) fn on_initialize_answer(
        &mut self,
        conn: ConnId,
        role: InitRole,
        offer: negotiation::InitializeOffer,
        outcome: Result<Value, wire::ResponseError>,
    ) {
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        let result = match outcome {
            Ok(value) => negotiation::validate_initialize_result(&c.located, &offer, &value)
                .map_err(StartError::Negotiation),
            Err(error) => Err(StartError::InitializeRejected(error)),
        };
        let negotiated = match result {
            Ok(negotiated) => Arc::new(negotiated),
            Err(error) => {
                self.refuse_start(conn, role, error);
                return;
            }
        };
        let name = c.source.extension.clone();
        let mut refusal = self
            .tool_conflict(&name, &negotiated)
            .map(|(tool, owner)| StartError::ToolConflict { tool, owner });
        if refusal.is_none() && !matches!(role, InitRole::Start { .. }) {
            refusal = self
                .catalog_change(&name, &negotiated)
                .map(|changed| StartError::ReRegistrationRequired { changed });
        }
        if let Some(error) = refusal {
            self.refuse_start(conn, role, error);
            return;
        }
        let c = self.conns.get_mut(&conn).expect("connection is live");
        c.negotiated = Some(negotiated.clone());
        if let Some(contract) = &negotiated.contract {
            // Selected limits apply to both directions at once (SUPPLEMENT, API 0.3).
            c.frame_limit
                .store(contract.transport_frame_limit(), Ordering::Relaxed);
        }
        c.catalog = Arc::new(negotiated.tools.clone());
        let started = StartedExtension {
            name: name.clone(),
            generation: c.source.generation,
            api_version: c.api,
            pid: c.child.pid(),
            negotiated: negotiated.clone(),
            manifest: c.located.clone(),
        };
        let located = (*c.located).clone();
        let previous = self.routes.insert(name.clone(), conn);
        self.set_state(conn, LifecycleState::Ready);
        self.emit_tools(conn);
        self.seed_lifecycle(conn);
        let supervision = self
            .supervision
            .entry(name.clone())
            .or_insert_with(|| Supervision::new(located.clone()));
        supervision.located = located;
        supervision.catalog = Some((negotiated.tools.clone(), negotiated.commands.clone()));
        supervision.ready_since = Some(Instant::now());
        supervision.parked = None;
        supervision.stopped = false;
        match role {
            InitRole::Start { reply } => {
                supervision.reset_budget();
                let _ = reply.send(Ok(started));
            }
            InitRole::Restart => {}
            InitRole::Reload { reply } => {
                supervision.reset_budget();
                if let Some(previous) = previous.filter(|p| *p != conn) {
                    self.hand_over(previous, conn);
                }
                let _ = reply.send(Ok(started));
            }
        }
    }

    /// The first tool of a new generation of `name` that another extension's live
    /// generation (initializing ones included, reload candidates too) or the host
    /// itself already owns, with its owner: tool names are reserved across the host
    /// from `initialize` on (sections 2.11, 5), before the generation is routed.
    fn tool_conflict(&self, name: &str, negotiated: &Negotiated) -> Option<(String, String)> {
        for tool in &negotiated.tools {
            if self.shared.is_host_tool(&tool.name) {
                return Some((tool.name.clone(), "the host".into()));
            }
            if self.shared.tool_namespace == crate::model::settings::ToolNamespace::PerExtension {
                continue;
            }
            let owner = self.conns.values().find(|other| {
                other.source.extension != name
                    && (other.catalog.iter().any(|t| t.name == tool.name)
                        || other
                            .negotiated
                            .as_ref()
                            .is_some_and(|n| n.tools.iter().any(|t| t.name == tool.name)))
            });
            if let Some(owner) = owner {
                return Some((
                    tool.name.clone(),
                    format!("extension `{}`", owner.source.extension),
                ));
            }
        }
        None
    }

    /// What changed between the supervised catalog and a candidate's, if anything that
    /// needs a full host rebuild did: tools (unless `dynamic_tools` was negotiated) or
    /// commands (section 5).
    fn catalog_change(&self, name: &str, candidate: &Negotiated) -> Option<String> {
        let (tools, commands) = self.supervision.get(name)?.catalog.as_ref()?;
        let dynamic = candidate.features.contains(Feature::DynamicTools);
        if !dynamic && tools != &candidate.tools {
            return Some("the tool catalog".into());
        }
        if commands != &candidate.commands {
            return Some("the command catalog".into());
        }
        None
    }

    /// Tells whoever waited for a generation's initialization that it failed, and
    /// keeps the supervisor's books: a first start is parked as generation 0, a restart
    /// counts as a failed attempt (or parks at once for a permanent error), a reload
    /// leaves the running generation in place.
    pub(super) fn on_initialize_failed(&mut self, conn: ConnId, role: InitRole, error: StartError) {
        let name = self.conns.get(&conn).map(|c| c.source.extension.clone());
        match role {
            InitRole::Start { reply } => {
                if let Some(name) = &name {
                    self.record_initial_failure(name, None, error.to_string());
                }
                let _ = reply.send(Err(error));
            }
            InitRole::Reload { reply } => {
                let _ = reply.send(Err(error));
            }
            InitRole::Restart => {
                if let Some(name) = name {
                    self.on_restart_failed(&name, &error);
                }
            }
        }
    }

    /// Records a parked generation-0 entry for a first start that failed.
    pub(super) fn record_initial_failure(
        &mut self,
        name: &str,
        located: Option<LocatedManifest>,
        error: String,
    ) {
        let located = match (
            located,
            self.conns.values().find(|c| c.source.extension == name),
        ) {
            (Some(located), _) => located,
            (None, Some(c)) => (*c.located).clone(),
            (None, None) => return,
        };
        let supervision = self
            .supervision
            .entry(name.to_string())
            .or_insert_with(|| Supervision::new(located));
        if supervision.catalog.is_none() {
            supervision.parked = Some(ParkReason::InitialFailure { error });
        }
    }

    fn park(&mut self, name: &str, reason: ParkReason) {
        if let Some(supervision) = self.supervision.get_mut(name) {
            supervision.restart_pending = false;
            supervision.parked = Some(reason);
        }
    }

    /// A routed generation ended without being asked to (`exit` says how): schedule a
    /// restart with backoff, unless supervision was stopped or the host is shutting
    /// down. A generation that a restart brought up and that exits before the budget
    /// reset counts as one more restart that did not hold.
    pub(super) fn on_unexpected_exit(&mut self, name: &str, exit: String) {
        if self.shutdown.is_some() {
            return;
        }
        let Some(supervision) = self.supervision.get_mut(name) else {
            return;
        };
        if supervision.stopped || supervision.parked.is_some() {
            return;
        }
        let policy = self.shared.supervisor;
        if supervision
            .ready_since
            .is_some_and(|t| t.elapsed() >= policy.budget_reset)
        {
            supervision.reset_budget();
        }
        if supervision.attempts > 0 {
            supervision.early_exits += 1;
        }
        supervision.last_failure = exit;
        supervision.ready_since = None;
        self.schedule_restart(name);
    }

    /// Schedules the next restart attempt with full-jitter backoff, or parks the
    /// extension when its budget is spent.
    fn schedule_restart(&mut self, name: &str) {
        let Some(supervision) = self.supervision.get_mut(name) else {
            return;
        };
        if supervision.stopped || self.shutdown.is_some() {
            return;
        }
        let policy = self.shared.supervisor;
        if supervision.attempts >= policy.max_attempts {
            let reason = ParkReason::RetryBudgetExhausted {
                attempts: supervision.attempts,
                failed_starts: supervision.failed_starts,
                early_exits: supervision.early_exits,
                last: supervision.last_failure.clone(),
            };
            self.park(name, reason);
            return;
        }
        let delay = backoff::delay(
            policy.backoff_base,
            policy.backoff_cap,
            supervision.attempts,
        );
        supervision.attempts += 1;
        supervision.restart_seq += 1;
        supervision.restart_pending = true;
        let seq = supervision.restart_seq;
        self.restart_timers.insert(seq, name.to_string());
        self.timers
            .schedule(Instant::now() + delay, Timer::Restart { seq });
    }

    /// A restart's backoff elapsed: launch the next generation.
    pub(super) fn on_restart_timer(&mut self, seq: u64) {
        let Some(name) = self.restart_timers.remove(&seq) else {
            return;
        };
        let Some(supervision) = self.supervision.get_mut(&name) else {
            return;
        };
        if supervision.restart_seq != seq || !supervision.restart_pending || supervision.stopped {
            return;
        }
        supervision.restart_pending = false;
        if self.shutdown.is_some() || self.routes.contains_key(&name) {
            return;
        }
        let located = supervision.located.clone();
        self.launch(located, InitRole::Restart, self.shared.startup_timeout);
    }

    /// A restart of `name` failed, at launch or in `initialize`: a permanent error
    /// parks it, anything else counts against the retry budget and is retried with
    /// backoff.
    fn on_restart_failed(&mut self, name: &str, error: &StartError) {
        if is_permanent(error) {
            self.park(
                name,
                ParkReason::Permanent {
                    error: error.to_string(),
                },
            );
            return;
        }
        if let Some(supervision) = self.supervision.get_mut(name) {
            supervision.failed_start(error.to_string());
        }
        self.schedule_restart(name);
    }

    /// A manual reload (section 5): re-read the manifest, start and negotiate a
    /// candidate while the current generation keeps serving. Revives a parked
    /// extension; cancels a scheduled restart, so the two never race.
    pub(super) fn on_reload(
        &mut self,
        name: &str,
        reply: crossbeam_channel::Sender<Result<StartedExtension, StartError>>,
    ) {
        if self.shutdown.is_some() {
            let _ = reply.send(Err(StartError::HostShutDown));
            return;
        }
        let Some(supervision) = self.supervision.get_mut(name) else {
            let _ = reply.send(Err(StartError::NotStarted {
                extension: name.to_string(),
            }));
            return;
        };
        supervision.restart_pending = false;
        supervision.parked = None;
        supervision.stopped = false;
        let path = supervision.located.manifest_path.clone();
        let mut located = supervision.located.clone();
        match manifest::load(&path, MAX_MANIFEST_BYTES_DISCOVERY) {
            Ok(fresh) if fresh.name == name => located.manifest = fresh,
            Ok(fresh) => {
                let error = StartError::ReRegistrationRequired {
                    changed: format!("the manifest name (now `{}`)", fresh.name),
                };
                let _ = reply.send(Err(error));
                return;
            }
            Err(e) => {
                let error = match e {
                    manifest::LoadError::Invalid(e) => StartError::Manifest(e),
                    other => StartError::Io(std::io::Error::other(other.to_string())),
                };
                let _ = reply.send(Err(error));
                return;
            }
        }
        if let Some(current) = self.supervision.get(name).map(|s| &s.located.manifest) {
            if current.contributes != located.manifest.contributes
                || current.api_version != located.manifest.api_version
            {
                let _ = reply.send(Err(StartError::ReRegistrationRequired {
                    changed: "the manifest's contributions or API version".into(),
                }));
                return;
            }
        }
        self.launch(
            located,
            InitRole::Reload { reply },
            self.shared.startup_timeout,
        );
    }

    /// The candidate `next` replaced `previous`: calls still waiting for a slot on the
    /// old generation move to the new one (they were never sent, so nothing is
    /// replayed), and the old one drains.
    fn hand_over(&mut self, previous: ConnId, next: ConnId) {
        let Some(old) = self.conns.get_mut(&previous) else {
            return;
        };
        let waiting: Vec<_> = old.queued.drain(..).collect();
        for request in &waiting {
            if let Some(entry) = self.calls.get_mut(&request.call) {
                entry.location = super::CallLocation::Queued(next);
            }
        }
        if let Some(new) = self.conns.get_mut(&next) {
            new.queued.extend(waiting);
        }
        self.begin_drain(previous);
        self.admit(next);
    }

    /// Draining (section 5): admit nothing new, let in-flight calls finish within the
    /// bounded drain, then shut down (which cancels the rest).
    fn begin_drain(&mut self, conn: ConnId) {
        self.set_state(conn, LifecycleState::Draining);
        self.timers.schedule(
            Instant::now() + RELOAD_DRAIN_TIMEOUT,
            Timer::DrainDeadline { conn },
        );
        self.maybe_finish_drain(conn);
    }

    /// Shuts a draining generation down once its last call settled.
    pub(super) fn maybe_finish_drain(&mut self, conn: ConnId) {
        let Some(c) = self.conns.get(&conn) else {
            return;
        };
        let idle = c.pending.calls() == 0;
        if c.state == LifecycleState::Draining && c.stage == ShutdownStage::None && idle {
            self.begin_shutdown(conn);
        }
    }

    pub(super) fn on_drain_deadline(&mut self, conn: ConnId) {
        if self
            .conns
            .get(&conn)
            .is_some_and(|c| c.stage == ShutdownStage::None && c.state == LifecycleState::Draining)
        {
            self.begin_shutdown(conn);
        }
    }
}

/// Errors that no restart can fix: the manifest, the version, the catalog.
fn is_permanent(error: &StartError) -> bool {
    matches!(
        error,
        StartError::Manifest(_)
            | StartError::UnsupportedApiVersion { .. }
            | StartError::ReRegistrationRequired { .. }
            | StartError::Negotiation(NegotiationError::ApiVersionMismatch { .. })
            | StartError::Negotiation(NegotiationError::ProtocolVersionMismatch { .. })
    )
}
