//! The host under test: extensions of the crate's own binary behind a real
//! [`ExtensionHost`], called through [`crate::ExtensionHandle::call_tool_async`].

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::echo::EchoMode;
use super::{echo_answer_text, echo_arguments, rss_kib, BenchError, RoundTrip, Rss};
use crate::host::{CallOptions, ExtensionHandle, ExtensionHost, PendingCall};
use crate::validate::ToolResult;

/// The SDK `test-extension`'s `[contributes]` block.
const TEST_EXTENSION_CONTRIBUTES: &str =
    "tools = [\"echo\", \"sleep\", \"progress\", \"confirm\", \"ask\", \
     \"notify\", \"crash\", \"big\", \"fail\", \"panic\", \"env\", \"events\"]\n\
     commands = [\"fixture\"]\nhooks = [\"before_prompt\"]\ncontext = true\nui = [\"status\"]\n\
     tool_renderers = [\"echo\"]\nnotifications = true\nconfirmations = true\n";

/// Which child serves an extension's `echo` tool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EchoChild {
    /// The SDK's `test-extension` (`octet-host __extension test-extension`): a reader
    /// thread, a worker pool and a writer thread in the child.
    Sdk,
    /// The bare echo (`octet-host __bench-echo octet`): one thread, offered concurrency.
    Bare,
}

impl EchoChild {
    /// The name used in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            EchoChild::Sdk => "sdk",
            EchoChild::Bare => "bare",
        }
    }
}

/// One extension to write a manifest for.
#[derive(Clone, Debug)]
pub struct ExtensionSpec {
    /// The manifest's `name`.
    pub name: String,
    /// The manifest's `api_version`, such as `"0.4"`.
    pub api: &'static str,
    /// What serves it.
    pub child: EchoChild,
}

/// A host over temporary manifests and a temporary workspace. Dropping it shuts the
/// host down.
#[derive(Debug)]
pub struct OctetFixture {
    host: ExtensionHost,
    _root: tempfile::TempDir,
    _workspace: tempfile::TempDir,
}

impl OctetFixture {
    /// Writes one manifest per spec, each running `exe`, and builds a host over them.
    pub fn new(exe: &Path, specs: &[ExtensionSpec]) -> Result<OctetFixture, BenchError> {
        let root = tempfile::tempdir()?;
        let workspace = tempfile::tempdir()?;
        // A fleet runs copies of one extension, so tool names are per extension.
        let mut builder = ExtensionHost::builder(workspace.path())
            .no_global_extensions()
            .tool_namespace(crate::host::ToolNamespace::PerExtension);
        for spec in specs {
            builder = builder.extension_dir(write_manifest(root.path(), exe, spec)?);
        }
        Ok(OctetFixture {
            host: builder.build()?,
            _root: root,
            _workspace: workspace,
        })
    }

    /// The host.
    pub fn host(&self) -> &ExtensionHost {
        &self.host
    }
}

impl Drop for OctetFixture {
    fn drop(&mut self) {
        self.host.shutdown();
    }
}

/// Writes `<root>/<name>/extension.toml` and returns the directory.
fn write_manifest(root: &Path, exe: &Path, spec: &ExtensionSpec) -> std::io::Result<PathBuf> {
    let (args, contributes) = match spec.child {
        EchoChild::Sdk => (
            ["__extension", "test-extension"],
            TEST_EXTENSION_CONTRIBUTES,
        ),
        EchoChild::Bare => (
            ["__bench-echo", EchoMode::Octet.as_str()],
            "tools = [\"echo\"]\n",
        ),
    };
    let manifest = format!(
        "name = {:?}\nversion = \"0.1.0\"\napi_version = {:?}\n\n\
         [entrypoint]\ncommand = {:?}\nargs = [{:?}, {:?}]\n\n[contributes]\n{contributes}",
        spec.name,
        spec.api,
        exe.to_string_lossy(),
        args[0],
        args[1],
    );
    let dir = root.join(&spec.name);
    std::fs::create_dir_all(&dir)?;
    std::fs::write(dir.join("extension.toml"), manifest)?;
    Ok(dir)
}

/// A host subject: `tool/call echo` on one started extension.
#[derive(Debug)]
pub struct OctetPeer {
    name: String,
    extension: ExtensionHandle,
    arguments: Value,
    expected: String,
    /// Keeps the host alive as long as the subject.
    _fixture: Arc<OctetFixture>,
}

impl OctetPeer {
    /// Starts the extension `name` of `fixture`; the subject is called `label`.
    pub fn start(
        fixture: &Arc<OctetFixture>,
        name: &str,
        label: impl Into<String>,
    ) -> Result<OctetPeer, BenchError> {
        Ok(OctetPeer {
            name: label.into(),
            extension: fixture.host().start(name)?,
            arguments: echo_arguments(),
            expected: echo_answer_text(),
            _fixture: Arc::clone(fixture),
        })
    }
}

impl RoundTrip for OctetPeer {
    fn name(&self) -> &str {
        &self.name
    }

    fn run(&mut self, calls: u64, depth: usize) -> Result<Duration, BenchError> {
        let start = Instant::now();
        pipeline(
            &self.extension,
            &self.arguments,
            &self.expected,
            calls,
            depth,
        )?;
        Ok(start.elapsed())
    }
}

