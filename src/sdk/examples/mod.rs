//! Example extensions bundled in the `octet-host` binary, and the kitchen-sink fixture
//! used by integration tests.
//!
//! The binary runs one with `octet-host __extension <name>`; a manifest points its
//! `[entrypoint]` at the binary with those two arguments. Every example speaks
//! whichever API version the manifest selects (0.1, 0.2, 0.3 or 0.4) through
//! `OCTET_EXTENSION_API_VERSION`.

mod checkpoint;
mod circuits;
pub mod compose;
pub mod delegate;
mod git_status;
mod hello_world;
pub mod notes;
pub mod showcase;
mod test_extension;
pub mod turns;

pub use checkpoint::checkpoint;
pub use circuits::circuits_example as circuits;
pub use compose::compose;
pub use delegate::delegate;
pub use git_status::git_status;
pub use hello_world::{hello_canonical, hello_world};
pub use notes::notes;
pub use showcase::showcase;
pub use test_extension::test_extension;
pub use turns::turns;

use super::Extension;

/// The canonical names [`by_name`] accepts (manifest-style, with hyphens).
pub const NAMES: [&str; 11] = [
    "hello-world",
    "hello-canonical",
    "git-status",
    "checkpoint",
    "test-extension",
    "showcase",
    "notes",
    "turns",
    "delegate",
    "compose",
    "circuits",
];

/// The example called `name`: one of [`NAMES`], or the same with underscores.
pub fn by_name(name: &str) -> Option<Extension> {
    match name.replace('_', "-").as_str() {
        "hello-world" => Some(hello_world()),
        "hello-canonical" => Some(hello_canonical()),
        "git-status" => Some(git_status()),
        "checkpoint" => Some(checkpoint()),
        "test-extension" => Some(test_extension()),
        "showcase" => Some(showcase()),
        "notes" => Some(notes()),
        "turns" => Some(turns()),
        "delegate" => Some(delegate()),
        "compose" => Some(compose()),
        "circuits" => Some(circuits()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_resolves_in_both_spellings() {
        for name in NAMES {
            assert!(by_name(name).is_some(), "{name}");
            assert!(by_name(&name.replace('-', "_")).is_some(), "{name}");
        }
        assert!(by_name("nope").is_none());
    }

    #[test]
    fn catalogs_are_what_the_reports_promise() {
        let names = |ext: &Extension| ext.tools().map(|t| t.name.clone()).collect::<Vec<_>>();
        assert_eq!(names(&hello_world()), ["hello_world"]);
        assert_eq!(names(&git_status()), ["git_status"]);
        assert!(names(&checkpoint()).is_empty());
        assert_eq!(names(&showcase()), ["snapshot"]);
        assert_eq!(names(&notes()), ["save_draft"]);
        assert_eq!(names(&delegate()), ["delegate", "observe"]);
        assert_eq!(names(&compose()), ["survey", "repeat", "read_blob"]);
        assert_eq!(
            names(&circuits()),
            ["build_circuit", "simulate", "export_netlist", "scrap"]
        );
        assert_eq!(
            names(&test_extension()),
            [
                "echo", "sleep", "progress", "confirm", "ask", "notify", "crash", "big", "fail",
                "panic", "env", "events"
            ]
        );
    }
}
