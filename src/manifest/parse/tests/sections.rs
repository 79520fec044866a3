//! Rules of `[capabilities]` and `[contributes]`.

use super::*;

#[test]
fn filesystem_values() {
    for (value, access) in [
        ("none", FilesystemAccess::None),
        ("workspace", FilesystemAccess::Workspace),
        ("unrestricted", FilesystemAccess::Unrestricted),
    ] {
        let text = doc("0.1", &format!("[capabilities]\nfilesystem = {value:?}"));
        assert_eq!(parse(&text).unwrap().capabilities.filesystem, access);
    }
    let error = err(&doc("0.2", "[capabilities]\nfilesystem = \"Workspace\""));
    assert_eq!(
        error,
        ManifestError::InvalidFilesystem {
            value: "Workspace".to_owned()
        }
    );
    assert_field(&error, "capabilities.filesystem");
}

#[test]
fn secrets_are_duplicate_free_secret_names() {
    let ok = parse(&doc("0.1", "[capabilities]\nsecrets = [\"a\", \"_b.c-d\"]")).unwrap();
    assert_eq!(ok.capabilities.secrets, ["a", "_b.c-d"]);

    let error = err(&doc("0.2", "[capabilities]\nsecrets = [\"ok\", \"-bad\"]"));
    assert_eq!(
        error,
        ManifestError::InvalidSecretName {
            field: "capabilities.secrets[1]".to_owned(),
            value: "-bad".to_owned(),
            rule: IdentifierRule::FirstCharacter { ch: '-' }
        }
    );
    assert_field(&error, "capabilities.secrets[1]");

    let long = "s".repeat(limits::MAX_SECRET_NAME_BYTES + 1);
    let error = err(&doc(
        "0.2",
        &format!("[capabilities]\nsecrets = [{long:?}]"),
    ));
    assert!(matches!(
        error,
        ManifestError::InvalidSecretName {
            rule: IdentifierRule::TooLong {
                max: limits::MAX_SECRET_NAME_BYTES
            },
            ..
        }
    ));

    let error = err(&doc(
        "0.2",
        "[capabilities]\nsecrets = [\"a\", \"b\", \"a\"]",
    ));
    assert_eq!(
        error,
        ManifestError::Duplicate {
            field: "capabilities.secrets[2]".to_owned(),
            value: "a".to_owned()
        }
    );
    assert_field(&error, "capabilities.secrets[2]");
}

#[test]
fn environment_is_api_0_2_and_only_ssh_auth_sock() {
    let error = err(&doc(
        "0.1",
        "[capabilities]\nenvironment = [\"SSH_AUTH_SOCK\"]",
    ));
    assert_eq!(
        error,
        ManifestError::FieldNeedsApi {
            field: "capabilities.environment".to_owned(),
            min_api: ApiVersion::V0_2,
            api_version: ApiVersion::V0_1
        }
    );
    assert_field(&error, "capabilities.environment");
    // Any declaration on API 0.1 is invalid, even an empty one.
    assert!(matches!(
        err(&doc("0.1", "[capabilities]\nenvironment = []")),
        ManifestError::FieldNeedsApi { .. }
    ));

    for api in ["0.2", "0.3", "0.4"] {
        let text = doc(api, "[capabilities]\nenvironment = [\"SSH_AUTH_SOCK\"]");
        assert_eq!(
            parse(&text).unwrap().capabilities.environment,
            ["SSH_AUTH_SOCK"]
        );
    }

    let error = err(&doc(
        "0.2",
        "[capabilities]\nenvironment = [\"SSH_AUTH_SOCK\", \"AWS_SECRET_ACCESS_KEY\"]",
    ));
    assert_eq!(
        error,
        ManifestError::UnsupportedEnvironmentName {
            field: "capabilities.environment[1]".to_owned(),
            name: "AWS_SECRET_ACCESS_KEY".to_owned()
        }
    );
    assert_field(&error, "capabilities.environment[1]");

    let error = err(&doc(
        "0.2",
        "[capabilities]\nenvironment = [\"SSH_AUTH_SOCK\", \"SSH_AUTH_SOCK\"]",
    ));
    assert_eq!(
        error,
        ManifestError::Duplicate {
            field: "capabilities.environment[1]".to_owned(),
            value: "SSH_AUTH_SOCK".to_owned()
        }
    );
}

