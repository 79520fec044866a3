//! Native resource refs and operation descriptors (section 2.26) against the raw
//! resource peer (`tests/fixtures/resource_peer.py`), through the library.

mod support;

use std::time::Duration;

use octet_host::features::resources::ResourceError;
use octet_host::host::{CallOptions, ExtensionHandle, ExtensionHost};
use octet_host::model::events::{Diagnostic, HostEvent};
use octet_host::CallError;
use serde_json::{json, Value};
use support::*;

struct Fixture {
    _root: tempfile::TempDir,
    _workspace: tempfile::TempDir,
    host: ExtensionHost,
    ext: ExtensionHandle,
}

fn fixture(env: &str) -> Fixture {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dir = resource_extension(root.path(), "circuits", env);
    let host = host_builder(workspace.path(), &[dir])
        .resource_refs(true)
        .build()
        .unwrap();
    let ext = host.start("circuits").unwrap();
    Fixture {
        _root: root,
        _workspace: workspace,
        host,
        ext,
    }
}

fn options() -> CallOptions {
    CallOptions::with_deadline(Duration::from_secs(60))
}

/// Calls `make` with `arguments`: the exported ref (when any) and the register answers.
fn make(ext: &ExtensionHandle, arguments: Value) -> (Option<Value>, Value) {
    let out = ext.call_tool("make", arguments, options()).unwrap();
    let exported = out
        .structured_content
        .as_ref()
        .and_then(|s| s.get("circuit"))
        .cloned();
    (exported, serde_json::from_str(&out.text()).unwrap())
}

/// A new circuit, and a `use` of it that runs for `sleep_ms`.
fn made_and_used(
    ext: &ExtensionHandle,
    sleep_ms: u64,
) -> (
    Value,
    octet_host::host::PendingCall<octet_host::validate::ToolResult>,
) {
    let circuit = make(ext, json!({})).0.unwrap();
    let running = ext.call_tool_async(
        "use",
        json!({"circuit": circuit, "sleep_ms": sleep_ms}),
        options(),
    );
    (circuit, running)
}

fn use_ref(ext: &ExtensionHandle, circuit: &Value) -> Result<String, CallError> {
    ext.call_tool("use", json!({ "circuit": circuit }), options())
        .map(|out| out.text())
}

fn refused(result: Result<String, CallError>) -> ResourceError {
    match result {
        Err(CallError::ResourceRefused { path, error }) => {
            assert_eq!(path, "/circuit");
            error
        }
        other => panic!("expected a refused resource, got {other:?}"),
    }
}

/// The tokens of every `resource/dispose` the peer received.
fn disposed(ext: &ExtensionHandle) -> Vec<String> {
    tool_json(ext, "disposed", json!({}))
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|d| d["resources"].as_array().unwrap().clone())
        .map(|r| r["$resource"].as_str().unwrap().to_string())
        .collect()
}

fn eventually_disposed(ext: &ExtensionHandle, token: &str) {
    eventually(&format!("{token} is disposed of"), || {
        disposed(ext).iter().any(|t| t == token)
    });
}

#[test]
fn a_resource_a_call_exports_is_the_input_of_later_calls() {
    let f = fixture("");
    let features = &f.ext.info().negotiated.features;
    assert!(features.contains(octet_host::negotiation::Feature::ResourceRefsV1));
    assert!(features.contains(octet_host::negotiation::Feature::OperationDescriptorsV1));
    let (circuit, answers) = make(&f.ext, json!({}));
    let circuit = circuit.expect("an exported circuit");
    assert_eq!(answers[0]["result"], circuit);
    assert_eq!(circuit["type"], "Circuit");
    let token = circuit["$resource"].as_str().unwrap();
    assert_eq!(
        use_ref(&f.ext, &circuit).unwrap(),
        format!("\"used {token}\"")
    );
    assert_eq!(
        use_ref(&f.ext, &circuit).unwrap(),
        format!("\"used {token}\"")
    );
    // The descriptor reaches the embedder's catalog as it was declared.
    let tools = f.ext.tools().unwrap();
    let simulate = tools.tools.iter().find(|t| t.name == "use").unwrap();
    let operation = serde_json::to_value(simulate.operation.as_ref().unwrap()).unwrap();
    assert_eq!(operation["receiver"], "/circuit");
    assert_eq!(operation["resource_inputs"][0]["access"], "exclusive");
}

