//! [`ExtensionHostBuilder`]: every setting of a host, each with its default.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;

use super::events;
use super::{new_instance_id, ExtensionHost, Frontend, HeadlessFrontend, HostInner};
use crate::dispatcher::{self, Shared};
use crate::manifest::DiscoveryRoots;
pub use crate::model::settings::ToolNamespace;
use crate::model::settings::{LaunchSettings, Timeouts};
use crate::negotiation::HostContext;
use crate::negotiation::{Feature, FeatureSet};
use crate::supervisor::SupervisorPolicy;

/// Capacity of the channel from handles to the dispatcher. A full channel makes the
/// caller wait, which is the backpressure an embedder flooding the host should feel.
const COMMAND_CHANNEL_CAPACITY: usize = 1024;

/// Capacity of the channel from all I/O threads to the dispatcher, in batches.
const TRANSPORT_CHANNEL_CAPACITY: usize = 1024;

pub use crate::spin::DEFAULT_SPIN_BEFORE_SLEEP;

/// Configures and builds an [`ExtensionHost`].
#[derive(Clone)]
pub struct ExtensionHostBuilder {
    host_tools: Vec<String>,
    tool_namespace: ToolNamespace,
    bound: crate::services::bound::ServiceBindings,
    bound_per_extension: std::collections::HashMap<String, crate::services::bound::ServiceBindings>,
    /// The extensions a host-wide `agent_sessions` binding is offered to.
    agent_delegates: std::collections::HashSet<String>,
    supervisor: SupervisorPolicy,
    frontend: Arc<dyn Frontend>,
    workspace: PathBuf,
    explicit_dirs: Vec<PathBuf>,
    home: Option<PathBuf>,
    host_context: HostContext,
    session_id: Option<String>,
    runtime_features: FeatureSet,
    bulk_storage: Option<crate::features::bulk::BulkStorage>,
    composition_store: Option<PathBuf>,
    composition_timeout: std::time::Duration,
    operation_discovery: bool,
    spin_before_sleep: Duration,
    startup_timeout: Duration,
    timeouts: Timeouts,
    event_queue: usize,
    launch: LaunchSettings,
    scratch_parent: Option<PathBuf>,
    child_subreaper: bool,
    guardian: bool,
    wire_trace: bool,
    wire_trace_sink: Option<crate::model::trace::WireTraceSink>,
}

impl ExtensionHostBuilder {
    /// A builder with every default, for `workspace`.
    pub(super) fn new(workspace: &Path) -> ExtensionHostBuilder {
        ExtensionHostBuilder {
            host_tools: Vec::new(),
            tool_namespace: ToolNamespace::Host,
            bound: Default::default(),
            bound_per_extension: Default::default(),
            agent_delegates: Default::default(),
            supervisor: SupervisorPolicy::default(),
            frontend: Arc::new(HeadlessFrontend),
            workspace: workspace.to_path_buf(),
            explicit_dirs: Vec::new(),
            home: std::env::var_os("HOME").map(PathBuf::from),
            host_context: HostContext::default(),
            spin_before_sleep: DEFAULT_SPIN_BEFORE_SLEEP,
            startup_timeout: crate::limits::STARTUP_TIMEOUT,
            timeouts: Timeouts::default(),
            event_queue: events::EVENT_CHANNEL_CAPACITY,
            launch: LaunchSettings::default(),
            scratch_parent: None,
            child_subreaper: false,
            guardian: false,
            wire_trace: false,
            wire_trace_sink: None,
            session_id: None,
            runtime_features: FeatureSet::new(),
            bulk_storage: None,
            composition_store: None,
            composition_timeout: crate::limits::COMPOSITION_TIMEOUT,
            operation_discovery: false,
        }
    }

    /// Where the host keeps its extensions' scratch directories (default: the system
    /// temporary directory). The host makes a root of its own there, locked for its
    /// life; building a host removes the roots of hosts that died without cleaning up
    /// (killed by SIGKILL, say). See `transport::scratch`.
    pub fn scratch_parent(mut self, parent: impl Into<PathBuf>) -> Self {
        self.scratch_parent = Some(parent.into());
        self
    }

