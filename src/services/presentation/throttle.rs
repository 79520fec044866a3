//! The per-generation emission throttle of section 2.5: "One generation emits at most 32
//! snapshots in a one-second window; excess valid notifications are coalesced last-wins
//! and the newest complete snapshot is emitted when the next window opens. Throttling
//! produces at most one diagnostic for that window."
//!
//! Windows are fixed and do not overlap: a window opens at the first emission or
//! coalescing at or after the end of the previous one and lasts
//! [`PRESENTATION_THROTTLE_WINDOW`]. Coalescing is last-wins per key (the owner a snapshot
//! belongs to), so a burst for one owner never discards the newest snapshot of another;
//! with a single owner this is exactly "the newest complete snapshot". A coalesced snapshot
//! emitted when the next window opens counts against that window.
//!
//! Time is injected: every method takes the current [`Instant`], so the dispatcher drives
//! the throttle from its own clock and timer heap, and tests use synthetic instants.

use std::time::Instant;

use crate::limits::{PRESENTATION_SNAPSHOTS_PER_WINDOW, PRESENTATION_THROTTLE_WINDOW};

/// What became of an offered snapshot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Offer<T> {
    /// Within the window's budget: emit it now.
    Emit(T),
    /// Over the budget: it is held (replacing any older held snapshot of the same key) until
    /// the next window opens; see [`PresentationThrottle::poll`].
    Coalesced {
        /// True for the first coalescing of the window: the caller emits the window's one
        /// throttling diagnostic.
        diagnose: bool,
    },
}

/// Throttles one process generation's snapshots; `K` is the owner key, `T` the snapshot
/// (or update) type.
#[derive(Debug)]
pub struct PresentationThrottle<K, T> {
    /// When the current window opened; `None` before the first snapshot.
    window_start: Option<Instant>,
    /// Snapshots emitted in the current window.
    emitted: usize,
    /// Whether the current window has produced its diagnostic.
    diagnosed: bool,
    /// Held snapshots, at most one per key, in the order their keys were first held.
    pending: Vec<(K, T)>,
}

impl<K: PartialEq, T> Default for PresentationThrottle<K, T> {
    fn default() -> Self {
        PresentationThrottle::new()
    }
}

impl<K: PartialEq, T> PresentationThrottle<K, T> {
    /// A throttle with no window open and nothing held.
    pub fn new() -> PresentationThrottle<K, T> {
        PresentationThrottle {
            window_start: None,
            emitted: 0,
            diagnosed: false,
            pending: Vec::new(),
        }
    }

    /// Offers a validated, accepted snapshot of `key` at `now`. A held snapshot of the same
    /// key is superseded either way: it is older.
    pub fn offer(&mut self, now: Instant, key: K, update: T) -> Offer<T> {
        self.open_window_if_due(now);
        let held = self.pending.iter().position(|(held, _)| *held == key);
        if self.emitted < PRESENTATION_SNAPSHOTS_PER_WINDOW {
            if let Some(index) = held {
                self.pending.remove(index);
            }
            self.emitted += 1;
            return Offer::Emit(update);
        }
        match held {
            Some(index) => self.pending[index].1 = update,
            None => self.pending.push((key, update)),
        }
        let diagnose = !self.diagnosed;
        self.diagnosed = true;
        Offer::Coalesced { diagnose }
    }

    /// The next held snapshot to emit at `now`, if a window with budget is open; call it
    /// until it returns `None` whenever [`next_wakeup`](Self::next_wakeup) has passed.
    pub fn poll(&mut self, now: Instant) -> Option<(K, T)> {
        if self.pending.is_empty() {
            return None;
        }
        self.open_window_if_due(now);
        if self.emitted >= PRESENTATION_SNAPSHOTS_PER_WINDOW {
            return None;
        }
        self.emitted += 1;
        Some(self.pending.remove(0))
    }

    /// When [`poll`](Self::poll) will next return a snapshot, or `None` when nothing is
    /// held. The instant may already have passed.
    pub fn next_wakeup(&self) -> Option<Instant> {
        if self.pending.is_empty() {
            return None;
        }
        let start = self.window_start?;
        if self.emitted < PRESENTATION_SNAPSHOTS_PER_WINDOW {
            Some(start)
        } else {
            Some(start + PRESENTATION_THROTTLE_WINDOW)
        }
    }

    /// How many snapshots are held.
    pub fn pending_len(&self) -> usize {
        self.pending.len()
    }

    /// Drops the held snapshot of `key`, for example when its owner goes away.
    pub fn discard(&mut self, key: &K) -> Option<T> {
        let index = self.pending.iter().position(|(held, _)| held == key)?;
        Some(self.pending.remove(index).1)
    }

    fn open_window_if_due(&mut self, now: Instant) {
        let due = match self.window_start {
            None => true,
            Some(start) => now >= start + PRESENTATION_THROTTLE_WINDOW,
        };
        if due {
            self.window_start = Some(now);
            self.emitted = 0;
            self.diagnosed = false;
        }
    }
}
