//! Unit tests of `parse`: every rule, with the field path each error names.

use super::*;
use crate::limits;
use crate::manifest::error::{EnvNameRule, IdentifierRule};

/// A valid manifest selecting `api`, with `body` appended after `[entrypoint]`'s
/// `command` (so bare keys in `body` land in `[entrypoint]` until a new table starts).
fn doc(api: &str, body: &str) -> String {
    format!(
        "name = \"hello\"\nversion = \"1.2.3\"\napi_version = \"{api}\"\n\
         [entrypoint]\ncommand = \"bin/hello\"\n{body}\n"
    )
}

fn err(text: &str) -> ManifestError {
    match parse(text) {
        Ok(manifest) => panic!("expected an error, parsed {manifest:?}"),
        Err(error) => error,
    }
}

/// Asserts the error's field path and that its message names the field.
fn assert_field(error: &ManifestError, field: &str) {
    assert_eq!(error.field().as_deref(), Some(field), "{error:?}");
    assert!(
        error.to_string().contains(field),
        "message {:?} does not name {field}",
        error.to_string()
    );
}

#[test]
fn parses_every_field() {
    let text = r#"
name = "hello-world"
version = "0.3.1-beta.1"
api_version = "0.4"
requires_octet = "=0.8.0"
description = "Greets people"

[entrypoint]
command = "bin/hello"
args = ["--serve", ""]
env = { RUST_LOG = "debug", EMPTY = "" }

[capabilities]
filesystem = "workspace"
process = true
network = true
secrets = ["api_token", "_x.y-z"]
environment = ["SSH_AUTH_SOCK"]
provider_credentials = true

[contributes]
tools = ["hello_world", "greet"]
commands = ["hello"]
tool_renderers = ["hello_world"]
hooks = ["before_prompt", "provider_retry", "model_turn_start", "model_turn_end"]
ui = ["footer", "status"]
context = true
notifications = true
confirmations = true
presentation = true
menu = true
"#;
    let manifest = parse(text).unwrap();
    assert_eq!(manifest.name, "hello-world");
    assert_eq!(
        manifest.version,
        semver::Version::parse("0.3.1-beta.1").unwrap()
    );
    assert_eq!(manifest.api_version, ApiVersion::V0_4);
    assert_eq!(
        manifest.requires_octet,
        Some(semver::VersionReq::parse("=0.8.0").unwrap())
    );
    assert_eq!(manifest.description.as_deref(), Some("Greets people"));
    assert_eq!(manifest.entrypoint.command, "bin/hello");
    assert_eq!(manifest.entrypoint.args, ["--serve", ""]);
    assert_eq!(
        manifest.entrypoint.env,
        BTreeMap::from([
            ("EMPTY".to_owned(), String::new()),
            ("RUST_LOG".to_owned(), "debug".to_owned()),
        ])
    );
    assert_eq!(
        manifest.capabilities,
        Capabilities {
            filesystem: FilesystemAccess::Workspace,
            process: true,
            network: true,
            secrets: vec!["api_token".to_owned(), "_x.y-z".to_owned()],
            environment: vec!["SSH_AUTH_SOCK".to_owned()],
            provider_credentials: true,
        }
    );
    assert_eq!(
        manifest.contributes,
        Contributes {
            tools: vec!["hello_world".to_owned(), "greet".to_owned()],
            commands: vec!["hello".to_owned()],
            tool_renderers: vec!["hello_world".to_owned()],
            hooks: vec![
                "before_prompt".to_owned(),
                "provider_retry".to_owned(),
                "model_turn_start".to_owned(),
                "model_turn_end".to_owned(),
            ],
            ui: vec![UiSurface::Footer, UiSurface::Status],
            context: true,
            notifications: true,
            confirmations: true,
            presentation: true,
            menu: true,
        }
    );
}

#[test]
fn optional_tables_default() {
    let manifest = parse(&doc("0.1", "")).unwrap();
    assert_eq!(manifest.api_version, ApiVersion::V0_1);
    assert_eq!(manifest.requires_octet, None);
    assert_eq!(manifest.description, None);
    assert!(manifest.entrypoint.args.is_empty());
    assert!(manifest.entrypoint.env.is_empty());
    assert_eq!(manifest.capabilities, Capabilities::default());
    assert_eq!(manifest.capabilities.filesystem, FilesystemAccess::None);
    assert_eq!(manifest.contributes, Contributes::default());
}

