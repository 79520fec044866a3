//! State shared by the reader, the workers and every [`Context`](crate::sdk::Context):
//! the writer handle, the active host requests and the pending child requests.

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{bounded, Receiver, Sender};
use parking_lot::{Condvar, Mutex};
use serde::Serialize;
use serde_json::Value;

pub(crate) use super::diagnostic::diagnostic;
use super::writer::WriterHandle;
use crate::limits::{MAX_CHILD_IDS_PER_GENERATION, MAX_OUTSTANDING_CHILD_REQUESTS};
use crate::manifest::ApiVersion;
use crate::sdk::cancel::CancellationToken;
use crate::sdk::error::ChildRequestError;
use crate::wire::codec::{Codec, CodecEncodeError};
use crate::wire::{codes, RequestId, Response, ResponseError};

/// What initialization settled; fixed for the rest of the process.
#[derive(Debug)]
pub(crate) struct Session {
    /// The API version spoken.
    pub(crate) api_version: ApiVersion,
    /// The negotiated features (empty on API 0.1); on API 0.3 the selected contract
    /// capabilities.
    pub(crate) features: BTreeSet<String>,
    /// API 0.3: the selected contract methods, the only ones that may be sent either
    /// way; `None` on the other versions, which have no such list.
    pub(crate) contract_methods: Option<BTreeSet<String>>,
    /// API 0.3: the selected `max_frame_bytes` (LF excluded); `None` otherwise.
    pub(crate) max_frame_bytes: Option<usize>,
    /// Host requests handled at once (1 on API 0.1).
    pub(crate) max_concurrent_requests: u32,
    /// The `workspace` member of `initialize`.
    pub(crate) workspace: Option<String>,
    /// Lifecycle methods delivered to the lifecycle handler (empty: none).
    pub(crate) lifecycle_events: Vec<String>,
    /// The tool catalog's epochs, when `dynamic_tools` was negotiated (section 2.12).
    pub(crate) catalog: Option<super::catalog::CatalogEpochs>,
    /// `protocol.bulk_objects_v1.transfer_directory` of the offer (section 2.27).
    pub(crate) transfer_directory: Option<std::path::PathBuf>,
}

impl Session {
    pub(crate) fn has_feature(&self, name: &str) -> bool {
        self.features.contains(name)
    }

    /// Whether `method` may be sent, either way: on API 0.3 only when the contract
    /// selected it, otherwise always (other rules still apply).
    pub(crate) fn allows(&self, method: &str) -> bool {
        self.contract_methods
            .as_ref()
            .is_none_or(|methods| methods.contains(method))
    }
}

/// A host request being handled.
#[derive(Debug)]
pub(crate) struct ActiveRequest {
    /// The host's id.
    pub(crate) id: RequestId,
    /// Set by `$/cancelRequest` for this id, or when the connection closes.
    pub(crate) token: CancellationToken,
    /// The last `$/progress` sequence number used.
    sequence: AtomicU64,
    /// Set once the response is queued: no more progress for this request.
    settled: AtomicBool,
    /// The `session_leaf` grant not yet spent, for a session-operation `hook/run`
    /// (section 1.4b): `{grant_id, activation_epoch, operation_id}`.
    pub(crate) session_leaf: Mutex<Option<serde_json::Value>>,
    /// Work the handler deferred until its reply was written (`Context::compact`): each
    /// runs with `true` after a successful reply, `false` after an error or cancellation.
    deferred: Mutex<Deferrals>,
}

/// Work deferred until a handler's reply was written.
pub(crate) type Deferred = Box<dyn FnOnce(bool) + Send>;

/// The work one request deferred, in order.
#[derive(Default)]
struct Deferrals(Vec<Deferred>);

impl std::fmt::Debug for Deferrals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} deferred", self.0.len())
    }
}

impl ActiveRequest {
    pub(crate) fn new(id: RequestId) -> ActiveRequest {
        ActiveRequest {
            id,
            token: CancellationToken::new(),
            sequence: AtomicU64::new(0),
            settled: AtomicBool::new(false),
            deferred: Mutex::new(Deferrals::default()),
            session_leaf: Mutex::new(None),
        }
    }

    /// Defers `work` until the reply was written; false once it was (too late).
    pub(crate) fn defer(&self, work: Deferred) -> bool {
        let mut deferred = self.deferred.lock();
        if self.is_settled() {
            return false;
        }
        deferred.0.push(work);
        true
    }

    /// The next strictly increasing progress sequence number, starting at 1.
    pub(crate) fn next_sequence(&self) -> u64 {
        self.sequence.fetch_add(1, Ordering::Relaxed) + 1
    }

