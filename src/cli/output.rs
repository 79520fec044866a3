//! Printing: text for people, one JSON document for programs.
//!
//! Writes never panic: a closed stdout (`octet-host discover | head -1`) only loses the
//! rest of the output.

use std::io::Write;

use serde_json::Value;

use super::error::CliError;
use crate::host::{Diagnostic, HostEvent};
use crate::validate::{ContextContribution, Notification};

/// What a subcommand produced.
#[derive(Debug)]
pub(crate) struct Report {
    /// The machine form, printed with `--json`.
    pub json: Value,
    /// The human form, printed otherwise (may be empty when already streamed).
    pub text: String,
    /// Set when the output is complete but the command still failed (for example a tool
    /// that answered `is_error: true`).
    pub failure: Option<CliError>,
}

impl Report {
    /// A successful report.
    pub(crate) fn new(json: Value, text: String) -> Report {
        Report {
            json,
            text,
            failure: None,
        }
    }
}

/// Prints a subcommand's outcome and returns the exit code.
pub(crate) fn emit(result: Result<Report, CliError>, json: bool) -> i32 {
    match result {
        Ok(report) => {
            let failure = report.failure;
            if json {
                let mut document = report.json;
                if let (Some(error), Value::Object(map)) = (&failure, &mut document) {
                    map.insert("error".into(), error.to_json());
                }
                print_json(&document);
            } else {
                print(&report.text);
            }
            match failure {
                Some(error) => {
                    eprint_line(&format!("error: {error}"));
                    error.exit_code()
                }
                None => 0,
            }
        }
        Err(error) => {
            if json {
                print_json(&serde_json::json!({ "error": error.to_json() }));
            }
            if !matches!(error, CliError::Reported(_)) {
                eprint_line(&format!("error: {error}"));
            }
            error.exit_code()
        }
    }
}

/// Writes `text` to stdout as it is, adding a final newline when it lacks one.
pub(crate) fn print(text: &str) {
    if text.is_empty() {
        return;
    }
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(text.as_bytes());
    if !text.ends_with('\n') {
        let _ = stdout.write_all(b"\n");
    }
    let _ = stdout.flush();
}

/// Writes `value` pretty-printed to stdout.
pub(crate) fn print_json(value: &Value) {
    let text = serde_json::to_string_pretty(value).unwrap_or_else(|_| "null".to_owned());
    print(&text);
}

/// Writes one line to stdout and flushes it (a line another program may wait for).
pub(crate) fn print_line(line: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{line}");
    let _ = stdout.flush();
}

/// Writes one line to stderr.
pub(crate) fn eprint_line(line: &str) {
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(stderr, "{line}");
}

/// `[success] Hello: hello_world greeted x`.
pub(crate) fn notification_line(n: &Notification) -> String {
    match &n.title {
        Some(title) => format!("[{}] {title}: {}", n.level.as_str(), n.message),
        None => format!("[{}] {}", n.level.as_str(), n.message),
    }
}

/// `checkpoint (system_suffix): The last checkpoint ...`.
pub(crate) fn context_line(c: &ContextContribution) -> String {
    format!("{} ({}): {}", c.label, c.placement.as_str(), c.content)
}

/// A one-line description of a runtime diagnostic.
pub(crate) fn diagnostic_line(d: &Diagnostic) -> String {
    d.to_string()
}

/// A one-line description of the host events a person cares about after a call
/// (notifications, contributions, diagnostics); `None` for state changes and progress.
pub(crate) fn event_line(event: &HostEvent) -> Option<String> {
    match event {
        HostEvent::Notification {
            source,
            notification,
        } => Some(format!(
            "{source} notification {}",
            notification_line(notification)
        )),
        HostEvent::ContextContribution {
            source,
            contribution,
        } => Some(format!("{source} context {}", context_line(contribution))),
        HostEvent::Presentation {
            source, snapshot, ..
        } => Some(format!(
            "{source} presentation revision {}",
            snapshot.revision
        )),
        HostEvent::StatusContribution {
            source,
            contribution,
        } => Some(format!(
            "{source} {} {}",
            contribution.surface.as_str(),
            contribution.text
        )),
        HostEvent::Diagnostic { source, diagnostic } => {
            Some(format!("{source} {}", diagnostic_line(diagnostic)))
        }
        HostEvent::TerminalGrantLost { source, reason, .. } => {
            Some(format!("{source} lost the terminal: {reason}"))
        }
        HostEvent::EventsDropped { count } => Some(format!("{count} host events dropped")),
        // The catalog is in `inspect`; after a call it is noise.
        HostEvent::Progress { .. }
        | HostEvent::StateChanged { .. }
        | HostEvent::ToolsChanged { .. } => None,
    }
}

/// Prefixes every line of `text` with `prefix`.
pub(crate) fn indent(text: &str, prefix: &str) -> String {
    text.lines()
        .map(|line| format!("{prefix}{line}"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::validate::{NotificationLevel, Placement};

    #[test]
    fn lines_name_level_title_and_placement() {
        let n = Notification {
            level: NotificationLevel::Success,
            title: Some("Hello".into()),
            message: "hi".into(),
        };
        assert_eq!(notification_line(&n), "[success] Hello: hi");
        let c = ContextContribution {
            label: "cp".into(),
            content: "text".into(),
            placement: Placement::SystemSuffix,
        };
        assert_eq!(context_line(&c), "cp (system_suffix): text");
        assert_eq!(indent("a\nb", "  "), "  a\n  b");
    }
}
