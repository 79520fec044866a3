//! `initialize` request building and response validation (section 1.1).

#[path = "negotiation/catalogs.rs"]
mod catalogs;
#[path = "negotiation/errors.rs"]
mod errors;
#[path = "negotiation/offer.rs"]
mod offer;
#[path = "negotiation/request.rs"]
mod request;
#[path = "negotiation/responses.rs"]
mod responses;
#[path = "negotiation/v0_4.rs"]
mod v0_4;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use octet_host::manifest::{
    ApiVersion, Capabilities, Contributes, Entrypoint, LocatedManifest, Manifest, Source, UiSurface,
};
use octet_host::negotiation::{
    initialize_params, protocol_version, validate_initialize_result, BulkLimits, BulkObjectsOffer,
    CompositionMode, CompositionProblem, Feature, FeatureSet, HostContext, InitializeOffer,
    LifecycleEvent, LifecycleSubscriptionProblem, NameProblem, NegotiationError, PathProblem,
    PromptMetadataProblem,
};
use serde_json::{json, Value};

// ---------------------------------------------------------------------------
// Reference examples (section 1.1), copied verbatim.
// ---------------------------------------------------------------------------

const REFERENCE_V0_1_REQUEST: &str = r#"{
  "jsonrpc": "2.0",
  "id": 1,
  "method": "initialize",
  "params": {
    "api_version": "0.1",
    "octet_version": "0.8.0",
    "extension": {
      "name": "hello-world",
      "version": "0.1.0",
      "manifest_path": "/home/user/.octet/extensions/hello-world/extension.toml",
      "source": "global"
    },
    "workspace": "/home/user/project",
    "capabilities": {
      "filesystem": "none",
      "process": false,
      "network": false
    },
    "contributes": {
      "tools": ["hello_world"],
      "commands": ["hello"],
      "hooks": ["before_prompt", "after_response"],
      "ui": ["status"],
      "context": true,
      "tool_renderers": ["hello_world"],
      "notifications": true,
      "confirmations": false
    },
    "host": {
      "session_id": null,
      "session_name": null,
      "model": "claude-sonnet-4-6",
      "reasoning": null,
      "active_skills": []
    }
  }
}"#;

const REFERENCE_V0_1_RESPONSE: &str = r#"{
  "jsonrpc": "2.0",
  "id": 1,
  "result": {
    "api_version": "0.1",
    "tools": [
      {
        "name": "hello_world",
        "description": "Greet someone from an executable extension",
        "parameters": {
          "type": "object",
          "properties": {
            "name": { "type": "string" }
          },
          "required": ["name"],
          "additionalProperties": false
        }
      }
    ],
    "commands": [
      {
        "name": "hello",
        "description": "Show a greeting notification",
        "usage": "/hello [name]"
      }
    ]
  }
}"#;

const REFERENCE_V0_2_REQUEST_PROTOCOL: &str = r#"{
  "protocol": {
    "version": "0.2",
    "required_features": ["request_cancellation", "content_parts"],
    "optional_features": [
      "request_progress",
      "artifacts",
      "lifecycle_events",
      "policy_intents",
      "dynamic_tools",
      "runtime_commands"
    ],
    "limits": {"max_concurrent_requests": 64}
  }
}"#;

const REFERENCE_V0_2_RESPONSE_PROTOCOL: &str = r#"{
  "protocol": {
    "version": "0.2",
    "features": [
      "request_cancellation",
      "content_parts",
      "request_progress",
      "artifacts",
      "lifecycle_events",
      "dynamic_tools",
      "runtime_commands"
    ],
    "limits": {"max_concurrent_requests": 4},
    "lifecycle_events": [
      "session/started",
      "session/settled",
      "turn/started",
      "turn/settled",
      "tool/started",
      "tool/settled"
    ]
  }
}"#;

/// Removes insignificant whitespace from JSON text, keeping member order and string
/// contents exactly.
fn minify(text: &str) -> String {
    let mut out = String::new();
    let (mut in_string, mut escaped) = (false, false);
    for c in text.chars() {
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
            out.push(c);
        } else if !c.is_whitespace() {
            out.push(c);
        }
    }
    out
}

