//! Bounded spinning before a thread goes to sleep.
//!
//! A `tool/call` crosses four hand-offs between the host's threads (caller →
//! dispatcher → writer, reader → dispatcher → caller), and an SDK extension adds two
//! inside the child. The reader waits for the child's pipe rather than for another
//! thread, but waking it is the same cost, so it spins too, with zero-timeout polls. Waking a thread that sleeps costs a futex wake, and on a virtual
//! machine, when the sleeper's vCPU is idle, an inter-processor interrupt and a VM
//! entry on top: about 13 µs per hand-off on the 2-core benchmark machine
//! (`benches/README.md`), more than a whole JSON round trip with a child running on
//! the same vCPU (about 8 µs).
//!
//! So a thread that expects its next input soon first gives the CPU away with
//! `sched_yield` in a loop, checking for the input between yields, for a bounded
//! time; only then does it sleep. Yielding, rather than a busy loop, lets every other
//! runnable thread on the same CPU (the child included) run first, so a spinning
//! thread never delays the work it waits for by more than one scheduler pass.
//!
//! The cost is bounded twice: a wait spins for at most its budget, and at most
//! [`max_spinners`] threads of the process spin at once (two more than the number of
//! CPUs), so the idle threads of a large fleet sleep instead of competing for the
//! CPUs. A budget of zero turns spinning off.

/// How long the host's threads yield the CPU, checking for work, before they sleep,
/// unless [`crate::host::ExtensionHostBuilder::spin_before_sleep`] says otherwise.
///
/// Long enough to cover a round trip with a child that answers at once (about 20 µs
/// on the benchmark machine), so at depth 1 most hand-offs find their thread awake;
/// see `benches/README.md` for what it buys.
pub const DEFAULT_SPIN_BEFORE_SLEEP: std::time::Duration = std::time::Duration::from_micros(50);

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Threads of this process spinning now.
static SPINNERS: AtomicUsize = AtomicUsize::new(0);

/// How many threads of the process may spin at once: the number of CPUs plus two. A
/// call's chain of hand-offs keeps four host threads waiting (caller, dispatcher,
/// writer, reader); on the 2-core benchmark machine a limit of three spinners made
/// depth-1 calls slower than four did, and five gained nothing more.
pub(crate) fn max_spinners() -> usize {
    static MAX: OnceLock<usize> = OnceLock::new();
    *MAX.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()) + 2)
}

/// Yields the CPU until `ready` returns true or `budget` has passed. Returns at once
/// when `ready` already holds, when the budget is zero, or when [`max_spinners`]
/// threads are already spinning. True when `ready` held; the caller sleeps otherwise.
pub(crate) fn spin_until(budget: Duration, ready: impl FnMut() -> bool) -> bool {
    spin_counted(&SPINNERS, max_spinners(), budget, ready)
}

/// [`spin_until`] with the spinners counted in `spinners`, at most `max` at once.
fn spin_counted(
    spinners: &'static AtomicUsize,
    max: usize,
    budget: Duration,
    mut ready: impl FnMut() -> bool,
) -> bool {
    if ready() {
        return true;
    }
    if budget.is_zero() {
        return false;
    }
    let Some(_slot) = SpinSlot::take(spinners, max) else {
        return false;
    };
    let start = Instant::now();
    loop {
        std::thread::yield_now();
        if ready() {
            return true;
        }
        if start.elapsed() >= budget {
            return false;
        }
    }
}

/// One of the `max` places counted by `spinners`, given back on drop.
struct SpinSlot {
    spinners: &'static AtomicUsize,
}

impl SpinSlot {
    fn take(spinners: &'static AtomicUsize, max: usize) -> Option<SpinSlot> {
        spinners
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < max).then_some(n + 1)
            })
            .ok()
            .map(|_| SpinSlot { spinners })
    }
}

impl Drop for SpinSlot {
    fn drop(&mut self) {
        self.spinners.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;

    #[test]
    fn ready_input_returns_at_once_even_without_budget() {
        assert!(spin_until(Duration::ZERO, || true));
        assert!(!spin_until(Duration::ZERO, || false));
    }

    #[test]
    fn gives_up_after_the_budget() {
        static COUNT: AtomicUsize = AtomicUsize::new(0);
        let start = Instant::now();
        let mut checks = 0;
        let ready = spin_counted(&COUNT, 1, Duration::from_millis(2), || {
            checks += 1;
            false
        });
        assert!(!ready);
        assert!(checks > 1, "it kept checking while it spun");
        assert!(start.elapsed() >= Duration::from_millis(2));
    }

    #[test]
    fn sees_input_from_another_thread() {
        let flag = Arc::new(AtomicBool::new(false));
        let setter = {
            let flag = Arc::clone(&flag);
            std::thread::spawn(move || flag.store(true, Ordering::Release))
        };
        // Its own spinner count, so other tests' threads cannot take every slot; and a
        // generous budget: the setter thread only has to be scheduled once.
        static COUNT: AtomicUsize = AtomicUsize::new(0);
        let seen = spin_counted(&COUNT, 1, Duration::from_secs(30), || {
            flag.load(Ordering::Acquire)
        });
        setter.join().unwrap();
        assert!(seen);
    }

    #[test]
    fn slots_are_bounded_and_given_back() {
        static COUNT: AtomicUsize = AtomicUsize::new(0);
        let taken: Vec<SpinSlot> = std::iter::from_fn(|| SpinSlot::take(&COUNT, 3))
            .take(10)
            .collect();
        assert_eq!(taken.len(), 3);
        assert!(SpinSlot::take(&COUNT, 3).is_none());
        drop(taken);
        assert_eq!(COUNT.load(Ordering::Acquire), 0);
        assert!(SpinSlot::take(&COUNT, 3).is_some());
    }
}
