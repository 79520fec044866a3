//! `status [NAME]`: start the named (or every discovered) extension and print the
//! host's status of each generation, then shut down.

use std::fmt::Write;

use serde_json::json;

use super::error::CliError;
use super::output::Report;
use super::session::Session;
use super::GlobalArgs;
use crate::host::ExtensionStatus;

/// Runs `status`.
pub(crate) fn run(global: &GlobalArgs, name: Option<&str>) -> Result<Report, CliError> {
    let session = Session::open(global)?;
    let result = collect(&session, name);
    session.finish(result)
}

fn collect(session: &Session, name: Option<&str>) -> Result<Report, CliError> {
    let mut failures = Vec::new();
    match name {
        Some(name) => {
            session.start(name)?;
        }
        None => {
            let catalog = session.host().discover();
            for entry in &catalog.entries {
                if let Err(e) = session.start(&entry.manifest.name) {
                    failures.push(e);
                }
            }
        }
    }
    let statuses = session.host().status();
    let mut text: String = statuses.iter().map(|s| status_text(s, "")).collect();
    if statuses.is_empty() {
        text.push_str("no extension running\n");
        if name.is_none() {
            text.push_str(&format!(
                "nothing was discovered; {}\n",
                where_it_looked(session)
            ));
        }
    }
    let mut report = Report::new(
        json!({
            "extensions": statuses.iter().map(ExtensionStatus::to_value).collect::<Vec<_>>(),
            "start_errors": failures.iter().map(CliError::to_json).collect::<Vec<_>>(),
        }),
        text,
    );
    for failure in &failures {
        super::output::eprint_line(&format!("error: {failure}"));
    }
    if !failures.is_empty() {
        report.failure = Some(CliError::StartsFailed {
            failed: failures.len(),
        });
    }
    Ok(report)
}

/// One generation's status as indented text.
pub(crate) fn status_text(s: &ExtensionStatus, prefix: &str) -> String {
    let mut text = String::new();
    let _ = writeln!(
        text,
        "{prefix}{}#{}: {} (api {}, pid {}{})",
        s.extension,
        s.generation,
        s.state,
        s.api_version,
        s.pid
            .map_or_else(|| "none".to_owned(), |pid| pid.to_string()),
        if s.routed { "" } else { ", not routed" }
    );
    let features = if s.features.is_empty() {
        "none".to_owned()
    } else {
        s.features.join(", ")
    };
    let _ = writeln!(text, "{prefix}  features: {features}");
    if let Some(max) = s.max_concurrent_requests {
        let _ = writeln!(text, "{prefix}  max_concurrent_requests: {max}");
    }
    let _ = writeln!(
        text,
        "{prefix}  pending: {}, queued: {}",
        s.pending, s.queued
    );
    let _ = writeln!(
        text,
        "{prefix}  last error: {}",
        s.last_error.as_deref().unwrap_or("none")
    );
    for line in &s.stderr_tail {
        let _ = writeln!(text, "{prefix}  stderr: {line}");
    }
    text
}

/// Where discovery looked, for a `status` that found nothing to start.
fn where_it_looked(session: &Session) -> String {
    let host = session.host();
    let project = host.workspace().join(".octet/extensions");
    let mut places = vec![format!("{} (project)", project.display())];
    match std::env::var_os("HOME") {
        Some(home) => places.push(format!(
            "{} (global, unless --no-global)",
            std::path::Path::new(&home)
                .join(".octet/extensions")
                .display()
        )),
        None => places.push("no global directory ($HOME is not set)".into()),
    }
    format!("looked in {} and every --extension-dir", places.join(", "))
}
