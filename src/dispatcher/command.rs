//! What handles send to the dispatcher.

use std::time::Duration;

use crossbeam_channel::Sender;
use serde_json::Value;

use super::launch::Launched;
use crate::manifest::{LocatedManifest, UiSurface};
use crate::model::call::{CallId, CancelReason};
use crate::model::catalog::ToolCatalog;
use crate::model::lifecycle::LifecycleNotification;
use crate::model::progress::Progress;
use crate::model::start::StartError;
use crate::model::start::StartedExtension;
use crate::model::status::ExtensionStatus;
use crate::model::status::ShutdownReport;
use crate::validate::host_driven::ProviderEvent;

/// A request to the dispatcher.
pub(crate) enum Command {
    /// Launch a first generation of an extension (on the dispatcher thread, which
    /// lives as long as the host: see `transport::spawn` on the parent-death signal)
    /// and negotiate `initialize` with it.
    Start {
        located: Box<LocatedManifest>,
        startup_timeout: Duration,
        /// Services bound for this extension by this start; they replace the host's
        /// per feature, for this and later generations.
        services: Option<crate::services::bound::ServiceBindings>,
        reply: Sender<Result<StartedExtension, StartError>>,
    },
    /// Send a host request to an extension's active generation.
    Call(Box<CallRequest>),
    /// Cancel a call.
    Cancel { call: CallId, reason: CancelReason },
    /// Shut one extension down (section 1.8) and report when it is gone.
    Stop {
        extension: String,
        reply: Sender<Option<ShutdownReport>>,
    },
    /// Shut every extension down within `cap` and stop the dispatcher.
    Shutdown {
        cap: Duration,
        reply: Sender<ShutdownReport>,
    },
    /// Kill every generation's process group now.
    KillAll,
    /// Send a Wave-1 notification (section 1.11) to an extension's routed generation.
    Notify {
        extension: String,
        generation: Option<u64>,
        notification: crate::model::notify::BoundNotification,
        reply: Sender<Result<(), crate::model::notify::NotifyError>>,
    },
    /// Report the current catalog of an extension's routed generation.
    Tools {
        extension: String,
        reply: Sender<Option<ToolCatalog>>,
    },
    /// End an API 0.3 provider stream early (`provider/cancel`).
    CancelStream {
        extension: String,
        stream_id: String,
    },
    /// Report the status of every extension.
    Status { reply: Sender<Vec<ExtensionStatus>> },
    /// The artifact `artifact_id` of any live generation of `extension` (section 2.8).
    Artifact {
        extension: String,
        artifact_id: String,
        reply: Sender<Option<crate::services::Artifact>>,
    },
    /// Count what the host's tables hold.
    Tables {
        reply: Sender<crate::model::status::HostTables>,
    },
    /// A question for a runtime-served feature.
    Feature(super::FeatureCommand),
    /// The routed generations an awaited session-operation hook goes to: ready, API 0.4,
    /// `session_entries` negotiated, `hook` declared; in the order they were started
    /// (section 1.4b, "in registration order").
    HookSubscribers {
        hook: crate::validate::HookName,
        reply: Sender<Vec<String>>,
    },
    /// The routed generations with an admitted autocomplete chain, in the order the
    /// chains were admitted: each extension's name and whether it negotiated
    /// `autocomplete_edit_v1` (section 2.24b).
    AutocompleteChains { reply: Sender<Vec<(String, bool)>> },
    /// Send a lifecycle notification to every subscribed generation (section 1.10).
    Lifecycle(LifecycleNotification),
    /// Reload an extension candidate-first (section 5).
    Reload {
        extension: String,
        reply: Sender<Result<StartedExtension, StartError>>,
    },
}

/// Why a generation is being initialized, which decides who hears the outcome.
pub(crate) enum InitRole {
    /// The embedder started it and waits for the answer.
    Start {
        reply: Sender<Result<StartedExtension, StartError>>,
    },
    /// The supervisor restarts it after an unexpected exit.
    Restart,
    /// A manual reload's candidate; the embedder waits for the answer.
    Reload {
        reply: Sender<Result<StartedExtension, StartError>>,
    },
}