#[test]
fn values_a_call_does_not_export_are_retired_and_disposed_of() {
    let f = fixture("");
    // Three registered, one exported: the other two are disposed of.
    let (exported, answers) = make(&f.ext, json!({"count": 3}));
    let exported = exported.unwrap();
    for answer in answers.as_array().unwrap()[1..].iter() {
        let token = answer["result"]["$resource"].as_str().unwrap();
        eventually_disposed(&f.ext, token);
        assert_eq!(
            refused(use_ref(&f.ext, &answer["result"])),
            ResourceError::Unavailable
        );
    }
    assert!(use_ref(&f.ext, &exported).is_ok());
    // Not exported, or a failed call: nothing becomes usable.
    for arguments in [json!({"export": false}), json!({"fail": true})] {
        let out = f.ext.call_tool("make", arguments, options()).unwrap();
        let answers: Value = serde_json::from_str(&out.text()).unwrap();
        let value = &answers[0]["result"];
        assert_eq!(refused(use_ref(&f.ext, value)), ResourceError::Unavailable);
        eventually_disposed(&f.ext, value["$resource"].as_str().unwrap());
    }
}

#[test]
fn an_output_the_call_did_not_register_fails_the_call_and_retires_its_values() {
    let f = fixture("");
    let error = f
        .ext
        .call_tool("make", json!({"bogus": true}), options())
        .unwrap_err();
    match &error {
        CallError::InvalidResult(e) => {
            assert!(e.to_string().contains("resource_unavailable"), "{e}");
        }
        other => panic!("expected an invalid result, got {other:?}"),
    }
    // What it did register is disposed of (the peer's first token of this host).
    eventually("the forged call's own value is disposed of", || {
        !disposed(&f.ext).is_empty()
    });
}

#[test]
fn a_pinned_value_is_busy_until_its_call_settles_and_release_retires_it() {
    let f = fixture("");
    let (circuit, slow) = made_and_used(&f.ext, 1500);
    // The first call pinned the value when it was sent, before this one came.
    assert_eq!(refused(use_ref(&f.ext, &circuit)), ResourceError::Busy);
    let inspect = f
        .ext
        .call_tool("inspect", json!({"circuit": circuit}), options());
    assert!(matches!(
        inspect,
        Err(CallError::ResourceRefused {
            error: ResourceError::Busy,
            ..
        })
    ));
    let release = tool_json(&f.ext, "release", json!({"circuit": circuit}));
    assert_eq!(release["error"]["code"], -32000);
    assert_eq!(release["error"]["message"], "resource_busy");
    assert_eq!(release["error"]["data"], json!({"code": "resource_busy"}));
    slow.wait().unwrap();
    assert!(use_ref(&f.ext, &circuit).is_ok());
    let release = tool_json(&f.ext, "release", json!({"circuit": circuit}));
    assert_eq!(
        release["result"],
        json!({"retired": true, "cleanup": "pending"})
    );
    eventually_disposed(&f.ext, circuit["$resource"].as_str().unwrap());
    assert_eq!(
        refused(use_ref(&f.ext, &circuit)),
        ResourceError::Unavailable
    );
    let again = tool_json(&f.ext, "release", json!({"circuit": circuit}));
    assert_eq!(again["error"]["message"], "resource_unavailable");
}

