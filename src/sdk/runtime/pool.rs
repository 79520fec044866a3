//! Workers that run host requests: at most `limit` at once, in arrival order.
//!
//! Requests beyond the running ones wait in an unbounded FIFO queue instead of
//! blocking the reader, which must stay free to route the host's answers to handlers
//! waiting on child requests. With a limit of 1 (API 0.1) requests run strictly one
//! after the other.
//!
//! Workers are spawned lazily and then kept, one at first: a job that waits behind
//! busy workers is no reason to grow, as long as the workers keep taking jobs. More
//! workers than the work needs only take turns and wake each other (on two CPUs the
//! SDK's depth-64 echo on API 0.4 ran at 65k calls/s with sixteen workers, 55-84k with
//! two and 98-106k with one; `benches/README.md`). When the workers take no job for
//! [`GROW_AFTER`] while jobs wait, the pool grows by one worker, again after each
//! further [`GROW_AFTER`] without progress:
//! - up to one worker per CPU whatever the workers do, so that long handlers that
//!   compute run side by side on the CPUs;
//! - beyond that, up to the limit, only when every worker is blocked in a handler
//!   (waiting on a child request, a person, a lock), that is when none runs or waits
//!   for a CPU: on a busy machine (a fleet of extensions on two CPUs) workers may take
//!   no job for a while only because they wait for a CPU, and more workers would only
//!   take turns with them (`runnable.rs`).
//!
//! A worker whose handler waits for the host's answer to a child request (a
//! confirmation, input, any service) is blocked where the pool can see it: when every
//! busy worker is blocked so and a job waits, the pool adds a worker at once, without
//! waiting for the grower ([`while_blocked`]).
//!
//! While the workers keep making progress the grower looks less often, down to once
//! per [`GROW_WATCH_MAX`].
//!
//! One grower thread per pool, started on the first wait, does that watching and
//! sleeps on a channel in between: a pipeline that keeps the queue filling and
//! draining must not start a thread per burst.

