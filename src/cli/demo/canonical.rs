//! hello-world on API 0.3, the canonical wire, when this host can start it.
//!
//! A host without API 0.3 support refuses the start with a typed error; the demo then
//! reports the section as skipped, which is not a failure.

use serde_json::json;

use super::setup::{CANONICAL, MORE_EXAMPLES};
use super::steps::ready_text;
use super::Demo;
use crate::host::CallOptions;

/// The name hello_world greets over the canonical wire.
const CANONICAL_NAME: &str = "canonical";

impl Demo<'_> {
    /// Starts hello-world from its API 0.3 manifest and calls hello_world, or reports
    /// why this host could not start it.
    pub(super) fn canonical_wire(&mut self) {
        self.t.section("API 0.3 (canonical wire)");
        let example = &MORE_EXAMPLES[2];
        self.t.request(format!(
            "spawn {CANONICAL} ({}) and initialize (api {})",
            example.program, example.api
        ));
        let extension = match self.session.start(CANONICAL) {
            Ok(extension) => extension,
            Err(error) => {
                self.t
                    .line(format!("  – skipped: [{}] {error}", error.code()));
                self.t.record(
                    "api_0_3",
                    true,
                    json!({"extension": CANONICAL, "skipped": true, "error": error.to_json()}),
                );
                return;
            }
        };
        let info = extension.info();
        self.t.answer(ready_text(info));
        self.t.record(
            "api_0_3",
            true,
            json!({"extension": CANONICAL, "skipped": false, "generation": info.generation,
                   "pid": info.pid}),
        );
        self.started.push(extension.clone());
        let arguments = json!({ "name": CANONICAL_NAME });
        self.t
            .request(format!("tool/call {CANONICAL} hello_world {arguments}"));
        let result = extension.call_tool("hello_world", arguments.clone(), CallOptions::default());
        let ok = result
            .as_ref()
            .is_ok_and(|o| !o.is_error && o.text() == format!("Hello, {CANONICAL_NAME}!"));
        self.tool_answer("hello_world", CANONICAL, arguments, result, ok);
    }
}