#[test]
fn provider_credentials_is_api_0_2() {
    for value in ["true", "false"] {
        let error = err(&doc(
            "0.1",
            &format!("[capabilities]\nprovider_credentials = {value}"),
        ));
        assert_eq!(
            error,
            ManifestError::FieldNeedsApi {
                field: "capabilities.provider_credentials".to_owned(),
                min_api: ApiVersion::V0_2,
                api_version: ApiVersion::V0_1
            }
        );
        assert_field(&error, "capabilities.provider_credentials");
    }
    let ok = parse(&doc("0.2", "[capabilities]\nprovider_credentials = true")).unwrap();
    assert!(ok.capabilities.provider_credentials);
}

#[test]
fn contribution_identifiers() {
    for key in ["tools", "commands", "tool_renderers"] {
        let error = err(&doc(
            "0.2",
            &format!("[contributes]\n{key} = [\"good\", \"not.good\"]"),
        ));
        let field = format!("contributes.{key}[1]");
        assert_eq!(
            error,
            ManifestError::InvalidName {
                field: field.clone(),
                value: "not.good".to_owned(),
                rule: IdentifierRule::Character { ch: '.' }
            }
        );
        assert_field(&error, &field);

        let error = err(&doc(
            "0.2",
            &format!("[contributes]\n{key} = [\"a\", \"b\", \"b\"]"),
        ));
        let field = format!("contributes.{key}[2]");
        assert_eq!(
            error,
            ManifestError::Duplicate {
                field: field.clone(),
                value: "b".to_owned()
            }
        );
        assert_field(&error, &field);
    }
    let longest = "t".repeat(limits::MAX_CONTRIBUTION_NAME_BYTES);
    let ok = parse(&doc(
        "0.2",
        &format!("[contributes]\ntools = [{longest:?}]"),
    ))
    .unwrap();
    assert_eq!(ok.contributes.tools, std::slice::from_ref(&longest));
    let error = err(&doc(
        "0.2",
        &format!("[contributes]\ntools = [\"{longest}t\"]"),
    ));
    assert!(matches!(
        error,
        ManifestError::InvalidName {
            rule: IdentifierRule::TooLong {
                max: limits::MAX_CONTRIBUTION_NAME_BYTES
            },
            ..
        }
    ));
}

