//! The method table is the one declaration of the bound services: serve's JSON Schema
//! lists exactly its methods (and the brokers' `service_request` methods), every row
//! resolves by name on its API versions, and a binding that implements only some of a
//! kind's methods refuses the others with `unsupported_feature` (the trait's default
//! bodies), against a real extension.

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use octet_host::host::ServiceBindings;
use octet_host::negotiation::FeatureSet;
use octet_host::services::bound::{
    ComposerService, ComposerText, NoParams, Reply, ServiceCall, ServiceKind, ServiceMethod,
};
use octet_host::CallOptions;
use serde_json::{json, Value};

/// The methods serve's own brokers ask with (docs/serve-protocol.md).
const BROKER_METHODS: [&str; 4] = [
    "policy/evaluate",
    "policy/approve",
    "secret/get",
    "provider/credentials",
];

/// The names a `start` binds serve's own brokers by.
const BROKER_NAMES: [&str; 4] = ["policy", "approvals", "secrets", "provider_credentials"];

#[test]
fn the_serve_schema_lists_exactly_the_table_and_the_brokers() {
    let schema = support::serve_harness::schema_document();
    fn find<'a>(value: &'a Value, title: &str) -> Option<&'a Value> {
        match value {
            Value::Object(map) if map.get("title").and_then(Value::as_str) == Some(title) => {
                Some(value)
            }
            Value::Object(map) => map.values().find_map(|v| find(v, title)),
            Value::Array(items) => items.iter().find_map(|v| find(v, title)),
            _ => None,
        }
    }
    let line = find(&schema, "service_request").expect("a service_request line");
    let listed: BTreeSet<&str> = line["properties"]["method"]["enum"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    // A guarded row (`agent/list`, `agent/wait`) is answered by the runtime and never
    // reaches serve's client.
    let table: BTreeSet<&str> = ServiceMethod::ALL
        .iter()
        .filter(|m| !m.is_guarded())
        .map(|m| m.name())
        .chain(BROKER_METHODS)
        .collect();
    assert_eq!(listed, table);
    // Every line names its kind, so a client routes by it.
    let kinds: BTreeSet<&str> = line["properties"]["kind"]["enum"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    let table: BTreeSet<&str> = ServiceKind::ALL
        .iter()
        .map(|k| k.name())
        .chain(BROKER_NAMES)
        .collect();
    assert_eq!(kinds, table);
    assert!(line["required"]
        .as_array()
        .unwrap()
        .contains(&json!("kind")));
}

/// The method names in the first column of the markdown table whose header starts
/// with `header` in `doc`: every code span that names a method (holds a `/`), with how
/// many rows name it (a name two rows of the table share is listed on each).
fn table_methods(doc: &str, header: &str) -> BTreeMap<String, usize> {
    let mut lines = doc.lines().skip_while(|l| !l.starts_with(header)).skip(2);
    let mut names = BTreeMap::new();
    for line in lines.by_ref().take_while(|l| l.starts_with('|')) {
        let first = line.split(" | ").next().unwrap_or_default();
        for (i, span) in first.split('`').enumerate() {
            if i % 2 == 1 && span.contains('/') {
                *names.entry(span.to_string()).or_default() += 1;
            }
        }
    }
    names
}

#[test]
fn the_serve_docs_table_lists_exactly_the_table_and_the_brokers() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/serve-protocol.md");
    let doc = std::fs::read_to_string(path).unwrap();
    let listed = table_methods(&doc, "| method | params | `result` |");
    let mut table = BTreeMap::new();
    for name in ServiceMethod::ALL
        .iter()
        .filter(|m| !m.is_guarded())
        .map(|m| m.name())
        .chain(BROKER_METHODS)
    {
        *table.entry(name.to_string()).or_default() += 1;
    }
    assert_eq!(listed, table, "docs/serve-protocol.md's service table");
}

