//! Tombstones: ids of cancelled host requests (section 1.9).
//!
//! Two different things are kept here, and they have different bounds:
//!
//! - *Remembered ids*, so a late response to a cancelled id is ignored with a
//!   diagnostic and never closes anything else. At most [`MAX_TOMBSTONES`] ids are
//!   remembered, each for [`TOMBSTONE_TTL`]; the oldest is forgotten first.
//! - *Owed settlements*: a cancelled request whose frame reached the extension still
//!   holds its concurrency slot until the extension settles it or the grace period
//!   ends. That is a live obligation, not a memory: it is never evicted by the bounds
//!   above, so the grace check always finds it, however many requests were cancelled.
//!   It is bounded by the requests the generation may have in flight.

use std::collections::VecDeque;
use std::time::Instant;

use super::id_hash::{IdMap, IdSet};
use crate::limits::{MAX_TOMBSTONES, TOMBSTONE_TTL};

/// What is known about a tombstoned request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Tombstone {
    /// True while the extension still owes a settlement (the frame was written, so the
    /// extension knows the id) and its concurrency slot is still held.
    pub awaiting_settlement: bool,
}

/// The tombstones of one generation.
#[derive(Debug, Default)]
pub(crate) struct Tombstones {
    /// Remembered ids, oldest first, with when each was cancelled.
    order: VecDeque<(u64, Instant)>,
    remembered: IdSet<u64>,
    /// Cancelled requests the extension still has to settle.
    owed: IdMap<u64, Instant>,
}

impl Tombstones {
    /// Tombstones `id` at `now`, forgetting the oldest remembered id when full. With
    /// `awaiting_settlement`, the extension owes a settlement for `id` until
    /// [`Tombstones::settle`] or [`Tombstones::release`].
    pub fn insert(&mut self, id: u64, now: Instant, awaiting_settlement: bool) {
        self.expire(now);
        if self.remembered.insert(id) {
            if self.remembered.len() > MAX_TOMBSTONES {
                if let Some((old, _)) = self.order.pop_front() {
                    self.remembered.remove(&old);
                }
            }
            self.order.push_back((id, now));
        }
        if awaiting_settlement {
            self.owed.insert(id, now);
        }
    }

    /// Cancelled requests the extension has not settled yet: they still hold a
    /// concurrency slot.
    pub fn awaiting(&self) -> usize {
        self.owed.len()
    }

    /// The tombstone for `id`, if it is remembered at `now` or still owed.
    pub fn get(&mut self, id: u64, now: Instant) -> Option<Tombstone> {
        self.expire(now);
        if self.owed.contains_key(&id) {
            return Some(Tombstone {
                awaiting_settlement: true,
            });
        }
        self.remembered.contains(&id).then_some(Tombstone {
            awaiting_settlement: false,
        })
    }

    /// Records that the extension settled `id`; returns true when it was awaiting
    /// settlement (so its slot can be released).
    pub fn settle(&mut self, id: u64) -> bool {
        self.owed.remove(&id).is_some()
    }

    /// Number of remembered ids (owed ones included).
    pub fn len(&self) -> usize {
        self.remembered.len()
            + self
                .owed
                .keys()
                .filter(|id| !self.remembered.contains(id))
                .count()
    }

    fn expire(&mut self, now: Instant) {
        while let Some(&(front, at)) = self.order.front() {
            if now.duration_since(at) < TOMBSTONE_TTL {
                break;
            }
            self.order.pop_front();
            self.remembered.remove(&front);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn remembered_ids_are_bounded_and_forgotten_oldest_first() {
        let mut t = Tombstones::default();
        let now = Instant::now();
        for id in 0..MAX_TOMBSTONES as u64 {
            t.insert(id, now, false);
        }
        assert_eq!(t.len(), MAX_TOMBSTONES);
        t.insert(9999, now, false);
        assert_eq!(t.len(), MAX_TOMBSTONES);
        assert!(t.get(0, now).is_none());
        assert!(t.get(1, now).is_some());
        assert!(t.get(9999, now).is_some());
    }

    #[test]
    fn owed_settlements_are_never_evicted() {
        let mut t = Tombstones::default();
        let now = Instant::now();
        for id in 0..1000 {
            t.insert(id, now, true);
        }
        assert_eq!(t.awaiting(), 1000);
        let later = now + TOMBSTONE_TTL + Duration::from_secs(1);
        for id in 0..1000 {
            assert_eq!(
                t.get(id, later),
                Some(Tombstone {
                    awaiting_settlement: true
                }),
                "id {id} is still owed"
            );
        }
        assert!(t.settle(0));
        assert!(!t.settle(0));
        assert_eq!(t.awaiting(), 999);
        assert!(t.get(0, later).is_none(), "settled and past the TTL");
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
