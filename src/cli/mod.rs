//! The `octet-host` binary's subcommands.

/// Runs the command line and returns the process exit code.
pub fn main() -> i32 {
    // Hidden entry point: `octet-host __extension <name>` runs one of the bundled example
    // extensions (`sdk::examples`) over stdio, so the demo and the tests can use the binary
    // itself as an extension. Deliberately tiny; the CLI proper is written separately.
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("__extension") {
        let name = args.get(2).map(String::as_str).unwrap_or("");
        let Some(extension) = crate::sdk::examples::by_name(name) else {
            eprintln!(
                "unknown example extension {name:?}; known: {:?}",
                crate::sdk::examples::NAMES
            );
            return 1;
        };
        return match extension.run() {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("{name}: {e}");
                1
            }
        };
    }
    0
}
