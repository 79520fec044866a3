//! One generation's protocol state, owned by the dispatcher.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

use super::command::{CallRequest, InitRole};
pub(crate) use super::pending::{Pending, PendingKind};
use super::tombstones::Tombstones;
use crate::limits::MAX_OUTBOUND_BACKLOG_BYTES;
use crate::manifest::{ApiVersion, LocatedManifest};
use crate::model::call::CancelReason;
use crate::model::events::GenerationRef;
use crate::model::frontend::CancelFlag;
use crate::model::start::StartError;
use crate::model::start::StartupEvidence;
use crate::model::status::LifecycleState;
use crate::negotiation::Negotiated;
use crate::negotiation::ToolDefinition;
use crate::services::bound::{ServiceBindings, ServiceMethod};
use crate::services::presentation::{PresentationOwner, PresentationSnapshot};
use crate::services::{ApprovalTokens, ArtifactStore, PresentationThrottle, ResourceOwner};
use crate::transport::{
    ChildProcess, ConnId, FrameState, GenerationIo, OutboundFrame, ScratchDir, TrySendFrameError,
};
use crate::wire::codec::{Codec, CodecEncodeError};
use crate::wire::{RequestId, ResponseError};
use parking_lot::Mutex;
use serde_json::value::RawValue;
use serde_json::Value;

/// Why an `initialize` failed, as kept until the generation is gone.
pub(crate) enum FailedStart {
    /// The child went away (the reason); the error is completed with how it exited.
    Lost(String),
    /// The host refused the generation (its answer, a conflict, a timeout...).
    Refused(StartError),
}

/// A frontend's answer.
pub(crate) enum Answer {
    /// `{"confirmed": bool}`.
    Confirmed(bool),
    /// `{"value": string|null}`.
    Input(Option<String>),
    /// The -32800 cancellation error: the request's parent settled or its generation
    /// is going away.
    Cancelled,
}

/// What an extension-originated request asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ChildKind {
    /// `confirmation/request` (section 2.2).
    Confirmation,
    /// `input/request` (section 2.7).
    Input,
    /// A request for a bound service; `key` is what its kind's guard gave it to hold
    /// while its service works (the id a pending `shortcut/register` would admit).
    Service {
        method: ServiceMethod,
        key: Option<String>,
    },
    /// Answered off the dispatcher, on a thread of its own: by the embedder's broker
    /// (`secret/get`, `provider/credentials`) or by a runtime-served feature's writer.
    Brokered,
    /// A request answered by the outcome of a call the runtime makes for it (a
    /// feature's nested call), once that call was sent.
    Nested {
        call: Option<crate::model::call::CallId>,
    },
}

impl ChildKind {
    /// The answer when nobody can or will answer: a dropped confirmation is denied
    /// (section 2.2), unavailable input is `null` (section 2.7), and a service request
    /// gets the usual cancellation (-32800).
    pub fn dropped_answer(&self) -> Answer {
        match self {
            ChildKind::Confirmation => Answer::Confirmed(false),
            ChildKind::Input => Answer::Input(None),
            ChildKind::Service { .. } | ChildKind::Brokered | ChildKind::Nested { .. } => {
                Answer::Cancelled
            }
        }
    }
}

/// An extension-originated request the host has not answered yet.
pub(crate) struct ChildRequest {
    pub kind: ChildKind,
    /// The host request it belongs to (API 0.2+); its settlement cancels this one.
    pub parent: Option<u64>,
    /// Tells the frontend the answer is no longer wanted.
    pub cancelled: CancelFlag,
}

/// Where the generation is in its shutdown (section 1.8).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ShutdownStage {
    /// Not shutting down.
    None,
    /// The `shutdown` request is out; waiting for its acknowledgement.
    AwaitAck,
    /// Acknowledged or timed out; stdin closed; waiting for the process to exit.
    AwaitExit,
    /// The process group was killed; waiting to reap it.
    Killed,
}

