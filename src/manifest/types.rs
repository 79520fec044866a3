//! The manifest's data model (`extension.toml`, SUPPLEMENT "Manifest").
//!
//! Values of these types have passed validation: a `Manifest` always satisfies every
//! rule in SUPPLEMENT.md and section 1.1.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

/// The wire version a manifest selects (section "Version scope").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ApiVersion {
    /// The frozen text-oriented API.
    V0_1,
    /// The feature-negotiated API.
    V0_2,
    /// The canonical wire (SUPPLEMENT "API 0.3").
    V0_3,
    /// The current API: the 0.2 wire plus API 0.4 features.
    V0_4,
}

impl ApiVersion {
    /// Every version, oldest first.
    pub const ALL: [ApiVersion; 4] = [
        ApiVersion::V0_1,
        ApiVersion::V0_2,
        ApiVersion::V0_3,
        ApiVersion::V0_4,
    ];

    /// The version as written in manifests and on the wire, such as `"0.2"`.
    pub fn as_str(self) -> &'static str {
        match self {
            ApiVersion::V0_1 => "0.1",
            ApiVersion::V0_2 => "0.2",
            ApiVersion::V0_3 => "0.3",
            ApiVersion::V0_4 => "0.4",
        }
    }

    /// Parses `"0.1"`, `"0.2"`, `"0.3"` or `"0.4"` exactly.
    pub fn parse(text: &str) -> Option<ApiVersion> {
        ApiVersion::ALL.into_iter().find(|v| v.as_str() == text)
    }

    /// True for the feature-negotiated wire (API 0.2 and 0.4), which carries the
    /// `protocol` member in `initialize`.
    pub fn is_feature_negotiated(self) -> bool {
        matches!(self, ApiVersion::V0_2 | ApiVersion::V0_4)
    }

    /// True for every version that has API 0.2 manifest fields (0.2, 0.3, 0.4).
    pub fn has_v0_2_fields(self) -> bool {
        self != ApiVersion::V0_1
    }
}

impl fmt::Display for ApiVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a manifest was found (section 1.1 `source`; SUPPLEMENT "Discovery").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Source {
    /// `<workspace>/.octet/extensions/<name>/`.
    Project,
    /// `~/.octet/extensions/<name>/`.
    Global,
    /// A directory the embedder named explicitly.
    Explicit,
}

impl Source {
    /// `"project"`, `"global"` or `"explicit"`, as sent in `initialize`.
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Project => "project",
            Source::Global => "global",
            Source::Explicit => "explicit",
        }
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A validated `extension.toml`.
#[derive(Clone, Debug, PartialEq)]
pub struct Manifest {
    /// The extension's identifier; equals its directory name when discovered.
    pub name: String,
    /// The extension's own semver version.
    pub version: semver::Version,
    /// The one wire version the extension speaks.
    pub api_version: ApiVersion,
    /// The octet versions this extension accepts, checked before any process starts.
    pub requires_octet: Option<semver::VersionReq>,
    /// A human description.
    pub description: Option<String>,
    /// How to start the process.
    pub entrypoint: Entrypoint,
    /// Consent metadata (not a sandbox).
    pub capabilities: Capabilities,
    /// What the extension contributes.
    pub contributes: Contributes,
}

/// `[entrypoint]`: the process to start, without a shell.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entrypoint {
    /// A bare name (resolved beside the manifest, then through `PATH`) or a path.
    pub command: String,
    /// Arguments, passed as they are.
    pub args: Vec<String>,
    /// Extra environment variables added on top of the sanitized environment.
    pub env: BTreeMap<String, String>,
}

/// `[capabilities].filesystem`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum FilesystemAccess {
    /// No filesystem access is declared.
    #[default]
    None,
    /// Access to the workspace is declared.
    Workspace,
    /// Unrestricted access is declared.
    Unrestricted,
}

impl FilesystemAccess {
    /// `"none"`, `"workspace"` or `"unrestricted"`.
    pub fn as_str(self) -> &'static str {
        match self {
            FilesystemAccess::None => "none",
            FilesystemAccess::Workspace => "workspace",
            FilesystemAccess::Unrestricted => "unrestricted",
        }
    }
}

/// `[capabilities]`: what the extension declares it will do.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Capabilities {
    /// Declared filesystem reach.
    pub filesystem: FilesystemAccess,
    /// Declares that it starts processes.
    pub process: bool,
    /// Declares that it uses the network.
    pub network: bool,
    /// Secret names the broker may serve (duplicate-free, section 1.1).
    pub secrets: Vec<String>,
    /// Brokered host environment variables (API >= 0.2; only `SSH_AUTH_SOCK`).
    pub environment: Vec<String>,
    /// Declares use of `provider/credentials` (API >= 0.2).
    pub provider_credentials: bool,
}

/// A frontend surface of `[contributes].ui` and `status/collect` (section 1.6).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum UiSurface {
    /// The status line.
    Status,
    /// The header.
    Header,
    /// The footer.
    Footer,
}

impl UiSurface {
    /// `"status"`, `"header"` or `"footer"`.
    pub fn as_str(self) -> &'static str {
        match self {
            UiSurface::Status => "status",
            UiSurface::Header => "header",
            UiSurface::Footer => "footer",
        }
    }

    /// Parses a surface name exactly.
    pub fn parse(text: &str) -> Option<UiSurface> {
        [UiSurface::Status, UiSurface::Header, UiSurface::Footer]
            .into_iter()
            .find(|s| s.as_str() == text)
    }
}

/// `[contributes]`: what the extension adds to the host.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Contributes {
    /// Model-callable tool names.
    pub tools: Vec<String>,
    /// Slash command names.
    pub commands: Vec<String>,
    /// Tools this extension renders (`tool/render`).
    pub tool_renderers: Vec<String>,
    /// Lifecycle hooks, such as `before_prompt`.
    pub hooks: Vec<String>,
    /// Frontend surfaces it contributes to.
    pub ui: Vec<UiSurface>,
    /// Answers `context/collect`.
    pub context: bool,
    /// Sends `notification`.
    pub notifications: bool,
    /// Sends `confirmation/request`.
    pub confirmations: bool,
    /// Publishes `presentation/update` snapshots (API >= 0.2).
    pub presentation: bool,
    /// Answers `menu/collect` (API >= 0.2, needs a command).
    pub menu: bool,
}

/// A manifest together with where it was found.
#[derive(Clone, Debug, PartialEq)]
pub struct LocatedManifest {
    /// The validated manifest.
    pub manifest: Manifest,
    /// Absolute path of `extension.toml`.
    pub manifest_path: PathBuf,
    /// The directory holding it (`OCTET_EXTENSION_DIR`).
    pub dir: PathBuf,
    /// How it was discovered.
    pub source: Source,
}
