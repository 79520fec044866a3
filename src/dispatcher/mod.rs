//! The dispatcher: one thread that owns all protocol state.
//!
//! It is the only place where request tables, tombstones, deadlines, concurrency slots
//! and lifecycle state change. Handles send it [`Command`]s; each generation's I/O
//! threads send it [`TransportMessage`]s; it sleeps in `select!` until the nearest timer.
//! It never blocks on a send: replies go to bounded(1) channels that hold exactly one
//! answer, frames go to writers whose queues it keeps within bounds itself, and events
//! are dropped and counted when the embedder does not keep up.

mod bound;
mod brokered;
mod command;
mod connection;
mod extension_requests;
mod features;
mod generations;
mod guard;
mod guards;
mod id_hash;
mod inbound;
mod launch;
mod launcher;
mod lifecycle;
mod messages;
mod pending;
mod placement;
mod private_lane;
mod reply;
mod request_params;
mod requests;
mod route;
mod runtime_answers;
mod shutdown;
mod streams;
mod tables;
mod terminal;
mod timers;
mod tombstones;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use parking_lot::Mutex;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{select, Receiver, Sender};
use serde_json::Value;

pub(crate) use command::{CallRequest, Command, HostRequest};
use connection::Connection;
pub(crate) use features::FeatureCommand;
use id_hash::IdMap;
pub(crate) use reply::ReplyTo;
use timers::{Timer, Timers};

use crate::model::call::CallId;
use crate::model::events::{EventSink, HostEvent};
use crate::model::frontend::Frontend;
use crate::model::status::ExtensionStatus;
use crate::model::status::LifecycleState;
use crate::model::status::ShutdownReport;
use crate::negotiation::HostContext;
use crate::supervisor::Supervision;
use crate::transport::{ConnId, GenerationIo, TransportMessage};
use crate::wire::RequestId;

/// How often a ready generation is checked for an unnoticed exit (for example a child
/// that died while a grandchild keeps its stdout open).
const HEALTH_POLL_INTERVAL: Duration = Duration::from_millis(200);

/// How often a generation that is going away is checked for exit.
const EXIT_POLL_INTERVAL: Duration = Duration::from_millis(10);

/// How long the dispatcher sleeps when no timer is due.
const IDLE_WAIT: Duration = Duration::from_secs(3600);

/// Host-wide facts every generation shares.
pub(crate) struct Shared {
    /// The workspace: the children's working directory and `OCTET_WORKSPACE`.
    pub workspace: PathBuf,
    /// The `host` object sent in `initialize` and every execution context.
    pub host_context: HostContext,
    /// `host_context` encoded once.
    pub host_value: Value,
    /// The delay `provider_retry` advice has added to each recent run.
    pub retry_budget: Mutex<crate::validate::hook_advice::RetryBudget>,
    /// `extension_instance_id`: changes with every host build (section 1.2).
    pub instance_id: String,
    /// The durable session namespace in `resource_owner` (section 1.2).
    pub session_id: String,
    /// Where host events go.
    pub events: EventSink,
    /// Who answers confirmations and input requests.
    pub frontend: Arc<dyn Frontend>,
    /// Where every generation's I/O threads report.
    pub transport: Sender<TransportMessage>,
    /// The next connection id.
    pub next_conn: AtomicU64,
    /// The last process generation used per extension name.
    pub generations: Mutex<HashMap<String, u64>>,
    /// How restarts are paced and bounded.
    pub supervisor: crate::supervisor::SupervisorPolicy,
    /// The host-wide service bindings: request services, policy, approvals, secrets,
    /// credentials and tool policy.
    pub services: crate::services::bound::ServiceBindings,
    /// Service bindings per extension (builder or start), over the host-wide ones.
    pub extension_services: Mutex<HashMap<String, crate::services::bound::ServiceBindings>>,
    /// The host's own tool names, which no extension may register (section 2.11).
    pub host_tools: Vec<String>,
    /// Whether tool names are reserved across extensions.
    pub tool_namespace: crate::model::settings::ToolNamespace,
    /// How long the dispatcher, each generation's reader and writer, and waiting callers
    /// spin before they sleep (see [`crate::spin`]).
    pub spin_before_sleep: Duration,
    /// How long a generation has to answer `initialize`, unless its start says.
    pub startup_timeout: Duration,
    /// Log every frame in and out (the builder's `wire_trace`).
    pub wire_trace: Option<crate::model::trace::WireTraceSink>,
    /// Call and shutdown deadlines.
    pub timeouts: crate::model::settings::Timeouts,
    /// Environment, wrapper and stderr sink for launching children.
    pub launch: crate::model::settings::LaunchSettings,
    /// This host's locked root of scratch directories.
    pub scratch_root: crate::transport::ScratchRoot,
    /// The guardian that cleans up should the host die without a goodbye.
    pub guardian: Option<Arc<crate::transport::Guardian>>,
    /// The next embedder call's id, shared with the nested calls the runtime-served
    /// features make.
    pub next_call: Arc<std::sync::atomic::AtomicU64>,
    /// What the runtime-served features keep for the whole host.
    pub features: crate::features::HostFeatures,
}

