//! Spawning: environment, working directory, process group, scratch directory and
//! command resolution.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

use octet_host::manifest::{
    ApiVersion, Capabilities, Contributes, Entrypoint, LocatedManifest, Manifest, Source,
};
use octet_host::transport::{
    child_environment, resolve_command, spawn, ScratchDir, SpawnError, SpawnSpec,
};
use serde_json::Value;

use super::support::*;

fn located(dir: &Path) -> LocatedManifest {
    LocatedManifest {
        manifest: Manifest {
            name: "env-probe".into(),
            version: semver::Version::new(1, 2, 3),
            api_version: ApiVersion::V0_2,
            requires_octet: None,
            description: None,
            entrypoint: Entrypoint {
                command: "python3".into(),
                args: vec![],
                env: BTreeMap::from([("EXTRA_VAR".to_string(), "from manifest".to_string())]),
            },
            capabilities: Capabilities {
                environment: vec!["SSH_AUTH_SOCK".into()],
                ..Capabilities::default()
            },
            contributes: Contributes::default(),
        },
        manifest_path: dir.join("extension.toml"),
        dir: dir.to_path_buf(),
        source: Source::Explicit,
    }
}

/// Runs `report_env.py` as the extension of `located`, in `workspace`, and returns its
/// report plus the child's pid.
fn report(spec: &SpawnSpec) -> (Value, u32) {
    let running = start(spec);
    let pid = running.process.pid();
    let outcome = running.read_until_closed();
    let params = outcome
        .seen
        .iter()
        .find_map(|s| notification(s).filter(|(m, _)| *m == "report"))
        .map(|(_, p)| p.clone())
        .expect("a report notification");
    let (mut process, _) = running.stop_and_join();
    assert!(process.finish().expect("finish").success());
    (params, pid)
}

#[test]
fn child_environment_is_sanitized_in_a_real_child() {
    let ext_dir = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let scratch = ScratchDir::new().unwrap();
    let located = located(ext_dir.path());
    let host_env = |name: &str| -> Option<OsString> {
        match name {
            "PATH" => host_path(),
            "HOME" => Some("/home/probe".into()),
            "SSH_AUTH_SOCK" => Some("/tmp/agent.sock".into()),
            "AWS_SECRET_ACCESS_KEY" => Some("do-not-leak".into()),
            "GITHUB_TOKEN" => Some("do-not-leak".into()),
            _ => None,
        }
    };
    let env = child_environment(&located, workspace.path(), scratch.path(), &host_env);
    let mut spec = python_spec("report_env.py", &[], workspace.path());
    spec.env = env;
    let (report, _) = report(&spec);

    let env: BTreeMap<String, String> =
        serde_json::from_value(report["env"].clone()).expect("env is a string map");
    let keys: BTreeSet<&str> = env.keys().map(String::as_str).collect();
    let mut expected = BTreeSet::from([
        "HOME",
        "SSH_AUTH_SOCK",
        "EXTRA_VAR",
        "OCTET_EXTENSION_API_VERSION",
        "OCTET_EXTENSION_NAME",
        "OCTET_EXTENSION_DIR",
        "OCTET_EXTENSION_MANIFEST",
        "OCTET_WORKSPACE",
        "OCTET_EXTENSION_SCRATCH",
    ]);
    if host_path().is_some() {
        expected.insert("PATH");
    }
    // Nothing of the test process's own environment (CARGO_*, RUST_*, ...) and no
    // secret reaches the child.
    assert_eq!(keys, expected);
    assert!(env.values().all(|v| v != "do-not-leak"));
    assert_eq!(env["HOME"], "/home/probe");
    assert_eq!(env["SSH_AUTH_SOCK"], "/tmp/agent.sock");
    assert_eq!(env["EXTRA_VAR"], "from manifest");
    assert_eq!(env["OCTET_EXTENSION_API_VERSION"], "0.2");
    assert_eq!(env["OCTET_EXTENSION_NAME"], "env-probe");
    assert_eq!(Path::new(&env["OCTET_EXTENSION_DIR"]), ext_dir.path());
    assert_eq!(
        Path::new(&env["OCTET_EXTENSION_MANIFEST"]),
        ext_dir.path().join("extension.toml")
    );
    assert_eq!(Path::new(&env["OCTET_WORKSPACE"]), workspace.path());
    assert_eq!(Path::new(&env["OCTET_EXTENSION_SCRATCH"]), scratch.path());
}

