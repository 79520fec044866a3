//! The runtime-served features' options are one table (`RuntimeOptions::FLAGS`): the
//! binary's help, serve's synopsis in docs/serve-protocol.md, the Python client's
//! keywords and the Node client's options each name every option of it, so an option
//! added to the table and not to a surface fails here.

mod support;

use std::path::Path;
use std::process::Command;

use octet_host::features::RuntimeOptions;

fn read(path: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap()
}

#[test]
fn every_surface_names_every_runtime_option() {
    let help = Command::new(support::octet_binary())
        .args(["serve", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8(help.stdout).unwrap();
    let docs = read("docs/serve-protocol.md");
    let python = read("python/octet_host/_session.py");
    let node = read("node/src/host.ts");
    for (field, flag) in RuntimeOptions::FLAGS {
        assert!(help.contains(flag), "`serve --help` lacks {flag}:\n{help}");
        assert!(docs.contains(flag), "docs/serve-protocol.md lacks {flag}");
        assert!(
            python.contains(&format!("{field}:")),
            "the Python client has no `{field}` keyword"
        );
        assert!(
            python.contains(&format!("\"{flag}\"")),
            "the Python client never passes {flag}"
        );
        // The Node client's option is the field in camelCase (a duration in ms).
        let camel: String = field
            .split('_')
            .enumerate()
            .map(|(i, part)| {
                let mut chars = part.chars();
                match (i, chars.next()) {
                    (0, Some(first)) => first.to_string() + chars.as_str(),
                    (_, Some(first)) => first.to_ascii_uppercase().to_string() + chars.as_str(),
                    (_, None) => String::new(),
                }
            })
            .collect();
        assert!(
            node.contains(&format!("options.{camel}")),
            "the Node client has no `{camel}` option"
        );
        assert!(
            node.contains(&format!("\"{flag}\"")),
            "the Node client never passes {flag}"
        );
    }
}
