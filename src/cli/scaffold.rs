//! `new NAME`: a working extension directory to start from, and `completions SHELL`.

use std::path::{Path, PathBuf};

use clap::{Args, CommandFactory, ValueEnum};

use super::error::CliError;
use super::output::Report;
use crate::manifest::rules::check_contribution_name;

/// The languages `new` writes an entrypoint in.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub(crate) enum Language {
    /// A stdlib-only Python 3 script.
    Python,
    /// A Rust crate on the `octet-host` SDK.
    Rust,
}

/// Arguments of `new`.
#[derive(Debug, Args)]
pub(crate) struct NewArgs {
    /// The extension's name (also its directory's): a letter, then letters, digits, `-`
    /// or `_`
    name: String,
    /// The API version of the manifest
    #[arg(long, default_value = "0.2", value_parser = ["0.1", "0.2", "0.4"])]
    api: String,
    /// The language of the entrypoint
    #[arg(long, value_enum, default_value_t = Language::Python)]
    lang: Language,
    /// Where to create the directory [default: the current directory]
    #[arg(long, value_name = "DIR")]
    into: Option<PathBuf>,
}

/// Runs `new`.
pub(crate) fn run_new(args: &NewArgs) -> Result<Report, CliError> {
    if let Err(rule) = check_contribution_name(&args.name) {
        return Err(CliError::Usage {
            message: format!("`{}` cannot name an extension: {rule}", args.name),
        });
    }
    let parent = match &args.into {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().map_err(CliError::Host)?,
    };
    let dir = parent.join(&args.name);
    if dir.exists() {
        return Err(CliError::Usage {
            message: format!("{} exists already; choose another name", dir.display()),
        });
    }
    let write = |path: &Path, text: &str| std::fs::write(path, text).map_err(CliError::Host);
    std::fs::create_dir_all(&dir).map_err(CliError::Host)?;
    let tool = args.name.replace('-', "_");
    let (command, entry_args) = match args.lang {
        Language::Python => {
            let script = dir.join("extension.py");
            write(&script, &python_entrypoint(&tool))?;
            make_executable(&script)?;
            ("extension.py".to_string(), Vec::<String>::new())
        }
        Language::Rust => {
            std::fs::create_dir_all(dir.join("src")).map_err(CliError::Host)?;
            let dir = std::path::absolute(&dir).map_err(CliError::Host)?;
            write(&dir.join("Cargo.toml"), &rust_cargo_toml(&args.name, &dir))?;
            write(&dir.join("src/main.rs"), &rust_main(&tool))?;
            // The prebuilt binary, beside the manifest: starting it never waits for a
            // compile, and no path in the manifest is this machine's.
            (format!("target/release/{}", args.name), Vec::new())
        }
    };
    let args_toml: Vec<String> = entry_args.iter().map(|a| format!("{a:?}")).collect();
    write(
        &dir.join("extension.toml"),
        &format!(
            "name = {name:?}\nversion = \"0.1.0\"\napi_version = {api:?}\n\
             description = \"Says hello\"\n\n[entrypoint]\ncommand = {command:?}\n\
             args = [{args}]\n\n[contributes]\ntools = [{tool:?}]\n",
            name = args.name,
            api = args.api,
            args = args_toml.join(", "),
        ),
    )?;
    let call = format!(
        "octet-host --extension-dir {} call {} {tool} '{{\"name\": \"you\"}}'",
        dir.display(),
        args.name
    );
    // A Rust entrypoint is its release binary: build it first (and after each change).
    let call = match args.lang {
        Language::Rust => format!(
            "cargo build --release --manifest-path {} && {call}",
            dir.join("Cargo.toml").display()
        ),
        Language::Python => call,
    };
    Ok(Report::new(
        serde_json::json!({"dir": dir, "tool": tool, "try": call}),
        format!("created {}\ntry: {call}", dir.display()),
    ))
}

fn make_executable(path: &Path) -> Result<(), CliError> {
    use std::os::unix::fs::PermissionsExt;
    let mut permissions = std::fs::metadata(path)
        .map_err(CliError::Host)?
        .permissions();
    permissions.set_mode(0o755);
    std::fs::set_permissions(path, permissions).map_err(CliError::Host)
}

/// A stdlib-only Python extension with one tool, for every API version.
fn python_entrypoint(tool: &str) -> String {
    format!(
        r#"#!/usr/bin/env python3
"""An octet extension: JSON-RPC 2.0, one JSON object per line, on stdin/stdout.

Write logs to stderr: stdout carries only protocol frames.
"""
import json
import os
import sys

API = os.environ.get("OCTET_EXTENSION_API_VERSION", "0.2")
TOOLS = [{{"name": "{tool}", "description": "Say hello",
          "parameters": {{"type": "object", "properties": {{"name": {{"type": "string"}}}}}}}}]


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def result(text):
    if API == "0.1":
        return {{"content": text, "is_error": False}}
    return {{"content": [{{"type": "text", "text": text}}], "is_error": False}}


for line in sys.stdin:
    message = json.loads(line)
    method, request_id = message.get("method"), message.get("id")
    params = message.get("params") or {{}}
    if method == "initialize":
        answer = {{"api_version": API, "tools": TOOLS, "commands": []}}
        protocol = params.get("protocol")
        if protocol:
            answer["protocol"] = {{"version": protocol["version"],
                                  "features": protocol["required_features"],
                                  "limits": {{"max_concurrent_requests": 1}}}}
        send({{"jsonrpc": "2.0", "id": request_id, "result": answer}})
    elif method == "tool/call":
        name = params.get("arguments", {{}}).get("name", "world")
        send({{"jsonrpc": "2.0", "id": request_id, "result": result(f"Hello, {{name}}!")}})
    elif method == "shutdown":
        send({{"jsonrpc": "2.0", "id": request_id, "result": {{}}}})
        break
    elif request_id is not None and method is not None:
        send({{"jsonrpc": "2.0", "id": request_id,
              "error": {{"code": -32601, "message": "unknown method"}}}})
"#
    )
}

