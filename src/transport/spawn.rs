//! Starting an extension child: resolving `[entrypoint].command` and spawning it
//! without a shell, in a cleared environment, in the workspace, as the leader of a new
//! process group, with all three standard streams piped.

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::fs;
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command, Stdio};

use super::process::ChildProcess;

/// Why an extension child could not be started.
#[derive(Debug)]
#[non_exhaustive]
pub enum SpawnError {
    /// No executable was found for the command.
    NotFound {
        /// The command as the manifest gives it.
        command: String,
        /// Every candidate path that was tried, in order.
        searched: Vec<PathBuf>,
    },
    /// The command names a path that exists but is not an executable regular file.
    NotExecutable {
        /// The path that was checked.
        path: PathBuf,
        /// True when the path is a directory.
        is_dir: bool,
    },
    /// The operating system refused to start the program, or setting up its pipes
    /// failed.
    Io {
        /// The program being started.
        program: PathBuf,
        /// The underlying error.
        error: io::Error,
    },
}

impl fmt::Display for SpawnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SpawnError::NotFound { command, searched } => {
                write!(f, "command `{command}` not found (searched ")?;
                for (i, path) in searched.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{}", path.display())?;
                }
                f.write_str(")")
            }
            SpawnError::NotExecutable { path, is_dir: true } => write!(
                f,
                "{} is a directory, not an executable file",
                path.display()
            ),
            SpawnError::NotExecutable {
                path,
                is_dir: false,
            } => write!(
                f,
                "{} exists but is not executable: chmod +x {}",
                path.display(),
                path.display()
            ),
            SpawnError::Io { program, error } => {
                write!(f, "cannot start {}: {error}", program.display())
            }
        }
    }
}

impl std::error::Error for SpawnError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SpawnError::Io { error, .. } => Some(error),
            _ => None,
        }
    }
}

/// Resolves `[entrypoint].command` to the program to execute (SUPPLEMENT "Manifest").
///
/// - A command containing `/` is a path; a relative one is taken relative to
///   `manifest_dir`. It must be an executable regular file.
/// - A bare name is looked up beside the manifest first (`manifest_dir/<name>`, used
///   only when it is an executable regular file), then in each directory of
///   `path_var` in order. Empty and relative `PATH` entries are skipped: they would
///   depend on the host's current directory.
///
/// Nothing is ever run through a shell. The result is absolute when `manifest_dir` is.
/// `path_var` is normally the `PATH` the child will receive.
pub fn resolve_command(
    command: &str,
    manifest_dir: &Path,
    path_var: Option<&OsStr>,
) -> Result<PathBuf, SpawnError> {
    if command.contains('/') {
        let path = manifest_dir.join(command);
        return match fs::metadata(&path) {
            Err(_) => Err(SpawnError::NotFound {
                command: command.to_string(),
                searched: vec![path],
            }),
            Ok(meta) if is_executable_file(&meta) => Ok(path),
            Ok(meta) => Err(SpawnError::NotExecutable {
                path,
                is_dir: meta.is_dir(),
            }),
        };
    }
    let mut searched = Vec::new();
    // A candidate that exists but cannot be run explains the failure better than
    // "not found" when nothing else matches.
    let mut unusable = None;
    if !command.is_empty() {
        let dirs = std::iter::once(manifest_dir.to_path_buf()).chain(
            path_var
                .map(|p| std::env::split_paths(p).collect::<Vec<_>>())
                .unwrap_or_default()
                .into_iter()
                .filter(|dir| dir.is_absolute()),
        );
        for dir in dirs {
            let candidate = dir.join(command);
            match fs::metadata(&candidate) {
                Ok(meta) if is_executable_file(&meta) => return Ok(candidate),
                Ok(meta) if unusable.is_none() => {
                    unusable = Some(SpawnError::NotExecutable {
                        path: candidate.clone(),
                        is_dir: meta.is_dir(),
                    })
                }
                _ => {}
            }
            searched.push(candidate);
        }
    }
    if let Some(unusable) = unusable {
        return Err(unusable);
    }
    Err(SpawnError::NotFound {
        command: command.to_string(),
        searched,
    })
}

fn is_executable_file(meta: &fs::Metadata) -> bool {
    meta.is_file() && meta.permissions().mode() & 0o111 != 0
}

/// Everything needed to start one extension child.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpawnSpec {
    /// The resolved program (see [`resolve_command`]).
    pub program: PathBuf,
    /// Arguments, passed as they are.
    pub args: Vec<String>,
    /// The complete environment (see [`super::env::child_environment`]).
    pub env: Vec<(OsString, OsString)>,
    /// The working directory: the workspace.
    pub cwd: PathBuf,
}

