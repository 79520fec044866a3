//! The embedder's API: build a host, discover and start extensions, call them, read
//! events, shut down.
//!
//! ```no_run
//! use octet_host::host::{CallOptions, ExtensionHost};
//! use serde_json::json;
//!
//! let host = ExtensionHost::builder("/path/to/workspace")
//!     .extension_dir("./my-extensions/hello-world")
//!     .build()?;
//! let catalog = host.discover(); // manifests and diagnostics; executes nothing
//! for entry in &catalog.entries {
//!     println!("found {}", entry.manifest.name);
//! }
//! let hello = host.start("hello-world")?;
//! let output = hello.call_tool("hello_world", json!({"name": "x"}), CallOptions::default())?;
//! println!("{}", output.text());
//! for event in host.events().try_iter() {
//!     println!("{event:?}");
//! }
//! host.shutdown();
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod call;
pub mod events;
mod extension;
pub mod frontend;
pub mod lifecycle;
mod menu_action;
pub mod progress;
mod services;
mod start;
mod status;
mod v0_3;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender};
use parking_lot::Mutex;

pub use call::{CallError, CallId, CallOptions, CallReply, CancelReason, PendingCall, RawResult};
pub use events::{Diagnostic, GenerationRef, HostEvent};
pub use extension::{Extension, MenuFallbackReason, MenuOutcome};
// `ToolNamespace` is defined below, beside the builder that takes it.
pub use extension::ToolCatalog;
pub use frontend::{CancelFlag, ConfirmationRequest, Frontend, HeadlessFrontend, InputRequest};
pub use lifecycle::{LifecycleNotification, Outcome, Settlement};
pub use progress::{OutputStream, Progress, ProgressEvent};
pub use services::HostServices;
pub use start::{StartError, StartOptions, StartedExtension, StartupEvidence};
pub use status::{ExtensionShutdown, ExtensionStatus, LifecycleState, ShutdownReport};
pub use v0_3::{
    ProviderStream, ProviderStreamRequest, MAX_SOURCE_ROOT_BYTES, PROVIDER_STREAM_QUEUE,
};

use crate::dispatcher::{self, Command, Shared};
use crate::limits::{SHUTDOWN_AGGREGATE_DEADLINE, SIGNAL_SHUTDOWN_CAP};
use crate::manifest::{Catalog, DiscoveryRoots};
use crate::negotiation::HostContext;
use crate::supervisor::SupervisorPolicy;

/// Capacity of the channel from handles to the dispatcher. A full channel makes the
/// caller wait, which is the backpressure an embedder flooding the host should feel.
const COMMAND_CHANNEL_CAPACITY: usize = 1024;

/// Capacity of the channel from all I/O threads to the dispatcher, in batches.
const TRANSPORT_CHANNEL_CAPACITY: usize = 1024;

/// How long the host's threads yield the CPU, checking for work, before they sleep,
/// unless [`ExtensionHostBuilder::spin_before_sleep`] says otherwise.
///
/// Long enough to cover a round trip with a child that answers at once (about 20 µs
/// on the benchmark machine), so at depth 1 most hand-offs find their thread awake;
/// see `benches/README.md` for what it buys.
pub const DEFAULT_SPIN_BEFORE_SLEEP: Duration = Duration::from_micros(50);

/// Where tool names must be unique.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolNamespace {
    /// Across the whole host, as the reference says (sections 2.11, 5): an extension
    /// whose `initialize` catalog (or reload candidate's) names a tool another
    /// extension or the host owns is refused with [`StartError::ToolConflict`], and
    /// `tools/register` refuses such names with -32602. The model sees one flat
    /// catalog.
    #[default]
    Host,
    /// Per extension: extensions may share tool names, and the embedder qualifies
    /// them itself (say `extension.tool`) before the model sees them. The host's own
    /// tools stay reserved. For hosts that run copies of one extension (a benchmark
    /// fleet, a pool of workers).
    PerExtension,
}

/// Configures and builds an [`ExtensionHost`].
#[derive(Clone)]
pub struct ExtensionHostBuilder {
    host_tools: Vec<String>,
    tool_namespace: ToolNamespace,
    services: HostServices,
    supervisor: SupervisorPolicy,
    frontend: Arc<dyn Frontend>,
    workspace: PathBuf,
    explicit_dirs: Vec<PathBuf>,
    home: Option<PathBuf>,
    host_context: HostContext,
    session_id: Option<String>,
    spin_before_sleep: Duration,
    startup_timeout: Duration,
    scratch_parent: Option<PathBuf>,
    child_subreaper: bool,
}

