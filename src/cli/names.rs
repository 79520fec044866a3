//! Checking a tool, command or hook name against the extension's manifest before
//! anything is started, with a suggestion for a near miss.

use super::error::CliError;
use super::session::Session;

/// What a name is checked as.
#[derive(Clone, Copy)]
pub(crate) enum Kind {
    Tool,
    Command,
    Hook,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Kind::Tool => "tool",
            Kind::Command => "command",
            Kind::Hook => "hook",
        }
    }
}

/// Fails with a usage error (exit 2) when the discovered manifest of `extension`
/// declares no `kind` named `name`, suggesting the closest declared one. An extension
/// that was not discovered is left to the start, which names that problem.
pub(crate) fn check(
    session: &Session,
    extension: &str,
    kind: Kind,
    name: &str,
) -> Result<(), CliError> {
    let catalog = session.host().discover();
    let Some(located) = catalog.get(extension) else {
        return Ok(());
    };
    let contributes = &located.manifest.contributes;
    let declared: &[String] = match kind {
        Kind::Tool => &contributes.tools,
        Kind::Command => &contributes.commands,
        Kind::Hook => &contributes.hooks,
    };
    if declared.iter().any(|d| d == name) {
        return Ok(());
    }
    let kind = kind.as_str();
    let mut message = format!("extension `{extension}` declares no {kind} `{name}`");
    if let Some(close) = crate::suggest::closest(name, declared.iter().map(String::as_str)) {
        message.push_str(&format!("; did you mean `{close}`?"));
    }
    match declared.is_empty() {
        true => message.push_str(&format!(" (it declares no {kind}s)")),
        false => message.push_str(&format!(" ({kind}s: {})", declared.join(", "))),
    }
    Err(CliError::Usage { message })
}