impl Shared {
    /// True when `name` is one of the host's own tools, which no extension may offer.
    pub fn is_host_tool(&self, name: &str) -> bool {
        self.host_tools.iter().any(|t| t == name) || self.features.is_host_tool(name)
    }
}

/// A frontend's answer to an extension-originated request, sent from the thread that
/// asked it.
pub(crate) struct FrontendAnswer {
    pub conn: ConnId,
    pub id: RequestId,
    pub answer: connection::Answer,
}

/// Where a call is while it is unsettled.
#[derive(Clone, Copy, Debug)]
enum CallLocation {
    /// Waiting for a concurrency slot on `conn`.
    Queued(ConnId),
    /// Sent (or queued for the writer) as request `id` on `conn`.
    Sent(ConnId, u64),
}

#[derive(Clone, Copy, Debug)]
struct CallEntry {
    location: CallLocation,
    deadline: Duration,
}

/// A caller of `stop`: answered once every generation it stops has ended, with how
/// each ended.
struct StopWaiter {
    remaining: Vec<ConnId>,
    report: ShutdownReport,
    reply: Sender<Option<ShutdownReport>>,
}

/// A host-wide shutdown in progress.
struct HostShutdown {
    waiters: Vec<Sender<ShutdownReport>>,
    report: ShutdownReport,
}

/// The dispatcher's state.
pub(crate) struct Dispatcher {
    shared: Arc<Shared>,
    commands: Receiver<Command>,
    transport: Receiver<TransportMessage>,
    conns: IdMap<ConnId, Connection>,
    /// Who holds the terminal grant, across every connection (section 2.24).
    terminal: Arc<Mutex<terminal::TerminalLease>>,
    /// The generation that receives calls for each extension name.
    routes: HashMap<String, ConnId>,
    calls: IdMap<CallId, CallEntry>,
    timers: Timers,
    /// Callers of `stop`, each waiting until every generation of its extension ended.
    stop_waiters: Vec<StopWaiter>,
    shutdown: Option<HostShutdown>,
    /// The supervisor's books, per extension name.
    supervision: HashMap<String, Supervision>,
    /// Live restart timers by sequence.
    restart_timers: IdMap<u64, String>,
    /// Sessions, turns and tools that started and have not settled (section 1.10).
    open_scopes: Vec<lifecycle::OpenScope>,
    /// The latest accepted presentation snapshot per owner, per extension (section 2.5).
    presentations: HashMap<String, crate::services::PresentationStore>,
    /// Frontend answers, from the threads that ask the frontend.
    answers: Receiver<FrontendAnswer>,
    answer_sender: Sender<FrontendAnswer>,
    /// Bound services' answers, from their replies.
    service_answers: Receiver<crate::services::bound::ServiceAnswer>,
    service_answer_sender: Sender<crate::services::bound::ServiceAnswer>,
    /// The dispatcher's own state of the runtime-served features.
    features: features::DispatcherFeatures,
    /// The origin of the health-poll grid (see `schedule_health_poll`).
    health_epoch: Instant,
    /// Joins the I/O threads of finished generations, off the dispatcher thread: a
    /// reader may be blocked handing the dispatcher a batch, so the dispatcher itself
    /// must never wait for one.
    janitor: Sender<GenerationIo>,
    /// Launches for the launcher threads, and what they launched.
    launch_jobs: Sender<launcher::LaunchJob>,
    launches: Receiver<launcher::Launch>,
    /// Launches in progress, per extension name; the host's shutdown waits for them.
    launching: HashMap<String, usize>,
}

