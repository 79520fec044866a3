//! `circuits`: native resource refs from an extension (section 2.26, API 0.4).
//!
//! Its tool `build_circuit {"gates"}` builds a native circuit that stays in this
//! process, registers it with the host and returns its ResourceRef at `/circuit` of
//! its structured content; `simulate {"circuit"}` takes that value (the host pins it
//! for the call) and runs the native circuit it stands for; `scrap {"circuit"}`, a
//! plain tool, releases it, and the host's `resource/dispose` then drops the native
//! object. The
//! host must offer `resource_refs_v1` and `operation_descriptors_v1` (the demo's
//! builder does). `export_netlist {"circuit"}` writes the circuit's netlist as a bulk
//! object (section 2.27, with `bulk_objects_v1`) and returns its BlobRef. The manifest
//! needs `contributes.tools = ["build_circuit", "simulate", "export_netlist", "scrap"]`.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use serde::Deserialize;
use serde_json::{json, Value};

use crate::sdk::{
    resource_ref_schema, Context, Extension, HandlerError, Operation, Tool, ToolOutput,
};
use crate::validate::resource::ResourceRef;

/// The native circuits of this process, by token: their gate counts.
fn circuits() -> &'static Mutex<HashMap<String, u64>> {
    static CIRCUITS: OnceLock<Mutex<HashMap<String, u64>>> = OnceLock::new();
    CIRCUITS.get_or_init(Default::default)
}

#[derive(Deserialize)]
struct Build {
    gates: u64,
}

#[derive(Deserialize)]
struct Take {
    circuit: Value,
}

/// The native circuit `circuit` names, which the host has checked and pinned.
fn native(circuit: &Value) -> Result<(ResourceRef, u64), HandlerError> {
    let resource = ResourceRef::parse(circuit)
        .map_err(|problem| HandlerError::invalid_params(problem.to_string()))?;
    let gates = circuits()
        .lock()
        .expect("the circuits lock")
        .get(&resource.token)
        .copied()
        .ok_or_else(|| HandlerError::invalid_params("no such native circuit"))?;
    Ok((resource, gates))
}

/// The `circuits` example.
pub fn circuits_example() -> Extension {
    let takes_circuit = json!({
        "type": "object",
        "properties": {"circuit": resource_ref_schema("Circuit")},
        "required": ["circuit"]
    });
    let build = Tool::new(
        "build_circuit",
        "Build a circuit of `gates` gates; returns its resource value",
        json!({"type": "object", "properties": {"gates": {"type": "integer", "minimum": 1}},
               "required": ["gates"]}),
    )
    .output_schema(json!({"type": "object",
                          "properties": {"circuit": resource_ref_schema("Circuit")},
                          "required": ["circuit"]}))
    .operation(Operation::new("circuit.build").output("/circuit", "Circuit"));
    let simulate = Tool::new("simulate", "Simulate a circuit", takes_circuit.clone()).operation(
        Operation::new("circuit.simulate")
            .input("/circuit", "Circuit")
            .receiver("/circuit"),
    );
    let export = Tool::new(
        "export_netlist",
        "Export a circuit's netlist as a bulk object another extension can read",
        json!({"type": "object", "properties": {"circuit": resource_ref_schema("Circuit")},
               "required": ["circuit"]}),
    )
    .output_schema(
        json!({"type": "object", "properties": {"netlist": {"type": "object"}},
                          "required": ["netlist"]}),
    )
    .operation(Operation::new("circuit.export").input("/circuit", "Circuit"));
    // Not an operation: a call that pinned the circuit could not release it.
    let scrap = Tool::new("scrap", "Scrap a circuit", takes_circuit);
    Extension::new()
        .tool_def(build, |args: Build, cx: &Context| {
            let resource = cx.register_resource("Circuit")?;
            circuits()
                .lock()
                .expect("the circuits lock")
                .insert(resource.token.clone(), args.gates);
            Ok(
                ToolOutput::text(format!("built a circuit of {} gates", args.gates))
                    .with_structured_content(json!({"circuit": resource.to_value()})),
            )
        })
        .tool_def(simulate, |args: Take, _cx: &Context| {
            let (_, gates) = native(&args.circuit)?;
            let live = circuits().lock().expect("the circuits lock").len();
            Ok(ToolOutput::text(format!(
                "simulated {gates} gates: all settled ({live} live)"
            )))
        })
        .feature(crate::sdk::FEATURE_BULK_OBJECTS)
        .tool_def(export, |args: Take, cx: &Context| {
            let (resource, gates) = native(&args.circuit)?;
            let mut netlist = format!("netlist {} of {gates} gates\n", resource.token);
            for gate in 0..gates {
                netlist.push_str(&format!("g{gate} nand in{gate} out{gate}\n"));
            }
            let blob = cx.write_blob(netlist.as_bytes(), "text/plain")?;
            Ok(ToolOutput::text(format!("exported {} bytes", blob.bytes))
                .with_structured_content(json!({"netlist": blob.to_value()})))
        })
        .tool_def(scrap, |args: Take, cx: &Context| {
            let (resource, _) = native(&args.circuit)?;
            cx.release_resource(&resource)?;
            Ok(ToolOutput::text("scrapped; the host disposes of it next"))
        })
        .on_resource_dispose(|resource, _cx| {
            circuits()
                .lock()
                .expect("the circuits lock")
                .remove(&resource.token)
                .is_some()
        })
}