/// Completes `calls` calls of `echo` on `extension` with at most `depth` in flight,
/// waiting for the oldest first. The first answer's text is checked.
fn pipeline(
    extension: &ExtensionHandle,
    arguments: &Value,
    expected: &str,
    calls: u64,
    depth: usize,
) -> Result<(), BenchError> {
    let call = || extension.call_tool_async("echo", arguments.clone(), CallOptions::default());
    let mut in_flight: VecDeque<PendingCall<ToolResult>> = VecDeque::new();
    super::pipelined(
        &mut in_flight,
        calls,
        depth,
        |in_flight| {
            in_flight.push_back(call());
            Ok(())
        },
        |in_flight, answered| {
            let pending = in_flight.pop_front().expect("a call is in flight");
            let output = pending.wait()?;
            if answered == 0 && output.text() != expected {
                return Err(BenchError::WrongAnswer { call: answered });
            }
            Ok(())
        },
    )?;
    Ok(())
}

/// Many started extensions of one host: the idle-memory measurement and the busy
/// fleet subject, where every extension has calls in flight from its own thread.
#[derive(Debug)]
pub struct Fleet {
    fixture: Arc<OctetFixture>,
    extensions: Vec<ExtensionHandle>,
    /// How many of `extensions` the busy subject drives.
    busy: usize,
    name: String,
    arguments: Value,
    expected: String,
}

/// Resident memory before and after starting a fleet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FleetMemory {
    /// Extensions started.
    pub extensions: usize,
    /// The host process before starting them.
    pub host_before: Rss,
    /// The host process with all of them started and idle.
    pub host_after: Rss,
    /// The sum over the extensions' processes.
    pub children: Rss,
    /// CPU time the host process used per second while every extension was idle
    /// (measured over [`IDLE_CPU_WINDOW`]): the cost of health polls and timers.
    pub host_idle_cpu_per_second: Duration,
}

/// How long the idle host's CPU time is measured.
pub const IDLE_CPU_WINDOW: Duration = Duration::from_secs(1);

impl FleetMemory {
    /// Host growth plus the children's private memory, per extension, in KiB.
    pub fn per_extension_kib(&self) -> f64 {
        let host = self
            .host_after
            .resident_kib
            .saturating_sub(self.host_before.resident_kib);
        (host + self.children.anonymous_kib) as f64 / self.extensions.max(1) as f64
    }
}

impl Fleet {
    /// Starts `count` SDK extensions (at least one) on API `api` and measures memory
    /// once they are idle. The busy subject then drives the first `busy` of them.
    pub fn start(
        exe: &Path,
        count: usize,
        busy: usize,
        api: &'static str,
    ) -> Result<(Fleet, FleetMemory), BenchError> {
        let count = count.max(1);
        let specs: Vec<ExtensionSpec> = (0..count)
            .map(|i| ExtensionSpec {
                name: format!("fleet-{i:03}"),
                api,
                child: EchoChild::Sdk,
            })
            .collect();
        let fixture = Arc::new(OctetFixture::new(exe, &specs)?);
        let host_before = rss_kib(std::process::id())?;
        let mut extensions = Vec::with_capacity(count);
        for spec in &specs {
            extensions.push(fixture.host().start(&spec.name)?);
        }
        // Let the children finish starting their threads before measuring.
        std::thread::sleep(Duration::from_millis(300));
        let host_after = rss_kib(std::process::id())?;
        let cpu_before = super::process_cpu_time()?;
        std::thread::sleep(IDLE_CPU_WINDOW);
        let idle_cpu = super::process_cpu_time()?.saturating_sub(cpu_before);
        let host_idle_cpu_per_second = idle_cpu.div_f64(IDLE_CPU_WINDOW.as_secs_f64());
        let mut children = Rss::default();
        for status in fixture.host().status() {
            let pid = status.pid.ok_or_else(|| BenchError::NoProcess {
                extension: status.extension.clone(),
            })?;
            let rss = rss_kib(pid)?;
            children.resident_kib += rss.resident_kib;
            children.anonymous_kib += rss.anonymous_kib;
        }
        let memory = FleetMemory {
            extensions: count,
            host_before,
            host_after,
            children,
            host_idle_cpu_per_second,
        };
        let busy = busy.min(count).max(1);
        let fleet = Fleet {
            fixture,
            extensions,
            busy,
            name: format!("busy fleet: {busy} sdk {api}"),
            arguments: echo_arguments(),
            expected: echo_answer_text(),
        };
        Ok((fleet, memory))
    }

    /// The host.
    pub fn host(&self) -> &ExtensionHost {
        self.fixture.host()
    }

    /// Drives the first `busy` extensions from now on (at least one, at most all).
    pub fn set_busy(&mut self, busy: usize) {
        self.busy = busy.clamp(1, self.extensions.len());
        let api = self.name.rsplit(' ').next().unwrap_or_default().to_owned();
        self.name = format!("busy fleet: {} sdk {api}", self.busy);
    }
}

impl RoundTrip for Fleet {
    fn name(&self) -> &str {
        &self.name
    }

    /// Spreads `calls` over the busy extensions, each driven by its own thread with
    /// `depth` calls in flight.
    fn run(&mut self, calls: u64, depth: usize) -> Result<Duration, BenchError> {
        let busy = &self.extensions[..self.busy];
        let share = calls / busy.len() as u64;
        let extra = calls % busy.len() as u64;
        let start = Instant::now();
        std::thread::scope(|scope| {
            let workers: Vec<_> = busy
                .iter()
                .enumerate()
                .map(|(i, extension)| {
                    let calls = share + u64::from((i as u64) < extra);
                    let (arguments, expected) = (&self.arguments, &self.expected);
                    scope.spawn(move || pipeline(extension, arguments, expected, calls, depth))
                })
                .collect();
            // The scope joins every worker; the first error is reported.
            workers
                .into_iter()
                .try_for_each(|w| w.join().expect("a fleet worker panicked"))
        })?;
        Ok(start.elapsed())
    }
}
