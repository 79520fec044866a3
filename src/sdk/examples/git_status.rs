//! `git-status`: a read-only `git status` tool with a renderer and a status line
//! (sections 1.2, 1.6, 1.7).

use std::fmt;
use std::io::ErrorKind;
use std::path::Path;
use std::process::{Command, Stdio};

use serde::Deserialize;
use serde_json::json;

use crate::sdk::{Context, Extension, RenderOutput, RenderSegment, StatusContribution, ToolOutput};

/// Entries listed when the caller does not say (section 1.2's example).
const DEFAULT_MAX_ENTRIES: usize = 80;

/// Most entries a caller may ask for.
const MAX_ENTRIES: usize = 1000;

/// Porcelain v1 status codes of unmerged paths (git-status(1), "Short Format").
const CONFLICT_CODES: [&str; 7] = ["DD", "AU", "UD", "UA", "DU", "AA", "UU"];

/// File counts of a working tree.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Counts {
    pub(super) staged: usize,
    pub(super) modified: usize,
    pub(super) untracked: usize,
    pub(super) ignored: usize,
    pub(super) conflicted: usize,
}

/// A parsed `git status --porcelain=v1 --branch`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Summary {
    pub(super) branch: String,
    pub(super) counts: Counts,
    /// The porcelain lines after the branch line.
    pub(super) entries: Vec<String>,
}

impl Summary {
    /// `clean`, `dirty` or `conflicted` (ignored files do not count).
    pub(super) fn state(&self) -> &'static str {
        let c = &self.counts;
        if c.conflicted > 0 {
            "conflicted"
        } else if c.staged + c.modified + c.untracked > 0 {
            "dirty"
        } else {
            "clean"
        }
    }

    /// `branch=..\nstate=..\ncounts=..`, then at most `max_entries` entries.
    pub(super) fn to_text(&self, max_entries: usize) -> String {
        let c = &self.counts;
        let mut text = format!(
            "branch={}\nstate={}\ncounts=staged:{},modified:{},untracked:{},ignored:{},conflicted:{}",
            self.branch,
            self.state(),
            c.staged,
            c.modified,
            c.untracked,
            c.ignored,
            c.conflicted
        );
        for entry in self.entries.iter().take(max_entries) {
            text.push('\n');
            text.push_str(entry);
        }
        if self.entries.len() > max_entries {
            text.push_str(&format!("\ntruncated={}", self.entries.len() - max_entries));
        }
        text
    }
}

/// Why no summary could be produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum GitError {
    /// No `git` executable on `PATH`.
    NotFound,
    /// The directory is not inside a git work tree.
    NotRepository(String),
    /// git failed otherwise; its stderr.
    Failed(String),
}

impl fmt::Display for GitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GitError::NotFound => f.write_str("git not found on PATH"),
            GitError::NotRepository(dir) => write!(f, "not a git repository: {dir}"),
            GitError::Failed(stderr) => write!(f, "git status failed: {stderr}"),
        }
    }
}

/// Parses porcelain v1 output with a `--branch` header.
pub(super) fn parse(output: &str) -> Summary {
    let mut summary = Summary {
        branch: "HEAD".to_owned(),
        counts: Counts::default(),
        entries: Vec::new(),
    };
    for line in output.lines() {
        if let Some(header) = line.strip_prefix("## ") {
            summary.branch = parse_branch(header);
            continue;
        }
        if line.len() < 3 {
            continue;
        }
        let code = &line[..2];
        let counts = &mut summary.counts;
        match code {
            "??" => counts.untracked += 1,
            "!!" => counts.ignored += 1,
            _ if CONFLICT_CODES.contains(&code) => counts.conflicted += 1,
            _ => {
                let bytes = code.as_bytes();
                if bytes[0] != b' ' {
                    counts.staged += 1;
                }
                if bytes[1] != b' ' {
                    counts.modified += 1;
                }
            }
        }
        summary.entries.push(line.to_owned());
    }
    summary
}

fn parse_branch(header: &str) -> String {
    for prefix in ["No commits yet on ", "Initial commit on "] {
        if let Some(branch) = header.strip_prefix(prefix) {
            return branch.to_owned();
        }
    }
    if header.starts_with("HEAD (no branch)") {
        return "HEAD (detached)".to_owned();
    }
    let name = header.split("...").next().unwrap_or(header);
    name.split(' ').next().unwrap_or(name).to_owned()
}

