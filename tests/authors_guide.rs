//! The raw extension in docs/extension-authors.md runs as written, on API 0.1, 0.2 and
//! 0.4: the guide's code block is extracted and called through the library.

mod support;

use std::os::unix::fs::PermissionsExt;

use octet_host::CallOptions;
use serde_json::json;

/// The guide's Python example, as its first ```python block.
fn example() -> String {
    let guide = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/docs/extension-authors.md"
    ))
    .unwrap();
    let start = guide.find("```python\n").expect("a python block") + "```python\n".len();
    let end = start + guide[start..].find("```").unwrap();
    guide[start..end].to_string()
}

#[test]
fn the_guides_raw_extension_runs_on_every_feature_wire() {
    let root = tempfile::tempdir().unwrap();
    let code = example();
    for api in ["0.1", "0.2", "0.4"] {
        let name = format!("hello{}", api.replace('.', ""));
        let dir = root.path().join(&name);
        std::fs::create_dir_all(&dir).unwrap();
        let script = dir.join("extension.py");
        std::fs::write(&script, &code).unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        support::write_manifest(
            root.path(),
            &name,
            &format!(
                "name = {name:?}\nversion = \"0.1.0\"\napi_version = {api:?}\n\n\
                 [entrypoint]\ncommand = \"extension.py\"\n\n[contributes]\ntools = [\"hello\"]\n"
            ),
        );
        let host = support::host(root.path(), &[dir]);
        let ext = host.start(&name).unwrap();
        let out = ext
            .call_tool("hello", json!({}), CallOptions::default())
            .unwrap();
        assert_eq!(out.text(), "Hello!", "API {api}");
        host.shutdown();
    }
}