#[test]
fn hooks_follow_the_api_version() {
    let legacy =
        "[\"before_prompt\", \"after_response\", \"before_tool_call\", \"after_tool_call\"]";
    for api in ApiVersion::ALL {
        let text = doc(api.as_str(), &format!("[contributes]\nhooks = {legacy}"));
        assert_eq!(parse(&text).unwrap().contributes.hooks.len(), 4);
    }

    for hook in ["provider_retry", "before_persistence", "post_mutation"] {
        let error = err(&doc(
            "0.1",
            &format!("[contributes]\nhooks = [\"before_prompt\", {hook:?}]"),
        ));
        assert_eq!(
            error,
            ManifestError::HookNeedsApi {
                field: "contributes.hooks[1]".to_owned(),
                name: hook.to_owned(),
                min_api: ApiVersion::V0_2,
                api_version: ApiVersion::V0_1
            }
        );
        assert_field(&error, "contributes.hooks[1]");
        for api in ["0.2", "0.3", "0.4"] {
            let text = doc(api, &format!("[contributes]\nhooks = [{hook:?}]"));
            assert_eq!(parse(&text).unwrap().contributes.hooks, [hook]);
        }
    }

    for hook in ["model_turn_start", "model_turn_end"] {
        for (api, version) in [
            ("0.1", ApiVersion::V0_1),
            ("0.2", ApiVersion::V0_2),
            ("0.3", ApiVersion::V0_3),
        ] {
            let error = err(&doc(api, &format!("[contributes]\nhooks = [{hook:?}]")));
            assert_eq!(
                error,
                ManifestError::HookNeedsApi {
                    field: "contributes.hooks[0]".to_owned(),
                    name: hook.to_owned(),
                    min_api: ApiVersion::V0_4,
                    api_version: version
                }
            );
        }
        let text = doc("0.4", &format!("[contributes]\nhooks = [{hook:?}]"));
        assert_eq!(parse(&text).unwrap().contributes.hooks, [hook]);
    }

    let error = err(&doc(
        "0.4",
        "[contributes]\nhooks = [\"before_prompt\", \"after_prompt\"]",
    ));
    assert_eq!(
        error,
        ManifestError::UnknownHook {
            field: "contributes.hooks[1]".to_owned(),
            name: "after_prompt".to_owned(),
            api_version: ApiVersion::V0_4
        }
    );
    assert_field(&error, "contributes.hooks[1]");

    let error = err(&doc(
        "0.2",
        "[contributes]\nhooks = [\"before_prompt\", \"post_mutation\", \"before_prompt\"]",
    ));
    assert_eq!(
        error,
        ManifestError::Duplicate {
            field: "contributes.hooks[2]".to_owned(),
            value: "before_prompt".to_owned()
        }
    );
    assert_field(&error, "contributes.hooks[2]");
}

#[test]
fn ui_is_a_duplicate_free_subset() {
    let ok = parse(&doc(
        "0.1",
        "[contributes]\nui = [\"header\", \"footer\", \"status\"]",
    ))
    .unwrap();
    assert_eq!(
        ok.contributes.ui,
        [UiSurface::Header, UiSurface::Footer, UiSurface::Status]
    );

    let error = err(&doc("0.2", "[contributes]\nui = [\"status\", \"sidebar\"]"));
    assert_eq!(
        error,
        ManifestError::InvalidUi {
            field: "contributes.ui[1]".to_owned(),
            value: "sidebar".to_owned()
        }
    );
    assert_field(&error, "contributes.ui[1]");

    let error = err(&doc("0.2", "[contributes]\nui = [\"status\", \"status\"]"));
    assert_eq!(
        error,
        ManifestError::Duplicate {
            field: "contributes.ui[1]".to_owned(),
            value: "status".to_owned()
        }
    );
}

#[test]
fn presentation_and_menu_are_api_0_2() {
    for key in ["presentation", "menu"] {
        let body = format!("[contributes]\ncommands = [\"go\"]\n{key} = false");
        let error = err(&doc("0.1", &body));
        let field = format!("contributes.{key}");
        assert_eq!(
            error,
            ManifestError::FieldNeedsApi {
                field: field.clone(),
                min_api: ApiVersion::V0_2,
                api_version: ApiVersion::V0_1
            }
        );
        assert_field(&error, &field);
        for api in ["0.2", "0.3", "0.4"] {
            let body = format!("[contributes]\ncommands = [\"go\"]\n{key} = true");
            let contributes = parse(&doc(api, &body)).unwrap().contributes;
            assert!(contributes.presentation || contributes.menu);
        }
    }
}

#[test]
fn menu_needs_a_command() {
    let error = err(&doc("0.2", "[contributes]\nmenu = true"));
    assert_eq!(error, ManifestError::MenuWithoutCommands);
    assert_field(&error, "contributes.menu");
    let error = err(&doc("0.2", "[contributes]\ncommands = []\nmenu = true"));
    assert_eq!(error, ManifestError::MenuWithoutCommands);
    let no_menu = parse(&doc("0.2", "[contributes]\nmenu = false")).unwrap();
    assert!(!no_menu.contributes.menu);
}
