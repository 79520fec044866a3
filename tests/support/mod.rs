//! Shared helpers for the integration tests: manifests for the raw Python peer and
//! for the SDK example extensions, and process checks.

#![allow(dead_code)]

pub mod agents;
pub mod driver;
pub mod serve_harness;
pub mod sidecar;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use octet_host::host::{Diagnostic, HostEvent};
use octet_host::ExtensionHost;

/// The raw peer script.
pub fn peer_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/peer.py")
}

/// The crate's binary, which also runs the SDK example extensions.
pub fn octet_binary() -> &'static str {
    env!("CARGO_BIN_EXE_octet-host")
}

fn toml_list(items: &[&str]) -> String {
    let quoted: Vec<String> = items.iter().map(|s| format!("{s:?}")).collect();
    format!("[{}]", quoted.join(", "))
}

/// Writes `<root>/<name>/extension.toml` running the raw API 0.3 peer
/// (`tests/fixtures/peer03.py`) in `scenario`, offering `tools`; `env` holds extra
/// `[entrypoint].env` entries (`KEY = "value", ...`), such as `OCTET_PEER_SELECT`.
pub fn peer03_extension(
    root: &Path,
    name: &str,
    scenario: &str,
    tools: &[&str],
    env: &str,
) -> PathBuf {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/peer03.py");
    let env = if env.is_empty() {
        String::new()
    } else {
        format!(", {env}")
    };
    let manifest = format!(
        "name = {name:?}\nversion = \"0.1.0\"\napi_version = \"0.3\"\n\n\
         [entrypoint]\ncommand = \"python3\"\nargs = [{:?}, {scenario:?}]\n\
         env = {{ OCTET_PEER_TOOLS = {:?}{env} }}\n\n\
         [contributes]\ntools = {}\n",
        script.to_string_lossy(),
        tools.join(","),
        toml_list(tools),
    );
    write_manifest(root, name, &manifest)
}

/// Writes `<root>/<name>/extension.toml` running the raw peer with `scenario` and
/// returns the extension directory.
pub fn peer_extension(
    root: &Path,
    name: &str,
    api: &str,
    scenario: &[&str],
    tools: &[&str],
) -> PathBuf {
    peer_extension_with(root, name, api, scenario, tools, "", "")
}

/// Like [`peer_extension`], with extra `[contributes]` lines and extra entries for the
/// `[entrypoint].env` inline table (`KEY = "value", ...`).
pub fn peer_extension_with(
    root: &Path,
    name: &str,
    api: &str,
    scenario: &[&str],
    tools: &[&str],
    contributes: &str,
    env: &str,
) -> PathBuf {
    let mut args = vec![peer_script().to_string_lossy().into_owned()];
    args.extend(scenario.iter().map(|s| s.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let env = if env.is_empty() {
        String::new()
    } else {
        format!(", {env}")
    };
    let manifest = format!(
        "name = {name:?}\nversion = \"0.1.0\"\napi_version = {api:?}\n\n\
         [entrypoint]\ncommand = \"python3\"\nargs = {}\nenv = {{ OCTET_PEER_TOOLS = {:?}{env} }}\n\n\
         [contributes]\ntools = {}\n{contributes}\n",
        toml_list(&args),
        tools.join(","),
        toml_list(tools),
    );
    write_manifest(root, name, &manifest)
}

/// The raw peer in its `menu-actions` scenario, named `actions`: a menu with a safe
/// and a destructive action, both running the command `act`, which asks its own
/// confirmation and reports it.
pub fn menu_actions_extension(root: &Path) -> PathBuf {
    peer_extension_with(
        root,
        "actions",
        "0.2",
        &["menu-actions"],
        &[],
        "commands = [\"act\"]\nmenu = true\nconfirmations = true",
        "OCTET_PEER_COMMANDS = \"act\"",
    )
}

/// Writes `<root>/<name>/extension.toml` running the SDK example `example` from the
/// crate's binary, with `contributes` given as TOML lines.
pub fn sdk_extension(
    root: &Path,
    name: &str,
    api: &str,
    example: &str,
    contributes: &str,
) -> PathBuf {
    let manifest = format!(
        "name = {name:?}\nversion = \"0.1.0\"\napi_version = {api:?}\n\n\
         [entrypoint]\ncommand = {:?}\nargs = [\"__extension\", {example:?}]\n\n\
         [contributes]\n{contributes}\n",
        octet_binary(),
    );
    write_manifest(root, name, &manifest)
}

/// Writes a manifest text into `<root>/<name>/extension.toml`.
pub fn write_manifest(root: &Path, name: &str, text: &str) -> PathBuf {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("extension.toml"), text).unwrap();
    dir
}

/// A host over a fresh workspace with the given explicit extension directories and no
/// global extensions. Tool names are per extension, so fixtures may all offer `echo`;
/// tests of the host-wide reservation build their host themselves.
pub fn host(workspace: &Path, dirs: &[PathBuf]) -> ExtensionHost {
    host_builder(workspace, dirs)
        .tool_namespace(octet_host::host::ToolNamespace::PerExtension)
        .build()
        .unwrap()
}

/// Like [`host`], with `services` bound for every extension.
pub fn bound_host(
    workspace: &Path,
    dirs: &[PathBuf],
    services: octet_host::host::ServiceBindings,
) -> ExtensionHost {
    host_builder(workspace, dirs)
        .tool_namespace(octet_host::host::ToolNamespace::PerExtension)
        .bind(services)
        .build()
        .unwrap()
}

/// Calls `tool` on `ext` (60 s deadline) and returns the JSON its text result holds:
/// how the raw peers report what they saw.
pub fn tool_json(
    ext: &octet_host::ExtensionHandle,
    tool: &str,
    arguments: serde_json::Value,
) -> serde_json::Value {
    let options = octet_host::CallOptions::with_deadline(Duration::from_secs(60));
    let result = ext.call_tool(tool, arguments, options).unwrap();
    serde_json::from_str(&result.text()).unwrap()
}

/// A builder over `workspace` with the given explicit extension directories and no
/// global extensions, every other setting at its default.
pub fn host_builder(workspace: &Path, dirs: &[PathBuf]) -> octet_host::ExtensionHostBuilder {
    let mut builder = ExtensionHost::builder(workspace).no_global_extensions();
    for dir in dirs {
        builder = builder.extension_dir(dir);
    }
    builder
}

/// True while `pid` names a live (not zombie) process.
pub fn process_alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            // The state follows the parenthesised command name.
            let state = stat
                .rsplit(')')
                .next()
                .and_then(|rest| rest.split_whitespace().next());
            !matches!(state, Some("Z") | Some("X"))
        }
        Err(_) => false,
    }
}