    /// Makes the embedding process a *child subreaper* (Linux `PR_SET_CHILD_SUBREAPER`)
    /// when the host is built: descendants of extensions that are orphaned (a double
    /// fork, a daemon) are re-parented to this process instead of init, so they stay
    /// on its parent chain, where the host finds and kills them at teardown. Off by
    /// default, because it changes the whole process: turn it on only when you own it,
    /// and reap (or ignore) orphans that exit on their own. Without it, the generation
    /// fence still finds descendants by their environment marker. Ignored outside
    /// Linux.
    pub fn child_subreaper(mut self, enabled: bool) -> Self {
        self.child_subreaper = enabled;
        self
    }

    /// Starts a *guardian* with the host (Unix): a small process that, should this
    /// process die without shutting the host down (killed with `SIGKILL`, say), kills
    /// every extension's process group, kills the descendants that left their group but
    /// still carry their generation's fence marker (Linux), and removes the host's
    /// scratch directories, within moments of the death. Off by default for embedders;
    /// the `octet-host` CLI and `serve` turn it on.
    ///
    /// It costs one process (`/bin/sh` running a short script, about 1 MiB resident,
    /// in a process group of its own) and one pipe for the host's life, plus one short
    /// write per extension start and end. An orderly end of the host (dropping it, or
    /// `shutdown`) tells the guardian goodbye and reaps it. See `transport::guardian`
    /// for what it does and cannot do. [`Self::build`] fails when it cannot start.
    pub fn guardian(mut self, enabled: bool) -> Self {
        self.guardian = enabled;
        self
    }

    /// How long an extension has to answer `initialize` before its start fails with
    /// [`StartError::InitializeTimeout`](super::StartError::InitializeTimeout) and its process group is killed (default:
    /// [`crate::limits::STARTUP_TIMEOUT`], 30 s). Applies to starts, supervised
    /// restarts and reloads; [`StartOptions`](super::StartOptions) overrides it for one start.
    pub fn startup_timeout(mut self, timeout: Duration) -> Self {
        self.startup_timeout = timeout;
        self
    }

    /// The deadline of a call whose [`CallOptions`](super::CallOptions) set none
    /// (default: [`crate::limits::REQUEST_DEADLINE`], 30 s, the reference's ordinary
    /// request deadline). `menu/collect` keeps its 5 s and attended menu actions their
    /// 30 minutes (section 1.6b).
    pub fn request_deadline(mut self, deadline: Duration) -> Self {
        self.timeouts.request = deadline;
        self
    }

    /// The stages of the shutdown sequence of section 1.8: how long to wait for the
    /// `shutdown` acknowledgement and then for the exit (each 2 s by default,
    /// [`crate::limits::SHUTDOWN_ACK_TIMEOUT`], [`crate::limits::SHUTDOWN_EXIT_TIMEOUT`]),
    /// and the aggregate deadline of [`ExtensionHost::shutdown`] (3 s,
    /// [`crate::limits::SHUTDOWN_AGGREGATE_DEADLINE`]), after which every group is
    /// killed. The coordinated-signal cap of 1.4 s
    /// ([`ExtensionHost::shutdown_for_signal`]) is the reference's and not configurable.
    pub fn shutdown_timeouts(mut self, ack: Duration, exit: Duration, aggregate: Duration) -> Self {
        self.timeouts.shutdown_ack = ack;
        self.timeouts.shutdown_exit = exit;
        self.timeouts.shutdown_aggregate = aggregate;
        self
    }

    /// How many host events wait for the embedder before further ones are dropped and
    /// counted in [`super::HostEvent::EventsDropped`] (default
    /// [`events::EVENT_CHANNEL_CAPACITY`], 4096; at least 1).
    pub fn event_queue(mut self, capacity: usize) -> Self {
        self.event_queue = capacity.max(1);
        self
    }

    /// Adds an environment entry for the children of `extension` only, applied after
    /// the manifest's `[entrypoint].env` (so it wins) and before the reserved
    /// `OCTET_GENERATION_FENCE`. Only what is added here reaches the child: the
    /// host's own environment stays sanitized.
    pub fn extension_env(
        mut self,
        extension: impl Into<String>,
        name: impl Into<String>,
        value: impl Into<String>,
    ) -> Self {
        self.launch
            .env
            .push((extension.into(), name.into(), value.into()));
        self
    }

