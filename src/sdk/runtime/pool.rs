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
