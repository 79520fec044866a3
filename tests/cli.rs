//! The `octet-host` binary, run as a person or a script would run it.
//!
//! The modules live in `tests/cli/`: the harness (`world`), `demo`, the one-shot
//! subcommands (`commands`) and the long-running ones with signals (`processes`).

mod support;

#[path = "cli/commands.rs"]
mod commands;
#[path = "cli/demo.rs"]
mod demo;
#[path = "cli/processes.rs"]
mod processes;
#[path = "cli/world.rs"]
mod world;
