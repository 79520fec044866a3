//! Native resource refs from the circuits example (section 2.26): one call builds a
//! circuit that stays in the extension and returns its resource value; the next call
//! takes that value, which the host checks and pins while it runs; a release retires
//! it, and the host refuses it from then on. Its netlist passes to a second extension
//! as a bulk object (section 2.27).

use serde_json::json;

use super::setup::{CIRCUITS, COMPOSE, MORE_EXAMPLES};
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
        let passed_blob = self.pass_blob(&circuits, &circuit);
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
            && passed_blob
            && scrapped
            && refused;
        self.t.record(
            "resource_refs",
            ok,
            json!({"extension": CIRCUITS, "circuit": circuit}),
        );
    }

    /// Exports the circuit's netlist as a bulk object (section 2.27) and has compose, a
    /// second extension, read it through the host: the bytes pass as files the host
    /// snapshots and verifies, and only the BlobRef travels.
    fn pass_blob(
        &mut self,
        circuits: &crate::host::ExtensionHandle,
        circuit: &serde_json::Value,
    ) -> bool {
        self.t.request(format!(
            "tool/call {CIRCUITS} export_netlist {{\"circuit\":..}} (bulk/write, bulk/commit)"
        ));
        let exported = circuits.call_tool(
            "export_netlist",
            json!({"circuit": circuit}),
            CallOptions::default(),
        );
        let netlist = match exported {
            Ok(output) => output
                .structured_content
                .as_ref()
                .and_then(|s| s.get("netlist"))
                .cloned(),
            Err(error) => {
                self.t.failure(error.to_string());
                None
            }
        };
        let Some(netlist) = netlist else {
            return false;
        };
        self.t
            .answer(format!("structured_content.netlist = {netlist}"));
        let Some(compose) = self.started.iter().find(|e| e.name() == COMPOSE).cloned() else {
            self.t.failure("compose is not running");
            return false;
        };
        self.t.request(format!(
            "tool/call {COMPOSE} read_blob {{\"blob\":..}} (bulk/read on a lease)"
        ));
        match compose.call_tool(
            "read_blob",
            json!({"blob": netlist}),
            CallOptions::default(),
        ) {
            Ok(output) if output.text().contains("netlist res-") => {
                self.t.answer(output.text());
                true
            }
            Ok(output) => {
                self.t.failure(format!("unexpected: {}", output.text()));
                false
            }
            Err(error) => {
                self.t.failure(error.to_string());
                false
            }
        }
    }
}
