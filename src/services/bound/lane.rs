//! The serial lane: the requests of the [`Lane::Serial`](super::Lane::Serial) kinds
//! (active-session control and compaction, section 2.21b) reach their service one at a
//! time, in the order the dispatcher admitted them, through one bounded queue.
//!
//! The dispatcher enqueues on its own thread (so the queue's order is the admission
//! order) and never waits: a full queue, or no worker thread, refuses the request at
//! once with -32012. One worker per lane hands each request to its service and waits
//! until the reply was sent (or dropped) before it starts the next, so an idle wait
//! never overtakes an earlier mutation and no request is answered before the ones
//! before it completed. A request cancelled while it waited (its parent settled, the
//! extension cancelled it, its generation ended: the activation fence) never reaches
//! the service; one cancelled while it runs frees the lane at once, since the extension
//! already has its answer.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender, TrySendError};
use parking_lot::Mutex;

use super::call::{RawReply, ServiceCall};
use super::methods::ServiceRequest;
use super::refusal::Refusal;
use super::route::RawService;
use crate::limits::{MAX_SESSION_OPERATIONS_QUEUED, SESSION_QUEUE_POLL};

/// One request waiting in the lane.
struct Job {
    service: Arc<dyn RawService>,
    call: ServiceCall,
    request: ServiceRequest,
    reply: RawReply,
}

/// The most requests one lane holds: the one that runs and those waiting behind it.
const HELD: usize = MAX_SESSION_OPERATIONS_QUEUED + 1;

/// One bounded, order-preserving queue and its worker, started on first use.
pub(crate) struct SerialLane {
    jobs: Sender<Job>,
    /// The queue's receiving end until the worker takes it.
    idle: Mutex<Option<Receiver<Job>>>,
    /// Requests enqueued and not yet finished (at most [`HELD`]); counted here rather
    /// than by the channel so that the bound does not depend on when the worker dequeues.
    held: Arc<AtomicUsize>,
}

impl Default for SerialLane {
    fn default() -> SerialLane {
        let (jobs, receiver) = crossbeam_channel::bounded(HELD);
        SerialLane {
            jobs,
            idle: Mutex::new(Some(receiver)),
            held: Arc::new(AtomicUsize::new(0)),
        }
    }
}

impl SerialLane {
    /// Queues one request, or refuses it at once.
    fn enqueue(&self, job: Job) {
        if let Some(receiver) = self.idle.lock().take() {
            let held = self.held.clone();
            let started = std::thread::Builder::new()
                .name("octet-session-lane".into())
                .spawn(move || work(receiver, &held));
            if let Err(error) = started {
                return job.reply.refuse(
                    Refusal::ResourceExhausted
                        .because(format!("no worker for the host's lifecycle queue: {error}")),
                );
            }
        }
        let admitted = self
            .held
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |held| {
                (held < HELD).then_some(held + 1)
            })
            .is_ok();
        let sent = match admitted {
            true => self.jobs.try_send(job),
            false => Err(TrySendError::Full(job)),
        };
        if sent.is_err() && admitted {
            self.held.fetch_sub(1, Ordering::AcqRel);
        }
        match sent {
            Ok(()) => {}
            Err(TrySendError::Full(job)) => {
                job.reply.refuse(Refusal::ResourceExhausted.because(format!(
                    "the host's lifecycle queue is full: at most {MAX_SESSION_OPERATIONS_QUEUED} \
                     session operations may wait; retry once earlier ones settled"
                )))
            }
            Err(TrySendError::Disconnected(job)) => job
                .reply
                .refuse(Refusal::ResourceExhausted.because("the host's lifecycle queue stopped")),
        }
    }
}

/// The worker: one request at a time, each to its end.
fn work(jobs: Receiver<Job>, held: &AtomicUsize) {
    for job in jobs {
        run(job);
        held.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Runs one request to its end: until its reply was sent, or it was cancelled.
fn run(job: Job) {
    {
        let Job {
            service,
            call,
            request,
            mut reply,
        } = job;
        if reply.is_cancelled() {
            // The extension was answered when it was cancelled; the service never
            // hears of it.
            reply.discard();
            return;
        }
        let (sent, settled) = crossbeam_channel::bounded::<()>(0);
        reply.notify_when_sent(sent);
        let cancelled = call.cancelled.clone();
        service.serve(call, request, reply);
        loop {
            match settled.recv_timeout(SESSION_QUEUE_POLL) {
                Err(RecvTimeoutError::Timeout) if !cancelled.is_cancelled() => continue,
                _ => break,
            }
        }
    }
}

/// A serial kind's service behind its lane.
pub(crate) struct Serial {
    pub lane: Arc<SerialLane>,
    pub service: Arc<dyn RawService>,
}

impl RawService for Serial {
    fn serve(&self, call: ServiceCall, request: ServiceRequest, reply: RawReply) {
        self.lane.enqueue(Job {
            service: self.service.clone(),
            call,
            request,
            reply,
        });
    }

    fn inline(&self) -> bool {
        true
    }
}
