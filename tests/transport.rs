//! The transport against real processes: environment, working directory, process
//! groups, scratch directories, command resolution, and the reader, writer and stderr
//! threads. Fixtures are stdlib-only Python 3 scripts in `tests/fixtures/`; the test
//! modules live in `tests/transport/`.

#![cfg(unix)]

#[path = "transport/process_groups.rs"]
mod process_groups;
#[path = "transport/reader.rs"]
mod reader;
#[path = "transport/spawning.rs"]
mod spawning;
#[path = "transport/stderr.rs"]
mod stderr;
#[path = "transport/support.rs"]
mod support;
#[path = "transport/writer.rs"]
mod writer;