/// Starts the dispatcher thread.
pub(crate) fn spawn(
    shared: Arc<Shared>,
    commands: Receiver<Command>,
    transport: Receiver<TransportMessage>,
) -> std::io::Result<JoinHandle<()>> {
    let (janitor, finished) = crossbeam_channel::unbounded::<GenerationIo>();
    let janitor_thread = std::thread::Builder::new()
        .name("octet-janitor".into())
        .spawn(move || {
            for io in finished {
                io.join();
            }
        })?;
    let (answer_sender, answers) = crossbeam_channel::unbounded();
    let (service_answer_sender, service_answers) = crossbeam_channel::unbounded();
    let (launch_jobs, jobs) = crossbeam_channel::unbounded();
    let (launched, launches) = crossbeam_channel::unbounded();
    let launchers = launcher::start(&shared, jobs, launched)?;
    let dispatcher = Dispatcher {
        launch_jobs,
        launches,
        launching: HashMap::new(),
        answers,
        answer_sender,
        service_answers,
        service_answer_sender,
        features: features::DispatcherFeatures::new(),
        shared,
        commands,
        transport,
        conns: IdMap::default(),
        terminal: Default::default(),
        routes: HashMap::new(),
        calls: IdMap::default(),
        timers: Timers::default(),
        stop_waiters: Vec::new(),
        shutdown: None,
        supervision: HashMap::new(),
        restart_timers: IdMap::default(),
        presentations: HashMap::new(),
        open_scopes: Vec::new(),
        health_epoch: Instant::now(),
        janitor,
    };
    // Kept outside the dispatcher: should it ever panic, its commands are still read.
    let orphaned = dispatcher.commands.clone();
    std::thread::Builder::new()
        .name("octet-dispatcher".into())
        .spawn(move || {
            crate::slice::own_thread();
            let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| dispatcher.run()));
            if ran.is_err() {
                // A bug, never a protocol event: the dispatcher's state is gone. Every
                // command already sent, and every later one, is dropped with its reply
                // channel, so each waiter hears that the host is gone instead of
                // waiting forever.
                log::error!(target: "octet_host", "the dispatcher stopped after a panic; every call now fails");
                for command in orphaned.iter() {
                    drop(command);
                }
            }
            let _ = janitor_thread.join();
            for launcher in launchers {
                let _ = launcher.join();
            }
        })
}

