//! The closed models of API 0.3's host-driven capabilities (SUPPLEMENT "Methods in
//! brief"): `migration/detect` and `migration/import` results (`migration.adapter.v1`),
//! the `provider/stream` result and `provider/event` notifications (`provider_stream`),
//! and the `hook/run` disposition of `lifecycle_events`.
//!
//! Every model is closed: an unknown member is refused ([`ResultErrorKind::UnknownMember`]),
//! and an optional member is omitted rather than null (a null counts as absent).

use serde_json::{json, Value};

use super::error::{ResultError, ResultErrorKind};
use super::field::{
    as_array, as_bool, as_object, as_str, optional_string, required, required_string, Keyword,
    Object, ResultPath,
};
use super::json_bounds::BoundsError;
use super::path::Path;

use crate::limits::MAX_SKILL_CONTENT_BYTES;

/// Refuses the first member of `object` that `allowed` does not list.
fn closed(object: &Object, allowed: &[&str], path: &Path) -> Result<(), ResultError> {
    match object.keys().find(|k| !allowed.contains(&k.as_str())) {
        None => Ok(()),
        Some(member) => Err(path.error(ResultErrorKind::UnknownMember {
            member: member.clone(),
        })),
    }
}

/// A closed object at `path` with exactly the members `allowed` may name.
fn closed_object<'v>(
    value: &'v Value,
    allowed: &[&str],
    path: &Path,
) -> Result<&'v Object, ResultError> {
    let object = as_object(value, path)?;
    closed(object, allowed, path)?;
    Ok(object)
}

fn strings(object: &Object, key: &str, path: &Path) -> Result<Vec<String>, ResultError> {
    let key_path = path.key(key);
    as_array(required(object, key, path)?, &key_path)?
        .iter()
        .enumerate()
        .map(|(i, item)| as_str(item, &key_path.index(i)).map(str::to_owned))
        .collect()
}

fn list<T>(
    object: &Object,
    key: &str,
    path: &Path,
    mut parse: impl FnMut(&Value, &Path) -> Result<T, ResultError>,
) -> Result<Vec<T>, ResultError> {
    let key_path = path.key(key);
    as_array(required(object, key, path)?, &key_path)?
        .iter()
        .enumerate()
        .map(|(i, item)| parse(item, &key_path.index(i)))
        .collect()
}

fn keyword<K: Keyword>(object: &Object, key: &str, path: &Path) -> Result<K, ResultError> {
    super::field::keyword(required(object, key, path)?, &path.key(key))
}

macro_rules! keywords {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident = $wire:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum $name {
            $($(#[$vdoc])* $variant),+
        }

        impl Keyword for $name {
            const ALL: &'static [Self] = &[$($name::$variant),+];
            const NAMES: &'static [&'static str] = &[$($wire),+];
        }

        impl $name {
            /// The wire name.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $wire),+
                }
            }
        }
    };
}

keywords!(
    /// The severity of a migration diagnostic.
    Severity {
        /// `warning`.
        Warning = "warning",
        /// `error`.
        Error = "error",
    }
);

keywords!(
    /// The kind of a `provider/event`.
    ProviderEventKind {
        /// `started`.
        Started = "started",
        /// `text_start`.
        TextStart = "text_start",
        /// `text_delta`.
        TextDelta = "text_delta",
        /// `text_end`.
        TextEnd = "text_end",
        /// `reasoning_start`.
        ReasoningStart = "reasoning_start",
        /// `reasoning_delta`.
        ReasoningDelta = "reasoning_delta",
        /// `reasoning_end`.
        ReasoningEnd = "reasoning_end",
        /// `tool_call_start`.
        ToolCallStart = "tool_call_start",
        /// `tool_call_args_delta`.
        ToolCallArgsDelta = "tool_call_args_delta",
        /// `tool_call_end`.
        ToolCallEnd = "tool_call_end",
        /// `usage`.
        Usage = "usage",
        /// `finished`: the stream's last event.
        Finished = "finished",
        /// `error`: the stream's last event.
        Error = "error",
        /// `heartbeat`.
        Heartbeat = "heartbeat",
    }
);

impl ProviderEventKind {
    /// True for the kinds that end a stream.
    pub fn is_terminal(self) -> bool {
        matches!(self, ProviderEventKind::Finished | ProviderEventKind::Error)
    }
}

keywords!(
    /// The kind of a `hook/run` disposition on API 0.3.
    DispositionKind {
        /// `continue`.
        Continue = "continue",
        /// `deny` (never vetoes).
        Deny = "deny",
        /// `defer`.
        Defer = "defer",
    }
);

/// A migration diagnostic: `{path, severity, reason}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MigrationDiagnostic {
    /// The file it concerns.
    pub path: String,
    /// How bad it is.
    pub severity: Severity,
    /// Why.
    pub reason: String,
}

