//! `inspect NAME`: start it, show what `initialize` negotiated, shut it down.

use std::fmt::Write;

use serde_json::json;

use super::encode;
use super::error::CliError;
use super::output::{indent, Report};
use super::session::Session;
use super::GlobalArgs;
use crate::host::StartedExtension;

/// Runs `inspect`.
pub(crate) fn run(global: &GlobalArgs, name: &str) -> Result<Report, CliError> {
    let session = Session::open(global)?;
    let result = session.start(name).map(|extension| {
        let info = extension.info();
        let mut value = encode::negotiated(&info.negotiated);
        value["extension"] = json!(info.name);
        value["generation"] = json!(info.generation);
        value["pid"] = json!(info.pid);
        value["source"] = json!(info.manifest.source.as_str());
        value["dir"] = json!(info.manifest.dir);
        Report::new(value, negotiated_text(info, ""))
    });
    session.finish(result)
}

/// The negotiated api, features, limits, tools and commands as indented text.
pub(crate) fn negotiated_text(info: &StartedExtension, prefix: &str) -> String {
    let n = &info.negotiated;
    let mut text = String::new();
    let _ = writeln!(
        text,
        "{prefix}{} (generation {}, pid {})",
        info.name, info.generation, info.pid
    );
    let _ = writeln!(text, "{prefix}  api_version: {}", n.api_version);
    let features: Vec<&str> = n.features.iter().map(|f| f.as_str()).collect();
    let features = if features.is_empty() {
        "none".to_owned()
    } else {
        features.join(", ")
    };
    let _ = writeln!(text, "{prefix}  features: {features}");
    // API 0.3 selects capabilities and methods in its contract instead.
    if let Some(contract) = &n.contract {
        let selected = contract.to_value();
        let list = |key: &str| -> String {
            let names: Vec<&str> = selected[key]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|v| v.as_str())
                .collect();
            names.join(", ")
        };
        let _ = writeln!(text, "{prefix}  capabilities: {}", list("capabilities"));
        let _ = writeln!(text, "{prefix}  methods: {}", list("methods"));
    }
    let _ = writeln!(
        text,
        "{prefix}  max_concurrent_requests: {}",
        n.max_concurrent_requests
    );
    if !n.lifecycle_subscriptions.is_empty() {
        let events: Vec<&str> = n
            .lifecycle_subscriptions
            .iter()
            .map(|e| e.method())
            .collect();
        let _ = writeln!(text, "{prefix}  lifecycle: {}", events.join(", "));
    }
    if n.tools.is_empty() {
        let _ = writeln!(text, "{prefix}  tools: none");
    } else {
        let _ = writeln!(text, "{prefix}  tools:");
    }
    for tool in &n.tools {
        let _ = writeln!(text, "{prefix}    {}: {}", tool.name, tool.description);
        let parameters = serde_json::to_string(&tool.parameters).unwrap_or_default();
        let _ = writeln!(text, "{prefix}      parameters: {parameters}");
        if let Some(schema) = &tool.output_schema {
            let schema = serde_json::to_string(schema).unwrap_or_default();
            let _ = writeln!(text, "{prefix}      output_schema: {schema}");
        }
    }
    if n.commands.is_empty() {
        let _ = writeln!(text, "{prefix}  commands: none");
    } else {
        let _ = writeln!(text, "{prefix}  commands:");
    }
    for command in &n.commands {
        let usage = command
            .usage
            .as_deref()
            .map(|u| format!(" (usage: {u})"))
            .unwrap_or_default();
        let line = format!("/{}: {}{usage}", command.name, command.description);
        let _ = writeln!(text, "{}", indent(&line, &format!("{prefix}    ")));
    }
    text
}
