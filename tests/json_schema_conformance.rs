//! JSON Schema conformance for the bounded `output_schema` subset (section 1.1).
//!
//! Runs the draft 2020-12 subset of JSON-Schema-Test-Suite in
//! `tests/data/json-schema` as its README prescribes: every group of every
//! file under `draft2020-12/` (including `optional/`) is looked up in `manifest.json`.
//! A `pass` group must compile and every test's `valid` must match exactly; a
//! `reject-unsupported-keyword` group must fail to compile with
//! `SchemaError::UnsupportedKeyword` naming one of the keywords the manifest lists.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use octet_host::validate::schema::{OutputSchema, SchemaError};
use serde_json::Value;

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/json-schema");

fn root() -> PathBuf {
    let root = PathBuf::from(ROOT);
    assert!(
        root.join("manifest.json").is_file() && root.join("draft2020-12").is_dir(),
        "the JSON Schema conformance data is missing: expected manifest.json and \
         draft2020-12/ under {}",
        root.display()
    );
    root
}

fn read_json(path: &Path) -> Value {
    let text =
        fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{} is not valid JSON: {e}", path.display()))
}

/// Every `.json` file under `dir`, as paths relative to `root` with `/` separators.
fn test_files(root: &Path, dir: &Path, out: &mut BTreeSet<String>) {
    let entries =
        fs::read_dir(dir).unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            test_files(root, &path, out);
        } else if path.extension().is_some_and(|ext| ext == "json") {
            let relative = path.strip_prefix(root).expect("under the root");
            let parts: Vec<String> = relative
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            out.insert(parts.join("/"));
        }
    }
}

#[derive(Default)]
struct Totals {
    groups: usize,
    inside: usize,
    outside: usize,
    tests: usize,
    tests_inside: usize,
    tests_inside_valid: usize,
}

fn as_str<'a>(value: &'a Value, what: &str) -> &'a str {
    value
        .as_str()
        .unwrap_or_else(|| panic!("{what} is not a string"))
}

fn as_array<'a>(value: &'a Value, what: &str) -> &'a Vec<Value> {
    value
        .as_array()
        .unwrap_or_else(|| panic!("{what} is not an array"))
}

#[test]
fn draft2020_12_subset_conforms() {
    let root = root();
    let manifest = read_json(&root.join("manifest.json"));
    let manifest_files = as_array(&manifest["files"], "manifest files");

    // The manifest and the directory must describe the same files.
    let mut on_disk = BTreeSet::new();
    test_files(&root, &root.join("draft2020-12"), &mut on_disk);
    let listed: BTreeSet<String> = manifest_files
        .iter()
        .map(|f| as_str(&f["file"], "manifest file name").to_owned())
        .collect();
    assert_eq!(
        on_disk, listed,
        "manifest.json and draft2020-12/ list different files"
    );

    let mut totals = Totals::default();
    let mut failures: Vec<String> = Vec::new();

    for entry in manifest_files {
        let file = as_str(&entry["file"], "manifest file name");
        let groups_value = read_json(&root.join(file));
        let groups = as_array(&groups_value, file);
        let expectations = as_array(&entry["groups"], "manifest groups");
        assert_eq!(
            groups.len(),
            expectations.len(),
            "{file}: the manifest describes a different number of groups"
        );

        for (index, (group, expect)) in groups.iter().zip(expectations).enumerate() {
            let description = as_str(&group["description"], "group description");
            assert_eq!(
                expect["index"].as_u64(),
                Some(index as u64),
                "{file} #{index}"
            );
            assert_eq!(
                expect["description"].as_str(),
                Some(description),
                "{file} #{index}: the manifest names another group"
            );
            let tests = as_array(&group["tests"], "group tests");
            assert_eq!(
                expect["tests"].as_u64(),
                Some(tests.len() as u64),
                "{file} #{index}"
            );
            totals.groups += 1;
            totals.tests += tests.len();
            let label = format!("{file} #{index} ({description})");

            match as_str(&expect["expect"], "expect") {
                "pass" => {
                    totals.inside += 1;
                    totals.tests_inside += tests.len();
                    let schema = match OutputSchema::compile(&group["schema"]) {
                        Ok(schema) => schema,
                        Err(e) => {
                            failures.push(format!("{label}: schema refused: {e}"));
                            continue;
                        }
                    };
                    for test in tests {
                        let valid = test["valid"].as_bool().expect("test valid flag");
                        if valid {
                            totals.tests_inside_valid += 1;
                        }
                        let outcome = schema.validate(&test["data"]);
                        if outcome.is_ok() != valid {
                            failures.push(format!(
                                "{label} / {}: expected valid={valid}, got {outcome:?}",
                                as_str(&test["description"], "test description")
                            ));
                        }
                    }
                }
                "reject-unsupported-keyword" => {
                    totals.outside += 1;
                    let allowed: Vec<&str> =
                        as_array(&expect["outside_keywords"], "outside_keywords")
                            .iter()
                            .map(|k| as_str(k, "outside keyword"))
                            .collect();
                    assert!(!allowed.is_empty(), "{label}: no outside keywords listed");
                    match OutputSchema::compile(&group["schema"]) {
                        Err(SchemaError::UnsupportedKeyword { keyword, .. })
                            if allowed.contains(&keyword.as_str()) => {}
                        other => failures.push(format!(
                            "{label}: expected UnsupportedKeyword naming one of {allowed:?}, \
                             got {:?}",
                            other.map(|_| "a compiled schema")
                        )),
                    }
                }
                other => panic!("{label}: unknown expectation {other:?}"),
            }
        }
    }

    assert!(
        failures.is_empty(),
        "{} conformance failure(s):\n{}",
        failures.len(),
        failures.join("\n")
    );

    // The README's totals: 142 groups (125 inside, 17 outside), 535 tests, 459 of them in
    // inside groups (238 valid).
    assert_eq!(totals.groups, 142);
    assert_eq!(totals.inside, 125);
    assert_eq!(totals.outside, 17);
    assert_eq!(totals.tests, 535);
    assert_eq!(totals.tests_inside, 459);
    assert_eq!(totals.tests_inside_valid, 238);
    let declared = &manifest["totals"];
    assert_eq!(declared["inside"].as_u64(), Some(125));
    assert_eq!(declared["outside"].as_u64(), Some(17));
    assert_eq!(declared["tests_inside"].as_u64(), Some(459));
}
