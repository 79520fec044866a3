//! Starting an extension: resolve, spawn, hand the child to the dispatcher, negotiate.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use super::{Extension, ExtensionHost, HostInner};
use crate::dispatcher::{Command, InitRole, StartRequest};
use crate::manifest::{self, ApiVersion, LocatedManifest, ManifestError};
use crate::negotiation::{Negotiated, NegotiationError};
use crate::supervisor::launch;
use crate::transport::SpawnError;
use crate::wire::ResponseError;

/// A generation that completed `initialize`.
#[derive(Clone, Debug)]
pub struct StartedExtension {
    /// The extension's name.
    pub name: String,
    /// Its process generation, counted from 1.
    pub generation: u64,
    /// The wire version.
    pub api_version: ApiVersion,
    /// The child's process id, which is also its process group id.
    pub pid: u32,
    /// What `initialize` settled: tools, commands, features, limits.
    pub negotiated: Arc<Negotiated>,
    /// The manifest it was started from.
    pub manifest: Arc<LocatedManifest>,
}

/// Why an extension could not be started.
#[derive(Debug)]
pub enum StartError {
    /// No discovered extension has that name.
    UnknownExtension {
        /// The name asked for.
        name: String,
    },
    /// The manifest breaks a rule, or its `requires_octet` excludes this host.
    Manifest(ManifestError),
    /// The extension already has a live generation.
    AlreadyRunning {
        /// The extension.
        extension: String,
    },
    /// The manifest selects an API version this host does not speak yet.
    UnsupportedApiVersion {
        /// The version.
        api_version: ApiVersion,
    },
    /// The entrypoint could not be resolved or spawned.
    Spawn(SpawnError),
    /// Setting up the scratch directory or the I/O threads failed.
    Io(std::io::Error),
    /// The `initialize` request could not be encoded.
    Encode(String),
    /// The extension answered `initialize` with an error.
    InitializeRejected(ResponseError),
    /// The `initialize` answer broke a rule of section 1.1; the process group was killed.
    Negotiation(NegotiationError),
    /// No `initialize` answer within the deadline; the process group was killed.
    InitializeTimeout {
        /// The deadline that applied.
        after: Duration,
    },
    /// The child exited or closed its pipes during `initialize`.
    TransportLost {
        /// What happened.
        reason: String,
    },
    /// A reload's candidate changed what the extension contributes; that needs a full
    /// host rebuild (section 5). The running generation stays.
    ReRegistrationRequired {
        /// What changed.
        changed: String,
    },
    /// No generation of that extension is known to the host (for reload).
    NotStarted {
        /// The name asked for.
        extension: String,
    },
    /// The host is shutting down.
    HostShutDown,
}

impl fmt::Display for StartError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StartError::UnknownExtension { name } => {
                write!(f, "no extension named `{name}` was discovered")
            }
            StartError::Manifest(e) => write!(f, "manifest: {e}"),
            StartError::AlreadyRunning { extension } => {
                write!(f, "extension `{extension}` is already running")
            }
            StartError::UnsupportedApiVersion { api_version } => {
                write!(f, "API {api_version} is not yet supported by this host")
            }
            StartError::Spawn(e) => write!(f, "cannot start the process: {e}"),
            StartError::Io(e) => write!(f, "cannot set up the process: {e}"),
            StartError::Encode(e) => write!(f, "cannot encode initialize: {e}"),
            StartError::InitializeRejected(e) => {
                write!(f, "the extension rejected initialize: {e}")
            }
            StartError::Negotiation(e) => write!(f, "initialize rejected: {e}"),
            StartError::InitializeTimeout { after } => {
                write!(f, "no initialize answer within {} s", after.as_secs())
            }
            StartError::TransportLost { reason } => {
                write!(f, "lost the extension during initialize: {reason}")
            }
            StartError::ReRegistrationRequired { changed } => {
                write!(
                    f,
                    "re-registration required: {changed} changed; rebuild the host"
                )
            }
            StartError::NotStarted { extension } => {
                write!(f, "extension `{extension}` was never started")
            }
            StartError::HostShutDown => f.write_str("the host is shut down"),
        }
    }
}

impl std::error::Error for StartError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            StartError::Manifest(e) => Some(e),
            StartError::Spawn(e) => Some(e),
            StartError::Io(e) => Some(e),
            StartError::Negotiation(e) => Some(e),
            _ => None,
        }
    }
}

impl ExtensionHost {
    /// Starts the discovered extension `name`: checks `requires_octet`, spawns the
    /// entrypoint in its own process group with the sanitized environment, and
    /// negotiates `initialize`. Blocks until the extension is ready or rejected.
    pub fn start(&self, name: &str) -> Result<Extension, StartError> {
        let located = {
            let mut entries = self.catalog.lock();
            if entries.is_none() {
                *entries = Some(manifest::discover(&self.roots).entries);
            }
            entries
                .as_ref()
                .and_then(|e| e.iter().find(|m| m.manifest.name == name).cloned())
        };
        match located {
            Some(located) => self.start_manifest(located),
            None => Err(StartError::UnknownExtension {
                name: name.to_string(),
            }),
        }
    }

    /// Starts an extension from a manifest the embedder located itself.
    pub fn start_manifest(&self, located: LocatedManifest) -> Result<Extension, StartError> {
        let launched = match launch::launch(&self.inner.shared, located.clone()) {
            Ok(launched) => launched,
            Err(error) => {
                // An initial failure is a parked generation-0 entry, never retried.
                let _ = self.inner.commands.send(Command::InitialFailure {
                    located: Box::new(located),
                    error: error.to_string(),
                });
                return Err(error);
            }
        };
        let (reply, answer) = crossbeam_channel::bounded(1);
        let request = StartRequest {
            launched,
            role: InitRole::Start { reply },
        };
        if self
            .inner
            .commands
            .send(Command::Start(Box::new(request)))
            .is_err()
        {
            return Err(StartError::HostShutDown);
        }
        let started = answer.recv().unwrap_or(Err(StartError::HostShutDown))?;
        Ok(Extension::new(Arc::new(started), self.inner.clone()))
    }

    /// Reloads `name` candidate-first (section 5): a new generation is started and fully
    /// negotiated while the current one keeps serving; a candidate whose catalog changed
    /// (tools without `dynamic_tools`, or commands) is rejected with
    /// [`StartError::ReRegistrationRequired`] and the current generation stays. On
    /// success new calls go to the new generation at once, and the old one drains
    /// (bounded) and shuts down. A parked extension is revived.
    pub fn reload(&self, name: &str) -> Result<StartedExtension, StartError> {
        reload(&self.inner, name)
    }
}

/// Asks the dispatcher to reload `name` and waits for the outcome.
pub(crate) fn reload(inner: &HostInner, name: &str) -> Result<StartedExtension, StartError> {
    let (reply, answer) = crossbeam_channel::bounded(1);
    let command = Command::Reload {
        extension: name.to_string(),
        reply,
    };
    if inner.commands.send(command).is_err() {
        return Err(StartError::HostShutDown);
    }
    answer.recv().unwrap_or(Err(StartError::HostShutDown))
}
