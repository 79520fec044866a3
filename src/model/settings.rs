//! The host's settings that the dispatcher reads: deadlines and how children are
//! launched (see [`crate::host::ExtensionHostBuilder`]).

use std::sync::Arc;
use std::time::Duration;

/// The host's deadlines (see the builder's setters).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Timeouts {
    /// A call's deadline when it sets none.
    pub request: Duration,
    /// Waiting for the `shutdown` acknowledgement.
    pub shutdown_ack: Duration,
    /// Waiting for the exit after it.
    pub shutdown_exit: Duration,
    /// The whole of [`crate::host::ExtensionHost::shutdown`].
    pub shutdown_aggregate: Duration,
}

impl Default for Timeouts {
    fn default() -> Timeouts {
        Timeouts {
            request: crate::limits::REQUEST_DEADLINE,
            shutdown_ack: crate::limits::SHUTDOWN_ACK_TIMEOUT,
            shutdown_exit: crate::limits::SHUTDOWN_EXIT_TIMEOUT,
            shutdown_aggregate: crate::limits::SHUTDOWN_AGGREGATE_DEADLINE,
        }
    }
}

/// Who receives every stderr line.
pub(crate) type StderrSink = Arc<dyn Fn(&super::events::GenerationRef, &str) + Send + Sync>;

/// How children are launched beyond the manifest (see the builder's setters).
#[derive(Clone, Default)]
pub(crate) struct LaunchSettings {
    /// `(extension, name, value)` environment entries.
    pub env: Vec<(String, String, String)>,
    /// The argv prefix every entrypoint runs under.
    pub wrapper: Vec<String>,
    /// Every stderr line goes here too.
    pub stderr: Option<StderrSink>,
}

/// Where tool names must be unique.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolNamespace {
    /// Across the whole host, as the reference says (sections 2.11, 5): an extension
    /// whose `initialize` catalog (or reload candidate's) names a tool another
    /// extension or the host owns is refused with [`StartError::ToolConflict`](super::start::StartError::ToolConflict), and
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
