//! `manifest::parse` on arbitrary UTF-8 text (other inputs are skipped).
//!
//! Invariants: it never panics, nor do an error's `Display` and `field()`; an accepted
//! manifest obeys the rules a `Manifest` value promises (SUPPLEMENT "Manifest"), and
//! `check_requires_octet` on it never panics.

#![no_main]

use std::collections::BTreeSet;

use libfuzzer_sys::fuzz_target;
use octet_host::limits::OCTET_VERSION;
use octet_host::manifest::{
    self, hook_min_api, rules, ApiVersion, Manifest, BROKERED_ENVIRONMENT_NAMES,
};

fn assert_unique<T: Ord + std::fmt::Debug>(items: &[T], what: &str) {
    let set: BTreeSet<&T> = items.iter().collect();
    assert_eq!(
        set.len(),
        items.len(),
        "duplicate {what} accepted: {items:?}"
    );
}

fn check_accepted(manifest: &Manifest) {
    let api = manifest.api_version;
    assert!(rules::check_extension_name(&manifest.name).is_ok());
    assert!(!manifest.entrypoint.command.is_empty());
    assert!(!manifest.entrypoint.command.chars().any(char::is_control));
    assert!(!manifest
        .entrypoint
        .args
        .iter()
        .any(|arg| arg.contains('\0')));
    for name in manifest.entrypoint.env.keys() {
        assert!(rules::check_env_name(name).is_ok(), "env name {name:?}");
    }

    let capabilities = &manifest.capabilities;
    assert_unique(&capabilities.secrets, "secret");
    for secret in &capabilities.secrets {
        assert!(
            rules::check_secret_name(secret).is_ok(),
            "secret {secret:?}"
        );
    }
    for name in &capabilities.environment {
        assert!(BROKERED_ENVIRONMENT_NAMES.contains(&name.as_str()));
    }
    if api == ApiVersion::V0_1 {
        assert!(capabilities.environment.is_empty());
        assert!(!capabilities.provider_credentials);
    }

    let contributes = &manifest.contributes;
    for (names, what) in [
        (&contributes.tools, "tool"),
        (&contributes.commands, "command"),
        (&contributes.tool_renderers, "tool renderer"),
    ] {
        assert_unique(names, what);
        for name in names {
            assert!(
                rules::check_contribution_name(name).is_ok(),
                "{what} {name:?}"
            );
        }
    }
    assert_unique(&contributes.hooks, "hook");
    for hook in &contributes.hooks {
        let min_api = hook_min_api(hook).expect("an accepted hook is known");
        assert!(min_api <= api, "hook {hook} accepted on API {api}");
    }
    assert_unique(&contributes.ui, "surface");
    if contributes.menu {
        assert!(api.has_v0_2_fields());
        assert!(!contributes.commands.is_empty());
    }
    if contributes.presentation {
        assert!(api.has_v0_2_fields());
    }

    if let Err(error) = manifest::check_requires_octet(manifest, OCTET_VERSION) {
        let _ = error.to_string();
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match manifest::parse(text) {
        Ok(manifest) => check_accepted(&manifest),
        Err(error) => {
            let _ = error.to_string();
            let _ = error.field();
        }
    }
});