impl Dispatcher {
    fn run(mut self) {
        // Whether the last turn handled a message: only then is more input likely to
        // follow at once. A turn that only fired timers (such as the health polls of
        // an idle fleet, five a second per generation) goes straight back to sleep.
        let mut active = false;
        loop {
            // Spin a little first: at depth 1 the next input (the reader's batch, or
            // the caller's next call) usually follows within microseconds.
            let due = self.timers.next_deadline();
            if active {
                crate::spin::spin_until(self.shared.spin_before_sleep, || {
                    !self.commands.is_empty()
                        || !self.transport.is_empty()
                        || !self.answers.is_empty()
                        || !self.service_answers.is_empty()
                        || !self.features.nested_replies.is_empty()
                        || !self.shared.features.wakeups().is_empty()
                        || !self.launches.is_empty()
                        || due.is_some_and(|at| at <= Instant::now())
                });
            }
            let wait = match due {
                Some(at) => at.saturating_duration_since(Instant::now()),
                None => IDLE_WAIT,
            };
            active = false;
            select! {
                recv(self.commands) -> command => match command {
                    Ok(command) => {
                        active = true;
                        self.on_command(command);
                    }
                    Err(_) => self.on_handles_gone(),
                },
                recv(self.transport) -> message => {
                    if let Ok(message) = message {
                        active = true;
                        self.on_transport(message);
                    }
                }
                recv(self.answers) -> answer => {
                    if let Ok(answer) = answer {
                        active = true;
                        self.on_frontend_answer(answer);
                    }
                }
                recv(self.features.nested_replies) -> nested => {
                    if let Ok(nested) = nested {
                        active = true;
                        self.on_nested_reply(nested);
                    }
                }
                recv(self.service_answers) -> answer => {
                    if let Ok(answer) = answer {
                        active = true;
                        self.on_service_answer(answer);
                    }
                }
                recv(self.shared.features.wakeups()) -> woken => {
                    if woken.is_ok() {
                        active = true;
                        self.on_feature_wakeup();
                    }
                }
                recv(self.launches) -> launch => {
                    if let Ok(launch) = launch {
                        active = true;
                        self.on_launched(launch);
                    }
                }
                default(wait) => {}
            }
            // Handle everything already waiting before sleeping again: one wake-up
            // serves a whole burst.
            loop {
                let mut progressed = false;
                while let Ok(message) = self.transport.try_recv() {
                    self.on_transport(message);
                    progressed = true;
                }
                while let Ok(command) = self.commands.try_recv() {
                    self.on_command(command);
                    progressed = true;
                }
                while let Ok(answer) = self.answers.try_recv() {
                    self.on_frontend_answer(answer);
                    progressed = true;
                }
                while let Ok(answer) = self.service_answers.try_recv() {
                    self.on_service_answer(answer);
                    progressed = true;
                }
                while let Ok(nested) = self.features.nested_replies.try_recv() {
                    self.on_nested_reply(nested);
                    progressed = true;
                }
                if self.shared.features.wakeups().try_recv().is_ok() {
                    self.on_feature_wakeup();
                    progressed = true;
                }
                while let Ok(launch) = self.launches.try_recv() {
                    self.on_launched(launch);
                    progressed = true;
                }
                if !progressed {
                    break;
                }
                active = true;
            }
            self.fire_due_timers();
            if self.timers.wants_compaction() {
                self.drop_stale_timers();
            }
            if self.shutdown.is_some() && self.conns.is_empty() && self.launching.is_empty() {
                self.finish_host_shutdown();
                // Dropping `self` closes the transport channel (so no reader can stay
                // blocked on it) and the janitor's queue (so the janitor ends).
                return;
            }
        }
    }

    /// Every handle, the host included, is gone: shut everything down.
    fn on_handles_gone(&mut self) {
        self.commands = crossbeam_channel::never();
        self.begin_host_shutdown(self.shared.timeouts.shutdown_aggregate, None);
    }

    fn on_command(&mut self, command: Command) {
        match command {
            Command::Start {
                located,
                startup_timeout,
                services,
                reply,
            } => {
                // A running extension keeps its bindings; its start is refused anyway.
                if let Some(services) = services {
                    if !self.routes.contains_key(&located.manifest.name) {
                        let name = located.manifest.name.clone();
                        self.shared.extension_services.lock().insert(name, services);
                    }
                }
                self.on_start_command(*located, startup_timeout, reply)
            }
            Command::Call(request) => self.on_call(request),
            Command::Cancel { call, reason } => self.cancel_call(call, reason),
            Command::Stop { extension, reply } => self.on_stop(&extension, reply),
            Command::Shutdown { cap, reply } => self.begin_host_shutdown(cap, Some(reply)),
            Command::Status { reply } => {
                let _ = reply.send(self.status());
            }
            Command::Tables { reply } => {
                let _ = reply.send(self.tables());
            }
            Command::Artifact {
                extension,
                artifact_id,
                reply,
            } => {
                let found = self
                    .conns
                    .values()
                    .filter(|c| c.source.extension == extension)
                    .filter_map(|c| c.artifacts.as_ref())
                    .find_map(|store| store.lock().get(&artifact_id).cloned());
                let _ = reply.send(found);
            }
            Command::Feature(command) => self.on_feature_command(command),
            Command::AutocompleteChains { reply } => {
                let _ = reply.send(self.autocomplete_chains());
            }
            Command::HookSubscribers { hook, reply } => {
                let _ = reply.send(self.hook_subscribers(hook));
            }
            Command::Lifecycle(notification) => self.on_lifecycle(notification),
            Command::KillAll => self.on_shutdown_aggregate(),
            Command::Notify {
                extension,
                generation,
                notification,
                reply,
            } => {
                let outcome = self.on_notify(&extension, generation, notification);
                let _ = reply.send(outcome);
            }
            Command::Tools { extension, reply } => {
                let catalog = self.routes.get(&extension).and_then(|conn| {
                    let c = self.conns.get(conn)?;
                    Some(crate::model::catalog::ToolCatalog {
                        generation: c.source.generation,
                        revision: c.catalog_revision,
                        tools: c.catalog.clone(),
                    })
                });
                let _ = reply.send(catalog);
            }
            Command::CancelStream {
                extension,
                stream_id,
            } => self.cancel_stream(&extension, &stream_id),
            Command::Reload { extension, reply } => self.on_reload(&extension, reply),
        }
    }