/// The result of `migration/detect`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MigrationDetection {
    /// Whether the source holds something to import.
    pub detected: bool,
    /// The configuration files found.
    pub config_paths: Vec<String>,
    /// Problems found.
    pub diagnostics: Vec<MigrationDiagnostic>,
}

/// A model an import found: `{path, provider, model}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImportedModel {
    /// The file it came from.
    pub path: String,
    /// The provider.
    pub provider: String,
    /// The model.
    pub model: String,
}

/// A skill an import found: `{path, name, content}`, content at most
/// [`MAX_SKILL_CONTENT_BYTES`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImportedSkill {
    /// The file it came from.
    pub path: String,
    /// Its name.
    pub name: String,
    /// Its text.
    pub content: String,
}

/// An MCP server an import found: `{path, name, command, args}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImportedMcpServer {
    /// The file it came from.
    pub path: String,
    /// Its name.
    pub name: String,
    /// The program.
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
}

/// The result of `migration/import`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MigrationImport {
    /// Models found.
    pub models: Vec<ImportedModel>,
    /// Skills found.
    pub skills: Vec<ImportedSkill>,
    /// MCP servers found.
    pub mcp_servers: Vec<ImportedMcpServer>,
    /// Problems found.
    pub diagnostics: Vec<MigrationDiagnostic>,
}

fn diagnostic(value: &Value, path: &Path) -> Result<MigrationDiagnostic, ResultError> {
    let o = closed_object(value, &["path", "reason", "severity"], path)?;
    Ok(MigrationDiagnostic {
        path: required_string(o, "path", path)?,
        severity: keyword(o, "severity", path)?,
        reason: required_string(o, "reason", path)?,
    })
}

/// Validates a `migration/detect` result.
pub fn migration_detection(result: &Value) -> Result<MigrationDetection, ResultError> {
    let root = Path::Root;
    let o = closed_object(result, &["config_paths", "detected", "diagnostics"], &root)?;
    Ok(MigrationDetection {
        detected: as_bool(required(o, "detected", &root)?, &root.key("detected"))?,
        config_paths: strings(o, "config_paths", &root)?,
        diagnostics: list(o, "diagnostics", &root, diagnostic)?,
    })
}

/// Validates a `migration/import` result.
pub fn migration_import(result: &Value) -> Result<MigrationImport, ResultError> {
    let root = Path::Root;
    let o = closed_object(
        result,
        &["diagnostics", "mcp_servers", "models", "skills"],
        &root,
    )?;
    Ok(MigrationImport {
        models: list(o, "models", &root, |value, path| {
            let m = closed_object(value, &["model", "path", "provider"], path)?;
            Ok(ImportedModel {
                path: required_string(m, "path", path)?,
                provider: required_string(m, "provider", path)?,
                model: required_string(m, "model", path)?,
            })
        })?,
        skills: list(o, "skills", &root, |value, path| {
            let s = closed_object(value, &["content", "name", "path"], path)?;
            let content = required_string(s, "content", path)?;
            if content.len() > MAX_SKILL_CONTENT_BYTES {
                return Err(path.key("content").error(ResultErrorKind::Bounds(
                    BoundsError::TooManyBytes {
                        max: MAX_SKILL_CONTENT_BYTES,
                    },
                )));
            }
            Ok(ImportedSkill {
                path: required_string(s, "path", path)?,
                name: required_string(s, "name", path)?,
                content,
            })
        })?,
        mcp_servers: list(o, "mcp_servers", &root, |value, path| {
            let s = closed_object(value, &["args", "command", "name", "path"], path)?;
            Ok(ImportedMcpServer {
                path: required_string(s, "path", path)?,
                name: required_string(s, "name", path)?,
                command: required_string(s, "command", path)?,
                args: strings(s, "args", path)?,
            })
        })?,
        diagnostics: list(o, "diagnostics", &root, diagnostic)?,
    })
}

/// The answer to `provider/stream`: whether the extension took the stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamAcceptance {
    /// The stream, as the host named it.
    pub stream_id: String,
    /// Whether it was accepted; a refused stream sends no events.
    pub accepted: bool,
    /// Why, when given.
    pub reason: Option<String>,
}

/// Validates a `provider/stream` result for the stream `stream_id`.
pub fn stream_acceptance(result: &Value, stream_id: &str) -> Result<StreamAcceptance, ResultError> {
    let root = Path::Root;
    let o = closed_object(result, &["accepted", "reason", "stream_id"], &root)?;
    let echoed = required_string(o, "stream_id", &root)?;
    if echoed != stream_id {
        return Err(root.key("stream_id").error(ResultErrorKind::UnknownValue {
            found: echoed,
            allowed: &["the requested stream_id"],
        }));
    }
    Ok(StreamAcceptance {
        stream_id: echoed,
        accepted: as_bool(required(o, "accepted", &root)?, &root.key("accepted"))?,
        reason: optional_string(o, "reason", &root)?,
    })
}

