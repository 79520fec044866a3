//! The demo's temporary world: a workspace (a real git repository when `git` is
//! available) and manifests whose entrypoint is this very binary.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use tempfile::TempDir;
use toml::{Table, Value};

/// The file committed in the demo repository and then modified.
const TRACKED_FILE: &str = "README.md";

/// The branch the demo repository is created on.
const BRANCH: &str = "main";

/// One bundled example as the demo declares it.
pub(super) struct Example {
    /// The manifest name.
    pub name: &'static str,
    /// The bundled example it runs (`__extension <program>`).
    pub program: &'static str,
    /// The API version the manifest selects.
    pub api: &'static str,
    /// The manifest description.
    pub description: &'static str,
    /// `[capabilities]`.
    pub capabilities: fn() -> Table,
    /// `[contributes]`.
    pub contributes: fn() -> Table,
}

/// hello-world on API 0.1, git-status and checkpoint on API 0.4.
pub(super) const EXAMPLES: [Example; 3] = [
    Example {
        name: "hello-world",
        program: "hello-world",
        api: "0.1",
        description: "Greets from an executable extension (the reference's running example)",
        capabilities: no_capabilities,
        contributes: hello_world_contributes,
    },
    Example {
        name: "git-status",
        program: "git-status",
        api: "0.4",
        description: "A read-only git status tool with a renderer and a status line",
        capabilities: runs_git,
        contributes: git_status_contributes,
    },
    Example {
        name: "checkpoint",
        program: "checkpoint",
        api: "0.4",
        description: "Read-only checkpoint previews, a before_prompt hook and prompt context",
        capabilities: runs_git,
        contributes: checkpoint_contributes,
    },
];

/// The test-extension fixture's manifest name (crash and restart).
pub(super) const TEST_EXTENSION: &str = "test-extension";

/// The showcase example's manifest name (host services).
pub(super) const SHOWCASE: &str = "showcase";

/// The notes example's manifest name (Wave-1 services).
pub(super) const NOTES: &str = "notes";

/// The session and frontend services example, on API 0.4.
pub(super) const TURNS: &str = "turns";

/// The child agent sessions example, on API 0.2.
pub(super) const DELEGATE: &str = "delegate";

/// The tool composition example, on API 0.4.
pub(super) const COMPOSE: &str = "compose";

/// The resource refs example, on API 0.4.
pub(super) const CIRCUITS: &str = "circuits";

/// hello-world's second manifest, on the API 0.3 canonical wire.
pub(super) const CANONICAL: &str = "hello-canonical";

/// The examples of the later sections, each started there: the test-extension fixture
/// and showcase on API 0.4, and hello-world once more on API 0.3.
pub(super) const MORE_EXAMPLES: [Example; 8] = [
    Example {
        name: TEST_EXTENSION,
        program: "test-extension",
        api: "0.4",
        description: "The kitchen-sink fixture; its crash tool exits mid-call",
        capabilities: no_capabilities,
        contributes: test_extension_contributes,
    },
    Example {
        name: SHOWCASE,
        program: "showcase",
        api: "0.4",
        description: "Artifacts, dynamic tools, presentation and policy from one tool",
        capabilities: no_capabilities,
        contributes: showcase_contributes,
    },
    Example {
        name: CANONICAL,
        program: "hello-canonical",
        api: "0.3",
        description: "hello-world on the API 0.3 canonical wire, its tool hello_canonical",
        capabilities: no_capabilities,
        contributes: canonical_contributes,
    },
    Example {
        name: NOTES,
        program: "notes",
        api: "0.2",
        description: "The composer, session entries and a shortcut, bound by the demo",
        capabilities: no_capabilities,
        contributes: notes_contributes,
    },
    Example {
        name: TURNS,
        program: "turns",
        api: "0.4",
        description: "Model-turn hooks with a private lane, the terminal, autocomplete",
        capabilities: no_capabilities,
        contributes: turns_contributes,
    },
    Example {
        name: DELEGATE,
        program: "delegate",
        api: "0.2",
        description: "A tool that runs its task in a child agent session",
        capabilities: no_capabilities,
        contributes: delegate_contributes,
    },
    Example {
        name: COMPOSE,
        program: "compose",
        api: "0.4",
        description: "A tool that calls other extensions' tools through the host",
        capabilities: no_capabilities,
        contributes: compose_contributes,
    },
    Example {
        name: CIRCUITS,
        program: "circuits",
        api: "0.4",
        description: "Native circuits that stay in the extension, passed on as resource refs",
        capabilities: no_capabilities,
        contributes: circuits_contributes,
    },
];

