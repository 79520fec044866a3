//! The fault suite's harness: one scenario at a time, a bystander extension beside the
//! faulty one, and checks on processes, threads and memory read from `/proc`.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use octet_host::host::{
    CallError, CallOptions, Diagnostic, ExtensionHandle, ExtensionStatus, HostEvent,
    LifecycleState, PendingCall, ShutdownReport,
};
use octet_host::supervisor::SupervisorPolicy;
use octet_host::validate::ToolResult;
use octet_host::ExtensionHost;
use serde_json::json;

use crate::support::{peer_extension, write_manifest};

/// How long anything that should happen "soon" may take on a loaded machine.
pub const LIVENESS: Duration = Duration::from_secs(20);

/// Bound on a failure the host must report without waiting for a deadline: well under
/// the 30 s default request deadline, so passing it proves the deadline did not fire.
pub const PROMPT: Duration = Duration::from_secs(15);

/// Bound on a whole host shutdown (the aggregate deadline is 3 s; the rest is slack).
pub const SHUTDOWN_BOUND: Duration = Duration::from_secs(10);

/// How much the test process's resident memory may grow during a flood.
pub const RSS_SLACK_KB: u64 = 200 * 1024;

/// Every scenario holds this lock: the thread and memory checks read process-wide
/// figures, so no other scenario of this binary may run at the same time.
static SERIAL: Mutex<()> = Mutex::new(());

/// The raw fault peer.
pub fn fault_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fault_peer.py")
}

fn toml_list(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|s| format!("{s:?}")).collect();
    format!("[{}]", quoted.join(", "))
}

/// One fault scenario: its directories, the serial lock, and the figures taken before
/// its host was built.
pub struct Scene {
    _serial: MutexGuard<'static, ()>,
    pub root: tempfile::TempDir,
    workspace: tempfile::TempDir,
    octet_threads_before: usize,
}

impl Scene {
    /// Takes the serial lock (a poisoned lock only means another scenario failed).
    pub fn new() -> Scene {
        let serial = SERIAL
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        Scene {
            _serial: serial,
            root: tempfile::tempdir().unwrap(),
            workspace: tempfile::tempdir().unwrap(),
            octet_threads_before: octet_threads().len(),
        }
    }

    /// Writes an API 0.2 extension `name` running the fault peer with `scenario`,
    /// declaring `tools`, with extra environment entries.
    pub fn fault(
        &self,
        name: &str,
        scenario: &[&str],
        tools: &[&str],
        env: &[(&str, &str)],
    ) -> PathBuf {
        let mut args = vec![fault_script().to_string_lossy().into_owned()];
        args.extend(scenario.iter().map(|s| s.to_string()));
        let mut env_entries = vec![format!("OCTET_PEER_TOOLS = {:?}", tools.join(","))];
        env_entries.extend(env.iter().map(|(k, v)| format!("{k} = {v:?}")));
        let tools: Vec<String> = tools.iter().map(|s| s.to_string()).collect();
        let manifest = format!(
            "name = {name:?}\nversion = \"0.1.0\"\napi_version = \"0.2\"\n\n\
             [entrypoint]\ncommand = \"python3\"\nargs = {}\nenv = {{ {} }}\n\n\
             [contributes]\ntools = {}\n",
            toml_list(&args),
            env_entries.join(", "),
            toml_list(&tools),
        );
        write_manifest(self.root.path(), name, &manifest)
    }

    /// A path under the scene's root.
    pub fn path(&self, name: &str) -> PathBuf {
        self.root.path().join(name)
    }

    /// Builds a host over `dirs` plus a well-behaved bystander, and starts the
    /// bystander. Automatic restarts are off: a generation that fails is parked, so the
    /// aftermath of the fault is observed on its own (a restart would only start the
    /// same faulty fixture again; tests/supervisor.rs covers restarts).
    pub fn host(&self, dirs: &[PathBuf]) -> (HostGuard, Bystander) {
        let policy = SupervisorPolicy {
            max_attempts: 0,
            ..SupervisorPolicy::default()
        };
        self.host_with(dirs, policy)
    }