    /// Runs every entrypoint under a command wrapper: `wrapper` is an argv prefix
    /// (`["bwrap", "--ro-bind", "/", "/", "--"]`, `["firejail", "--quiet"]`,
    /// `["ssh", "box"]`), so the child is `wrapper... entrypoint args...`. The wrapper's
    /// program is looked up in `PATH`; the entrypoint is still resolved (and must
    /// exist) on this machine. The wrapper is the process the host supervises: it must
    /// pass stdio through and exit when its command does. An empty prefix runs the
    /// entrypoint directly (the default).
    pub fn command_wrapper(mut self, wrapper: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.launch.wrapper = wrapper.into_iter().map(Into::into).collect();
        self
    }

    /// Logs every frame to and from every extension through the `log` facade, at
    /// `trace` level with target `octet_host::wire` (`name#generation -> {...}` and
    /// `<- {...}`), for debugging an extension. Frames that may carry a secret (the
    /// answers to `secret/get` and `provider/credentials`) are withheld. Off by
    /// default; diagnostics always go to the `log` facade (target `octet_host`).
    pub fn wire_trace(mut self, enabled: bool) -> Self {
        self.wire_trace = enabled;
        self
    }

    /// Hands every frame to and from every extension to `sink` as it passes, with its
    /// direction and time ([`crate::model::trace::WireFrame`]); frames that may carry
    /// a secret are withheld exactly as [`ExtensionHostBuilder::wire_trace`] withholds
    /// them (`text` is `None`). `sink` runs on the dispatcher thread, so it must not
    /// block: hand the frame to a bounded queue and drop what does not fit. Off by
    /// default; with it, every frame read is encoded once more for the sink.
    pub fn wire_trace_sink(
        mut self,
        sink: impl Fn(&crate::model::trace::WireFrame<'_>) + Send + Sync + 'static,
    ) -> Self {
        self.wire_trace_sink = Some(Arc::new(sink));
        self
    }

    /// Also hands the stderr lines of every extension to `sink`, as they arrive, on the
    /// generation's stderr thread (so it must not block for long): the same lines the
    /// [`super::Diagnostic::Stderr`] events carry, each cut at
    /// [`crate::limits::MAX_STDERR_LINE_BYTES`] and rate-bounded like them, but never
    /// dropped by a full event queue. Route extension logs with it (into `log`,
    /// `tracing`, a file).
    pub fn stderr_sink(
        mut self,
        sink: impl Fn(&super::GenerationRef, &str) + Send + Sync + 'static,
    ) -> Self {
        self.launch.stderr = Some(Arc::new(sink));
        self
    }

    /// Adds explicit extensions: the directory of one extension (holding
    /// `extension.toml`), the path to its `extension.toml`, or a directory whose
    /// subdirectories hold extensions (scanned one level). Explicit extensions win
    /// over project and global ones of the same name.
    pub fn extension_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.explicit_dirs.push(dir.into());
        self
    }

    /// Sets the home directory whose `.octet/extensions` holds global extensions
    /// (default: `$HOME`).
    pub fn home_dir(mut self, home: impl Into<PathBuf>) -> Self {
        self.home = Some(home.into());
        self
    }

    /// Skips global extensions entirely.
    pub fn no_global_extensions(mut self) -> Self {
        self.home = None;
        self
    }

    /// Binds the frontend that answers confirmations and input requests (default:
    /// [`HeadlessFrontend`], which denies and cancels).
    pub fn frontend(mut self, frontend: impl Frontend) -> Self {
        self.frontend = Arc::new(frontend);
        self
    }

    /// Binds services for every extension: the request services by kind (each bound
    /// feature is offered, and requests for it reach the service after the runtime
    /// checked them), and the policy engine, approver, secret broker, credential
    /// resolver and tool policy. Bindings add up; a later one of the same service
    /// replaces the earlier. Unbound, policy denies and the others are unavailable.
    pub fn bind(mut self, services: crate::services::bound::ServiceBindings) -> Self {
        self.bound = services.over(&self.bound);
        self
    }