#[test]
fn a_cancelled_call_keeps_its_pin_until_the_extension_settles_it() {
    let f = fixture("");
    let (circuit, slow) = made_and_used(&f.ext, 1500);
    // Cancel only once the extension is running the call, so the frame was sent.
    let token = circuit["$resource"].as_str().unwrap();
    let events = collect_events(&f.host, Duration::from_secs(30), |events| {
        events.iter().any(|e| {
            matches!(e, HostEvent::Notification { notification, .. }
                if notification.message == format!("using {token}"))
        })
    });
    assert!(!events.is_empty(), "the call never started");
    slow.cancel();
    assert!(matches!(slow.wait(), Err(CallError::Cancelled { .. })));
    assert_eq!(refused(use_ref(&f.ext, &circuit)), ResourceError::Busy);
    // The peer settles the cancelled call late; the pin goes with it.
    eventually("the late answer releases the pin", || {
        use_ref(&f.ext, &circuit).is_ok()
    });
}

#[test]
fn refusals_carry_the_names_of_the_contract() {
    let f = fixture("");
    let register = |params: Value| tool_json(&f.ext, "register", json!({ "params": params }));
    // `register` has no descriptor: nothing it registers could be exported, so the
    // type does not match; `make` exports circuits, not parts.
    let mismatch = register(json!({"type": "Circuit"}));
    assert_eq!(mismatch["error"]["message"], "resource_type_mismatch");
    let (_, parts) = make(&f.ext, json!({"type": "Part", "export": false}));
    assert_eq!(parts[0]["error"]["message"], "resource_type_mismatch");
    let malformed = register(json!({"type": "Circuit", "owner": "me"}));
    assert_eq!(malformed["error"]["code"], -32602);
    assert_eq!(malformed["error"]["message"], "invalid resource request");
    assert_eq!(
        malformed["error"]["data"],
        json!({"code": "resource_unavailable"})
    );
    let bad_type = register(json!({"type": "9lives"}));
    assert_eq!(bad_type["error"]["code"], -32602);
    // 32 registrations per parent, then quota_exceeded.
    let (_, answers) = make(&f.ext, json!({"count": 33}));
    let answers = answers.as_array().unwrap();
    assert!(answers[..32].iter().all(|a| a.get("result").is_some()));
    assert_eq!(answers[32]["error"]["message"], "quota_exceeded");
    assert_eq!(answers[32]["error"]["data"]["code"], "quota_exceeded");
    // A settled parent, and a value of another type.
    let circuit = make(&f.ext, json!({})).0.unwrap();
    let stale = tool_json(&f.ext, "release", json!({"circuit": circuit, "parent": 1}));
    assert_eq!(stale["error"]["code"], -32602, "{stale}");
    let retyped = json!({"$resource": circuit["$resource"], "type": "Part"});
    let mistyped = tool_json(&f.ext, "release", json!({"circuit": retyped}));
    assert_eq!(mistyped["error"]["message"], "resource_type_mismatch");
    assert_eq!(
        refused(use_ref(
            &f.ext,
            &json!({"$resource": "nope", "type": "Circuit"})
        )),
        ResourceError::Unavailable
    );
    let forged = use_ref(
        &f.ext,
        &json!({"$resource": "x", "type": "Circuit", "extra": 1}),
    );
    assert!(matches!(refused(forged), ResourceError::Invalid(_)));
    // A value given to a tool without a descriptor is plain data: nothing is pinned.
    let plain = f
        .ext
        .call_tool("plain", json!({"circuit": circuit}), options());
    assert!(plain.is_ok());
}

#[test]
fn a_reload_and_a_restart_invalidate_every_value() {
    let f = fixture("");
    let circuit = make(&f.ext, json!({})).0.unwrap();
    f.ext.reload().unwrap();
    assert_eq!(
        refused(use_ref(&f.ext, &circuit)),
        ResourceError::Unavailable
    );
    let fresh = make(&f.ext, json!({})).0.unwrap();
    assert_ne!(fresh["$resource"], circuit["$resource"]);
    let crashed = f.ext.call_tool("crash", json!({}), options());
    assert!(matches!(crashed, Err(CallError::TransportLost { .. })));
    eventually("the extension restarts", || {
        f.host.status().iter().any(|s| {
            s.generation == 3 && s.state == octet_host::model::status::LifecycleState::Ready
        })
    });
    assert_eq!(refused(use_ref(&f.ext, &fresh)), ResourceError::Unavailable);
}