/// The deliberately broken manifest's directory name.
pub(super) const BROKEN: &str = "broken-example";

fn strings(items: &[&str]) -> Value {
    Value::Array(items.iter().map(|s| Value::from(*s)).collect())
}

fn no_capabilities() -> Table {
    Table::new()
}

fn runs_git() -> Table {
    let mut t = Table::new();
    t.insert("filesystem".into(), "workspace".into());
    t.insert("process".into(), true.into());
    t
}

fn hello_world_contributes() -> Table {
    let mut t = Table::new();
    t.insert("tools".into(), strings(&["hello_world"]));
    t.insert("commands".into(), strings(&["hello"]));
    t.insert("tool_renderers".into(), strings(&["hello_world"]));
    t.insert(
        "hooks".into(),
        strings(&["before_prompt", "after_response"]),
    );
    t.insert("ui".into(), strings(&["status"]));
    t.insert("context".into(), true.into());
    t.insert("notifications".into(), true.into());
    t
}

fn git_status_contributes() -> Table {
    let mut t = Table::new();
    t.insert("tools".into(), strings(&["git_status"]));
    t.insert("tool_renderers".into(), strings(&["git_status"]));
    t.insert("ui".into(), strings(&["status"]));
    t
}

fn checkpoint_contributes() -> Table {
    let mut t = Table::new();
    t.insert("commands".into(), strings(&["checkpoint"]));
    t.insert("hooks".into(), strings(&["before_prompt"]));
    t.insert("context".into(), true.into());
    t.insert("notifications".into(), true.into());
    t
}

fn test_extension_contributes() -> Table {
    let mut t = Table::new();
    t.insert(
        "tools".into(),
        strings(&[
            "echo", "sleep", "progress", "confirm", "ask", "notify", "crash", "big", "fail",
            "panic", "env", "events",
        ]),
    );
    t.insert("commands".into(), strings(&["fixture"]));
    t.insert("hooks".into(), strings(&["before_prompt"]));
    t.insert("context".into(), true.into());
    t.insert("ui".into(), strings(&["status"]));
    t.insert("tool_renderers".into(), strings(&["echo"]));
    t.insert("notifications".into(), true.into());
    t.insert("confirmations".into(), true.into());
    t
}

fn showcase_contributes() -> Table {
    let mut t = Table::new();
    t.insert("tools".into(), strings(&["snapshot"]));
    t.insert("presentation".into(), true.into());
    t
}

fn notes_contributes() -> Table {
    let mut t = Table::new();
    t.insert("tools".into(), strings(&["save_draft"]));
    t.insert("notifications".into(), true.into());
    t
}

fn turns_contributes() -> Table {
    let mut t = Table::new();
    t.insert("tools".into(), strings(&["fullscreen", "wait_idle"]));
    t.insert(
        "hooks".into(),
        strings(&["model_turn_start", "model_turn_end"]),
    );
    t
}

fn delegate_contributes() -> Table {
    let mut t = Table::new();
    t.insert("tools".into(), strings(&["delegate", "observe"]));
    t
}

fn compose_contributes() -> Table {
    let mut t = Table::new();
    t.insert("tools".into(), strings(&["survey", "repeat", "read_blob"]));
    t
}

fn circuits_contributes() -> Table {
    let mut t = Table::new();
    t.insert(
        "tools".into(),
        strings(&["build_circuit", "simulate", "export_netlist", "scrap"]),
    );
    t
}

fn canonical_contributes() -> Table {
    let mut t = Table::new();
    t.insert("tools".into(), strings(&["hello_canonical"]));
    t
}

/// What the workspace turned out to be.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum WorkspaceKind {
    /// A git repository on [`BRANCH`] with one commit and one modified file.
    Git,
    /// A plain directory, because git is missing or failed.
    Plain {
        /// Why git was not used.
        reason: String,
    },
}

/// The temporary directories; everything is removed on drop.
pub(super) struct DemoWorld {
    root: TempDir,
    /// The workspace.
    pub workspace: PathBuf,
    /// What the workspace is.
    pub kind: WorkspaceKind,
    /// One explicit extension directory per example, then the broken one.
    pub extension_dirs: Vec<PathBuf>,
}

