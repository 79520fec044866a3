//! `compose`: tool composition from an extension (section 2.25, API 0.4).
//!
//! Its tool `survey {"calls": [{"tool", "arguments"}]}` declares `composition` and runs
//! a small program through the host: it reads the frozen catalog, runs each listed call
//! on whichever extension offers the tool, counts its runs in its private store, and
//! answers one line per call. A call that fails does not stop the program: it becomes
//! a typed diagnostic (`metadata.octet_diagnostics_v1`) beside the text, and the store
//! is committed only when every call succeeded. Its tool `repeat {"tool", "arguments",
//! "times"}` runs one nested call `times` times (at most 125: each is followed by a
//! call the host refuses at once, the program's own round trip to the host) and
//! answers the medians of both in microseconds, as the composing program saw them
//! (what `benches/composition.rs` measures). Its tool `read_blob {"blob"}` reads a bulk
//! object (section 2.27) the host hands it, such as the circuits example's netlist.
//! The host must offer `tool_composition_v1` (the demo's builder does), and
//! `bulk_objects_v1` for `read_blob`; the manifest needs
//! `contributes.tools = ["survey", "repeat", "read_blob"]`.

use serde::Deserialize;
use serde_json::{json, Map, Value};

use crate::negotiation::CompositionMode;
use crate::sdk::diagnostics::{Diagnostic, Severity};
use crate::sdk::{Context, Extension, HandlerError, Tool, ToolOutput, FEATURE_TOOL_COMPOSITION};

/// One nested call of the program.
#[derive(Deserialize)]
struct Step {
    tool: String,
    #[serde(default = "empty")]
    arguments: Value,
}

fn empty() -> Value {
    json!({})
}

/// The tool's arguments.
#[derive(Deserialize)]
struct Program {
    calls: Vec<Step>,
}

/// `repeat`'s arguments.
#[derive(Deserialize)]
struct Repeat {
    tool: String,
    #[serde(default = "empty")]
    arguments: Value,
    times: usize,
}

/// `read_blob`'s arguments.
#[derive(Deserialize)]
struct ReadBlob {
    blob: Value,
}

/// The `compose` example.
pub fn compose() -> Extension {
    let parameters = json!({
        "type": "object",
        "properties": {"calls": {"type": "array", "items": {
            "type": "object",
            "properties": {"tool": {"type": "string"}, "arguments": {"type": "object"}},
            "required": ["tool"],
            "additionalProperties": false
        }, "maxItems": 16}},
        "required": ["calls"],
        "additionalProperties": false
    });
    let read_blob = Tool::new(
        "read_blob",
        "Read a bulk object another extension made, as the host hands it over",
        json!({"type": "object", "properties": {"blob": {"type": "object"}},
               "required": ["blob"]}),
    );
    let survey = Tool::new(
        "survey",
        "Run several of the host's tools in one call and report each result",
        parameters,
    )
    .composition(CompositionMode::On, 3000);
    let repeat = Tool::new(
        "repeat",
        "Time one nested call, repeated: the median round trip in microseconds",
        json!({
            "type": "object",
            "properties": {
                "tool": {"type": "string"},
                "arguments": {"type": "object"},
                "times": {"type": "integer", "minimum": 1, "maximum": 125}
            },
            "required": ["tool", "times"],
            "additionalProperties": false
        }),
    )
    .composition(CompositionMode::On, 0);
    Extension::new()
        .feature(FEATURE_TOOL_COMPOSITION)
        .tool_def(survey, |program: Program, cx: &Context| run(cx, program))
        .tool_def(repeat, |args: Repeat, cx: &Context| time_nested(cx, args))
        .feature(crate::sdk::FEATURE_BULK_OBJECTS)
        .tool_def(read_blob, |args: ReadBlob, cx: &Context| {
            let blob = crate::features::bulk::BlobRef::parse(&args.blob)
                .map_err(|problem| HandlerError::invalid_params(problem.to_string()))?;
            let data = cx.read_blob(&blob)?;
            let text = String::from_utf8_lossy(&data);
            let first = text.lines().next().unwrap_or_default();
            Ok(ToolOutput::text(format!(
                "read {} bytes (sha256 checked): {first}",
                data.len()
            )))
        })
}

fn time_nested(cx: &Context, args: Repeat) -> Result<ToolOutput, HandlerError> {
    let times = args.times.min(125);
    let median = |mut samples: Vec<f64>| {
        samples.sort_by(f64::total_cmp);
        samples.get(samples.len() / 2).copied().unwrap_or(0.0)
    };
    let mut nested = Vec::with_capacity(times);
    let mut context = Vec::with_capacity(times);
    for _ in 0..times {
        let at = std::time::Instant::now();
        cx.compose(&args.tool, args.arguments.clone())?;
        nested.push(at.elapsed().as_secs_f64() * 1e6);
        // The program's own round trip to the host, which every nested call includes:
        // a call of a name the snapshot lacks, which the host refuses at once.
        let at = std::time::Instant::now();
        let refused = cx.compose("", json!({}));
        context.push(at.elapsed().as_secs_f64() * 1e6);
        if refused.is_ok() {
            return Err(HandlerError::internal("a call of no tool was answered"));
        }
    }
    let report = json!({"nested_us": median(nested), "host_round_trip_us": median(context)});
    Ok(ToolOutput::text(report.to_string()))
}

fn run(cx: &Context, program: Program) -> Result<ToolOutput, HandlerError> {
    if !cx.has_feature(FEATURE_TOOL_COMPOSITION) {
        return Ok(ToolOutput::error(
            "the host does not offer tool composition (tool_composition_v1)",
        ));
    }
    let context = cx.composition_context()?;
    let runs = context
        .store
        .get("runs")
        .and_then(Value::as_u64)
        .unwrap_or(0)
        + 1;
    let mut lines = vec![format!(
        "run {runs}: {} tools composable",
        context.tools.len()
    )];
    let mut diagnostics = Vec::new();
    for step in program.calls {
        match cx.compose(&step.tool, step.arguments) {
            Ok(value) => {
                let shown = match value {
                    Value::String(text) => text.lines().next().unwrap_or_default().to_string(),
                    other => other.to_string(),
                };
                lines.push(format!("{}: {shown}", step.tool));
            }
            Err(error) => {
                lines.push(format!("{}: failed", step.tool));
                diagnostics.push(Diagnostic::new(
                    Severity::Warning,
                    "compose.nested_failed",
                    format!("{} failed: {error}", step.tool),
                ));
            }
        }
    }
    let output = ToolOutput::text(lines.join("\n"));
    if diagnostics.is_empty() {
        let mut store = Map::new();
        store.insert("runs".into(), json!(runs));
        cx.commit_composition_store(store, &[])?;
        return Ok(output);
    }
    output
        .with_diagnostics(diagnostics)
        .map_err(|e| HandlerError::internal(e.to_string()))
}
