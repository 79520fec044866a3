//! The `octet-host` binary's command line: clap types and dispatch.
//!
//! Every subcommand builds one host, does its work through the library's host API
//! ([`crate::host`]) and shuts the host down on every path out, including SIGINT,
//! SIGTERM and SIGHUP (see `signals`). Output is text for people, or with `--json` one
//! JSON document on stdout (errors included, with a stable `code`).

mod bench;
mod call;
#[cfg(unix)]
mod check;
mod command;
mod demo;
mod discover;
mod duration;
mod encode;
mod error;
mod frontend;
mod hook;
mod inspect;
mod menu;
mod names;
mod output;
mod progress;
mod scaffold;
mod session;
mod signals;
mod status;
#[cfg(unix)]
mod tty;
mod ui;

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use error::CliError;

/// Hosts octet extensions: discover, inspect and call them, or run the demo.
#[derive(Debug, Parser)]
#[command(name = "octet-host", version, about, long_about = None)]
struct Cli {
    #[command(flatten)]
    global: GlobalArgs,
    /// The subcommand; `demo` when none is given.
    #[command(subcommand)]
    command: Option<CliCommand>,
}

/// Options every subcommand accepts.
#[derive(Debug, Args)]
pub(crate) struct GlobalArgs {
    /// The workspace: extensions run in it and `<DIR>/.octet/extensions` is searched
    /// [default: the current directory]
    #[arg(long, global = true, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// An extension: its directory, its `extension.toml`, or a directory of extension
    /// directories (repeatable)
    #[arg(long = "extension-dir", global = true, value_name = "PATH")]
    pub extension_dirs: Vec<PathBuf>,
    /// Machine output: one JSON document on stdout, errors included
    #[arg(long, global = true)]
    pub json: bool,
    /// Do not discover global extensions (`~/.octet/extensions`)
    #[arg(long = "no-global", global = true)]
    pub no_global: bool,
    /// Answer every confirmation yes without asking (each is noted on stderr)
    #[arg(long, global = true, conflicts_with = "no_input")]
    pub yes: bool,
    /// Never ask: confirmations are denied and input requests cancelled at once
    #[arg(long = "no-input", global = true)]
    pub no_input: bool,
    /// How long an extension has to answer `initialize` (`30s`, `500ms`; a plain
    /// number is milliseconds) [default: 30s]
    #[arg(long = "startup-timeout", global = true, value_name = "DURATION",
          value_parser = duration::parse)]
    pub startup_timeout: Option<std::time::Duration>,
    /// Do not start the guardian, the small process that kills every extension process
    /// and removes the scratch directories should octet-host be killed outright
    #[arg(long = "no-guardian", global = true)]
    pub no_guardian: bool,
    /// The runtime-served features' options (`features::RuntimeOptions`).
    #[command(flatten)]
    pub features: crate::features::RuntimeOptions,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
enum CliCommand {
    /// Run the bundled example extensions through the whole protocol and print a
    /// transcript (ignores --workspace and --extension-dir)
    Demo,
    /// List discovered extensions and manifest diagnostics; executes nothing
    Discover,
    /// Start an extension, print what `initialize` negotiated, shut it down
    Inspect {
        /// The extension's name
        name: String,
    },
    /// Call a model tool and print its output
    Call(call::CallArgs),
    /// Run a slash command
    Command(command::CommandArgs),
    /// Show an extension's menu, or run one of its actions (confirmed when destructive)
    Menu(menu::MenuArgs),
    /// Run a lifecycle hook with a payload
    Hook(hook::HookArgs),
    /// Check that an extension keeps the protocol: its manifest, `initialize`, calls,
    /// cancellation, stdout, shutdown and EOF; exit 1 when a check fails
    #[cfg(unix)]
    Check(check::CheckArgs),
    /// Start the named (or every discovered) extension and print its status
    Status {
        /// The extension's name [default: every discovered extension]
        name: Option<String>,
    },
    /// Run the JSON-lines control protocol on stdin/stdout (docs/serve-protocol.md)
    Serve {
        /// Keep the default scheduler slice on serve's threads. By default the threads
        /// on a call's path ask for a 100 µs slice, so a call answers at once on a
        /// machine other programs keep busy instead of waiting out their slices
        /// (benches/README.md). Kernels before Linux 6.12, and other systems, give a
        /// thread no slice of its own: there the threads keep the default slice with
        /// or without this flag, and serve works the same
        #[arg(long)]
        no_prompt_wakeups: bool,
        /// Stream the wire trace: every frame to and from every extension as a `trace`
        /// line, with its direction, its time, and for a response the request it
        /// answers and the latency (docs/serve-protocol.md, "Wire trace")
        #[arg(long = "wire-trace")]
        wire_trace: bool,
        /// The default now (the flag is kept so that older scripts still run)
        #[arg(long, hide = true, conflicts_with = "no_prompt_wakeups")]
        prompt_wakeups: bool,
    },
    /// Open a local web inspector: the page lists the extensions, runs their tools,
    /// commands and hooks, and shows the wire trace and stderr live; the URL (with
    /// its token) is the first line of stdout
    Ui(ui::UiArgs),
    /// Re-run the calls, commands and hooks of a session `ui` recorded against the
    /// extensions as they are now, and print where an outcome differs (exit 1 when
    /// one does)
    Replay(ui::replay::ReplayArgs),
    /// Create a working extension directory (a manifest and a Python or Rust
    /// entrypoint) that `call` can run at once
    New(scaffold::NewArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell)
    Completions(scaffold::CompletionsArgs),
    /// Measure round trips against the pipe and JSON floors, frame decoding and memory
    /// per extension, and print the table of benches/README.md (ignores --workspace
    /// and --extension-dir)
    Bench(bench::BenchArgs),
}

