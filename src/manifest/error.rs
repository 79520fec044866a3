//! Why an `extension.toml` was rejected.
//!
//! Every variant names the field it concerns (a dotted path such as
//! `entrypoint.command` or `contributes.hooks[2]`) and the rule that was broken, so
//! diagnostics can point the author at the exact line to fix.

use std::fmt;

use super::types::ApiVersion;

/// The kind of a TOML value, as reported by [`ManifestError::WrongType`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ValueKind {
    /// A string.
    String,
    /// An integer.
    Integer,
    /// A float.
    Float,
    /// A boolean.
    Boolean,
    /// A date, time or date-time.
    Datetime,
    /// An array.
    Array,
    /// A table.
    Table,
}

impl ValueKind {
    /// The kind of `value`.
    pub fn of(value: &toml::Value) -> ValueKind {
        match value {
            toml::Value::String(_) => ValueKind::String,
            toml::Value::Integer(_) => ValueKind::Integer,
            toml::Value::Float(_) => ValueKind::Float,
            toml::Value::Boolean(_) => ValueKind::Boolean,
            toml::Value::Datetime(_) => ValueKind::Datetime,
            toml::Value::Array(_) => ValueKind::Array,
            toml::Value::Table(_) => ValueKind::Table,
        }
    }

    /// A lowercase English name such as `"string"`.
    pub fn as_str(self) -> &'static str {
        match self {
            ValueKind::String => "string",
            ValueKind::Integer => "integer",
            ValueKind::Float => "float",
            ValueKind::Boolean => "boolean",
            ValueKind::Datetime => "datetime",
            ValueKind::Array => "array",
            ValueKind::Table => "table",
        }
    }
}

impl fmt::Display for ValueKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which rule an identifier (extension name, contribution name or secret name) broke.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IdentifierRule {
    /// The identifier is empty.
    Empty,
    /// The identifier is longer than `max` bytes.
    TooLong {
        /// The largest length allowed, in bytes.
        max: usize,
    },
    /// The first character is not one the identifier may start with.
    FirstCharacter {
        /// The offending character.
        ch: char,
    },
    /// A later character is not allowed.
    Character {
        /// The offending character.
        ch: char,
    },
}

impl fmt::Display for IdentifierRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IdentifierRule::Empty => f.write_str("it is empty"),
            IdentifierRule::TooLong { max } => write!(f, "it is longer than {max} bytes"),
            IdentifierRule::FirstCharacter { ch } => {
                write!(f, "it may not start with {ch:?}")
            }
            IdentifierRule::Character { ch } => write!(f, "it may not contain {ch:?}"),
        }
    }
}

/// Which rule an `[entrypoint].env` variable name broke.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EnvNameRule {
    /// The name is empty.
    Empty,
    /// The name contains `=`.
    ContainsEquals,
    /// The name contains a NUL byte.
    ContainsNul,
}

impl fmt::Display for EnvNameRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EnvNameRule::Empty => f.write_str("it is empty"),
            EnvNameRule::ContainsEquals => f.write_str("it contains '='"),
            EnvNameRule::ContainsNul => f.write_str("it contains a NUL byte"),
        }
    }
}