#[test]
fn child_runs_in_the_workspace_and_leads_its_own_process_group() {
    let workspace = tempfile::tempdir().unwrap();
    let (report, pid) = report(&python_spec(
        "report_env.py",
        &["a b", "$HOME"],
        workspace.path(),
    ));
    assert_eq!(
        fs::canonicalize(report["cwd"].as_str().unwrap()).unwrap(),
        fs::canonicalize(workspace.path()).unwrap()
    );
    assert_eq!(report["pid"], u64::from(pid));
    assert_eq!(report["pgid"], u64::from(pid), "the child leads its group");
    // SAFETY: getpgrp has no preconditions.
    let own_group = unsafe { libc::getpgrp() };
    assert_ne!(report["pgid"], i64::from(own_group));
    assert_eq!(
        report["args"],
        serde_json::json!(["a b", "$HOME"]),
        "no shell"
    );
}

#[test]
fn scratch_dir_is_private_usable_by_the_child_and_removed() {
    let scratch = ScratchDir::new().unwrap();
    let path = scratch.path().to_path_buf();
    let meta = fs::symlink_metadata(&path).unwrap();
    assert!(meta.is_dir());
    assert_eq!(meta.mode() & 0o7777, 0o700);
    // SAFETY: geteuid has no preconditions.
    assert_eq!(meta.uid(), unsafe { libc::geteuid() });

    let mut spec = command_spec(
        "sh",
        &["-c", r#"echo hi > "$OCTET_EXTENSION_SCRATCH/note""#],
        &path,
    );
    spec.env
        .push(("OCTET_EXTENSION_SCRATCH".into(), path.clone().into()));
    let running = start(&spec);
    running.read_until_closed();
    let (mut process, _) = running.stop_and_join();
    assert!(process.finish().unwrap().success());
    assert_eq!(fs::read_to_string(path.join("note")).unwrap(), "hi\n");

    drop(scratch);
    assert!(!path.exists(), "the scratch directory is removed on drop");
}

fn write_executable(path: &Path, mode: u32) {
    fs::write(path, "#!/bin/sh\nexit 0\n").unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
}

#[test]
fn resolve_command_prefers_the_manifest_dir_then_path() {
    let ext = tempfile::tempdir().unwrap();
    let bin = tempfile::tempdir().unwrap();
    write_executable(&ext.path().join("tool"), 0o755);
    write_executable(&bin.path().join("tool"), 0o755);
    write_executable(&bin.path().join("only-on-path"), 0o755);
    // Beside the manifest but not executable: skipped for a bare name.
    write_executable(&ext.path().join("plain"), 0o644);
    write_executable(&bin.path().join("plain"), 0o755);
    // A directory beside the manifest is not a command either.
    fs::create_dir(ext.path().join("dir-named")).unwrap();
    write_executable(&bin.path().join("dir-named"), 0o755);
    let path_var =
        std::env::join_paths(["", "relative/bin", bin.path().to_str().unwrap()]).unwrap();
    let resolve = |command: &str| resolve_command(command, ext.path(), Some(&path_var));

    assert_eq!(resolve("tool").unwrap(), ext.path().join("tool"));
    assert_eq!(
        resolve("only-on-path").unwrap(),
        bin.path().join("only-on-path")
    );
    assert_eq!(resolve("plain").unwrap(), bin.path().join("plain"));
    assert_eq!(resolve("dir-named").unwrap(), bin.path().join("dir-named"));

    match resolve("missing") {
        Err(SpawnError::NotFound { command, searched }) => {
            assert_eq!(command, "missing");
            // Empty and relative PATH entries are never searched.
            assert_eq!(
                searched,
                vec![ext.path().join("missing"), bin.path().join("missing")]
            );
        }
        other => panic!("expected NotFound, got {other:?}"),
    }
    assert!(matches!(
        resolve_command("tool", ext.path(), None),
        Ok(p) if p == ext.path().join("tool")
    ));
}

#[test]
fn resolve_command_treats_slashes_as_paths_relative_to_the_manifest() {
    let ext = tempfile::tempdir().unwrap();
    fs::create_dir(ext.path().join("bin")).unwrap();
    write_executable(&ext.path().join("bin/run"), 0o700);
    write_executable(&ext.path().join("bin/data"), 0o600);
    let path_var = host_path();
    let resolve = |command: &str| resolve_command(command, ext.path(), path_var.as_deref());

    assert_eq!(resolve("bin/run").unwrap(), ext.path().join("bin/run"));
    assert_eq!(resolve("./bin/run").unwrap(), ext.path().join("./bin/run"));
    let absolute = ext.path().join("bin/run");
    assert_eq!(resolve(absolute.to_str().unwrap()).unwrap(), absolute);
    let data = resolve("bin/data").unwrap_err();
    assert!(matches!(
        &data,
        SpawnError::NotExecutable { path, is_dir: false } if *path == ext.path().join("bin/data")
    ));
    assert!(
        data.to_string()
            .contains("exists but is not executable: chmod +x"),
        "{data}"
    );
    let dir = resolve("./bin").unwrap_err();
    assert!(
        matches!(&dir, SpawnError::NotExecutable { is_dir: true, .. }),
        "{dir:?}"
    );
    assert!(dir.to_string().contains("is a directory"), "{dir}");
    // A bare name beside the manifest that cannot run says so, not "not found".
    assert!(matches!(
        resolve("bin"),
        Err(SpawnError::NotExecutable { is_dir: true, .. })
    ));
    fs::write(ext.path().join("run.py"), "print()").unwrap();
    assert!(matches!(
        resolve("run.py"),
        Err(SpawnError::NotExecutable { path, is_dir: false }) if path == ext.path().join("run.py")
    ));
    // A path is never looked up through PATH, even when PATH has the name.
    assert!(matches!(
        resolve("./sh"),
        Err(SpawnError::NotFound { searched, .. }) if searched == vec![ext.path().join("./sh")]
    ));
}

#[test]
fn spawn_reports_a_program_that_cannot_start() {
    let dir = tempfile::tempdir().unwrap();
    let spec = SpawnSpec {
        program: dir.path().join("does-not-exist"),
        args: vec![],
        env: vec![],
        cwd: dir.path().to_path_buf(),
    };
    match spawn(&spec) {
        Err(SpawnError::Io { program, error }) => {
            assert_eq!(program, dir.path().join("does-not-exist"));
            assert_eq!(error.kind(), std::io::ErrorKind::NotFound);
        }
        other => panic!("expected Io, got {other:?}"),
    }
}

#[test]
fn spawned_pipes_are_nonblocking_and_close_on_exec() {
    use std::os::fd::AsRawFd;
    let dir = tempfile::tempdir().unwrap();
    let child = spawn(&command_spec("cat", &[], dir.path())).unwrap();
    let fds = [
        child.stdin.as_ref().unwrap().as_raw_fd(),
        child.stdout.as_ref().unwrap().as_raw_fd(),
        child.stderr.as_ref().unwrap().as_raw_fd(),
    ];
    for fd in fds {
        // SAFETY: F_GETFL/F_GETFD only read the flags of an open descriptor.
        let (fl, fd_flags) = unsafe {
            (
                libc::fcntl(fd, libc::F_GETFL),
                libc::fcntl(fd, libc::F_GETFD),
            )
        };
        assert_ne!(fl & libc::O_NONBLOCK, 0);
        assert_ne!(fd_flags & libc::FD_CLOEXEC, 0);
    }
    let mut process = child.into_process();
    // cat sees EOF (its pipes were closed with the SpawnedChild) and exits.
    assert!(process.wait_exited_timeout(LIVENESS).unwrap());
    assert!(process.finish().unwrap().success());
}
