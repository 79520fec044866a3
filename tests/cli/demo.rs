//! `demo`: the whole flow, as text and as JSON.

use serde_json::json;

use super::world::{json_stdout, run, stderr, stdout, strings};

#[test]
fn demo_runs_the_whole_flow_and_leaves_no_process() {
    let cwd = tempfile::tempdir().unwrap();
    let output = run(&strings(&["demo"]), cwd.path());
    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(0), "{text}\n{}", stderr(&output));
    let has_line = |needles: &[&str]| {
        text.lines()
            .any(|line| needles.iter().all(|needle| line.contains(needle)))
    };
    assert!(has_line(&["Discovery"]), "{text}");
    assert!(has_line(&["11 extensions found"]), "{text}");
    assert!(has_line(&["invalid_manifest", "broken-example"]), "{text}");
    assert!(has_line(&["initialize", "0.1"]), "{text}");
    assert!(has_line(&["initialize", "0.4"]), "{text}");
    assert!(has_line(&["api_version", "0.1"]), "{text}");
    assert!(has_line(&["api_version", "0.4"]), "{text}");
    assert!(has_line(&["← Hello, octet!"]), "{text}");
    assert!(has_line(&["tool/call git-status git_status"]), "{text}");
    assert!(has_line(&["tool/render git-status"]), "{text}");
    assert!(
        has_line(&["command/execute checkpoint", "release-v2"]),
        "{text}"
    );
    assert!(has_line(&["Checkpoint preview · release-v2"]), "{text}");
    assert!(has_line(&["hook/run checkpoint before_prompt"]), "{text}");
    assert!(has_line(&["disposition: continue"]), "{text}");
    assert!(has_line(&["context/collect checkpoint"]), "{text}");
    assert!(
        has_line(&["The last checkpoint preview was `release-v2`."]),
        "{text}"
    );
    assert!(has_line(&["status/collect git-status"]), "{text}");
    assert!(
        has_line(&["[success] Hello: hello_world greeted octet"]),
        "{text}"
    );
    // Section 5: the crashed fixture is restarted as generation 2 and answers; the
    // reload negotiates hello-world#2 first, then drains generation 1. Then the host
    // services of showcase: artifact, dynamic tool, presentation, policy.
    let later: &[&[&str]] = &[
        &["Supervision: crash and restart"],
        &["tool/call test-extension crash", "exits the process"],
        &["failed as expected", "connection lost"],
        &["test-extension#2 ready", "after the crash"],
        &["restart attempts  1 of 8"],
        &["generation 1 (pid", "is gone"],
        &[r#"← {"after":"restart"}"#],
        &["Reload (section 5, candidate-first)"],
        &["generation 1 → 2", "candidate"],
        &["order", "hello-world#2 ready → hello-world#1 draining"],
        &["drained and exited"],
        &["← Hello, reloaded!"],
        &["Host services (showcase, API 0.4)"],
        &["features", "artifacts", "policy_intents", "dynamic_tools"],
        &["Published a 1x1 PNG as artifact-"],
        &["[image] artifact-", "image/png"],
        &["structured_content", "output_schema"],
        &[r#""presentation_revision": 1"#],
        &["tools/register answered: catalog revision 1", "stamp"],
        &["← stamped: registered at run time"],
        &["showcase#1 presentation revision 1", "owner: session"],
        &["activity  snapshot:1", "succeeded", "→ artifact artifact-"],
        &["← decision: deny"],
        // Wave-1 services: the notes example against the demo's bound services.
        &["Wave-1 services (notes, API 0.2)"],
        &["features", "session_entries", "composer", "shortcuts"],
        &["service: shortcut/register notes.save", "inside initialize"],
        &["service: composer/get", "Draft: retry the flaky upload"],
        &["service: session/set_label entry-1", "draft"],
        &["← saved 42 bytes as entry entry-1 (draft) and cleared the composer"],
        &["← the extension's handler ran and sent a notification"],
        // Session and frontend services: the turns example, API 0.4.
        &["Session and frontend services (turns, API 0.4)"],
        &[
            "features",
            "session_control_v1",
            "session_entries",
            "terminal_handoff",
        ],
        &[
            "service: private session/append_entry turn-note",
            "committed",
        ],
        &["← continue; the private entry committed and the grant was revoked"],
        &["service: terminal/acquire", "ceded the terminal"],
        &["service: terminal/release"],
        &["← held the terminal (80x24, grant tty-1) and gave it back"],
        &["← completions: ask /help, ask /history"],
        &["← session demo-session is idle"],
        // Child agent sessions: the delegate example against the scripted service.
        &["Child agent sessions (delegate, API 0.2"],
        &["features", "agent_sessions"],
        &["the child read the README"],
        &["children: agent-1 /read-readme (completed)"],
        &["← the child completed; its record is listed for this extension"],
        // Tool composition: compose calls hello-world's and git-status's tools.
        &["Tool composition (compose, API 0.4"],
        &["features", "tool_composition_v1"],
        &["hello_world: Hello, composition!"],
        &["git_status: "],
        &["← both nested calls ran on their own extensions in one call"],
        // Resource refs: circuits passes a native circuit from one call to the next.
        &["Resource refs (circuits, API 0.4"],
        &["features", "resource_refs_v1", "operation_descriptors_v1"],
        &["structured_content.circuit = {\"$resource\":"],
        &["← simulated 3 gates: all settled"],
        &["structured_content.netlist = {\"$blob\":"],
        &["← read 92 bytes (sha256 checked): netlist res-"],
        &["refused before sending", "resource_unavailable"],
    ];
    for needles in later {
        assert!(has_line(needles), "{needles:?} missing:\n{text}");
    }
    // API 0.3 runs: a demo step passes or fails, and none is ever skipped.
    assert!(has_line(&["API 0.3 (canonical wire)"]), "{text}");
    assert!(
        has_line(&["tool/call hello-canonical hello_canonical"]),
        "{text}"
    );
    assert!(has_line(&["← Hello, canonical!"]), "{text}");
    assert!(!has_line(&["skipped: ["]), "{text}");
    assert!(has_line(&["shutdown"]), "{text}");
    for name in [
        "hello-world#2",
        "git-status#1",
        "checkpoint#1",
        "test-extension#2",
        "showcase#1",
        "notes#1",
        "turns#1",
        "delegate#1",
        "compose#1",
        "circuits#1",
    ] {
        assert!(has_line(&[name, "acknowledged, not forced"]), "{text}");
    }
    assert!(has_line(&["no child process left"]), "{text}");
    assert!(has_line(&["all passed"]), "{text}");
}

#[test]
fn demo_json_is_one_document_of_steps() {
    let cwd = tempfile::tempdir().unwrap();
    let output = run(&strings(&["demo", "--json"]), cwd.path());
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let document = json_stdout(&output);
    assert_eq!(document["ok"], true, "{document:#}");
    let steps = document["steps"].as_array().unwrap();
    let kinds: Vec<&str> = steps.iter().map(|s| s["step"].as_str().unwrap()).collect();
    for kind in [
        "discover",
        "start",
        "tool_call",
        "tool_render",
        "command",
        "hook",
        "context_collect",
        "status_collect",
        "supervised_start",
        "crash",
        "restart",
        "reload",
        "services_start",
        "snapshot",
        "presentation",
        "policy",
        "agents_start",
        "agent_sessions",
        "composition_start",
        "composition",
        "api_0_3",
        "host_events",
        "shutdown",
        "processes",
    ] {
        assert!(kinds.contains(&kind), "{kind} missing from {kinds:?}");
    }
    assert!(steps.iter().all(|s| s["ok"] == true), "{document:#}");
    assert!(
        steps.iter().all(|s| s.get("skipped").is_none()),
        "no step is skipped: {document:#}"
    );
    let apis: Vec<&str> = steps
        .iter()
        .filter(|s| s["step"] == "start")
        .map(|s| s["negotiated"]["api_version"].as_str().unwrap())
        .collect();
    assert_eq!(apis, ["0.1", "0.4", "0.4"]);
    let hello = steps
        .iter()
        .find(|s| s["step"] == "tool_call" && s["tool"] == "hello_world")
        .unwrap();
    assert_eq!(hello["output"]["text"], "Hello, octet!");
    let step = |kind: &str| steps.iter().find(|s| s["step"] == kind).unwrap();
    assert_eq!(step("restart")["status"]["generation"], 2);
    assert_eq!(step("restart")["restart_attempts"], 1);
    assert_eq!(step("reload")["to_generation"], 2);
    assert_eq!(step("reload")["old_process_gone"], true);
    let snapshot = &step("snapshot")["output"];
    let artifact_id = &snapshot["structured_content"]["artifact"]["artifact_id"];
    assert_eq!(snapshot["content"][1]["type"], "image");
    assert_eq!(snapshot["content"][1]["mime_type"], "image/png");
    assert_eq!(&snapshot["content"][1]["artifact_id"], artifact_id);
    let stamp = steps
        .iter()
        .find(|s| s["step"] == "tool_call" && s["tool"] == "stamp")
        .unwrap();
    assert_eq!(stamp["output"]["text"], "stamped: registered at run time");
    assert_eq!(step("presentation")["snapshot"]["revision"], 1);
    assert_eq!(step("policy")["decision"], "deny");
    assert_eq!(steps.last().unwrap()["running"], json!([]));
}
