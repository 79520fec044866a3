//! Parsing and validating `extension.toml` text into a [`Manifest`].
//!
//! The text is parsed as a TOML table and then walked table by table. Every table is
//! closed: a key it does not define is an error, as is a value of the wrong type, so
//! each error can name the exact dotted path of the offending field.

use std::collections::{BTreeMap, BTreeSet};

use super::error::{ManifestError, ValueKind};
use super::rules;
use super::types::{
    ApiVersion, Capabilities, Contributes, Entrypoint, FilesystemAccess, Manifest, UiSurface,
};

/// The keys of the top-level table.
const TOP_LEVEL_KEYS: [&str; 8] = [
    "name",
    "version",
    "api_version",
    "requires_octet",
    "description",
    "entrypoint",
    "capabilities",
    "contributes",
];

/// The keys of `[entrypoint]`.
const ENTRYPOINT_KEYS: [&str; 3] = ["command", "args", "env"];

/// The keys of `[capabilities]`.
const CAPABILITIES_KEYS: [&str; 6] = [
    "filesystem",
    "process",
    "network",
    "secrets",
    "environment",
    "provider_credentials",
];

/// The keys of `[contributes]`.
const CONTRIBUTES_KEYS: [&str; 10] = [
    "tools",
    "commands",
    "tool_renderers",
    "hooks",
    "ui",
    "context",
    "notifications",
    "confirmations",
    "presentation",
    "menu",
];

/// Parses and validates the text of an `extension.toml`.
///
/// Returns the first rule the manifest breaks. `requires_octet` is only parsed here;
/// [`check_requires_octet`] checks it against a host version.
pub fn parse(text: &str) -> Result<Manifest, ManifestError> {
    let root: toml::Table = text
        .parse()
        .map_err(|error: toml::de::Error| toml_error(text, &error))?;
    let top = Table::new(String::new(), &root);
    top.close(&TOP_LEVEL_KEYS)?;

    let name = top.required_string("name")?;
    rules::check_extension_name(name).map_err(|rule| ManifestError::InvalidName {
        field: "name".to_owned(),
        value: name.to_owned(),
        rule,
    })?;

    let version_text = top.required_string("version")?;
    let version =
        semver::Version::parse(version_text).map_err(|reason| ManifestError::InvalidVersion {
            value: version_text.to_owned(),
            reason: reason.to_string(),
        })?;

    let api_text = top.required_string("api_version")?;
    let api_version =
        ApiVersion::parse(api_text).ok_or_else(|| ManifestError::InvalidApiVersion {
            value: api_text.to_owned(),
        })?;

    let requires_octet = match top.string("requires_octet")? {
        Some(text) => Some(semver::VersionReq::parse(text).map_err(|reason| {
            ManifestError::InvalidRequirement {
                value: text.to_owned(),
                reason: reason.to_string(),
            }
        })?),
        None => None,
    };

    let description = top.string("description")?.map(str::to_owned);

    let entrypoint = match top.table("entrypoint")? {
        Some(table) => parse_entrypoint(&table)?,
        None => {
            return Err(ManifestError::MissingField {
                field: "entrypoint".to_owned(),
            })
        }
    };
    let capabilities = match top.table("capabilities")? {
        Some(table) => parse_capabilities(&table, api_version)?,
        None => Capabilities::default(),
    };
    let contributes = match top.table("contributes")? {
        Some(table) => parse_contributes(&table, api_version)?,
        None => Contributes::default(),
    };

    Ok(Manifest {
        name: name.to_owned(),
        version,
        api_version,
        requires_octet,
        description,
        entrypoint,
        capabilities,
        contributes,
    })
}

/// Checks the manifest's `requires_octet` requirement against the host's octet version
/// (normally [`crate::limits::OCTET_VERSION`]). A manifest without a requirement accepts
/// every host. Run this before any process starts.
pub fn check_requires_octet(manifest: &Manifest, host_version: &str) -> Result<(), ManifestError> {
    let Some(requirement) = &manifest.requires_octet else {
        return Ok(());
    };
    let host = semver::Version::parse(host_version).map_err(|reason| {
        ManifestError::InvalidHostVersion {
            host: host_version.to_owned(),
            reason: reason.to_string(),
        }
    })?;
    if requirement.matches(&host) {
        Ok(())
    } else {
        Err(ManifestError::RequiresOctet {
            requirement: requirement.clone(),
            host,
        })
    }
}

fn parse_entrypoint(table: &Table<'_>) -> Result<Entrypoint, ManifestError> {
    table.close(&ENTRYPOINT_KEYS)?;

    let command = table.required_string("command")?;
    if command.is_empty() {
        return Err(ManifestError::EmptyCommand);
    }
    if command.chars().any(char::is_control) {
        return Err(ManifestError::ControlCharacter {
            field: table.path("command"),
        });
    }

    let mut args = Vec::new();
    for (index, (_, arg)) in table.string_array("args")?.into_iter().enumerate() {
        if arg.contains('\0') {
            return Err(ManifestError::NulInArgument { index });
        }
        args.push(arg.to_owned());
    }

    let mut env = BTreeMap::new();
    if let Some(env_table) = table.table("env")? {
        for (name, value) in env_table.table {
            rules::check_env_name(name).map_err(|rule| ManifestError::InvalidEnvName {
                name: name.clone(),
                rule,
            })?;
            let value = env_table.expect_string(&env_table.path(name), value)?;
            if value.contains('\0') {
                return Err(ManifestError::NulInEnvValue { name: name.clone() });
            }
            env.insert(name.clone(), value.to_owned());
        }
    }

    Ok(Entrypoint {
        command: command.to_owned(),
        args,
        env,
    })
}

