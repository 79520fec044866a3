//! Loading and discovery of `extension.toml` against real directories.

use std::ffi::CString;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use octet_host::limits;
use octet_host::manifest::{
    discover, load, load_explicit, ApiVersion, Catalog, DiagnosticKind, DiscoveryDiagnostic,
    DiscoveryRoots, FileKind, LoadError, ManifestError, Source, EXTENSIONS_DIR, MANIFEST_FILE_NAME,
};
use tempfile::TempDir;

/// A workspace, a home directory and a directory for explicit extensions, all fresh.
struct Fixture {
    _tmp: TempDir,
    workspace: PathBuf,
    home: PathBuf,
    elsewhere: PathBuf,
}

impl Fixture {
    fn new() -> Fixture {
        let tmp = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(tmp.path()).unwrap();
        let workspace = base.join("workspace");
        let home = base.join("home");
        let elsewhere = base.join("elsewhere");
        for dir in [&workspace, &home, &elsewhere] {
            fs::create_dir(dir).unwrap();
        }
        Fixture {
            _tmp: tmp,
            workspace,
            home,
            elsewhere,
        }
    }

    fn project_root(&self) -> PathBuf {
        self.workspace.join(EXTENSIONS_DIR)
    }

    fn global_root(&self) -> PathBuf {
        self.home.join(EXTENSIONS_DIR)
    }

    fn roots(&self) -> DiscoveryRoots {
        DiscoveryRoots::new(&self.workspace).with_home(&self.home)
    }
}

fn manifest_text(name: &str, api: &str) -> String {
    format!(
        "name = {name:?}\nversion = \"1.0.0\"\napi_version = {api:?}\n\
         [entrypoint]\ncommand = \"run\"\n"
    )
}

/// Creates `<parent>/<dir_name>/extension.toml` holding `text`; returns the directory.
fn write_extension(parent: &Path, dir_name: &str, text: &str) -> PathBuf {
    let dir = parent.join(dir_name);
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join(MANIFEST_FILE_NAME), text).unwrap();
    dir
}

fn valid_extension(parent: &Path, name: &str) -> PathBuf {
    write_extension(parent, name, &manifest_text(name, "0.2"))
}

fn only_diagnostic(catalog: &Catalog) -> &DiscoveryDiagnostic {
    assert_eq!(
        catalog.diagnostics.len(),
        1,
        "diagnostics: {:#?}",
        catalog.diagnostics
    );
    &catalog.diagnostics[0]
}

#[test]
fn discovers_project_global_and_explicit_extensions() {
    let fx = Fixture::new();
    let project = valid_extension(&fx.project_root(), "beta");
    let global = valid_extension(&fx.global_root(), "alpha");
    let explicit = valid_extension(&fx.elsewhere, "gamma");

    let catalog = discover(&fx.roots().with_explicit(&explicit));
    assert!(catalog.diagnostics.is_empty(), "{:#?}", catalog.diagnostics);
    assert_eq!(
        catalog.names().collect::<Vec<_>>(),
        ["alpha", "beta", "gamma"]
    );

    let expected = [
        ("alpha", &global, Source::Global),
        ("beta", &project, Source::Project),
        ("gamma", &explicit, Source::Explicit),
    ];
    for (name, dir, source) in expected {
        let entry = catalog.get(name).unwrap();
        assert_eq!(entry.source, source);
        assert_eq!(&entry.dir, dir);
        assert_eq!(entry.manifest_path, dir.join(MANIFEST_FILE_NAME));
        assert!(entry.manifest_path.is_absolute());
        assert_eq!(entry.manifest.api_version, ApiVersion::V0_2);
    }
    assert!(catalog.get("delta").is_none());
}

