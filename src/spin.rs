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
//!
//! Spinning only pays while a CPU is free. On an oversubscribed machine (a build
//! keeping every core busy) `sched_yield` hands the CPU to that other work for a whole
//! scheduler slice, milliseconds, and a thread that keeps yielding also loses the
//! wake-up preference the scheduler gives a thread that slept. Measured on the 2-core
//! benchmark machine with a busy loop per core: a depth-1 call took 5.7 ms spinning,
//! 67 µs sleeping at once (`benches/README.md`). So a yield that comes back later than
//! [`OVERSUBSCRIBED_YIELD`] means another process had the CPU, and the second such
//! yield within [`SECOND_STRIKE_WITHIN`] means the machine is oversubscribed: every
//! thread of the process then sleeps at once instead of spinning, for [`BACKOFF_MIN`] at first,
//! doubling up to [`BACKOFF_MAX`] while it keeps happening; once the load is gone, the
//! first spin after a back-off finds the CPUs free and spinning resumes. A process
//! that waits again only a while after its back-off ended lets the machine's idle
//! time decide instead of spinning ([`still_busy`]).
//!
//! The CPUs are not free either when the machine has more runnable threads than a host
//! and one busy extension keep, as in a busy fleet of extensions, whose processes
//! each spin within their own bound (`crowd.rs`): the process then backs off from
//! spinning the same way, without the short scheduler slice (`slice.rs`), which is
//! for preempting other programs' work.

/// How long the host's threads yield the CPU, checking for work, before they sleep,
/// unless [`crate::host::ExtensionHostBuilder::spin_before_sleep`] says otherwise.
///
/// Long enough to cover a round trip with a child that answers at once (about 20 µs
/// on the benchmark machine), so at depth 1 most hand-offs find their thread awake;
/// see `benches/README.md` for what it buys.
pub const DEFAULT_SPIN_BEFORE_SLEEP: std::time::Duration = std::time::Duration::from_micros(50);

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Threads of this process spinning now.
static SPINNERS: AtomicUsize = AtomicUsize::new(0);

/// Whether this process's threads are backing off from spinning.
static BACKOFF: Backoff = Backoff::new();

/// Whether this process's threads are backing off from spinning because the machine
/// has more runnable threads than CPUs to spare (`crowd.rs`). Unlike [`BACKOFF`] it
/// leaves the scheduler slice alone: the threads that crowd the machine are this
/// process's own and its extensions', not other work to preempt.
static CROWD: Backoff = Backoff::new();

/// When (in [`now_nanos`]) this process may next look whether the machine is crowded.
static NEXT_CROWD_LOOK: AtomicU64 = AtomicU64::new(0);

/// When (in [`now_nanos`], never 0) the machine's idle time was read during the last
/// back-off from slow yields; 0 when there is nothing to review.
static REVIEW_AT: AtomicU64 = AtomicU64::new(0);

/// The machine's idle ticks read at [`REVIEW_AT`] (`crowd.rs`).
static REVIEW_IDLE: AtomicU64 = AtomicU64::new(0);

/// How long after its back-off ended a process must have gone without a wait for the
/// machine's idle time to decide the next back-off ([`still_busy`]). A process that
/// waits again at once (a steady stream of calls) probes by spinning, as before: its
/// own work may be what kept the CPUs busy (on the quiet machine, the SDK at depth 64
/// ran 3-25% slower when its idle time decided).
const REVIEW_AFTER_QUIET: Duration = Duration::from_millis(100);

/// A yield that returns later than this gave the CPU to other runnable work for a
/// scheduler slice: the machine is oversubscribed. A busy process's slice is 0.75 ms
/// on one CPU and longer with more (Linux's `base_slice` grows with the CPU count),
/// and it ends on a scheduler tick: on the 2-core benchmark machine with a busy loop
/// per core, every slow yield took 2 to 4 ms. The host's own work is shorter, but not
/// always short: with 64 calls in flight on the quiet machine, where the child parses
/// a batch of requests while a host thread yields, hundreds of yields a second took
/// 256 to 511 µs through an SDK extension (its threads and the host's take turns on
/// two CPUs), a few a second 0.5 to 1 ms, and a few in the whole run longer. At 250
/// µs, and still at 500 µs, those were enough to back off from spinning again and
/// again on a quiet machine, and throughput at depth 64 fell by up to a fifth
/// (`benches/README.md`).
pub(crate) const OVERSUBSCRIBED_YIELD: Duration = Duration::from_millis(1);