    /// Like [`Scene::host`], with the default supervisor policy (restarts on).
    pub fn supervised_host(&self, dirs: &[PathBuf]) -> (HostGuard, Bystander) {
        self.host_with(dirs, SupervisorPolicy::default())
    }

    fn host_with(&self, dirs: &[PathBuf], policy: SupervisorPolicy) -> (HostGuard, Bystander) {
        let mut all = dirs.to_vec();
        all.push(peer_extension(
            self.root.path(),
            "bystander",
            "0.2",
            &["good"],
            &["ping"],
        ));
        // Several fault fixtures of one scenario may all offer `echo`.
        let mut builder = ExtensionHost::builder(self.workspace.path())
            .no_global_extensions()
            .tool_namespace(octet_host::host::ToolNamespace::PerExtension)
            .supervisor_policy(policy);
        for dir in all {
            builder = builder.extension_dir(dir);
        }
        let host = HostGuard(Some(Arc::new(builder.build().unwrap())));
        let bystander = host.start("bystander").expect("the bystander starts");
        (host, Bystander::start(bystander))
    }

    /// Shuts the host down (bounded), drops it, and checks that every `octet-*` thread
    /// it started has ended.
    pub fn finish(self, mut host: HostGuard) -> ShutdownReport {
        let report = bounded_shutdown(&host);
        drop(host.0.take());
        assert_octet_threads_settle(self.octet_threads_before, "after the host was dropped");
        report
    }
}

/// The scenario's host. A scenario that fails while the host is alive drops it on a
/// thread of its own, so that a host wedged by the fault under test (dropping a host
/// waits for its shutdown) makes the test fail instead of hang.
pub struct HostGuard(Option<Arc<ExtensionHost>>);

impl std::ops::Deref for HostGuard {
    type Target = ExtensionHost;

    fn deref(&self) -> &ExtensionHost {
        self.0
            .as_ref()
            .expect("the host is alive until the scene finishes")
    }
}

impl Drop for HostGuard {
    fn drop(&mut self) {
        if let Some(host) = self.0.take() {
            if std::thread::panicking() {
                let _ = std::thread::Builder::new()
                    .name("host-drop".into())
                    .spawn(move || drop(host));
            }
        }
    }
}

/// Runs `host.shutdown()` on a thread and fails the test if it does not return
/// within [`SHUTDOWN_BOUND`] (the thread is then left behind, the test failed anyway).
pub fn bounded_shutdown(host: &HostGuard) -> ShutdownReport {
    let (sender, receiver) = crossbeam_channel::bounded(1);
    let shutting = host.0.clone().expect("the host is alive");
    let start = Instant::now();
    std::thread::Builder::new()
        .name("shutdown".into())
        .spawn(move || {
            let _ = sender.send(shutting.shutdown());
        })
        .unwrap();
    let report = receiver
        .recv_timeout(SHUTDOWN_BOUND)
        .unwrap_or_else(|_| panic!("host.shutdown() did not return within {SHUTDOWN_BOUND:?}"));
    assert!(start.elapsed() < SHUTDOWN_BOUND, "{:?}", start.elapsed());
    report
}

/// A well-behaved extension beside the faulty one, called from a thread of its own for
/// the whole scenario, and on demand from the test thread.
pub struct Bystander {
    ext: ExtensionHandle,
    stop: Arc<AtomicBool>,
    answered: Arc<AtomicU64>,
    thread: Option<JoinHandle<Result<(), String>>>,
}

impl Bystander {
    fn start(ext: ExtensionHandle) -> Bystander {
        let stop = Arc::new(AtomicBool::new(false));
        let answered = Arc::new(AtomicU64::new(0));
        let (caller, stopping, count) = (ext.clone(), stop.clone(), answered.clone());
        let thread = std::thread::Builder::new()
            .name("bystander".into())
            .spawn(move || {
                let mut n = 0u64;
                while !stopping.load(Ordering::Acquire) {
                    n += 1;
                    let args = json!({"n": n});
                    match caller.call_tool("ping", args, CallOptions::default()) {
                        Ok(out) if out.text() == format!(r#"{{"n":{n}}}"#) => {
                            count.fetch_add(1, Ordering::Relaxed);
                        }
                        other => return Err(format!("bystander call {n}: {other:?}")),
                    }
                    std::thread::sleep(Duration::from_millis(10));
                }
                Ok(())
            })
            .unwrap();
        Bystander {
            ext,
            stop,
            answered,
            thread: Some(thread),
        }
    }

