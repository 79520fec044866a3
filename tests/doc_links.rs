//! Every relative link in the repository's Markdown (README.md, CHANGELOG.md, docs/,
//! benches/, fuzz/) names a file inside the repository, so that a reader who clones it
//! finds what the text points to.

use std::path::{Path, PathBuf};

/// The Markdown files a reader of a clone sees.
fn markdown_files(root: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = ["README.md", "CHANGELOG.md"]
        .iter()
        .map(|f| root.join(f))
        .collect();
    for dir in ["docs", "benches", "fuzz"] {
        for entry in std::fs::read_dir(root.join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "md") {
                files.push(path);
            }
        }
    }
    files
}

/// The targets of the inline links `[text](target)` in `text`.
fn link_targets(text: &str) -> Vec<String> {
    let mut targets = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("](") {
        rest = &rest[at + 2..];
        if let Some(end) = rest.find(')') {
            targets.push(rest[..end].to_string());
        }
    }
    targets
}

#[test]
fn every_relative_link_names_a_file_in_the_repository() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let canonical_root = root.canonicalize().unwrap();
    let mut broken = Vec::new();
    for file in markdown_files(root) {
        let text =
            std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        for target in link_targets(&text) {
            let path = target.split('#').next().unwrap_or_default();
            if path.is_empty() || path.contains("://") || path.starts_with("mailto:") {
                continue;
            }
            let resolved = file.parent().unwrap().join(path);
            let inside = resolved
                .canonicalize()
                .is_ok_and(|p| p.starts_with(&canonical_root));
            if !inside {
                broken.push(format!("{}: ({target})", file.display()));
            }
        }
    }
    assert!(
        broken.is_empty(),
        "links to nothing in the repository:\n{}",
        broken.join("\n")
    );
}

#[test]
fn the_link_reader_finds_inline_links() {
    let targets = link_targets("see [a](docs/a.md#x) and [b](https://example.org) ([c](../c))");
    assert_eq!(targets, ["docs/a.md#x", "https://example.org", "../c"]);
}
