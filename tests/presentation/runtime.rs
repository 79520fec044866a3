//! The throttle with synthetic instants, and the store's staleness rules.

use std::time::{Duration, Instant};

use octet_host::limits::{PRESENTATION_SNAPSHOTS_PER_WINDOW, PRESENTATION_THROTTLE_WINDOW};
use octet_host::services::presentation::*;
use octet_host::services::ResourceOwner;
// ---------------------------------------------------------------------------
// Throttle.
// ---------------------------------------------------------------------------

#[test]
fn thirty_three_in_one_window_emit_thirty_two_then_the_newest() {
    let start = Instant::now();
    let mut throttle = PresentationThrottle::new();
    for revision in 0..PRESENTATION_SNAPSHOTS_PER_WINDOW as u64 {
        let now = start + Duration::from_millis(revision * 10);
        assert_eq!(
            throttle.offer(now, "owner", revision),
            Offer::Emit(revision)
        );
    }
    assert_eq!(throttle.next_wakeup(), None);
    let late = start + Duration::from_millis(900);
    assert_eq!(
        throttle.offer(late, "owner", 32),
        Offer::Coalesced { diagnose: true }
    );
    // More excess in the same window replaces the held snapshot, without a new diagnostic.
    assert_eq!(
        throttle.offer(late, "owner", 33),
        Offer::Coalesced { diagnose: false }
    );
    assert_eq!(throttle.pending_len(), 1);
    let next_window = start + PRESENTATION_THROTTLE_WINDOW;
    assert_eq!(throttle.next_wakeup(), Some(next_window));
    assert_eq!(throttle.poll(next_window - Duration::from_millis(1)), None);
    assert_eq!(throttle.poll(next_window), Some(("owner", 33)));
    assert_eq!(throttle.poll(next_window), None);
    assert_eq!(throttle.next_wakeup(), None);
    // The held snapshot counted against the new window: 31 more fit, then coalescing
    // starts again with the new window's one diagnostic.
    for revision in 34..34 + PRESENTATION_SNAPSHOTS_PER_WINDOW as u64 - 1 {
        assert_eq!(
            throttle.offer(next_window, "owner", revision),
            Offer::Emit(revision)
        );
    }
    assert_eq!(
        throttle.offer(next_window, "owner", 99),
        Offer::Coalesced { diagnose: true }
    );
}

#[test]
fn an_offer_in_the_next_window_supersedes_the_held_snapshot() {
    let start = Instant::now();
    let mut throttle = PresentationThrottle::new();
    for revision in 0..PRESENTATION_SNAPSHOTS_PER_WINDOW as u64 {
        throttle.offer(start, 1, revision);
    }
    assert_eq!(
        throttle.offer(start, 1, 100),
        Offer::Coalesced { diagnose: true }
    );
    let later = start + PRESENTATION_THROTTLE_WINDOW + Duration::from_millis(5);
    assert_eq!(throttle.offer(later, 1, 101), Offer::Emit(101));
    assert_eq!(throttle.pending_len(), 0);
    assert_eq!(throttle.poll(later), None);
}

#[test]
fn coalescing_is_last_wins_per_owner() {
    let start = Instant::now();
    let mut throttle = PresentationThrottle::new();
    for revision in 0..PRESENTATION_SNAPSHOTS_PER_WINDOW as u64 {
        throttle.offer(start, "a", revision);
    }
    assert_eq!(
        throttle.offer(start, "a", 50),
        Offer::Coalesced { diagnose: true }
    );
    assert_eq!(
        throttle.offer(start, "b", 7),
        Offer::Coalesced { diagnose: false }
    );
    assert_eq!(
        throttle.offer(start, "a", 51),
        Offer::Coalesced { diagnose: false }
    );
    assert_eq!(throttle.pending_len(), 2);
    let next = start + PRESENTATION_THROTTLE_WINDOW;
    // In the new window, b's offer would supersede only b; here both are polled in the
    // order their owners were first held.
    assert_eq!(throttle.poll(next), Some(("a", 51)));
    assert_eq!(throttle.poll(next), Some(("b", 7)));
    assert_eq!(throttle.poll(next), None);
    // Discarding drops an owner's held snapshot.
    let third = next + PRESENTATION_THROTTLE_WINDOW;
    for revision in 0..PRESENTATION_SNAPSHOTS_PER_WINDOW as u64 {
        throttle.offer(third, "a", revision);
    }
    throttle.offer(third, "b", 8);
    assert_eq!(throttle.discard(&"b"), Some(8));
    assert_eq!(throttle.next_wakeup(), None);
}

