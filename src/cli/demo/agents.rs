//! Child agent sessions from the delegate example (sections 2.13-2.18): the demo binds
//! the example scripted service for it, and its tool spawns a child that reads the
//! workspace's README, waits for it and lists it; the runtime keeps the records.

use serde_json::json;

use super::setup::{DELEGATE, MORE_EXAMPLES};
use super::Demo;
use crate::host::CallOptions;

impl Demo<'_> {
    /// Starts delegate and runs one child through it.
    pub(super) fn agent_sessions(&mut self) {
        self.t
            .section("Child agent sessions (delegate, API 0.2, an example scripted service)");
        let Some(delegate) = self.start_example(&MORE_EXAMPLES[5], "agents_start") else {
            return;
        };
        let script = "read README.md\nthe child read the README";
        let arguments = json!({"task": "read-readme", "script": script});
        self.t
            .request(format!("tool/call {DELEGATE} delegate {arguments}"));
        self.t.detail(
            "  the tool sends agent/spawn, then agent/wait and agent/list; the runtime \
             answers the last two from its records",
        );
        let result = delegate.call_tool("delegate", arguments, CallOptions::default());
        let ok = match &result {
            Ok(output) => {
                let text = output.text();
                for line in text.lines() {
                    self.t.detail(format!("  {line}"));
                }
                let listed = text.contains("/read-readme (completed)");
                match (!output.is_error && listed, output.is_error) {
                    (true, _) => self
                        .t
                        .answer("the child completed; its record is listed for this extension"),
                    (false, true) => self.t.failure("the tool answered an error"),
                    (false, false) => self.t.failure("the child is not listed as completed"),
                }
                !output.is_error && listed
            }
            Err(error) => {
                self.t.failure(error.to_string());
                false
            }
        };
        let text = result.map(|o| o.text()).unwrap_or_default();
        self.t.record(
            "agent_sessions",
            ok,
            json!({"extension": DELEGATE, "text": text}),
        );
    }
}
