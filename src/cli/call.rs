//! `call NAME TOOL [JSON]`: call a model tool and print its output.

use std::io::Read;
use std::time::Duration;

use clap::Args;
use serde_json::{json, Value};

use super::encode;
use super::error::{CliError, JsonInput};
use super::output::{self, Report};
use super::session::Session;
use super::{progress, GlobalArgs};
use crate::host::{CallOptions, HostEvent};

/// Arguments of `call`.
#[derive(Debug, Args)]
pub(crate) struct CallArgs {
    /// The extension's name
    name: String,
    /// The tool's name
    tool: String,
    /// The arguments: a JSON object, or `-` to read it from stdin
    #[arg(default_value = "{}")]
    arguments: String,
    /// Deadline (`30s`, `500ms`, `2m`; a plain number is milliseconds); the request is
    /// cancelled after it [default: 30s]
    #[arg(long, value_name = "DURATION", value_parser = super::duration::parse)]
    timeout: Option<std::time::Duration>,
}

/// Runs `call`.
pub(crate) fn run(global: &GlobalArgs, args: &CallArgs) -> Result<Report, CliError> {
    let arguments = json_object(&args.arguments, JsonInput::ToolArguments)?;
    let session = Session::open(global)?;
    let result = call(&session, args, arguments, global.json);
    session.finish(result)
}

fn call(
    session: &Session,
    args: &CallArgs,
    arguments: Value,
    json: bool,
) -> Result<Report, CliError> {
    super::names::check(session, &args.name, super::names::Kind::Tool, &args.tool)?;
    let extension = session.start(&args.name)?;
    let pending = extension.call_tool_async(&args.tool, arguments, call_options(args.timeout));
    let (outcome, events) = progress::wait(session.host(), &args.name, pending);
    let output = outcome.map_err(|error| CliError::Call {
        extension: args.name.clone(),
        target: format!("tool `{}`", args.tool),
        error: Box::new(error),
    });
    print_events(&events, json);
    let output = output?;
    let mut report = Report::new(
        json!({
            "extension": args.name,
            "tool": args.tool,
            "output": encode::tool_output(&output),
            "events": events_json(&events),
        }),
        output.text(),
    );
    if output.is_error {
        report.failure = Some(CliError::ToolReportedError {
            extension: args.name.clone(),
            tool: args.tool.clone(),
        });
    }
    Ok(report)
}

/// Options with the `--timeout` deadline, if one was given.
pub(crate) fn call_options(timeout: Option<Duration>) -> CallOptions {
    match timeout {
        Some(timeout) => CallOptions::with_deadline(timeout),
        None => CallOptions::default(),
    }
}

/// Prints the notifications, contributions and diagnostics among `events` on stderr,
/// unless `quiet` (with `--json` they are in the document instead).
pub(crate) fn print_events(events: &[HostEvent], quiet: bool) {
    if quiet {
        return;
    }
    for line in events.iter().filter_map(output::event_line) {
        output::eprint_line(&line);
    }
}

/// The events as JSON (progress included).
pub(crate) fn events_json(events: &[HostEvent]) -> Vec<Value> {
    events.iter().map(HostEvent::to_value).collect()
}

/// Parses `text` (or stdin when it is `-`) as a JSON object.
pub(crate) fn json_object(text: &str, input: JsonInput) -> Result<Value, CliError> {
    let text = if text == "-" {
        let mut buffer = String::new();
        std::io::stdin()
            .read_to_string(&mut buffer)
            .map_err(CliError::Stdin)?;
        buffer
    } else {
        text.to_owned()
    };
    let value: Value =
        serde_json::from_str(&text).map_err(|error| CliError::InvalidJson { input, error })?;
    if !value.is_object() {
        return Err(CliError::NotAnObject { input });
    }
    Ok(value)
}
