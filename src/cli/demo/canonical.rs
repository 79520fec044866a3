//! hello-world on API 0.3, the canonical wire (as `hello-canonical`, whose tool is
//! `hello_canonical`: tool names are unique across the host). The step passes or fails;
//! it is never skipped.

use serde_json::json;

use super::setup::{CANONICAL, MORE_EXAMPLES};
use super::steps::ready_text;
use super::Demo;
use crate::host::CallOptions;

/// The name hello_canonical greets over the canonical wire.
const CANONICAL_NAME: &str = "canonical";

/// hello-canonical's greeting tool.
const TOOL: &str = "hello_canonical";

impl Demo<'_> {
    /// Starts hello-canonical from its API 0.3 manifest and calls hello_canonical; a
    /// start that fails fails the step.
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
                self.t.line(format!("  ✗ [{}] {error}", error.code()));
                self.t.record(
                    "api_0_3",
                    false,
                    json!({"extension": CANONICAL, "error": error.to_json()}),
                );
                return;
            }
        };
        let info = extension.info();
        self.t.answer(ready_text(info));
        self.t.record(
            "api_0_3",
            true,
            json!({"extension": CANONICAL, "generation": info.generation, "pid": info.pid}),
        );
        self.started.push(extension.clone());
        let arguments = json!({ "name": CANONICAL_NAME });
        self.t
            .request(format!("tool/call {CANONICAL} {TOOL} {arguments}"));
        let result = extension.call_tool(TOOL, arguments.clone(), CallOptions::default());
        let ok = result
            .as_ref()
            .is_ok_and(|o| !o.is_error && o.text() == format!("Hello, {CANONICAL_NAME}!"));
        self.tool_answer(TOOL, CANONICAL, arguments, result, ok);
    }
}