use std::cell::RefCell;
use std::sync::{Arc, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

use crossbeam_channel::{bounded, unbounded, Receiver, Sender};
use parking_lot::Mutex;

use super::doorbell::{BellSender, Doorbell};
use super::runnable::{any_runnable, WorkerId};

/// A unit of work.
pub(crate) type Job = Box<dyn FnOnce() + Send>;

/// How long waiting jobs see no worker take a job before the pool adds a worker.
pub(crate) const GROW_AFTER: Duration = Duration::from_millis(2);

/// The longest the grower waits between two looks while the workers keep making
/// progress: each look that finds progress doubles the wait from [`GROW_AFTER`] up to
/// this, and a growth starts again from [`GROW_AFTER`]. A fleet of extensions whose
/// queues never drain then wakes its growers a few dozen times a second, not 500
/// (200 growers at 2 ms were a tenth of a busy fleet's CPU); a handler that blocks
/// after a long stretch of progress on something the pool cannot see (a lock, a
/// sleep, its own I/O) gets its first companion worker within this. A longer watch
/// (256 ms) saved no measurable CPU in a busy fleet (`benches/README.md`, history, 2026-12-05).
pub(crate) const GROW_WATCH_MAX: Duration = Duration::from_millis(32);

#[derive(Default)]
struct Counts {
    /// Workers started so far.
    spawned: u32,
    /// Workers waiting for a job.
    idle: u32,
    /// Jobs sent and not yet taken.
    queued: u32,
    /// Jobs taken so far: the workers' progress.
    taken: u64,
    /// Workers whose handler waits for the answer to a child request.
    blocked: u32,
    /// A grower thread is watching for blocked workers.
    growing: bool,
}

impl Counts {
    /// True when a job waits with no idle worker to take it.
    fn waiting(&self) -> bool {
        self.queued > self.idle
    }

    /// True when a job waits and every worker waits for a child request's answer (or
    /// none was started): one more worker is wanted now. An idle worker will take a job
    /// and run it, and a job that waits behind running workers is the grower's to
    /// judge; a worker being started counts as neither idle nor blocked, so a pool
    /// adds one at a time.
    fn wants_worker_now(&self, limit: u32) -> bool {
        self.waiting() && self.spawned < limit && self.idle == 0 && self.blocked >= self.spawned
    }
}

/// The state the pool's threads share.
struct Shared {
    /// Every started worker, for the grower to see whether any runs.
    workers: Mutex<Vec<WorkerId>>,
    limit: u32,
    /// Workers started for waiting jobs whatever the running ones do: the CPUs, within
    /// the limit.
    cpus: u32,
    rx: Receiver<Job>,
    /// What the workers sleep on while no job waits.
    bell: Arc<Doorbell>,
    counts: Mutex<Counts>,
}

/// A bounded, lazily grown set of worker threads.
pub(crate) struct Pool {
    /// The queue; dropping it ends the workers once they have taken every job.
    tx: BellSender<Job>,
    shared: Arc<Shared>,
    /// Wakes the grower, started on the first need, to watch for blocked workers; its
    /// thread ends when the pool is dropped.
    grower: OnceLock<Sender<()>>,
}

impl Pool {
    /// A pool running at most `limit` jobs at once (at least one).
    pub(crate) fn new(limit: u32) -> Pool {
        let cpus = crate::crowd::cpus();
        Pool::with_cpus(limit, u32::try_from(cpus).unwrap_or(u32::MAX))
    }

    /// A pool that grows to `cpus` workers for jobs that wait and beyond only for
    /// blocked workers.
    fn with_cpus(limit: u32, cpus: u32) -> Pool {
        let (tx, rx) = unbounded();
        let limit = limit.max(1);
        let bell = Arc::new(Doorbell::new());
        Pool {
            tx: BellSender::new(tx, Arc::clone(&bell)),
            shared: Arc::new(Shared {
                workers: Mutex::new(Vec::new()),
                limit,
                cpus: cpus.clamp(1, limit),
                rx,
                bell,
                counts: Mutex::new(Counts::default()),
            }),
            grower: OnceLock::new(),
        }
    }

    /// Queues `job`: starts a worker when none can take it (the first one, or one
    /// beside workers that all wait for child requests), or has a grower watch while
    /// jobs wait.
    pub(crate) fn submit(&self, job: Job) {
        let (spawn, grow) = {
            let mut counts = self.shared.counts.lock();
            counts.queued += 1;
            let waiting = counts.waiting();
            let spawn = counts.wants_worker_now(self.shared.limit);
            let grow = waiting && !spawn && !counts.growing && counts.spawned < self.shared.limit;
            if spawn {
                counts.spawned += 1;
            }
            counts.growing |= grow;
            (spawn, grow)
        };
        // The receiver lives in `shared`, so the send cannot fail.
        self.tx.send(job, None);
        if spawn {
            start_worker(&self.shared);
        }
        if grow {
            let watch = self.grower.get_or_init(|| start_grower(&self.shared));
            // A wake already pending is as good as this one.
            let _ = watch.try_send(());
        }
    }
}

fn start_worker(shared: &Arc<Shared>) {
    let shared = Arc::clone(shared);
    thread::Builder::new()
        .name("octet-sdk-worker".into())
        .spawn(move || worker(shared))
        .expect("spawning a worker thread");
}

thread_local! {
    /// The pool whose worker this thread is, for [`while_blocked`].
    static WORKER_OF: RefCell<Option<Arc<Shared>>> = const { RefCell::new(None) };
}

/// Runs `wait`, a handler's wait for the answer to a child request, with the calling
/// thread counted as a blocked worker of its pool. When that leaves every busy worker
/// blocked while a job waits, the pool starts a worker for it first (within the limit:
/// on API 0.1 the next request waits, as the reference's one-at-a-time rule wants). On
/// a thread that is no pool's worker, just runs `wait`.
pub(crate) fn while_blocked<T>(wait: impl FnOnce() -> T) -> T {
    let Some(shared) = WORKER_OF.with(|pool| pool.borrow().clone()) else {
        return wait();
    };
    let spawn = {
        let mut counts = shared.counts.lock();
        counts.blocked += 1;
        let spawn = counts.wants_worker_now(shared.limit);
        counts.spawned += u32::from(spawn);
        spawn
    };
    if spawn {
        start_worker(&shared);
    }
    /// Counts the worker as unblocked again, also when `wait` unwinds.
    struct Unblock<'a>(&'a Shared);
    impl Drop for Unblock<'_> {
        fn drop(&mut self) {
            self.0.counts.lock().blocked -= 1;
        }
    }
    let _unblock = Unblock(&shared);
    wait()
}

