//! `octet-host completions SHELL` completes: each script is loaded into its shell and
//! asked for candidates as a user's TAB would, after a subcommand too. Bash always;
//! fish and zsh where they are installed (`.ci/run` installs both).

mod support;

use std::process::Command;

/// The completion script of `shell`, from the real binary.
fn script(shell: &str) -> String {
    let output = Command::new(support::octet_binary())
        .args(["completions", shell])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stdout).unwrap()
}

/// The candidates bash offers for `words` (the last one being completed).
fn bash_candidates(script_path: &std::path::Path, words: &[&str]) -> Vec<String> {
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let program = format!(
        "source '{}'\n\
         COMP_WORDS=({})\n\
         COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 ))\n\
         _octet__host octet-host \"${{COMP_WORDS[$COMP_CWORD]}}\" \"${{COMP_WORDS[$COMP_CWORD-1]}}\"\n\
         printf '%s\\n' \"${{COMPREPLY[@]}}\"\n",
        script_path.display(),
        quoted.join(" "),
    );
    candidates("bash", &program)
}

/// Runs `program` in `shell` and returns the first tab-separated field of each line it
/// prints: the candidates, without fish's descriptions.
fn candidates(shell: &str, program: &str) -> Vec<String> {
    let output = Command::new(shell).arg("-c").arg(program).output().unwrap();
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|l| l.split('\t').next().unwrap().to_string())
        .collect()
}

#[test]
fn bash_completes_after_a_subcommand() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("octet-host.bash");
    std::fs::write(&path, script("bash")).unwrap();
    let candidates = bash_candidates(&path, &["octet-host", "ca"]);
    assert_eq!(candidates, vec!["call"]);
    let candidates = bash_candidates(&path, &["octet-host", "call", "--ti"]);
    assert_eq!(candidates, vec!["--timeout"]);
    let candidates = bash_candidates(&path, &["octet-host", "new", "x", "--api", ""]);
    assert!(candidates.contains(&"0.4".to_string()), "{candidates:?}");
    let candidates = bash_candidates(&path, &["octet-host", "completions", ""]);
    for shell in ["bash", "fish", "zsh"] {
        assert!(candidates.contains(&shell.to_string()), "{candidates:?}");
    }
}

#[test]
fn fish_completes_after_a_subcommand_where_fish_is_installed() {
    if Command::new("fish").arg("--version").output().is_err() {
        eprintln!("fish is not installed here: its completion script was not run");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("octet-host.fish");
    std::fs::write(&path, script("fish")).unwrap();
    let complete = |line: &str| -> Vec<String> {
        candidates(
            "fish",
            &format!("source '{}'; complete -C '{line}'", path.display()),
        )
    };
    assert!(complete("octet-host ca").contains(&"call".to_string()));
    let timeout = complete("octet-host call --ti");
    assert!(timeout.contains(&"--timeout".to_string()), "{timeout:?}");
    let shells = complete("octet-host completions ");
    assert!(shells.contains(&"zsh".to_string()), "{shells:?}");
}

/// Drives an interactive zsh in a pseudo-terminal (`zsh/zpty`): the completion script is
/// on `fpath`, `compinit` loads it, and each probe starts a fresh shell, types a line and
/// TAB, then waits for the candidate to appear on the screen. The prompt is spelled so
/// that the echo of the set-up line cannot be mistaken for it (`READ''Y`), and no probe
/// inherits a line editor state from the one before. A probe that never completes is
/// killed by `timeout` after a generous minute, so it fails instead of hanging.
const ZSH_DRIVER: &str = r#"
zmodload zsh/zpty
dir=$1
start() {
  zpty z zsh -f -i
  zpty -w z "PS1='READ''Y> '; fpath=($dir \$fpath); autoload -U compinit; compinit -u -D; setopt nobeep"
  zpty -r z out '*READY> *'
}
start
zpty -w -n z $'octet-host call --ti\t'
zpty -r z out '*--timeout*' && print completed-option
zpty -d z
start
zpty -w -n z $'octet-host completions \t'
zpty -r z out '*powershell*' && print completed-value
zpty -d z
"#;

#[test]
fn zsh_completes_after_a_subcommand_where_zsh_is_installed() {
    if Command::new("zsh").arg("--version").output().is_err() {
        eprintln!("zsh is not installed here: its completion script was not run");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("_octet-host"), script("zsh")).unwrap();
    let driver = dir.path().join("driver.zsh");
    std::fs::write(&driver, ZSH_DRIVER).unwrap();
    let output = Command::new("timeout")
        .args(["60", "zsh", "-f"])
        .arg(&driver)
        .arg(dir.path())
        .output()
        .unwrap();
    let printed = String::from_utf8_lossy(&output.stdout);
    assert!(printed.contains("completed-option"), "{output:?}");
    assert!(printed.contains("completed-value"), "{output:?}");
}
