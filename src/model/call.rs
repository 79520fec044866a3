//! Calls into an extension: options, the pending-call handle and typed errors.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crossbeam_channel::Sender;
use serde_json::Value;

use super::progress::Progress;
use super::status::LifecycleState;
use crate::negotiation::Negotiated;
use crate::validate::ResultError;
use crate::wire::ResponseError;

/// Host-wide identity of one call, used to cancel it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CallId(pub u64);

/// Options for one call.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct CallOptions {
    /// How long the host waits for the answer before cancelling the request with
    /// reason `"timeout"`. `None` uses the method's default deadline
    /// ([`crate::limits::REQUEST_DEADLINE`], or [`crate::limits::MENU_COLLECT_DEADLINE`]
    /// for `menu/collect`).
    pub deadline: Option<Duration>,
    /// Where this call's accepted `$/progress` events go (section 2.6), besides the
    /// host events. Delivery never blocks: when the channel is full, events are dropped.
    pub progress: Option<Sender<Progress>>,
}

impl CallOptions {
    /// Options with an explicit deadline.
    pub fn with_deadline(deadline: Duration) -> CallOptions {
        CallOptions {
            deadline: Some(deadline),
            progress: None,
        }
    }

    /// Sends this call's progress events to `sink` as well.
    pub fn with_progress(mut self, sink: Sender<Progress>) -> CallOptions {
        self.progress = Some(sink);
        self
    }
}

/// Why a request was cancelled (the `reason` of `$/cancelRequest`, section 1.9).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CancelReason {
    /// The caller cancelled it.
    User,
    /// Its deadline passed.
    Timeout,
    /// The caller dropped its handle without waiting.
    Dropped,
    /// The extension or the host is shutting down.
    Shutdown,
}

impl CancelReason {
    /// The reason as sent on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            CancelReason::User => "user",
            CancelReason::Timeout => "timeout",
            CancelReason::Dropped => "dropped",
            CancelReason::Shutdown => "shutdown",
        }
    }
}

/// The scope an awaited session-operation hook runs in (section 1.4b): the runtime
/// mints the invocation's `session_leaf` grant in it, fenced by this activation epoch,
/// the generation's owner and a fresh `operation_id`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LeafScope {
    /// The session's activation epoch: bump it when the application is replaced.
    pub activation_epoch: u64,
    /// The session head the hook observes, if any (`expected_head`).
    pub expected_head: Option<String>,
}

/// Why a call failed. Each failure concerns that call only.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum CallError {
    /// No extension of that name was started on this host.
    NotStarted {
        /// The name asked for.
        extension: String,
    },
    /// The extension is not accepting calls in its current state.
    NotReady {
        /// The extension.
        extension: String,
        /// Its state.
        state: LifecycleState,
    },
    /// The extension did not declare the tool, command, hook or renderer called.
    NotDeclared {
        /// `"tool"`, `"command"`, `"hook"`, `"renderer"`, `"surface"`, `"menu"`, or
        /// `"feature"` for a call the extension's negotiated features do not allow
        /// (a model-turn hook without `session_entries`, section 1.4b).
        kind: &'static str,
        /// The name asked for.
        name: String,
    },
    /// The extension answered with a JSON-RPC error.
    Remote(ResponseError),
    /// The call was cancelled before it settled.
    Cancelled {
        /// Why.
        reason: CancelReason,
    },
    /// The deadline passed; the request was cancelled with reason `"timeout"`.
    DeadlineExceeded {
        /// The deadline that applied.
        after: Duration,
    },
    /// The connection to the extension was lost before the answer came.
    TransportLost {
        /// What happened (EOF, broken pipe, process exit).
        reason: String,
    },
    /// The answer broke a protocol rule; nothing else is affected.
    InvalidResult(ResultError),
    /// The extension answered with a frame the host refuses before reading it as a
    /// message (not canonical on API 0.3, over the frame bound, or breaking an envelope
    /// rule); its id could still be read, so the call failed at once.
    RefusedResponse {
        /// What is wrong with the frame.
        reason: String,
    },
    /// The request could not be encoded within the frame bound.
    RequestTooLarge {
        /// The encoded size, LF included.
        bytes: usize,
        /// The bound.
        limit: usize,
    },
    /// Too many calls are already waiting for a concurrency slot on this extension.
    Overloaded {
        /// Calls waiting.
        queued: usize,
    },
    /// The request could not be encoded (for example a map with non-string keys).
    InvalidRequest {
        /// Why.
        reason: String,
    },
    /// The extension is parked: it will not restart until a manual reload.
    Parked {
        /// The extension.
        extension: String,
        /// Why.
        reason: crate::supervisor::ParkReason,
    },
    /// The person declined a destructive menu action, or nobody could be asked; nothing
    /// was sent (section 1.6b).
    Declined {
        /// The action's label.
        action: String,
    },
    /// An input resource of a `tool/call` was refused when the call was to be sent
    /// (section 2.26): unknown to the extension's current generation, of another type,
    /// or pinned by another running call. Nothing was sent.
    ResourceRefused {
        /// The descriptor's input path, such as `/circuit`.
        path: String,
        /// Why, as the protocol names it.
        error: crate::features::resources::ResourceError,
    },
    /// The host is shut down or shutting down.
    HostShutDown,
}

