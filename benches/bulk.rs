//! Committing a 256 MiB bulk object (section 2.27; issue 38: at least 0.8x the speed of
//! `sha256sum` plus `cp` of the same file on the same machine), measured side by side
//! in one run.
//!
//! The baseline runs `sha256sum FILE` then `cp FILE COPY`. The subject is one
//! `bulk/commit` of the same file by the raw bulk peer (`tests/fixtures/bulk_peer.py`,
//! its `put` with `file`), timed by the peer around the request: the host opens the
//! locator, streams it into a private snapshot while hashing it, and answers. Rounds
//! alternate the two; medians are shown. The host process's peak resident memory
//! before and after shows the copy is streamed, never read whole.
//!
//! `cargo bench --bench bulk [-- --load cpus] [-- --quick]`

#[path = "support/hogs.rs"]
mod hogs;

use std::io::Write;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use octet_host::features::bulk::BulkStorage;
use octet_host::host::{CallOptions, ExtensionHost};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

const OBJECT_BYTES: usize = 256 * 1024 * 1024;

fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

/// The peak resident set of this process, in KiB.
fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or(0)
}

/// Writes `bytes` of varied content to `path` a MiB at a time; its SHA-256.
fn write_object(path: &Path, bytes: usize) -> String {
    let mut file = std::fs::File::create(path).unwrap();
    let mut digest = Sha256::new();
    let mut block = vec![0u8; 1 << 20];
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    for chunk in 0..bytes / block.len() {
        for (i, byte) in block.iter_mut().enumerate() {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            *byte = (state as u8) ^ (chunk as u8) ^ (i as u8);
        }
        digest.update(&block);
        file.write_all(&block).unwrap();
    }
    file.sync_all().unwrap();
    digest
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn baseline(file: &Path, copy: &Path) -> f64 {
    let start = Instant::now();
    let hashed = Command::new("sha256sum").arg(file).output().unwrap();
    assert!(hashed.status.success());
    let copied = Command::new("cp").arg(file).arg(copy).status().unwrap();
    assert!(copied.success());
    let elapsed = start.elapsed().as_secs_f64();
    std::fs::remove_file(copy).unwrap();
    elapsed
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if !args.iter().any(|a| a == "--bench") {
        eprintln!("run with `cargo bench --bench bulk`");
        return;
    }
    let quick = args.iter().any(|a| a == "--quick");
    let load = hogs::requested(&args);
    let _hogs = hogs::Hogs::start(load);
    let rounds = if quick { 2 } else { 5 };
    let root = tempfile::tempdir().unwrap();
    let workspace = root.path().join("workspace");
    std::fs::create_dir_all(&workspace).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/bulk_peer.py");
    let dir = root.path().join("producer");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("extension.toml"),
        format!(
            "name = \"producer\"\nversion = \"0.1.0\"\napi_version = \"0.4\"\n\n\
             [entrypoint]\ncommand = \"python3\"\nargs = [{:?}]\n\n\
             [contributes]\ntools = [\"put\", \"get\", \"get_last\", \"raw\", \"seen\"]\n",
            script.to_string_lossy()
        ),
    )
    .unwrap();
    let object = root.path().join("object.bin");
    let sha256 = write_object(&object, OBJECT_BYTES);
    let host = ExtensionHost::builder(&workspace)
        .no_global_extensions()
        .extension_dir(&dir)
        .bulk_storage(BulkStorage::temporary())
        .build()
        .unwrap();
    let producer = host.start("producer").unwrap();
    let options = CallOptions::with_deadline(Duration::from_secs(600));
    let rss_before = peak_rss_kib();
    let (mut base, mut commit) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        let run_commit = || {
            let out = producer
                .call_tool(
                    "put",
                    json!({"file": object, "sha256": sha256, "export": false}),
                    options.clone(),
                )
                .unwrap();
            let seen: Value = serde_json::from_str(&out.text()).unwrap();
            assert!(seen["commit"]["result"].is_object(), "{seen}");
            seen["commit_seconds"].as_f64().unwrap()
        };
        if round % 2 == 0 {
            base.push(baseline(&object, &root.path().join("copy.bin")));
            commit.push(run_commit());
        } else {
            commit.push(run_commit());
            base.push(baseline(&object, &root.path().join("copy.bin")));
        }
    }
    let rss_after = peak_rss_kib();
    let (base, commit) = (median(base), median(commit));
    println!(
        "bulk commit of {} MiB, {rounds} rounds, medians{}",
        OBJECT_BYTES >> 20,
        if load > 0 {
            format!(", {load} busy loops")
        } else {
            String::new()
        }
    );
    println!("| subject | seconds | MiB/s | speed ÷ sha256sum + cp |");
    println!("|---|---:|---:|---:|");
    let mib = (OBJECT_BYTES >> 20) as f64;
    println!("| sha256sum + cp | {base:.3} | {:.0} | 1.00× |", mib / base);
    println!(
        "| bulk/commit | {commit:.3} | {:.0} | {:.2}× |",
        mib / commit,
        base / commit
    );
    println!(
        "peak resident memory of the host process: {} KiB before, {} KiB after the commits",
        rss_before, rss_after
    );
}