#[test]
fn project_shadows_global() {
    let fx = Fixture::new();
    let project = valid_extension(&fx.project_root(), "tool");
    let global = valid_extension(&fx.global_root(), "tool");

    let catalog = discover(&fx.roots());
    assert_eq!(catalog.entries.len(), 1);
    assert_eq!(catalog.get("tool").unwrap().source, Source::Project);

    let diagnostic = only_diagnostic(&catalog);
    assert_eq!(diagnostic.source, Source::Global);
    assert_eq!(diagnostic.path, global.join(MANIFEST_FILE_NAME));
    match &diagnostic.kind {
        DiagnosticKind::Shadowed {
            name,
            winner,
            winner_source,
            loser,
        } => {
            assert_eq!(name, "tool");
            assert_eq!(winner, &project.join(MANIFEST_FILE_NAME));
            assert_eq!(*winner_source, Source::Project);
            assert_eq!(loser, &global.join(MANIFEST_FILE_NAME));
        }
        other => panic!("unexpected {other:?}"),
    }
    let message = diagnostic.to_string();
    assert!(
        message.contains(&project.display().to_string()),
        "{message}"
    );
    assert!(message.contains(&global.display().to_string()), "{message}");
}

#[test]
fn explicit_shadows_project_and_global() {
    let fx = Fixture::new();
    let project = valid_extension(&fx.project_root(), "tool");
    let global = valid_extension(&fx.global_root(), "tool");
    let explicit = valid_extension(&fx.elsewhere, "tool");

    let catalog = discover(&fx.roots().with_explicit(&explicit));
    let entry = catalog.get("tool").unwrap();
    assert_eq!(entry.source, Source::Explicit);
    assert_eq!(entry.dir, explicit);

    let losers: Vec<(PathBuf, PathBuf, Source)> = catalog
        .diagnostics
        .iter()
        .map(|diagnostic| match &diagnostic.kind {
            DiagnosticKind::Shadowed {
                winner,
                winner_source,
                loser,
                ..
            } => (winner.clone(), loser.clone(), *winner_source),
            other => panic!("unexpected {other:?}"),
        })
        .collect();
    let winner = explicit.join(MANIFEST_FILE_NAME);
    assert_eq!(
        losers,
        [
            (
                winner.clone(),
                project.join(MANIFEST_FILE_NAME),
                Source::Explicit
            ),
            (winner, global.join(MANIFEST_FILE_NAME), Source::Explicit),
        ]
    );
}

#[test]
fn the_first_explicit_directory_wins_over_a_later_one() {
    let fx = Fixture::new();
    let first = valid_extension(&fx.elsewhere.join("one"), "tool");
    let second = valid_extension(&fx.elsewhere.join("two"), "tool");

    let catalog = discover(&fx.roots().with_explicit(&first).with_explicit(&second));
    assert_eq!(catalog.get("tool").unwrap().dir, first);
    assert!(matches!(
        &only_diagnostic(&catalog).kind,
        DiagnosticKind::Shadowed { loser, .. } if *loser == second.join(MANIFEST_FILE_NAME)
    ));
}

#[test]
fn the_same_manifest_reached_twice_is_kept_once() {
    let fx = Fixture::new();
    let project = valid_extension(&fx.project_root(), "tool");
    let catalog = discover(&fx.roots().with_explicit(&project));
    assert!(catalog.diagnostics.is_empty(), "{:#?}", catalog.diagnostics);
    assert_eq!(catalog.entries.len(), 1);
    assert_eq!(catalog.entries[0].source, Source::Explicit);
}

#[test]
fn directory_name_must_equal_the_manifest_name() {
    let fx = Fixture::new();
    let project = write_extension(&fx.project_root(), "foo", &manifest_text("bar", "0.1"));
    let explicit = write_extension(&fx.elsewhere, "baz", &manifest_text("qux", "0.1"));

    let catalog = discover(&fx.roots().with_explicit(&explicit));
    assert!(catalog.entries.is_empty());
    assert_eq!(catalog.diagnostics.len(), 2, "{:#?}", catalog.diagnostics);
    let expected = [
        (explicit, Source::Explicit, "baz", "qux"),
        (project, Source::Project, "foo", "bar"),
    ];
    for (diagnostic, (dir, source, dir_name, name)) in catalog.diagnostics.iter().zip(expected) {
        assert_eq!(diagnostic.source, source);
        assert_eq!(diagnostic.path, dir.join(MANIFEST_FILE_NAME));
        match &diagnostic.kind {
            DiagnosticKind::NameMismatch {
                dir_name: found_dir,
                name: found_name,
            } => {
                assert_eq!(found_dir, dir_name);
                assert_eq!(found_name, name);
            }
            other => panic!("unexpected {other:?}"),
        }
    }
}

