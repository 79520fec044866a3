//! The CLI cedes its terminal (section 2.24), tried in a real pseudo-terminal: the CLI
//! runs as the session leader of a pty, an extension acquires the terminal, switches it
//! to raw mode and writes to it; whether it releases it or crashes holding it, the CLI
//! restores the terminal's settings before it exits.

#![cfg(unix)]

mod support;

use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A new pseudo-terminal: its master and its slave.
fn pty() -> (OwnedFd, OwnedFd) {
    // SAFETY: the POSIX pty calls on a fresh master; the slave is opened by its name.
    unsafe {
        let master = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY);
        assert!(master >= 0, "posix_openpt");
        assert_eq!(libc::grantpt(master), 0);
        assert_eq!(libc::unlockpt(master), 0);
        let mut name = [0 as libc::c_char; 128];
        assert_eq!(libc::ptsname_r(master, name.as_mut_ptr(), name.len()), 0);
        let slave = libc::open(name.as_ptr(), libc::O_RDWR | libc::O_NOCTTY);
        assert!(slave >= 0, "open the slave");
        (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave))
    }
}

fn lflag(fd: &OwnedFd) -> libc::tcflag_t {
    // SAFETY: tcgetattr fills the termios it is given.
    let mut termios: libc::termios = unsafe { std::mem::zeroed() };
    assert_eq!(unsafe { libc::tcgetattr(fd.as_raw_fd(), &mut termios) }, 0);
    termios.c_lflag
}

/// Runs `octet-host call peer fullscreen` on the pty's slave as its controlling
/// terminal; returns its exit code and everything written to the terminal.
fn run_on_pty(mode: &str) -> (Option<i32>, String, libc::tcflag_t, libc::tcflag_t) {
    run_on_pty_then(mode, |_, _| {})
}

/// [`run_on_pty`], calling `meanwhile` with the CLI's pid and the output so far until
/// the CLI exits.
fn run_on_pty_then(
    mode: &str,
    mut meanwhile: impl FnMut(u32, &str),
) -> (Option<i32>, String, libc::tcflag_t, libc::tcflag_t) {
    let dir = tempfile::tempdir().unwrap();
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tty_peer.py");
    let manifest = format!(
        "name = \"peer\"\nversion = \"0.1.0\"\napi_version = \"0.2\"\n\n\
         [entrypoint]\ncommand = \"python3\"\nargs = [{:?}]\nenv = {{ TTY_PEER_MODE = {mode:?} }}\n\n\
         [contributes]\ntools = [\"fullscreen\"]\n",
        script.to_string_lossy()
    );
    let ext = support::write_manifest(dir.path(), "peer", &manifest);
    let (master, slave) = pty();
    let before = lflag(&slave);
    let stdio = || Stdio::from(slave.try_clone().unwrap());
    let mut command = Command::new(support::octet_binary());
    command
        .args(["--no-global", "--extension-dir"])
        .arg(&ext)
        .args(["call", "peer", "fullscreen"])
        .current_dir(dir.path())
        .stdin(stdio())
        .stdout(stdio())
        .stderr(stdio());
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        command.pre_exec(|| {
            if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY, 0) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = command.spawn().unwrap();
    let mut reader = std::fs::File::from(master.try_clone().unwrap());
    let seen = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let shared = seen.clone();
    let output = std::thread::spawn(move || {
        let mut chunk = [0u8; 4096];
        while let Ok(n) = reader.read(&mut chunk) {
            if n == 0 {
                break;
            }
            let mut seen = shared.lock().unwrap();
            seen.push_str(&String::from_utf8_lossy(&chunk[..n]));
            if seen.contains("DONE-MARKER") {
                break;
            }
        }
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    let code = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status.code();
        }
        assert!(Instant::now() < deadline, "the CLI did not exit");
        let so_far = seen.lock().unwrap().clone();
        meanwhile(child.id(), &so_far);
        std::thread::sleep(Duration::from_millis(20));
    };
    let after = lflag(&slave);
    // Unblock the reader: write a marker through the slave.
    // SAFETY: a write to an open descriptor.
    unsafe {
        libc::write(slave.as_raw_fd(), b"DONE-MARKER\n".as_ptr().cast(), 12);
    }
    output.join().unwrap();
    let text = seen.lock().unwrap().clone();
    drop(master);
    (code, text, before, after)
}

#[test]
fn a_released_terminal_is_restored() {
    let (code, text, before, after) = run_on_pty("release");
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("EXT-HOLDS-TTY"), "{text}");
    assert!(text.contains("held cli-tty-1"), "{text}");
    // Canonical mode and echo are back: the raw mode the extension set is undone.
    assert_ne!(before & libc::ICANON, 0);
    assert_eq!(
        after & (libc::ICANON | libc::ECHO),
        before & (libc::ICANON | libc::ECHO)
    );
}

#[test]
fn a_terminal_held_by_a_crashed_extension_is_restored() {
    let (code, text, before, after) = run_on_pty("crash");
    assert_ne!(code, Some(0), "{text}");
    assert!(text.contains("EXT-HOLDS-TTY"), "{text}");
    assert_eq!(
        after & (libc::ICANON | libc::ECHO),
        before & (libc::ICANON | libc::ECHO),
        "{text}"
    );
}

#[test]
fn a_signal_takes_the_terminal_back_from_its_holder() {
    let mut signalled = false;
    let (code, text, before, after) = run_on_pty_then("hold", |pid, so_far| {
        if !signalled && so_far.contains("EXT-HOLDS-TTY") {
            signalled = true;
            // SAFETY: a signal to the child this test spawned.
            unsafe { libc::kill(pid as libc::pid_t, libc::SIGTERM) };
        }
    });
    assert!(signalled, "{text}");
    assert_eq!(code, Some(128 + libc::SIGTERM), "{text}");
    assert_eq!(
        after & (libc::ICANON | libc::ECHO),
        before & (libc::ICANON | libc::ECHO),
        "{text}"
    );
}