/// One generation: a child process, its I/O threads and its protocol state.
pub(crate) struct Connection {
    pub conn: ConnId,
    pub source: GenerationRef,
    pub located: Arc<LocatedManifest>,
    pub api: ApiVersion,
    pub child: ChildProcess,
    pub io: GenerationIo,
    pub scratch: ScratchDir,
    pub frame_limit: Arc<AtomicUsize>,
    pub state: LifecycleState,
    pub stage: ShutdownStage,
    pub negotiated: Option<Arc<Negotiated>>,
    next_id: u64,
    pub pending: super::pending::PendingTable,
    /// Calls waiting for a concurrency slot, first come first served.
    pub queued: VecDeque<Box<CallRequest>>,
    /// Frames waiting for room in the writer queue.
    pub backlog: VecDeque<OutboundFrame>,
    /// Bytes of the frames in `backlog` that are not host requests: answers to the
    /// extension's requests and notifications. Host requests are bounded by the
    /// negotiated concurrency; these are bounded by holding the reader back.
    backlog_bytes: usize,
    pub tombstones: Tombstones,
    /// Outstanding extension-originated requests (at most 128, section 2).
    pub children: HashMap<RequestId, ChildRequest>,
    /// Every extension-originated id used by this generation (at most 65,536; ids are
    /// never reused within a generation, section 2).
    pub child_ids_used: HashSet<RequestId>,
    /// The ids of the last [`MAX_POST_MUTATION_IDS`](crate::limits::MAX_POST_MUTATION_IDS)
    /// `post_mutation` hooks sent to this generation, oldest first.
    pub recent_mutations: std::collections::VecDeque<String>,
    /// Lifecycle notification frames still subject to their 250 ms delivery deadline,
    /// by sequence.
    pub lifecycle_frames: HashMap<u64, Arc<FrameState>>,
    pub lifecycle_seq: u64,
    /// The owner triple issued in this generation's execution contexts (section 1.2).
    pub owner: ResourceOwner,
    /// Verified artifacts of this generation (section 2.8); `None` when the store could
    /// not be set up, in which case publication answers -32603. Shared with callers,
    /// who resolve media parts of tool results against it.
    pub artifacts: Option<Arc<Mutex<ArtifactStore>>>,
    /// Single-use approval tokens of this generation (section 2.9).
    pub approvals: Arc<Mutex<ApprovalTokens>>,
    /// The 32-per-second presentation throttle of this generation (section 2.5).
    pub presentation: PresentationThrottle<PresentationOwner, PresentationSnapshot>,
    /// The live tool catalog: the `initialize` catalog (epoch 0), replaced by accepted
    /// `tools/register` and `tools/unregister` mutations (sections 2.11, 2.12).
    pub catalog: Arc<Vec<ToolDefinition>>,
    /// The catalog epoch; 0 is the `initialize` catalog.
    pub catalog_revision: u64,
    /// How frames are encoded and decoded: canonical JSON on API 0.3, JSON-RPC otherwise.
    pub codec: Codec,
    /// The execution `context` of owner-scoped requests, built once.
    pub owned_context: EncodedContext,
    /// The execution `context` of process-scoped requests, built once.
    pub process_context: EncodedContext,
    pub reader_closed: bool,
    pub writer_failed: bool,
    pub last_error: Option<String>,
    /// The `shutdown` request was acknowledged.
    pub acknowledged: bool,
    /// The process group was killed before the child exited by itself.
    pub forced: bool,
    /// Sequence of the live exit-poll timer.
    pub poll_seq: u64,
    /// How long this generation has to answer `initialize`.
    pub startup_timeout: std::time::Duration,
    /// Stdout lines that were not JSON while initializing, and the first one's start.
    pub startup_noise: (u64, Option<String>),
    /// Every frame in and out goes to the `log` facade (the builder's `wire_trace`).
    pub wire_trace: Option<crate::model::trace::WireTraceSink>,
    /// Open API 0.3 provider streams.
    pub streams: super::streams::ProviderStreams,
    /// The services bound for this generation when it launched (its offer followed
    /// them).
    pub services: ServiceBindings,
    /// The host state of the service kinds that keep one (shortcuts, section 2.20).
    pub guards: super::guards::KindGuards,
    /// The state each runtime-served feature keeps for this generation.
    pub features: super::features::states::FeatureStates,
    /// Assistant-message deltas waiting to be batched into `message/updated`
    /// (section 1.11).
    pub messages: super::messages::batches::MessageBatches,
    /// An `initialize` that failed: reported once the child is reaped, so whoever
    /// started it sees the generation gone, and a lost child's start error carries
    /// its exit status ([`Connection::startup_evidence`]).
    pub failed_start: Option<(InitRole, FailedStart)>,
}

