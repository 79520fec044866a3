//! Starting an extension child: resolving `[entrypoint].command` and spawning it
//! without a shell, in a cleared environment, in the workspace, as the leader of a new
//! process group, with all three standard streams piped.

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::fs;
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{ChildStderr, ChildStdin, ChildStdout};
#[cfg(not(target_os = "linux"))]
use std::process::{Command, Stdio};

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
/// Dropping it kills the child's group and reaps it, like its [`ChildProcess`]
/// ([`SpawnedChild::into_process`], after taking the pipes).
#[derive(Debug)]
pub struct SpawnedChild {
    /// The child's pid, which is also its process-group id.
    pub pid: u32,
    /// The child's process, in charge of killing and reaping it.
    process: ChildProcess,
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
        self.process
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
/// lives as long as the host (the host spawns from its launcher thread). A host that
/// already died between the clone and the `prctl` is noticed, and the child exits. It
/// is spawned the way `posix_spawn` does (`transport::vfork`), never with a `fork` of the
/// whole host.
pub fn spawn(spec: &SpawnSpec) -> Result<SpawnedChild, SpawnError> {
    let program = std::path::absolute(&spec.program).map_err(|error| SpawnError::Io {
        program: spec.program.clone(),
        error,
    })?;
    let io_error = |error| SpawnError::Io {
        program: program.clone(),
        error,
    };
    #[cfg(target_os = "linux")]
    let (pid, stdin, stdout, stderr) = {
        let spawned =
            super::vfork::spawn(&program, &spec.args, &spec.env, &spec.cwd).map_err(io_error)?;
        (
            spawned.pid,
            Some(ChildStdin::from(spawned.stdin)),
            Some(ChildStdout::from(spawned.stdout)),
            Some(ChildStderr::from(spawned.stderr)),
        )
    };
    #[cfg(not(target_os = "linux"))]
    let (pid, stdin, stdout, stderr) = spawn_std(spec, &program).map_err(io_error)?;
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
        process: ChildProcess::from_pid(pid),
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

/// The child's pid and host pipe ends.
#[cfg(not(target_os = "linux"))]
type StdSpawned = (
    u32,
    Option<ChildStdin>,
    Option<ChildStdout>,
    Option<ChildStderr>,
);

/// Outside Linux there is no parent-death signal: `Command` spawns the child.
#[cfg(not(target_os = "linux"))]
fn spawn_std(spec: &SpawnSpec, program: &Path) -> io::Result<StdSpawned> {
    use std::os::unix::process::CommandExt;
    let mut command = Command::new(program);
    command
        .args(&spec.args)
        .env_clear()
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .current_dir(&spec.cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = command.spawn()?;
    // Dropping a `Child` neither kills nor reaps it: the `ChildProcess` does both.
    Ok((
        child.id(),
        child.stdin.take(),
        child.stdout.take(),
        child.stderr.take(),
    ))
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