    pub(crate) fn is_settled(&self) -> bool {
        self.settled.load(Ordering::Acquire)
    }
}

/// The answer a waiting handler receives for its child request.
pub(crate) type ChildOutcome = Result<Value, ChildRequestError>;

#[derive(Default)]
struct PendingChildren {
    /// Outstanding child requests by id.
    waiters: HashMap<RequestId, Sender<ChildOutcome>>,
    /// Child ids issued so far.
    issued: u64,
    /// The connection ended: no new child requests.
    closed: bool,
}

/// How outbound frames are encoded: the codec and the frame limit (LF included).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Wire {
    pub(crate) codec: Codec,
    pub(crate) limit: usize,
}

/// The shared state of one connection.
pub(crate) struct Shared {
    writer: WriterHandle,
    /// Fixed before `initialize` is answered, except that API 0.3 lowers the limit to
    /// the selected `max_frame_bytes` once the answer is queued.
    wire: Mutex<Wire>,
    active: Mutex<HashMap<RequestId, Arc<ActiveRequest>>>,
    /// Requests handed to workers whose response is not queued yet.
    unanswered: Mutex<usize>,
    /// Signalled whenever `unanswered` drops.
    answered: Condvar,
    pending: Mutex<PendingChildren>,
}

impl Shared {
    pub(crate) fn new(writer: WriterHandle, wire: Wire) -> Shared {
        Shared {
            writer,
            wire: Mutex::new(wire),
            active: Mutex::new(HashMap::new()),
            unanswered: Mutex::new(0),
            answered: Condvar::new(),
            pending: Mutex::new(PendingChildren::default()),
        }
    }

    /// How frames are encoded now.
    pub(crate) fn wire(&self) -> Wire {
        *self.wire.lock()
    }

    /// Changes how frames are encoded from now on.
    pub(crate) fn set_wire(&self, wire: Wire) {
        *self.wire.lock() = wire;
    }

    /// Encodes a request frame with the connection's codec and limit.
    pub(crate) fn encode_request(
        &self,
        id: &RequestId,
        method: &str,
        params: &Value,
    ) -> Result<Vec<u8>, CodecEncodeError> {
        let wire = self.wire();
        wire.codec.encode_request(id, method, params, wire.limit)
    }

    /// Answers `id` with `result`; a result that cannot be encoded (too large for one
    /// frame, or on API 0.3 without a canonical form) becomes -32603.
    pub(crate) fn send_result(&self, id: &RequestId, result: &Value) {
        let wire = self.wire();
        match wire.codec.encode_result(id, result, wire.limit) {
            Ok(frame) => {
                self.writer.send(frame);
            }
            Err(e) => {
                let error = ResponseError::new(
                    codes::INTERNAL_ERROR,
                    format!("the result cannot be sent: {e}"),
                );
                self.send_error(id, &error);
            }
        }
    }

    /// Answers `id` with an error.
    pub(crate) fn send_error(&self, id: &RequestId, error: &ResponseError) {
        let wire = self.wire();
        match wire.codec.encode_error(id, error, wire.limit) {
            Ok(frame) => {
                self.writer.send(frame);
            }
            Err(e) => diagnostic(format_args!("cannot send the error for request {id}: {e}")),
        }
    }

    /// Answers a frame whose id could not be read with an error whose id is `null`.
    pub(crate) fn send_error_without_id(&self, error: &ResponseError) {
        let wire = self.wire();
        match wire.codec.encode_error_without_id(error, wire.limit) {
            Ok(frame) => {
                self.writer.send(frame);
            }
            Err(e) => diagnostic(format_args!("cannot send an error without id: {e}")),
        }
    }

    /// Sends a notification; false when it cannot be encoded into a frame or the
    /// writer is gone.
    pub(crate) fn send_notification<P: Serialize>(&self, method: &str, params: &P) -> bool {
        let wire = self.wire();
        let encoded = serde_json::to_value(params)
            .map_err(CodecEncodeError::Json)
            .and_then(|params| wire.codec.encode_notification(method, &params, wire.limit));
        match encoded {
            Ok(frame) => self.writer.send(frame),
            Err(e) => {
                diagnostic(format_args!("dropping {method} notification: {e}"));
                false
            }
        }
    }

    /// Records a host request as active; false if its id is already active.
    pub(crate) fn register_active(&self, request: Arc<ActiveRequest>) -> bool {
        let mut active = self.active.lock();
        if active.contains_key(&request.id) {
            return false;
        }
        active.insert(request.id.clone(), request);
        *self.unanswered.lock() += 1;
        true
    }

