//! The two parts of README.md that drift most are held to the code: the tree of `src/`
//! under "Architecture" lists exactly the folders of `src/`, and the CLI synopsis names
//! every global option the binary's help lists.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

fn readme() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap()
}

#[test]
fn the_architecture_tree_lists_every_folder_of_src() {
    let readme = readme();
    let tree: BTreeSet<String> = readme
        .lines()
        .skip_while(|l| *l != "src/")
        .skip(1)
        .take_while(|l| !l.starts_with("```"))
        .filter_map(|l| l.split_whitespace().next())
        .filter_map(|word| word.strip_suffix('/'))
        .map(str::to_string)
        .collect();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let folders: BTreeSet<String> = std::fs::read_dir(src)
        .unwrap()
        .map(|entry| entry.unwrap())
        .filter(|entry| entry.file_type().unwrap().is_dir())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(tree, folders, "README.md's tree of src/");
}

#[test]
fn the_cli_synopsis_names_every_global_option() {
    let help = Command::new(env!("CARGO_BIN_EXE_octet-host"))
        .arg("--help")
        .output()
        .unwrap();
    let help = String::from_utf8(help.stdout).unwrap();
    let options: Vec<&str> = help
        .lines()
        .skip_while(|l| !l.starts_with("Options:"))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|word| word.starts_with("--") && !matches!(*word, "--help" | "--version"))
        .collect();
    assert!(options.len() >= 10, "{help}");
    let readme = readme();
    let synopsis = readme
        .lines()
        .find(|l| l.starts_with("`octet-host [--workspace"))
        .expect("the CLI synopsis");
    for option in options {
        let named = format!("[{option}");
        let alternative = format!("| {option}");
        assert!(
            synopsis.contains(&named) || synopsis.contains(&alternative),
            "README's synopsis lacks {option}: {synopsis}"
        );
    }
}
