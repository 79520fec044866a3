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
}

impl Tombstones {
    /// Tombstones `id` at `now`. Returns an id that was forgotten to make room and was
    /// still awaiting settlement, so the caller can release what it held.
    pub fn insert(&mut self, id: u64, now: Instant, awaiting_settlement: bool) -> Option<u64> {
        self.expire(now);
        let mut evicted = None;
        if self.entries.len() >= MAX_TOMBSTONES {
            if let Some(old) = self.order.pop_front() {
                if let Some(t) = self.entries.remove(&old) {
                    if t.awaiting_settlement {
                        evicted = Some(old);
                    }
                }
            }
        }
        if self
            .entries
            .insert(
                id,
                Tombstone {
                    at: now,
                    awaiting_settlement,
                },
            )
            .is_none()
        {
            self.order.push_back(id);
        }
        evicted
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
            self.entries.remove(&front);
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
        assert_eq!(t.insert(0, now, true), None);
        for id in 1..MAX_TOMBSTONES as u64 {
            assert_eq!(t.insert(id, now, false), None);
        }
        assert_eq!(t.len(), MAX_TOMBSTONES);
        assert_eq!(
            t.insert(9999, now, false),
            Some(0),
            "evicts the oldest, still owed"
        );
        assert_eq!(t.len(), MAX_TOMBSTONES);
        assert!(t.get(0, now).is_none());
        assert!(t.get(9999, now).is_some());
    }

    #[test]
    fn expire_after_ttl_and_settle_once() {
        let mut t = Tombstones::default();
        let now = Instant::now();
        t.insert(5, now, true);
        assert!(t.settle(5));
        assert!(!t.settle(5));
        assert!(t
            .get(5, now + TOMBSTONE_TTL - Duration::from_millis(1))
            .is_some());
        assert!(t.get(5, now + TOMBSTONE_TTL).is_none());
    }
}