impl Connection {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        conn: ConnId,
        source: GenerationRef,
        located: LocatedManifest,
        child: ChildProcess,
        io: GenerationIo,
        scratch: ScratchDir,
        frame_limit: Arc<AtomicUsize>,
        owner: ResourceOwner,
    ) -> Connection {
        // Written reports are needed only while frames wait in the backlog.
        io.writer.report_written(false);
        let api = located.manifest.api_version;
        Connection {
            conn,
            source,
            located: Arc::new(located),
            api,
            child,
            io,
            scratch,
            frame_limit,
            state: LifecycleState::Initializing,
            stage: ShutdownStage::None,
            negotiated: None,
            next_id: 1,
            pending: Default::default(),
            queued: VecDeque::new(),
            backlog: VecDeque::new(),
            backlog_bytes: 0,
            tombstones: Tombstones::default(),
            children: HashMap::new(),
            child_ids_used: HashSet::new(),
            recent_mutations: std::collections::VecDeque::new(),
            lifecycle_frames: HashMap::new(),
            lifecycle_seq: 0,
            artifacts: ArtifactStore::new(owner.process_generation)
                .ok()
                .map(|store| Arc::new(Mutex::new(store))),
            owner,
            approvals: Arc::new(Mutex::new(ApprovalTokens::new())),
            presentation: PresentationThrottle::new(),
            catalog: Arc::new(Vec::new()),
            catalog_revision: 0,
            codec: Codec::for_api(api),
            owned_context: EncodedContext::none(),
            process_context: EncodedContext::none(),
            reader_closed: false,
            writer_failed: false,
            last_error: None,
            acknowledged: false,
            forced: false,
            poll_seq: 0,
            startup_timeout: crate::limits::STARTUP_TIMEOUT,
            startup_noise: (0, None),
            failed_start: None,
            streams: Default::default(),
            services: ServiceBindings::new(),
            guards: Default::default(),
            features: super::features::states::FeatureStates::new(format!(
                "res-{}-{}",
                conn.0,
                crate::hex::random(6).unwrap_or_default()
            )),
            messages: Default::default(),
            wire_trace: None,
        }
    }

    /// Removes an unanswered child request; a bound service's request gives its kind's
    /// guard back the key it held, unanswered (`super::guards`).
    pub fn remove_child(&mut self, id: &RequestId) -> Option<ChildRequest> {
        let child = self.children.remove(id)?;
        if let ChildKind::Service {
            method,
            key: Some(key),
        } = &child.kind
        {
            if let Some(guard) = self.guards.get_mut(method.kind()) {
                guard.settled(key.clone(), None);
            }
        }
        Some(child)
    }

    /// The negotiated features; none before `initialize` is answered.
    pub fn features(&self) -> crate::negotiation::FeatureSet {
        self.negotiated
            .as_ref()
            .map(|n| n.features)
            .unwrap_or_default()
    }

    /// The `parent_request_id` of an extension's request when it names a live host
    /// call: its owner is this generation's issued triple (section 2).
    pub fn live_parent(&self, params: &Value) -> Option<u64> {
        crate::services::parent_request_id(params)
            .ok()
            .filter(|id| self.pending.is_call(id))
    }

    /// The id the next host request will get: every id below it was issued.
    pub fn peek_next_request_id(&self) -> u64 {
        self.next_id
    }

    /// Allocates the next host request id of this generation (ids start at 1 and are
    /// never reused).
    pub fn next_request_id(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// Calls holding a concurrency slot: those in flight, and cancelled ones the
    /// extension has not settled yet.
    pub fn active(&self) -> usize {
        self.pending.calls() + self.tombstones.awaiting()
    }

    /// The most host requests that may hold a slot at once.
    pub fn max_active(&self) -> usize {
        match &self.negotiated {
            Some(n) => n.max_concurrent_requests as usize,
            None => 1,
        }
    }

    /// True when the transport can still carry frames both ways.
    pub fn transport_alive(&self) -> bool {
        !self.reader_closed && !self.writer_failed
    }

    /// The frame bound in force, LF included (section 1.1 limits; API 0.3 contract).
    pub fn limit(&self) -> usize {
        self.frame_limit.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Encodes a host request, whose params serialize to an object, with this
    /// generation's codec (see [`crate::wire::codec::Codec::encode_request_object`]).
    pub fn encode_request<P: serde::Serialize>(
        &self,
        id: u64,
        method: &str,
        params: &P,
    ) -> Result<Vec<u8>, CodecEncodeError> {
        self.codec
            .encode_request_object(&RequestId::Number(id), method, params, self.limit())
    }

    /// Encodes a notification with this generation's codec.
    pub fn encode_notification(
        &self,
        method: &str,
        params: &Value,
    ) -> Result<Vec<u8>, CodecEncodeError> {
        self.codec.encode_notification(method, params, self.limit())
    }

    /// Encodes the answer to an extension-originated request.
    pub fn encode_result(
        &self,
        id: &RequestId,
        result: &Value,
    ) -> Result<Vec<u8>, CodecEncodeError> {
        self.codec.encode_result(id, result, self.limit())
    }

    /// Encodes an error answer to an extension-originated request.
    /// What this generation showed of itself while starting: `exit_status` (when it
    /// was reaped), its stderr tail, and stdout lines that were not JSON.
    pub fn startup_evidence(&self, exit_status: Option<String>) -> StartupEvidence {
        let (non_json_lines, first_non_json) = self.startup_noise.clone();
        StartupEvidence {
            exit_status,
            non_json_lines,
            first_non_json,
            ..StartupEvidence::default()
        }
        .with_stderr(self.io.stderr_tail.snapshot())
    }

    /// On API 0.3 the message is the error table's, exactly ([`ResponseError::in_v0_3_table`]).
    pub fn encode_error(
        &self,
        id: &RequestId,
        error: &ResponseError,
    ) -> Result<Vec<u8>, CodecEncodeError> {
        self.codec
            .encode_error(id, &self.wire_error(error), self.limit())
    }

    /// Queues an error answer with `"id": null`, for a request whose id cannot be used;
    /// on API 0.3 with the error table's message.
    pub fn push_error_without_id(&mut self, error: &ResponseError) {
        let encoded = self
            .codec
            .encode_error_without_id(&self.wire_error(error), self.limit());
        if let Ok(bytes) = encoded {
            self.push_frame(OutboundFrame {
                bytes,
                state: None,
                wipe: false,
            });
        }
    }

    /// `error` as this generation's wire carries it: on API 0.3 with the error table's
    /// exact message ([`ResponseError::in_v0_3_table`]).
    fn wire_error<'e>(&self, error: &'e ResponseError) -> std::borrow::Cow<'e, ResponseError> {
        match self.api {
            ApiVersion::V0_3 => std::borrow::Cow::Owned(error.clone().in_v0_3_table()),
            _ => std::borrow::Cow::Borrowed(error),
        }
    }

    /// Registers host request `id` as pending and queues its frame; the frame can be
    /// skipped by cancellation until the writer starts it (section 1.9).
    pub fn send_request(&mut self, id: u64, kind: PendingKind, bytes: Vec<u8>) {
        let frame = FrameState::new();
        self.pending.insert(
            id,
            Pending {
                kind,
                frame: frame.clone(),
                last_progress: None,
            },
        );
        self.push_frame(OutboundFrame {
            bytes,
            state: Some(frame),
            wipe: false,
        });
    }

    /// Queues `$/cancelRequest` for host request `id` (section 1.9). API 0.1 has no
    /// cancellation notification, so nothing is sent there.
    pub fn send_cancel_notification(&mut self, id: u64, reason: CancelReason) {
        if self.api == ApiVersion::V0_1 || !self.transport_alive() {
            return;
        }
        let params = serde_json::json!({"id": id, "reason": reason.as_str()});
        if let Ok(bytes) = self.encode_notification("$/cancelRequest", &params) {
            self.push_frame(OutboundFrame {
                bytes,
                state: None,
                wipe: false,
            });
        }
    }

    /// True when the writer queue has room right now (nothing waits in the backlog).
    pub fn writer_has_room(&self) -> bool {
        !self.writer_failed
            && self.backlog.is_empty()
            && self.io.writer.queued() < self.io.writer.capacity()
    }

    /// Queues a frame for the writer. When its queue (of
    /// [`WRITER_QUEUE_FRAMES`](crate::limits::WRITER_QUEUE_FRAMES)) is
    /// full, the frame waits in the backlog, in order, and the writer is asked to report
    /// its progress so the backlog drains as room appears. Never blocks.
    pub fn push_frame(&mut self, frame: OutboundFrame) {
        if self.writer_failed {
            return;
        }
        if let Some(sink) = &self.wire_trace {
            trace_frame(
                sink,
                &self.source,
                crate::model::trace::WireDirection::ToExtension,
                &frame.bytes,
                frame.wipe,
            );
        }
        if !self.backlog.is_empty() {
            self.push_backlog(frame);
            return;
        }
        let frame = match self.io.writer.try_send(frame) {
            Ok(()) => return,
            Err(TrySendFrameError::Closed(_)) => {
                self.writer_failed = true;
                return;
            }
            Err(TrySendFrameError::Full(frame)) => frame,
        };
        // Ask for reports first, then look once more: room made after this point is
        // reported, so the backlog cannot stall.
        self.io.writer.report_written(true);
        match self.io.writer.try_send(frame) {
            Ok(()) => {}
            Err(TrySendFrameError::Full(frame)) => self.push_backlog(frame),
            Err(TrySendFrameError::Closed(_)) => self.writer_failed = true,
        }
    }

    /// Appends to the backlog; over [`MAX_OUTBOUND_BACKLOG_BYTES`] the reader is held
    /// back ([`crate::transport::gate`]): the extension is not read while it does not
    /// read.
    fn push_backlog(&mut self, frame: OutboundFrame) {
        self.backlog_bytes += unsolicited_bytes(&frame);
        self.backlog.push_back(frame);
        if self.backlog_bytes > MAX_OUTBOUND_BACKLOG_BYTES && !self.io.read_gate.is_held() {
            self.io.read_gate.hold(true);
        }
    }

    /// True while frames for the extension pile up unwritten: the backlog went over its
    /// bound and has not drained since. Notifications are refused meanwhile.
    pub fn outbound_full(&self) -> bool {
        self.io.read_gate.is_held()
    }

    /// The writer made room: move backlog frames into its queue; once the backlog is
    /// empty, progress reports are no longer needed.
    pub fn on_written(&mut self) {
        while let Some(frame) = self.backlog.pop_front() {
            let bytes = unsolicited_bytes(&frame);
            match self.io.writer.try_send(frame) {
                Ok(()) => self.backlog_bytes -= bytes,
                Err(TrySendFrameError::Full(frame)) => {
                    self.backlog.push_front(frame);
                    return;
                }
                Err(TrySendFrameError::Closed(_)) => {
                    self.writer_failed = true;
                    self.backlog.clear();
                    self.backlog_bytes = 0;
                    return;
                }
            }
        }
        self.io.writer.report_written(false);
        // Drained: read the extension again.
        if self.io.read_gate.is_held() {
            self.io.read_gate.hold(false);
        }
    }
}