    fn fire_due_timers(&mut self) {
        let now = Instant::now();
        while let Some(timer) = self.timers.pop_due(now) {
            match timer {
                Timer::RequestDeadline { conn, id } => self.on_request_deadline(conn, id),
                Timer::CallDeadline { call } => {
                    self.cancel_call(call, crate::model::call::CancelReason::Timeout)
                }
                Timer::CancelGrace { conn, id } => self.on_cancel_grace(conn, id),
                Timer::ShutdownAck { conn } => self.on_shutdown_ack_timeout(conn),
                Timer::ShutdownExit { conn } => self.on_shutdown_exit_timeout(conn),
                Timer::ExitPoll { conn, seq } => self.on_exit_poll(conn, seq),
                Timer::ShutdownAggregate => self.on_shutdown_aggregate(),
                Timer::LifecycleDeadline { conn, seq } => self.on_lifecycle_deadline(conn, seq),
                Timer::Restart { seq } => self.on_restart_timer(seq),
                Timer::DrainDeadline { conn } => self.on_drain_deadline(conn),
                Timer::PresentationPoll { conn } => self.on_presentation_poll(conn),
                Timer::MessageBatch { conn, seq } => self.on_message_batch_timer(conn, seq),
                Timer::HeldDeadline { conn, kind } => self.answer_held(conn, kind),
            }
        }
    }

    /// Drops the deadlines of calls and requests that already settled (see
    /// [`timers`]) and the timers of generations that are gone; every other kind of
    /// timer is rare and kept.
    fn drop_stale_timers(&mut self) {
        let (calls, conns) = (&self.calls, &self.conns);
        self.timers.retain(|timer| match timer {
            Timer::CallDeadline { call } => calls.contains_key(call),
            Timer::RequestDeadline { conn, id } => {
                conns.get(conn).is_some_and(|c| c.pending.contains_key(id))
            }
            _ => timer.conn().is_none_or(|conn| conns.contains_key(&conn)),
        });
    }

    /// Tells the embedder the current catalog of `conn` (see [`HostEvent::ToolsChanged`]).
    fn emit_tools(&self, conn: ConnId) {
        if let Some(c) = self.conns.get(&conn) {
            self.shared.events.emit(HostEvent::ToolsChanged {
                source: c.source.clone(),
                revision: c.catalog_revision,
                names: c.catalog.iter().map(|t| t.name.clone()).collect(),
            });
        }
    }

    fn emit_state(&self, conn: &Connection) {
        self.shared.events.emit(HostEvent::StateChanged {
            source: conn.source.clone(),
            state: conn.state,
        });
    }

    fn set_state(&mut self, conn: ConnId, state: LifecycleState) {
        if let Some(c) = self.conns.get_mut(&conn) {
            if c.state != state {
                c.state = state;
                let c = &self.conns[&conn];
                self.emit_state(c);
            }
        }
    }

