//! `extension.toml`: the data model, parsing and validation, and discovery.

pub mod types;

pub use types::{
    ApiVersion, Capabilities, Contributes, Entrypoint, FilesystemAccess, LocatedManifest, Manifest,
    Source, UiSurface,
};
