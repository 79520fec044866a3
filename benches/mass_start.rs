//! A bystander's calls while many other extensions start at once (issue 17, item 2).
//!
//! One host; one started "bystander" extension called at depth 1 in a loop on its own
//! thread; then `--starts N` (default 100) other extensions are started at once, each
//! `start` from a thread of its own. Every child is the bare echo
//! (`octet-host __bench-echo octet`). Prints, per round, how long the mass start took
//! and the bystander's call latency while it ran (p50, p99, max), and the medians over
//! the rounds; `--rounds R` (default 5), `--quick` for one round of 20 starts.
//!
//! `cargo bench --bench mass_start [-- --quick]`

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use octet_host::bench::octet::{EchoChild, ExtensionSpec, OctetFixture};
use octet_host::host::CallOptions;
use serde_json::json;

/// One round's numbers.
struct Round {
    start_all: Duration,
    calls: usize,
    p50: Duration,
    p99: Duration,
    max: Duration,
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let at = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[at]
}

fn round(exe: &Path, starts: usize) -> Round {
    let mut specs = vec![ExtensionSpec {
        name: "bystander".into(),
        api: "0.4",
        child: EchoChild::Bare,
    }];
    for i in 0..starts {
        specs.push(ExtensionSpec {
            name: format!("fleet-{i}"),
            api: "0.4",
            child: EchoChild::Bare,
        });
    }
    let fixture = Arc::new(OctetFixture::new(exe, &specs).expect("the fixture"));
    // Discovery once, before the clock runs.
    fixture.host().discover();
    let bystander = fixture.host().start("bystander").expect("the bystander");
    let done = Arc::new(AtomicBool::new(false));
    let caller = {
        let done = done.clone();
        std::thread::spawn(move || {
            let mut latencies = Vec::new();
            while !done.load(Ordering::Acquire) {
                let at = Instant::now();
                bystander
                    .call_tool("echo", json!({"n": 1}), CallOptions::default())
                    .expect("a bystander call");
                latencies.push(at.elapsed());
            }
            latencies
        })
    };
    // Let the bystander settle into its loop.
    std::thread::sleep(Duration::from_millis(200));
    let began = Instant::now();
    let starters: Vec<_> = (0..starts)
        .map(|i| {
            let fixture = fixture.clone();
            std::thread::spawn(move || {
                fixture
                    .host()
                    .start(&format!("fleet-{i}"))
                    .expect("a fleet start");
            })
        })
        .collect();
    for starter in starters {
        starter.join().expect("a starter");
    }
    let start_all = began.elapsed();
    done.store(true, Ordering::Release);
    let mut latencies = caller.join().expect("the caller");
    // Only the calls made while the fleet was starting count.
    let during: usize = {
        let mut total = Duration::ZERO;
        latencies
            .iter()
            .rev()
            .take_while(|l| {
                total += **l;
                total <= start_all
            })
            .count()
    };
    let len = latencies.len();
    let mut during_calls: Vec<Duration> = latencies.drain(len - during..).collect();
    during_calls.sort();
    Round {
        start_all,
        calls: during_calls.len(),
        p50: percentile(&during_calls, 0.50),
        p99: percentile(&during_calls, 0.99),
        max: during_calls.last().copied().unwrap_or_default(),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let value = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .and_then(|v| v.parse::<usize>().ok())
    };
    let quick = args.iter().any(|a| a == "--quick");
    let starts = value("--starts").unwrap_or(if quick { 20 } else { 100 });
    let rounds = value("--rounds").unwrap_or(if quick { 1 } else { 5 });
    let exe = Path::new(env!("CARGO_BIN_EXE_octet-host"));
    println!("| round | {starts} starts: wall | bystander calls | p50 | p99 | max |");
    println!("|---:|---:|---:|---:|---:|---:|");
    let mut results = Vec::new();
    for r in 1..=rounds {
        let result = round(exe, starts);
        println!(
            "| {r} | {:.0} ms | {} | {:.0} µs | {:.2} ms | {:.2} ms |",
            result.start_all.as_secs_f64() * 1e3,
            result.calls,
            result.p50.as_secs_f64() * 1e6,
            result.p99.as_secs_f64() * 1e3,
            result.max.as_secs_f64() * 1e3,
        );
        results.push(result);
    }
    let median = |f: &dyn Fn(&Round) -> Duration| {
        let mut values: Vec<Duration> = results.iter().map(f).collect();
        values.sort();
        values[values.len() / 2]
    };
    println!(
        "| median | {:.0} ms | | {:.0} µs | {:.2} ms | {:.2} ms |",
        median(&|r| r.start_all).as_secs_f64() * 1e3,
        median(&|r| r.p50).as_secs_f64() * 1e6,
        median(&|r| r.p99).as_secs_f64() * 1e3,
        median(&|r| r.max).as_secs_f64() * 1e3,
    );
}
