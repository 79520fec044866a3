//! The discovery catalog as JSON: one shape for the CLI's `--json discover` and
//! `serve`'s `discover`.

use serde_json::{json, Value};

use super::discovery::{Catalog, DiagnosticKind, DiscoveryDiagnostic};
use super::types::{Contributes, LocatedManifest};

impl Catalog {
    /// `{"entries": [..], "diagnostics": [..]}`: every usable manifest
    /// ([`LocatedManifest::to_value`]) and every problem
    /// ([`DiscoveryDiagnostic::to_value`]).
    pub fn to_value(&self) -> Value {
        json!({
            "entries": self.entries.iter().map(LocatedManifest::to_value).collect::<Vec<_>>(),
            "diagnostics": self
                .diagnostics
                .iter()
                .map(DiscoveryDiagnostic::to_value)
                .collect::<Vec<_>>(),
        })
    }
}

impl LocatedManifest {
    /// `{name, version, api_version, source, dir, manifest_path, description,
    /// entrypoint: {command, args}, contributes: {..every member..}}`.
    pub fn to_value(&self) -> Value {
        let manifest = &self.manifest;
        json!({
            "name": manifest.name,
            "version": manifest.version.to_string(),
            "api_version": manifest.api_version.as_str(),
            "source": self.source.as_str(),
            "dir": self.dir,
            "manifest_path": self.manifest_path,
            "description": manifest.description,
            "entrypoint": {
                "command": manifest.entrypoint.command,
                "args": manifest.entrypoint.args,
            },
            "contributes": contributes(&manifest.contributes),
        })
    }
}

/// `[contributes]`, with every member present.
fn contributes(c: &Contributes) -> Value {
    json!({
        "tools": c.tools,
        "commands": c.commands,
        "tool_renderers": c.tool_renderers,
        "hooks": c.hooks,
        "ui": c.ui.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
        "context": c.context,
        "notifications": c.notifications,
        "confirmations": c.confirmations,
        "presentation": c.presentation,
        "menu": c.menu,
    })
}

impl DiagnosticKind {
    /// The stable name of the kind, such as `invalid_manifest`.
    pub fn as_str(&self) -> &'static str {
        match self {
            DiagnosticKind::InvalidManifest(_) => "invalid_manifest",
            DiagnosticKind::NameMismatch { .. } => "name_mismatch",
            DiagnosticKind::Shadowed { .. } => "shadowed",
            DiagnosticKind::UnreadableDirectory(_) => "unreadable_directory",
            DiagnosticKind::UnreadableRoot(_) => "unreadable_root",
        }
    }
}

impl DiscoveryDiagnostic {
    /// `{kind, path, source, message, field?}`, `field` naming the manifest member when
    /// the manifest broke a rule.
    pub fn to_value(&self) -> Value {
        let mut value = json!({
            "kind": self.kind.as_str(),
            "path": self.path,
            "source": self.source.as_str(),
            "message": self.kind.to_string(),
        });
        if let DiagnosticKind::InvalidManifest(super::LoadError::Invalid(e)) = &self.kind {
            if let Some(field) = e.field() {
                value["field"] = json!(field);
            }
        }
        value
    }
}
