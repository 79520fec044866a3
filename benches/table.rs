//! The whole-process run of `octet-host bench` plus the `lsp-server` peer, printed as
//! the Markdown table `benches/README.md` records.
//!
//! `cargo bench --bench table` (full) or `cargo bench --bench table -- --quick`
//! (smoke run); `-- --json` prints JSON instead.

#[path = "support/lsp_peer.rs"]
mod lsp_peer;

use std::path::PathBuf;

use octet_host::bench::suite::{self, SuiteOptions};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let flag = |name: &str| args.iter().any(|a| a == name);
    // `cargo bench` passes `--bench`; anything else (such as `cargo test
    // --all-targets`) must not start a benchmark run.
    if !flag("--bench") {
        eprintln!("run with `cargo bench --bench table [-- --quick]`");
        return;
    }
    let exe = PathBuf::from(env!("CARGO_BIN_EXE_octet-host"));
    let options = SuiteOptions::new(exe.clone(), flag("--quick"));
    let peer = match lsp_peer::LspPeer::spawn(&exe) {
        Ok(peer) => peer,
        Err(e) => {
            eprintln!("error: cannot start the lsp-server peer: {e}");
            std::process::exit(1);
        }
    };
    let mut progress = |step: &str| eprintln!("bench: {step}");
    match suite::run(&options, vec![Box::new(peer)], &mut progress) {
        Ok(report) if flag("--json") => println!("{}", report.to_json()),
        Ok(report) => print!("{}", report.markdown()),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
