//! `eof.exit`: the extension's entrypoint started as the host would start it (its
//! environment, its own process group, the workspace as its directory), sent the
//! `initialize` request the host sends, and once it answered, its stdin closed with no
//! `shutdown` sent. A well-behaved extension reads EOF and exits within the grace
//! period (section 1.8). The grace counts from the EOF, not from the start, so a slow
//! interpreter start on a busy machine is not taken for a hang.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::manifest::{ApiVersion, LocatedManifest};
use crate::negotiation::{initialize_params, HostContext, InitializeOffer};
use crate::transport;

/// How the process ended after EOF: `Ok(within)` when it exited, `Err(why)` when it did
/// not (it is killed then) or could not start.
pub(super) fn eof_exit(
    located: &LocatedManifest,
    workspace: &std::path::Path,
    startup: Duration,
    grace: Duration,
) -> Result<Duration, String> {
    let manifest = &located.manifest;
    let path = transport::process_environment("PATH");
    let program =
        transport::resolve_command(&manifest.entrypoint.command, &located.dir, path.as_deref())
            .map_err(|e| format!("the entrypoint does not start: {e}"))?;
    let scratch = tempfile::tempdir().map_err(|e| format!("no scratch directory: {e}"))?;
    let env = transport::child_environment(
        located,
        workspace,
        scratch.path(),
        &transport::process_environment,
    );
    let frame = initialize_frame(located, workspace)?;
    let mut child = Command::new(program)
        .args(&manifest.entrypoint.args)
        .env_clear()
        .envs(env)
        .current_dir(workspace)
        .process_group(0)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("the entrypoint does not start: {e}"))?;
    let answered = initialize(&mut child, &frame, startup);
    // EOF: no `shutdown`, only the closed pipe.
    drop(child.stdin.take());
    if let Err(why) = answered {
        kill(&mut child);
        return Err(why);
    }
    let closed = Instant::now();
    while closed.elapsed() < grace {
        if let Ok(Some(_)) = child.try_wait() {
            return Ok(closed.elapsed());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    kill(&mut child);
    Err(format!(
        "still running {} ms after its stdin closed; it was killed",
        grace.as_millis()
    ))
}

/// The `initialize` request the host would send, as one frame (canonical on API 0.3).
fn initialize_frame(
    located: &LocatedManifest,
    workspace: &std::path::Path,
) -> Result<Vec<u8>, String> {
    let api = located.manifest.api_version;
    let offer = InitializeOffer::default_for(api, &located.manifest);
    let params = initialize_params(located, workspace, &HostContext::default(), &offer)
        .map_err(|e| format!("no initialize request for this manifest: {e}"))?;
    let request =
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params.to_value()});
    let mut frame = Vec::new();
    match api {
        ApiVersion::V0_3 => crate::wire::canonical::encode_canonical_frame(&request, &mut frame)
            .map_err(|e| format!("no canonical initialize request: {e}"))?,
        _ => {
            frame = serde_json::to_vec(&request).expect("plain data serializes");
            frame.push(b'\n');
        }
    }
    Ok(frame)
}

/// Sends `frame` and waits (up to `startup`) for the answer to id 1 on stdout.
fn initialize(child: &mut Child, frame: &[u8], startup: Duration) -> Result<(), String> {
    let stdin = child.stdin.as_mut().expect("stdin is piped");
    stdin
        .write_all(frame)
        .and_then(|()| stdin.flush())
        .map_err(|e| format!("initialize could not be written: {e}"))?;
    let stdout = child.stdout.take().expect("stdout is piped");
    let (answered, answer) = crossbeam_channel::bounded(1);
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            let is_answer = serde_json::from_str::<Value>(&line)
                .is_ok_and(|v| v.get("id") == Some(&json!(1)) && v.get("method").is_none());
            if is_answer {
                let _ = answered.send(());
            }
        }
    });
    answer.recv_timeout(startup).map_err(|_| {
        format!(
            "did not answer initialize within {} ms, so EOF could not be tried after it",
            startup.as_millis()
        )
    })
}

/// Kills the process group this check started, and reaps its leader.
fn kill(child: &mut Child) {
    // SAFETY: a signal to the process group this module started.
    unsafe { libc::kill(-(child.id() as libc::pid_t), libc::SIGKILL) };
    let _ = child.wait();
}
