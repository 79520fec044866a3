//! Fixtures shared by the API 0.3 tests.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use octet_host::manifest::{
    ApiVersion, Capabilities, Contributes, Entrypoint, LocatedManifest, Manifest, Source, UiSurface,
};
use octet_host::negotiation::{HostContext, InitializeOffer};

/// Generous bound for anything that should happen promptly (a loaded 2-core machine).
pub const TIMEOUT: Duration = Duration::from_secs(20);

/// The reference example's `hello-world` extension, selecting API 0.3.
pub fn hello_world() -> LocatedManifest {
    LocatedManifest {
        manifest: Manifest {
            name: "hello-world".to_owned(),
            version: semver::Version::new(0, 1, 0),
            api_version: ApiVersion::V0_3,
            requires_octet: None,
            description: None,
            entrypoint: Entrypoint {
                command: "hello-world".to_owned(),
                args: Vec::new(),
                env: BTreeMap::new(),
            },
            capabilities: Capabilities::default(),
            contributes: Contributes {
                tools: vec!["hello_world".to_owned()],
                commands: vec!["hello".to_owned()],
                tool_renderers: vec!["hello_world".to_owned()],
                hooks: vec!["before_prompt".to_owned(), "after_response".to_owned()],
                ui: vec![UiSurface::Status],
                context: true,
                notifications: true,
                confirmations: false,
                presentation: false,
                menu: false,
            },
        },
        manifest_path: PathBuf::from("/home/user/.octet/extensions/hello-world/extension.toml"),
        dir: PathBuf::from("/home/user/.octet/extensions/hello-world"),
        source: Source::Global,
    }
}

/// A minimal API 0.3 manifest declaring only the tool `echo`.
pub fn echo_only() -> LocatedManifest {
    let mut located = hello_world();
    located.manifest.name = "echo".to_owned();
    located.manifest.contributes = Contributes {
        tools: vec!["echo".to_owned()],
        ..Contributes::default()
    };
    located
}

/// The host context of the reference examples.
pub fn example_host() -> HostContext {
    HostContext {
        model: Some("claude-sonnet-4-6".to_owned()),
        ..HostContext::default()
    }
}

/// The reference examples' workspace.
pub fn workspace() -> &'static Path {
    Path::new("/home/user/project")
}

/// This host's default offer for `located`.
pub fn default_offer(located: &LocatedManifest) -> InitializeOffer {
    InitializeOffer::default_for(located.manifest.api_version, &located.manifest)
}

/// The stdlib-only API 0.3 peer script.
pub fn peer03_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/peer03.py")
}