#[test]
fn a_mismatched_entry_does_not_shadow_a_good_one() {
    let fx = Fixture::new();
    // The project directory "other" declares "tool" and is refused, so it cannot
    // shadow the global "tool".
    write_extension(&fx.project_root(), "other", &manifest_text("tool", "0.2"));
    valid_extension(&fx.global_root(), "tool");
    let catalog = discover(&fx.roots());
    assert_eq!(catalog.get("tool").unwrap().source, Source::Global);
    assert!(matches!(
        only_diagnostic(&catalog).kind,
        DiagnosticKind::NameMismatch { .. }
    ));
}

#[test]
fn a_symlinked_manifest_is_refused() {
    let fx = Fixture::new();
    let real = valid_extension(&fx.elsewhere, "linked");
    let dir = fx.project_root().join("linked");
    fs::create_dir_all(&dir).unwrap();
    std::os::unix::fs::symlink(real.join(MANIFEST_FILE_NAME), dir.join(MANIFEST_FILE_NAME))
        .unwrap();

    let catalog = discover(&fx.roots());
    assert!(catalog.entries.is_empty());
    let diagnostic = only_diagnostic(&catalog);
    assert_eq!(diagnostic.path, dir.join(MANIFEST_FILE_NAME));
    assert!(matches!(
        diagnostic.kind,
        DiagnosticKind::InvalidManifest(LoadError::Symlink)
    ));

    // A dangling symlink is refused the same way rather than skipped.
    let dangling = fx.project_root().join("dangling");
    fs::create_dir_all(&dangling).unwrap();
    std::os::unix::fs::symlink(
        fx.elsewhere.join("nothing"),
        dangling.join(MANIFEST_FILE_NAME),
    )
    .unwrap();
    let catalog = discover(&fx.roots());
    assert_eq!(catalog.diagnostics.len(), 2);
    assert!(catalog
        .diagnostics
        .iter()
        .all(|d| matches!(d.kind, DiagnosticKind::InvalidManifest(LoadError::Symlink))));
}

#[test]
fn a_symlinked_extension_directory_is_followed_and_canonicalized() {
    let fx = Fixture::new();
    let real = valid_extension(&fx.elsewhere, "linked");
    fs::create_dir_all(fx.project_root()).unwrap();
    std::os::unix::fs::symlink(&real, fx.project_root().join("linked")).unwrap();

    let catalog = discover(&fx.roots());
    assert!(catalog.diagnostics.is_empty(), "{:#?}", catalog.diagnostics);
    let entry = catalog.get("linked").unwrap();
    assert_eq!(entry.source, Source::Project);
    assert_eq!(entry.dir, real);
    assert_eq!(entry.manifest_path, real.join(MANIFEST_FILE_NAME));
}

#[test]
fn a_fifo_named_extension_toml_is_refused_without_blocking() {
    let fx = Fixture::new();
    let dir = fx.project_root().join("piped");
    fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join(MANIFEST_FILE_NAME);
    let c_path = CString::new(fifo.as_os_str().as_bytes()).unwrap();
    // SAFETY: `c_path` is a valid NUL-terminated path that outlives the call.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o644) }, 0);

    let catalog = discover(&fx.roots());
    assert!(catalog.entries.is_empty());
    let diagnostic = only_diagnostic(&catalog);
    assert_eq!(diagnostic.path, fifo);
    assert!(matches!(
        diagnostic.kind,
        DiagnosticKind::InvalidManifest(LoadError::NotRegular {
            kind: FileKind::Fifo
        })
    ));
}

#[test]
fn a_directory_named_extension_toml_is_refused() {
    let fx = Fixture::new();
    let dir = fx.project_root().join("nested");
    fs::create_dir_all(dir.join(MANIFEST_FILE_NAME)).unwrap();

    let catalog = discover(&fx.roots());
    assert!(catalog.entries.is_empty());
    assert!(matches!(
        only_diagnostic(&catalog).kind,
        DiagnosticKind::InvalidManifest(LoadError::NotRegular {
            kind: FileKind::Directory
        })
    ));
}