fn worker(shared: Arc<Shared>) {
    crate::slice::own_thread();
    shared.workers.lock().push(WorkerId::current());
    WORKER_OF.with(|pool| *pool.borrow_mut() = Some(Arc::clone(&shared)));
    loop {
        shared.counts.lock().idle += 1;
        crate::spin::spin_until(super::super::SPIN_BEFORE_SLEEP, || !shared.rx.is_empty());
        let Ok(job) = shared.bell.recv(&shared.rx) else {
            return;
        };
        {
            let mut counts = shared.counts.lock();
            counts.idle -= 1;
            counts.queued -= 1;
            counts.taken += 1;
        }
        job();
    }
}

/// Starts the pool's grower: each wake has it watch while jobs wait.
fn start_grower(shared: &Arc<Shared>) -> Sender<()> {
    let (watch, wakes) = bounded(1);
    let shared = Arc::clone(shared);
    thread::Builder::new()
        .name("octet-sdk-grower".into())
        .spawn(move || {
            let mut interval = GROW_AFTER;
            for () in wakes {
                watch_while_waiting(&shared, &mut interval);
            }
        })
        .expect("spawning the pool's grower thread");
    watch
}

/// How long the grower keeps looking after it last saw a job wait, before it sleeps
/// until woken: a pipeline's queue drains and fills many times a second, and waking
/// the grower for each filling would cost what the backed-off interval saves.
const PARK_AFTER: Duration = Duration::from_millis(100);

