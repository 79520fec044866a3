//! Memory stays bounded under any flood (every queue is bounded end to end): an
//! extension that sends requests without waiting, one that stops reading its answers,
//! and a client that sends notifications to an extension that does not read. `serve`
//! runs as a process of its own so that its resident memory can be watched; a
//! bystander extension keeps answering throughout.

mod support;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use support::sidecar::*;
use support::*;

/// What serve may grow by under a flood.
const GROWTH_KIB: u64 = 64 * 1024;

/// How long a flood may take on a loaded machine.
const LIVENESS: Duration = Duration::from_secs(240);

fn flood_extension(root: &Path) -> PathBuf {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/flood.py");
    let manifest = format!(
        "name = \"flood\"\nversion = \"0.1.0\"\napi_version = \"0.2\"\n\n\
         [entrypoint]\ncommand = \"python3\"\nargs = [{:?}]\n\n\
         [contributes]\ntools = [\"flood\", \"stall\", \"count\"]\n",
        script.to_string_lossy(),
    );
    write_manifest(root, "flood", &manifest)
}

/// Serve over the flood extension and a bystander, both started.
fn serve(services: &[&str]) -> ([tempfile::TempDir; 2], Sidecar) {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dirs = vec![
        flood_extension(root.path()),
        peer_extension(root.path(), "bystander", "0.2", &["good"], &["echo"]),
    ];
    let mut sidecar = Sidecar::start(workspace.path(), &dirs);
    sidecar.send(
        &json!({"id": 1, "op": "start", "extension": "flood", "services": services}).to_string(),
    );
    let reply = sidecar.until(is_reply(1));
    assert_eq!(reply["ok"], true, "{reply}");
    start(&mut sidecar, 2, "bystander");
    ([root, workspace], sidecar)
}

/// Calls `tool` and returns its result line.
fn call(
    sidecar: &mut Sidecar,
    call_id: &str,
    extension: &str,
    tool: &str,
    arguments: Value,
) -> Value {
    sidecar.send(
        &json!({"op": "call", "call_id": call_id, "extension": extension, "tool": tool, "arguments": arguments})
            .to_string(),
    );
    sidecar.until(|l| l["type"] == "result" && l["call_id"] == call_id)
}

/// The JSON the flood extension's text result holds.
fn text(result: &Value) -> Value {
    assert_eq!(result["ok"], true, "{result}");
    let text = result["output"]["content"][0]["text"].as_str().unwrap();
    serde_json::from_str(text).unwrap()
}

/// Watches serve's resident memory from a thread of its own until dropped.
struct Peak {
    peak: Arc<AtomicU64>,
    done: Arc<AtomicBool>,
}

impl Peak {
    fn watch(pid: u32) -> Peak {
        let (peak, done) = (
            Arc::new(AtomicU64::new(0)),
            Arc::new(AtomicBool::new(false)),
        );
        let (p, d) = (peak.clone(), done.clone());
        std::thread::spawn(move || {
            while !d.load(Ordering::Acquire) {
                p.fetch_max(rss_kib(pid), Ordering::AcqRel);
                std::thread::sleep(Duration::from_millis(5));
            }
        });
        Peak { peak, done }
    }

    fn kib(&self) -> u64 {
        self.peak.load(Ordering::Acquire)
    }
}

impl Drop for Peak {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Release);
    }
}

/// Runs a flood of `count` requests (the extension stalls its reading `stall_ms`
/// first), checking that the bystander answers meanwhile, until every answer arrived.
fn flood_and_wait(sidecar: &mut Sidecar, count: u64, stall_ms: u64) {
    let started = call(
        sidecar,
        "flood",
        "flood",
        "flood",
        json!({"count": count, "stall_ms": stall_ms}),
    );
    assert_eq!(text(&started)["started"], "flood");
    let begin = Instant::now();
    let mut n = 0;
    loop {
        n += 1;
        let echo = call(
            sidecar,
            &format!("b{n}"),
            "bystander",
            "echo",
            json!({"n": n}),
        );
        assert_eq!(
            echo["ok"], true,
            "the bystander answers during the flood: {echo}"
        );
        let count_now = text(&call(
            sidecar,
            &format!("c{n}"),
            "flood",
            "count",
            json!({}),
        ));
        if count_now["answers"].as_u64().unwrap() >= count {
            break;
        }
        assert!(
            begin.elapsed() < LIVENESS,
            "the flood never drained: {count_now}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Runs a flood of `count` requests (stalled `stall_ms` first) through serve and checks
/// that serve grew by less than [`GROWTH_KIB`] meanwhile.
fn assert_bounded_under_flood(count: u64, stall_ms: u64) {
    let (_dirs, mut sidecar) = serve(&[]);
    let base = sidecar.rss_kib();
    let peak = Peak::watch(sidecar.child.id());
    flood_and_wait(&mut sidecar, count, stall_ms);
    let grown = peak.kib().saturating_sub(base);
    assert!(
        grown < GROWTH_KIB,
        "serve grew by {grown} KiB under the flood"
    );
}

#[test]
fn requests_sent_without_waiting_keep_serve_bounded() {
    // Every request is answered: -32601, composer is not bound.
    assert_bounded_under_flood(400_000, 0);
}

#[test]
fn an_extension_that_stops_reading_its_answers_is_not_read_either() {
    assert_bounded_under_flood(200_000, 3_000);
}

#[test]
fn notifications_to_an_extension_that_does_not_read_are_refused_once_its_queue_is_full() {
    let (_dirs, mut sidecar) = serve(&["message_injection"]);
    let base = sidecar.rss_kib();
    let peak = Peak::watch(sidecar.child.id());
    let stalled = call(
        &mut sidecar,
        "stall",
        "flood",
        "stall",
        json!({"ms": 30_000}),
    );
    assert_eq!(text(&stalled)["started"], "stall");
    let delta = "x".repeat(64 * 1024);
    let mut refused = 0;
    for i in 0..2_000 {
        // One batch each: a new message id per line.
        sidecar.send(
            &json!({"id": 100 + i, "op": "message_delta", "extension": "flood", "message_id": format!("m{i}"), "delta": delta})
                .to_string(),
        );
        let reply = sidecar.until(is_reply(100 + i));
        if reply["ok"] == true {
            continue;
        }
        assert_eq!(reply["error"]["code"], "notification_refused", "{reply}");
        assert_eq!(reply["error"]["refusal"], "bounds_exceeded", "{reply}");
        refused += 1;
    }
    assert!(refused > 1_000, "only {refused} of 2000 were refused");
    let echo = call(
        &mut sidecar,
        "b",
        "bystander",
        "echo",
        json!({"still": true}),
    );
    assert_eq!(echo["ok"], true, "{echo}");
    let grown = peak.kib().saturating_sub(base);
    assert!(
        grown < GROWTH_KIB,
        "serve grew by {grown} KiB under the flood"
    );
}
