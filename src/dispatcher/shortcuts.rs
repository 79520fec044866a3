//! The shortcuts of one generation (section 2.20): which registrations the service
//! admitted inside `initialize`, and which ids a duplicate made unavailable.

use std::collections::HashSet;

/// The shortcuts of one generation (section 2.20).
#[derive(Default)]
pub(crate) struct ShortcutBook {
    /// Registrations the service admitted inside `initialize`.
    admitted: HashSet<String>,
    /// Ids registered twice: unavailable for the rest of the generation.
    poisoned: HashSet<String>,
}

impl ShortcutBook {
    /// True when a `shortcut/trigger` for `id` may be sent.
    pub fn is_admitted(&self, id: &str) -> bool {
        self.admitted.contains(id)
    }

    /// True when `id` was admitted or poisoned: registering it again is a duplicate.
    pub fn is_known(&self, id: &str) -> bool {
        self.admitted.contains(id) || self.poisoned.contains(id)
    }

    /// Makes `id` unavailable for the rest of the generation.
    pub fn poison(&mut self, id: &str) {
        self.admitted.remove(id);
        self.poisoned.insert(id.to_string());
    }

    /// Admits `id`, unless a duplicate poisoned it meanwhile.
    pub fn admit(&mut self, id: String) {
        if !self.poisoned.contains(&id) {
            self.admitted.insert(id);
        }
    }

    /// How many shortcuts are admitted.
    pub fn admitted_count(&self) -> usize {
        self.admitted.len()
    }
}
