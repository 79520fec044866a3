//! Tool composition from the compose example (section 2.25): its `survey` tool calls
//! hello-world's and git-status's tools through the host in one call, each nested
//! call running on its own extension's generation.

use serde_json::json;

use super::setup::{COMPOSE, MORE_EXAMPLES};
use super::Demo;
use crate::host::CallOptions;

impl Demo<'_> {
    /// Starts compose and runs one program of two nested calls through it.
    pub(super) fn composition(&mut self) {
        self.t
            .section("Tool composition (compose, API 0.4, the host's own service)");
        let Some(compose) = self.start_example(&MORE_EXAMPLES[6], "composition_start") else {
            return;
        };
        let arguments = json!({"calls": [
            {"tool": "hello_world", "arguments": {"name": "composition"}},
            {"tool": "git_status", "arguments": {}},
        ]});
        self.t
            .request(format!("tool/call {COMPOSE} survey {arguments}"));
        self.t.detail(
            "  the tool reads composition/context, then sends two composition/call requests; \
             the host runs each on the extension that offers the tool",
        );
        let result = compose.call_tool("survey", arguments, CallOptions::default());
        let (ok, text) = match &result {
            Ok(output) => {
                let text = output.text();
                for line in text.lines() {
                    self.t.detail(format!("  {line}"));
                }
                let greeted = text.contains("hello_world: Hello, composition!");
                let surveyed = text.contains("git_status: ");
                if greeted && surveyed {
                    self.t
                        .answer("both nested calls ran on their own extensions in one call");
                } else {
                    self.t.failure("a nested call's line is missing");
                }
                (greeted && surveyed, text)
            }
            Err(error) => {
                self.t.failure(error.to_string());
                (false, String::new())
            }
        };
        self.t.record(
            "composition",
            ok,
            json!({"extension": COMPOSE, "text": text}),
        );
    }
}