/// Waits (generously) until `pid` is gone.
pub fn wait_gone(pid: u32, within: Duration) -> bool {
    let start = Instant::now();
    while start.elapsed() < within {
        if !process_alive(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    !process_alive(pid)
}

/// Collects host events until `done` says enough was seen, or `within` passes.
pub fn collect_events(
    host: &ExtensionHost,
    within: Duration,
    mut done: impl FnMut(&[HostEvent]) -> bool,
) -> Vec<HostEvent> {
    let start = Instant::now();
    let mut events = Vec::new();
    while start.elapsed() < within {
        if let Ok(event) = host.events().recv_timeout(Duration::from_millis(50)) {
            events.push(event);
            if done(&events) {
                break;
            }
        }
    }
    events
}

/// The diagnostics among `events`.
pub fn diagnostics(events: &[HostEvent]) -> Vec<&Diagnostic> {
    events
        .iter()
        .filter_map(|e| match e {
            HostEvent::Diagnostic { diagnostic, .. } => Some(diagnostic),
            _ => None,
        })
        .collect()
}

/// Writes `<root>/<name>/extension.toml` running the Wave-1 peer
/// (`tests/fixtures/services_peer.py`): it takes every offered feature and offers the
/// tools `ask`, `answers` and `seen`. `env` holds extra `[entrypoint].env` entries
/// (`KEY = "value", ...`), such as `OCTET_PEER_SHORTCUTS`.
pub fn services_extension(root: &Path, name: &str, api: &str, env: &str) -> PathBuf {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/services_peer.py");
    let manifest = format!(
        "name = {name:?}\nversion = \"0.1.0\"\napi_version = {api:?}\n\n\
         [entrypoint]\ncommand = \"python3\"\nargs = [{:?}]\nenv = {{ {env} }}\n\n\
         [contributes]\ntools = [\"ask\", \"answers\", \"seen\"]\n",
        script.to_string_lossy(),
    );
    write_manifest(root, name, &manifest)
}

/// The resource peer's tools.
const RESOURCE_TOOLS: &str =
    r#"["make", "use", "inspect", "plain", "release", "register", "disposed", "grow", "crash"]"#;

/// The resource peer as extension `name`, with `env` (TOML inline-table entries).
pub fn resource_extension(root: &Path, name: &str, env: &str) -> PathBuf {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/resource_peer.py");
    let manifest = format!(
        "name = {name:?}\nversion = \"0.1.0\"\napi_version = \"0.4\"\n\n\
         [entrypoint]\ncommand = \"python3\"\nargs = [{:?}]\nenv = {{ {env} }}\n\n\
         [contributes]\ntools = {RESOURCE_TOOLS}\n",
        script.to_string_lossy(),
    );
    write_manifest(root, name, &manifest)
}

/// The bulk peer (`tests/fixtures/bulk_peer.py`, API 0.4) as extension `name`.
pub fn bulk_extension(root: &Path, name: &str) -> PathBuf {
    bulk_extension_prefixed(root, name, "")
}

/// The bulk peer as extension `name`, each tool name starting with `prefix`.
pub fn bulk_extension_prefixed(root: &Path, name: &str, prefix: &str) -> PathBuf {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/bulk_peer.py");
    let tools: Vec<String> = ["put", "get", "get_last", "raw", "seen"]
        .iter()
        .map(|t| format!("{prefix}{t}"))
        .collect();
    let manifest = format!(
        "name = {name:?}\nversion = \"0.1.0\"\napi_version = \"0.4\"\n\n\
         [entrypoint]\ncommand = \"python3\"\nargs = [{:?}]\n\
         env = {{ OCTET_BULK_PREFIX = {prefix:?} }}\n\n\
         [contributes]\ntools = {tools:?}\n",
        script.to_string_lossy(),
    );
    write_manifest(root, name, &manifest)
}

/// Lines a test's service records as it is called, shared with the test.
#[derive(Clone, Default)]
pub struct Journal(std::sync::Arc<std::sync::Mutex<Vec<String>>>);

impl Journal {
    /// Records one line.
    pub fn push(&self, line: String) {
        self.0.lock().unwrap().push(line);
    }

    /// Every line so far.
    pub fn entries(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }

    /// Waits until a line equal to `line` is recorded.
    pub fn wait_for(&self, line: &str) {
        eventually(
            &format!("the line {line:?} in {:?}", self.entries()),
            || self.entries().iter().any(|l| l == line),
        );
    }
}

/// Polls `done` every 10 ms until it holds; fails after a generous 20 s naming `what`.
pub fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "never saw {what}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The optional features the Wave-1 peer's `seen` tool says the host offered.
pub fn offered(seen: &serde_json::Value) -> Vec<String> {
    seen["offered"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f.as_str().map(str::to_string))
        .collect()
}
