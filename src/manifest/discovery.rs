//! Finding extensions on disk (SUPPLEMENT "Manifest", Discovery).
//!
//! Discovery reads manifests and nothing else: it never executes anything. Each problem
//! becomes a [`DiscoveryDiagnostic`] for that one entry or root, never a failure of the
//! whole catalog.

use std::collections::BTreeMap;
use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::load::{load, LoadError};
use super::types::{LocatedManifest, Source};
use crate::limits;

/// The file name of a manifest inside its extension directory.
pub const MANIFEST_FILE_NAME: &str = "extension.toml";

/// The directory holding extension directories, relative to a workspace or home
/// directory.
pub const EXTENSIONS_DIR: &str = ".octet/extensions";

/// Where discovery looks.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DiscoveryRoots {
    /// The workspace; its `.octet/extensions/` holds project extensions.
    pub workspace: PathBuf,
    /// The user's home directory; its `.octet/extensions/` holds global extensions.
    /// `None` skips global discovery.
    pub home: Option<PathBuf>,
    /// Extensions named explicitly: each the directory of one extension (holding an
    /// `extension.toml`), the path to its `extension.toml`, or a directory whose
    /// subdirectories hold extensions (scanned one level, like
    /// `.octet/extensions`).
    pub explicit: Vec<PathBuf>,
}

impl DiscoveryRoots {
    /// Roots for `workspace` only, without global or explicit extensions.
    pub fn new(workspace: impl Into<PathBuf>) -> DiscoveryRoots {
        DiscoveryRoots {
            workspace: workspace.into(),
            home: None,
            explicit: Vec::new(),
        }
    }

    /// Also discovers global extensions under `home`.
    pub fn with_home(mut self, home: impl Into<PathBuf>) -> DiscoveryRoots {
        self.home = Some(home.into());
        self
    }

    /// Also loads the explicit extension directory `dir`.
    pub fn with_explicit(mut self, dir: impl Into<PathBuf>) -> DiscoveryRoots {
        self.explicit.push(dir.into());
        self
    }

    /// `<workspace>/.octet/extensions`.
    pub fn project_root(&self) -> PathBuf {
        self.workspace.join(EXTENSIONS_DIR)
    }

    /// `<home>/.octet/extensions`, when a home directory is set.
    pub fn global_root(&self) -> Option<PathBuf> {
        self.home.as_ref().map(|home| home.join(EXTENSIONS_DIR))
    }
}

/// Why one discovered entry (or root) did not make it into the catalog as it is.
#[derive(Debug)]
pub enum DiagnosticKind {
    /// The manifest could not be loaded or breaks a manifest rule.
    InvalidManifest(LoadError),
    /// The extension directory's name differs from the manifest's `name`.
    NameMismatch {
        /// The directory's name (lossily converted when not UTF-8).
        dir_name: String,
        /// The manifest's `name`.
        name: String,
    },
    /// Another extension with the same name took precedence (explicit over project over
    /// global); this one is not in the catalog.
    Shadowed {
        /// The shared extension name.
        name: String,
        /// Manifest path of the entry in the catalog.
        winner: PathBuf,
        /// Source of the entry in the catalog.
        winner_source: Source,
        /// Manifest path of the entry left out.
        loser: PathBuf,
    },
    /// An extension directory exists but could not be resolved to an absolute path.
    UnreadableDirectory(io::Error),
    /// An extensions root exists but could not be listed.
    UnreadableRoot(io::Error),
}

impl fmt::Display for DiagnosticKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DiagnosticKind::InvalidManifest(error) => write!(f, "invalid manifest: {error}"),
            DiagnosticKind::NameMismatch { dir_name, name } => write!(
                f,
                "directory name {dir_name:?} differs from the manifest name {name:?}"
            ),
            DiagnosticKind::Shadowed {
                name,
                winner,
                winner_source,
                loser,
            } => write!(
                f,
                "extension {name:?} at {} is shadowed by the {winner_source} extension at {}",
                loser.display(),
                winner.display()
            ),
            DiagnosticKind::UnreadableDirectory(error) => {
                write!(f, "cannot resolve the extension directory: {error}")
            }
            DiagnosticKind::UnreadableRoot(error) => {
                write!(f, "cannot list the extensions directory: {error}")
            }
        }
    }
}

