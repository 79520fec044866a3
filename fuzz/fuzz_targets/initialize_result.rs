//! `negotiation::validate_initialize_result` on arbitrary JSON results.
//!
//! The input is one JSON document (inputs that are not JSON are skipped), validated as
//! the `initialize` result of a fixed manifest for each API version (0.1, 0.2, 0.3 and
//! 0.4), each with two offers: the reference default (`InitializeOffer::default_for`)
//! and the widest offer the version allows (every optional feature, bulk storage, a
//! concurrency limit of 8).
//!
//! Invariants: it never panics; an accepted result respects what the offer and the
//! manifest allow (features offered and complete, concurrency within the offer, catalog
//! sizes, names unique, the declared tool and command sets unless negotiated away,
//! subscriptions only with `lifecycle_events`, every output schema compiled); an
//! accepted API 0.3 result has a contract within the offer (required entries present,
//! only offered ones, limits at most the offer, tools within `max_tools`) and no
//! commands, and only API 0.3 results have a contract.

#![no_main]

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use octet_host::limits;
use octet_host::manifest::{
    ApiVersion, Capabilities, Contributes, Entrypoint, FilesystemAccess, LocatedManifest, Manifest,
    Source, UiSurface,
};
use octet_host::negotiation::{
    validate_initialize_result, BulkLimits, BulkObjectsOffer, Capability, ContractMethod, Feature,
    InitializeOffer, Negotiated,
};
use serde_json::Value;

/// A manifest like the reference's hello-world, for `api`.
fn located(api: ApiVersion) -> LocatedManifest {
    let v0_2 = api.has_v0_2_fields();
    let dir = PathBuf::from("/home/user/.octet/extensions/hello-world");
    LocatedManifest {
        manifest: Manifest {
            name: "hello-world".into(),
            version: semver::Version::new(0, 1, 0),
            api_version: api,
            requires_octet: None,
            description: Some("Greets people".into()),
            entrypoint: Entrypoint {
                command: "hello-world".into(),
                args: Vec::new(),
                env: BTreeMap::new(),
            },
            capabilities: Capabilities {
                filesystem: FilesystemAccess::Workspace,
                process: false,
                network: false,
                secrets: if v0_2 {
                    vec!["api_token".into()]
                } else {
                    Vec::new()
                },
                environment: Vec::new(),
                provider_credentials: v0_2,
            },
            contributes: Contributes {
                tools: vec!["hello_world".into(), "greet".into()],
                commands: vec!["hello".into()],
                tool_renderers: vec!["hello_world".into()],
                hooks: vec!["before_prompt".into(), "after_response".into()],
                ui: vec![UiSurface::Status],
                context: true,
                notifications: true,
                confirmations: false,
                presentation: false,
                menu: v0_2,
            },
        },
        manifest_path: dir.join("extension.toml"),
        dir,
        source: Source::Global,
    }
}

/// Every optional feature `api` can carry, with bulk storage when that is one of them;
/// on API 0.3 every contract capability and method.
fn widest_offer(located: &LocatedManifest) -> InitializeOffer {
    let api = located.manifest.api_version;
    let mut offer =
        InitializeOffer::default_for(api, &located.manifest).with_max_concurrent_requests(8);
    if api == ApiVersion::V0_3 {
        for capability in Capability::ALL {
            offer = offer.with_contract_capability(capability);
        }
        for method in ContractMethod::ALL {
            offer = offer.with_contract_method(method);
        }
    }
    for feature in Feature::ALL {
        if feature.is_required() || !feature.available_on(api) {
            continue;
        }
        offer = if feature == Feature::BulkObjectsV1 {
            offer.with_bulk_objects(BulkObjectsOffer {
                transfer_directory: PathBuf::from("/tmp/octet-bulk"),
                limits: BulkLimits::default(),
            })
        } else {
            offer.with_feature(feature)
        };
    }
    offer
}

struct Case {
    located: LocatedManifest,
    offer: InitializeOffer,
}

fn cases() -> &'static [Case] {
    static CASES: OnceLock<Vec<Case>> = OnceLock::new();
    CASES.get_or_init(|| {
        let mut cases = Vec::new();
        for api in ApiVersion::ALL {
            let located = located(api);
            for offer in [
                InitializeOffer::default_for(api, &located.manifest),
                widest_offer(&located),
            ] {
                offer.check(&located).expect("the fuzz offers are valid");
                cases.push(Case {
                    located: located.clone(),
                    offer,
                });
            }
        }
        cases
    })
}