/// Runs the command line and returns the process exit code.
pub fn main() -> i32 {
    let args: Vec<OsString> = std::env::args_os().collect();
    // Hidden entry point: `octet-host __extension <name>` runs one of the bundled
    // example extensions (`sdk::examples`) over stdio, so the demo and the tests can use
    // the binary itself as an extension. It is not a clap subcommand, so it never shows
    // in --help.
    if args.get(1).is_some_and(|a| a == "__extension") {
        let name = args.get(2).map(|a| a.to_string_lossy()).unwrap_or_default();
        return run_example(&name);
    }
    // Hidden entry point: `octet-host __bench-echo <mode>` is the echo child of the
    // benchmarks (`crate::bench::echo`).
    if args.get(1).is_some_and(|a| a == "__bench-echo") {
        let mode = args.get(2).map(|a| a.to_string_lossy()).unwrap_or_default();
        return bench::run_echo(&mode);
    }
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(e) => return usage_error(e, &args),
    };
    let json = cli.global.json;
    let result = match cli.command.unwrap_or(CliCommand::Demo) {
        CliCommand::Demo => demo::run(json),
        CliCommand::Discover => discover::run(&cli.global),
        CliCommand::Inspect { name } => inspect::run(&cli.global, &name),
        CliCommand::Call(args) => call::run(&cli.global, &args),
        CliCommand::Command(args) => command::run(&cli.global, &args),
        CliCommand::Menu(args) => menu::run(&cli.global, &args),
        CliCommand::Hook(args) => hook::run(&cli.global, &args),
        #[cfg(unix)]
        CliCommand::Check(args) => return check::run(&cli.global, &args),
        CliCommand::Status { name } => status::run(&cli.global, name.as_deref()),
        CliCommand::Serve {
            no_prompt_wakeups,
            wire_trace,
            ..
        } => return serve(&cli.global, !no_prompt_wakeups, wire_trace),
        CliCommand::Ui(args) => return ui::run(&cli.global, &args),
        CliCommand::Replay(args) => return ui::replay::run(&cli.global, &args),
        CliCommand::New(args) => scaffold::run_new(&args),
        CliCommand::Completions(args) => return scaffold::run_completions(&args),
        CliCommand::Bench(args) => return bench::run(&args, json),
    };
    output::emit(result, json)
}

/// `octet-host serve`: the sidecar control protocol over this process's stdio.
fn serve(global: &GlobalArgs, prompt_wakeups: bool, wire_trace: bool) -> i32 {
    if global.json {
        output::eprint_line("error: serve always writes JSON lines; --json does not apply to it");
        return 2;
    }
    let options = serve_options(global)
        .prompt_wakeups(prompt_wakeups)
        .wire_trace(wire_trace);
    // SIGINT, SIGTERM and SIGHUP end the session in order (docs/serve-protocol.md).
    let (options, forwarder) = match with_signals(options) {
        Ok(watched) => watched,
        Err(code) => return code,
    };
    let input = std::io::BufReader::new(std::io::stdin());
    let code = match crate::serve::run(options, input, std::io::stdout()) {
        Ok(code) => code,
        Err(e) => {
            output::eprint_line(&format!("error: serve: {e}"));
            1
        }
    };
    drop(forwarder);
    code
}

/// serve's options from the global options: the workspace, the extension directories,
/// the startup timeout, headless or not, the guardian and the runtime features.
fn serve_options(global: &GlobalArgs) -> crate::serve::ServeOptions {
    let workspace = match &global.workspace {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().unwrap_or_else(|_| ".".into()),
    };
    let mut options = crate::serve::ServeOptions::new(workspace);
    for dir in &global.extension_dirs {
        options = options.extension_dir(dir);
    }
    if global.no_global {
        options = options.no_global_extensions();
    }
    if let Some(timeout) = global.startup_timeout {
        options = options.startup_timeout(timeout);
    }
    if global.no_input {
        options = options.no_input();
    }
    options = options.guardian(!global.no_guardian);
    options.features = global.features.clone();
    options
}

