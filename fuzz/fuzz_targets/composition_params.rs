//! The closed params of `composition/context`, `composition/call` and
//! `composition/store` (section 2.25) on arbitrary JSON.
//!
//! The input is one JSON document (inputs that are not JSON are skipped), read as the
//! params of each of the three requests.
//!
//! Invariants: nothing panics; an accepted `composition/call` names a tool of 1 to 128
//! bytes, carries object arguments unless it asks for the complete outcome, asks for
//! updates only with the complete outcome, and its arguments are within 128 KiB and 32
//! levels; an accepted `composition/store` batch holds at most 4,096 keys of 1 to 1,024
//! bytes and values of at most 256 KiB; every accepted request names the
//! `parent_request_id` the input holds.

#![no_main]

use libfuzzer_sys::fuzz_target;
use octet_host::features::composition::params;
use octet_host::limits::{
    MAX_COMPOSITION_ARGUMENTS_BYTES, MAX_COMPOSITION_ARGUMENTS_DEPTH, MAX_COMPOSITION_STORE_KEYS,
    MAX_COMPOSITION_STORE_KEY_BYTES, MAX_COMPOSITION_STORE_VALUE_BYTES,
    MAX_COMPOSITION_TOOL_NAME_BYTES,
};
use octet_host::validate::{encoded_len, measure};
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let Ok(value) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let parent = value.get("parent_request_id").and_then(Value::as_u64);
    if let Ok(id) = params::context(&value) {
        assert_eq!(Some(id), parent);
    }
    if let Ok(call) = params::call(&value) {
        assert_eq!(Some(call.parent_request_id), parent);
        assert!(!call.name.is_empty() && call.name.len() <= MAX_COMPOSITION_TOOL_NAME_BYTES);
        assert!(call.full_outcome || call.arguments.is_object());
        assert!(!call.updates || call.full_outcome);
        assert!(encoded_len(&call.arguments) <= MAX_COMPOSITION_ARGUMENTS_BYTES);
        assert!(measure(&call.arguments).depth <= MAX_COMPOSITION_ARGUMENTS_DEPTH);
    }
    if let Ok(store) = params::store(&value) {
        assert_eq!(Some(store.parent_request_id), parent);
        assert!(store.set.len() + store.delete.len() <= MAX_COMPOSITION_STORE_KEYS);
        for key in store.set.keys().chain(store.delete.iter()) {
            assert!(!key.is_empty() && key.len() <= MAX_COMPOSITION_STORE_KEY_BYTES);
        }
        for value in store.set.values() {
            assert!(encoded_len(value) <= MAX_COMPOSITION_STORE_VALUE_BYTES);
        }
    }
});