    /// One call from the calling thread, which must be answered correctly.
    pub fn ping(&self, moment: &str) {
        let out = self
            .ext
            .call_tool("ping", json!({"moment": moment}), CallOptions::default())
            .unwrap_or_else(|e| panic!("the bystander failed {moment}: {e:?}"));
        assert_eq!(
            out.text(),
            format!(r#"{{"moment":{}}}"#, json!(moment)),
            "bystander {moment}"
        );
    }

    /// Stops the background caller and checks that every one of its calls was answered.
    pub fn finish(mut self) {
        self.ping("at the end");
        self.stop.store(true, Ordering::Release);
        let outcome = self
            .thread
            .take()
            .unwrap()
            .join()
            .expect("bystander thread");
        if let Err(e) = outcome {
            panic!("{e}");
        }
        assert!(
            self.answered.load(Ordering::Relaxed) > 0,
            "the bystander was never answered"
        );
    }
}

impl Drop for Bystander {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
    }
}

/// Every host event seen so far, gathered as the test waits.
#[derive(Default)]
pub struct EventLog {
    pub seen: Vec<HostEvent>,
}

impl EventLog {
    /// Takes every event already queued.
    pub fn pump(&mut self, host: &ExtensionHost) {
        self.seen.extend(host.events().try_iter());
    }

    /// Gathers events until `done` holds over all of them, or `within` passes.
    pub fn wait_until(
        &mut self,
        host: &ExtensionHost,
        within: Duration,
        done: impl Fn(&EventLog) -> bool,
    ) -> bool {
        let start = Instant::now();
        loop {
            self.pump(host);
            if done(self) {
                return true;
            }
            if start.elapsed() >= within {
                return false;
            }
            if let Ok(event) = host.events().recv_timeout(Duration::from_millis(50)) {
                self.seen.push(event);
            }
        }
    }

    /// The diagnostics about generations of `extension`.
    pub fn diagnostics(&self, extension: &str) -> Vec<&Diagnostic> {
        self.seen
            .iter()
            .filter_map(|e| match e {
                HostEvent::Diagnostic { source, diagnostic } if source.extension == extension => {
                    Some(diagnostic)
                }
                _ => None,
            })
            .collect()
    }

    /// True when some diagnostic about `extension` satisfies `pred`.
    pub fn has_diagnostic(&self, extension: &str, pred: impl Fn(&Diagnostic) -> bool) -> bool {
        self.diagnostics(extension).into_iter().any(pred)
    }

    /// The states `extension` went through, in order.
    pub fn states(&self, extension: &str) -> Vec<LifecycleState> {
        self.seen
            .iter()
            .filter_map(|e| match e {
                HostEvent::StateChanged { source, state } if source.extension == extension => {
                    Some(*state)
                }
                _ => None,
            })
            .collect()
    }
}

/// True for a call that failed because the transport was lost.
pub fn transport_lost(result: &Result<ToolResult, CallError>) -> bool {
    matches!(result, Err(CallError::TransportLost { .. }))
}

/// Waits for a pending call to settle within [`LIVENESS`].
pub fn settle(mut call: PendingCall<ToolResult>, what: &str) -> Result<ToolResult, CallError> {
    call.wait_timeout(LIVENESS)
        .unwrap_or_else(|| panic!("{what} did not settle within {LIVENESS:?}"))
}