    /// Binds services for one extension, over the host-wide ones per feature (see
    /// [`ExtensionHostBuilder::bind`]; a start can also bind them with
    /// [`StartOptions::services`](super::StartOptions::services)).
    pub fn bind_for(
        mut self,
        extension: impl Into<String>,
        services: crate::services::bound::ServiceBindings,
    ) -> Self {
        let entry = self
            .bound_per_extension
            .entry(extension.into())
            .or_default();
        *entry = services.over(entry);
        self
    }

    /// Lets `extension` delegate to child agent sessions (sections 2.13-2.18) through an
    /// `agent_sessions` service bound for every extension with
    /// [`ExtensionHostBuilder::bind`]. `agent_sessions` is conditional: a host-wide
    /// binding is offered only to the extensions allowed here, while a binding for one
    /// extension ([`ExtensionHostBuilder::bind_for`], a start's services) allows that
    /// extension by itself. The features that require it go with it.
    pub fn allow_agent_sessions(mut self, extension: impl Into<String>) -> Self {
        self.agent_delegates.insert(extension.into());
        self
    }

    /// Whose tool names must be unique (default [`ToolNamespace::Host`], as the
    /// reference says): see [`ToolNamespace`].
    pub fn tool_namespace(mut self, namespace: ToolNamespace) -> Self {
        self.tool_namespace = namespace;
        self
    }

    /// Names of the host's own model tools: no extension may declare them at
    /// `initialize` or register them (section 2.11: names are reserved "against host
    /// tools and other extensions").
    pub fn host_tools(mut self, names: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.host_tools = names.into_iter().map(Into::into).collect();
        self
    }

    /// Sets how extensions are restarted after unexpected exits (default: the
    /// reference's 250 ms base, 30 s cap, 8 attempts, 30 s budget reset).
    pub fn supervisor_policy(mut self, policy: SupervisorPolicy) -> Self {
        self.supervisor = policy;
        self
    }

    /// Sets the `host` object sent in `initialize` and every execution context.
    pub fn host_context(mut self, host_context: HostContext) -> Self {
        self.host_context = host_context;
        self
    }

    /// Sets the durable session id used in `resource_owner` (default: one made up per
    /// host, from `host_context.session_id` when that is set).
    pub fn session_id(mut self, session_id: impl Into<String>) -> Self {
        self.session_id = Some(session_id.into());
        self
    }

    /// How long the host's threads (the dispatcher, each generation's reader and
    /// writer, and a caller in [`PendingCall::wait`](super::PendingCall::wait)) yield the CPU, checking for
    /// their next input, before they sleep (default [`DEFAULT_SPIN_BEFORE_SLEEP`]).
    ///
    /// Waking a sleeping thread costs a futex wake and, on a virtual machine whose
    /// other vCPU is idle, an inter-processor interrupt: about as much as a whole
    /// JSON round trip with the child. Spinning turns most of a call's four hand-offs
    /// into checks of a queue. The cost is CPU time: at most this long per wait, and
    /// at most two threads more than there are CPUs spin at once in the process.
    /// `Duration::ZERO` turns spinning off, for embedders that prefer idle CPUs to
    /// latency (calls then take about four times as long on the benchmark machine).
    pub fn spin_before_sleep(mut self, budget: Duration) -> Self {
        self.spin_before_sleep = budget;
        self
    }

    /// Offers `tool_composition_v1` (section 2.25) to every API 0.4 extension: a live
    /// model `tool/call` may then read the frozen catalog of every extension's tools
    /// (`composition/context`), call them through the runtime (`composition/call`) and
    /// commit one write to its tool's private store (`composition/store`). Off by
    /// default; [`ExtensionHost::allow_tool_composition`](super::ExtensionHost::allow_tool_composition)
    /// offers it to one extension instead.
    pub fn tool_composition(self, enabled: bool) -> Self {
        self.runtime_feature(Feature::ToolCompositionV1, enabled)
    }

    /// Offers `resource_refs_v1` and `operation_descriptors_v1` (section 2.26) to every
    /// API 0.4 extension: a tool whose `operation` descriptor declares resource outputs
    /// may register native values (`resource/register`) that its successful call
    /// exports, and a later call names them as inputs, pinned exclusively while it
    /// runs. The runtime keeps every record; nothing is bound. Off by default;
    /// [`ExtensionHost::allow_feature`](super::ExtensionHost::allow_feature) offers it to
    /// one extension instead.
    pub fn resource_refs(self, enabled: bool) -> Self {
        self.runtime_feature(Feature::ResourceRefsV1, enabled)
            .runtime_feature(Feature::OperationDescriptorsV1, enabled)
    }

