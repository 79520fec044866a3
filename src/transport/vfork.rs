//! Spawning a child the way `posix_spawn` does, with the parent-death signal set
//! (Linux).
//!
//! # Why not `std::process::Command`
//!
//! The child must get `PR_SET_PDEATHSIG(SIGKILL)` between fork and exec. `Command`
//! can do that only through `pre_exec`, and a `pre_exec` hook makes it `fork` the
//! whole host (copying the page tables of every thread's mappings) and then wait for
//! the child to be scheduled and exec. On a loaded 2-core machine that was about 4.6
//! ms per spawn, against 1 ms with `posix_spawn`'s `clone(CLONE_VM | CLONE_VFORK)`
//! (benches/README.md, "Mass start").
//!
//! # What the OS really does here
//!
//! `clone(CLONE_VM | CLONE_VFORK | SIGCHLD)` starts the child in the parent's address
//! space, on a stack of its own, and suspends the calling thread until the child calls
//! `execve` or exits; the host's other threads keep running. So the child must touch
//! nothing but its own stack and the data prepared for it, take no lock, allocate
//! nothing, and let no signal handler of the host run: before `clone` the calling
//! thread blocks every signal; the child resets every handled signal (and `SIGPIPE`)
//! to its default, then clears its signal mask, as `Command` does. Then it joins a new
//! process group (`setpgid(0, 0)`), sets the parent-death signal and checks that the
//! host did not die before it took effect, puts its pipe ends on 0, 1 and 2, changes
//! to the working directory and `execve`s. A step that fails writes its `errno` to a
//! close-on-exec pipe and exits with 127; the parent reads that pipe once `clone`
//! returns: end of file means the exec succeeded.

use std::ffi::{CString, OsStr, OsString};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// Bytes of stack the child runs on until it execs.
const CHILD_STACK_BYTES: usize = 64 * 1024;

/// The pipes of a spawned child, host ends.
pub(crate) struct Spawned {
    pub pid: u32,
    pub stdin: OwnedFd,
    pub stdout: OwnedFd,
    pub stderr: OwnedFd,
}

/// Everything the child reads, prepared by the parent.
struct Setup {
    program: *const libc::c_char,
    argv: *const *const libc::c_char,
    envp: *const *const libc::c_char,
    cwd: *const libc::c_char,
    /// The child's ends: stdin's read end, stdout's and stderr's write ends.
    fds: [libc::c_int; 3],
    /// Where a failing step writes its errno.
    report: libc::c_int,
    host: libc::pid_t,
}

