//! Host services from one tool call of the showcase example (sections 1.2, 2.5, 2.8,
//! 2.9, 2.11): a structured result with an image artifact, a tool registered at run
//! time, a presentation snapshot and a policy decision.

use std::time::Duration;

use serde_json::{json, Value};

use super::setup::{MORE_EXAMPLES, SHOWCASE};
use super::Demo;
use crate::cli::encode;
use crate::host::{CallOptions, ExtensionHandle, GenerationRef, HostEvent};
use crate::sdk::examples::showcase::{POLICY_OPERATION, SNAPSHOT_MIME_TYPE, STAMP_TOOL};
use crate::services::presentation::{PresentationOwner, PresentationSnapshot};
use crate::validate::{ContentPart, ToolResult};

/// The label the demo passes to `snapshot`.
const SNAPSHOT_LABEL: &str = "demo";

/// The note the demo passes to the run-time tool.
const STAMP_NOTE: &str = "registered at run time";

/// How long the demo waits for the presentation snapshot to arrive as a host event.
const PRESENTATION_WITHIN: Duration = Duration::from_secs(5);

impl Demo<'_> {
    /// Starts showcase and calls `snapshot`, then the tool it registered, and shows
    /// the presentation event and the policy decision it reported.
    pub(super) fn host_services(&mut self) {
        self.t.section("Host services (showcase, API 0.4)");
        let Some(showcase) = self.start_example(&MORE_EXAMPLES[1], "services_start") else {
            return;
        };
        self.collect_events();
        let from = self.events.len();
        let arguments = json!({ "label": SNAPSHOT_LABEL });
        self.t
            .request(format!("tool/call {SHOWCASE} snapshot {arguments}"));
        let output = match showcase.call_tool("snapshot", arguments.clone(), CallOptions::default())
        {
            Ok(output) => output,
            Err(error) => {
                let error = self.call_failed(SHOWCASE, "tool `snapshot`", error);
                self.t.record(
                    "snapshot",
                    false,
                    json!({"extension": SHOWCASE, "arguments": arguments, "error": error}),
                );
                return;
            }
        };
        let structured = output.structured_content.clone().unwrap_or(Value::Null);
        self.snapshot_result(&output, &structured, arguments);
        self.dynamic_tool(&showcase, &structured);
        self.presentation(&showcase, from, &structured);
        self.policy(&structured);
    }

    /// Prints the content parts and structured content of `snapshot`'s result.
    fn snapshot_result(&mut self, output: &ToolResult, structured: &Value, arguments: Value) {
        self.t.answer(content_text(output));
        let pretty = serde_json::to_string_pretty(structured).unwrap_or_default();
        self.t
            .detail("structured_content (validated against the declared output_schema):");
        self.t.detail(crate::cli::output::indent(&pretty, "  "));
        let image = output.content.iter().find_map(|part| match part {
            ContentPart::Image {
                artifact_id,
                mime_type,
                ..
            } => Some((artifact_id.as_str(), mime_type.as_str())),
            _ => None,
        });
        let reported = structured["artifact"]["artifact_id"].as_str();
        let ok = !output.is_error
            && matches!(image, Some((id, mime)) if Some(id) == reported
                        && mime == SNAPSHOT_MIME_TYPE);
        if !ok {
            self.t.failure(
                "expected an image part naming the published artifact and structured content",
            );
        }
        self.t.record(
            "snapshot",
            ok,
            json!({"extension": SHOWCASE, "tool": "snapshot", "arguments": arguments,
                   "output": encode::tool_output(output)}),
        );
    }

    /// Calls the tool `snapshot` registered with `tools/register`.
    fn dynamic_tool(&mut self, showcase: &ExtensionHandle, structured: &Value) {
        let catalog = &structured["catalog"];
        let tools: Vec<&str> = catalog["tools"]
            .as_array()
            .map(|tools| tools.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        self.t.detail(format!(
            "tools/register answered: catalog revision {} · tools {}",
            catalog["revision"],
            tools.join(", ")
        ));
        let registered = tools.contains(&STAMP_TOOL);
        let arguments = json!({ "note": STAMP_NOTE });
        self.t.request(format!(
            "tool/call {SHOWCASE} {STAMP_TOOL} {arguments} (not in the initialize catalog)"
        ));
        let result = showcase.call_tool(STAMP_TOOL, arguments.clone(), CallOptions::default());
        let ok = registered
            && result
                .as_ref()
                .is_ok_and(|o| !o.is_error && o.text() == format!("stamped: {STAMP_NOTE}"));
        if !registered {
            self.t
                .failure(format!("the catalog does not list `{STAMP_TOOL}`"));
        }
        self.tool_answer(STAMP_TOOL, SHOWCASE, arguments, result, ok);
    }

    /// Waits for the `presentation/update` the handler sent, delivered as a host event.
    fn presentation(&mut self, showcase: &ExtensionHandle, from: usize, structured: &Value) {
        let source = GenerationRef {
            extension: SHOWCASE.to_owned(),
            generation: showcase.info().generation,
        };
        self.t.request(format!(
            "await HostEvent::Presentation from {source} (presentation/update, parent_request_id \
             of the snapshot call)"
        ));
        let found = self.await_event(
            from,
            PRESENTATION_WITHIN,
            |e| matches!(e, HostEvent::Presentation { source: s, .. } if *s == source),
        );
        let (ok, data) = match found.map(|i| &self.events[i]) {
            Some(HostEvent::Presentation {
                source,
                owner,
                snapshot,
            }) => {
                self.t.answer(presentation_text(source, owner, snapshot));
                let expected = structured["presentation_revision"].as_u64();
                let ok = expected == Some(snapshot.revision);
                if !ok {
                    self.t.failure(format!(
                        "expected revision {expected:?}, got {}",
                        snapshot.revision
                    ));
                }
                (ok, json!({"snapshot": snapshot.to_value()}))
            }
            _ => {
                self.t.failure(format!(
                    "no presentation snapshot within {} s",
                    PRESENTATION_WITHIN.as_secs()
                ));
                (false, json!({}))
            }
        };
        let mut record = json!({"extension": SHOWCASE});
        if let (Value::Object(record), Value::Object(data)) = (&mut record, data) {
            record.extend(data);
        }
        self.t.record("presentation", ok, record);
    }

    /// Shows the decision `policy/evaluate` gave the handler.
    fn policy(&mut self, structured: &Value) {
        let decision = structured["policy"]["decision"].as_str().unwrap_or("none");
        self.t.request(format!(
            "policy/evaluate {{kind: external_side_effect, operation: {POLICY_OPERATION}}} \
             (sent by the snapshot handler)"
        ));
        self.t.answer(format!(
            "decision: {decision} (no policy engine is bound, so the default denies)"
        ));
        let ok = decision == "deny";
        if !ok {
            self.t.failure("expected the default policy to deny");
        }
        self.t.record(
            "policy",
            ok,
            json!({"extension": SHOWCASE, "operation": POLICY_OPERATION, "decision": decision}),
        );
    }
}