    /// Offers `operation_descriptors_v1` (section 2.26) alone to every API 0.4
    /// extension: tools may describe their operation, without resources.
    pub fn operation_descriptors(self, enabled: bool) -> Self {
        self.runtime_feature(Feature::OperationDescriptorsV1, enabled)
    }

    /// Configures bulk storage (section 2.27), which offers `bulk_objects_v1` to every
    /// API 0.4 extension: large bytes pass as files in the store's transfer directory,
    /// snapshot and verified by the host (`bulk/write`, `bulk/commit`, `bulk/read`,
    /// `bulk/release`), and results carry only BlobRefs.
    /// [`BulkStorage::temporary`](crate::features::bulk::BulkStorage::temporary) lives
    /// in the host's scratch directory; either kind is removed with the host.
    pub fn bulk_storage(mut self, storage: crate::features::bulk::BulkStorage) -> Self {
        self.bulk_storage = Some(storage);
        self.runtime_feature(Feature::BulkObjectsV1, true)
    }

    fn runtime_feature(mut self, feature: Feature, enabled: bool) -> Self {
        if enabled {
            self.runtime_features.insert(feature);
        } else {
            self.runtime_features.remove(feature);
        }
        self
    }

    /// Where composing tools' stores live (default: `.octet/composition` in the
    /// workspace). The directory is created owner-only on the first commit and
    /// outlives generations and the host.
    pub fn composition_store(mut self, dir: impl Into<PathBuf>) -> Self {
        self.composition_store = Some(dir.into());
        self
    }

    /// The one deadline of a composing parent's nested calls, counted from the parent's
    /// admission and told to it as `limits.timeout_ms` (section 2.25; default
    /// [`crate::limits::COMPOSITION_TIMEOUT`]). It is clamped to
    /// [`crate::limits::MIN_COMPOSITION_TIMEOUT`]..=[`crate::limits::MAX_COMPOSITION_TIMEOUT`].
    pub fn composition_timeout(mut self, timeout: std::time::Duration) -> Self {
        self.composition_timeout = timeout.clamp(
            crate::limits::MIN_COMPOSITION_TIMEOUT,
            crate::limits::MAX_COMPOSITION_TIMEOUT,
        );
        self
    }

    /// Every option of the runtime-served features' table
    /// ([`crate::features::RuntimeOptions`]): what the CLI's global flags and serve's
    /// options configure.
    pub fn runtime_options(mut self, options: &crate::features::RuntimeOptions) -> Self {
        self = self
            .tool_composition(options.tool_composition)
            .resource_refs(options.resource_refs);
        if let Some(dir) = &options.bulk_storage {
            self = self.bulk_storage(crate::features::bulk::BulkStorage::in_directory(dir));
        }
        if let Some(store) = &options.composition_store {
            self = self.composition_store(store);
        }
        if let Some(timeout) = options.composition_timeout {
            self = self.composition_timeout(timeout);
        }
        self.operation_discovery = options.operation_discovery;
        self
    }

