//! What a newcomer hits first: errors that show the directory problem behind an
//! unknown extension.

mod support;

use std::process::{Command, Stdio};

#[test]
fn an_unknown_extension_shows_the_directory_discovery_could_not_read() {
    let cwd = tempfile::tempdir().unwrap();
    let output = Command::new(support::octet_binary())
        .current_dir(cwd.path())
        .args(["--no-global", "--extension-dir", "./nope", "call", "x", "y"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("no extension named `x` was discovered"),
        "{stderr}"
    );
    assert!(stderr.contains("./nope"), "{stderr}");
    assert!(stderr.contains("No such file or directory"), "{stderr}");
}
