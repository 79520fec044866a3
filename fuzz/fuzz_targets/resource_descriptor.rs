//! ResourceRefs and operation descriptors (section 2.26) on arbitrary JSON.
//!
//! The input is one JSON document (inputs that are not JSON are skipped). It is read
//! as a ResourceRef, and as a descriptor twice: against fixed tool schemas, and, when
//! it is an object `{"operation", "parameters", "output_schema"?}`, against its own.
//!
//! Invariants: nothing panics, nor does any error's `Display`. An accepted ref is
//! exactly two members, a token of 1 to 128 printable ASCII bytes and a nominal type,
//! and its `to_value()` parses to the same ref. An accepted descriptor has a nominal
//! id, at most 32 slots a list, no repeated path, a receiver among its inputs, every
//! path reaching a value through object members only; it serializes to a value that
//! is accepted again as the same descriptor; and without `resource_refs_v1` it is
//! accepted exactly when it names no resource.

#![no_main]

use libfuzzer_sys::fuzz_target;
use octet_host::limits::{MAX_OPERATION_RESOURCES, MAX_RESOURCE_TOKEN_BYTES};
use octet_host::validate::resource::{DescriptorProblem, OperationDescriptor, ResourceRef};
use serde_json::{json, Value};

fn ref_schema(type_id: &str) -> Value {
    json!({"type": "object",
           "properties": {"$resource": {"type": "string"}, "type": {"const": type_id}},
           "required": ["$resource", "type"], "additionalProperties": false})
}

fn check_ref(value: &Value) {
    match ResourceRef::parse(value) {
        Ok(r) => {
            assert_eq!(value.as_object().map(|m| m.len()), Some(2));
            assert!(!r.token.is_empty() && r.token.len() <= MAX_RESOURCE_TOKEN_BYTES);
            assert!(r.token.bytes().all(|b| b.is_ascii_graphic()));
            assert_eq!(ResourceRef::parse(&r.to_value()), Ok(r.clone()));
        }
        Err(problem) => {
            let _ = problem.to_string();
        }
    }
}

fn check_descriptor(operation: &Value, parameters: &Value, output_schema: Option<&Value>) {
    match OperationDescriptor::parse(operation, parameters, output_schema, true) {
        Ok(descriptor) => {
            assert!(descriptor.resource_inputs.len() <= MAX_OPERATION_RESOURCES);
            assert!(descriptor.resource_outputs.len() <= MAX_OPERATION_RESOURCES);
            for list in [&descriptor.resource_inputs, &descriptor.resource_outputs] {
                for (i, slot) in list.iter().enumerate() {
                    assert!(list[..i].iter().all(|other| other.path != slot.path));
                    assert!(slot.path.as_str().starts_with('/'));
                }
            }
            if let Some(receiver) = &descriptor.receiver {
                assert!(descriptor
                    .resource_inputs
                    .iter()
                    .any(|s| &s.path == receiver));
            }
            let wire = serde_json::to_value(&descriptor).unwrap();
            let again = OperationDescriptor::parse(&wire, parameters, output_schema, true)
                .expect("a serialized descriptor is accepted again");
            assert_eq!(again, descriptor);
            let without = OperationDescriptor::parse(operation, parameters, output_schema, false);
            if descriptor.is_resource_bearing() {
                assert_eq!(without, Err(DescriptorProblem::NeedsResourceRefs));
            } else {
                assert_eq!(without, Ok(descriptor));
            }
        }
        Err(problem) => {
            let _ = problem.to_string();
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(value) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    check_ref(&value);
    let parameters = json!({"type": "object", "properties": {
        "circuit": ref_schema("Circuit"),
        "board": {"type": "object", "properties": {"part": ref_schema("Part")}}
    }});
    let outputs = json!({"type": "object", "properties": {"result": ref_schema("Circuit")}});
    check_descriptor(&value, &parameters, Some(&outputs));
    check_descriptor(&value, &parameters, None);
    if let Some(operation) = value.get("operation") {
        let own = value.get("parameters").cloned().unwrap_or(Value::Null);
        check_descriptor(operation, &own, value.get("output_schema"));
        for slot in value
            .pointer("/operation/resource_inputs")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            check_ref(slot);
        }
    }
});