impl ExtensionHostBuilder {
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

    /// How long an extension has to answer `initialize` before its start fails with
    /// [`StartError::InitializeTimeout`] and its process group is killed (default:
    /// [`crate::limits::STARTUP_TIMEOUT`], 30 s). Applies to starts, supervised
    /// restarts and reloads; [`StartOptions`] overrides it for one start.
    pub fn startup_timeout(mut self, timeout: Duration) -> Self {
        self.startup_timeout = timeout;
        self
    }

    /// Adds an explicit extension directory (one holding `extension.toml`). Explicit
    /// directories win over project and global ones of the same name.
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

    /// Binds the host services: policy engine, approver, secret broker, credential
    /// resolver. Unbound services deny or answer "unavailable".
    pub fn services(mut self, services: HostServices) -> Self {
        self.services = services;
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
    /// writer, and a caller in [`PendingCall::wait`]) yield the CPU, checking for
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

    /// Starts the dispatcher and returns the host.
    pub fn build(self) -> std::io::Result<ExtensionHost> {
        let workspace = std::path::absolute(&self.workspace)?;
        let instance_id = new_instance_id();
        let session_id = self
            .session_id
            .or_else(|| self.host_context.session_id.clone())
            .unwrap_or_else(|| format!("session-{instance_id}"));
        let (events, event_receiver) = events::EventSink::new(events::EVENT_CHANNEL_CAPACITY);
        let host_value = serde_json::to_value(&self.host_context)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
        let (commands, command_receiver) = crossbeam_channel::bounded(COMMAND_CHANNEL_CAPACITY);
        let (transport, transport_receiver) =
            crossbeam_channel::bounded(TRANSPORT_CHANNEL_CAPACITY);
        let scratch_parent = self.scratch_parent.unwrap_or_else(std::env::temp_dir);
        let scratch_root = crate::transport::ScratchRoot::new_in(scratch_parent)?;
        #[cfg(target_os = "linux")]
        if self.child_subreaper {
            // SAFETY: prctl with PR_SET_CHILD_SUBREAPER takes plain integers.
            if unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) } != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        let shared = Arc::new(Shared {
            workspace: workspace.clone(),
            host_context: self.host_context,
            host_value,
            instance_id,
            session_id,
            events,
            frontend: self.frontend,
            transport,
            next_conn: AtomicU64::new(1),
            generations: Mutex::new(std::collections::HashMap::new()),
            supervisor: self.supervisor,
            services: self.services,
            host_tools: self.host_tools,
            tool_namespace: self.tool_namespace,
            spin_before_sleep: self.spin_before_sleep,
            startup_timeout: self.startup_timeout,
            scratch_root,
        });
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
                next_call: Arc::new(AtomicU64::new(1)),
            }),
            roots,
            catalog: Mutex::new(None),
            events: event_receiver,
            thread: Mutex::new(Some(thread)),
        })
    }
}

/// What every handle shares.
pub(crate) struct HostInner {
    pub shared: Arc<Shared>,
    pub commands: Sender<Command>,
    pub next_call: Arc<AtomicU64>,
}

/// A running host: one dispatcher thread and the extensions it started.
///
/// Dropping the host shuts every extension down (the bounded sequence of section 1.8)
/// and waits for the dispatcher to finish.
pub struct ExtensionHost {
    inner: Arc<HostInner>,
    roots: DiscoveryRoots,
    /// The entries of the last discovery, which `start` looks names up in.
    catalog: Mutex<Option<start::Discovered>>,
    events: Receiver<HostEvent>,
    thread: Mutex<Option<JoinHandle<()>>>,
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

impl std::fmt::Debug for ExtensionHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExtensionHost")
            .field("workspace", &self.inner.shared.workspace)
            .finish_non_exhaustive()
    }
}