#[test]
fn parses_the_reference_api_0_1_example() {
    let text = r#"
name = "hello-world"
version = "0.1.0"
api_version = "0.1"

[entrypoint]
command = "hello-world"

[capabilities]
filesystem = "none"
process = false
network = false

[contributes]
tools = ["hello_world"]
commands = ["hello"]
hooks = ["before_prompt", "after_response"]
ui = ["status"]
context = true
tool_renderers = ["hello_world"]
notifications = true
confirmations = false
"#;
    let manifest = parse(text).unwrap();
    assert_eq!(
        manifest.contributes.hooks,
        ["before_prompt", "after_response"]
    );
    assert_eq!(manifest.contributes.ui, [UiSurface::Status]);
}

#[test]
fn every_api_version_is_accepted_exactly() {
    for api in ApiVersion::ALL {
        assert_eq!(parse(&doc(api.as_str(), "")).unwrap().api_version, api);
    }
    for bad in ["0.5", "0.2.0", " 0.2", "0.10", "1", ""] {
        let error = err(&doc(bad, ""));
        assert_eq!(
            error,
            ManifestError::InvalidApiVersion {
                value: bad.to_owned()
            }
        );
        assert_field(&error, "api_version");
    }
    let error = err("name = \"x\"\nversion = \"1.0.0\"\napi_version = 0.2\n");
    assert!(matches!(
        error,
        ManifestError::WrongType { ref field, expected: ValueKind::String, found: ValueKind::Float }
            if field == "api_version"
    ));
}

#[test]
fn toml_syntax_errors_carry_line_and_column() {
    let error = err("name = \"hello\"\nversion = 1.2.3\n");
    match &error {
        ManifestError::Toml { line, column, .. } => {
            assert_eq!(*line, Some(2));
            assert!(column.is_some());
        }
        other => panic!("unexpected {other:?}"),
    }
    assert_eq!(error.field(), None);
    assert!(error.to_string().contains("line 2"), "{error}");

    let duplicate = err("name = \"a\"\nname = \"b\"\n");
    assert!(matches!(
        duplicate,
        ManifestError::Toml { line: Some(2), .. }
    ));
}

#[test]
fn line_column_counts_characters() {
    assert_eq!(line_column("ab\ncdé\nx", 0), (1, 1));
    assert_eq!(line_column("ab\ncdé\nx", 3), (2, 1));
    assert_eq!(line_column("ab\ncdé\nx", 8), (3, 1));
    assert_eq!(line_column("ab\ncdé\nx", 7), (2, 4));
}

#[test]
fn unknown_keys_are_rejected_in_every_table() {
    let cases = [
        (
            doc("0.2", "").replace("name =", "extra = 1\nname ="),
            "extra",
        ),
        (doc("0.2", "shell = true"), "entrypoint.shell"),
        (
            doc("0.2", "[capabilities]\nsandbox = true"),
            "capabilities.sandbox",
        ),
        (
            doc("0.2", "[contributes]\nwidgets = []"),
            "contributes.widgets",
        ),
        (
            doc("0.2", "[contributes]\n\"odd key\" = 1"),
            "contributes.\"odd key\"",
        ),
    ];
    for (text, path) in cases {
        let error = err(&text);
        assert!(
            matches!(&error, ManifestError::UnknownKey { path: p, .. } if p == path),
            "{error:?}"
        );
        assert_field(&error, path);
    }
}

#[test]
fn required_fields() {
    let full = doc("0.2", "");
    let cases = [
        (full.replace("name = \"hello\"\n", ""), "name"),
        (full.replace("version = \"1.2.3\"\n", ""), "version"),
        (full.replace("api_version = \"0.2\"\n", ""), "api_version"),
        (
            "name = \"a\"\nversion = \"1.0.0\"\napi_version = \"0.2\"\n".to_owned(),
            "entrypoint",
        ),
        (
            full.replace("command = \"bin/hello\"\n", ""),
            "entrypoint.command",
        ),
    ];
    for (text, field) in cases {
        let error = err(&text);
        assert_eq!(
            error,
            ManifestError::MissingField {
                field: field.to_owned()
            }
        );
        assert_field(&error, field);
    }
}