/// A child just started by [`spawn`], with the host's ends of its three pipes.
///
/// The pipe ends are non-blocking and close-on-exec. Each end is its own open file
/// description, so `O_NONBLOCK` here does not affect the child's ends, which stay
/// blocking as the child expects.
///
/// This type does not kill anything when dropped: move `child` into a
/// [`ChildProcess`] right away ([`SpawnedChild::into_process`] after taking the
/// pipes), which does.
#[derive(Debug)]
pub struct SpawnedChild {
    /// The child's pid, which is also its process-group id.
    pub pid: u32,
    /// The child; its own `stdin`/`stdout`/`stderr` fields are empty (moved below).
    pub child: Child,
    /// The write end of the child's stdin, until taken.
    pub stdin: Option<ChildStdin>,
    /// The read end of the child's stdout, until taken.
    pub stdout: Option<ChildStdout>,
    /// The read end of the child's stderr, until taken.
    pub stderr: Option<ChildStderr>,
}

impl SpawnedChild {
    /// Hands the process over to a [`ChildProcess`], which kills and reaps its group
    /// when dropped. Pipes not taken yet are closed.
    pub fn into_process(self) -> ChildProcess {
        ChildProcess::new(self.child)
    }
}

/// Starts the child described by `spec`: cleared environment plus `spec.env`,
/// `spec.cwd` as working directory, stdin, stdout and stderr piped, and
/// `process_group(0)` so the child leads a new process group whose id is its pid.
///
/// `spec.program` is made absolute first, because a relative program path combined
/// with a different working directory is resolved inconsistently across platforms.
///
/// On Linux the child also gets `PR_SET_PDEATHSIG(SIGKILL)`: when the host dies, even
/// by SIGKILL, the kernel kills the child. The signal fires when the *thread* that
/// spawned the child exits, not the process, so call this only from a thread that
/// lives as long as the host (the host spawns from its dispatcher thread). A host that
/// already died between the fork and the `prctl` is noticed, and the child exits.
pub fn spawn(spec: &SpawnSpec) -> Result<SpawnedChild, SpawnError> {
    let program = std::path::absolute(&spec.program).map_err(|error| SpawnError::Io {
        program: spec.program.clone(),
        error,
    })?;
    let io_error = |error| SpawnError::Io {
        program: program.clone(),
        error,
    };
    let mut command = Command::new(&program);
    command
        .args(&spec.args)
        .env_clear()
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .current_dir(&spec.cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    #[cfg(target_os = "linux")]
    die_with_the_host(&mut command);
    let mut child = command.spawn().map_err(io_error)?;
    let pid = child.id();
    let stdin = child.stdin.take();
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let prepared = [
        stdin.as_ref().map(AsRawFd::as_raw_fd),
        stdout.as_ref().map(AsRawFd::as_raw_fd),
        stderr.as_ref().map(AsRawFd::as_raw_fd),
    ]
    .into_iter()
    .flatten()
    .try_for_each(set_nonblocking_cloexec);
    let spawned = SpawnedChild {
        pid,
        child,
        stdin,
        stdout,
        stderr,
    };
    if let Err(error) = prepared {
        // Do not leave a child running that nobody will ever talk to.
        drop(spawned.into_process());
        return Err(io_error(error));
    }
    Ok(spawned)
}

/// Makes the child get SIGKILL when the spawning thread of the host ends.
#[cfg(target_os = "linux")]
fn die_with_the_host(command: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: getpid has no preconditions.
    let host = unsafe { libc::getpid() };
    // SAFETY: the closure runs in the child between fork and exec and calls only
    // async-signal-safe functions (prctl, getppid); it allocates nothing.
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 {
                return Err(io::Error::last_os_error());
            }
            // The host died before the prctl took effect: the signal will never come.
            if libc::getppid() != host {
                return Err(io::Error::new(
                    io::ErrorKind::BrokenPipe,
                    "the host exited while the extension was starting",
                ));
            }
            Ok(())
        });
    }
}

/// Sets `O_NONBLOCK` and `FD_CLOEXEC` on `fd`. std already creates its pipes
/// close-on-exec; setting it again states the requirement (no other child may inherit
/// the host's pipe ends) rather than relying on it.
fn set_nonblocking_cloexec(fd: RawFd) -> io::Result<()> {
    // SAFETY: fcntl with these commands only reads and writes the flags of `fd`, an
    // open descriptor owned by the caller.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags < 0 || libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) < 0 {
            return Err(io::Error::last_os_error());
        }
        let fd_flags = libc::fcntl(fd, libc::F_GETFD);
        if fd_flags < 0 || libc::fcntl(fd, libc::F_SETFD, fd_flags | libc::FD_CLOEXEC) < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}