/// The bytes of `frame` that count against [`MAX_OUTBOUND_BACKLOG_BYTES`]: all of an
/// answer's or a notification's, none of a host request's (it carries its frame state).
fn unsolicited_bytes(frame: &OutboundFrame) -> usize {
    match frame.state {
        Some(_) => 0,
        None => frame.bytes.len(),
    }
}

/// Hands one frame to the wire trace's `sink`; a frame that may carry a secret
/// (`secret`) is withheld.
pub(crate) fn trace_frame(
    sink: &crate::model::trace::WireTraceSink,
    source: &GenerationRef,
    direction: crate::model::trace::WireDirection,
    bytes: &[u8],
    secret: bool,
) {
    let text = (!secret).then(|| String::from_utf8_lossy(bytes));
    sink(&crate::model::trace::WireFrame {
        source,
        direction,
        at: std::time::Instant::now(),
        text: text.as_deref().map(|t| t.trim_end_matches('\n')),
    });
}

/// An execution context encoded once per generation: every request of the generation
/// carries the same one, so its JSON text is written into each frame as it is.
#[derive(Debug)]
pub(crate) struct EncodedContext {
    pub(super) json: Box<RawValue>,
}

impl EncodedContext {
    pub(super) fn new(context: Value) -> EncodedContext {
        let json = serde_json::value::to_raw_value(&context)
            .expect("a Value with string keys always encodes");
        EncodedContext { json }
    }

    /// Before `initialize` there is no context yet.
    pub fn none() -> EncodedContext {
        EncodedContext::new(Value::Null)
    }
}