impl ExtensionHost {
    /// A builder for a host whose workspace is `workspace`.
    pub fn builder(workspace: impl AsRef<Path>) -> ExtensionHostBuilder {
        ExtensionHostBuilder {
            host_tools: Vec::new(),
            tool_namespace: ToolNamespace::Host,
            services: HostServices::default(),
            supervisor: SupervisorPolicy::default(),
            frontend: Arc::new(HeadlessFrontend),
            workspace: workspace.as_ref().to_path_buf(),
            explicit_dirs: Vec::new(),
            home: std::env::var_os("HOME").map(PathBuf::from),
            host_context: HostContext::default(),
            spin_before_sleep: DEFAULT_SPIN_BEFORE_SLEEP,
            startup_timeout: crate::limits::STARTUP_TIMEOUT,
            scratch_parent: None,
            child_subreaper: false,
            session_id: None,
        }
    }

    /// The workspace (absolute).
    pub fn workspace(&self) -> &Path {
        &self.inner.shared.workspace
    }

    /// Scans the project, global and explicit directories again. Executes nothing; a
    /// bad manifest is a diagnostic in the catalog, never an error.
    pub fn discover(&self) -> Catalog {
        let catalog = crate::manifest::discover(&self.roots);
        *self.catalog.lock() = Some(start::Discovered::from(&catalog));
        catalog
    }

    /// The host event stream: notifications, progress, diagnostics, state changes.
    pub fn events(&self) -> &Receiver<HostEvent> {
        &self.events
    }

    /// Status of every live generation.
    pub fn status(&self) -> Vec<ExtensionStatus> {
        let (reply, answer) = crossbeam_channel::bounded(1);
        if self.inner.commands.send(Command::Status { reply }).is_err() {
            return Vec::new();
        }
        answer.recv().unwrap_or_default()
    }

    /// Reports a lifecycle observation (section 1.10) to every generation that
    /// negotiated `lifecycle_events` and subscribed to it. Delivery is best-effort and
    /// never blocks: session and turn events that cannot be written within 250 ms, and
    /// tool events that find the writer queue full, are dropped with a diagnostic.
    pub fn lifecycle(&self, notification: LifecycleNotification) {
        let _ = self.inner.commands.send(Command::Lifecycle(notification));
    }

    /// Shuts every extension down in parallel within the 3-second aggregate deadline
    /// of section 1.8, then stops the dispatcher. Calling it again returns an empty
    /// report.
    pub fn shutdown(&self) -> ShutdownReport {
        self.shutdown_within(SHUTDOWN_AGGREGATE_DEADLINE)
    }

    /// Like [`shutdown`](Self::shutdown) with the 1.4-second cap of coordinated signal
    /// exits (section 1.8): after it, every registered process group is killed.
    pub fn shutdown_for_signal(&self) -> ShutdownReport {
        self.shutdown_within(SIGNAL_SHUTDOWN_CAP)
    }

    /// Kills every extension's process group now (SIGKILL), without the graceful
    /// sequence: for a second signal during a shutdown, or an embedder that must stop at
    /// once. Pending calls fail as their generations end. Does not wait; a
    /// [`shutdown`](Self::shutdown) still stops the dispatcher and reports.
    pub fn kill_all(&self) {
        let _ = self.inner.commands.send(Command::KillAll);
    }

    /// Shuts everything down, killing every process group still alive after `cap`.
    pub fn shutdown_within(&self, cap: Duration) -> ShutdownReport {
        let (reply, answer) = crossbeam_channel::bounded(1);
        let report = if self
            .inner
            .commands
            .send(Command::Shutdown { cap, reply })
            .is_ok()
        {
            answer.recv().unwrap_or_default()
        } else {
            ShutdownReport::default()
        };
        if let Some(thread) = self.thread.lock().take() {
            let _ = thread.join();
        }
        report
    }
}

impl Drop for ExtensionHost {
    fn drop(&mut self) {
        if self.thread.lock().is_some() {
            self.shutdown();
        }
    }
}

/// A value unique to this host build: `extension_instance_id` (section 1.2) changes
/// across complete host rebuilds even when generation numbers restart.
fn new_instance_id() -> String {
    use sha2::{Digest, Sha256};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut hasher = Sha256::new();
    hasher.update(std::process::id().to_le_bytes());
    hasher.update(COUNTER.fetch_add(1, Ordering::Relaxed).to_le_bytes());
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    hasher.update(now.as_nanos().to_le_bytes());
    let digest = hasher.finalize();
    digest[..12].iter().map(|b| format!("{b:02x}")).collect()
}
