//! Held `agent/wait` requests cost no thread and leave other calls alone (issue 36).
//!
//! One host runs 8 raw Wave-1 peers (`tests/fixtures/services_peer.py`) with the example
//! scripted child-session service bound, and one more peer as the bystander. Each of
//! the 8 spawns one child that sleeps, then sends 125 `agent/wait` requests from one
//! live tool call (1,000 in all, the most the 128-request bound per extension allows
//! in round numbers), which the runtime holds until the children settle. Prints the
//! host process's threads and resident memory, and the bystander's call latency (p50,
//! p99 over 300 calls), before and while the 1,000 waits are held.
//!
//! `cargo bench --bench held_waits`

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use octet_host::examples::scripted_agents::ScriptedAgents;
use octet_host::host::{CallOptions, ServiceBindings};
use octet_host::{ExtensionHandle, ExtensionHost};
use serde_json::{json, Value};

const PEERS: usize = 8;
const WAITS_PER_PEER: usize = 125;
const CALLS: usize = 300;

fn peer_manifest(root: &Path, name: &str) -> PathBuf {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/services_peer.py");
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let manifest = format!(
        "name = {name:?}\nversion = \"0.1.0\"\napi_version = \"0.2\"\n\n\
         [entrypoint]\ncommand = \"python3\"\nargs = [{:?}]\n\n\
         [contributes]\ntools = [\"ask\", \"answers\", \"seen\"]\n",
        script.to_string_lossy(),
    );
    std::fs::write(dir.join("extension.toml"), manifest).unwrap();
    dir
}

fn ask(ext: &ExtensionHandle, requests: Value) -> Value {
    let out = ext
        .call_tool(
            "ask",
            json!({ "requests": requests }),
            CallOptions::with_deadline(Duration::from_secs(120)),
        )
        .expect("an ask call");
    serde_json::from_str(&out.text()).unwrap()
}

/// The host process's threads and resident memory (KiB).
fn process() -> (usize, u64) {
    let threads = std::fs::read_dir("/proc/self/task").map_or(0, |d| d.count());
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let rss = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    (threads, rss)
}

/// p50 and p99 of the bystander's cheap calls.
fn latency(bystander: &ExtensionHandle) -> (Duration, Duration) {
    let mut samples: Vec<Duration> = (0..CALLS)
        .map(|_| {
            let at = Instant::now();
            bystander
                .call_tool("answers", json!({"ids": []}), CallOptions::default())
                .expect("a bystander call");
            at.elapsed()
        })
        .collect();
    samples.sort();
    (samples[CALLS / 2], samples[CALLS * 99 / 100])
}

fn main() {
    let root = tempfile::tempdir().unwrap();
    let workspace = root.path().join("workspace");
    std::fs::create_dir_all(&workspace).unwrap();
    let names: Vec<String> = (0..PEERS).map(|i| format!("delegator-{i}")).collect();
    let mut builder = ExtensionHost::builder(&workspace)
        .no_global_extensions()
        .tool_namespace(octet_host::host::ToolNamespace::PerExtension)
        .bind(ServiceBindings::new().agent_sessions(ScriptedAgents::new(&workspace)));
    for name in names.iter().map(String::as_str).chain(["bystander"]) {
        builder = builder.extension_dir(peer_manifest(root.path(), name));
    }
    for name in &names {
        builder = builder.allow_agent_sessions(name.clone());
    }
    let host = builder.build().expect("the host");
    let bystander = host.start("bystander").expect("the bystander");
    let delegators: Vec<ExtensionHandle> = names
        .iter()
        .map(|name| host.start(name).expect("a delegator"))
        .collect();
    for (i, ext) in delegators.iter().enumerate() {
        let spawn = json!({"task_name": "sleeper", "message": "sleep 60000",
            "policy": {"tools": ["read"], "max_depth": 1, "max_concurrent_children": 1,
                       "max_output_bytes": 512}});
        let answers = ask(
            ext,
            json!([{"id": format!("s{i}"), "method": "agent/spawn", "params": spawn}]),
        );
        assert!(answers[format!("s{i}")]["result"].is_object(), "{answers}");
    }
    let before = process();
    let quiet = latency(&bystander);
    // Each delegator's tool call sends its waits without waiting for them, then waits on
    // one more: the call (the parent) stays live, so every wait stays held.
    let holders: Vec<_> = delegators
        .iter()
        .enumerate()
        .map(|(i, ext)| {
            let ext = ext.clone();
            std::thread::spawn(move || {
                let mut requests: Vec<Value> = (0..WAITS_PER_PEER - 1)
                    .map(|n| {
                        json!({"id": format!("w{i}-{n}"), "method": "agent/wait",
                                    "params": {"timeout_ms": 60000}, "wait": false})
                    })
                    .collect();
                requests.push(json!({"id": format!("w{i}-last"), "method": "agent/wait",
                                     "params": {"timeout_ms": 60000}}));
                ask(&ext, Value::Array(requests))
            })
        })
        .collect();
    // The peers write their 1,000 requests within a moment; give them a second.
    std::thread::sleep(Duration::from_secs(1));
    let held = process();
    let loaded = latency(&bystander);
    println!("| | host threads | host RSS | bystander p50 | bystander p99 |");
    println!("|---|---:|---:|---:|---:|");
    let row = |what: &str, (threads, rss): (usize, u64), (p50, p99): (Duration, Duration)| {
        println!(
            "| {what} | {threads} | {:.1} MiB | {:.0} µs | {:.0} µs |",
            rss as f64 / 1024.0,
            p50.as_secs_f64() * 1e6,
            p99.as_secs_f64() * 1e6
        );
    };
    row("8 children running, no wait", before, quiet);
    row("1,000 agent/wait held", held, loaded);
    // The bench's own 8 callers are threads of this process too.
    println!(
        "1,000 held waits cost the host {} threads and {:.1} MiB (the bench's {PEERS} callers excluded from the threads)",
        held.0 as i64 - before.0 as i64 - PEERS as i64,
        (held.1 as f64 - before.1 as f64) / 1024.0
    );
    // The peers' own answer wait ends after 10 s; the children are shut down with the
    // host.
    for holder in holders {
        let _ = holder.join();
    }
    let _ = host.shutdown();
}
