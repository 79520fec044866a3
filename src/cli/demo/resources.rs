//! Native resource refs from the circuits example (section 2.26): one call builds a
//! circuit that stays in the extension and returns its resource value; the next call
//! takes that value, which the host checks and pins while it runs; a release retires
//! it, and the host refuses it from then on.

use serde_json::json;

use super::setup::{CIRCUITS, MORE_EXAMPLES};
use super::Demo;
use crate::host::{CallError, CallOptions};

impl Demo<'_> {
    /// Starts circuits and passes one resource between its calls.
    pub(super) fn resource_refs(&mut self) {
        self.t
            .section("Resource refs (circuits, API 0.4, the host's own records)");
        let Some(circuits) = self.start_example(&MORE_EXAMPLES[7], "resources_start") else {
            return;
        };
        self.t.request(format!(
            "tool/call {CIRCUITS} build_circuit {{\"gates\":3}}"
        ));
        let built =
            circuits.call_tool("build_circuit", json!({"gates": 3}), CallOptions::default());
        let circuit = match &built {
            Ok(output) => output
                .structured_content
                .as_ref()
                .and_then(|s| s.get("circuit"))
                .cloned(),
            Err(error) => {
                self.t.failure(error.to_string());
                None
            }
        };
        let Some(circuit) = circuit else {
            self.t
                .record("resource_refs", false, json!({"extension": CIRCUITS}));
            return;
        };
        self.t.answer(format!(
            "structured_content.circuit = {circuit} (the native circuit stays in the extension)"
        ));
        self.t.request(format!(
            "tool/call {CIRCUITS} simulate {{\"circuit\":{circuit}}}"
        ));
        self.t
            .detail("  the host checks the value against its records and pins it for this call");
        let simulated = circuits
            .call_tool(
                "simulate",
                json!({"circuit": circuit}),
                CallOptions::default(),
            )
            .map(|o| o.text());
        match &simulated {
            Ok(text) => self.t.answer(text.clone()),
            Err(error) => self.t.failure(error.to_string()),
        }
        self.t.request(format!(
            "tool/call {CIRCUITS} scrap, then simulate it again"
        ));
        let scrapped = circuits
            .call_tool("scrap", json!({"circuit": circuit}), CallOptions::default())
            .is_ok();
        let after = circuits.call_tool(
            "simulate",
            json!({"circuit": circuit}),
            CallOptions::default(),
        );
        let refused = matches!(after, Err(CallError::ResourceRefused { .. }));
        match &after {
            Err(error) if refused => self.t.answer(format!("refused before sending: {error}")),
            Err(error) => self.t.failure(error.to_string()),
            Ok(_) => self.t.failure("a released circuit was accepted"),
        }
        let ok = simulated
            .as_ref()
            .is_ok_and(|t| t.starts_with("simulated 3 gates"))
            && scrapped
            && refused;
        self.t.record(
            "resource_refs",
            ok,
            json!({"extension": CIRCUITS, "circuit": circuit}),
        );
    }
}