/// Runs `git status --porcelain=v1 --branch` in `workspace` (the current directory,
/// which the host makes the workspace, when `None`) without taking optional locks.
pub(super) fn status(workspace: Option<&str>, include_ignored: bool) -> Result<Summary, GitError> {
    let dir = Path::new(workspace.unwrap_or("."));
    if !dir.is_dir() {
        return Err(GitError::Failed(format!(
            "the workspace {} is not a directory",
            dir.display()
        )));
    }
    let mut command = Command::new("git");
    command
        .args(["status", "--porcelain=v1", "--branch"])
        .current_dir(dir)
        .env("GIT_OPTIONAL_LOCKS", "0")
        .stdin(Stdio::null());
    if include_ignored {
        command.arg("--ignored");
    }
    let output = match command.output() {
        Ok(output) => output,
        Err(e) if e.kind() == ErrorKind::NotFound => return Err(GitError::NotFound),
        Err(e) => return Err(GitError::Failed(e.to_string())),
    };
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr).trim().to_owned();
        if stderr.contains("not a git repository") {
            return Err(GitError::NotRepository(dir.display().to_string()));
        }
        return Err(GitError::Failed(stderr));
    }
    Ok(parse(&String::from_utf8_lossy(&output.stdout)))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GitStatusArgs {
    #[serde(default)]
    include_ignored: bool,
    #[serde(default = "default_max_entries")]
    max_entries: usize,
}

fn default_max_entries() -> usize {
    DEFAULT_MAX_ENTRIES
}

/// Tool `git_status` {include_ignored?: bool, max_entries?: integer} answering
/// `branch=..\nstate=clean|dirty|conflicted\ncounts=staged:N,modified:N,untracked:N,ignored:N,conflicted:N`
/// plus the porcelain entries (or an `is_error` result: `not a git repository: DIR`,
/// `git not found on PATH`); a renderer for `git_status`; and `status/collect`
/// answering `<branch> · <state>` (nothing outside a repository).
pub fn git_status() -> Extension {
    Extension::new()
        .tool(
            "git_status",
            "Summarize the workspace's git status (read-only)",
            json!({
                "type": "object",
                "properties": {
                    "include_ignored": {"type": "boolean"},
                    "max_entries": {"type": "integer", "minimum": 0, "maximum": MAX_ENTRIES}
                },
                "additionalProperties": false
            }),
            |args: GitStatusArgs, cx: &Context| {
                Ok(match status(cx.workspace(), args.include_ignored) {
                    Ok(summary) => {
                        ToolOutput::text(summary.to_text(args.max_entries.min(MAX_ENTRIES)))
                    }
                    Err(e) => ToolOutput::error(e.to_string()),
                })
            },
        )
        .renderer("git_status", |request, _cx| {
            let output = request.output_text();
            let state = if request.is_error {
                "error"
            } else {
                output
                    .lines()
                    .find_map(|l| l.strip_prefix("state="))
                    .unwrap_or("unknown")
            };
            Ok(RenderOutput::new(vec![
                RenderSegment::styled(
                    format!("git · {state}"),
                    format!("extension.git_tools.{state}"),
                ),
                RenderSegment::plain("\n"),
                RenderSegment::styled(output.clone(), "extension.git_tools.detail"),
            ]))
        })
        .status(|surface, cx| {
            Ok(status(cx.workspace(), false).ok().map(|summary| {
                StatusContribution::new(
                    surface,
                    format!("{} · {}", summary.branch, summary.state()),
                )
                .with_style_role("extension.git_tools.status")
            }))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_branch_headers() {
        assert_eq!(parse_branch("main...origin/main [ahead 1]"), "main");
        assert_eq!(parse_branch("main"), "main");
        assert_eq!(parse_branch("No commits yet on trunk"), "trunk");
        assert_eq!(parse_branch("HEAD (no branch)"), "HEAD (detached)");
    }

    #[test]
    fn counts_each_kind_of_entry() {
        let summary = parse("## main\nM  staged.rs\n M modified.rs\nMM both.rs\n?? new.rs\n!! target/\nUU conflict.rs\n");
        assert_eq!(
            summary.counts,
            Counts {
                staged: 2,
                modified: 2,
                untracked: 1,
                ignored: 1,
                conflicted: 1
            }
        );
        assert_eq!(summary.state(), "conflicted");
        assert_eq!(summary.entries.len(), 6);
        let text = summary.to_text(2);
        assert!(text.starts_with(
            "branch=main\nstate=conflicted\ncounts=staged:2,modified:2,untracked:1,ignored:1,conflicted:1\nM  staged.rs\n M modified.rs\ntruncated=4"
        ), "{text}");
    }

    #[test]
    fn clean_tree_matches_the_reference_output() {
        let summary = parse("## main...origin/main\n");
        assert_eq!(
            summary.to_text(80),
            "branch=main\nstate=clean\ncounts=staged:0,modified:0,untracked:0,ignored:0,conflicted:0"
        );
    }
}
