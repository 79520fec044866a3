//! Helpers shared by the transport tests: spawning fixtures and collecting events.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};
use octet_host::transport::{
    resolve_command, spawn, start_io, ChildProcess, ConnId, GenerationIo, InboundFrame, IoConfig,
    SpawnSpec, StderrSink, TransportEvent, TransportMessage,
};
use octet_host::wire::codec::Codec;
use octet_host::wire::Message;

/// Generous bound for anything that should happen "soon" on a loaded machine.
pub const LIVENESS: Duration = Duration::from_secs(60);

/// Capacity of the test's event channel.
pub const EVENTS: usize = 64;

/// The path of a fixture script.
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// The host's PATH as an `OsString`.
pub fn host_path() -> Option<OsString> {
    std::env::var_os("PATH")
}

/// A spec running `command` (resolved through PATH) with `args` in `cwd`, with only
/// PATH in its environment.
pub fn command_spec(command: &str, args: &[&str], cwd: &Path) -> SpawnSpec {
    let program = resolve_command(command, cwd, host_path().as_deref()).expect("command found");
    SpawnSpec {
        program,
        args: args.iter().map(|s| s.to_string()).collect(),
        env: host_path()
            .map(|p| vec![("PATH".into(), p)])
            .unwrap_or_default(),
        cwd: cwd.to_path_buf(),
    }
}

/// The Python interpreter itself: `python3` on PATH may be a wrapper (pyenv's shim
/// adds variables to the environment), which would blur what the host passed.
pub fn python() -> &'static Path {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON.get_or_init(|| {
        let output = std::process::Command::new("python3")
            .args(["-c", "import sys; sys.stdout.write(sys.executable)"])
            .output()
            .expect("python3 runs");
        assert!(output.status.success());
        PathBuf::from(String::from_utf8(output.stdout).unwrap())
    })
}

/// A spec running a fixture script with the Python interpreter.
pub fn python_spec(script: &str, args: &[&str], cwd: &Path) -> SpawnSpec {
    let mut spec = command_spec("python3", args, cwd);
    spec.program = python().to_path_buf();
    spec.args
        .insert(0, fixture(script).to_str().unwrap().to_string());
    spec
}

/// A running child with its I/O threads and the test's end of the event channel.
pub struct Running {
    pub io: GenerationIo,
    pub process: ChildProcess,
    pub events: Receiver<TransportMessage>,
    pub conn: ConnId,
}

/// Spawns `spec` and starts its I/O with `config` and `sink`.
pub fn start_with(spec: &SpawnSpec, config: IoConfig, sink: StderrSink) -> Running {
    let (tx, rx): (Sender<TransportMessage>, _) = crossbeam_channel::bounded(EVENTS);
    let mut child = spawn(spec).expect("spawn");
    let conn = ConnId(u64::from(child.pid));
    let io = start_io(conn, &mut child, config, tx, sink).expect("start_io");
    Running {
        io,
        process: child.into_process(),
        events: rx,
        conn,
    }
}

/// Spawns `spec` with default I/O settings and a sink that discards stderr events.
pub fn start(spec: &SpawnSpec) -> Running {
    start_with(spec, IoConfig::default(), Box::new(|_| {}))
}

/// What [`Running::read_until_closed`] collected.
#[derive(Debug, Default)]
pub struct ReadOutcome {
    pub seen: Vec<Seen>,
    pub batches: usize,
    pub written: usize,
}

/// What a reader reported, flattened in order.
#[derive(Debug)]
pub enum Seen {
    Frame(InboundFrame),
    Closed {
        unterminated: Option<usize>,
        error: Option<std::io::Error>,
    },
}

impl Running {
    /// The next event, failing the test after [`LIVENESS`].
    pub fn next_event(&self) -> TransportEvent {
        let message = self
            .events
            .recv_timeout(LIVENESS)
            .expect("an event within the liveness bound");
        assert_eq!(message.conn, self.conn);
        message.event
    }

    /// Reader output until `ReaderClosed` (included), with the number of `Frames`
    /// batches and the frames the writer reported as written or skipped meanwhile.
    pub fn read_until_closed(&self) -> ReadOutcome {
        let mut outcome = ReadOutcome::default();
        let deadline = Instant::now() + LIVENESS;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let message = self
                .events
                .recv_timeout(left)
                .expect("ReaderClosed within the liveness bound");
            assert_eq!(message.conn, self.conn);
            match message.event {
                TransportEvent::Frames(frames) => {
                    assert!(!frames.is_empty(), "a batch is never empty");
                    outcome.batches += 1;
                    // A large frame reaches the dispatcher undecoded; decoded here as it would be there.
                    outcome.seen.extend(
                        frames
                            .into_iter()
                            .map(|f| Seen::Frame(f.decoded(Codec::JsonRpc))),
                    );
                }
                TransportEvent::ReaderClosed {
                    unterminated,
                    error,
                } => {
                    outcome.seen.push(Seen::Closed {
                        unterminated,
                        error,
                    });
                    return outcome;
                }
                TransportEvent::Written { frames } => outcome.written += frames,
                TransportEvent::WriterFailed { error } => panic!("writer failed: {error}"),
            }
        }
    }

    /// Stops the I/O threads, joins them (failing the test if that takes longer than
    /// [`LIVENESS`]), and returns every event still in the channel.
    pub fn stop_and_join(self) -> (ChildProcess, Vec<TransportEvent>) {
        let Running {
            io,
            process,
            events,
            ..
        } = self;
        io.stop();
        join_within(io, LIVENESS);
        let rest = events.try_iter().map(|m| m.event).collect();
        (process, rest)
    }
}

/// Joins `io` on a helper thread and fails the test if it does not finish in `limit`.
pub fn join_within(io: GenerationIo, limit: Duration) {
    let (done_tx, done_rx) = crossbeam_channel::bounded(1);
    std::thread::spawn(move || {
        let outcome = io.join_checked();
        let _ = done_tx.send(outcome.is_ok());
    });
    let ok = done_rx
        .recv_timeout(limit)
        .expect("join() returned within the liveness bound");
    assert!(ok, "no I/O thread panicked");
}

/// The method of a notification frame, if it is one.
pub fn notification(frame: &Seen) -> Option<(&str, &serde_json::Value)> {
    match frame {
        Seen::Frame(InboundFrame::Message(Message::Notification(n))) => Some((
            n.method.as_str(),
            n.params.as_ref().unwrap_or(&serde_json::Value::Null),
        )),
        _ => None,
    }
}

/// True when no process has the id `pid` any more, or it is a zombie waiting for a
/// parent that is not us (it is dead either way).
pub fn is_gone(pid: u32) -> bool {
    // SAFETY: kill with signal 0 only checks for existence and permission.
    let rc = unsafe { libc::kill(pid as libc::pid_t, 0) };
    if rc != 0 {
        return std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
    }
    process_state(pid) == Some('Z')
}

/// The state letter of `/proc/<pid>/stat`.
pub fn process_state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_name = stat.rsplit_once(')')?.1;
    after_name.trim_start().chars().next()
}

/// Waits until `pid` is gone (see [`is_gone`]), up to [`LIVENESS`].
pub fn wait_gone(pid: u32) -> bool {
    let deadline = Instant::now() + LIVENESS;
    while Instant::now() < deadline {
        if is_gone(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    false
}

/// Polls `condition` every few milliseconds until it holds, up to [`LIVENESS`].
pub fn wait_until(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + LIVENESS;
    while !condition() {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}
