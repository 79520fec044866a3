//! Retention of the latest accepted snapshot per owner (section 2.5: the host "ignores or
//! diagnoses stale updates, and retains the latest accepted replacement"; section 5:
//! presentation snapshots cannot cross the generation boundary).
//!
//! One store serves one extension across its process generations. Each entry remembers the
//! generation that published it. Within a generation, revisions must strictly increase per
//! owner; a newer generation may restart them; an update from an older generation than the
//! retained one is stale whatever its revision.

use std::collections::HashMap;
use std::fmt;

use super::types::{PresentationOwner, PresentationSnapshot};

/// A snapshot the store holds, with the generation that published it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RetainedSnapshot {
    /// The publishing process generation.
    pub generation: u64,
    /// The snapshot.
    pub snapshot: PresentationSnapshot,
}

/// Why an update was ignored as stale.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StaleUpdate {
    /// Its revision is not greater than the one retained for the owner in the same
    /// generation.
    NotNewer {
        /// The retained revision.
        retained: u64,
        /// The offered revision.
        offered: u64,
    },
    /// It comes from an older generation than the retained snapshot.
    OlderGeneration {
        /// The retained snapshot's generation.
        retained: u64,
        /// The offered update's generation.
        offered: u64,
    },
}

impl fmt::Display for StaleUpdate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StaleUpdate::NotNewer { retained, offered } => write!(
                f,
                "stale presentation snapshot: revision {offered} is not newer than the retained revision {retained}"
            ),
            StaleUpdate::OlderGeneration { retained, offered } => write!(
                f,
                "stale presentation snapshot: generation {offered} is older than the retained generation {retained}"
            ),
        }
    }
}

impl std::error::Error for StaleUpdate {}

/// The latest accepted snapshot of every owner of one extension.
#[derive(Clone, Debug, Default)]
pub struct PresentationStore {
    entries: HashMap<PresentationOwner, RetainedSnapshot>,
}

impl PresentationStore {
    /// An empty store.
    pub fn new() -> PresentationStore {
        PresentationStore::default()
    }

    /// Retains `snapshot` as `owner`'s latest, published by `generation`, unless it is stale.
    /// Returns the snapshot it replaces, if any.
    pub fn accept(
        &mut self,
        generation: u64,
        owner: PresentationOwner,
        snapshot: PresentationSnapshot,
    ) -> Result<Option<RetainedSnapshot>, StaleUpdate> {
        if let Some(retained) = self.entries.get(&owner) {
            if generation < retained.generation {
                return Err(StaleUpdate::OlderGeneration {
                    retained: retained.generation,
                    offered: generation,
                });
            }
            if generation == retained.generation && snapshot.revision <= retained.snapshot.revision
            {
                return Err(StaleUpdate::NotNewer {
                    retained: retained.snapshot.revision,
                    offered: snapshot.revision,
                });
            }
        }
        Ok(self.entries.insert(
            owner,
            RetainedSnapshot {
                generation,
                snapshot,
            },
        ))
    }

    /// The latest snapshot retained for `owner`.
    pub fn get(&self, owner: &PresentationOwner) -> Option<&RetainedSnapshot> {
        self.entries.get(owner)
    }

    /// Every retained snapshot, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (&PresentationOwner, &RetainedSnapshot)> {
        self.entries.iter()
    }

    /// Forgets `owner`'s snapshot, for example when the owner is replaced.
    pub fn remove(&mut self, owner: &PresentationOwner) -> Option<RetainedSnapshot> {
        self.entries.remove(owner)
    }

    /// Forgets every snapshot published by `generation`, when that process generation
    /// ends or is replaced. Returns how many were dropped.
    pub fn clear_generation(&mut self, generation: u64) -> usize {
        let before = self.entries.len();
        self.entries
            .retain(|_, retained| retained.generation != generation);
        before - self.entries.len()
    }

    /// How many owners have a retained snapshot.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when nothing is retained.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}
