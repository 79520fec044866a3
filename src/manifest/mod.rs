//! `extension.toml`: the data model, parsing and validation, bounded loading, and
//! discovery.

pub mod discovery;
mod encode;
pub mod error;
pub mod load;
pub mod parse;
pub mod rules;
pub mod types;

pub use discovery::{
    discover, load_explicit, Catalog, DiagnosticKind, DiscoveryDiagnostic, DiscoveryRoots,
    EXTENSIONS_DIR, MANIFEST_FILE_NAME,
};
pub use error::{EnvNameRule, IdentifierRule, ManifestError, ValueKind};
pub use load::{load, read_manifest_text, FileKind, LoadError};
pub use parse::{check_requires_octet, parse};
pub use rules::{hook_min_api, BROKERED_ENVIRONMENT_NAMES, HOOKS};
pub use types::{
    ApiVersion, Capabilities, Contributes, Entrypoint, FilesystemAccess, LocatedManifest, Manifest,
    Source, UiSurface,
};