/// The minified text of the member `key` of the example object, found textually so that
/// member order is kept.
fn example_member(text: &str, key: &str) -> String {
    let text = minify(text);
    let start = text.find(&format!("\"{key}\":")).expect("member present") + key.len() + 3;
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (i, c) in text[start..].char_indices() {
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '{' | '[' => depth += 1,
            '}' | ']' => {
                depth -= 1;
                if depth == 0 {
                    return text[start..=start + i].to_owned();
                }
            }
            _ => {}
        }
    }
    panic!("unterminated member {key}");
}

fn example_result(text: &str) -> Value {
    let envelope: Value = serde_json::from_str(text).unwrap();
    envelope["result"].clone()
}

// ---------------------------------------------------------------------------
// Fixtures.
// ---------------------------------------------------------------------------

/// The reference example's `hello-world` extension, selecting `api`.
fn located(api: ApiVersion) -> LocatedManifest {
    LocatedManifest {
        manifest: Manifest {
            name: "hello-world".to_owned(),
            version: semver::Version::new(0, 1, 0),
            api_version: api,
            requires_octet: None,
            description: None,
            entrypoint: Entrypoint {
                command: "hello-world".to_owned(),
                args: Vec::new(),
                env: BTreeMap::new(),
            },
            capabilities: Capabilities::default(),
            contributes: Contributes {
                tools: vec!["hello_world".to_owned()],
                commands: vec!["hello".to_owned()],
                tool_renderers: vec!["hello_world".to_owned()],
                hooks: vec!["before_prompt".to_owned(), "after_response".to_owned()],
                ui: vec![UiSurface::Status],
                context: true,
                notifications: true,
                confirmations: false,
                presentation: false,
                menu: false,
            },
        },
        manifest_path: PathBuf::from("/home/user/.octet/extensions/hello-world/extension.toml"),
        dir: PathBuf::from("/home/user/.octet/extensions/hello-world"),
        source: Source::Global,
    }
}

fn example_host() -> HostContext {
    HostContext {
        model: Some("claude-sonnet-4-6".to_owned()),
        ..HostContext::default()
    }
}

fn workspace() -> &'static Path {
    Path::new("/home/user/project")
}

fn default_offer(located: &LocatedManifest) -> InitializeOffer {
    InitializeOffer::default_for(located.manifest.api_version, &located.manifest)
}

fn params_text(located: &LocatedManifest, offer: &InitializeOffer) -> String {
    let params = initialize_params(located, workspace(), &example_host(), offer).unwrap();
    serde_json::to_string(&params).unwrap()
}

fn hello_tool() -> Value {
    json!({
        "name": "hello_world",
        "description": "Greet someone",
        "parameters": {"type": "object", "properties": {}}
    })
}

fn hello_command() -> Value {
    json!({"name": "hello", "description": "Show a greeting"})
}

/// A valid feature-negotiated response for `api` selecting the required features plus
/// `extra`.
fn response(api: ApiVersion, extra: &[&str]) -> Value {
    let mut features = vec!["request_cancellation", "content_parts"];
    features.extend_from_slice(extra);
    json!({
        "api_version": api.as_str(),
        "tools": [hello_tool()],
        "commands": [hello_command()],
        "protocol": {
            "version": protocol_version(api).unwrap(),
            "features": features,
        }
    })
}

fn accept(
    located: &LocatedManifest,
    offer: &InitializeOffer,
    result: &Value,
) -> octet_host::negotiation::Negotiated {
    validate_initialize_result(located, offer, result).unwrap()
}

fn reject(located: &LocatedManifest, offer: &InitializeOffer, result: &Value) -> NegotiationError {
    validate_initialize_result(located, offer, result).unwrap_err()
}

/// Rejects `result` for the default offer of `api`.
fn reject_default(api: ApiVersion, result: &Value) -> NegotiationError {
    let located = located(api);
    reject(&located, &default_offer(&located), result)
}

/// A response whose first tool carries the members of `metadata` (prompt metadata).
fn with_prompt_metadata(api: ApiVersion, features: &[&str], metadata: Value) -> Value {
    let mut result = response(api, features);
    for (key, value) in metadata.as_object().unwrap() {
        result["tools"][0][key] = value.clone();
    }
    result
}
