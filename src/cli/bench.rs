//! `bench [--quick]`: the whole-process benchmark of issue 6, printed as the table
//! `benches/README.md` records; and the hidden `__bench-echo MODE` children it spawns.
//!
//! The `lsp-server` peer is a dev-dependency, so its row comes only from
//! `cargo bench --bench table`, which runs this same suite with the peer added.

use clap::Args;
use serde_json::json;

use super::output;
use crate::bench::echo::{self, EchoMode};
use crate::bench::suite::{self, SuiteOptions};

/// Arguments of `bench`.
#[derive(Debug, Args)]
pub(crate) struct BenchArgs {
    /// A short smoke run (about a tenth of the full run's time)
    #[arg(long)]
    quick: bool,
    /// SDK extensions to start for the idle-memory measurement; the scaling curve
    /// (1, 10, 50, 100, 200 busy) stops at this many
    #[arg(long, value_name = "N", default_value_t = 200)]
    idle: usize,
    /// How many of those to keep busy at once for the fleet measurement
    #[arg(long, value_name = "N", default_value_t = 50)]
    busy: usize,
}

/// Runs `bench` and returns the exit code: 0, or 1 when a measurement failed.
pub(crate) fn run(args: &BenchArgs, json: bool) -> i32 {
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => {
            output::eprint_line(&format!("error: cannot locate the octet-host binary: {e}"));
            return 1;
        }
    };
    let mut options = SuiteOptions::new(exe, args.quick);
    options.idle_extensions = args.idle.max(1);
    options.busy_extensions = args.busy.max(1);
    let mut progress = |step: &str| output::eprint_line(&format!("bench: {step}"));
    match suite::run(&options, Vec::new(), &mut progress) {
        Ok(report) => {
            if json {
                output::print_json(&report.to_json());
            } else {
                output::print(&report.markdown());
            }
            0
        }
        Err(e) => {
            if json {
                output::print_json(
                    &json!({"error": {"code": "bench_failed", "message": e.to_string()}}),
                );
            }
            output::eprint_line(&format!("error: {e}"));
            1
        }
    }
}

/// Runs the echo child `mode` (`octet-host __bench-echo MODE`) and returns the exit code.
pub(crate) fn run_echo(mode: &str) -> i32 {
    let Some(mode) = EchoMode::parse(mode) else {
        let known: Vec<&str> = EchoMode::ALL.iter().map(|m| m.as_str()).collect();
        output::eprint_line(&format!("unknown echo mode {mode:?}; known: {known:?}"));
        return 1;
    };
    match echo::run_echo(mode) {
        Ok(()) => 0,
        Err(e) => {
            output::eprint_line(&format!("__bench-echo {}: {e}", mode.as_str()));
            1
        }
    }
}