/// Every content part, one block each: text as it is, media as `[image] id · mime`.
fn content_text(output: &ToolResult) -> String {
    let parts: Vec<String> = output
        .content
        .iter()
        .map(|part| match part {
            ContentPart::Text { text } => text.clone(),
            ContentPart::Image {
                artifact_id,
                mime_type,
                alt,
            } => format!(
                "[image] {artifact_id} · {mime_type}{}",
                alt.as_deref()
                    .map(|alt| format!(" · alt {alt:?}"))
                    .unwrap_or_default()
            ),
            ContentPart::Audio {
                artifact_id,
                mime_type,
                ..
            } => format!("[audio] {artifact_id} · {mime_type}"),
        })
        .collect();
    let marker = if output.is_error { " (is_error)" } else { "" };
    format!("{}{marker}", parts.join("\n"))
}

/// The snapshot's owner, status and activities, one item a line.
fn presentation_text(
    source: &GenerationRef,
    owner: &PresentationOwner,
    snapshot: &PresentationSnapshot,
) -> String {
    let owner = match owner {
        PresentationOwner::Process => "the process".to_owned(),
        PresentationOwner::Resource(triple) => format!(
            "session {} · generation {}",
            triple.session_id, triple.process_generation
        ),
    };
    let mut lines = vec![format!(
        "{source} presentation revision {} · owner: {owner}",
        snapshot.revision
    )];
    if let Some(status) = &snapshot.status {
        lines.push(format!(
            "status    {} · {:?}",
            status.state.as_str(),
            status.label
        ));
    }
    for activity in &snapshot.activities {
        let references: Vec<String> = activity
            .references
            .iter()
            .map(|r| format!("{} {}", r.kind.as_str(), r.id))
            .collect();
        lines.push(format!(
            "activity  {} · {} · {} · {:?}{}",
            activity.id,
            activity.kind,
            activity.state.as_str(),
            activity.summary,
            if references.is_empty() {
                String::new()
            } else {
                format!(" → {}", references.join(", "))
            }
        ));
    }
    lines.join("\n")
}
