//! Processes never outlive the host's intent: descendants that leave the extension's
//! process group, a host that is killed outright, and the scratch directories it left.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use octet_host::host::CallOptions;
use octet_host::ExtensionHost;
use serde_json::{json, Value};
use support::sidecar::*;
use support::*;

const LIVENESS: Duration = Duration::from_secs(60);

fn read_pid(path: &Path) -> u32 {
    std::fs::read_to_string(path)
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// Kills what a failing test leaves behind.
struct Escapees(Vec<u32>);

impl Drop for Escapees {
    fn drop(&mut self) {
        for &pid in &self.0 {
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        }
    }
}

#[test]
fn descendants_that_leave_the_group_end_with_the_cli() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dir = peer_extension(root.path(), "escaper", "0.2", &["good"], &["echo"]);
    let mut escapees = Escapees(Vec::new());
    for kind in ["setsid", "daemon", "holding-stdout"] {
        let pidfile = root.path().join(format!("{kind}.pid"));
        let arguments = json!({"escape": kind, "pidfile": pidfile}).to_string();
        let output = Command::new(octet_binary())
            .arg("--workspace")
            .arg(workspace.path())
            .arg("--no-global")
            .arg("--extension-dir")
            .arg(&dir)
            .args(["call", "escaper", "echo", &arguments])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{kind}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let pid = read_pid(&pidfile);
        escapees.0.push(pid);
        assert!(
            wait_gone(pid, LIVENESS),
            "the {kind} descendant {pid} outlived the CLI"
        );
    }
}

#[test]
fn descendants_that_leave_the_group_end_with_serve() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dir = peer_extension(root.path(), "escaper", "0.2", &["good"], &["echo"]);
    let mut sidecar = Sidecar::start(workspace.path(), &[dir]);
    start(&mut sidecar, 1, "escaper");
    let mut escapees = Escapees(Vec::new());
    for (i, kind) in ["setsid", "daemon", "holding-stdout"]
        .into_iter()
        .enumerate()
    {
        let pidfile = root.path().join(format!("{kind}.pid"));
        let line = json!({"id": 10 + i, "op": "call", "extension": "escaper", "tool": "echo",
                          "call_id": i, "arguments": {"escape": kind, "pidfile": pidfile}});
        sidecar.send(&line.to_string());
        let result = sidecar.until(|l| l["type"] == "result" && l["call_id"] == i);
        assert_eq!(result["ok"], true, "{result}");
        escapees.0.push(read_pid(&pidfile));
    }
    sidecar.send(r#"{"id":"end","op":"shutdown"}"#);
    sidecar.rest();
    assert_eq!(sidecar.wait(), Some(0));
    for &pid in &escapees.0 {
        assert!(wait_gone(pid, LIVENESS), "descendant {pid} outlived serve");
    }
}

#[test]
fn the_fence_marker_is_set_and_reserved() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dir = peer_extension_with(
        root.path(),
        "marked",
        "0.2",
        &["good"],
        &["echo"],
        "",
        "OCTET_GENERATION_FENCE = \"chosen-by-the-manifest\"",
    );
    let host = host(workspace.path(), &[dir]);
    let ext = host.start("marked").unwrap();
    let out = ext
        .call_tool(
            "echo",
            json!({"env": "OCTET_GENERATION_FENCE"}),
            CallOptions::default(),
        )
        .unwrap();
    let marker: Value = serde_json::from_str(&out.text()).unwrap();
    let marker = marker.as_str().unwrap();
    assert_eq!(marker.len(), 32, "{marker}");
    assert_ne!(marker, "chosen-by-the-manifest");
}

