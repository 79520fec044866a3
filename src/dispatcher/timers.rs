//! The dispatcher's timer heap. Timers are not removed when the thing they guard
//! settles: a timer that fires afterwards is recognised as stale and ignored. So that
//! stale timers cannot pile up (every call leaves a 30-second deadline behind; at
//! 100,000 calls a second that would be millions of entries), the dispatcher drops
//! them with [`Timers::retain`] whenever the heap has doubled since the last time
//! ([`Timers::wants_compaction`]), which keeps the cost amortized constant per timer.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::time::Instant;

use crate::model::call::CallId;
use crate::transport::ConnId;

/// What a timer is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Timer {
    /// The deadline of a host request that is not an embedder call (`initialize`).
    RequestDeadline { conn: ConnId, id: u64 },
    /// An embedder call's deadline.
    CallDeadline { call: CallId },
    /// The end of a cancelled request's grace period (section 1.9).
    CancelGrace { conn: ConnId, id: u64 },
    /// The end of the shutdown acknowledgement wait (section 1.8).
    ShutdownAck { conn: ConnId },
    /// The end of the exit wait after the acknowledgement (section 1.8).
    ShutdownExit { conn: ConnId },
    /// Check whether the child process has exited. Only the poll with the
    /// connection's current `seq` counts; scheduling a new poll retires older ones.
    ExitPoll { conn: ConnId, seq: u64 },
    /// The aggregate deadline of a host-wide shutdown (section 1.8).
    ShutdownAggregate,
    /// The 250 ms delivery deadline of a session or turn notification (section 1.10).
    LifecycleDeadline { conn: ConnId, seq: u64 },
    /// A restart's backoff elapsed (section 5); `seq` names the supervision timer.
    Restart { seq: u64 },
    /// The end of a replaced generation's bounded drain (section 5).
    DrainDeadline { conn: ConnId },
    /// The presentation throttle's window opens again (section 2.5).
    PresentationPoll { conn: ConnId },
    /// A `message/updated` batch is 50 ms old (section 1.11); `seq` names the batch.
    MessageBatch { conn: ConnId, seq: u64 },
    /// A request a kind's guard holds may be due (a held request's deadline).
    HeldDeadline {
        conn: ConnId,
        kind: crate::services::bound::ServiceKind,
    },
}

impl Timer {
    /// The generation the timer belongs to; `None` for a call's deadline and the
    /// host-wide timers.
    pub fn conn(&self) -> Option<ConnId> {
        match *self {
            Timer::RequestDeadline { conn, .. }
            | Timer::CancelGrace { conn, .. }
            | Timer::ShutdownAck { conn }
            | Timer::ShutdownExit { conn }
            | Timer::ExitPoll { conn, .. }
            | Timer::LifecycleDeadline { conn, .. }
            | Timer::DrainDeadline { conn }
            | Timer::PresentationPoll { conn }
            | Timer::MessageBatch { conn, .. }
            | Timer::HeldDeadline { conn, .. } => Some(conn),
            Timer::CallDeadline { .. } | Timer::ShutdownAggregate | Timer::Restart { .. } => None,
        }
    }
}

#[derive(Debug)]
struct Entry {
    at: Instant,
    seq: u64,
    timer: Timer,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.at == other.at && self.seq == other.seq
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    // Reversed: the earliest timer is the greatest, so BinaryHeap pops it first.
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .at
            .cmp(&self.at)
            .then_with(|| other.seq.cmp(&self.seq))
    }
}

/// The heap is never compacted below this many entries.
const COMPACTION_FLOOR: usize = 1024;

/// A min-heap of timers, first in first out among equal instants.
#[derive(Debug, Default)]
pub(crate) struct Timers {
    heap: BinaryHeap<Entry>,
    seq: u64,
    /// Entries left by the last compaction.
    compacted_to: usize,
}

impl Timers {
    /// Schedules `timer` at `at`.
    pub fn schedule(&mut self, at: Instant, timer: Timer) {
        self.seq += 1;
        self.heap.push(Entry {
            at,
            seq: self.seq,
            timer,
        });
    }

    /// True when the heap holds at least [`COMPACTION_FLOOR`] entries and twice as many
    /// as the last compaction left: time to drop stale timers with [`Timers::retain`].
    pub fn wants_compaction(&self) -> bool {
        self.heap.len() >= COMPACTION_FLOOR.max(2 * self.compacted_to)
    }

    /// Keeps only the timers for which `live` holds.
    pub fn retain(&mut self, mut live: impl FnMut(&Timer) -> bool) {
        self.heap.retain(|entry| live(&entry.timer));
        self.compacted_to = self.heap.len();
    }

    /// How many timers are scheduled, stale ones included.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// The instant of the earliest timer.
    pub fn next_deadline(&self) -> Option<Instant> {
        self.heap.peek().map(|e| e.at)
    }

    /// Removes and returns the earliest timer if it is due at `now`.
    pub fn pop_due(&mut self, now: Instant) -> Option<Timer> {
        if self.heap.peek()?.at <= now {
            self.heap.pop().map(|e| e.timer)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn pops_in_time_order_then_insertion_order() {
        let mut t = Timers::default();
        let now = Instant::now();
        let c = ConnId(1);
        t.schedule(now + Duration::from_secs(2), Timer::ShutdownAck { conn: c });
        t.schedule(now, Timer::ExitPoll { conn: c, seq: 1 });
        t.schedule(now, Timer::ShutdownExit { conn: c });
        assert_eq!(t.next_deadline(), Some(now));
        assert_eq!(t.pop_due(now), Some(Timer::ExitPoll { conn: c, seq: 1 }));
        assert_eq!(t.pop_due(now), Some(Timer::ShutdownExit { conn: c }));
        assert_eq!(t.pop_due(now), None);
        assert_eq!(
            t.pop_due(now + Duration::from_secs(3)),
            Some(Timer::ShutdownAck { conn: c })
        );
    }

    #[test]
    fn compaction_is_asked_for_when_the_heap_doubles_and_keeps_order() {
        let mut t = Timers::default();
        let now = Instant::now();
        let deadline = |call: u64| Timer::CallDeadline { call: CallId(call) };
        for call in 0..COMPACTION_FLOOR as u64 - 1 {
            t.schedule(now + Duration::from_millis(call % 7), deadline(call));
        }
        assert!(!t.wants_compaction());
        t.schedule(now, deadline(u64::MAX));
        assert!(t.wants_compaction());
        // Only every tenth call is still unsettled.
        t.retain(|timer| matches!(timer, Timer::CallDeadline { call } if call.0 % 10 == 0));
        assert_eq!(t.len(), 103);
        assert!(!t.wants_compaction());
        for call in 0..102 {
            t.schedule(now + Duration::from_secs(1), deadline(10_000 + call));
        }
        assert!(t.len() < COMPACTION_FLOOR && !t.wants_compaction());
        // The survivors still pop in time order, then in scheduling order.
        let mut last = (Duration::ZERO, 0);
        let later = now + Duration::from_secs(2);
        while let Some(Timer::CallDeadline { call }) = t.pop_due(later) {
            let key = if call.0 >= 10_000 {
                (Duration::from_secs(1), call.0)
            } else {
                (Duration::from_millis(call.0 % 7), call.0)
            };
            assert!(key >= last, "{key:?} after {last:?}");
            last = key;
        }
        assert_eq!(t.len(), 0);
    }
}