/// Watches while jobs wait: after each `interval` in which no worker took a job, adds
/// one while there are fewer than the CPUs, and beyond only when no worker ran either.
/// The interval doubles while workers make progress or nothing waits (up to
/// [`GROW_WATCH_MAX`]) and starts again from [`GROW_AFTER`] after a growth.
/// Returns once no job waited for [`PARK_AFTER`], or when the limit is reached.
fn watch_while_waiting(shared: &Arc<Shared>, interval: &mut Duration) {
    let mut seen = shared.counts.lock().taken;
    let mut last_wait = Instant::now();
    loop {
        thread::sleep(*interval);
        let (taken, below_cpus) = {
            let mut counts = shared.counts.lock();
            let waiting = counts.waiting();
            if waiting {
                last_wait = Instant::now();
            }
            if last_wait.elapsed() >= PARK_AFTER || counts.spawned >= shared.limit {
                counts.growing = false;
                return;
            }
            (
                waiting.then_some(counts.taken),
                counts.spawned < shared.cpus,
            )
        };
        // No job taken: below the CPUs that is reason enough; beyond them, no worker
        // may run or wait for a CPU either (every one is blocked). The workers are read
        // outside the counts' lock: it is file I/O.
        let stalled =
            taken == Some(seen) && (below_cpus || !any_runnable(&shared.workers.lock().clone()));
        seen = taken.unwrap_or(seen);
        *interval = if stalled {
            GROW_AFTER
        } else {
            (*interval * 2).min(GROW_WATCH_MAX)
        };
        if stalled {
            let spawn = {
                let mut counts = shared.counts.lock();
                let room = counts.spawned < shared.limit;
                counts.spawned += u32::from(room);
                room
            };
            if spawn {
                start_worker(shared);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::time::Duration;

    fn run_jobs(limit: u32, jobs: u32) -> (u32, Vec<u32>) {
        let pool = Pool::with_cpus(limit, limit);
        let running = Arc::new(AtomicU32::new(0));
        let peak = Arc::new(AtomicU32::new(0));
        let order = Arc::new(Mutex::new(Vec::new()));
        let (done_tx, done_rx) = unbounded();
        for job in 0..jobs {
            let (running, peak, order, done_tx) = (
                Arc::clone(&running),
                Arc::clone(&peak),
                Arc::clone(&order),
                done_tx.clone(),
            );
            pool.submit(Box::new(move || {
                let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                peak.fetch_max(now, Ordering::SeqCst);
                order.lock().push(job);
                std::thread::sleep(Duration::from_millis(5));
                running.fetch_sub(1, Ordering::SeqCst);
                done_tx.send(()).unwrap();
            }));
        }
        for _ in 0..jobs {
            done_rx.recv_timeout(Duration::from_secs(20)).unwrap();
        }
        let order = order.lock().clone();
        (peak.load(Ordering::SeqCst), order)
    }

    #[test]
    fn never_runs_more_than_the_limit() {
        let (peak, order) = run_jobs(3, 20);
        assert!((1..=3).contains(&peak), "peak {peak}");
        assert_eq!(order.len(), 20);
    }

    #[test]
    fn a_limit_of_one_runs_in_arrival_order() {
        let (peak, order) = run_jobs(1, 10);
        assert_eq!(peak, 1);
        assert_eq!(order, (0..10).collect::<Vec<_>>());
    }

    #[test]
    fn workers_beyond_the_cpus_start_only_for_blocked_ones() {
        // One CPU, a limit of four: three jobs block until a fourth, queued behind
        // them, releases them. Only growth past the CPUs lets the fourth run.
        let pool = Pool::with_cpus(4, 1);
        let (release_tx, release_rx) = unbounded::<()>();
        let (done_tx, done_rx) = unbounded();
        for _ in 0..3 {
            let (release_rx, done_tx) = (release_rx.clone(), done_tx.clone());
            pool.submit(Box::new(move || {
                release_rx.recv_timeout(Duration::from_secs(20)).unwrap();
                done_tx.send(()).unwrap();
            }));
        }
        pool.submit(Box::new(move || {
            for _ in 0..3 {
                release_tx.send(()).unwrap();
            }
        }));
        for _ in 0..3 {
            done_rx.recv_timeout(Duration::from_secs(20)).unwrap();
        }
        assert_eq!(pool.shared.counts.lock().spawned, 4);
    }

    #[test]
    fn a_worker_is_wanted_at_once_only_when_every_worker_is_blocked() {
        let counts = |spawned, idle, queued, blocked| Counts {
            spawned,
            idle,
            queued,
            blocked,
            ..Counts::default()
        };
        // No worker yet.
        assert!(counts(0, 0, 1, 0).wants_worker_now(4));
        // The only worker waits for a child request's answer.
        assert!(counts(1, 0, 1, 1).wants_worker_now(4));
        // An idle worker takes the first job and runs it; the second waits behind a
        // running worker, as in any pipeline.
        assert!(!counts(1, 1, 2, 0).wants_worker_now(4));
        assert!(!counts(2, 1, 2, 1).wants_worker_now(4));
        // One of two workers runs.
        assert!(!counts(2, 0, 1, 1).wants_worker_now(4));
        // Nothing waits.
        assert!(!counts(1, 1, 1, 0).wants_worker_now(4));
        assert!(!counts(1, 0, 0, 1).wants_worker_now(4));
        // The limit is reached.
        assert!(!counts(1, 0, 1, 1).wants_worker_now(1));
    }

    /// One CPU and one worker, whose job waits (as for a child request's answer) for a
    /// release that only a second job gives; the second job is queued before that wait
    /// begins (`queued_first`) or while it lasts. A grower is marked as watching, so
    /// none is started: only the pool's own rule can add the second worker. Returns
    /// whether the first job got its release, and how many workers were started.
    fn release_behind_a_blocked_worker(queued_first: bool) -> (bool, u32) {
        let pool = Pool::with_cpus(4, 1);
        pool.shared.counts.lock().growing = true;
        let (go_tx, go_rx) = unbounded::<()>();
        let (blocked_tx, blocked_rx) = unbounded();
        let (release_tx, release_rx) = unbounded::<()>();
        let (done_tx, done_rx) = unbounded();
        pool.submit(Box::new(move || {
            go_rx.recv_timeout(Duration::from_secs(20)).unwrap();
            let answer = while_blocked(|| {
                blocked_tx.send(()).unwrap();
                release_rx.recv_timeout(Duration::from_secs(20))
            });
            done_tx.send(answer.is_ok()).unwrap();
        }));
        let release: Job = Box::new(move || release_tx.send(()).unwrap());
        if queued_first {
            pool.submit(release);
            go_tx.send(()).unwrap();
        } else {
            go_tx.send(()).unwrap();
            blocked_rx.recv_timeout(Duration::from_secs(20)).unwrap();
            pool.submit(release);
        }
        let released = done_rx.recv_timeout(Duration::from_secs(30)) == Ok(true);
        let spawned = pool.shared.counts.lock().spawned;
        (released, spawned)
    }

    #[test]
    fn a_job_queued_while_every_worker_waits_for_a_child_request_gets_a_worker_at_once() {
        assert_eq!(release_behind_a_blocked_worker(false), (true, 2));
    }

    #[test]
    fn a_worker_that_starts_waiting_for_a_child_request_lets_a_queued_job_run() {
        assert_eq!(release_behind_a_blocked_worker(true), (true, 2));
    }

    #[test]
    fn a_limit_of_one_waits_for_a_worker_blocked_on_a_child_request() {
        // API 0.1: the next request runs only after the blocked one ends.
        let pool = Pool::with_cpus(1, 1);
        let order = Arc::new(Mutex::new(Vec::new()));
        let (done_tx, done_rx) = unbounded();
        for job in 0..2 {
            let (order, done_tx) = (Arc::clone(&order), done_tx.clone());
            pool.submit(Box::new(move || {
                while_blocked(|| std::thread::sleep(Duration::from_millis(20)));
                order.lock().push(job);
                done_tx.send(()).unwrap();
            }));
        }
        for _ in 0..2 {
            done_rx.recv_timeout(Duration::from_secs(20)).unwrap();
        }
        assert_eq!(*order.lock(), vec![0, 1]);
        assert_eq!(pool.shared.counts.lock().spawned, 1);
    }

    #[test]
    fn a_job_waiting_behind_a_computing_worker_gets_a_worker_while_cpus_are_left() {
        // Two CPUs: the first job computes (its worker keeps running) until the
        // second has started, which needs a second worker.
        let pool = Pool::with_cpus(4, 2);
        let started = Arc::new(AtomicU32::new(0));
        let (done_tx, done_rx) = unbounded();
        {
            let (started, done_tx) = (Arc::clone(&started), done_tx.clone());
            pool.submit(Box::new(move || {
                let deadline = Instant::now() + Duration::from_secs(20);
                while started.load(Ordering::SeqCst) == 0 && Instant::now() < deadline {
                    std::hint::spin_loop();
                }
                done_tx.send(started.load(Ordering::SeqCst)).unwrap();
            }));
        }
        pool.submit(Box::new(move || {
            started.store(1, Ordering::SeqCst);
        }));
        let seen = done_rx.recv_timeout(Duration::from_secs(30)).unwrap();
        assert_eq!(seen, 1, "the second job ran beside the first");
        assert_eq!(pool.shared.counts.lock().spawned, 2);
    }
}
