//! The whole-process run of `octet-host bench` plus the `lsp-server` peer, printed as
//! the Markdown table `benches/README.md` records.
//!
//! `cargo bench --bench table` (full) or `cargo bench --bench table -- --quick`
//! (smoke run); `-- --json` prints JSON instead.
//!
//! For profilers: `-- --only NAME --calls N --depth D` runs just the subject NAME
//! (such as `"octet_host bare 0.4"`, or `"fleet 200"` for a busy fleet of 200 SDK
//! extensions with D calls in flight each) for N calls at depth D and prints the time;
//! with `--gap MS` the N calls come one at a time, MS milliseconds apart, and the
//! median and 90th percentile are printed.
//!
//! A loaded machine: `-- --load N` runs N busy-loop processes beside the run (one per
//! CPU is the laptop running a build), with either mode; `--load cpus` means one per
//! CPU.
//!
//! `-- --prompt-wakeups` gives the main thread, which makes every subject's calls
//! except the busy fleet's, the short scheduler slice an embedder may ask for
//! (`octet_host::host::PromptWakeups`), with either mode.

#[path = "support/hogs.rs"]
mod hogs;
#[path = "support/lsp_peer.rs"]
mod lsp_peer;
#[path = "support/rmcp_peer.rs"]
mod rmcp_peer;

use std::path::PathBuf;

use octet_host::bench::octet::Fleet;
use octet_host::bench::suite::{self, standard_subjects, SuiteOptions};
use octet_host::bench::RoundTrip;

/// Runs the one subject named `only` for `--calls` calls at `--depth` (after a warm-up
/// of a tenth of them) and prints the time per call.
fn profile(
    exe: &std::path::Path,
    peers: Vec<Box<dyn RoundTrip>>,
    only: &str,
    value: &dyn Fn(&str) -> Option<String>,
) {
    let number =
        |name: &str, default: u64| value(name).and_then(|v| v.parse().ok()).unwrap_or(default);
    let (calls, depth) = (number("--calls", 100_000), number("--depth", 1) as usize);
    // `--only "fleet N"`: a busy fleet of N SDK extensions, `--depth` calls in flight
    // each.
    if let Some(size) = only.strip_prefix("fleet ").and_then(|n| n.parse().ok()) {
        let (mut fleet, _) = Fleet::start(exe, size, size, "0.4").expect("starting the fleet");
        fleet.run(calls / 10, depth).expect("warm-up");
        let elapsed = fleet.run(calls, depth).expect("round trips");
        println!(
            "{only}: {calls} calls at depth {depth} each: {:.0} calls/s",
            calls as f64 / elapsed.as_secs_f64()
        );
        fleet.host().shutdown();
        return;
    }
    let mut subjects = standard_subjects(exe).expect("starting the subjects");
    subjects.extend(peers);
    let Some(subject) = subjects.iter_mut().find(|s| s.name() == only) else {
        let names: Vec<&str> = subjects.iter().map(|s| s.name()).collect();
        eprintln!("error: no subject {only:?}; known: {names:?}");
        std::process::exit(1);
    };
    subject.run(calls / 10, depth).expect("warm-up");
    // `--gap MS`: calls now and then, one at a time with a pause before each, as an
    // editor makes them; prints the median and the slowest tenth.
    if let Some(gap) = value("--gap").and_then(|v| v.parse().ok()) {
        let mut each: Vec<std::time::Duration> = (0..calls)
            .map(|_| {
                std::thread::sleep(std::time::Duration::from_millis(gap));
                subject.run(1, 1).expect("a round trip")
            })
            .collect();
        each.sort();
        let at = |share: f64| each[((each.len() - 1) as f64 * share) as usize];
        println!(
            "{only}: {calls} calls {gap} ms apart: median {:.1} µs, 90th percentile {:.1} µs",
            at(0.5).as_secs_f64() * 1e6,
            at(0.9).as_secs_f64() * 1e6
        );
        return;
    }
    let elapsed = subject.run(calls, depth).expect("round trips");
    println!(
        "{only}: {calls} calls at depth {depth}: {:.2} µs/call, {:.0} calls/s",
        elapsed.as_secs_f64() * 1e6 / calls as f64,
        calls as f64 / elapsed.as_secs_f64()
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let flag = |name: &str| args.iter().any(|a| a == name);
    let value = |name: &str| {
        let at = args.iter().position(|a| a == name)?;
        args.get(at + 1).cloned()
    };
    // `cargo bench` passes `--bench`; anything else (such as `cargo test
    // --all-targets`) must not start a benchmark run.
    if !flag("--bench") {
        eprintln!("run with `cargo bench --bench table [-- --quick]`");
        return;
    }
    let exe = PathBuf::from(env!("CARGO_BIN_EXE_octet-host"));
    let load = hogs::requested(&args);
    let _hogs = hogs::Hogs::start(load);
    if load > 0 {
        eprintln!("bench: {load} busy-loop processes run beside the measurement");
    }
    let _prompt = flag("--prompt-wakeups").then(|| {
        let prompt = octet_host::host::PromptWakeups::for_this_thread();
        let taken = if prompt.applied() {
            "has"
        } else {
            "could not get"
        };
        eprintln!("bench: the calling thread {taken} the short scheduler slice");
        prompt
    });
    let options = SuiteOptions::new(exe.clone(), flag("--quick"));
    let lsp = match lsp_peer::LspPeer::spawn(&exe) {
        Ok(peer) => peer,
        Err(e) => {
            eprintln!("error: cannot start the lsp-server peer: {e}");
            std::process::exit(1);
        }
    };
    let rmcp = match rmcp_peer::RmcpPeer::spawn(&exe) {
        Ok(peer) => peer,
        Err(e) => {
            eprintln!("error: cannot start the rmcp peer: {e}");
            std::process::exit(1);
        }
    };
    let peers: Vec<Box<dyn RoundTrip>> = vec![Box::new(lsp), Box::new(rmcp)];
    if let Some(only) = value("--only") {
        profile(&exe, peers, &only, &value);
        return;
    }
    let mut progress = |step: &str| eprintln!("bench: {step}");
    match suite::run(&options, peers, &mut progress) {
        Ok(report) if flag("--json") => println!("{}", report.to_json()),
        Ok(report) => print!("{}", report.markdown()),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