#[test]
fn a_window_with_budget_left_emits_held_snapshots_at_once() {
    let start = Instant::now();
    let mut throttle = PresentationThrottle::new();
    for revision in 0..PRESENTATION_SNAPSHOTS_PER_WINDOW as u64 {
        throttle.offer(start, "a", revision);
    }
    throttle.offer(start, "b", 1);
    let next = start + PRESENTATION_THROTTLE_WINDOW;
    // An offer for "a" opens the next window before anyone polls; "b" is still held and
    // due immediately.
    assert_eq!(throttle.offer(next, "a", 60), Offer::Emit(60));
    assert_eq!(throttle.next_wakeup(), Some(next));
    assert_eq!(throttle.poll(next), Some(("b", 1)));
}

// ---------------------------------------------------------------------------
// Store.
// ---------------------------------------------------------------------------

fn snapshot(revision: u64) -> PresentationSnapshot {
    PresentationSnapshot {
        revision,
        status: None,
        activities: vec![],
        collection: None,
        actions: vec![],
    }
}

fn owner(session: &str, generation: u64) -> PresentationOwner {
    PresentationOwner::Resource(ResourceOwner {
        session_id: session.into(),
        extension_instance_id: "instance".into(),
        process_generation: generation,
    })
}

#[test]
fn the_store_ignores_stale_revisions_per_owner() {
    let mut store = PresentationStore::new();
    let process = PresentationOwner::Process;
    assert_eq!(store.accept(1, process.clone(), snapshot(0)), Ok(None));
    assert_eq!(
        store.accept(1, process.clone(), snapshot(0)),
        Err(StaleUpdate::NotNewer {
            retained: 0,
            offered: 0
        })
    );
    let replaced = store.accept(1, process.clone(), snapshot(5)).unwrap();
    assert_eq!(replaced.map(|r| r.snapshot.revision), Some(0));
    assert_eq!(
        store.accept(1, process.clone(), snapshot(4)),
        Err(StaleUpdate::NotNewer {
            retained: 5,
            offered: 4
        })
    );
    assert_eq!(store.get(&process).unwrap().snapshot.revision, 5);
    // Another owner keeps its own revisions.
    assert_eq!(store.accept(1, owner("s", 1), snapshot(1)), Ok(None));
    assert_eq!(store.len(), 2);
    assert_eq!(store.get(&process).unwrap().snapshot.revision, 5);
}

#[test]
fn a_new_generation_restarts_revisions_and_old_ones_are_stale() {
    let mut store = PresentationStore::new();
    let process = PresentationOwner::Process;
    store.accept(1, process.clone(), snapshot(9)).unwrap();
    let replaced = store
        .accept(2, process.clone(), snapshot(0))
        .unwrap()
        .unwrap();
    assert_eq!(replaced.generation, 1);
    assert_eq!(
        store.get(&process),
        Some(&RetainedSnapshot {
            generation: 2,
            snapshot: snapshot(0)
        })
    );
    assert_eq!(
        store.accept(1, process.clone(), snapshot(10)),
        Err(StaleUpdate::OlderGeneration {
            retained: 2,
            offered: 1
        })
    );
}

#[test]
fn clearing_a_generation_forgets_only_its_snapshots() {
    let mut store = PresentationStore::new();
    store.accept(1, owner("a", 1), snapshot(1)).unwrap();
    store.accept(1, owner("b", 1), snapshot(1)).unwrap();
    store.accept(2, owner("a", 2), snapshot(1)).unwrap();
    store
        .accept(2, PresentationOwner::Process, snapshot(3))
        .unwrap();
    assert_eq!(store.clear_generation(1), 2);
    assert_eq!(store.len(), 2);
    assert!(store.get(&owner("a", 1)).is_none());
    assert!(store.iter().all(|(_, retained)| retained.generation == 2));
    assert_eq!(store.clear_generation(1), 0);
    // After clearing, a revision the old generation had used is accepted again.
    store.accept(3, owner("a", 1), snapshot(0)).unwrap();
    assert_eq!(store.remove(&owner("a", 1)).map(|r| r.generation), Some(3));
    assert_eq!(store.clear_generation(2), 2);
    assert!(store.is_empty());
}
