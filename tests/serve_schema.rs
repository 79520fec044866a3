//! serve's JSON Schema describes the control lines too (`$defs.control_line`), which
//! other languages' clients are generated from: it names exactly the operations serve
//! accepts, and every line the schema calls well-formed is read as its operation.

mod support;

use std::collections::BTreeSet;

use serde_json::{json, Value};
use support::serve_harness::{self, Serve};

fn control_lines() -> Vec<Value> {
    let schema = serve_harness::schema_document();
    schema["$defs"]["control_line"]["oneOf"]
        .as_array()
        .expect("$defs.control_line.oneOf")
        .clone()
}

#[test]
fn the_schema_names_exactly_the_operations_serve_accepts() {
    let mut serve = Serve::fixture();
    let error = serve.request(json!({"id": 1, "op": "no_such_op"}));
    assert_eq!(error["error"]["code"], "unknown_op", "{error}");
    let message = error["error"]["message"].as_str().unwrap();
    let accepted: BTreeSet<&str> = message
        .trim_start_matches("`op` must be one of ")
        .split(", ")
        .collect();
    let lines = control_lines();
    let listed: BTreeSet<&str> = lines
        .iter()
        .map(|line| line["properties"]["op"]["const"].as_str().unwrap())
        .collect();
    assert_eq!(listed, accepted);
    serve.close_input().unwrap();
}

/// A line with only the members the schema requires, each of the simplest value of
/// its type, is never an `unknown_op`, `missing_field` or `wrong_type`: the schema's
/// required members and types are serve's.
#[test]
fn a_line_with_the_schema_required_members_is_read_as_its_operation() {
    let mut serve = Serve::fixture();
    for (n, line) in control_lines().iter().enumerate() {
        let op = line["properties"]["op"]["const"].as_str().unwrap();
        if op == "shutdown" {
            continue;
        }
        let mut sent = json!({"id": n, "op": op});
        // Of members one of which is required, the first.
        let first_of = line["anyOf"][0]["required"].as_array().cloned();
        let required = line["required"].as_array().unwrap().iter();
        for member in required.chain(first_of.iter().flatten()) {
            let member = member.as_str().unwrap();
            if member == "op" {
                continue;
            }
            let schema = &line["properties"][member];
            let types: Vec<&str> = match &schema["type"] {
                Value::String(t) => vec![t.as_str()],
                Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
                _ => vec!["string"],
            };
            sent[member] = match types[0] {
                "integer" => json!(1),
                "boolean" => json!(false),
                "object" => json!({}),
                "array" => json!([]),
                _ => json!(format!("x-{n}")),
            };
        }
        let reply = serve.request(sent.clone());
        let code = reply["error"]["code"].as_str().unwrap_or_default();
        // A nested member (`report.agent_id`) is inside an object the schema leaves open.
        let nested = reply["error"]["field"]
            .as_str()
            .is_some_and(|f| f.contains('.'));
        assert!(
            nested || !["unknown_op", "missing_field", "wrong_type"].contains(&code),
            "{op}: {sent} got {reply}"
        );
    }
    serve.close_input().unwrap();
}

/// `$defs.replies` names only operations serve has, and `$defs.call_outputs` exactly
/// the ops a `result` line may carry.
#[test]
fn the_reply_and_output_shapes_name_real_operations() {
    let schema = serve_harness::schema_document();
    let ops: BTreeSet<String> = control_lines()
        .iter()
        .map(|line| {
            line["properties"]["op"]["const"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    let keys = |group: &str| -> BTreeSet<String> {
        schema["$defs"][group]["properties"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect()
    };
    assert!(keys("replies").is_subset(&ops), "{:?}", keys("replies"));
    let result = schema["oneOf"]
        .as_array()
        .unwrap()
        .iter()
        .find(|line| line["title"] == "result")
        .unwrap();
    let result_ops: BTreeSet<String> = result["properties"]["op"]["enum"]
        .as_array()
        .unwrap()
        .iter()
        .map(|op| op.as_str().unwrap().to_string())
        .collect();
    assert_eq!(keys("call_outputs"), result_ops);
}

/// What serve's refusal of an unknown name in `start`'s list `member` says it accepts,
/// and what the schema lists for `member`, in their orders.
fn start_names(member: &str) -> (Vec<String>, Vec<String>) {
    let mut serve = Serve::fixture();
    let error = serve
        .request(json!({"id": 1, "op": "start", "extension": "nobody", member: ["no_such_name"]}));
    assert_eq!(error["error"]["code"], "invalid_value", "{error}");
    let message = error["error"]["message"].as_str().unwrap();
    let accepted = message
        .trim_start_matches(&format!("`{member}` must be one of "))
        .split(", ")
        .map(str::to_string)
        .collect();
    serve.close_input().unwrap();
    let lines = control_lines();
    let start = lines
        .iter()
        .find(|line| line["properties"]["op"]["const"] == "start")
        .unwrap();
    let listed = start["properties"][member]["items"]["enum"]
        .as_array()
        .unwrap()
        .iter()
        .map(|name| name.as_str().unwrap().to_string())
        .collect();
    (accepted, listed)
}

/// The runtime-served features a `start` may name are one table
/// (`RuntimeOffers::FEATURES`): serve's refusal lists them, and the schema (which the
/// Python client is generated from) lists exactly the same.
#[test]
fn the_schema_names_exactly_the_runtime_features_a_start_accepts() {
    let (accepted, listed) = start_names("features");
    let table: Vec<String> = octet_host::features::offers::RuntimeOffers::FEATURES
        .iter()
        .map(|f| f.as_str().to_string())
        .collect();
    assert_eq!(
        accepted.iter().collect::<BTreeSet<_>>(),
        table.iter().collect()
    );
    assert_eq!(
        listed.iter().collect::<BTreeSet<_>>(),
        table.iter().collect()
    );
}

/// The names a `start` may bind in `services` (service kinds, frontend features and
/// brokers) are the ones serve accepts: its refusal lists them, and the schema (which the
/// clients type `services` from) lists exactly the same, in the same order.
#[test]
fn the_schema_names_exactly_the_services_a_start_accepts() {
    let (accepted, listed) = start_names("services");
    assert!(accepted.len() > 20, "{accepted:?}");
    assert_eq!(listed, accepted);
}

/// `$defs.error_codes` (which the clients' exception tables are generated from) lists
/// exactly serve's error codes, in the order of `ErrorCode::ALL`, each with a class.
#[test]
fn the_schema_lists_exactly_serves_error_codes() {
    let schema = serve_harness::schema_document();
    let table = &schema["$defs"]["error_codes"];
    let listed: Vec<&str> = table["x-codes"]
        .as_array()
        .expect("$defs.error_codes.x-codes")
        .iter()
        .map(|row| {
            assert!(
                row["class"].as_str().is_some_and(|c| !c.is_empty()),
                "{row}"
            );
            row["code"].as_str().unwrap()
        })
        .collect();
    let serve: Vec<&str> = octet_host::serve::ErrorCode::ALL
        .iter()
        .map(|code| code.as_str())
        .collect();
    assert_eq!(listed, serve);
    let enumerated: Vec<&str> = table["enum"]
        .as_array()
        .unwrap()
        .iter()
        .map(|code| code.as_str().unwrap())
        .collect();
    assert_eq!(enumerated, serve);
}
