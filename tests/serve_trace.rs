//! serve's wire trace (`serve --wire-trace`): every frame to and from an extension as a
//! `trace` line, a response paired with the request it answers, in the order the host
//! saw them, and the last frames before the final line; and the `artifact` op, which a
//! page uses to show a result's image.

mod support;

use serde_json::{json, Value};
use support::serve_harness::{fixture_extension, Serve};

fn traced_serve() -> Serve {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dir = fixture_extension(root.path());
    let options = octet_host::serve::ServeOptions::new(workspace.path())
        .no_global_extensions()
        .extension_dir(dir)
        .wire_trace(true);
    Serve::start(options, vec![workspace, root])
}

/// The trace line of the frame going `direction` whose `method` (a request) or whose
/// `answers.method` (a response) is `method`.
fn trace(serve: &mut Serve, direction: &str, method: &str, response: bool) -> Value {
    serve.until(&format!("{direction} {method}"), |l| {
        l["type"] == "trace"
            && l["direction"] == direction
            && match response {
                false => l["frame"]["method"] == method,
                true => l["answers"]["method"] == method,
            }
    })
}

#[test]
fn every_frame_is_traced_and_a_response_names_its_request_and_latency() {
    let mut serve = traced_serve();
    serve.start_extension("fixture");
    let initialize = trace(&mut serve, "to_extension", "initialize", false);
    assert_eq!(initialize["extension"], "fixture");
    assert_eq!(initialize["generation"], 1);
    assert_eq!(initialize["withheld"], false);
    let answered = trace(&mut serve, "from_extension", "initialize", true);
    assert_eq!(answered["frame"]["id"], initialize["frame"]["id"]);
    let latency = answered["answers"]["latency_ms"].as_f64().unwrap();
    assert!(latency >= 0.0, "{answered}");
    assert!(answered["at_ms"].as_f64().unwrap() >= initialize["at_ms"].as_f64().unwrap());

    serve.send(
        json!({"op": "call", "call_id": "c1", "extension": "fixture",
                      "tool": "echo", "arguments": {"x": 1}}),
    );
    let result = serve.result(json!("c1"));
    assert_eq!(result["ok"], true, "{result}");
    let call = trace(&mut serve, "to_extension", "tool/call", false);
    assert_eq!(call["frame"]["params"]["arguments"], json!({"x": 1}));
    let answer = trace(&mut serve, "from_extension", "tool/call", true);
    assert_eq!(answer["frame"]["id"], call["frame"]["id"]);
    assert!(answer["frame"]["result"].is_object(), "{answer}");

    // The shutdown's frames are traced before the final line.
    serve.close_input().unwrap();
    let shutdown = trace(&mut serve, "to_extension", "shutdown", false);
    assert_eq!(shutdown["extension"], "fixture");
    let last = serve.until("the final line", |l| l["type"] == "shutdown");
    assert_eq!(last["reason"], "input_closed");
}

#[test]
fn without_the_option_nothing_is_traced() {
    let mut serve = Serve::fixture();
    serve.start_extension("fixture");
    serve.close_input().unwrap();
    serve.until("the final line", |l| l["type"] == "shutdown");
    assert!(
        !serve.seen.iter().any(|l| l["type"] == "trace"),
        "a trace line without --wire-trace"
    );
}

#[test]
fn the_artifact_op_returns_the_bytes_of_an_image_part() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dir = support::peer_extension(
        root.path(),
        "prober",
        "0.4",
        &["services-probe"],
        &["probe"],
    );
    let mut serve = Serve::over(workspace, root, vec![dir]);
    serve.start_extension("prober");
    serve.send(json!({"op": "call", "call_id": "p", "extension": "prober", "tool": "probe"}));
    let result = serve.result(json!("p"));
    assert_eq!(result["ok"], true, "{result}");
    let image = &result["output"]["content"][1];
    assert_eq!(image["type"], "image", "{result}");
    let artifact = serve.request(json!({"id": "a", "op": "artifact", "extension": "prober",
                                        "artifact_id": image["artifact_id"]}));
    assert_eq!(artifact["ok"], true, "{artifact}");
    assert_eq!(artifact["mime_type"], "image/png");
    use base64::Engine;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(artifact["data"].as_str().unwrap())
        .unwrap();
    assert_eq!(bytes.len() as u64, artifact["size"].as_u64().unwrap());
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    let unknown = serve.request(json!({"id": "u", "op": "artifact", "extension": "prober",
                                       "artifact_id": "artifact-made-up"}));
    assert_eq!(unknown["error"]["code"], "invalid_value", "{unknown}");
    assert_eq!(unknown["error"]["field"], "artifact_id");
    serve.close_input().unwrap();
}