#[test]
fn wrong_types_name_the_field() {
    let cases = [
        (
            doc("0.2", "").replace("name = \"hello\"", "name = 7"),
            "name",
            ValueKind::String,
            ValueKind::Integer,
        ),
        (
            "name = \"a\"\nversion = \"1.0.0\"\napi_version = \"0.2\"\nentrypoint = \"x\"\n"
                .to_owned(),
            "entrypoint",
            ValueKind::Table,
            ValueKind::String,
        ),
        (
            doc("0.2", "args = \"--serve\""),
            "entrypoint.args",
            ValueKind::Array,
            ValueKind::String,
        ),
        (
            doc("0.2", "args = [\"a\", 2]"),
            "entrypoint.args[1]",
            ValueKind::String,
            ValueKind::Integer,
        ),
        (
            doc("0.2", "env = { FOO = true }"),
            "entrypoint.env.FOO",
            ValueKind::String,
            ValueKind::Boolean,
        ),
        (
            doc("0.2", "env = [\"FOO=1\"]"),
            "entrypoint.env",
            ValueKind::Table,
            ValueKind::Array,
        ),
        (
            doc("0.2", "[capabilities]\nprocess = \"yes\""),
            "capabilities.process",
            ValueKind::Boolean,
            ValueKind::String,
        ),
        (
            doc("0.2", "[capabilities]\nfilesystem = true"),
            "capabilities.filesystem",
            ValueKind::String,
            ValueKind::Boolean,
        ),
        (
            doc("0.2", "[contributes]\nhooks = [\"before_prompt\", [\"x\"]]"),
            "contributes.hooks[1]",
            ValueKind::String,
            ValueKind::Array,
        ),
        (
            doc("0.2", "[contributes]\nmenu = 1979-05-27"),
            "contributes.menu",
            ValueKind::Boolean,
            ValueKind::Datetime,
        ),
        (
            doc("0.2", "[[contributes]]\ntools = []"),
            "contributes",
            ValueKind::Table,
            ValueKind::Array,
        ),
        (
            doc("0.2", "").replace("command = \"bin/hello\"", "command = 1.5"),
            "entrypoint.command",
            ValueKind::String,
            ValueKind::Float,
        ),
    ];
    for (text, field, expected, found) in cases {
        let error = err(&text);
        assert_eq!(
            error,
            ManifestError::WrongType {
                field: field.to_owned(),
                expected,
                found
            }
        );
        assert_field(&error, field);
    }
}

#[test]
fn extension_names_are_identifiers() {
    let too_long = "a".repeat(limits::MAX_EXTENSION_NAME_BYTES + 1);
    let cases = [
        ("2hello", IdentifierRule::FirstCharacter { ch: '2' }),
        ("", IdentifierRule::Empty),
        ("hello world", IdentifierRule::Character { ch: ' ' }),
        (
            too_long.as_str(),
            IdentifierRule::TooLong {
                max: limits::MAX_EXTENSION_NAME_BYTES,
            },
        ),
    ];
    for (name, rule) in cases {
        let text = doc("0.2", "").replace("name = \"hello\"", &format!("name = {name:?}"));
        let error = err(&text);
        assert_eq!(
            error,
            ManifestError::InvalidName {
                field: "name".to_owned(),
                value: name.to_owned(),
                rule
            }
        );
        assert_field(&error, "name");
    }
    let longest = "a".repeat(limits::MAX_EXTENSION_NAME_BYTES);
    let text = doc("0.2", "").replace("name = \"hello\"", &format!("name = {longest:?}"));
    assert_eq!(parse(&text).unwrap().name, longest);
}

#[test]
fn versions_and_requirements_are_semver() {
    for bad in ["1.2", "v1.2.3", "01.2.3", ""] {
        let text = doc("0.2", "").replace("\"1.2.3\"", &format!("{bad:?}"));
        let error = err(&text);
        assert!(
            matches!(&error, ManifestError::InvalidVersion { value, .. } if value == bad),
            "{error:?}"
        );
        assert_field(&error, "version");
    }
    let text = doc("0.2", "").replace("name =", "requires_octet = \"not a req\"\nname =");
    let error = err(&text);
    assert!(
        matches!(&error, ManifestError::InvalidRequirement { value, .. } if value == "not a req")
    );
    assert_field(&error, "requires_octet");
}