/// How long threads sleep at once, without spinning, after the first slow yield.
pub(crate) const BACKOFF_MIN: Duration = Duration::from_millis(50);

/// The longest back-off, reached by doubling while slow yields keep coming: once a
/// second at most, one wait probes whether the CPUs are free again. Eight seconds was
/// tried: bursts of calls on a loaded machine then paid fewer probes (an SDK
/// extension's depth-1 calls in the loaded table: 0.3-0.9 ms against 0.9-1.9 ms), but
/// on the quiet, noisy benchmark machine two stray slow yields now and then doubled
/// the back-off into seconds without spinning, and the quiet depth-1 calls took 3-4
/// times as long.
pub(crate) const BACKOFF_MAX: Duration = Duration::from_secs(1);

/// Nanoseconds on a monotonic clock of this process.
fn now_nanos() -> u64 {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    EPOCH.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

/// Two slow yields this close together are oversubscription; a lone one (a kernel
/// worker, another program's short burst) is not.
pub(crate) const SECOND_STRIKE_WITHIN: Duration = Duration::from_millis(20);

/// The back-off state shared by every thread of the process: until when no thread
/// spins, the length of the last back-off, and when the last slow yield was seen.
struct Backoff {
    until: AtomicU64,
    length: AtomicU64,
    last_slow: AtomicU64,
}

impl Backoff {
    const fn new() -> Backoff {
        Backoff {
            until: AtomicU64::new(0),
            length: AtomicU64::new(0),
            last_slow: AtomicU64::new(0),
        }
    }

    /// A slow yield at `now`. True when it is the second within
    /// [`SECOND_STRIKE_WITHIN`]: the process then backs off.
    fn slow_yield(&self, now: u64) -> bool {
        let last = self.last_slow.swap(now, Ordering::Relaxed);
        // Threads race: `last` may be a later reading than this thread's `now`.
        let strike = last != 0 && now.abs_diff(last) < SECOND_STRIKE_WITHIN.as_nanos() as u64;
        if strike {
            self.start(now);
        }
        strike
    }

    /// True while threads should sleep without spinning.
    fn active(&self, now: u64) -> bool {
        now < self.until.load(Ordering::Relaxed)
    }

    /// Starts a back-off at `now`, whatever called for it (a second strike, a crowded
    /// machine, the idle-time review): for twice as long as last time, within bounds,
    /// or for [`BACKOFF_MIN`] when the last back-off ended more than [`BACKOFF_MAX`] ago
    /// (the load went away in between). A call while a back-off lasts (threads that
    /// were already spinning when it began) changes nothing.
    fn start(&self, now: u64) {
        let min = BACKOFF_MIN.as_nanos() as u64;
        let max = BACKOFF_MAX.as_nanos() as u64;
        let until = self.until.load(Ordering::Relaxed);
        if now < until {
            return;
        }
        let length = if until == 0 || now > until + max {
            min
        } else {
            (self.length.load(Ordering::Relaxed) * 2).clamp(min, max)
        };
        self.length.store(length, Ordering::Relaxed);
        self.until.store(now + length, Ordering::Relaxed);
    }
}

/// How many threads of the process may spin at once: the number of CPUs plus two. A
/// call's chain of hand-offs keeps four host threads waiting (caller, dispatcher,
/// writer, reader); on the 2-core benchmark machine a limit of three spinners made
/// depth-1 calls slower than four did, and five gained nothing more.
pub(crate) fn max_spinners() -> usize {
    crate::crowd::cpus() + 2
}

/// Yields the CPU until `ready` returns true or `budget` has passed. Returns at once
/// when `ready` already holds, when the budget is zero, when [`max_spinners`] threads
/// are already spinning, or while the process backs off from an oversubscribed or a
/// crowded machine. True when `ready` held; the caller sleeps otherwise.
pub(crate) fn spin_until(budget: Duration, mut ready: impl FnMut() -> bool) -> bool {
    follow_load();
    if !budget.is_zero() {
        let now = now_nanos();
        if crowded(now) || still_busy(now) {
            return ready();
        }
    }
    spin_counted(
        &SPINNERS,
        &BACKOFF,
        max_spinners(),
        budget,
        std::thread::yield_now,
        ready,
    )
}

/// True while the process backs off from a crowded machine. When the back-off is over
/// and [`crate::crowd::LOOK_EVERY`] has passed since the last look, one thread looks
/// again: still crowded, the back-off starts again, doubled as with slow yields.
fn crowded(now: u64) -> bool {
    if CROWD.active(now) {
        return true;
    }
    let next = NEXT_CROWD_LOOK.load(Ordering::Relaxed);
    let look = now >= next
        && NEXT_CROWD_LOOK
            .compare_exchange(
                next,
                now + crate::crowd::LOOK_EVERY.as_nanos() as u64,
                Ordering::Relaxed,
                Ordering::Relaxed,
            )
            .is_ok();
    if look && crate::crowd::crowded() {
        CROWD.start(now);
        return true;
    }
    false
}

/// True when the process waits for the first time a while after a back-off from slow
/// yields ended ([`REVIEW_AFTER_QUIET`]) and the CPUs stayed busy all along: the
/// back-off then starts again, doubled as with a slow yield, without a thread first
/// spinning into other programs' work to find out. While the back-off lasts, the first
/// wait reads the machine's idle time; the first wait after it reads it again and
/// compares (`crowd.rs`). Calls now and then on a loaded machine (an editor beside a
/// build) would otherwise each pay a probe: a scheduler slice, milliseconds.
fn still_busy(now: u64) -> bool {
    let at = REVIEW_AT.load(Ordering::Acquire);
    if BACKOFF.active(now) {
        if at == 0 {
            if let Some(idle) = crate::crowd::idle_ticks() {
                // A second reader in a race only moves the start a little.
                begin_review(now, idle);
            }
        }
        return false;
    }
    if at == 0
        || REVIEW_AT
            .compare_exchange(at, 0, Ordering::AcqRel, Ordering::Relaxed)
            .is_err()
    {
        return false;
    }
    let ended = BACKOFF.until.load(Ordering::Relaxed);
    if now < ended + REVIEW_AFTER_QUIET.as_nanos() as u64 {
        return false;
    }
    let Some(idle) = crate::crowd::idle_ticks() else {
        return false;
    };
    let idled = idle.saturating_sub(REVIEW_IDLE.load(Ordering::Relaxed));
    let elapsed = Duration::from_nanos(now.saturating_sub(at));
    if !crate::crowd::hardly_idle(idled, elapsed) {
        return false;
    }
    BACKOFF.start(now);
    begin_review(now, idle);
    true
}

/// Begins a review at `now`, the machine's idle ticks then being `idle`.
fn begin_review(now: u64, idle: u64) {
    REVIEW_IDLE.store(idle, Ordering::Relaxed);
    REVIEW_AT.store(now.max(1), Ordering::Release);
}

/// Gives the calling thread, if it is one of the runtime's own, the slice for the
/// load: short while the process backs off from an oversubscribed machine
/// (`slice.rs`). [`spin_until`] does this before every wait; a thread that waits
/// without it (the SDK's reader, on a blocking read) calls it itself.
pub(crate) fn follow_load() {
    crate::slice::follow_load(BACKOFF.active(now_nanos()));
}

/// [`spin_until`] with the spinners counted in `spinners`, at most `max` at once,
/// backing off in `backoff`, giving the CPU away with `yield_cpu`.
fn spin_counted(
    spinners: &'static AtomicUsize,
    backoff: &Backoff,
    max: usize,
    budget: Duration,
    mut yield_cpu: impl FnMut(),
    mut ready: impl FnMut() -> bool,
) -> bool {
    if ready() {
        return true;
    }
    if budget.is_zero() || backoff.active(now_nanos()) {
        return false;
    }
    let Some(_slot) = SpinSlot::take(spinners, max) else {
        return false;
    };
    let start = Instant::now();
    let mut before = start;
    loop {
        yield_cpu();
        let after = Instant::now();
        if after - before > OVERSUBSCRIBED_YIELD && backoff.slow_yield(now_nanos()) {
            return ready();
        }
        if ready() {
            return true;
        }
        if after - start >= budget {
            return false;
        }
        before = after;
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
        let backoff = Backoff::new();
        let ready = spin_counted(
            &COUNT,
            &backoff,
            1,
            Duration::from_millis(2),
            || {},
            || {
                checks += 1;
                false
            },
        );
        assert!(!ready);
        assert!(checks > 1, "it kept checking while it spun");
        // On a loaded machine the test thread itself may be preempted for a slice,
        // which ends the spin early as a slow yield would.
        assert!(start.elapsed() >= Duration::from_millis(2) || backoff.active(now_nanos()));
    }

    #[test]
    fn a_slow_yield_read_before_another_threads_later_one_is_still_a_strike() {
        // Thread B stored a later reading before thread A's earlier one arrives.
        let backoff = Backoff::new();
        assert!(!backoff.slow_yield(2_000_000));
        assert!(backoff.slow_yield(1_500_000));
        assert!(backoff.active(1_500_001));
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
        // A slice lost to other work ends a spin early; it is tried again.
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut seen = false;
        while !seen && Instant::now() < deadline {
            seen = spin_counted(
                &COUNT,
                &Backoff::new(),
                1,
                Duration::from_secs(30),
                std::thread::yield_now,
                || flag.load(Ordering::Acquire),
            );
        }
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

    #[test]
    fn a_slow_yield_backs_every_thread_off_then_doubles() {
        static COUNT: AtomicUsize = AtomicUsize::new(0);
        let backoff = Backoff::new();
        let budget = Duration::from_secs(30);
        // Yields that give the CPU away for a whole slice: the second ends the spin.
        let mut slow_yields = 0;
        let start = Instant::now();
        let slow = || {
            slow_yields += 1;
            std::thread::sleep(OVERSUBSCRIBED_YIELD * 4);
        };
        assert!(!spin_counted(&COUNT, &backoff, 1, budget, slow, || false));
        assert!(start.elapsed() < budget);
        assert!(slow_yields >= 2);
        assert!(backoff.active(now_nanos()));
        let first = backoff.length.load(Ordering::Relaxed);
        assert_eq!(first, BACKOFF_MIN.as_nanos() as u64);
        // Another thread's strike while the back-off lasts changes nothing.
        let until = backoff.until.load(Ordering::Relaxed);
        backoff.start(until - 1);
        assert_eq!(backoff.length.load(Ordering::Relaxed), first);
        assert_eq!(backoff.until.load(Ordering::Relaxed), until);
        // While backing off nothing spins, but input already there is still seen.
        let mut yields = 0;
        assert!(!spin_counted(
            &COUNT,
            &backoff,
            1,
            budget,
            || yields += 1,
            || false
        ));
        assert_eq!(yields, 0);
        assert!(spin_counted(&COUNT, &backoff, 1, budget, || {}, || true));
        // Slow again right after the back-off: twice as long.
        let until = backoff.until.load(Ordering::Relaxed);
        backoff.start(until + 1);
        assert_eq!(backoff.length.load(Ordering::Relaxed), 2 * first);
        // Long after the last back-off ended, the next one starts short again.
        let until = backoff.until.load(Ordering::Relaxed);
        backoff.start(until + 2 * BACKOFF_MAX.as_nanos() as u64);
        assert_eq!(backoff.length.load(Ordering::Relaxed), first);
    }
}
