//! `discover`: the catalog and its diagnostics. Executes nothing.

use std::fmt::Write;

use super::error::CliError;
use super::output::Report;
use super::session::Session;
use super::GlobalArgs;
use crate::manifest::{Catalog, LocatedManifest};

/// Runs `discover`.
pub(crate) fn run(global: &GlobalArgs) -> Result<Report, CliError> {
    let session = Session::open(global)?;
    let catalog = session.host().discover();
    let report = Report::new(catalog_json(&catalog), catalog_text(&catalog, ""));
    session.finish(Ok(report))
}

/// `{"entries": [..], "diagnostics": [..]}` ([`Catalog::to_value`], the shape `serve`'s
/// `discover` has too).
pub(crate) fn catalog_json(catalog: &Catalog) -> serde_json::Value {
    catalog.to_value()
}

/// The catalog as indented text, each line prefixed with `prefix`.
pub(crate) fn catalog_text(catalog: &Catalog, prefix: &str) -> String {
    let mut text = String::new();
    let count = catalog.entries.len();
    let _ = writeln!(
        text,
        "{prefix}{count} extension{} found",
        if count == 1 { "" } else { "s" }
    );
    for entry in &catalog.entries {
        text.push_str(&entry_text(entry, prefix));
    }
    if catalog.diagnostics.is_empty() {
        let _ = writeln!(text, "{prefix}no diagnostics");
    } else {
        let _ = writeln!(text, "{prefix}{} diagnostic(s):", catalog.diagnostics.len());
        for d in &catalog.diagnostics {
            let _ = writeln!(
                text,
                "{prefix}  ! {} [{}] {}",
                d.kind.as_str(),
                d.source,
                d.path.display()
            );
            let _ = writeln!(text, "{prefix}      {}", d.kind);
        }
    }
    text
}

fn entry_text(located: &LocatedManifest, prefix: &str) -> String {
    let m = &located.manifest;
    let c = &m.contributes;
    let mut text = String::new();
    let _ = writeln!(
        text,
        "{prefix}  • {} {} (api {}, {})",
        m.name, m.version, m.api_version, located.source
    );
    let _ = writeln!(text, "{prefix}      dir: {}", located.dir.display());
    let mut parts = Vec::new();
    let mut list = |label: &str, items: &[String]| {
        if !items.is_empty() {
            parts.push(format!("{label} {}", items.join(", ")));
        }
    };
    list("tools", &c.tools);
    list("commands", &c.commands);
    list("renderers", &c.tool_renderers);
    list("hooks", &c.hooks);
    let ui: Vec<String> = c.ui.iter().map(|s| s.as_str().to_owned()).collect();
    list("ui", &ui);
    for (flag, label) in [
        (c.context, "context"),
        (c.notifications, "notifications"),
        (c.confirmations, "confirmations"),
        (c.presentation, "presentation"),
        (c.menu, "menu"),
    ] {
        if flag {
            parts.push(label.to_owned());
        }
    }
    if parts.is_empty() {
        parts.push("nothing".to_owned());
    }
    let _ = writeln!(text, "{prefix}      contributes: {}", parts.join("; "));
    text
}