#[test]
fn manifests_are_bounded() {
    let fx = Fixture::new();
    // Padding with TOML comments keeps the manifest valid at any size.
    let padded = |name: &str, total: u64| {
        let mut text = manifest_text(name, "0.2");
        let line = format!("# {}\n", "x".repeat(1021));
        while (text.len() + line.len()) as u64 <= total {
            text.push_str(&line);
        }
        while (text.len() as u64) < total {
            text.push('\n');
        }
        assert_eq!(text.len() as u64, total);
        text
    };

    let huge = write_extension(
        &fx.project_root(),
        "huge",
        &padded("huge", limits::MAX_MANIFEST_BYTES_DISCOVERY + 1),
    );
    let largest = write_extension(
        &fx.project_root(),
        "largest",
        &padded("largest", limits::MAX_MANIFEST_BYTES_DISCOVERY),
    );
    let medium = write_extension(
        &fx.project_root(),
        "medium",
        &padded("medium", limits::MAX_MANIFEST_BYTES_LOADER + 1),
    );

    let catalog = discover(&fx.roots());
    assert_eq!(catalog.names().collect::<Vec<_>>(), ["largest", "medium"]);
    let diagnostic = only_diagnostic(&catalog);
    assert_eq!(diagnostic.path, huge.join(MANIFEST_FILE_NAME));
    assert!(matches!(
        diagnostic.kind,
        DiagnosticKind::InvalidManifest(LoadError::TooLarge { limit })
            if limit == limits::MAX_MANIFEST_BYTES_DISCOVERY
    ));

    // The low-level loader's default bound is lower than discovery's.
    let medium_manifest = medium.join(MANIFEST_FILE_NAME);
    assert!(matches!(
        load(&medium_manifest, limits::MAX_MANIFEST_BYTES_LOADER),
        Err(LoadError::TooLarge { limit }) if limit == limits::MAX_MANIFEST_BYTES_LOADER
    ));
    assert!(load(
        &largest.join(MANIFEST_FILE_NAME),
        limits::MAX_MANIFEST_BYTES_LOADER
    )
    .is_err());
}

#[test]
fn a_bad_manifest_does_not_hide_good_ones() {
    let fx = Fixture::new();
    valid_extension(&fx.project_root(), "aaa");
    let broken = write_extension(&fx.project_root(), "bbb", "name = \"bbb\"\nversion = \n");
    valid_extension(&fx.project_root(), "ccc");
    let invalid = write_extension(&fx.global_root(), "ddd", &manifest_text("ddd", "9.9"));
    valid_extension(&fx.global_root(), "eee");

    let catalog = discover(&fx.roots());
    assert_eq!(catalog.names().collect::<Vec<_>>(), ["aaa", "ccc", "eee"]);
    assert_eq!(catalog.diagnostics.len(), 2, "{:#?}", catalog.diagnostics);

    let first = &catalog.diagnostics[0];
    assert_eq!(first.path, broken.join(MANIFEST_FILE_NAME));
    assert_eq!(first.source, Source::Project);
    assert!(matches!(
        first.kind,
        DiagnosticKind::InvalidManifest(LoadError::Invalid(ManifestError::Toml {
            line: Some(2),
            ..
        }))
    ));

    let second = &catalog.diagnostics[1];
    assert_eq!(second.path, invalid.join(MANIFEST_FILE_NAME));
    assert_eq!(second.source, Source::Global);
    assert!(matches!(
        &second.kind,
        DiagnosticKind::InvalidManifest(LoadError::Invalid(ManifestError::InvalidApiVersion {
            value
        })) if value == "9.9"
    ));
}

#[test]
fn an_invalid_explicit_manifest_does_not_shadow() {
    let fx = Fixture::new();
    valid_extension(&fx.project_root(), "tool");
    let explicit = write_extension(&fx.elsewhere, "tool", "name = \"tool\"\n");
    let catalog = discover(&fx.roots().with_explicit(&explicit));
    assert_eq!(catalog.get("tool").unwrap().source, Source::Project);
    assert!(matches!(
        &only_diagnostic(&catalog).kind,
        DiagnosticKind::InvalidManifest(LoadError::Invalid(ManifestError::MissingField { field }))
            if field == "version"
    ));
}

#[test]
fn missing_roots_are_not_diagnostics() {
    let fx = Fixture::new();
    let catalog = discover(&fx.roots());
    assert!(catalog.entries.is_empty());
    assert!(catalog.diagnostics.is_empty());

    let catalog = discover(&DiscoveryRoots::new(fx.workspace.join("absent")));
    assert!(catalog.entries.is_empty());
    assert!(catalog.diagnostics.is_empty());
}