/// The crate depends on the SDK of this very octet-host: its source tree when it is
/// still where this binary was built from, otherwise the same version from crates.io.
/// The scaffold's `Cargo.toml`: the SDK from this octet-host's source tree, by a path
/// relative to the extension's directory `dir` (the crate is not on crates.io yet), or
/// by version where that tree is gone.
fn rust_cargo_toml(name: &str, dir: &Path) -> String {
    let source = Path::new(env!("CARGO_MANIFEST_DIR"));
    let octet = match source.join("Cargo.toml").is_file() {
        true => format!(
            "path = {:?}",
            relative_to(source, dir).display().to_string()
        ),
        false => format!("version = \"{}\"", env!("CARGO_PKG_VERSION")),
    };
    format!(
        "[package]\nname = {name:?}\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
         [dependencies]\noctet-host = {{ {octet}, default-features = false, features = [\"sdk\"] }}\n\
         serde = {{ version = \"1\", features = [\"derive\"] }}\nserde_json = \"1\"\n",
    )
}

/// `target` as a path relative to the directory `base` (both absolute).
fn relative_to(target: &Path, base: &Path) -> std::path::PathBuf {
    let target: Vec<_> = target.components().collect();
    let base: Vec<_> = base.components().collect();
    let common = target.iter().zip(&base).take_while(|(a, b)| a == b).count();
    let mut relative = std::path::PathBuf::new();
    for _ in common..base.len() {
        relative.push("..");
    }
    for part in &target[common..] {
        relative.push(part);
    }
    relative
}

fn rust_main(tool: &str) -> String {
    format!(
        r#"use octet_host::sdk::{{Extension, ToolOutput}};
use serde::Deserialize;
use serde_json::json;

#[derive(Deserialize)]
struct Hello {{
    name: Option<String>,
}}

fn main() -> Result<(), octet_host::sdk::RunError> {{
    Extension::new()
        .tool(
            "{tool}",
            "Say hello",
            json!({{"type": "object", "properties": {{"name": {{"type": "string"}}}}}}),
            |args: Hello, _cx| {{
                let name = args.name.unwrap_or_else(|| "world".into());
                Ok(ToolOutput::text(format!("Hello, {{name}}!")))
            }},
        )
        .run()
}}
"#
    )
}

/// Arguments of `completions`.
#[derive(Debug, Args)]
pub(crate) struct CompletionsArgs {
    /// The shell
    shell: clap_complete::Shell,
}

/// Prints the completion script of `shell` on stdout.
///
/// clap_complete's bash script names its per-subcommand `case` arms after the binary
/// with every `-` turned into `__subcmd__` (`octet__subcmd__host__subcmd__call`), while
/// its word loop builds `octet__host__subcmd__call`: with a hyphenated binary name
/// nothing after the subcommand would complete. The arms are renamed to what the loop
/// builds. Its fish script offers no values for a subcommand's positional arguments
/// (`completions <TAB>` listed files): a `complete` line per such argument adds them.
pub(crate) fn run_completions(args: &CompletionsArgs) -> i32 {
    let mut command = super::Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "octet-host", &mut script);
    let mut script = String::from_utf8_lossy(&script).into_owned();
    match args.shell {
        clap_complete::Shell::Bash => {
            script = script.replace("octet__subcmd__host", "octet__host");
        }
        clap_complete::Shell::Fish => {
            for subcommand in command.get_subcommands() {
                for positional in subcommand.get_positionals() {
                    let values: Vec<String> = positional
                        .get_possible_values()
                        .iter()
                        .filter(|v| !v.is_hide_set())
                        .map(|v| v.get_name().to_string())
                        .collect();
                    if !values.is_empty() {
                        script.push_str(&format!(
                            "complete -c octet-host -n \"__fish_octet_host_using_subcommand {}\" -f -a \"{}\"\n",
                            subcommand.get_name(),
                            values.join(" ")
                        ));
                    }
                }
            }
        }
        _ => {}
    }
    use std::io::Write;
    match std::io::stdout().write_all(script.as_bytes()) {
        Ok(()) => 0,
        Err(_) => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_made_relative_to_the_extension_directory() {
        let rel = relative_to(Path::new("/work/main"), Path::new("/tmp/exts/hello"));
        assert_eq!(rel, Path::new("../../../work/main"));
        let rel = relative_to(Path::new("/a/b/c"), Path::new("/a/b"));
        assert_eq!(rel, Path::new("c"));
    }
}
