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

mod autocomplete;
pub(crate) mod builder;
pub mod call;
mod extension;
mod host_driven;
mod menu_action;
mod session_operation;
mod start;

pub use crate::model::{events, frontend, lifecycle, progress};

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender};
use parking_lot::Mutex;

pub use autocomplete::AutocompleteOutcome;
pub use builder::{ExtensionHostBuilder, ToolNamespace, DEFAULT_SPIN_BEFORE_SLEEP};
pub use call::{
    CallError, CallId, CallOptions, CallReply, CancelReason, LeafScope, PendingCall, RawResult,
};
pub use events::{Diagnostic, GenerationRef, HostEvent};
pub use extension::{ExtensionHandle, MenuFallbackReason, MenuOutcome};
pub use session_operation::SessionOperationError;
// `ToolNamespace` is defined below, beside the builder that takes it.
pub use crate::model::catalog::ToolCatalog;
pub use crate::supervisor::{ParkReason, SupervisorPolicy};
// What calls take and return, so an embedder needs only `host`.
pub use crate::model::notify::{BoundNotification, NotifyError};

pub use crate::model::status::{
    ExtensionShutdown, ExtensionStatus, HostTables, LifecycleState, ShutdownReport,
};
pub use crate::services::bound::ServiceBindings;
pub use crate::slice::PromptWakeups;
pub use crate::validate::host_driven::{
    MigrationDetection, MigrationImport, ProviderEvent, ProviderEventKind, StreamAcceptance,
};
pub use crate::validate::{
    CommandResult, ContentPart, ContextContribution, ExtensionMenu, ExtensionMenuItem, HookName,
    HookPayload, HookResult, Notification, RenderOutput, StatusContribution, ToolResult,
};
pub use frontend::{CancelFlag, ConfirmationRequest, Frontend, HeadlessFrontend, InputRequest};
pub use host_driven::{ProviderStream, ProviderStreamRequest};
pub use lifecycle::{LifecycleNotification, Outcome, Settlement};
pub use progress::{OutputStream, Progress, ProgressEvent};
pub use start::{StartError, StartOptions, StartedExtension, StartupEvidence};

