//! The environment of every extension child (SUPPLEMENT "Environment of every extension
//! child").
//!
//! The child starts from a cleared environment. It receives, in this order, each later
//! layer replacing an earlier value of the same name:
//!
//! 1. the sanitized pass-through names ([`PASSTHROUGH_VARIABLES`]), only when the host
//!    has them set;
//! 2. the `OCTET_*` variables the host always sets;
//! 3. the manifest's `[entrypoint].env` entries;
//! 4. the brokered names of `[capabilities].environment` (API 0.2 and later), copied from
//!    the host only when declared there and set in the host ([`BROKERED_VARIABLES`]).
//!
//! No other host variable ever reaches the child: a host secret such as
//! `AWS_SECRET_ACCESS_KEY` must not leak.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::Path;

use crate::manifest::LocatedManifest;

/// Host variables passed through to every child when set in the host (SUPPLEMENT,
/// the sanitized default).
pub const PASSTHROUGH_VARIABLES: [&str; 14] = [
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "TMPDIR",
    "TMP",
    "TEMP",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TERM",
    "COLORTERM",
    "NO_COLOR",
];

/// Host variables a manifest may broker through `[capabilities].environment` (API 0.2
/// and later). The reference names `SSH_AUTH_SOCK` as the one reviewed name; any other
/// declared name is ignored here.
pub const BROKERED_VARIABLES: [&str; 1] = ["SSH_AUTH_SOCK"];

/// `OCTET_EXTENSION_API_VERSION`: the manifest's `api_version`.
pub const OCTET_EXTENSION_API_VERSION: &str = "OCTET_EXTENSION_API_VERSION";
/// `OCTET_EXTENSION_NAME`: the manifest's `name`.
pub const OCTET_EXTENSION_NAME: &str = "OCTET_EXTENSION_NAME";
/// `OCTET_EXTENSION_DIR`: the directory holding the manifest.
pub const OCTET_EXTENSION_DIR: &str = "OCTET_EXTENSION_DIR";
/// `OCTET_EXTENSION_MANIFEST`: the absolute manifest path.
pub const OCTET_EXTENSION_MANIFEST: &str = "OCTET_EXTENSION_MANIFEST";
/// `OCTET_WORKSPACE`: the workspace path, also the child's working directory.
pub const OCTET_WORKSPACE: &str = "OCTET_WORKSPACE";
/// `OCTET_EXTENSION_SCRATCH`: the generation's private scratch directory.
pub const OCTET_EXTENSION_SCRATCH: &str = "OCTET_EXTENSION_SCRATCH";

/// Builds the complete environment of one extension child.
///
/// `host_env` looks a name up in the host's environment (use [`process_environment`]
/// in production; tests pass a closure over a fixed map). Paths are made absolute
/// against the host's current directory when they are not already, because the child
/// runs in the workspace, not in the host's directory.
///
/// The result has one entry per name, sorted by name; pass it to a command whose
/// environment was cleared first.
pub fn child_environment(
    located: &LocatedManifest,
    workspace: &Path,
    scratch: &Path,
    host_env: &dyn Fn(&str) -> Option<OsString>,
) -> Vec<(OsString, OsString)> {
    let manifest = &located.manifest;
    let mut env: BTreeMap<OsString, OsString> = BTreeMap::new();

    for name in PASSTHROUGH_VARIABLES {
        if let Some(value) = host_env(name) {
            env.insert(name.into(), value);
        }
    }

    let fixed: [(&str, OsString); 6] = [
        (
            OCTET_EXTENSION_API_VERSION,
            manifest.api_version.as_str().into(),
        ),
        (OCTET_EXTENSION_NAME, manifest.name.as_str().into()),
        (OCTET_EXTENSION_DIR, absolute(&located.dir)),
        (OCTET_EXTENSION_MANIFEST, absolute(&located.manifest_path)),
        (OCTET_WORKSPACE, absolute(workspace)),
        (OCTET_EXTENSION_SCRATCH, absolute(scratch)),
    ];
    for (name, value) in fixed {
        env.insert(name.into(), value);
    }

    for (name, value) in &manifest.entrypoint.env {
        env.insert(name.into(), value.into());
    }

    if manifest.api_version.has_v0_2_fields() {
        for name in &manifest.capabilities.environment {
            if !BROKERED_VARIABLES.contains(&name.as_str()) {
                continue;
            }
            if let Some(value) = host_env(name) {
                env.insert(name.into(), value);
            }
        }
    }

    env.into_iter().collect()
}

/// Looks `name` up in this process's environment; the production `host_env` of
/// [`child_environment`].
pub fn process_environment(name: &str) -> Option<OsString> {
    std::env::var_os(name)
}

