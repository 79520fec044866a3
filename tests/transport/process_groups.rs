//! Process groups and shutdown: grandchildren, killpg, reaping, no zombies.

use std::path::Path;
use std::time::Duration;

use octet_host::transport::{has_exited, kill_group, SpawnSpec, TransportEvent};

use super::support::*;

/// A shell that starts `sleep 1000` in the background, reports its pid as a
/// notification, then runs `rest`.
fn background_sleeper(rest: &str, cwd: &Path) -> SpawnSpec {
    let script = format!(
        r#"sleep 1000 & printf '{{"jsonrpc":"2.0","method":"pid","params":[%d]}}\n' "$!"; {rest}"#
    );
    command_spec("sh", &["-c", &script], cwd)
}

fn grandchild_pid(running: &Running) -> u32 {
    loop {
        if let TransportEvent::Frames(frames) = running.next_event() {
            let seen = Seen::Frame(frames.into_iter().next().unwrap());
            let (method, params) = notification(&seen).expect("a notification");
            assert_eq!(method, "pid");
            return params[0].as_u64().unwrap() as u32;
        }
    }
}

#[test]
fn grandchild_holding_stdout_does_not_wedge_join_after_stop() {
    let dir = tempfile::tempdir().unwrap();
    let running = start(&background_sleeper("exit 0", dir.path()));
    let grandchild = grandchild_pid(&running);
    assert!(running.process.wait_exited_timeout(LIVENESS).unwrap());
    assert!(running.process.exited_unreaped().unwrap());
    assert_eq!(
        process_state(running.process.pid()),
        Some('Z'),
        "kept as a zombie"
    );
    // The grandchild still holds stdout: no EOF arrives.
    assert!(running
        .events
        .recv_timeout(Duration::from_millis(300))
        .is_err());

    let pid = running.process.pid();
    let (mut process, _) = running.stop_and_join();
    assert!(!is_gone(grandchild), "stopping the threads kills nothing");
    assert!(process.finish().unwrap().success());
    assert!(wait_gone(grandchild), "finish() killed the group");
    let reaped = has_exited(pid).unwrap_err();
    assert_eq!(
        reaped.raw_os_error(),
        Some(libc::ECHILD),
        "no zombie is left"
    );
    assert!(
        process.kill_group(libc::SIGKILL).is_err(),
        "a reaped group is not ours"
    );
}

#[test]
fn kill_group_kills_a_background_grandchild() {
    let dir = tempfile::tempdir().unwrap();
    let running = start(&background_sleeper("wait", dir.path()));
    let grandchild = grandchild_pid(&running);
    let pid = running.process.pid();
    assert!(!running.process.has_exited().unwrap());
    assert!(!is_gone(grandchild));

    kill_group(pid, libc::SIGKILL).unwrap();
    assert!(wait_gone(grandchild));
    assert!(running.process.wait_exited_timeout(LIVENESS).unwrap());
    let outcome = running.read_until_closed();
    assert!(matches!(
        outcome.seen.last(),
        Some(Seen::Closed { error: None, .. })
    ));
    let (mut process, _) = running.stop_and_join();
    let status = process.finish().unwrap();
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(libc::SIGKILL));
    assert!(kill_group(pid, 0).is_ok(), "ESRCH is not an error");
}

#[test]
fn terminate_and_drop_kill_the_group_and_leave_no_zombie() {
    let dir = tempfile::tempdir().unwrap();

    let running = start(&background_sleeper("wait", dir.path()));
    let grandchild = grandchild_pid(&running);
    let (mut process, _) = running.stop_and_join();
    let pid = process.pid();
    assert!(process.terminate_and_reap().is_ok());
    assert!(wait_gone(grandchild));
    assert_eq!(
        has_exited(pid).unwrap_err().raw_os_error(),
        Some(libc::ECHILD)
    );

    let running = start(&background_sleeper("wait", dir.path()));
    let grandchild = grandchild_pid(&running);
    let (process, _) = running.stop_and_join();
    let pid = process.pid();
    drop(process);
    assert!(wait_gone(grandchild), "dropping kills the group");
    assert_eq!(
        has_exited(pid).unwrap_err().raw_os_error(),
        Some(libc::ECHILD),
        "and reaps"
    );
}
