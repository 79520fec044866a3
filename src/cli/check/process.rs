//! `eof.exit`: the extension's entrypoint started as the host would start it (its
//! environment, its own process group, the workspace as its directory), its stdin
//! closed at once and no `shutdown` sent. A well-behaved extension reads EOF and exits
//! within the grace period (section 1.8: "EOF on stdin ... exit").

use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::manifest::LocatedManifest;
use crate::transport;

/// How the process ended after EOF: `Ok(within)` when it exited, `Err(why)` when it did
/// not (it is killed then) or could not start.
pub(super) fn eof_exit(
    located: &LocatedManifest,
    workspace: &std::path::Path,
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
    let mut child = Command::new(program)
        .args(&manifest.entrypoint.args)
        .env_clear()
        .envs(env)
        .current_dir(workspace)
        .process_group(0)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("the entrypoint does not start: {e}"))?;
    drop(child.stdin.take());
    let started = Instant::now();
    while started.elapsed() < grace {
        if let Ok(Some(_)) = child.try_wait() {
            return Ok(started.elapsed());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    // SAFETY: a signal to the process group this function started.
    unsafe { libc::kill(-(child.id() as libc::pid_t), libc::SIGKILL) };
    let _ = child.wait();
    Err(format!(
        "still running {} ms after its stdin closed; it was killed",
        grace.as_millis()
    ))
}