/// A spawned generation to register, and why.
pub(crate) struct StartRequest {
    pub launched: Launched,
    pub role: InitRole,
    /// How long it has to answer `initialize`.
    pub startup_timeout: Duration,
}

/// One host request from the embedder.
pub(crate) struct CallRequest {
    pub call: CallId,
    pub extension: String,
    pub request: HostRequest,
    pub deadline: Duration,
    pub progress: Option<Sender<Progress>>,
    pub reply: super::reply::ReplyTo,
    /// The person already confirmed this request (a destructive menu action, section
    /// 1.6b): its own first `confirmation/request` is answered yes without asking.
    pub preapproved: bool,
    /// For `provider/stream`: where the stream's `provider/event`s go.
    pub stream: Option<Sender<ProviderEvent>>,
    /// A nested call whose caller asked for its partial results: where they are
    /// relayed.
    pub relay: Option<super::reply::Relay>,
}

/// The host-to-extension methods of section 1, with their embedder-supplied params.
/// The dispatcher adds the `context` member.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum HostRequest {
    /// `tool/call` (section 1.2).
    ToolCall { name: String, arguments: Value },
    /// `command/execute` (section 1.3).
    CommandExecute {
        name: String,
        arguments: Vec<String>,
    },
    /// `hook/run` (section 1.4); an awaited session-operation hook (section 1.4b)
    /// carries the scope its private `session_leaf` grant is minted in.
    HookRun {
        hook: String,
        payload: Value,
        session_leaf: Option<crate::model::call::LeafScope>,
    },
    /// `context/collect` (section 1.5).
    ContextCollect { prompt: Option<String> },
    /// `status/collect` (section 1.6).
    StatusCollect { surface: UiSurface },
    /// `menu/collect` (section 1.6b).
    MenuCollect,
    /// `tool/render` (section 1.7).
    ToolRender {
        name: String,
        arguments: Value,
        output: String,
        is_error: bool,
    },
    /// `ui/autocomplete/complete` (section 2.24b): one editor snapshot, already checked.
    AutocompleteComplete {
        text: String,
        cursor: usize,
        revision: u64,
    },
    /// API 0.3 `migration/detect` (`migration.adapter.v1`).
    MigrationDetect { source_root: String },
    /// API 0.3 `migration/import` (`migration.adapter.v1`).
    MigrationImport {
        source_root: String,
        config_paths: Vec<String>,
    },
    /// API 0.3 `provider/stream` (`provider_stream`).
    ProviderStream {
        stream_id: String,
        provider_id: String,
        model_id: String,
        request: Value,
        authorization_lease: Option<String>,
    },
}

impl HostRequest {
    /// The wire method name.
    pub fn method(&self) -> &'static str {
        match self {
            HostRequest::ToolCall { .. } => "tool/call",
            HostRequest::CommandExecute { .. } => "command/execute",
            HostRequest::HookRun { .. } => "hook/run",
            HostRequest::ContextCollect { .. } => "context/collect",
            HostRequest::StatusCollect { .. } => "status/collect",
            HostRequest::MenuCollect => "menu/collect",
            HostRequest::ToolRender { .. } => "tool/render",
            HostRequest::AutocompleteComplete { .. } => "ui/autocomplete/complete",
            HostRequest::MigrationDetect { .. } => "migration/detect",
            HostRequest::MigrationImport { .. } => "migration/import",
            HostRequest::ProviderStream { .. } => "provider/stream",
        }
    }

    /// True for the methods only API 0.3 has (their closed params carry no context).
    pub fn is_v0_3_only(&self) -> bool {
        matches!(
            self,
            HostRequest::MigrationDetect { .. }
                | HostRequest::MigrationImport { .. }
                | HostRequest::ProviderStream { .. }
        )
    }

    /// True when the request's context carries the `resource_owner` triple on the
    /// feature-negotiated wire (section 1.2: model-tool and tool-hook contexts, slash
    /// commands, `before_prompt`, `after_response`, `context/collect`; section 1.6b:
    /// `menu/collect`). Status and renderer contexts stay process-scoped.
    pub fn has_resource_owner(&self) -> bool {
        !matches!(
            self,
            HostRequest::StatusCollect { .. }
                | HostRequest::ToolRender { .. }
                | HostRequest::AutocompleteComplete { .. }
        )
    }
}
