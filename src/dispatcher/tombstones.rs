//! Tombstones: ids of cancelled host requests (section 1.9).
//!
//! A late response to a tombstoned id is ignored with a diagnostic; it never closes
//! anything else. At most [`MAX_TOMBSTONES`] ids are kept, each for [`TOMBSTONE_TTL`];
//! the oldest is forgotten first.

use std::collections::{HashMap, VecDeque};
use std::time::Instant;

use crate::limits::{MAX_TOMBSTONES, TOMBSTONE_TTL};

/// What is known about a tombstoned request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Tombstone {
    /// When it was cancelled.
    pub at: Instant,
    /// True while the extension still owes a settlement (the frame was written, so the
    /// extension knows the id) and its concurrency slot is still held.
    pub awaiting_settlement: bool,
}

/// The tombstones of one generation.
#[derive(Debug, Default)]
pub(crate) struct Tombstones {
    order: VecDeque<u64>,
    entries: HashMap<u64, Tombstone>,
    /// How many remembered ids still await settlement.
    awaiting: usize,
}

impl Tombstones {
    /// Tombstones `id` at `now`, forgetting the oldest id when full.
    pub fn insert(&mut self, id: u64, now: Instant, awaiting_settlement: bool) {
        self.expire(now);
        if self.entries.len() >= MAX_TOMBSTONES {
            if let Some(old) = self.order.pop_front() {
                self.forget(old);
            }
        }
        let previous = self.entries.insert(
            id,
            Tombstone {
                at: now,
                awaiting_settlement,
            },
        );
        match previous {
            None => self.order.push_back(id),
            Some(t) if t.awaiting_settlement => self.awaiting -= 1,
            Some(_) => {}
        }
        if awaiting_settlement {
            self.awaiting += 1;
        }
    }

    /// Cancelled requests the extension has not settled yet: they still hold a
    /// concurrency slot.
    pub fn awaiting(&self) -> usize {
        self.awaiting
    }

    /// The tombstone for `id`, if it is remembered at `now`.
    pub fn get(&mut self, id: u64, now: Instant) -> Option<Tombstone> {
        self.expire(now);
        self.entries.get(&id).copied()
    }

    /// Records that the extension settled `id`; returns true when it was awaiting
    /// settlement (so its slot can be released).
    pub fn settle(&mut self, id: u64) -> bool {
        match self.entries.get_mut(&id) {
            Some(t) if t.awaiting_settlement => {
                t.awaiting_settlement = false;
                self.awaiting -= 1;
                true
            }
            _ => false,
        }
    }

    /// Number of remembered ids.
    #[allow(dead_code)]
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    fn expire(&mut self, now: Instant) {
        while let Some(&front) = self.order.front() {
            let expired = match self.entries.get(&front) {
                Some(t) => now.duration_since(t.at) >= TOMBSTONE_TTL,
                None => true,
            };
            if !expired {
                break;
            }
            self.order.pop_front();
            self.forget(front);
        }
    }

    fn forget(&mut self, id: u64) {
        if let Some(t) = self.entries.remove(&id) {
            if t.awaiting_settlement {
                self.awaiting -= 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn bounded_and_oldest_first() {
        let mut t = Tombstones::default();
        let now = Instant::now();
        t.insert(0, now, true);
        for id in 1..MAX_TOMBSTONES as u64 {
            t.insert(id, now, false);
        }
        assert_eq!(t.len(), MAX_TOMBSTONES);
        assert_eq!(t.awaiting(), 1);
        t.insert(9999, now, false);
        assert_eq!(t.len(), MAX_TOMBSTONES);
        assert_eq!(t.awaiting(), 0, "the oldest, still owed, was forgotten");
        assert!(t.get(0, now).is_none());
        assert!(t.get(9999, now).is_some());
    }

    #[test]
    fn expire_after_ttl_and_settle_once() {
        let mut t = Tombstones::default();
        let now = Instant::now();
        t.insert(5, now, true);
        assert_eq!(t.awaiting(), 1);
        assert!(t.settle(5));
        assert!(!t.settle(5));
        assert_eq!(t.awaiting(), 0);
        assert!(t
            .get(5, now + TOMBSTONE_TTL - Duration::from_millis(1))
            .is_some());
        assert!(t.get(5, now + TOMBSTONE_TTL).is_none());
    }
}
