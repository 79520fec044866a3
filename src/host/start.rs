//! Starting an extension: resolve, spawn, hand the child to the dispatcher, negotiate.

use std::fmt;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
use std::time::Duration;

use super::events::{Diagnostic, GenerationRef};
use super::{Extension, ExtensionHost};
use crate::dispatcher::{Command, StartRequest};
use crate::limits::{MAX_FRAME_BYTES, OCTET_VERSION, WRITER_QUEUE_FRAMES};
use crate::manifest::{self, ApiVersion, LocatedManifest, ManifestError};
use crate::negotiation::{InitializeOffer, Negotiated, NegotiationError};
use crate::transport::{self, ConnId, IoConfig, ScratchDir, SpawnError, SpawnSpec, StderrEvent};
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
        let manifest = &located.manifest;
        manifest::check_requires_octet(manifest, OCTET_VERSION).map_err(StartError::Manifest)?;
        if !manifest.api_version.is_feature_negotiated() && manifest.api_version != ApiVersion::V0_1
        {
            return Err(StartError::UnsupportedApiVersion {
                api_version: manifest.api_version,
            });
        }
        let inner = &self.inner;
        let workspace = inner.shared.workspace.clone();
        let offer = InitializeOffer::default_for(manifest.api_version, manifest);
        let path_var = transport::process_environment("PATH");
        let program = transport::resolve_command(
            &manifest.entrypoint.command,
            &located.dir,
            path_var.as_deref(),
        )
        .map_err(StartError::Spawn)?;
        let scratch = ScratchDir::new().map_err(StartError::Io)?;
        let env = transport::child_environment(
            &located,
            &workspace,
            scratch.path(),
            &transport::process_environment,
        );
        let spec = SpawnSpec {
            program,
            args: manifest.entrypoint.args.clone(),
            env,
            cwd: workspace,
        };
        let mut spawned = transport::spawn(&spec).map_err(StartError::Spawn)?;

        let conn = ConnId(self.next_conn());
        let generation = {
            let mut generations = inner.generations.lock();
            let g = generations.entry(manifest.name.clone()).or_insert(0);
            *g += 1;
            *g
        };
        let source = GenerationRef {
            extension: manifest.name.clone(),
            generation,
        };
        let events = inner.shared.events.clone();
        let stderr_source = source.clone();
        let stderr_sink = Box::new(move |event: StderrEvent| {
            let diagnostic = match event {
                StderrEvent::Line { text, .. } => Diagnostic::Stderr { line: text },
                StderrEvent::Suppressed { count } => Diagnostic::StderrSuppressed { lines: count },
            };
            events.diagnostic(&stderr_source, diagnostic);
        });
        let frame_limit = Arc::new(AtomicUsize::new(MAX_FRAME_BYTES));
        let config = IoConfig {
            frame_limit: frame_limit.clone(),
            writer_queue: WRITER_QUEUE_FRAMES,
        };
        let io = transport::start_io(
            conn,
            &mut spawned,
            config,
            inner.transport.clone(),
            stderr_sink,
        )
        .map_err(StartError::Io)?;
        let child = spawned.into_process();

        let (reply, answer) = crossbeam_channel::bounded(1);
        let request = StartRequest {
            conn,
            generation,
            located,
            offer,
            child,
            io,
            scratch,
            frame_limit,
            reply,
        };
        if inner
            .commands
            .send(Command::Start(Box::new(request)))
            .is_err()
        {
            return Err(StartError::HostShutDown);
        }
        let started = answer.recv().unwrap_or(Err(StartError::HostShutDown))?;
        Ok(Extension::new(Arc::new(started), inner.clone()))
    }
}