/// `options` with SIGINT, SIGTERM and SIGHUP forwarded to the session, which ends in
/// order; the forwarder lives as long as the session must hear them. Exit code 1 when
/// the signals cannot be watched.
fn with_signals(
    options: crate::serve::ServeOptions,
) -> Result<(crate::serve::ServeOptions, signals::SignalForwarder), i32> {
    match signals::forward() {
        Ok((forwarder, received)) => Ok((options.signals(received), forwarder)),
        Err(e) => {
            output::eprint_line(&format!("error: cannot watch signals: {e}"));
            Err(1)
        }
    }
}

/// Runs the bundled example extension `name` over stdio.
fn run_example(name: &str) -> i32 {
    let Some(extension) = crate::sdk::examples::by_name(name) else {
        output::eprint_line(&format!(
            "unknown example extension {name:?}; known: {:?}",
            crate::sdk::examples::NAMES
        ));
        return 1;
    };
    match extension.run() {
        Ok(()) => 0,
        Err(e) => {
            output::eprint_line(&format!("{name}: {e}"));
            1
        }
    }
}

/// Prints help and version as clap does; prints a usage error as clap does, or as a
/// JSON error document when `--json` was among the arguments. Usage errors exit 2.
fn usage_error(error: clap::Error, args: &[OsString]) -> i32 {
    // Help and version are the "errors" clap prints on stdout; they exit 0.
    let informational = !error.use_stderr();
    if !informational && args.iter().any(|a| a == "--json") {
        let rendered = error.render().to_string();
        let message = rendered
            .lines()
            .next()
            .unwrap_or_default()
            .trim_start_matches("error: ")
            .to_owned();
        return output::emit(Err(CliError::Usage { message }), true);
    }
    if error.kind() == clap::error::ErrorKind::DisplayHelp {
        if let Some(code) = subcommand_help(args) {
            return code;
        }
    }
    let _ = error.print();
    if informational {
        0
    } else {
        error::EXIT_USAGE
    }
}

/// The global options of the host itself, by their clap ids; the runtime-served
/// features' follow from their table ([`crate::features::RuntimeOptions::FLAGS`]).
const HOST_OPTIONS: [&str; 8] = [
    "workspace",
    "extension_dirs",
    "json",
    "no_global",
    "yes",
    "no_input",
    "startup_timeout",
    "no_guardian",
];

/// The runtime-served features' options, by their clap ids.
fn feature_options() -> impl Iterator<Item = &'static str> {
    crate::features::RuntimeOptions::FLAGS
        .iter()
        .map(|(id, _)| *id)
}

/// Every global option, by its clap id.
fn global_options() -> Vec<&'static str> {
    HOST_OPTIONS
        .iter()
        .copied()
        .chain(feature_options())
        .collect()
}

/// The global options `subcommand` reads: its help lists only these. Every subcommand
/// still accepts the others where the command line puts them, as clap's globals are.
fn options_of(subcommand: &str) -> Vec<&'static str> {
    match subcommand {
        "demo" | "new" | "bench" => vec!["json"],
        "completions" => vec![],
        "discover" => vec!["workspace", "extension_dirs", "json", "no_global"],
        // serve always writes JSON lines, and its client answers confirmations; ui is
        // serve behind a page.
        "serve" | "ui" | "replay" => [
            "workspace",
            "extension_dirs",
            "no_global",
            "no_input",
            "startup_timeout",
            "no_guardian",
        ]
        .into_iter()
        .chain(feature_options())
        .collect(),
        _ => global_options(),
    }
}

/// Prints a subcommand's help (`octet-host serve --help`, `octet-host help serve`)
/// with only the global options it reads, and returns the exit code; `None` for the
/// top-level help, which clap prints itself.
fn subcommand_help(args: &[OsString]) -> Option<i32> {
    use clap::CommandFactory;
    let mut command = Cli::command();
    command.build();
    let words: Vec<&str> = args.iter().skip(1).filter_map(|a| a.to_str()).collect();
    let at = words
        .iter()
        .position(|w| command.find_subcommand(w).is_some())?;
    // `help NAME` asks for NAME's help.
    let name = match words[at] {
        "help" => words.get(at + 1).copied()?,
        name => name,
    };
    let shown = options_of(name);
    let mut subcommand = command.find_subcommand(name)?.clone();
    for option in global_options().iter().filter(|o| !shown.contains(o)) {
        subcommand = subcommand.mut_arg(*option, |arg| arg.hide(true));
    }
    let printed = if words.contains(&"-h") {
        subcommand.print_help()
    } else {
        subcommand.print_long_help()
    };
    Some(if printed.is_ok() { 0 } else { 1 })
}
