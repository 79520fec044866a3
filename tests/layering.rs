//! The generic dispatcher names no runtime-served feature: every file of
//! `src/dispatcher/` outside `features/` (each feature's own modules and the
//! registration table) and `route.rs` (the method table) is free of their names, so a
//! feature is added, changed or removed in its own module and one registration.

use std::path::{Path, PathBuf};

const FEATURE_WORDS: [&str; 7] = [
    "composition",
    "bulk",
    "blob",
    "agent",
    "resource_ref",
    "resource ref",
    "dispose",
];

fn rust_files(dir: &Path, into: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, into);
        } else if path.extension().is_some_and(|e| e == "rs") {
            into.push(path);
        }
    }
}

#[test]
fn the_generic_dispatcher_names_no_runtime_feature() {
    let dispatcher = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/dispatcher");
    let mut files = Vec::new();
    rust_files(&dispatcher, &mut files);
    let generic: Vec<_> = files
        .into_iter()
        .filter(|f| !f.starts_with(dispatcher.join("features")))
        .filter(|f| f != &dispatcher.join("route.rs"))
        .collect();
    assert!(generic.len() > 20, "{generic:?}");
    let mut found = Vec::new();
    for file in &generic {
        let text = std::fs::read_to_string(file).unwrap().to_lowercase();
        for (number, line) in text.lines().enumerate() {
            for word in FEATURE_WORDS {
                if line.contains(word) {
                    found.push(format!("{}:{}: {word}", file.display(), number + 1));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "runtime features named outside their modules:\n{}",
        found.join("\n")
    );
}
