//! The value rules of `extension.toml`: identifiers, secret names, hooks and brokered
//! environment names (SUPPLEMENT "Manifest"; sections 1.1 and 1.4).

use super::error::{EnvNameRule, IdentifierRule};
use super::types::ApiVersion;
use crate::limits;

/// Every hook name, with the oldest API version that has it (section 1.4, 1.4b;
/// SUPPLEMENT "Manifest").
pub const HOOKS: [(&str, ApiVersion); 11] = [
    ("before_prompt", ApiVersion::V0_1),
    ("after_response", ApiVersion::V0_1),
    ("before_tool_call", ApiVersion::V0_1),
    ("after_tool_call", ApiVersion::V0_1),
    ("provider_retry", ApiVersion::V0_2),
    ("before_persistence", ApiVersion::V0_2),
    ("post_mutation", ApiVersion::V0_2),
    ("model_turn_start", ApiVersion::V0_4),
    ("model_turn_end", ApiVersion::V0_4),
    ("session_before_compact", ApiVersion::V0_4),
    ("session_compact", ApiVersion::V0_4),
];

/// The only reviewed brokered environment name of `[capabilities].environment`
/// (section 1.1).
pub const BROKERED_ENVIRONMENT_NAMES: [&str; 1] = ["SSH_AUTH_SOCK"];

/// The oldest API version that has the hook `name`, or `None` when no version does.
pub fn hook_min_api(name: &str) -> Option<ApiVersion> {
    HOOKS
        .iter()
        .find(|(hook, _)| *hook == name)
        .map(|(_, min_api)| *min_api)
}

/// Checks an extension name: an ASCII letter, then letters, digits, `-` or `_`, at
/// most [`limits::MAX_EXTENSION_NAME_BYTES`] bytes.
pub fn check_extension_name(name: &str) -> Result<(), IdentifierRule> {
    check_identifier(
        name,
        limits::MAX_EXTENSION_NAME_BYTES,
        is_identifier_start,
        is_identifier_rest,
    )
}

/// Checks a tool, command or renderer identifier: an ASCII letter, then letters,
/// digits, `-` or `_`, at most [`limits::MAX_CONTRIBUTION_NAME_BYTES`] bytes.
pub fn check_contribution_name(name: &str) -> Result<(), IdentifierRule> {
    check_identifier(
        name,
        limits::MAX_CONTRIBUTION_NAME_BYTES,
        is_identifier_start,
        is_identifier_rest,
    )
}

/// Checks a secret name (section 1.1): at most [`limits::MAX_SECRET_NAME_BYTES`] ASCII
/// bytes; a letter or `_` first, then letters, digits, `_`, `-` or `.`.
pub fn check_secret_name(name: &str) -> Result<(), IdentifierRule> {
    check_identifier(
        name,
        limits::MAX_SECRET_NAME_BYTES,
        |ch| ch.is_ascii_alphabetic() || ch == '_',
        |ch| ch.is_ascii_alphanumeric() || matches!(ch, '_' | '-' | '.'),
    )
}

/// Checks an `[entrypoint].env` variable name: non-empty, without `=` or NUL.
pub fn check_env_name(name: &str) -> Result<(), EnvNameRule> {
    if name.is_empty() {
        Err(EnvNameRule::Empty)
    } else if name.contains('=') {
        Err(EnvNameRule::ContainsEquals)
    } else if name.contains('\0') {
        Err(EnvNameRule::ContainsNul)
    } else {
        Ok(())
    }
}

fn is_identifier_start(ch: char) -> bool {
    ch.is_ascii_alphabetic()
}

fn is_identifier_rest(ch: char) -> bool {
    ch.is_ascii_alphanumeric() || matches!(ch, '-' | '_')
}