/// A problem found during discovery, tied to the path it concerns.
#[derive(Debug)]
pub struct DiscoveryDiagnostic {
    /// The manifest, extension directory or root the diagnostic is about.
    pub path: PathBuf,
    /// The source being discovered when the problem was found.
    pub source: Source,
    /// What went wrong.
    pub kind: DiagnosticKind,
}

impl fmt::Display for DiscoveryDiagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ({}): {}",
            self.path.display(),
            self.source,
            self.kind
        )
    }
}

impl std::error::Error for DiscoveryDiagnostic {}

/// The result of discovery: the usable extensions and every problem found.
#[derive(Debug, Default)]
pub struct Catalog {
    /// One entry per extension name, sorted by name.
    pub entries: Vec<LocatedManifest>,
    /// Problems found, in discovery order (explicit, project, global, then shadowing).
    pub diagnostics: Vec<DiscoveryDiagnostic>,
}

impl Catalog {
    /// The entry named `name`, if any.
    pub fn get(&self, name: &str) -> Option<&LocatedManifest> {
        self.entries
            .binary_search_by(|entry| entry.manifest.name.as_str().cmp(name))
            .ok()
            .map(|index| &self.entries[index])
    }

    /// The names in the catalog, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries
            .iter()
            .map(|entry| entry.manifest.name.as_str())
    }
}

/// Discovers explicit, project and global extensions.
///
/// Missing roots are skipped silently; everything else that goes wrong is a diagnostic.
/// On duplicate names an explicit directory wins over a project one, which wins over a
/// global one (among explicit directories, the first listed wins); the loser is reported
/// as [`DiagnosticKind::Shadowed`]. The same manifest reached twice (for instance an
/// explicit directory inside the project root) is kept once, silently.
pub fn discover(roots: &DiscoveryRoots) -> Catalog {
    let mut candidates = Vec::new();
    let mut diagnostics = Vec::new();

    for path in &roots.explicit {
        // The path to an `extension.toml`, a directory holding one, or a directory
        // whose subdirectories hold extensions (scanned one level, like a root).
        let dir = match path.file_name() {
            Some(name) if name == MANIFEST_FILE_NAME && path.is_file() => {
                path.parent().unwrap_or(Path::new(".")).to_path_buf()
            }
            _ => path.clone(),
        };
        if dir.is_dir() && !dir.join(MANIFEST_FILE_NAME).exists() {
            let found = (candidates.len(), diagnostics.len());
            scan_root(&dir, Source::Explicit, &mut candidates, &mut diagnostics);
            // A directory holding no extension at all is most likely a mistyped
            // extension directory: say its manifest is missing.
            if (candidates.len(), diagnostics.len()) != found {
                continue;
            }
        }
        match load_explicit(&dir) {
            Ok(located) => candidates.push(located),
            Err(diagnostic) => diagnostics.push(diagnostic),
        }
    }
    let scanned = [
        (Some(roots.project_root()), Source::Project),
        (roots.global_root(), Source::Global),
    ];
    for (root, source) in scanned {
        if let Some(root) = root {
            scan_root(&root, source, &mut candidates, &mut diagnostics);
        }
    }

    let mut winners: BTreeMap<String, LocatedManifest> = BTreeMap::new();
    for candidate in candidates {
        match winners.get(&candidate.manifest.name) {
            Some(winner) if winner.manifest_path == candidate.manifest_path => {}
            Some(winner) => diagnostics.push(DiscoveryDiagnostic {
                path: candidate.manifest_path.clone(),
                source: candidate.source,
                kind: DiagnosticKind::Shadowed {
                    name: candidate.manifest.name.clone(),
                    winner: winner.manifest_path.clone(),
                    winner_source: winner.source,
                    loser: candidate.manifest_path,
                },
            }),
            None => {
                winners.insert(candidate.manifest.name.clone(), candidate);
            }
        }
    }

    Catalog {
        entries: winners.into_values().collect(),
        diagnostics,
    }
}