/// Waits until `extension` has no live generation left, and returns its status entry
/// (a parked extension stays listed, without a process).
pub fn wait_parked(host: &ExtensionHost, extension: &str) -> ExtensionStatus {
    let start = Instant::now();
    loop {
        let entries: Vec<ExtensionStatus> = host
            .status()
            .into_iter()
            .filter(|s| s.extension == extension)
            .collect();
        if let [entry] = &entries[..] {
            if entry.pid.is_none() && entry.parked.is_some() {
                return entry.clone();
            }
        }
        assert!(
            start.elapsed() < LIVENESS,
            "{extension} was not parked: {entries:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A call to a parked extension fails at once, naming the reason.
pub fn assert_parked_call(ext: &ExtensionHandle, tool: &str) {
    let result = ext.call_tool(tool, json!({}), CallOptions::default());
    assert!(
        matches!(result, Err(CallError::Parked { .. })),
        "{result:?}"
    );
}

/// Names of this process's threads that the host started (`octet-*`; `comm` is cut
/// at 15 bytes, which keeps the prefix).
pub fn octet_threads() -> Vec<String> {
    let mut names = Vec::new();
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return names;
    };
    for task in tasks.flatten() {
        if let Ok(comm) = std::fs::read_to_string(task.path().join("comm")) {
            let comm = comm.trim_end();
            if comm.starts_with("octet-") {
                names.push(comm.to_string());
            }
        }
    }
    names.sort();
    names
}

/// Waits until at most `expected` `octet-*` threads are left, and fails naming the
/// threads still running if that does not happen within [`LIVENESS`].
pub fn assert_octet_threads_settle(expected: usize, moment: &str) {
    let start = Instant::now();
    loop {
        let threads = octet_threads();
        if threads.len() <= expected {
            return;
        }
        if start.elapsed() >= LIVENESS {
            panic!(
                "{moment}: expected at most {expected} octet threads, still running: {threads:?}"
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The resident memory of this process, in KiB.
pub fn rss_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .expect("VmRSS in /proc/self/status")
}

/// Fields of `/proc/<pid>/stat` after the command name: state, ppid, pgrp, ...
fn stat_fields(pid: u32) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = stat.rsplit_once(')')?.1;
    Some(rest.split_whitespace().map(str::to_string).collect())
}

/// The process group of `pid`, while it exists.
pub fn process_group(pid: u32) -> Option<u32> {
    stat_fields(pid)?.get(2)?.parse().ok()
}

/// True while `pid` is a zombie child of this process: exited but never reaped.
pub fn unreaped_child(pid: u32) -> bool {
    match stat_fields(pid) {
        Some(fields) => {
            fields.first().map(String::as_str) == Some("Z")
                && fields.get(1).and_then(|p| p.parse::<u32>().ok()) == Some(std::process::id())
        }
        None => false,
    }
}

/// Waits until the host's child `pid` is gone and reaped (not left a zombie).
pub fn assert_child_gone(pid: u32, what: &str) {
    assert!(
        crate::support::wait_gone(pid, LIVENESS),
        "{what} (pid {pid}) is still running"
    );
    let start = Instant::now();
    while unreaped_child(pid) && start.elapsed() < LIVENESS {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!unreaped_child(pid), "{what} (pid {pid}) was never reaped");
}

/// Reads a pid the fault peer wrote, waiting for the file.
pub fn read_pid(path: &Path) -> u32 {
    let start = Instant::now();
    loop {
        if let Ok(text) = std::fs::read_to_string(path) {
            return text.trim().parse().expect("a pid");
        }
        assert!(
            start.elapsed() < LIVENESS,
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Kills, on drop, processes the host cannot or did not remove (so a failing test leaves nothing
/// running either). Only processes still running the fault peer are touched, so a
/// recycled pid is never hit.
#[derive(Default)]
pub struct Escapees(pub Vec<u32>);

impl Escapees {
    /// Kills every recorded process still running the fault peer.
    pub fn kill_all(&mut self) {
        for pid in self.0.drain(..) {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            if String::from_utf8_lossy(&cmdline).contains("fault_peer.py") {
                // SAFETY: kill takes plain integers; the pid was checked just above.
                unsafe {
                    libc::kill(pid as libc::pid_t, libc::SIGKILL);
                }
            }
        }
    }
}

impl Drop for Escapees {
    fn drop(&mut self) {
        self.kill_all();
    }
}