/// One `provider/event` of a stream, in order.
#[derive(Clone, Debug, PartialEq)]
pub struct ProviderEvent {
    /// The stream.
    pub stream_id: String,
    /// Strictly increasing per stream.
    pub sequence: u64,
    /// What happened.
    pub kind: ProviderEventKind,
    /// The kind's data, as the extension sent it.
    pub payload: Value,
}

impl ProviderEvent {
    /// The event as the wire writes it.
    pub fn to_value(&self) -> Value {
        json!({"stream_id": self.stream_id, "sequence": self.sequence,
               "kind": self.kind.as_str(), "payload": self.payload})
    }
}

/// Validates the params of a `provider/event` notification.
pub fn provider_event(params: &Value) -> Result<ProviderEvent, ResultError> {
    let root = Path::Root;
    let o = closed_object(params, &["kind", "payload", "sequence", "stream_id"], &root)?;
    let sequence = required(o, "sequence", &root)?;
    Ok(ProviderEvent {
        stream_id: required_string(o, "stream_id", &root)?,
        sequence: sequence.as_u64().ok_or_else(|| {
            root.key("sequence")
                .wrong_type(super::error::Expected::Integer)
        })?,
        kind: keyword(o, "kind", &root)?,
        payload: required(o, "payload", &root)?.clone(),
    })
}

/// The disposition a 0.3 `hook/run` answers: `{disposition: {kind, reason?}}`, the
/// reason required for `deny` and `defer`. Dispositions never veto.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LifecycleDisposition {
    /// The kind.
    pub kind: DispositionKind,
    /// Why, for `deny` and `defer`.
    pub reason: Option<String>,
}

/// Validates a 0.3 `hook/run` result.
pub fn lifecycle_disposition(result: &Value) -> Result<LifecycleDisposition, ResultError> {
    let root = Path::Root;
    let o = closed_object(result, &["disposition"], &root)?;
    let path = root.key("disposition");
    let d = closed_object(
        required(o, "disposition", &root)?,
        &["kind", "reason"],
        &path,
    )?;
    let kind: DispositionKind = keyword(d, "kind", &path)?;
    let reason = optional_string(d, "reason", &path)?;
    if kind != DispositionKind::Continue && reason.is_none() {
        return Err(path.key("reason").error(ResultErrorKind::Missing));
    }
    Ok(LifecycleDisposition { kind, reason })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migration_models_are_closed() {
        let detection = migration_detection(&json!({"detected": true, "config_paths": ["a"],
            "diagnostics": [{"path": "a", "severity": "warning", "reason": "old"}]}))
        .unwrap();
        assert!(detection.detected);
        assert_eq!(detection.diagnostics[0].severity, Severity::Warning);
        let extra = migration_detection(&json!({"detected": true, "config_paths": [],
            "diagnostics": [], "extra": 1}))
        .unwrap_err();
        assert_eq!(extra.path(), "");
        assert!(extra.to_string().contains("extra"), "{extra}");
        let bad = migration_detection(&json!({"detected": true, "config_paths": [],
            "diagnostics": [{"path": "a", "severity": "fatal", "reason": "r"}]}))
        .unwrap_err();
        assert_eq!(bad.path(), "diagnostics[0].severity");
        let import = migration_import(&json!({
            "models": [{"path": "p", "provider": "x", "model": "m"}],
            "skills": [{"path": "p", "name": "s", "content": "c".repeat(MAX_SKILL_CONTENT_BYTES + 1)}],
            "mcp_servers": [], "diagnostics": []}))
        .unwrap_err();
        assert_eq!(import.path(), "skills[0].content");
    }

    #[test]
    fn streams_and_events_are_checked() {
        let ok = stream_acceptance(&json!({"stream_id": "s1", "accepted": true}), "s1").unwrap();
        assert!(ok.accepted);
        assert!(stream_acceptance(&json!({"stream_id": "s2", "accepted": true}), "s1").is_err());
        let event = provider_event(&json!({"stream_id": "s1", "sequence": 1,
            "kind": "text_delta", "payload": {"text": "hi"}}))
        .unwrap();
        assert_eq!(event.kind, ProviderEventKind::TextDelta);
        assert!(provider_event(&json!({"stream_id": "s1", "sequence": 1,
            "kind": "text_delta", "payload": {}, "extra": 0}))
        .is_err());
        assert!(provider_event(&json!({"stream_id": "s1", "sequence": -1,
            "kind": "usage", "payload": {}}))
        .is_err());
    }

    #[test]
    fn dispositions_need_a_reason_to_deny_or_defer() {
        assert!(lifecycle_disposition(&json!({"disposition": {"kind": "continue"}})).is_ok());
        let missing = lifecycle_disposition(&json!({"disposition": {"kind": "deny"}})).unwrap_err();
        assert_eq!(missing.path(), "disposition.reason");
        assert!(
            lifecycle_disposition(&json!({"disposition": {"kind": "veto", "reason": "r"}}))
                .is_err()
        );
    }
}