/// Starts `program` with `args`, exactly the environment `env`, in `cwd`, leading a new
/// process group, with the parent-death signal set and its three standard streams
/// piped.
pub(crate) fn spawn(
    program: &Path,
    args: &[String],
    env: &[(OsString, OsString)],
    cwd: &Path,
) -> io::Result<Spawned> {
    let program = c_string(program.as_os_str())?;
    let mut argv_owned = vec![program.clone()];
    for arg in args {
        argv_owned.push(c_string(OsStr::new(arg))?);
    }
    let envp_owned: Vec<CString> = env
        .iter()
        .map(|(key, value)| {
            let mut entry = key.clone();
            entry.push("=");
            entry.push(value);
            c_string(&entry)
        })
        .collect::<io::Result<_>>()?;
    let cwd = c_string(cwd.as_os_str())?;
    let argv: Vec<*const libc::c_char> = argv_owned
        .iter()
        .map(|a| a.as_ptr())
        .chain(std::iter::once(std::ptr::null()))
        .collect();
    let envp: Vec<*const libc::c_char> = envp_owned
        .iter()
        .map(|e| e.as_ptr())
        .chain(std::iter::once(std::ptr::null()))
        .collect();
    let (stdin_child, stdin_host) = pipe()?;
    let (stdout_host, stdout_child) = pipe()?;
    let (stderr_host, stderr_child) = pipe()?;
    let (report_read, report_write) = pipe()?;
    let setup = Setup {
        program: program.as_ptr(),
        argv: argv.as_ptr(),
        envp: envp.as_ptr(),
        cwd: cwd.as_ptr(),
        fds: [
            stdin_child.as_raw_fd(),
            stdout_child.as_raw_fd(),
            stderr_child.as_raw_fd(),
        ],
        report: report_write.as_raw_fd(),
        // SAFETY: getpid has no preconditions.
        host: unsafe { libc::getpid() },
    };
    let mut stack = vec![0u8; CHILD_STACK_BYTES];
    // The stack grows down; its top, aligned to 16 bytes.
    let top = (stack.as_mut_ptr() as usize + CHILD_STACK_BYTES) & !15;
    let pid = {
        let _blocked = BlockedSignals::new()?;
        // SAFETY: `child` runs on `stack` in this address space while this thread is
        // suspended (CLONE_VFORK), reads only `setup` and what it points to (all alive
        // until clone returns), and calls only async-signal-safe functions.
        unsafe {
            libc::clone(
                child,
                top as *mut libc::c_void,
                libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
                &setup as *const Setup as *mut libc::c_void,
            )
        }
    };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    drop((stdin_child, stdout_child, stderr_child, report_write));
    let mut errno = [0u8; 4];
    let read = read_full(&report_read, &mut errno);
    if read == errno.len() {
        let mut status = 0;
        // SAFETY: reaps our own child, which exited with 127.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        return Err(io::Error::from_raw_os_error(i32::from_ne_bytes(errno)));
    }
    Ok(Spawned {
        pid: pid as u32,
        stdin: stdin_host,
        stdout: stdout_host,
        stderr: stderr_host,
    })
}

/// The child, between `clone` and `execve`. Async-signal-safe calls only.
extern "C" fn child(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is the parent's `Setup`, alive while the parent is suspended.
    let setup = unsafe { &*(arg as *const Setup) };
    /// Reports `errno` to the parent and exits.
    unsafe fn fail(report: libc::c_int) -> ! {
        let bytes = (*libc::__errno_location()).to_ne_bytes();
        libc::write(report, bytes.as_ptr().cast(), bytes.len());
        libc::_exit(127)
    }
    // SAFETY: every call below is a plain system call wrapper on prepared data.
    unsafe {
        // No handler of the host may run here: back to the defaults, as `Command` does.
        // (Signals 32 and 33 belong to the C library; sigaction refuses them.)
        for signal in 1..65 {
            if signal == libc::SIGKILL || signal == libc::SIGSTOP {
                continue;
            }
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(signal, std::ptr::null(), &mut old) != 0 {
                continue;
            }
            if signal == libc::SIGPIPE || old.sa_sigaction > libc::SIG_IGN {
                let mut default: libc::sigaction = std::mem::zeroed();
                default.sa_sigaction = libc::SIG_DFL;
                libc::sigaction(signal, &default, std::ptr::null_mut());
            }
        }
        let mut empty: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut empty);
        if libc::pthread_sigmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut()) != 0 {
            fail(setup.report);
        }
        if libc::setpgid(0, 0) != 0 {
            fail(setup.report);
        }
        if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 {
            fail(setup.report);
        }
        // The host died before the prctl took effect: the signal will never come.
        if libc::getppid() != setup.host {
            *libc::__errno_location() = libc::EPIPE;
            fail(setup.report);
        }
        for (target, &fd) in setup.fds.iter().enumerate() {
            let target = target as libc::c_int;
            if fd == target {
                // dup2 onto itself keeps close-on-exec; clear it instead.
                if libc::fcntl(fd, libc::F_SETFD, 0) != 0 {
                    fail(setup.report);
                }
            } else if libc::dup2(fd, target) < 0 {
                fail(setup.report);
            }
        }
        if libc::chdir(setup.cwd) != 0 {
            fail(setup.report);
        }
        libc::execve(setup.program, setup.argv, setup.envp);
        fail(setup.report)
    }
}

