//! One finding of `check`: a stable id, a status, the reference section it rests on,
//! what was observed and how to fix it; and the two ways a battery of them is printed.

use std::io::IsTerminal;

use serde_json::{json, Value};

/// How one check came out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Status {
    /// The extension keeps the rule.
    Pass,
    /// Not a protocol failure, but something its users will trip on.
    Warn,
    /// The extension breaks the rule.
    Fail,
    /// The check could not run (says why).
    Skip,
}

impl Status {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Warn => "warn",
            Status::Fail => "fail",
            Status::Skip => "skip",
        }
    }

    /// The ANSI colour of the status word.
    fn colour(self) -> &'static str {
        match self {
            Status::Pass => "\x1b[32m",
            Status::Warn => "\x1b[33m",
            Status::Fail => "\x1b[31m",
            Status::Skip => "\x1b[2m",
        }
    }
}

/// One finding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Finding {
    /// A stable id, such as `shutdown.ack` or `call.echo`.
    pub id: String,
    pub status: Status,
    /// The reference section it rests on, such as `1.8`.
    pub section: &'static str,
    /// What was observed.
    pub detail: String,
    /// How to fix it (empty when it passed).
    pub fix: String,
}

impl Finding {
    pub(crate) fn new(
        id: impl Into<String>,
        status: Status,
        section: &'static str,
        detail: impl Into<String>,
    ) -> Finding {
        Finding {
            id: id.into(),
            status,
            section,
            detail: detail.into(),
            fix: String::new(),
        }
    }

    /// With how to fix it.
    pub(crate) fn fix(mut self, fix: impl Into<String>) -> Finding {
        self.fix = fix.into();
        self
    }

    fn to_json(&self) -> Value {
        json!({
            "id": self.id,
            "status": self.status.as_str(),
            "section": self.section,
            "detail": self.detail,
            "fix": self.fix,
        })
    }
}

/// The JSON document: `{"extension", "api_version", "checks": [..]}`.
pub(crate) fn json_report(
    extension: &str,
    api_version: Option<&str>,
    findings: &[Finding],
) -> Value {
    json!({
        "extension": extension,
        "api_version": api_version,
        "checks": findings.iter().map(Finding::to_json).collect::<Vec<_>>(),
    })
}

/// The human table: one line per finding, its fix under each warning and failure, and
/// a summary line; coloured when stdout is a terminal.
pub(crate) fn human_report(
    extension: &str,
    api_version: Option<&str>,
    findings: &[Finding],
) -> String {
    let colour = std::io::stdout().is_terminal();
    let width = findings.iter().map(|f| f.id.len()).max().unwrap_or(0);
    let mut lines = vec![format!(
        "check {extension}{}",
        api_version
            .map(|v| format!(" (API {v})"))
            .unwrap_or_default()
    )];
    for finding in findings {
        let status = match colour {
            true => format!(
                "{}{:<4}\x1b[0m",
                finding.status.colour(),
                finding.status.as_str()
            ),
            false => format!("{:<4}", finding.status.as_str()),
        };
        lines.push(format!(
            "  {status}  {:<width$}  §{:<6} {}",
            finding.id, finding.section, finding.detail
        ));
        if !finding.fix.is_empty() && matches!(finding.status, Status::Fail | Status::Warn) {
            lines.push(format!(
                "  {:<4}  {:<width$}  fix:   {}",
                "", "", finding.fix
            ));
        }
    }
    let count = |s| findings.iter().filter(|f| f.status == s).count();
    lines.push(format!(
        "{} passed, {} warned, {} failed, {} skipped",
        count(Status::Pass),
        count(Status::Warn),
        count(Status::Fail),
        count(Status::Skip)
    ));
    lines.join("\n")
}