    /// Starts the dispatcher and returns the host.
    pub fn build(self) -> std::io::Result<ExtensionHost> {
        let workspace = std::path::absolute(&self.workspace)?;
        let instance_id = new_instance_id();
        let session_id = self
            .session_id
            .or_else(|| self.host_context.session_id.clone())
            .unwrap_or_else(|| format!("session-{instance_id}"));
        let (events, event_receiver) = events::EventSink::new(self.event_queue);
        let host_value = serde_json::to_value(&self.host_context)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
        let (commands, command_receiver) = crossbeam_channel::bounded(COMMAND_CHANNEL_CAPACITY);
        let (transport, transport_receiver) =
            crossbeam_channel::bounded(TRANSPORT_CHANNEL_CAPACITY);
        let scratch_parent = self.scratch_parent.unwrap_or_else(std::env::temp_dir);
        let scratch_root = crate::transport::ScratchRoot::new_in(scratch_parent)?;
        let guardian = match self.guardian {
            true => Some(crate::transport::Guardian::start(scratch_root.path())?),
            false => None,
        };
        #[cfg(target_os = "linux")]
        if self.child_subreaper {
            // SAFETY: prctl with PR_SET_CHILD_SUBREAPER takes plain integers.
            if unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) } != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        let bulk = match &self.bulk_storage {
            Some(storage) => Some(crate::features::bulk::store::BulkStore::for_storage(
                storage,
                scratch_root.path(),
            )?),
            None => None,
        };
        let shared = Arc::new(Shared {
            workspace: workspace.clone(),
            host_context: self.host_context,
            host_value,
            retry_budget: Default::default(),
            instance_id,
            session_id,
            events,
            frontend: self.frontend,
            transport,
            next_conn: AtomicU64::new(1),
            generations: Mutex::new(std::collections::HashMap::new()),
            supervisor: self.supervisor,
            services: self.bound,
            extension_services: Mutex::new(self.bound_per_extension),
            host_tools: self.host_tools,
            tool_namespace: self.tool_namespace,
            spin_before_sleep: self.spin_before_sleep,
            startup_timeout: self.startup_timeout,
            timeouts: self.timeouts,
            wire_trace: wire_tracer(self.wire_trace, self.wire_trace_sink),
            launch: self.launch,
            scratch_root,
            guardian,
            next_call: Arc::new(AtomicU64::new(1)),
            features: crate::features::HostFeatures {
                bulk: match bulk {
                    Some(store) => std::sync::OnceLock::from(store),
                    None => std::sync::OnceLock::new(),
                },
                operation_discovery: std::sync::atomic::AtomicBool::new(self.operation_discovery),
                agents: Arc::new(crate::features::agents::hub::AgentHub::new()),
                agent_delegates: self.agent_delegates,
                runtime_offers: crate::features::offers::RuntimeOffers::new(self.runtime_features),
                composition: crate::features::composition::CompositionSettings {
                    store: Arc::new(crate::features::composition::store::CompositionStore::new(
                        self.composition_store
                            .unwrap_or_else(|| workspace.join(".octet").join("composition")),
                    )),
                    timeout: self.composition_timeout,
                },
            },
        });
        let next_call = shared.next_call.clone();
        let thread = dispatcher::spawn(shared.clone(), command_receiver, transport_receiver)?;
        let roots = DiscoveryRoots {
            workspace,
            home: self.home,
            explicit: self.explicit_dirs,
        };
        Ok(ExtensionHost {
            inner: Arc::new(HostInner {
                shared,
                commands,
                next_call,
            }),
            roots,
            catalog: Mutex::new(None),
            events: event_receiver,
            thread: Mutex::new(Some(thread)),
        })
    }
}

impl std::fmt::Debug for ExtensionHostBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExtensionHostBuilder")
            .field("workspace", &self.workspace)
            .field("explicit_dirs", &self.explicit_dirs)
            .field("home", &self.home)
            .finish_non_exhaustive()
    }
}

/// The one sink of the wire trace: the `log` facade (`wire_trace`), the embedder's
/// sink (`wire_trace_sink`), both, or none.
fn wire_tracer(
    log: bool,
    sink: Option<crate::model::trace::WireTraceSink>,
) -> Option<crate::model::trace::WireTraceSink> {
    use crate::model::trace::WireFrame;
    match (log, sink) {
        (false, None) => None,
        (false, Some(sink)) => Some(sink),
        (true, None) => Some(Arc::new(|frame: &WireFrame<'_>| log_frame(frame))),
        (true, Some(sink)) => Some(Arc::new(move |frame: &WireFrame<'_>| {
            log_frame(frame);
            sink(frame);
        })),
    }
}

/// Logs one frame at `trace` level, target `octet_host::wire`.
fn log_frame(frame: &crate::model::trace::WireFrame<'_>) {
    let arrow = match frame.direction {
        crate::model::trace::WireDirection::ToExtension => "->",
        crate::model::trace::WireDirection::FromExtension => "<-",
    };
    match frame.text {
        Some(text) => log::trace!(target: "octet_host::wire", "{} {arrow} {text}", frame.source),
        None => log::trace!(
            target: "octet_host::wire",
            "{} {arrow} <a frame that may carry a secret, withheld>",
            frame.source
        ),
    }
}