    /// Answers an active host request: it is forgotten first (a late
    /// `$/cancelRequest` finds nothing; the host may reuse the id once answered), then
    /// the response is queued.
    pub(crate) fn answer_active(
        &self,
        request: &ActiveRequest,
        outcome: Result<Value, ResponseError>,
    ) {
        let deferred = {
            let mut deferred = request.deferred.lock();
            request.settled.store(true, Ordering::Release);
            std::mem::take(&mut deferred.0)
        };
        self.active.lock().remove(&request.id);
        let succeeded = outcome.is_ok();
        match outcome {
            Ok(result) => self.send_result(&request.id, &result),
            Err(error) => self.send_error(&request.id, &error),
        }
        *self.unanswered.lock() -= 1;
        self.answered.notify_all();
        // The reply is queued ahead of anything the deferred work writes, so the host
        // reads the parent's settlement first (section 2.21c).
        if !deferred.is_empty() {
            let spawned = std::thread::Builder::new()
                .name("octet-sdk-deferred".into())
                .spawn(move || deferred.into_iter().for_each(|work| work(succeeded)));
            if let Err(error) = spawned {
                super::diagnostic::diagnostic(format_args!(
                    "deferred work after a reply was dropped: no thread ({error})"
                ));
            }
        }
    }

    /// `$/cancelRequest`: cancels an active host request or a pending child request.
    pub(crate) fn cancel(&self, id: &RequestId) {
        if let Some(request) = self.active.lock().get(id) {
            request.token.cancel();
            return;
        }
        if let Some(waiter) = self.pending.lock().waiters.remove(id) {
            // The waiter may have given up already; nothing else to do then.
            let _ = waiter.send(Err(ChildRequestError::Cancelled));
        }
    }

    /// Reserves an id for a child request and a channel for its answer.
    pub(crate) fn begin_child(
        &self,
    ) -> Result<(RequestId, Receiver<ChildOutcome>), ChildRequestError> {
        let mut pending = self.pending.lock();
        if pending.closed {
            return Err(ChildRequestError::Closed);
        }
        if pending.waiters.len() >= MAX_OUTSTANDING_CHILD_REQUESTS {
            return Err(ChildRequestError::Invalid("128 outstanding child requests"));
        }
        if pending.issued >= MAX_CHILD_IDS_PER_GENERATION as u64 {
            return Err(ChildRequestError::Invalid(
                "65,536 child request ids per generation",
            ));
        }
        pending.issued += 1;
        let id = RequestId::String(format!("sdk-{}", pending.issued));
        let (tx, rx) = bounded(1);
        pending.waiters.insert(id.clone(), tx);
        Ok((id, rx))
    }

    /// Ends a pending child request with `error` (its answer was unusable); false when
    /// no child request has that id.
    pub(crate) fn fail_child(&self, id: &RequestId, error: ChildRequestError) -> bool {
        let waiter = self.pending.lock().waiters.remove(id);
        match waiter {
            Some(waiter) => {
                let _ = waiter.send(Err(error));
                true
            }
            None => false,
        }
    }

    /// Forgets a child request whose waiter gave up.
    pub(crate) fn abandon_child(&self, id: &RequestId) {
        self.pending.lock().waiters.remove(id);
    }

    /// Queues a complete frame for the writer; false when the writer is gone.
    pub(crate) fn send_frame(&self, frame: Vec<u8>) -> bool {
        self.writer.send(frame)
    }

    /// Routes the host's answer to the handler waiting for it.
    pub(crate) fn resolve_child(&self, response: Response) {
        let waiter = self.pending.lock().waiters.remove(&response.id);
        match waiter {
            Some(waiter) => {
                let _ = waiter.send(response.outcome.map_err(ChildRequestError::Host));
            }
            None => diagnostic(format_args!(
                "ignoring a response to unknown request id {}",
                response.id
            )),
        }
    }

    /// Ends the connection: fails every pending child request, cancels every active
    /// host request, gives their handlers up to `settle` to answer, and asks the writer
    /// to finish the frames queued by then within `flush`. Returns the flush deadline.
    pub(crate) fn close(&self, settle: Duration, flush: Duration) -> Instant {
        {
            let mut pending = self.pending.lock();
            pending.closed = true;
            for (_, waiter) in pending.waiters.drain() {
                let _ = waiter.send(Err(ChildRequestError::Closed));
            }
        }
        for request in self.active.lock().values() {
            request.token.cancel();
        }
        let deadline = Instant::now() + settle;
        let mut unanswered = self.unanswered.lock();
        while *unanswered > 0 {
            if self
                .answered
                .wait_until(&mut unanswered, deadline)
                .timed_out()
            {
                break;
            }
        }
        drop(unanswered);
        let flush_deadline = Instant::now() + flush;
        self.writer.finish(flush_deadline);
        flush_deadline
    }
}