impl CallError {
    /// The JSON-RPC error code that describes this failure, where one applies.
    pub fn code(&self) -> Option<i64> {
        use crate::wire::codes;
        match self {
            CallError::Remote(e) => Some(e.code),
            CallError::Cancelled { .. } | CallError::DeadlineExceeded { .. } => {
                Some(codes::REQUEST_CANCELLED)
            }
            CallError::NotDeclared { .. } => Some(codes::METHOD_NOT_FOUND),
            CallError::InvalidResult(_) => Some(codes::INVALID_PARAMS),
            CallError::RefusedResponse { .. } => Some(codes::INVALID_REQUEST),
            _ => None,
        }
    }
}

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CallError::NotStarted { extension } => {
                write!(f, "extension `{extension}` is not started")
            }
            CallError::NotReady { extension, state } => {
                write!(f, "extension `{extension}` is {state}, not ready")
            }
            CallError::NotDeclared { kind, name } => {
                write!(f, "the extension declares no {kind} `{name}`")
            }
            CallError::Remote(e) => write!(f, "the extension answered with an error: {e}"),
            CallError::Cancelled { reason } => write!(f, "cancelled ({})", reason.as_str()),
            CallError::DeadlineExceeded { after } => {
                write!(
                    f,
                    "no answer within {} ms; the request was cancelled",
                    after.as_millis()
                )
            }
            CallError::TransportLost { reason } => write!(f, "connection lost: {reason}"),
            CallError::InvalidResult(e) => write!(f, "invalid result: {e}"),
            CallError::RefusedResponse { reason } => {
                write!(f, "the extension's answer was refused: {reason}")
            }
            CallError::RequestTooLarge { bytes, limit } => {
                write!(
                    f,
                    "request of {bytes} bytes exceeds the {limit}-byte frame bound"
                )
            }
            CallError::Overloaded { queued } => {
                write!(f, "{queued} calls are already waiting for this extension")
            }
            CallError::InvalidRequest { reason } => {
                write!(f, "cannot encode the request: {reason}")
            }
            CallError::Parked { extension, reason } => {
                write!(f, "extension `{extension}` is parked: {reason}")
            }
            CallError::Declined { action } => {
                write!(
                    f,
                    "the destructive action \u{201c}{action}\u{201d} was not confirmed"
                )
            }
            CallError::ResourceRefused { path, error } => {
                write!(f, "the input resource at {path} was refused: {error}")
            }
            CallError::HostShutDown => f.write_str("the host is shut down"),
        }
    }
}

impl std::error::Error for CallError {}

/// An extension's successful answer to a call as it arrives on
/// [`PendingCall::answer`](crate::host::PendingCall::answer), before the call's own validation and conversion; only
/// [`PendingCall::settle`](crate::host::PendingCall::settle) opens it.
#[derive(Clone, Debug)]
pub struct RawResult {
    /// The `result` member.
    pub(crate) value: Value,
    /// The negotiation of the generation that answered.
    pub(crate) negotiated: Arc<Negotiated>,
    /// The generation's live tool catalog when the answer arrived.
    pub(crate) tools: Arc<Vec<crate::negotiation::ToolDefinition>>,
    /// What media parts resolve against; `None` unless the generation negotiated
    /// `artifacts` (every media part is then refused).
    pub(crate) media: Option<MediaScope>,
    /// What the blobs its diagnostics name resolve against; `None` unless the
    /// generation negotiated `bulk_objects_v1` (every blob is then unknown).
    pub(crate) bulk: Option<BulkScope>,
}

impl RawResult {
    /// The answer `value` of a generation that negotiated `negotiated`, with its live
    /// catalog `tools` and where its media parts resolve; the runtime-served features
    /// add their scopes.
    pub(crate) fn new(
        value: Value,
        negotiated: Arc<Negotiated>,
        tools: Arc<Vec<crate::negotiation::ToolDefinition>>,
        media: Option<MediaScope>,
    ) -> RawResult {
        RawResult {
            value,
            negotiated,
            tools,
            media,
            bulk: None,
        }
    }
}

