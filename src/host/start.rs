//! Starting an extension: resolve, spawn, hand the child to the dispatcher, negotiate.

use std::sync::Arc;

use super::{ExtensionHandle, ExtensionHost, HostInner};
use crate::dispatcher::Command;
use crate::manifest::{self, LocatedManifest};
pub use crate::model::start::*;

impl ExtensionHost {
    /// Starts the discovered extension `name`: checks `requires_octet`, spawns the
    /// entrypoint in its own process group with the sanitized environment, and
    /// negotiates `initialize`. Blocks until the extension is ready or rejected.
    pub fn start(&self, name: &str) -> Result<ExtensionHandle, StartError> {
        self.start_with(name, StartOptions::default())
    }

    /// [`ExtensionHost::start`] with options for this start.
    ///
    /// Errors before anything runs: [`StartError::ManifestRejected`] when the only
    /// manifest found for `name` was rejected at discovery (with its diagnostics), and
    /// [`StartError::UnknownExtension`] (with the names that were discovered) when no
    /// manifest names it at all.
    pub fn start_with(
        &self,
        name: &str,
        options: StartOptions,
    ) -> Result<ExtensionHandle, StartError> {
        let located = {
            let mut catalog = self.catalog.lock();
            let catalog =
                catalog.get_or_insert_with(|| Discovered::from(&manifest::discover(&self.roots)));
            match catalog.entries.iter().find(|e| e.manifest.name == name) {
                Some(located) => Ok(located.clone()),
                None => Err(catalog.unknown(name)),
            }
        }?;
        self.start_manifest_with(located, options)
    }

    /// Starts an extension from a manifest the embedder located itself.
    pub fn start_manifest(&self, located: LocatedManifest) -> Result<ExtensionHandle, StartError> {
        self.start_manifest_with(located, StartOptions::default())
    }

    /// [`ExtensionHost::start_manifest`] with options for this start.
    pub fn start_manifest_with(
        &self,
        located: LocatedManifest,
        options: StartOptions,
    ) -> Result<ExtensionHandle, StartError> {
        let (reply, answer) = crossbeam_channel::bounded(1);
        let command = Command::Start {
            located: Box::new(located),
            startup_timeout: options
                .startup_timeout
                .unwrap_or(self.inner.shared.startup_timeout),
            services: options.services,
            reply,
        };
        if self.inner.commands.send(command).is_err() {
            return Err(StartError::HostShutDown);
        }
        let started = answer.recv().unwrap_or(Err(StartError::HostShutDown))?;
        Ok(ExtensionHandle::new(Arc::new(started), self.inner.clone()))
    }

    /// Reloads `name` candidate-first (section 5): a new generation is started and fully
    /// negotiated while the current one keeps serving; a candidate whose catalog changed
    /// (tools without `dynamic_tools`, or commands) is rejected with
    /// [`StartError::ReRegistrationRequired`] and the current generation stays. On
    /// success new calls go to the new generation at once, and the old one drains
    /// (bounded) and shuts down. A parked extension is revived.
    pub fn reload(&self, name: &str) -> Result<StartedExtension, StartError> {
        reload(&self.inner, name)
    }
}

/// What the host remembers of its last discovery: the entries it starts from, and
/// each diagnostic with the path it concerns.
pub(super) struct Discovered {
    entries: Vec<LocatedManifest>,
    problems: Vec<(std::path::PathBuf, String)>,
}

impl From<&manifest::Catalog> for Discovered {
    fn from(catalog: &manifest::Catalog) -> Discovered {
        Discovered {
            entries: catalog.entries.clone(),
            problems: catalog
                .diagnostics
                .iter()
                .map(|d| (d.path.clone(), d.to_string()))
                .collect(),
        }
    }
}

impl Discovered {
    /// Why `name` is not an entry: a rejected manifest in a directory of that name,
    /// or no manifest at all.
    fn unknown(&self, name: &str) -> StartError {
        let dir_named = |path: &std::path::Path| path.iter().rev().take(2).any(|p| p == name);
        let diagnostics: Vec<String> = self
            .problems
            .iter()
            .filter(|(path, _)| dir_named(path))
            .map(|(_, problem)| problem.clone())
            .collect();
        if !diagnostics.is_empty() {
            return StartError::ManifestRejected {
                name: name.to_string(),
                diagnostics,
            };
        }
        let mut discovered: Vec<String> = self
            .entries
            .iter()
            .map(|e| e.manifest.name.clone())
            .collect();
        discovered.sort();
        StartError::UnknownExtension {
            name: name.to_string(),
            discovered,
            problems: self
                .problems
                .iter()
                .take(3)
                .map(|(_, problem)| problem.clone())
                .collect(),
        }
    }
}

/// Asks the dispatcher to reload `name` and waits for the outcome.
pub(crate) fn reload(inner: &HostInner, name: &str) -> Result<StartedExtension, StartError> {
    let (reply, answer) = crossbeam_channel::bounded(1);
    let command = Command::Reload {
        extension: name.to_string(),
        reply,
    };
    if inner.commands.send(command).is_err() {
        return Err(StartError::HostShutDown);
    }
    answer.recv().unwrap_or(Err(StartError::HostShutDown))
}