use crate::dispatcher::{Command, Shared};
use crate::limits::SIGNAL_SHUTDOWN_CAP;
use crate::manifest::{Catalog, DiscoveryRoots};

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
        ExtensionHostBuilder::new(workspace.as_ref())
    }

    /// The workspace (absolute).
    pub fn workspace(&self) -> &Path {
        &self.inner.shared.workspace
    }

    /// The durable session id of every `resource_owner` this host issues (the
    /// builder's [`session_id`](ExtensionHostBuilder::session_id), or one made up for
    /// this host). A [`lifecycle`](Self::lifecycle) `session/settled` for it retires
    /// the session owner of child agent sessions; a `session/started` for it begins its
    /// next owning run.
    pub fn session_id(&self) -> &str {
        &self.inner.shared.session_id
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

    /// How many entries the host's own tables hold now (see [`HostTables`]): whenever
    /// the host is quiet, the counts come back to the same values however many
    /// generations came and went. A leak check for tests and long-running embedders;
    /// it costs one round trip to the dispatcher thread. After shutdown, every count
    /// is zero.
    pub fn tables(&self) -> HostTables {
        let (reply, answer) = crossbeam_channel::bounded(1);
        if self.inner.commands.send(Command::Tables { reply }).is_err() {
            return HostTables::default();
        }
        answer.recv().unwrap_or_default()
    }

    /// The artifact `artifact_id` that a live generation of `extension` published
    /// (section 2.8): its verified media type and bytes, for showing an image or audio
    /// part of a result. `None` once the generation that published it is gone (its
    /// store goes with it), or for an id it never issued.
    pub fn artifact(
        &self,
        extension: &str,
        artifact_id: &str,
    ) -> Option<crate::services::Artifact> {
        let (reply, answer) = crossbeam_channel::bounded(1);
        let command = Command::Artifact {
            extension: extension.to_string(),
            artifact_id: artifact_id.to_string(),
            reply,
        };
        self.inner.commands.send(command).ok()?;
        answer.recv().ok().flatten()
    }

    /// Offers `tool_composition_v1` (section 2.25) to the API 0.4 extension `name` from
    /// its next start on, as serve's `start` does for `"features":["tool_composition_v1"]`
    /// ([`ExtensionHostBuilder::tool_composition`] offers it to every extension).
    pub fn allow_tool_composition(&self, name: &str) {
        self.allow_feature(name, crate::negotiation::Feature::ToolCompositionV1);
    }

    /// Makes `get_applicable_operations` (section 2.26) one of the host's own tools:
    /// no extension may offer a tool of that name from now on, and
    /// [`ExtensionHost::get_applicable_operations`] answers it. Offer
    /// [`operation_discovery::tool_definition`](crate::features::operation_discovery::tool_definition)
    /// to the model beside the extensions' tools.
    pub fn enable_operation_discovery(&self) {
        self.inner
            .shared
            .features
            .operation_discovery
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// Runs the `get_applicable_operations` host tool with the model's `arguments`
    /// `{"resource", "limit"?, "cursor"?}`: the resource is checked first (a live value
    /// of a running extension), then that extension's tools whose operation descriptor
    /// takes an input of exactly its type and that the host's tool policy allows,
    /// ordered by operation id and input path, 8 cards a page by default and at most
    /// 32. A page's `next_cursor` is stale once the extension's catalog or generation
    /// changed.
    pub fn get_applicable_operations(
        &self,
        arguments: &serde_json::Value,
    ) -> Result<
        crate::features::operation_discovery::ApplicableOperations,
        crate::features::operation_discovery::DiscoveryError,
    > {
        use crate::features::operation_discovery::{self as discovery, DiscoveryError};
        let shared = &self.inner.shared;
        if !shared
            .features
            .operation_discovery
            .load(std::sync::atomic::Ordering::Relaxed)
        {
            return Err(DiscoveryError::NotEnabled);
        }
        let request = discovery::DiscoveryRequest::parse(arguments)?;
        let (reply, answer) = crossbeam_channel::bounded(1);
        let command = Command::Feature(crate::dispatcher::FeatureCommand::ResourceHome {
            resource: request.resource.clone(),
            reply,
        });
        if self.inner.commands.send(command).is_err() {
            return Err(DiscoveryError::ResourceUnavailable);
        }
        let home = answer
            .recv()
            .ok()
            .flatten()
            .ok_or(DiscoveryError::ResourceUnavailable)?;
        let policy = shared.services.tool_policy_service().cloned();
        discovery::select(&request, &home, |tool| {
            policy
                .as_ref()
                .is_none_or(|policy| policy.allows(&home.extension, tool))
        })
    }

    /// True when bulk storage is configured
    /// ([`ExtensionHostBuilder::bulk_storage`](super::ExtensionHostBuilder::bulk_storage)).
    pub fn has_bulk_storage(&self) -> bool {
        self.inner.shared.features.bulk.get().is_some()
    }

    /// Configures bulk storage (section 2.27) once, after the host was built, as serve's
    /// `start` with `bulk_storage` does: `bulk_objects_v1` is then offered to the
    /// extensions [`ExtensionHost::allow_feature`] names for it, from their next start
    /// on. The same directory again is accepted; another directory, or storage that
    /// cannot be set up, is refused.
    pub fn configure_bulk_storage(
        &self,
        storage: crate::features::bulk::BulkStorage,
    ) -> Result<(), crate::features::bulk::BulkError> {
        use crate::features::bulk::BulkError;
        let shared = &self.inner.shared;
        if let Some(existing) = shared.features.bulk.get() {
            return match &storage.directory {
                Some(dir) if existing.root() == std::path::absolute(dir).ok().as_deref() => Ok(()),
                _ => Err(BulkError::StorageUnavailable(
                    "bulk storage is already configured in another directory".into(),
                )),
            };
        }
        let store = crate::features::bulk::store::BulkStore::for_storage(
            &storage,
            shared.scratch_root.path(),
        )
        .map_err(|e| BulkError::StorageUnavailable(format!("cannot set up bulk storage: {e}")))?;
        // A concurrent configuration may have won; either store serves.
        let _ = shared.features.bulk.set(store);
        Ok(())
    }

    /// Keeps a verified copy of the exported blob `blob` of this host's session in the
    /// bulk store's durable directory (`DIR/durable`), for a later host over the same
    /// directory to recover with [`ExtensionHost::recover_durable`]. A temporary store
    /// refuses (`storage_unavailable`); so does a store without bulk storage.
    pub fn retain_durable(
        &self,
        blob: &crate::features::bulk::BlobRef,
    ) -> Result<(), crate::features::bulk::BulkError> {
        let store = self.inner.shared.features.bulk.get().ok_or_else(|| {
            crate::features::bulk::BulkError::StorageUnavailable("no bulk storage".into())
        })?;
        store.retain_durable(self.session_id(), blob)
    }

    /// Recovers a blob an earlier host retained: the bytes are verified again against
    /// `blob`'s size and SHA-256, and become an exported blob of this host's session
    /// with a fresh id, which is returned. Hand that BlobRef to a call's arguments for
    /// an extension to read it; the old id authorizes nothing.
    pub fn recover_durable(
        &self,
        blob: &crate::features::bulk::BlobRef,
    ) -> Result<crate::features::bulk::BlobRef, crate::features::bulk::BulkError> {
        let store = self.inner.shared.features.bulk.get().ok_or_else(|| {
            crate::features::bulk::BulkError::StorageUnavailable("no bulk storage".into())
        })?;
        store.recover_durable(self.session_id(), blob)
    }

    /// Offers a feature the runtime serves itself (`tool_composition_v1`,
    /// `resource_refs_v1`, `operation_descriptors_v1`) to the API 0.4 extension `name`
    /// from its next start on, as serve's `start` does for its `features`.
    /// `resource_refs_v1` brings `operation_descriptors_v1` with it. False when the
    /// runtime does not serve `feature` itself (those follow their bound services).
    pub fn allow_feature(&self, name: &str, feature: crate::negotiation::Feature) -> bool {
        self.inner
            .shared
            .features
            .runtime_offers
            .allow(name, feature)
    }

    /// The handle for reporting the changes of child agent sessions (sections
    /// 2.13-2.18) from outside a service call, as `serve`'s `agent_report` does; inside
    /// one, [`ServiceCall::agent_reports`](crate::services::bound::ServiceCall::agent_reports)
    /// is the same handle.
    pub fn agent_reports(&self) -> crate::services::bound::AgentReports {
        crate::services::bound::AgentReports(self.inner.shared.features.agents.clone())
    }

    /// Reports a lifecycle observation (section 1.10) to every generation that
    /// negotiated `lifecycle_events` and subscribed to it. Delivery is best-effort and
    /// never blocks: session and turn events that cannot be written within 250 ms, and
    /// tool events that find the writer queue full, are dropped with a diagnostic.
    ///
    /// A `session/settled` also retires that session's owner of child agent sessions
    /// (section 2.18): its extensions may still list, wait on and observe their
    /// children but not spawn, message, follow up, interrupt or stop them, every
    /// `agent/wait` and `agent/events` they hold is answered at once, and their active
    /// children are asked to stop (`agent/stop`, or `agent/interrupt` without
    /// `agent_session_lifetime_v1`). A later `session/started` for the same session
    /// begins its next owning run: it may change its trees again, and the settled
    /// children of its last run are dropped with their idempotency keys.
    pub fn lifecycle(&self, notification: LifecycleNotification) {
        let _ = self.inner.commands.send(Command::Lifecycle(notification));
    }

    /// Shuts every extension down in parallel within the 3-second aggregate deadline
    /// of section 1.8, then stops the dispatcher. Calling it again returns an empty
    /// report.
    pub fn shutdown(&self) -> ShutdownReport {
        self.shutdown_within(self.inner.shared.timeouts.shutdown_aggregate)
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
    crate::hex::lower(&digest[..12])
}