/// Loads the explicit extension directory `dir` (source "explicit"), which must hold an
/// `extension.toml` whose `name` equals the directory's name.
pub fn load_explicit(dir: &Path) -> Result<LocatedManifest, DiscoveryDiagnostic> {
    let canonical = canonical_dir(dir, Source::Explicit)?;
    let dir_name = canonical
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    locate(canonical, &dir_name, Source::Explicit)
}

/// Lists the direct child directories of `root` that hold an `extension.toml` and loads
/// each of them.
fn scan_root(
    root: &Path,
    source: Source,
    candidates: &mut Vec<LocatedManifest>,
    diagnostics: &mut Vec<DiscoveryDiagnostic>,
) {
    let root_diagnostic = |error| DiscoveryDiagnostic {
        path: root.to_path_buf(),
        source,
        kind: DiagnosticKind::UnreadableRoot(error),
    };
    let listing = match fs::read_dir(root) {
        Ok(listing) => listing,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return,
        Err(error) => {
            diagnostics.push(root_diagnostic(error));
            return;
        }
    };

    let mut children = Vec::new();
    for entry in listing {
        match entry {
            Ok(entry) => children.push((entry.file_name(), entry.path())),
            Err(error) => diagnostics.push(root_diagnostic(error)),
        }
    }
    children.sort();

    for (file_name, child) in children {
        // Follows a symlinked extension directory; the manifest itself never is.
        if !fs::metadata(&child).is_ok_and(|metadata| metadata.is_dir()) {
            continue;
        }
        // A directory without any `extension.toml` is not an extension. Anything
        // present under that name (even a symlink or a pipe) is loaded and refused.
        if let Err(error) = fs::symlink_metadata(child.join(MANIFEST_FILE_NAME)) {
            if error.kind() == io::ErrorKind::NotFound {
                continue;
            }
        }
        let dir_name = file_name.to_string_lossy().into_owned();
        let located = canonical_dir(&child, source)
            .and_then(|canonical| locate(canonical, &dir_name, source));
        match located {
            Ok(located) => candidates.push(located),
            Err(diagnostic) => diagnostics.push(diagnostic),
        }
    }
}

fn canonical_dir(dir: &Path, source: Source) -> Result<PathBuf, DiscoveryDiagnostic> {
    fs::canonicalize(dir).map_err(|error| DiscoveryDiagnostic {
        path: dir.to_path_buf(),
        source,
        kind: DiagnosticKind::UnreadableDirectory(error),
    })
}

/// Loads `<dir>/extension.toml` (with `dir` already canonical) under the discovery
/// bound and checks the directory name.
fn locate(
    dir: PathBuf,
    dir_name: &str,
    source: Source,
) -> Result<LocatedManifest, DiscoveryDiagnostic> {
    let manifest_path = dir.join(MANIFEST_FILE_NAME);
    let manifest = match load(&manifest_path, limits::MAX_MANIFEST_BYTES_DISCOVERY) {
        Ok(manifest) => manifest,
        Err(error) => {
            return Err(DiscoveryDiagnostic {
                path: manifest_path,
                source,
                kind: DiagnosticKind::InvalidManifest(error),
            })
        }
    };
    if manifest.name != dir_name {
        return Err(DiscoveryDiagnostic {
            path: manifest_path,
            source,
            kind: DiagnosticKind::NameMismatch {
                dir_name: dir_name.to_owned(),
                name: manifest.name,
            },
        });
    }
    Ok(LocatedManifest {
        manifest,
        manifest_path,
        dir,
        source,
    })
}