#[test]
fn a_child_started_from_a_short_lived_thread_outlives_that_thread() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dir = peer_extension(root.path(), "lasting", "0.2", &["good"], &["echo"]);
    let host = std::sync::Arc::new(host(workspace.path(), &[dir]));
    let starter = host.clone();
    let ext = std::thread::spawn(move || starter.start("lasting").unwrap())
        .join()
        .unwrap();
    // The parent-death signal follows the spawning thread, which is the dispatcher's,
    // not the caller's that just ended.
    std::thread::sleep(Duration::from_millis(300));
    assert!(process_alive(ext.info().pid));
    let out = ext
        .call_tool("echo", json!({"still": "here"}), CallOptions::default())
        .unwrap();
    assert_eq!(out.text(), r#"{"still":"here"}"#);
}

#[test]
fn a_killed_host_takes_its_children_along_and_its_scratch_is_swept_later() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    // It ignores stdin EOF: only the parent-death signal can end it once serve is gone.
    let dir = peer_extension(root.path(), "lingering", "0.2", &["ignore-eof"], &["echo"]);
    // Without the guardian, the next host is what removes the dead host's scratch.
    let mut sidecar = Sidecar::start_with_args(
        workspace.path(),
        &[dir],
        &[("TMPDIR", tmp.path())],
        &["--no-guardian"],
    );
    let pid = start(&mut sidecar, 1, "lingering");
    let roots = |parent: &Path| -> Vec<PathBuf> {
        std::fs::read_dir(parent)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with("octet-host-")
            })
            .collect()
    };
    let left = roots(tmp.path());
    assert_eq!(left.len(), 1, "{left:?}");
    sidecar.signal(libc::SIGKILL);
    assert_eq!(sidecar.wait(), None, "killed by a signal");
    assert!(
        wait_gone(pid, LIVENESS),
        "extension {pid} outlived its killed host"
    );
    assert!(left[0].exists(), "SIGKILL leaves the scratch root behind");
    // The next host to start sweeps it.
    let next = ExtensionHost::builder(workspace.path())
        .no_global_extensions()
        .scratch_parent(tmp.path())
        .build()
        .unwrap();
    assert!(!left[0].exists(), "the dead host's scratch root was swept");
    assert_eq!(
        roots(tmp.path()).len(),
        1,
        "only the new host's root is left"
    );
    drop(next);
    assert!(roots(tmp.path()).is_empty());
}

#[test]
fn a_killed_serve_takes_every_descendant_and_its_scratch_along_through_its_guardian() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let grandchild_file = root.path().join("grandchild.pid");
    let escapee_file = root.path().join("escapee.pid");
    // A grandchild in the extension's group, started before `initialize`.
    let grandchild_arg = grandchild_file.to_string_lossy().into_owned();
    let dir = peer_extension(
        root.path(),
        "spawner",
        "0.2",
        &["spawn-grandchild", &grandchild_arg],
        &["echo"],
    );
    let mut sidecar = Sidecar::start_with(workspace.path(), &[dir], &[("TMPDIR", tmp.path())]);
    let pid = start(&mut sidecar, 1, "spawner");
    // And an escapee that left the group with `setsid`.
    let arguments = json!({"escape": "setsid", "pidfile": escapee_file});
    sidecar.send(
        &json!({"id": 2, "op": "call", "call_id": "c", "extension": "spawner", "tool": "echo", "arguments": arguments})
            .to_string(),
    );
    sidecar.until(|l| l["type"] == "result" && l["call_id"] == "c");
    let grandchild = read_pid(&grandchild_file);
    let escapee = read_pid(&escapee_file);
    let _cleanup = Escapees(vec![grandchild, escapee]);
    assert!(process_alive(grandchild) && process_alive(escapee));
    let scratch: Vec<PathBuf> = std::fs::read_dir(tmp.path())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(scratch.len(), 1, "{scratch:?}");

    sidecar.signal(libc::SIGKILL);
    assert_eq!(sidecar.wait(), None, "killed by a signal");
    for (what, pid) in [
        ("extension", pid),
        ("grandchild", grandchild),
        ("escapee", escapee),
    ] {
        assert!(
            wait_gone(pid, LIVENESS),
            "the {what} {pid} outlived its killed host"
        );
    }
    eventually("the scratch root removed", || !scratch[0].exists());
}