/// A rule of `extension.toml` (SUPPLEMENT "Manifest"; section 1.1) that a manifest broke.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ManifestError {
    /// The text is not valid TOML (including duplicate keys).
    Toml {
        /// The TOML parser's message.
        message: String,
        /// 1-based line of the error, when the parser located it.
        line: Option<usize>,
        /// 1-based column (in characters) of the error, when the parser located it.
        column: Option<usize>,
    },
    /// A key that the closed table does not define.
    UnknownKey {
        /// Dotted path of the unknown key, such as `capabilities.sandbox`.
        path: String,
        /// The known key of that table it most likely meant, such as `contributes`.
        did_you_mean: Option<String>,
    },
    /// A required field is absent.
    MissingField {
        /// Dotted path of the missing field.
        field: String,
    },
    /// A field holds a value of the wrong TOML type.
    WrongType {
        /// Dotted path of the field.
        field: String,
        /// The type the field must have.
        expected: ValueKind,
        /// The type it has.
        found: ValueKind,
    },
    /// An extension name or contribution identifier breaks the identifier rules.
    InvalidName {
        /// Dotted path of the field (`name`, `contributes.tools[0]`, ...).
        field: String,
        /// The rejected value.
        value: String,
        /// The rule it broke.
        rule: IdentifierRule,
    },
    /// `version` is not a semver version.
    InvalidVersion {
        /// The rejected value.
        value: String,
        /// The semver crate's explanation (kept as text: its error type is neither
        /// `Clone` nor `PartialEq`).
        reason: String,
    },
    /// `api_version` is not exactly one of `"0.1"`, `"0.2"`, `"0.3"`, `"0.4"`.
    InvalidApiVersion {
        /// The rejected value.
        value: String,
    },
    /// `requires_octet` is not a semver requirement.
    InvalidRequirement {
        /// The rejected value.
        value: String,
        /// The semver crate's explanation (kept as text: its error type is neither
        /// `Clone` nor `PartialEq`).
        reason: String,
    },
    /// `entrypoint.command` is empty.
    EmptyCommand,
    /// A field that must be free of control characters contains one.
    ControlCharacter {
        /// Dotted path of the field.
        field: String,
    },
    /// An `entrypoint.args` element contains a NUL byte.
    NulInArgument {
        /// Zero-based index of the argument.
        index: usize,
    },
    /// An `entrypoint.env` variable name is not usable.
    InvalidEnvName {
        /// The rejected name.
        name: String,
        /// The rule it broke.
        rule: EnvNameRule,
    },
    /// An `entrypoint.env` value contains a NUL byte.
    NulInEnvValue {
        /// The variable whose value is rejected.
        name: String,
    },
    /// `capabilities.filesystem` is not `none`, `workspace` or `unrestricted`.
    InvalidFilesystem {
        /// The rejected value.
        value: String,
    },
    /// A `capabilities.secrets` name breaks the secret-name rules (section 1.1).
    InvalidSecretName {
        /// Dotted path of the element, such as `capabilities.secrets[1]`.
        field: String,
        /// The rejected name.
        value: String,
        /// The rule it broke.
        rule: IdentifierRule,
    },
    /// A value appears twice in a list that must be duplicate-free.
    Duplicate {
        /// Dotted path of the second occurrence.
        field: String,
        /// The repeated value.
        value: String,
    },
    /// A hook name no API version defines.
    UnknownHook {
        /// Dotted path of the element.
        field: String,
        /// The unknown hook.
        name: String,
        /// The manifest's API version.
        api_version: ApiVersion,
    },
    /// A known hook that the manifest's API version does not have.
    HookNeedsApi {
        /// Dotted path of the element.
        field: String,
        /// The hook.
        name: String,
        /// The oldest API version that has it.
        min_api: ApiVersion,
        /// The manifest's API version.
        api_version: ApiVersion,
    },
    /// A `capabilities.environment` name other than the reviewed `SSH_AUTH_SOCK`.
    UnsupportedEnvironmentName {
        /// Dotted path of the element.
        field: String,
        /// The rejected name.
        name: String,
    },
    /// A field the manifest's API version does not have (such as `contributes.menu` on 0.1).
    FieldNeedsApi {
        /// Dotted path of the field.
        field: String,
        /// The oldest API version that has it.
        min_api: ApiVersion,
        /// The manifest's API version.
        api_version: ApiVersion,
    },
    /// `contributes.menu = true` without any declared command (section 1.6b).
    MenuWithoutCommands,
    /// A `contributes.ui` element is not `status`, `header` or `footer`.
    InvalidUi {
        /// Dotted path of the element.
        field: String,
        /// The rejected value.
        value: String,
    },
    /// The host's octet version does not satisfy `requires_octet`.
    RequiresOctet {
        /// The manifest's requirement.
        requirement: semver::VersionReq,
        /// The host's version.
        host: semver::Version,
    },
    /// The host version given to the `requires_octet` check is not a semver version.
    InvalidHostVersion {
        /// The rejected host version.
        host: String,
        /// The semver crate's explanation (kept as text: its error type is neither
        /// `Clone` nor `PartialEq`).
        reason: String,
    },
}

impl ManifestError {
    /// Dotted path of the field the error concerns, such as `contributes.hooks[2]`.
    ///
    /// `None` for TOML syntax errors (which carry a line and column instead) and for an
    /// invalid host version, which is not part of the manifest.
    pub fn field(&self) -> Option<String> {
        let field = match self {
            ManifestError::Toml { .. } | ManifestError::InvalidHostVersion { .. } => return None,
            ManifestError::UnknownKey { path, .. } => path.clone(),
            ManifestError::MissingField { field }
            | ManifestError::WrongType { field, .. }
            | ManifestError::InvalidName { field, .. }
            | ManifestError::ControlCharacter { field }
            | ManifestError::InvalidSecretName { field, .. }
            | ManifestError::Duplicate { field, .. }
            | ManifestError::UnknownHook { field, .. }
            | ManifestError::HookNeedsApi { field, .. }
            | ManifestError::UnsupportedEnvironmentName { field, .. }
            | ManifestError::FieldNeedsApi { field, .. }
            | ManifestError::InvalidUi { field, .. } => field.clone(),
            ManifestError::InvalidVersion { .. } => "version".to_owned(),
            ManifestError::InvalidApiVersion { .. } => "api_version".to_owned(),
            ManifestError::InvalidRequirement { .. } | ManifestError::RequiresOctet { .. } => {
                "requires_octet".to_owned()
            }
            ManifestError::EmptyCommand => "entrypoint.command".to_owned(),
            ManifestError::NulInArgument { index } => format!("entrypoint.args[{index}]"),
            ManifestError::InvalidEnvName { .. } => "entrypoint.env".to_owned(),
            ManifestError::NulInEnvValue { name } => format!("entrypoint.env.{name}"),
            ManifestError::InvalidFilesystem { .. } => "capabilities.filesystem".to_owned(),
            ManifestError::MenuWithoutCommands => "contributes.menu".to_owned(),
        };
        Some(field)
    }
}