#[test]
fn entrypoint_command_rules() {
    let empty = doc("0.2", "").replace("command = \"bin/hello\"", "command = \"\"");
    let error = err(&empty);
    assert_eq!(error, ManifestError::EmptyCommand);
    assert_field(&error, "entrypoint.command");

    for control in ["\\t", "\\n", "\\u007f", "\\u0085", "\\u0000"] {
        let text = doc("0.2", "").replace(
            "command = \"bin/hello\"",
            &format!("command = \"bin/hel{control}lo\""),
        );
        let error = err(&text);
        assert_eq!(
            error,
            ManifestError::ControlCharacter {
                field: "entrypoint.command".to_owned()
            }
        );
        assert_field(&error, "entrypoint.command");
    }
    let spaced = doc("0.2", "").replace("bin/hello", "/opt/my tools/hello");
    assert_eq!(
        parse(&spaced).unwrap().entrypoint.command,
        "/opt/my tools/hello"
    );
}

#[test]
fn arguments_may_not_contain_nul() {
    let error = err(&doc("0.2", "args = [\"ok\", \"a\\u0000b\"]"));
    assert_eq!(error, ManifestError::NulInArgument { index: 1 });
    assert_field(&error, "entrypoint.args[1]");
    let tabs = parse(&doc("0.2", "args = [\"a\\tb\"]")).unwrap();
    assert_eq!(tabs.entrypoint.args, ["a\tb"]);
}

#[test]
fn env_names_and_values() {
    let cases = [
        ("\"\" = \"x\"", "", EnvNameRule::Empty),
        ("\"A=B\" = \"x\"", "A=B", EnvNameRule::ContainsEquals),
        ("\"A\\u0000B\" = \"x\"", "A\0B", EnvNameRule::ContainsNul),
    ];
    for (entry, name, rule) in cases {
        let error = err(&doc("0.2", &format!("[entrypoint.env]\n{entry}")));
        assert_eq!(
            error,
            ManifestError::InvalidEnvName {
                name: name.to_owned(),
                rule
            }
        );
        assert_field(&error, "entrypoint.env");
    }
    let error = err(&doc("0.2", "[entrypoint.env]\nFOO = \"a\\u0000\""));
    assert_eq!(
        error,
        ManifestError::NulInEnvValue {
            name: "FOO".to_owned()
        }
    );
    assert_field(&error, "entrypoint.env.FOO");
}

#[test]
fn requires_octet_is_checked_against_the_host() {
    let unconstrained = parse(&doc("0.2", "")).unwrap();
    assert_eq!(
        check_requires_octet(&unconstrained, limits::OCTET_VERSION),
        Ok(())
    );

    let with = |requirement: &str| {
        let text = doc("0.2", "").replace(
            "name =",
            &format!("requires_octet = {requirement:?}\nname ="),
        );
        parse(&text).unwrap()
    };
    assert_eq!(
        check_requires_octet(&with("=0.8.0"), limits::OCTET_VERSION),
        Ok(())
    );
    assert_eq!(
        check_requires_octet(&with(">=0.7, <0.9"), limits::OCTET_VERSION),
        Ok(())
    );

    let error = check_requires_octet(&with("=0.9.0"), limits::OCTET_VERSION).unwrap_err();
    assert_eq!(
        error,
        ManifestError::RequiresOctet {
            requirement: semver::VersionReq::parse("=0.9.0").unwrap(),
            host: semver::Version::parse(limits::OCTET_VERSION).unwrap()
        }
    );
    assert_field(&error, "requires_octet");
    assert!(error.to_string().contains("0.8.0"), "{error}");

    let error = check_requires_octet(&with("=0.8.0"), "eight").unwrap_err();
    assert!(matches!(error, ManifestError::InvalidHostVersion { ref host, .. } if host == "eight"));
    assert_eq!(error.field(), None);
}

#[test]
fn the_first_broken_rule_is_reported_in_document_order() {
    // An unknown top-level key is found before a bad name.
    let text = doc("0.2", "").replace("name = \"hello\"", "name = \"2x\"\nbogus = 1");
    assert!(matches!(err(&text), ManifestError::UnknownKey { .. }));
    // The API version gates fields before their values are looked at.
    let text = doc("0.1", "[capabilities]\nenvironment = [\"NOT_ALLOWED\"]");
    assert!(matches!(err(&text), ManifestError::FieldNeedsApi { .. }));
}

mod sections;

#[test]
fn an_unknown_key_names_the_key_it_most_likely_meant() {
    let text = doc("0.2", "[contribute]\ntools = [\"x\"]");
    let error = err(&text);
    assert_eq!(
        error.to_string(),
        "`contribute` is not a known manifest key; did you mean `contributes`?"
    );
}