fn parse_capabilities(
    table: &Table<'_>,
    api_version: ApiVersion,
) -> Result<Capabilities, ManifestError> {
    table.close(&CAPABILITIES_KEYS)?;

    let filesystem = match table.string("filesystem")? {
        None | Some("none") => FilesystemAccess::None,
        Some("workspace") => FilesystemAccess::Workspace,
        Some("unrestricted") => FilesystemAccess::Unrestricted,
        Some(other) => {
            return Err(ManifestError::InvalidFilesystem {
                value: other.to_owned(),
            })
        }
    };
    let process = table.bool("process")?.unwrap_or(false);
    let network = table.bool("network")?.unwrap_or(false);

    let secrets = table.string_array("secrets")?;
    for (field, secret) in &secrets {
        rules::check_secret_name(secret).map_err(|rule| ManifestError::InvalidSecretName {
            field: field.clone(),
            value: (*secret).to_owned(),
            rule,
        })?;
    }
    let secrets = duplicate_free(secrets)?;

    table.require_api("environment", ApiVersion::V0_2, api_version)?;
    let environment = table.string_array("environment")?;
    for (field, name) in &environment {
        if !rules::BROKERED_ENVIRONMENT_NAMES.contains(name) {
            return Err(ManifestError::UnsupportedEnvironmentName {
                field: field.clone(),
                name: (*name).to_owned(),
            });
        }
    }
    let environment = duplicate_free(environment)?;

    table.require_api("provider_credentials", ApiVersion::V0_2, api_version)?;
    let provider_credentials = table.bool("provider_credentials")?.unwrap_or(false);

    Ok(Capabilities {
        filesystem,
        process,
        network,
        secrets,
        environment,
        provider_credentials,
    })
}

fn parse_contributes(
    table: &Table<'_>,
    api_version: ApiVersion,
) -> Result<Contributes, ManifestError> {
    table.close(&CONTRIBUTES_KEYS)?;

    let tools = identifiers(table, "tools")?;
    let commands = identifiers(table, "commands")?;
    let tool_renderers = identifiers(table, "tool_renderers")?;

    let hooks = table.string_array("hooks")?;
    for (field, hook) in &hooks {
        match rules::hook_min_api(hook) {
            None => {
                return Err(ManifestError::UnknownHook {
                    field: field.clone(),
                    name: (*hook).to_owned(),
                    api_version,
                })
            }
            Some(min_api) if api_version < min_api => {
                return Err(ManifestError::HookNeedsApi {
                    field: field.clone(),
                    name: (*hook).to_owned(),
                    min_api,
                    api_version,
                })
            }
            Some(_) => {}
        }
    }
    let hooks = duplicate_free(hooks)?;

    let ui_names = table.string_array("ui")?;
    for (field, surface) in &ui_names {
        if UiSurface::parse(surface).is_none() {
            return Err(ManifestError::InvalidUi {
                field: field.clone(),
                value: (*surface).to_owned(),
            });
        }
    }
    let ui = duplicate_free(ui_names)?
        .iter()
        .filter_map(|surface| UiSurface::parse(surface))
        .collect();

    let context = table.bool("context")?.unwrap_or(false);
    let notifications = table.bool("notifications")?.unwrap_or(false);
    let confirmations = table.bool("confirmations")?.unwrap_or(false);

    table.require_api("presentation", ApiVersion::V0_2, api_version)?;
    let presentation = table.bool("presentation")?.unwrap_or(false);

    table.require_api("menu", ApiVersion::V0_2, api_version)?;
    let menu = table.bool("menu")?.unwrap_or(false);
    if menu && commands.is_empty() {
        return Err(ManifestError::MenuWithoutCommands);
    }

    Ok(Contributes {
        tools,
        commands,
        tool_renderers,
        hooks,
        ui,
        context,
        notifications,
        confirmations,
        presentation,
        menu,
    })
}

/// Reads a duplicate-free list of tool, command or renderer identifiers.
fn identifiers(table: &Table<'_>, key: &str) -> Result<Vec<String>, ManifestError> {
    let names = table.string_array(key)?;
    for (field, name) in &names {
        rules::check_contribution_name(name).map_err(|rule| ManifestError::InvalidName {
            field: field.clone(),
            value: (*name).to_owned(),
            rule,
        })?;
    }
    duplicate_free(names)
}

