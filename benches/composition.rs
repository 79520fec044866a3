//! A nested `composition/call` against a direct call of the same tool (issue 37: at
//! most 1.5x).
//!
//! One host runs the SDK test-extension (API 0.4, its tool `echo`) and the `compose`
//! example with tool composition on. "direct" is the embedder calling `echo` one call
//! at a time; "nested" is `compose`'s `repeat` tool calling `echo` through the host 100
//! times per outer call, as its program sees each round trip; "program ↔ host" is the
//! program's round trip for a `composition/call` the host refuses at once (a name the
//! snapshot lacks), which every nested call includes. All are medians over rounds that
//! alternate them.
//! `-- --load cpus` runs one busy loop per CPU beside it.
//!
//! `cargo bench --bench composition [-- --load cpus] [-- --quick]`

#[path = "support/hogs.rs"]
mod hogs;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use octet_host::host::CallOptions;
use octet_host::ExtensionHost;
use serde_json::json;

fn manifest(root: &Path, name: &str, example: &str, contributes: &str) -> PathBuf {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let text = format!(
        "name = {name:?}\nversion = \"0.1.0\"\napi_version = \"0.4\"\n\n\
         [entrypoint]\ncommand = {:?}\nargs = [\"__extension\", {example:?}]\n\n\
         [contributes]\n{contributes}\n",
        env!("CARGO_BIN_EXE_octet-host"),
    );
    std::fs::write(dir.join("extension.toml"), text).unwrap();
    dir
}

fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if !args.iter().any(|a| a == "--bench") {
        eprintln!("run with `cargo bench --bench composition`");
        return;
    }
    let quick = args.iter().any(|a| a == "--quick");
    let load = hogs::requested(&args);
    let _hogs = hogs::Hogs::start(load);
    let root = tempfile::tempdir().unwrap();
    let workspace = root.path().join("workspace");
    std::fs::create_dir_all(&workspace).unwrap();
    let host = ExtensionHost::builder(&workspace)
        .no_global_extensions()
        .extension_dir(manifest(
            root.path(),
            "fixture",
            "test-extension",
            "tools = [\"echo\", \"sleep\", \"progress\", \"confirm\", \"ask\", \"notify\", \
             \"crash\", \"big\", \"fail\", \"panic\", \"env\", \"events\"]\n\
             commands = [\"fixture\"]\nhooks = [\"before_prompt\"]\ncontext = true\n\
             ui = [\"status\"]\ntool_renderers = [\"echo\"]\nnotifications = true\n\
             confirmations = true\nmenu = true",
        ))
        .extension_dir(manifest(
            root.path(),
            "compose",
            "compose",
            "tools = [\"survey\", \"repeat\", \"read_blob\"]",
        ))
        .tool_composition(true)
        .composition_store(root.path().join("store"))
        .build()
        .expect("the host");
    let fixture = host.start("fixture").expect("the fixture");
    let compose = host.start("compose").expect("compose");
    let (rounds, per_round) = if quick { (3, 50) } else { (15, 100) };
    let arguments = json!({"text": "x"});
    // Warm both paths up.
    for _ in 0..200 {
        fixture
            .call_tool("echo", arguments.clone(), CallOptions::default())
            .unwrap();
    }
    let mut direct = Vec::new();
    let mut nested = Vec::new();
    let mut context = Vec::new();
    for _ in 0..rounds {
        let mut samples = Vec::with_capacity(per_round);
        for _ in 0..per_round {
            let at = Instant::now();
            fixture
                .call_tool("echo", arguments.clone(), CallOptions::default())
                .unwrap();
            samples.push(at.elapsed().as_secs_f64() * 1e6);
        }
        direct.push(median(samples));
        let out = compose
            .call_tool(
                "repeat",
                json!({"tool": "echo", "arguments": arguments, "times": per_round}),
                CallOptions::with_deadline(Duration::from_secs(60)),
            )
            .expect("a repeat call");
        let report: serde_json::Value = serde_json::from_str(&out.text()).expect("a report");
        nested.push(report["nested_us"].as_f64().expect("microseconds"));
        context.push(report["host_round_trip_us"].as_f64().expect("microseconds"));
    }
    let (direct, nested, context) = (median(direct), median(nested), median(context));
    let machine = if load > 0 {
        format!("{load} busy loops")
    } else {
        "quiet".to_string()
    };
    println!(
        "| machine | direct µs/call | nested µs/call | nested ÷ direct | program ↔ host µs | \
         nested − program ↔ host, ÷ direct |"
    );
    println!("|---|---:|---:|---:|---:|---:|");
    println!(
        "| {machine} | {direct:.1} | {nested:.1} | {:.2}× | {context:.1} | {:.2}× |",
        nested / direct,
        (nested - context) / direct
    );
    host.shutdown();
}