impl fmt::Display for ManifestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ManifestError::Toml {
                message,
                line,
                column,
            } => {
                let message = message.trim_end();
                match (line, column) {
                    (Some(line), Some(column)) => write!(
                        f,
                        "extension.toml is not valid TOML at line {line}, column {column}: {message}"
                    ),
                    _ => write!(f, "extension.toml is not valid TOML: {message}"),
                }
            }
            ManifestError::UnknownKey { path, did_you_mean } => {
                write!(f, "`{path}` is not a known manifest key")?;
                if let Some(known) = did_you_mean {
                    write!(f, "; did you mean `{known}`?")?;
                }
                Ok(())
            }
            ManifestError::MissingField { field } => write!(f, "`{field}` is required"),
            ManifestError::WrongType {
                field,
                expected,
                found,
            } => write!(
                f,
                "`{field}` has the wrong type: expected {expected}, found {found}"
            ),
            ManifestError::InvalidName { field, value, rule } => write!(
                f,
                "`{field}` = {value:?} is not a valid identifier (an ASCII letter, then \
                 letters, digits, '-' or '_'): {rule}"
            ),
            ManifestError::InvalidVersion { value, reason } => {
                write!(f, "`version` = {value:?} is not a semver version: {reason}")
            }
            ManifestError::InvalidApiVersion { value } => write!(
                f,
                "`api_version` = {value:?} must be exactly \"0.1\", \"0.2\", \"0.3\" or \"0.4\""
            ),
            ManifestError::InvalidRequirement { value, reason } => write!(
                f,
                "`requires_octet` = {value:?} is not a semver requirement: {reason}"
            ),
            ManifestError::EmptyCommand => f.write_str("`entrypoint.command` must not be empty"),
            ManifestError::ControlCharacter { field } => {
                write!(f, "`{field}` must not contain control characters")
            }
            ManifestError::NulInArgument { index } => {
                write!(f, "`entrypoint.args[{index}]` must not contain a NUL byte")
            }
            ManifestError::InvalidEnvName { name, rule } => write!(
                f,
                "`entrypoint.env` variable name {name:?} is not usable: {rule}"
            ),
            ManifestError::NulInEnvValue { name } => {
                write!(f, "`entrypoint.env.{name}` must not contain a NUL byte")
            }
            ManifestError::InvalidFilesystem { value } => write!(
                f,
                "`capabilities.filesystem` = {value:?} must be \"none\", \"workspace\" or \
                 \"unrestricted\""
            ),
            ManifestError::InvalidSecretName { field, value, rule } => write!(
                f,
                "`{field}` = {value:?} is not a valid secret name (a letter or '_', then \
                 letters, digits, '_', '-' or '.'): {rule}"
            ),
            ManifestError::Duplicate { field, value } => {
                write!(
                    f,
                    "`{field}` repeats {value:?}; the list must be duplicate-free"
                )
            }
            ManifestError::UnknownHook {
                field,
                name,
                api_version,
            } => write!(
                f,
                "`{field}` = {name:?} is not a hook of API {api_version} (or of any API)"
            ),
            ManifestError::HookNeedsApi {
                field,
                name,
                min_api,
                api_version,
            } => write!(
                f,
                "`{field}` = {name:?} needs API {min_api} or later, but the manifest selects \
                 API {api_version}"
            ),
            ManifestError::UnsupportedEnvironmentName { field, name } => write!(
                f,
                "`{field}` = {name:?} is not a brokered environment name (only \
                 \"SSH_AUTH_SOCK\" is)"
            ),
            ManifestError::FieldNeedsApi {
                field,
                min_api,
                api_version,
            } => write!(
                f,
                "`{field}` needs API {min_api} or later, but the manifest selects API \
                 {api_version}"
            ),
            ManifestError::MenuWithoutCommands => f.write_str(
                "`contributes.menu` is true but `contributes.commands` declares no command",
            ),
            ManifestError::InvalidUi { field, value } => write!(
                f,
                "`{field}` = {value:?} must be \"status\", \"header\" or \"footer\""
            ),
            ManifestError::RequiresOctet { requirement, host } => write!(
                f,
                "`requires_octet` = \"{requirement}\" is not satisfied by octet {host}"
            ),
            ManifestError::InvalidHostVersion { host, reason } => {
                write!(
                    f,
                    "host octet version {host:?} is not a semver version: {reason}"
                )
            }
        }
    }
}

impl std::error::Error for ManifestError {}