/// Returns the values in order, or a [`ManifestError::Duplicate`] naming the second
/// occurrence of the first repeated value.
fn duplicate_free(items: Vec<(String, &str)>) -> Result<Vec<String>, ManifestError> {
    let mut seen = BTreeSet::new();
    let mut values = Vec::with_capacity(items.len());
    for (field, value) in items {
        if !seen.insert(value) {
            return Err(ManifestError::Duplicate {
                field,
                value: value.to_owned(),
            });
        }
        values.push(value.to_owned());
    }
    Ok(values)
}

/// Converts a TOML syntax error into [`ManifestError::Toml`] with a 1-based line and
/// column.
fn toml_error(text: &str, error: &toml::de::Error) -> ManifestError {
    let (line, column) = match error.span() {
        Some(span) => {
            let (line, column) = line_column(text, span.start);
            (Some(line), Some(column))
        }
        None => (None, None),
    };
    ManifestError::Toml {
        message: error.message().to_owned(),
        line,
        column,
    }
}

/// The 1-based line and column (in characters) of byte `offset` in `text`.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |newline| newline + 1);
    let column = before[line_start..].chars().count() + 1;
    (line, column)
}

/// Joins a table path and a key into a dotted path, quoting keys that are not bare.
fn join(prefix: &str, key: &str) -> String {
    let bare = !key.is_empty()
        && key
            .chars()
            .all(|ch| ch.is_ascii_alphanumeric() || matches!(ch, '-' | '_'));
    let key = if bare {
        key.to_owned()
    } else {
        format!("{key:?}")
    };
    if prefix.is_empty() {
        key
    } else {
        format!("{prefix}.{key}")
    }
}

/// A TOML table being validated, together with its dotted path.
struct Table<'a> {
    /// Dotted path of the table; empty for the top level.
    prefix: String,
    table: &'a toml::Table,
}

impl<'a> Table<'a> {
    fn new(prefix: String, table: &'a toml::Table) -> Table<'a> {
        Table { prefix, table }
    }

    /// Dotted path of `key` in this table.
    fn path(&self, key: &str) -> String {
        join(&self.prefix, key)
    }

    /// Rejects every key not in `allowed`.
    fn close(&self, allowed: &[&str]) -> Result<(), ManifestError> {
        match self
            .table
            .keys()
            .find(|key| !allowed.contains(&key.as_str()))
        {
            Some(key) => Err(ManifestError::UnknownKey {
                path: self.path(key),
                did_you_mean: crate::suggest::closest(key, allowed.iter().copied())
                    .map(|known| self.path(known)),
            }),
            None => Ok(()),
        }
    }

    /// Rejects `key` when it is present but the manifest's API version lacks it.
    fn require_api(
        &self,
        key: &str,
        min_api: ApiVersion,
        api_version: ApiVersion,
    ) -> Result<(), ManifestError> {
        if self.table.contains_key(key) && api_version < min_api {
            Err(ManifestError::FieldNeedsApi {
                field: self.path(key),
                min_api,
                api_version,
            })
        } else {
            Ok(())
        }
    }

    fn expect_string(&self, field: &str, value: &'a toml::Value) -> Result<&'a str, ManifestError> {
        match value {
            toml::Value::String(text) => Ok(text),
            other => Err(wrong_type(field, ValueKind::String, other)),
        }
    }

    fn string(&self, key: &str) -> Result<Option<&'a str>, ManifestError> {
        match self.table.get(key) {
            None => Ok(None),
            Some(value) => self.expect_string(&self.path(key), value).map(Some),
        }
    }

    fn required_string(&self, key: &str) -> Result<&'a str, ManifestError> {
        self.string(key)?
            .ok_or_else(|| ManifestError::MissingField {
                field: self.path(key),
            })
    }

    fn bool(&self, key: &str) -> Result<Option<bool>, ManifestError> {
        match self.table.get(key) {
            None => Ok(None),
            Some(toml::Value::Boolean(value)) => Ok(Some(*value)),
            Some(other) => Err(wrong_type(&self.path(key), ValueKind::Boolean, other)),
        }
    }

    fn table(&self, key: &str) -> Result<Option<Table<'a>>, ManifestError> {
        match self.table.get(key) {
            None => Ok(None),
            Some(toml::Value::Table(table)) => Ok(Some(Table::new(self.path(key), table))),
            Some(other) => Err(wrong_type(&self.path(key), ValueKind::Table, other)),
        }
    }

    /// Reads an optional array of strings (absent means empty), pairing each element
    /// with its dotted path such as `contributes.hooks[2]`.
    fn string_array(&self, key: &str) -> Result<Vec<(String, &'a str)>, ManifestError> {
        let field = self.path(key);
        match self.table.get(key) {
            None => Ok(Vec::new()),
            Some(toml::Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(index, item)| {
                    let item_field = format!("{field}[{index}]");
                    let text = self.expect_string(&item_field, item)?;
                    Ok((item_field, text))
                })
                .collect(),
            Some(other) => Err(wrong_type(&field, ValueKind::Array, other)),
        }
    }
}

fn wrong_type(field: &str, expected: ValueKind, found: &toml::Value) -> ManifestError {
    ManifestError::WrongType {
        field: field.to_owned(),
        expected,
        found: ValueKind::of(found),
    }
}

#[cfg(test)]
mod tests;