fn check_accepted(case: &Case, negotiated: &Negotiated) {
    let manifest = &case.located.manifest;
    let api = manifest.api_version;
    assert_eq!(negotiated.api_version, api);

    let cap = case.offer.max_concurrent_requests();
    assert!((1..=cap).contains(&negotiated.max_concurrent_requests));

    if api == ApiVersion::V0_1 {
        assert!(negotiated.features.is_empty());
        assert_eq!(negotiated.max_concurrent_requests, cap);
    } else {
        for required in [Feature::RequestCancellation, Feature::ContentParts] {
            assert!(negotiated.features.contains(required), "{required} missing");
        }
    }
    for feature in negotiated.features.iter() {
        assert!(case.offer.offers(feature), "{feature} was not offered");
        for &requires in feature.requires() {
            assert!(
                negotiated.features.contains(requires),
                "{feature} without {requires}"
            );
        }
    }
    if !negotiated.features.contains(Feature::LifecycleEvents) {
        assert!(negotiated.lifecycle_subscriptions.is_empty());
    }

    assert!(negotiated.tools.len() <= limits::MAX_TOOLS);
    assert!(negotiated.commands.len() <= limits::MAX_COMMANDS);
    let tools: BTreeSet<&str> = negotiated.tools.iter().map(|t| t.name.as_str()).collect();
    let commands: BTreeSet<&str> = negotiated
        .commands
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(
        tools.len(),
        negotiated.tools.len(),
        "duplicate tool accepted"
    );
    assert_eq!(
        commands.len(),
        negotiated.commands.len(),
        "duplicate command accepted"
    );
    if !negotiated.features.contains(Feature::DynamicTools) {
        let declared: BTreeSet<&str> = manifest
            .contributes
            .tools
            .iter()
            .map(String::as_str)
            .collect();
        assert_eq!(tools, declared);
    }
    if api == ApiVersion::V0_3 {
        check_contract(case, negotiated);
    } else {
        assert!(negotiated.contract.is_none());
    }
    if api != ApiVersion::V0_3 && !negotiated.features.contains(Feature::RuntimeCommands) {
        let declared: BTreeSet<&str> = manifest
            .contributes
            .commands
            .iter()
            .map(String::as_str)
            .collect();
        assert_eq!(commands, declared);
    }
    for tool in &negotiated.tools {
        assert!(!tool.description.is_empty());
        assert!(tool.parameters.is_object());
        assert_eq!(
            tool.output_schema.is_some(),
            tool.compiled_output_schema.is_some()
        );
        if api == ApiVersion::V0_1 {
            assert!(tool.output_schema.is_none());
        }
    }
}

/// The API 0.3 selection stays within the offer.
fn check_contract(case: &Case, negotiated: &Negotiated) {
    let contract = negotiated
        .contract
        .as_ref()
        .expect("API 0.3 has a contract");
    assert!(negotiated.commands.is_empty());
    assert!(negotiated.lifecycle_subscriptions.is_empty());
    for capability in Capability::REQUIRED {
        assert!(contract.capabilities.contains(&capability));
    }
    for method in ContractMethod::REQUIRED {
        assert!(contract.methods.contains(&method));
    }
    let offered: BTreeSet<Capability> = case.offer.optional_capabilities().collect();
    assert!(contract
        .capabilities
        .iter()
        .all(|c| c.is_required() || offered.contains(c)));
    let offered: BTreeSet<ContractMethod> = case.offer.optional_methods().collect();
    assert!(contract
        .methods
        .iter()
        .all(|m| m.is_required() || offered.contains(m)));
    let limits = case.offer.contract_limits();
    assert!((1..=limits.max_frame_bytes).contains(&contract.limits.max_frame_bytes));
    assert!(contract.limits.max_tools <= limits.max_tools);
    assert!(negotiated.tools.len() <= contract.limits.max_tools);
    assert_eq!(
        negotiated.max_concurrent_requests,
        contract.limits.max_concurrent_requests
    );
    assert_eq!(negotiated.features, contract.features());
}

fuzz_target!(|data: &[u8]| {
    let Ok(result) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    for case in cases() {
        match validate_initialize_result(&case.located, &case.offer, &result) {
            Ok(negotiated) => check_accepted(case, &negotiated),
            Err(error) => {
                let _ = error.to_string();
                let _ = error.code();
            }
        }
    }
});