#[test]
fn an_unreadable_root_is_a_diagnostic() {
    let fx = Fixture::new();
    fs::create_dir_all(fx.workspace.join(".octet")).unwrap();
    fs::write(fx.project_root(), "not a directory").unwrap();
    valid_extension(&fx.global_root(), "still-here");

    let catalog = discover(&fx.roots());
    assert_eq!(catalog.names().collect::<Vec<_>>(), ["still-here"]);
    let diagnostic = only_diagnostic(&catalog);
    assert_eq!(diagnostic.path, fx.project_root());
    assert_eq!(diagnostic.source, Source::Project);
    assert!(matches!(diagnostic.kind, DiagnosticKind::UnreadableRoot(_)));
}

#[test]
fn non_extension_children_are_ignored() {
    let fx = Fixture::new();
    fs::create_dir_all(fx.project_root().join("empty-dir")).unwrap();
    fs::write(fx.project_root().join("README.md"), "notes").unwrap();
    fs::write(fx.project_root().join(MANIFEST_FILE_NAME), "garbage").unwrap();
    valid_extension(&fx.project_root(), "real");

    let catalog = discover(&fx.roots());
    assert!(catalog.diagnostics.is_empty(), "{:#?}", catalog.diagnostics);
    assert_eq!(catalog.names().collect::<Vec<_>>(), ["real"]);
}

#[test]
fn explicit_directories_must_exist_and_hold_a_manifest() {
    let fx = Fixture::new();
    let missing = fx.elsewhere.join("missing");
    let empty = fx.elsewhere.join("empty");
    fs::create_dir(&empty).unwrap();

    let catalog = discover(&fx.roots().with_explicit(&missing).with_explicit(&empty));
    assert!(catalog.entries.is_empty());
    assert_eq!(catalog.diagnostics.len(), 2);
    assert_eq!(catalog.diagnostics[0].path, missing);
    assert!(matches!(
        catalog.diagnostics[0].kind,
        DiagnosticKind::UnreadableDirectory(_)
    ));
    assert_eq!(catalog.diagnostics[1].path, empty.join(MANIFEST_FILE_NAME));
    assert!(matches!(
        &catalog.diagnostics[1].kind,
        DiagnosticKind::InvalidManifest(error) if error.is_not_found()
    ));
}

#[test]
fn load_explicit_resolves_relative_directories() {
    let fx = Fixture::new();
    let dir = valid_extension(&fx.elsewhere, "rel");
    let relative = fx.elsewhere.join("..").join("elsewhere").join("rel");
    let located = load_explicit(&relative).unwrap();
    assert_eq!(located.dir, dir);
    assert_eq!(located.manifest_path, dir.join(MANIFEST_FILE_NAME));
    assert_eq!(located.source, Source::Explicit);
    assert_eq!(located.manifest.name, "rel");

    let mismatched = write_extension(&fx.elsewhere, "dir", &manifest_text("other", "0.4"));
    let diagnostic = load_explicit(&mismatched).unwrap_err();
    assert!(matches!(
        diagnostic.kind,
        DiagnosticKind::NameMismatch { ref dir_name, ref name } if dir_name == "dir" && name == "other"
    ));
}

#[test]
fn discovery_never_executes_the_entrypoint() {
    let fx = Fixture::new();
    let marker = fx.elsewhere.join("ran");
    let dir = fx.project_root().join("quiet");
    fs::create_dir_all(&dir).unwrap();
    let script = dir.join("run.sh");
    fs::write(
        &script,
        format!("#!/bin/sh\ntouch '{}'\n", marker.display()),
    )
    .unwrap();
    let mut permissions = fs::metadata(&script).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    fs::set_permissions(&script, permissions).unwrap();
    fs::write(
        dir.join(MANIFEST_FILE_NAME),
        format!(
            "name = \"quiet\"\nversion = \"1.0.0\"\napi_version = \"0.1\"\n\
             [entrypoint]\ncommand = {:?}\n",
            script.display().to_string()
        ),
    )
    .unwrap();

    let catalog = discover(&fx.roots());
    assert_eq!(catalog.names().collect::<Vec<_>>(), ["quiet"]);
    assert!(!marker.exists());
}