/// `path` made absolute against the current directory, without touching the file
/// system; the path itself when that fails (an unreadable current directory).
fn absolute(path: &Path) -> OsString {
    std::path::absolute(path)
        .unwrap_or_else(|_| path.to_path_buf())
        .into_os_string()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::path::PathBuf;

    use super::*;
    use crate::manifest::{ApiVersion, Capabilities, Contributes, Entrypoint, Manifest, Source};

    fn located(api_version: ApiVersion, environment: &[&str]) -> LocatedManifest {
        LocatedManifest {
            manifest: Manifest {
                name: "hello".into(),
                version: semver::Version::new(1, 0, 0),
                api_version,
                requires_octet: None,
                description: None,
                entrypoint: Entrypoint {
                    command: "hello".into(),
                    args: vec![],
                    env: BTreeMap::from([
                        ("EXTRA".to_string(), "1".to_string()),
                        ("LANG".to_string(), "C.UTF-8".to_string()),
                    ]),
                },
                capabilities: Capabilities {
                    environment: environment.iter().map(|s| s.to_string()).collect(),
                    ..Capabilities::default()
                },
                contributes: Contributes::default(),
            },
            manifest_path: PathBuf::from("/ext/hello/extension.toml"),
            dir: PathBuf::from("/ext/hello"),
            source: Source::Explicit,
        }
    }

    fn host(name: &str) -> Option<OsString> {
        match name {
            "PATH" => Some("/usr/bin".into()),
            "LANG" => Some("en_US.UTF-8".into()),
            "NO_COLOR" => Some("".into()),
            "SSH_AUTH_SOCK" => Some("/tmp/agent.sock".into()),
            "AWS_SECRET_ACCESS_KEY" => Some("hunter2".into()),
            "OTHER_BROKERED" => Some("x".into()),
            _ => None,
        }
    }

    fn as_map(env: Vec<(OsString, OsString)>) -> BTreeMap<String, String> {
        env.into_iter()
            .map(|(k, v)| (k.into_string().unwrap(), v.into_string().unwrap()))
            .collect()
    }

    #[test]
    fn layers_apply_in_order_and_nothing_else_leaks() {
        let env = as_map(child_environment(
            &located(ApiVersion::V0_2, &["SSH_AUTH_SOCK", "OTHER_BROKERED"]),
            Path::new("/work/space"),
            Path::new("/tmp/scratch"),
            &host,
        ));
        let expected: BTreeMap<String, String> = [
            ("PATH", "/usr/bin"),
            ("LANG", "C.UTF-8"),
            ("NO_COLOR", ""),
            ("EXTRA", "1"),
            ("SSH_AUTH_SOCK", "/tmp/agent.sock"),
            ("OCTET_EXTENSION_API_VERSION", "0.2"),
            ("OCTET_EXTENSION_NAME", "hello"),
            ("OCTET_EXTENSION_DIR", "/ext/hello"),
            ("OCTET_EXTENSION_MANIFEST", "/ext/hello/extension.toml"),
            ("OCTET_WORKSPACE", "/work/space"),
            ("OCTET_EXTENSION_SCRATCH", "/tmp/scratch"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        assert_eq!(env, expected);
    }

    #[test]
    fn brokered_names_need_api_0_2_and_a_declaration() {
        let env = as_map(child_environment(
            &located(ApiVersion::V0_1, &["SSH_AUTH_SOCK"]),
            Path::new("/w"),
            Path::new("/s"),
            &host,
        ));
        assert!(!env.contains_key("SSH_AUTH_SOCK"));

        let env = as_map(child_environment(
            &located(ApiVersion::V0_4, &[]),
            Path::new("/w"),
            Path::new("/s"),
            &host,
        ));
        assert!(!env.contains_key("SSH_AUTH_SOCK"));

        let env = as_map(child_environment(
            &located(ApiVersion::V0_4, &["SSH_AUTH_SOCK"]),
            Path::new("/w"),
            Path::new("/s"),
            &|name| (name != "SSH_AUTH_SOCK").then(|| host(name)).flatten(),
        ));
        assert!(!env.contains_key("SSH_AUTH_SOCK"), "declared but unset");
    }

    #[test]
    fn relative_paths_become_absolute() {
        let env = as_map(child_environment(
            &located(ApiVersion::V0_2, &[]),
            Path::new("relative/ws"),
            Path::new("scratch"),
            &|_| None,
        ));
        let cwd = std::env::current_dir().unwrap();
        assert_eq!(
            PathBuf::from(&env["OCTET_WORKSPACE"]),
            cwd.join("relative/ws")
        );
        assert_eq!(
            PathBuf::from(&env["OCTET_EXTENSION_SCRATCH"]),
            cwd.join("scratch")
        );
    }
}