    /// The routed, ready API 0.4 generations that negotiated `session_entries` and
    /// declared `hook`, in start order.
    fn hook_subscribers(&self, hook: crate::validate::HookName) -> Vec<String> {
        let mut subscribers: Vec<(ConnId, String)> = self
            .routes
            .values()
            .filter_map(|conn| self.conns.get(conn).map(|c| (*conn, c)))
            .filter(|(_, c)| {
                c.state == LifecycleState::Ready
                    && c.api == crate::manifest::ApiVersion::V0_4
                    && c.features()
                        .contains(crate::negotiation::Feature::SessionEntries)
                    && c.located
                        .manifest
                        .contributes
                        .hooks
                        .iter()
                        .any(|h| h == hook.as_str())
            })
            .map(|(conn, c)| (conn, c.source.extension.clone()))
            .collect();
        subscribers.sort();
        subscribers.into_iter().map(|(_, name)| name).collect()
    }

    /// The routed generations whose frontend admitted an autocomplete chain, in the
    /// order the chains were admitted, each with whether it negotiated
    /// `autocomplete_edit_v1`.
    fn autocomplete_chains(&self) -> Vec<(String, bool)> {
        let mut chains: Vec<(u64, String, bool)> = self
            .routes
            .values()
            .filter_map(|conn| self.conns.get(conn))
            .filter_map(|c| {
                let chain = c.guards.get::<guards::AutocompleteChain>(
                    crate::services::bound::ServiceKind::Autocomplete,
                )?;
                let admitted = chain.admitted_at()?;
                let edit = c
                    .features()
                    .contains(crate::negotiation::Feature::AutocompleteEditV1);
                Some((admitted, c.source.extension.clone(), edit))
            })
            .collect();
        chains.sort();
        chains
            .into_iter()
            .map(|(_, name, edit)| (name, edit))
            .collect()
    }

    fn status(&self) -> Vec<ExtensionStatus> {
        let supervision = |name: &str| self.supervision.get(name);
        let mut all: Vec<ExtensionStatus> = self
            .conns
            .values()
            .map(|c| {
                let sup = supervision(&c.source.extension);
                ExtensionStatus {
                    extension: c.source.extension.clone(),
                    generation: c.source.generation,
                    state: c.state,
                    api_version: c.api,
                    pid: Some(c.child.pid()),
                    features: c
                        .negotiated
                        .as_ref()
                        .map(|n| n.features.iter().map(|f| f.as_str().to_string()).collect())
                        .unwrap_or_default(),
                    max_concurrent_requests: c
                        .negotiated
                        .as_ref()
                        .map(|n| n.max_concurrent_requests),
                    pending: c.pending.len(),
                    queued: c.queued.len(),
                    routed: self.routes.get(&c.source.extension) == Some(&c.conn),
                    last_error: c.last_error.clone(),
                    stderr_tail: c.io.stderr_tail.snapshot(),
                    restart_attempts: sup.map_or(0, |s| s.attempts),
                    restart_scheduled: sup.is_some_and(|s| s.restart_pending),
                    parked: sup.and_then(|s| s.parked.clone()),
                }
            })
            .collect();
        // Supervised extensions without a live generation: backing off or parked.
        for (name, sup) in &self.supervision {
            let live = self.conns.values().any(|c| &c.source.extension == name);
            if live || sup.stopped || (sup.parked.is_none() && !sup.restart_pending) {
                continue;
            }
            let generation = *self.shared.generations.lock().get(name).unwrap_or(&0);
            all.push(ExtensionStatus {
                extension: name.clone(),
                generation: if sup.catalog.is_some() { generation } else { 0 },
                state: if sup.parked.is_some() {
                    LifecycleState::Stopped
                } else {
                    LifecycleState::Crashed
                },
                api_version: sup.located.manifest.api_version,
                pid: None,
                features: Vec::new(),
                max_concurrent_requests: None,
                pending: 0,
                queued: 0,
                routed: false,
                last_error: sup.parked.as_ref().map(|p| p.to_string()),
                stderr_tail: Vec::new(),
                restart_attempts: sup.attempts,
                restart_scheduled: sup.restart_pending,
                parked: sup.parked.clone(),
            });
        }
        all.sort_by(|a, b| (&a.extension, a.generation).cmp(&(&b.extension, b.generation)));
        all
    }
}