#[test]
fn an_owner_retirement_invalidates_and_disposes_of_its_values() {
    use octet_host::host::{LifecycleNotification, Outcome, Settlement};
    let f = fixture("");
    let circuit = make(&f.ext, json!({})).0.unwrap();
    f.host.lifecycle(LifecycleNotification::SessionSettled {
        session_id: f.host.session_id().into(),
        settlement: Settlement {
            outcome: Outcome::Completed,
            duration_ms: 1,
            reason: None,
        },
    });
    eventually_disposed(&f.ext, circuit["$resource"].as_str().unwrap());
    assert_eq!(
        refused(use_ref(&f.ext, &circuit)),
        ResourceError::Unavailable
    );
}

/// A dispose answer of `mode` ends the generation, with a diagnostic that says why.
fn unknown_cleanup_ends_the_generation(mode: &str) {
    let f = fixture(&format!("OCTET_RESOURCE_DISPOSE = {mode:?}"));
    let pid = f.ext.info().pid;
    let _ = make(&f.ext, json!({"count": 2}));
    let events = collect_events(&f.host, Duration::from_secs(30), |events| {
        events.iter().any(|e| {
            matches!(e, HostEvent::Diagnostic { diagnostic: Diagnostic::Refused { method, .. }, .. }
                if method == "resource/dispose")
        })
    });
    let reason = events
        .iter()
        .find_map(|e| match e {
            HostEvent::Diagnostic {
                diagnostic: Diagnostic::Refused { method, reason },
                ..
            } if method == "resource/dispose" => Some(reason.clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no dispose diagnostic in {events:?}"));
    assert!(
        reason.contains("cleanup of native resources is unknown"),
        "{reason}"
    );
    assert!(
        wait_gone(pid, Duration::from_secs(30)),
        "the generation ended"
    );
}

#[test]
fn a_dispose_answer_without_a_status_for_every_ref_ends_the_generation() {
    unknown_cleanup_ends_the_generation("missing");
}

#[test]
fn a_dispose_answer_with_an_unknown_status_ends_the_generation() {
    unknown_cleanup_ends_the_generation("bogus");
}

#[test]
fn a_dispose_error_answer_ends_the_generation() {
    unknown_cleanup_ends_the_generation("error");
}

#[test]
fn descriptors_are_checked_at_initialize_and_at_every_catalog_change() {
    // Without the features the descriptors are refused at initialize.
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dir = resource_extension(root.path(), "circuits", "");
    let plain = host_builder(workspace.path(), std::slice::from_ref(&dir))
        .build()
        .unwrap();
    let error = plain.start("circuits").unwrap_err().to_string();
    assert!(error.contains("operation"), "{error}");
    // An open ResourceRef schema is refused at initialize.
    let open = resource_extension(root.path(), "open", "OCTET_RESOURCE_OPEN_SCHEMA = \"1\"");
    let host = host_builder(workspace.path(), &[open])
        .resource_refs(true)
        .build()
        .unwrap();
    let error = host.start("open").unwrap_err().to_string();
    assert!(error.contains("additionalProperties"), "{error}");
    // So is a changed echo of the advertised limits.
    let echo = resource_extension(
        root.path(),
        "echo",
        r#"OCTET_RESOURCE_LIMITS_ECHO = "{\"max_records\":512,\"max_registrations_per_parent\":32}""#,
    );
    let host = host_builder(workspace.path(), &[echo])
        .resource_refs(true)
        .build()
        .unwrap();
    let error = host.start("echo").unwrap_err().to_string();
    assert!(error.contains("resource_refs_v1"), "{error}");
    // A `tools/register` is checked by the same rules, and refused whole.
    let f = fixture("");
    let mut tool = json!({
        "name": "probe",
        "description": "Probes a circuit",
        "parameters": {"type": "object", "properties": {"circuit": {"type": "object"}}},
        "operation": {
            "id": "circuit.probe",
            "resource_inputs": [{"path": "/circuit", "type": "Circuit", "access": "exclusive"}],
            "resource_outputs": []
        }
    });
    let open = tool_json(&f.ext, "grow", json!({"tools": [tool]}));
    assert_eq!(open["error"]["code"], -32602, "{open}");
    assert!(open["error"]["message"]
        .as_str()
        .unwrap()
        .contains("closed ResourceRef"));
    tool["parameters"]["properties"]["circuit"] = json!({
        "type": "object",
        "properties": {"$resource": {"type": "string"}, "type": {"enum": ["Circuit"]}},
        "required": ["type", "$resource"],
        "additionalProperties": false
    });
    let grown = tool_json(&f.ext, "grow", json!({"tools": [tool]}));
    assert!(grown.get("result").is_some(), "{grown}");
    let circuit = make(&f.ext, json!({})).0.unwrap();
    let probe = f
        .ext
        .call_tool("probe", json!({"circuit": circuit}), options());
    assert!(probe.is_err(), "the peer has no probe handler");
    assert!(!matches!(probe, Err(CallError::ResourceRefused { .. })));
}

#[test]
fn operation_discovery_lists_the_tools_that_take_a_resource_by_live_policy() {
    use octet_host::features::operation_discovery::DiscoveryError;
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dir = resource_extension(root.path(), "circuits", "");
    // The live policy hides `probe` from the model, and so from discovery.
    let policy = |_: &str, tool: &octet_host::negotiation::ToolDefinition| tool.name != "probe";
    let host = host_builder(workspace.path(), &[dir])
        .resource_refs(true)
        .bind(octet_host::host::ServiceBindings::new().tool_policy(policy))
        .build()
        .unwrap();
    let ext = host.start("circuits").unwrap();
    let circuit = make(&ext, json!({})).0.unwrap();
    assert_eq!(
        host.get_applicable_operations(&json!({ "resource": circuit })),
        Err(DiscoveryError::NotEnabled)
    );
    host.enable_operation_discovery();
    let page = host
        .get_applicable_operations(&json!({ "resource": circuit }))
        .unwrap();
    let cards: Vec<(&str, &str, bool)> = page
        .operations
        .iter()
        .map(|c| (c.operation_id.as_str(), c.tool.as_str(), c.receiver))
        .collect();
    assert_eq!(
        cards,
        [
            ("circuit.inspect", "inspect", false),
            ("circuit.simulate", "use", true)
        ]
    );
    assert_eq!(page.operations[1].input_path, "/circuit");
    assert_eq!(
        page.operations[1].parameters["properties"]["circuit"]["properties"]["type"]["const"],
        "Circuit"
    );
    assert_eq!(page.next_cursor, None);
    // Paged one at a time, the cursor is fenced to the catalog revision.
    let first = host
        .get_applicable_operations(&json!({ "resource": circuit, "limit": 1 }))
        .unwrap();
    let cursor = first.next_cursor.clone().unwrap();
    let second = host
        .get_applicable_operations(&json!({ "resource": circuit, "limit": 1, "cursor": cursor }))
        .unwrap();
    assert_eq!(second.operations[0].tool, "use");
    // A registration the policy allows changes the catalog; one it refuses does not.
    let ref_schema = json!({"type": "object",
        "properties": {"$resource": {"type": "string"}, "type": {"const": "Circuit"}},
        "required": ["$resource", "type"], "additionalProperties": false});
    let tool = |name: &str| {
        json!({
            "name": name, "description": "Another circuit tool",
            "parameters": {"type": "object", "properties": {"circuit": ref_schema}},
            "operation": {"id": format!("circuit.{name}"),
                "resource_inputs": [{"path": "/circuit", "type": "Circuit", "access": "exclusive"}],
                "resource_outputs": []}
        })
    };
    let grown = tool_json(
        &ext,
        "grow",
        json!({"tools": [tool("probe"), tool("measure")]}),
    );
    assert_eq!(
        grown["result"]["tools"].as_array().unwrap().len(),
        10,
        "{grown}"
    );
    let stale = host
        .get_applicable_operations(&json!({ "resource": circuit, "limit": 1, "cursor": cursor }));
    assert_eq!(stale, Err(DiscoveryError::StaleCursor));
    let page = host
        .get_applicable_operations(&json!({ "resource": circuit }))
        .unwrap();
    let tools: Vec<&str> = page.operations.iter().map(|c| c.tool.as_str()).collect();
    assert_eq!(tools, ["inspect", "measure", "use"]);
    // The resource is validated first.
    let unknown = json!({"$resource": "res-nope", "type": "Circuit"});
    assert_eq!(
        host.get_applicable_operations(&json!({ "resource": unknown })),
        Err(DiscoveryError::ResourceUnavailable)
    );
    // No extension may offer the host tool's name once discovery is on.
    let mut clash = tool("get_applicable_operations");
    clash["operation"]["id"] = json!("x");
    let refused = tool_json(&ext, "grow", json!({"tools": [clash]}));
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
}

#[test]
fn the_sdk_builds_a_native_value_another_call_takes_and_disposes_of_it() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dir = sdk_extension(
        root.path(),
        "circuits",
        "0.4",
        "circuits",
        r#"tools = ["build_circuit", "simulate", "export_netlist", "scrap"]"#,
    );
    let host = host_builder(workspace.path(), &[dir])
        .resource_refs(true)
        .build()
        .unwrap();
    let ext = host.start("circuits").unwrap();
    let built = ext
        .call_tool("build_circuit", json!({"gates": 3}), options())
        .unwrap();
    let circuit = built.structured_content.unwrap()["circuit"].clone();
    let simulated = ext
        .call_tool("simulate", json!({"circuit": circuit}), options())
        .unwrap();
    assert_eq!(simulated.text(), "simulated 3 gates: all settled (1 live)");
    let scrapped = ext
        .call_tool("scrap", json!({"circuit": circuit}), options())
        .unwrap();
    assert!(
        scrapped.text().starts_with("scrapped"),
        "{}",
        scrapped.text()
    );
    assert_eq!(
        refused(
            ext.call_tool("simulate", json!({"circuit": circuit}), options())
                .map(|o| o.text())
        ),
        ResourceError::Unavailable
    );
    // The SDK's dispose handler dropped the native circuit: a new one is the only
    // one left.
    let other = ext
        .call_tool("build_circuit", json!({"gates": 5}), options())
        .unwrap()
        .structured_content
        .unwrap()["circuit"]
        .clone();
    eventually("the scrapped circuit is disposed of", || {
        let out = ext
            .call_tool("simulate", json!({"circuit": other}), options())
            .unwrap();
        out.text() == "simulated 5 gates: all settled (1 live)"
    });
    let status = host.status();
    assert_eq!(status[0].generation, 1, "{status:?}");
    assert_eq!(
        status[0].state,
        octet_host::model::status::LifecycleState::Ready
    );
}

#[test]
fn a_queued_call_checks_and_pins_its_inputs_when_it_is_sent() {
    // One call at a time: the second call waits in the host's queue.
    let f = fixture("OCTET_RESOURCE_CONCURRENCY = \"1\"");
    let (circuit, first) = made_and_used(&f.ext, 800);
    // Admitted while the value is pinned, it is not refused: it is checked and pins
    // the value only when the first call has settled and it is sent.
    let queued = f
        .ext
        .call_tool_async("inspect", json!({"circuit": circuit}), options());
    assert!(first.wait().is_ok());
    let token = circuit["$resource"].as_str().unwrap();
    assert_eq!(queued.wait().unwrap().text(), format!("\"used {token}\""));
}
