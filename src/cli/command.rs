//! `command NAME CMD [ARGS..]`: run a slash command.

use clap::Args;
use serde_json::json;

use super::call::{call_options, events_json, print_events};
use super::encode;
use super::error::CliError;
use super::output::{context_line, notification_line, Report};
use super::session::Session;
use super::{progress, GlobalArgs};
use crate::validate::CommandResult;

/// Arguments of `command`.
#[derive(Debug, Args)]
pub(crate) struct CommandArgs {
    /// The extension's name
    name: String,
    /// The command's name, without the slash
    command: String,
    /// The command's arguments, passed as they are (put `--` before arguments that
    /// start with a hyphen)
    arguments: Vec<String>,
    /// Deadline (`30s`, `500ms`, `2m`; a plain number is milliseconds); the request is
    /// cancelled after it [default: 30s]
    #[arg(long, value_name = "DURATION", value_parser = super::duration::parse)]
    timeout: Option<std::time::Duration>,
}

/// Runs `command`.
pub(crate) fn run(global: &GlobalArgs, args: &CommandArgs) -> Result<Report, CliError> {
    let session = Session::open(global)?;
    let result = execute(&session, args, global.json);
    session.finish(result)
}

fn execute(session: &Session, args: &CommandArgs, json: bool) -> Result<Report, CliError> {
    // `/name` is how a person writes a slash command.
    let command = args.command.strip_prefix('/').unwrap_or(&args.command);
    super::names::check(session, &args.name, super::names::Kind::Command, command)?;
    let extension = session.start(&args.name)?;
    let pending = extension.execute_command_async(
        command,
        args.arguments.clone(),
        call_options(args.timeout),
    );
    let (outcome, events) = progress::wait(session.host(), &args.name, pending);
    print_events(&events, json);
    let output = outcome.map_err(|error| CliError::Call {
        extension: args.name.clone(),
        target: format!("command `{}`", args.command),
        error: Box::new(error),
    })?;
    Ok(Report::new(
        json!({
            "extension": args.name,
            "command": args.command,
            "arguments": args.arguments,
            "output": encode::command_output(&output),
            "events": events_json(&events),
        }),
        command_text(&output, ""),
    ))
}

/// The command's text, then its notifications and context, each line prefixed.
pub(crate) fn command_text(output: &CommandResult, prefix: &str) -> String {
    let mut lines: Vec<String> = Vec::new();
    if let Some(text) = &output.text {
        lines.extend(text.lines().map(|l| format!("{prefix}{l}")));
    }
    for n in &output.notifications {
        lines.push(format!("{prefix}notification {}", notification_line(n)));
    }
    for c in &output.context {
        lines.push(format!("{prefix}context {}", context_line(c)));
    }
    lines.join("\n")
}