#[test]
fn the_readme_names_every_kind_and_its_binder() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/README.md");
    let doc = std::fs::read_to_string(path).unwrap();
    let rows: Vec<&str> = doc
        .lines()
        .skip_while(|l| !l.starts_with("| service (`ServiceBindings::"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .collect();
    for kind in ServiceKind::ALL {
        let named = format!("`{kind}`");
        assert!(
            rows.iter().any(|row| row.contains(&named)),
            "README's service table does not name {named}"
        );
    }
}

#[test]
fn every_row_resolves_on_its_api_versions_only() {
    let none = FeatureSet::default();
    for method in ServiceMethod::ALL {
        // A row told apart by a params member (the private lane's `session_leaf`).
        let params = method.admission().marker().map(|m| json!({ m: {} }));
        for api in [
            octet_host::manifest::ApiVersion::V0_1,
            octet_host::manifest::ApiVersion::V0_2,
            octet_host::manifest::ApiVersion::V0_3,
            octet_host::manifest::ApiVersion::V0_4,
        ] {
            let resolved = ServiceMethod::resolve(method.name(), api, &none, params.as_ref());
            assert_eq!(
                resolved == Some(method),
                method.apis().contains(&api),
                "{method} on {api}"
            );
        }
    }
}

/// A composer that serves `get` only; `set` and `insert` keep their default bodies.
struct ReadOnlyComposer;

impl ComposerService for ReadOnlyComposer {
    fn get(&self, _call: ServiceCall, _params: NoParams, reply: Reply<ComposerText>) {
        reply.ok(ComposerText("draft".into()));
    }
}

#[test]
fn methods_a_binding_does_not_implement_are_refused_as_unsupported() {
    let dir = tempfile::tempdir().unwrap();
    let ext = support::services_extension(dir.path(), "peer", "0.2", "");
    let host = support::host_builder(dir.path(), &[ext])
        .bind(ServiceBindings::new().composer(ReadOnlyComposer))
        .build()
        .unwrap();
    let ext = host.start("peer").unwrap();
    let requests = json!([
        {"id": "get", "method": "composer/get", "params": {}},
        {"id": "set", "method": "composer/set", "params": {"text": "x"}},
    ]);
    let out = ext
        .call_tool(
            "ask",
            json!({ "requests": requests }),
            CallOptions::with_deadline(Duration::from_secs(60)),
        )
        .unwrap();
    let answers: Value = serde_json::from_str(&out.text()).unwrap();
    assert_eq!(answers["get"], json!({"result": {"text": "draft"}}));
    assert_eq!(answers["set"]["error"]["code"], -32601, "{answers}");
    let message = answers["set"]["error"]["message"].as_str().unwrap();
    assert!(message.starts_with("unsupported_feature: "), "{message}");
    assert!(message.contains("composer/set"), "{message}");
}

/// The schema's `service_kinds` annotation, which the Python package's service classes
/// are generated from, is the table itself: every kind in order, each with exactly its
/// rows that reach serve's client (method, trait method name, API versions,
/// notification or not, and the params member that tells a row apart), then the
/// brokers.
#[test]
fn the_schema_service_kinds_are_the_table_and_the_brokers() {
    let schema = support::serve_harness::schema_document();
    let kinds = schema["$defs"]["service_kinds"]["x-kinds"]
        .as_array()
        .expect("$defs.service_kinds.x-kinds");
    let row = |kind: &Value| {
        let methods: Vec<Value> = kind["methods"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                json!({
                    "method": m["method"], "fn": m["fn"], "apis": m["apis"],
                    "notification": m["notification"],
                    "marker": m.get("marker").cloned().unwrap_or(Value::Null),
                })
            })
            .collect();
        json!({"kind": kind["kind"], "broker": kind["broker"], "methods": methods})
    };
    let listed: Vec<Value> = kinds.iter().map(row).collect();
    let mut table: Vec<Value> = ServiceKind::ALL
        .iter()
        .map(|kind| {
            let methods: Vec<Value> = ServiceMethod::ALL
                .iter()
                .filter(|m| m.kind() == *kind && !m.is_guarded())
                .map(|m| {
                    let apis: Vec<String> = m.apis().iter().map(|a| a.to_string()).collect();
                    json!({
                        "method": m.name(), "fn": m.fn_name(), "apis": apis,
                        "notification": m.is_notification(),
                        "marker": m.admission().marker(),
                    })
                })
                .collect();
            json!({"kind": kind.name(), "broker": false, "methods": methods})
        })
        .collect();
    let brokers = [
        ("policy", "evaluate"),
        ("approvals", "approve"),
        ("secrets", "get"),
        ("provider_credentials", "credentials"),
    ];
    for ((name, fn_name), method) in brokers.into_iter().zip(BROKER_METHODS) {
        table.push(json!({"kind": name, "broker": true, "methods": [{
            "method": method, "fn": fn_name, "apis": ["0.1", "0.2", "0.3", "0.4"],
            "notification": false, "marker": null,
        }]}));
    }
    assert_eq!(listed, table);
}