/// The bulk objects a result's diagnostics may name (section 2.27): the owner's
/// exported blobs, and the blobs this call committed that its structured content
/// publishes (a diagnostic alone never publishes one).
#[derive(Clone, Debug)]
pub(crate) struct BulkScope {
    /// The host's bulk store.
    pub store: std::sync::Arc<crate::features::bulk::store::BulkStore>,
    /// The answering generation.
    pub conn: crate::transport::ConnId,
    /// The call's host request id.
    pub call: u64,
    /// The owner's session.
    pub owner: String,
}

/// [`BulkScope`] for one result: the tokens its structured content carries.
struct ResultBlobs<'a> {
    scope: &'a BulkScope,
    published: Vec<String>,
}

impl crate::validate::diagnostics::BlobResolver for ResultBlobs<'_> {
    fn blob(&self, id: &str) -> Option<crate::validate::diagnostics::BlobStanding> {
        use crate::validate::diagnostics::BlobStanding;
        match self
            .scope
            .store
            .standing(self.scope.conn, self.scope.call, &self.scope.owner, id)?
        {
            BlobStanding::Provisional if !self.published.iter().any(|t| t == id) => None,
            standing => Some(standing),
        }
    }
}

impl RawResult {
    /// The answer to a `tool/call` of `tool`, validated as section 1.2 says: against
    /// the tool's output schema in the catalog the answer arrived with, and with media
    /// parts resolved only against this generation's artifacts for the owner the
    /// request carried.
    pub(crate) fn tool_output(&self, tool: &str) -> Result<crate::validate::ToolResult, CallError> {
        use crate::validate::{MediaPolicy, OutputSchema, StructuredViolation, ToolResultContext};
        let definition = self.tools.iter().find(|t| t.name == tool);
        let compiled = definition.and_then(|t| t.compiled_output_schema.clone());
        let check = |value: &Value| match &compiled {
            Some(schema) => schema.0.validate(value).map_err(|e| StructuredViolation {
                path: e.instance_path.clone(),
                message: e.to_string(),
            }),
            None => Ok(()),
        };
        let mut context = ToolResultContext::new(self.negotiated.api_version);
        if definition.is_some_and(|t| t.output_schema.is_some()) {
            context.output_schema = OutputSchema::Declared {
                validator: Some(&check),
            };
        }
        let store = self
            .media
            .as_ref()
            .map(|media| (media.store.lock(), &media.owner));
        let view = store.as_ref().map(|(store, owner)| store.owner_view(owner));
        if let Some(view) = &view {
            context.media = MediaPolicy::Artifacts(view);
        }
        let blobs = self.bulk.as_ref().map(|scope| ResultBlobs {
            scope,
            published: self
                .value
                .get("structured_content")
                .map(crate::features::bulk::blob_tokens)
                .unwrap_or_default(),
        });
        let resolver = blobs
            .as_ref()
            .map(|b| b as &dyn crate::validate::diagnostics::BlobResolver);
        let result =
            crate::validate::tool_result::tool_output_with_blobs(&self.value, &context, resolver)
                .map_err(CallError::InvalidResult)?;
        // Every BlobRef a successful result carries names a blob the host holds, of
        // its metadata, that the call published or its owner exported (section 2.27).
        if let (Some(scope), false) = (&self.bulk, result.is_error) {
            let structured = result.structured_content.as_ref().unwrap_or(&Value::Null);
            scope
                .store
                .result_blobs(scope.conn, scope.call, &scope.owner, structured)
                .map_err(|why| {
                    CallError::InvalidResult(crate::validate::ResultError::new(
                        "structured_content",
                        crate::validate::ResultErrorKind::Resource { reason: why },
                    ))
                })?;
        }
        Ok(result)
    }
}

/// The artifacts a result's media parts may name (section 1.2): the answering
/// generation's store, seen by the owner triple the request carried.
#[derive(Clone, Debug)]
pub(crate) struct MediaScope {
    /// The generation's verified artifacts.
    pub store: Arc<parking_lot::Mutex<crate::services::ArtifactStore>>,
    /// The owner triple the request carried.
    pub owner: crate::services::ResourceOwner,
}

/// What arrives on [`PendingCall::answer`](crate::host::PendingCall::answer): the extension's answer, or why the call
/// failed without one.
pub type CallReply = Result<RawResult, CallError>;
