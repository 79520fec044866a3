//! `presentation/update` params (section 2.5) on arbitrary JSON, with a fixed list of
//! declared commands.
//!
//! The input is one JSON document (inputs that are not JSON are skipped).
//!
//! Invariants: it never panics, nor does an error's `Display`; an accepted snapshot's
//! wire form (`PresentationSnapshot::to_value`) parses again to the same snapshot; every
//! action of an accepted snapshot routes to a declared command.

#![no_main]

use libfuzzer_sys::fuzz_target;
use octet_host::services::presentation::parse_update;
use serde_json::{json, Value};

fuzz_target!(|data: &[u8]| {
    let Ok(params) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let declared = vec!["workers".to_string(), "hello".to_string()];
    match parse_update(&params, &declared) {
        Ok(update) => {
            for action in &update.snapshot.actions {
                assert!(
                    declared.contains(&action.command),
                    "undeclared command accepted"
                );
            }
            let again = parse_update(&json!({"snapshot": update.snapshot.to_value()}), &declared)
                .expect("an accepted snapshot's wire form is accepted again");
            assert_eq!(again.snapshot, update.snapshot);
        }
        Err(error) => {
            let _ = error.to_string();
        }
    }
});
