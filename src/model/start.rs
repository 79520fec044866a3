//! What starting an extension yields: the started generation, or why it could not start.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::manifest::{ApiVersion, LocatedManifest, ManifestError};
use crate::negotiation::{Negotiated, NegotiationError};
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

/// What the host saw of an extension that failed during `initialize`: how it exited
/// and what it wrote, so the start error names the cause. Its `Display` is a suffix
/// (`"; exit status: 7; stderr: ..."`), empty when nothing was seen.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct StartupEvidence {
    /// The exit status, when the child had exited (`"exit status: 7"`).
    pub exit_status: Option<String>,
    /// The last lines of its stderr, at most [`STARTUP_STDERR_LINES`], each cut at
    /// [`STARTUP_STDERR_LINE_CHARS`] characters.
    ///
    /// [`STARTUP_STDERR_LINES`]: crate::limits::STARTUP_STDERR_LINES
    /// [`STARTUP_STDERR_LINE_CHARS`]: crate::limits::STARTUP_STDERR_LINE_CHARS
    pub stderr_tail: Vec<String>,
    /// How many stdout lines were not JSON (logs written to stdout, usually).
    pub non_json_lines: u64,
    /// The start of the first such line.
    pub first_non_json: Option<String>,
}

impl StartupEvidence {
    /// Keeps the last `STARTUP_STDERR_LINES` of `lines`, each cut to
    /// `STARTUP_STDERR_LINE_CHARS` characters.
    pub(crate) fn with_stderr(mut self, lines: Vec<String>) -> StartupEvidence {
        use crate::limits::{STARTUP_STDERR_LINES, STARTUP_STDERR_LINE_CHARS};
        let skip = lines.len().saturating_sub(STARTUP_STDERR_LINES);
        self.stderr_tail = lines
            .into_iter()
            .skip(skip)
            .map(
                |line| match line.char_indices().nth(STARTUP_STDERR_LINE_CHARS) {
                    Some((cut, _)) => format!("{}…", &line[..cut]),
                    None => line,
                },
            )
            .collect();
        self
    }
}

impl fmt::Display for StartupEvidence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(status) = &self.exit_status {
            write!(f, "; {status}")?;
        }
        if self.non_json_lines > 0 {
            write!(
                f,
                "; {} stdout line{} not JSON",
                self.non_json_lines,
                if self.non_json_lines == 1 {
                    " was"
                } else {
                    "s were"
                }
            )?;
            if let Some(first) = &self.first_non_json {
                write!(f, " (first: {first:?})")?;
            }
            f.write_str(": stdout carries only protocol frames, write logs to stderr")?;
        }
        if !self.stderr_tail.is_empty() {
            write!(f, "; stderr: {}", self.stderr_tail.join(" | "))?;
        }
        Ok(())
    }
}

/// Why an extension could not be started.
#[derive(Debug)]
#[non_exhaustive]
pub enum StartError {
    /// No discovered extension has that name.
    UnknownExtension {
        /// The name asked for.
        name: String,
        /// The names that were discovered, sorted.
        discovered: Vec<String>,
        /// What discovery could not read (a missing or unreadable directory, say),
        /// at most three, in discovery order.
        problems: Vec<String>,
    },
    /// A manifest for that name was found, but discovery rejected it.
    ManifestRejected {
        /// The name asked for.
        name: String,
        /// The discovery diagnostics about it.
        diagnostics: Vec<String>,
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
    /// The `initialize` answer was a frame the host refuses to read (not canonical on
    /// API 0.3, over the frame bound, or breaking an envelope rule); the start failed
    /// at once and the process group was killed.
    RefusedInitializeAnswer {
        /// What is wrong with the frame.
        reason: String,
    },
    /// No `initialize` answer within the deadline; the process group was killed.
    InitializeTimeout {
        /// The deadline that applied.
        after: Duration,
        /// What the extension wrote meanwhile.
        evidence: Box<StartupEvidence>,
    },
    /// The child exited or closed its pipes during `initialize`.
    TransportLost {
        /// What happened.
        reason: String,
        /// How it exited and what it wrote.
        evidence: Box<StartupEvidence>,
    },
    /// A reload's candidate changed what the extension contributes; that needs a full
    /// host rebuild (section 5). The running generation stays.
    ReRegistrationRequired {
        /// What changed.
        changed: String,
    },
    /// The extension's `initialize` catalog names a tool that another running
    /// extension or the host itself already owns; tool names are unique across the
    /// host, so this generation was refused (sections 2.11, 5).
    ToolConflict {
        /// The tool.
        tool: String,
        /// Who owns it: `extension \`name\`` or `the host`.
        owner: String,
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
            StartError::UnknownExtension {
                name,
                discovered,
                problems,
            } => {
                write!(f, "no extension named `{name}` was discovered")?;
                if let Some(close) =
                    crate::suggest::closest(name, discovered.iter().map(String::as_str))
                {
                    write!(f, "; did you mean `{close}`?")?;
                }
                match discovered.is_empty() {
                    true => write!(f, " (none were)")?,
                    false => write!(f, " (discovered: {})", discovered.join(", "))?,
                }
                if !problems.is_empty() {
                    write!(f, "; discovery found: {}", problems.join("; "))?;
                }
                Ok(())
            }
            StartError::ManifestRejected { name, diagnostics } => {
                write!(
                    f,
                    "the manifest of `{name}` was rejected: {}",
                    diagnostics.join("; ")
                )
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
                write!(f, "the extension rejected initialize: {e}")?;
                match &e.data {
                    // Bounded: the data names what was refused, and may be anything.
                    Some(data) => {
                        let text = data.to_string();
                        match text.char_indices().nth(512) {
                            Some((cut, _)) => write!(f, "; data: {}…", &text[..cut]),
                            None => write!(f, "; data: {text}"),
                        }
                    }
                    None => Ok(()),
                }
            }
            StartError::Negotiation(e) => write!(f, "initialize rejected: {e}"),
            StartError::RefusedInitializeAnswer { reason } => write!(
                f,
                "the extension answered initialize with a frame the host refuses ({reason}); \
                 answer with one JSON-RPC object on one line"
            ),
            StartError::InitializeTimeout { after, evidence } => {
                write!(
                    f,
                    "no initialize answer within {} ms (does the extension flush stdout \
                     after each line?)",
                    after.as_millis()
                )?;
                write!(f, "{evidence}")
            }
            StartError::TransportLost { reason, evidence } => {
                write!(
                    f,
                    "lost the extension during initialize: {reason}{evidence}"
                )
            }
            StartError::ToolConflict { tool, owner } => write!(
                f,
                "tool `{tool}` already belongs to {owner}; tool names are unique across the host"
            ),
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

/// Options for one start ([`ExtensionHost::start_with`](crate::host::ExtensionHost::start_with)).
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct StartOptions {
    /// How long the extension has to answer `initialize`; `None` uses the host's
    /// [`crate::host::ExtensionHostBuilder::startup_timeout`].
    pub startup_timeout: Option<Duration>,
    /// Services bound for this extension, over the host's per feature; they stay bound
    /// for its restarts and reloads until a later start binds others.
    pub services: Option<crate::services::bound::ServiceBindings>,
}

impl StartOptions {
    /// Binds services for this extension (see [`StartOptions::services`]).
    pub fn services(mut self, services: crate::services::bound::ServiceBindings) -> StartOptions {
        self.services = Some(services);
        self
    }

    /// Sets the `initialize` deadline of this start.
    pub fn startup_timeout(mut self, timeout: Duration) -> StartOptions {
        self.startup_timeout = Some(timeout);
        self
    }
}
