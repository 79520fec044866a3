//! Workers that run host requests: at most `limit` at once, in arrival order.
//!
//! Workers are spawned lazily, up to the limit, and then kept. Requests beyond the
//! limit wait in an unbounded FIFO queue instead of blocking the reader, which must
//! stay free to route the host's answers to handlers waiting on child requests.
//! With a limit of 1 (API 0.1) requests run strictly one after the other.

use std::sync::Arc;
use std::thread;

use crossbeam_channel::{unbounded, Receiver, Sender};
use parking_lot::Mutex;

/// A unit of work.
pub(crate) type Job = Box<dyn FnOnce() + Send>;

#[derive(Default)]
struct Counts {
    /// Workers started so far.
    spawned: u32,
    /// Workers waiting for a job.
    idle: u32,
    /// Jobs sent and not yet taken.
    queued: u32,
}

/// A bounded, lazily grown set of worker threads.
pub(crate) struct Pool {
    limit: u32,
    tx: Sender<Job>,
    rx: Receiver<Job>,
    counts: Arc<Mutex<Counts>>,
}

impl Pool {
    /// A pool running at most `limit` jobs at once (at least one).
    pub(crate) fn new(limit: u32) -> Pool {
        let (tx, rx) = unbounded();
        Pool {
            limit: limit.max(1),
            tx,
            rx,
            counts: Arc::new(Mutex::new(Counts::default())),
        }
    }

    /// Queues `job`, starting a worker when every started one is busy and the limit
    /// allows another.
    pub(crate) fn submit(&self, job: Job) {
        let spawn = {
            let mut counts = self.counts.lock();
            counts.queued += 1;
            let spawn = counts.queued > counts.idle && counts.spawned < self.limit;
            if spawn {
                counts.spawned += 1;
            }
            spawn
        };
        // The receiver lives in `self`, so the send cannot fail.
        let _ = self.tx.send(job);
        if spawn {
            let rx = self.rx.clone();
            let counts = Arc::clone(&self.counts);
            thread::Builder::new()
                .name("octet-sdk-worker".into())
                .spawn(move || worker(rx, counts))
                .expect("spawning a worker thread");
        }
    }
}

fn worker(rx: Receiver<Job>, counts: Arc<Mutex<Counts>>) {
    loop {
        counts.lock().idle += 1;
        crate::spin::spin_until(super::super::SPIN_BEFORE_SLEEP, || !rx.is_empty());
        let Ok(job) = rx.recv() else {
            return;
        };
        {
            let mut counts = counts.lock();
            counts.idle -= 1;
            counts.queued -= 1;
        }
        job();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::time::Duration;

    fn run_jobs(limit: u32, jobs: u32) -> (u32, Vec<u32>) {
        let pool = Pool::new(limit);
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
}