impl DemoWorld {
    /// Creates the workspace and writes every manifest, with `program` as the
    /// entrypoint.
    pub(super) fn create(program: &Path) -> io::Result<DemoWorld> {
        let root = tempfile::Builder::new().prefix("octet-demo-").tempdir()?;
        let workspace = root.path().join("workspace");
        fs::create_dir(&workspace)?;
        let kind = match git_workspace(&workspace) {
            Ok(()) => WorkspaceKind::Git,
            Err(reason) => {
                fs::write(workspace.join(TRACKED_FILE), "# Demo workspace\n")?;
                WorkspaceKind::Plain { reason }
            }
        };
        let extensions = root.path().join("extensions");
        let mut extension_dirs = Vec::new();
        for example in EXAMPLES.iter().chain(&MORE_EXAMPLES) {
            extension_dirs.push(write_manifest(
                &extensions,
                example.name,
                &manifest(example, program),
            )?);
        }
        extension_dirs.push(write_manifest(&extensions, BROKEN, BROKEN_MANIFEST)?);
        Ok(DemoWorld {
            root,
            workspace,
            kind,
            extension_dirs,
        })
    }

    /// The temporary root holding everything.
    pub(super) fn root(&self) -> &Path {
        self.root.path()
    }
}

/// The manifest of `example`, run as `<program> __extension <name>`.
fn manifest(example: &Example, program: &Path) -> String {
    let mut entrypoint = Table::new();
    entrypoint.insert(
        "command".into(),
        program.to_string_lossy().into_owned().into(),
    );
    entrypoint.insert("args".into(), strings(&["__extension", example.program]));
    let mut t = Table::new();
    t.insert("name".into(), example.name.into());
    t.insert("version".into(), "0.1.0".into());
    t.insert("api_version".into(), example.api.into());
    t.insert("description".into(), example.description.into());
    t.insert("entrypoint".into(), Value::Table(entrypoint));
    t.insert(
        "capabilities".into(),
        Value::Table((example.capabilities)()),
    );
    t.insert("contributes".into(), Value::Table((example.contributes)()));
    toml::to_string(&t).unwrap_or_default()
}

/// A manifest with a key `[contributes]` does not define, to show that a bad manifest
/// is a diagnostic for that entry only. Nothing ever runs it.
const BROKEN_MANIFEST: &str = r#"name = "broken-example"
version = "0.1.0"
api_version = "0.4"
description = "Deliberately broken: an unknown key in [contributes]"

[entrypoint]
command = "octet-host"

[contributes]
commands = ["broken"]
sandbox = true
"#;

fn write_manifest(root: &Path, name: &str, text: &str) -> io::Result<PathBuf> {
    let dir = root.join(name);
    fs::create_dir_all(&dir)?;
    fs::write(dir.join(crate::manifest::MANIFEST_FILE_NAME), text)?;
    Ok(dir)
}

/// `git init`, one commit of [`TRACKED_FILE`], then a modification of it. Isolated
/// from the person's git configuration, hooks and signing setup.
fn git_workspace(dir: &Path) -> Result<(), String> {
    git(dir, &["init", "-q"])?;
    git(
        dir,
        &["symbolic-ref", "HEAD", &format!("refs/heads/{BRANCH}")],
    )?;
    fs::write(dir.join(TRACKED_FILE), "# Demo workspace\n").map_err(|e| e.to_string())?;
    git(dir, &["add", TRACKED_FILE])?;
    git(
        dir,
        &[
            "-c",
            "user.name=octet demo",
            "-c",
            "user.email=demo@octet.invalid",
            "-c",
            "commit.gpgsign=false",
            "-c",
            "core.hooksPath=/dev/null",
            "commit",
            "-q",
            "-m",
            "Initial commit",
        ],
    )?;
    fs::write(
        dir.join(TRACKED_FILE),
        "# Demo workspace\n\nAn uncommitted change.\n",
    )
    .map_err(|e| e.to_string())
}

fn git(dir: &Path, args: &[&str]) -> Result<(), String> {
    let output = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .stdin(Stdio::null())
        .output();
    match output {
        Ok(output) if output.status.success() => Ok(()),
        Ok(output) => Err(format!(
            "git {} failed: {}",
            args.last().copied().unwrap_or(""),
            String::from_utf8_lossy(&output.stderr).trim()
        )),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Err("git not found on PATH".into()),
        Err(e) => Err(format!("cannot run git: {e}")),
    }
}