fn check_identifier(
    name: &str,
    max_bytes: usize,
    is_start: fn(char) -> bool,
    is_rest: fn(char) -> bool,
) -> Result<(), IdentifierRule> {
    let mut chars = name.chars();
    let Some(first) = chars.next() else {
        return Err(IdentifierRule::Empty);
    };
    if name.len() > max_bytes {
        return Err(IdentifierRule::TooLong { max: max_bytes });
    }
    if !is_start(first) {
        return Err(IdentifierRule::FirstCharacter { ch: first });
    }
    match chars.find(|&ch| !is_rest(ch)) {
        Some(ch) => Err(IdentifierRule::Character { ch }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extension_names() {
        assert_eq!(check_extension_name("hello-world_2"), Ok(()));
        assert_eq!(check_extension_name("a"), Ok(()));
        assert_eq!(check_extension_name(""), Err(IdentifierRule::Empty));
        assert_eq!(
            check_extension_name("2hello"),
            Err(IdentifierRule::FirstCharacter { ch: '2' })
        );
        assert_eq!(
            check_extension_name("_hello"),
            Err(IdentifierRule::FirstCharacter { ch: '_' })
        );
        assert_eq!(
            check_extension_name("hello.world"),
            Err(IdentifierRule::Character { ch: '.' })
        );
        assert_eq!(
            check_extension_name("héllo"),
            Err(IdentifierRule::Character { ch: 'é' })
        );
        let longest = "a".repeat(limits::MAX_EXTENSION_NAME_BYTES);
        assert_eq!(check_extension_name(&longest), Ok(()));
        assert_eq!(
            check_extension_name(&format!("{longest}a")),
            Err(IdentifierRule::TooLong {
                max: limits::MAX_EXTENSION_NAME_BYTES
            })
        );
    }

    #[test]
    fn contribution_names_allow_longer_identifiers() {
        let longest = "t".repeat(limits::MAX_CONTRIBUTION_NAME_BYTES);
        assert_eq!(check_contribution_name(&longest), Ok(()));
        assert_eq!(
            check_contribution_name(&format!("{longest}t")),
            Err(IdentifierRule::TooLong {
                max: limits::MAX_CONTRIBUTION_NAME_BYTES
            })
        );
        assert_eq!(
            check_contribution_name("say hi"),
            Err(IdentifierRule::Character { ch: ' ' })
        );
    }

    #[test]
    fn secret_names() {
        assert_eq!(check_secret_name("_token"), Ok(()));
        assert_eq!(check_secret_name("api.key-2_x"), Ok(()));
        assert_eq!(
            check_secret_name("-token"),
            Err(IdentifierRule::FirstCharacter { ch: '-' })
        );
        assert_eq!(
            check_secret_name("9token"),
            Err(IdentifierRule::FirstCharacter { ch: '9' })
        );
        assert_eq!(
            check_secret_name("to/ken"),
            Err(IdentifierRule::Character { ch: '/' })
        );
        let longest = "s".repeat(limits::MAX_SECRET_NAME_BYTES);
        assert_eq!(check_secret_name(&longest), Ok(()));
        assert_eq!(
            check_secret_name(&format!("{longest}s")),
            Err(IdentifierRule::TooLong {
                max: limits::MAX_SECRET_NAME_BYTES
            })
        );
    }

    #[test]
    fn env_names() {
        assert_eq!(check_env_name("RUST_LOG"), Ok(()));
        assert_eq!(check_env_name(""), Err(EnvNameRule::Empty));
        assert_eq!(check_env_name("A=B"), Err(EnvNameRule::ContainsEquals));
        assert_eq!(check_env_name("A\0B"), Err(EnvNameRule::ContainsNul));
    }

    #[test]
    fn hook_versions() {
        assert_eq!(hook_min_api("before_prompt"), Some(ApiVersion::V0_1));
        assert_eq!(hook_min_api("after_tool_call"), Some(ApiVersion::V0_1));
        assert_eq!(hook_min_api("provider_retry"), Some(ApiVersion::V0_2));
        assert_eq!(hook_min_api("post_mutation"), Some(ApiVersion::V0_2));
        assert_eq!(hook_min_api("model_turn_end"), Some(ApiVersion::V0_4));
        assert_eq!(hook_min_api("session_start"), None);
        assert_eq!(hook_min_api("Before_prompt"), None);
    }
}