/// Every signal blocked on this thread while it lives; the old mask back after.
struct BlockedSignals(libc::sigset_t);

impl BlockedSignals {
    fn new() -> io::Result<BlockedSignals> {
        // SAFETY: sigfillset and pthread_sigmask write only the sets given.
        unsafe {
            let mut all: libc::sigset_t = std::mem::zeroed();
            libc::sigfillset(&mut all);
            let mut old: libc::sigset_t = std::mem::zeroed();
            match libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut old) {
                0 => Ok(BlockedSignals(old)),
                error => Err(io::Error::from_raw_os_error(error)),
            }
        }
    }
}

impl Drop for BlockedSignals {
    fn drop(&mut self) {
        // SAFETY: restores the mask saved in `new`.
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &self.0, std::ptr::null_mut()) };
    }
}

/// A close-on-exec pipe: (read end, write end).
fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two descriptors into `fds`.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just opened and are owned by nobody else.
    unsafe { Ok((OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1]))) }
}

/// Reads until `buffer` is full or end of file; returns the bytes read.
fn read_full(fd: &OwnedFd, buffer: &mut [u8]) -> usize {
    let mut filled = 0;
    while filled < buffer.len() {
        // SAFETY: reads into the unfilled part of `buffer`.
        let n = unsafe {
            libc::read(
                fd.as_raw_fd(),
                buffer[filled..].as_mut_ptr().cast(),
                buffer.len() - filled,
            )
        };
        match n {
            0 => break,
            n if n > 0 => filled += n as usize,
            _ if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted => {}
            _ => break,
        }
    }
    filled
}

fn c_string(text: &OsStr) -> io::Result<CString> {
    CString::new(text.as_bytes()).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{text:?} contains a NUL byte"),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn output(spawned: Spawned) -> (String, i32) {
        drop(spawned.stdin);
        let mut text = String::new();
        std::fs::File::from(spawned.stdout)
            .read_to_string(&mut text)
            .unwrap();
        let status = crate::transport::process::reap(spawned.pid).unwrap();
        (text, status.code().unwrap_or(-1))
    }

    #[test]
    fn the_child_gets_its_environment_directory_group_and_a_clean_signal_state() {
        let dir = tempfile::tempdir().unwrap();
        let script = "echo \"$GREETING\"; pwd; ps -o pgid= -p $$";
        let env = [("GREETING".into(), "hello there".into())];
        let spawned = spawn(
            Path::new("/bin/sh"),
            &["-c".into(), script.into()],
            &env,
            dir.path(),
        )
        .unwrap();
        let pid = spawned.pid;
        let (text, code) = output(spawned);
        assert_eq!(code, 0, "{text}");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "hello there");
        assert_eq!(
            Path::new(lines[1]).canonicalize().unwrap(),
            dir.path().canonicalize().unwrap()
        );
        assert_eq!(lines[2].trim(), pid.to_string(), "it leads its own group");
        // The program itself reads its own signal mask (no shell in between, which
        // blocks signals around its own forks).
        let spawned = spawn(
            Path::new("/bin/grep"),
            &["-E".into(), "^SigBlk:".into(), "/proc/self/status".into()],
            &[],
            dir.path(),
        )
        .unwrap();
        let (text, code) = output(spawned);
        assert_eq!(code, 0, "{text}");
        assert_eq!(
            text.trim(),
            "SigBlk:\t0000000000000000",
            "nothing is blocked"
        );
    }

    #[test]
    fn a_program_that_cannot_run_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let error = spawn(Path::new("/nonexistent/program"), &[], &[], dir.path())
            .err()
            .expect("no such program");
        assert_eq!(error.kind(), io::ErrorKind::NotFound);
        let missing = dir.path().join("gone");
        let error = spawn(Path::new("/bin/true"), &[], &[], &missing)
            .err()
            .expect("no such directory");
        assert_eq!(error.kind(), io::ErrorKind::NotFound);
    }
}
