//! What a handler can see and do while it runs: its request, cancellation, progress,
//! notifications, contributions and blocking round trips to the host.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use base64::Engine;
use crossbeam_channel::{never, select};
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};

pub use super::cancel::CancellationToken;
use super::error::{ChildRequestError, HandlerError};
use super::features::FEATURE_REQUEST_PROGRESS;
use super::output::{
    ContextContribution, ExtensionNotification, NotificationLevel, StatusContribution,
};
use super::request::{OutputStream, ResourceOwner};
use super::runtime::catalog;
use super::runtime::state::{diagnostic, ActiveRequest, Session, Shared};
use crate::limits::{MAX_INPUT_PROMPT_BYTES, PROGRESS_OUTPUT_CHUNK_BYTES};
use crate::manifest::ApiVersion;
use crate::wire::codec::CodecEncodeError;
use crate::wire::RequestId;

/// The handler's view of its request and of the connection. Cheap to clone; a clone
/// may be kept by a background thread (progress stops once the request settled).
#[derive(Clone)]
pub struct Context {
    shared: Arc<Shared>,
    session: Arc<Session>,
    request: Option<Arc<ActiveRequest>>,
    raw: Arc<RawContext>,
}

/// A request's `context` params member, parsed when a handler first reads it: most
/// never do, and parsing it was the larger part of the SDK's work on a `tool/call`
/// (`wire::deferred`).
struct RawContext {
    /// The member as the host sent it, not yet parsed.
    text: Option<Box<RawValue>>,
    parsed: OnceLock<Value>,
}

impl RawContext {
    fn value(&self) -> &Value {
        self.parsed.get_or_init(|| {
            let Some(text) = &self.text else {
                return Value::Null;
            };
            serde_json::from_str(text.get()).unwrap_or_else(|e| {
                diagnostic(format_args!(
                    "reading the request's context as null: it is JSON that serde_json \
                     does not take ({e})"
                ));
                Value::Null
            })
        })
    }
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context")
            .field("request_id", &self.request_id())
            .field("api_version", &self.session.api_version)
            .field("raw_context", self.raw_context())
            .finish_non_exhaustive()
    }
}

impl Context {
    pub(crate) fn new(
        shared: Arc<Shared>,
        session: Arc<Session>,
        request: Option<Arc<ActiveRequest>>,
        raw: Value,
    ) -> Context {
        Context {
            shared,
            session,
            request,
            raw: Arc::new(RawContext {
                text: None,
                parsed: OnceLock::from(raw),
            }),
        }
    }

    /// A request's context whose `context` member is still JSON text, parsed when first
    /// read ([`Context::raw_context`]).
    pub(crate) fn with_context_text(
        shared: Arc<Shared>,
        session: Arc<Session>,
        request: Arc<ActiveRequest>,
        text: Box<RawValue>,
    ) -> Context {
        Context {
            shared,
            session,
            request: Some(request),
            raw: Arc::new(RawContext {
                text: Some(text),
                parsed: OnceLock::new(),
            }),
        }
    }

    /// The id of the host request being handled; `None` in lifecycle handlers.
    pub fn request_id(&self) -> Option<&RequestId> {
        self.request.as_ref().map(|r| &r.id)
    }

    /// The API version spoken.
    pub fn api_version(&self) -> ApiVersion {
        self.session.api_version
    }

    /// Whether `feature` was negotiated (always false on API 0.1). On API 0.3 the
    /// names are the selected contract capabilities, such as `request_progress`.
    pub fn has_feature(&self, feature: &str) -> bool {
        self.session.has_feature(feature)
    }

    /// Whether `method` may be sent to the host: on API 0.3 only when the contract
    /// selected it; always on the other versions.
    pub fn may_send(&self, method: &str) -> bool {
        self.session.allows(method)
    }

    /// The negotiated features, sorted (API 0.3: the selected capabilities).
    pub fn features(&self) -> impl Iterator<Item = &str> {
        self.session.features.iter().map(String::as_str)
    }

    /// The request's raw `context` params member (`workspace`, `execution_scope`,
    /// `resource_owner`, `host`), or `null` when it has none.
    ///
    /// It is parsed on the first call, not before the handler runs. A context that is
    /// well-formed JSON but beyond what serde_json takes (a `\u` escape of an unpaired
    /// surrogate, a number beyond an `f64`, nesting deeper than 128) reads as `null`,
    /// with a diagnostic on stderr; the host never sends one.
    pub fn raw_context(&self) -> &Value {
        self.raw.value()
    }

    /// The workspace: the request context's, else the one `initialize` named.
    pub fn workspace(&self) -> Option<&str> {
        self.raw_context()
            .get("workspace")
            .and_then(Value::as_str)
            .or(self.session.workspace.as_deref())
    }

    /// The request's resource owner (API 0.2/0.4 model-tool, hook and command
    /// contexts), when present and well formed.
    pub fn resource_owner(&self) -> Option<ResourceOwner> {
        let owner = self.raw_context().get("resource_owner")?;
        serde_json::from_value(owner.clone()).ok()
    }

    /// The request context's `host` member (session, model, skills).
    pub fn host(&self) -> Option<&Value> {
        self.raw_context().get("host")
    }

    /// Whether this request was cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.request
            .as_ref()
            .is_some_and(|r| r.token.is_cancelled())
    }

    /// The request's cancellation token (a token that never fires in lifecycle
    /// handlers).
    pub fn cancelled(&self) -> CancellationToken {
        match &self.request {
            Some(r) => r.token.clone(),
            None => CancellationToken::new(),
        }
    }

    /// Sleeps for `duration`, waking early with `Err(HandlerError::cancelled())` when
    /// the request is cancelled.
    pub fn sleep(&self, duration: Duration) -> Result<(), HandlerError> {
        match &self.request {
            Some(r) if r.token.wait_timeout(duration) => Err(HandlerError::cancelled()),
            _ => Ok(()),
        }
    }

    /// Sends a `$/progress` status event (section 2.6). Returns false, sending
    /// nothing, unless `request_progress` was negotiated (on API 0.3: the capability
    /// and the `$/progress` method) and the request is active.
    pub fn progress_status(
        &self,
        message: impl Into<String>,
        current: Option<u64>,
        total: Option<u64>,
        unit: Option<&str>,
    ) -> bool {
        let mut event = Map::new();
        event.insert("type".into(), json!("status"));
        event.insert("message".into(), Value::String(message.into()));
        if let Some(current) = current {
            event.insert("current".into(), json!(current));
        }
        if let Some(total) = total {
            event.insert("total".into(), json!(total));
        }
        if let Some(unit) = unit {
            event.insert("unit".into(), json!(unit));
        }
        self.progress_event(Value::Object(event))
    }

    /// Sends `$/progress` output events (section 2.6): UTF-8 data as `utf8`, anything
    /// else as `base64`, split into chunks of at most 8 KiB of data each. Returns false
    /// when nothing could be sent (see [`Context::progress_status`]).
    pub fn progress_output(&self, stream: OutputStream, data: &[u8]) -> bool {
        let chunks: Vec<(&'static str, String)> = match std::str::from_utf8(data) {
            Ok(text) => utf8_chunks(text, PROGRESS_OUTPUT_CHUNK_BYTES)
                .into_iter()
                .map(|c| ("utf8", c.to_owned()))
                .collect(),
            Err(_) => data
                .chunks(PROGRESS_OUTPUT_CHUNK_BYTES)
                .map(|c| {
                    (
                        "base64",
                        base64::engine::general_purpose::STANDARD.encode(c),
                    )
                })
                .collect(),
        };
        let mut sent = false;
        for (encoding, data) in chunks {
            let event = json!({
                "type": "output",
                "stream": stream,
                "encoding": encoding,
                "data": data,
            });
            if !self.progress_event(event) {
                return sent;
            }
            sent = true;
        }
        sent
    }

    /// Sends any `$/progress` event object (for example `decoration` or
    /// `partial_result` when their features were negotiated), with the next sequence
    /// number. Returns false when nothing was sent.
    pub fn progress_event(&self, event: Value) -> bool {
        if !self.session.has_feature(FEATURE_REQUEST_PROGRESS) || !self.session.allows("$/progress")
        {
            return false;
        }
        let Some(request) = &self.request else {
            return false;
        };
        if request.is_settled() {
            return false;
        }
        let params = json!({
            "request_id": request.id,
            "sequence": request.next_sequence(),
            "event": event,
        });
        self.shared.send_notification("$/progress", &params)
    }

    /// Sends a notification the session allows; false (with a diagnostic) when API 0.3
    /// did not negotiate `method`, or when it could not be queued.
    fn send_notification<P: serde::Serialize>(&self, method: &str, params: &P) -> bool {
        if !self.session.allows(method) {
            diagnostic(format_args!(
                "not sending {method}: the API 0.3 contract did not select it"
            ));
            return false;
        }
        self.shared.send_notification(method, params)
    }

    /// Sends a user-visible `notification` (section 2.1); false when it could not be
    /// queued or, on API 0.3, was not negotiated.
    pub fn notify(
        &self,
        level: NotificationLevel,
        title: impl Into<String>,
        message: impl Into<String>,
    ) -> bool {
        let notification = ExtensionNotification::new(level, title, message);
        self.send_notification("notification", &notification)
    }

    /// Sends any notification with `params` exactly as given, for methods without a
    /// dedicated helper such as `presentation/update` (section 2.5); false when it could
    /// not be queued. Add [`Context::parent_request_id`] to `params` when the method
    /// correlates with the active request.
    pub fn notify_raw(&self, method: &str, params: &Map<String, Value>) -> bool {
        self.send_notification(method, params)
    }

    /// The `parent_request_id` that correlates a message with this request (section 2):
    /// its numeric id on API 0.2, 0.3 and 0.4 while it is still active; `None` on API 0.1, in
    /// lifecycle handlers, and once the request settled.
    pub fn parent_request_id(&self) -> Option<u64> {
        if self.session.api_version == ApiVersion::V0_1 {
            return None;
        }
        self.request
            .as_ref()
            .filter(|r| !r.is_settled())
            .and_then(|r| r.id.as_u64())
    }

    /// Pushes unsolicited prompt context (`context/contribution`, section 2.3); false
    /// when it could not be queued or, on API 0.3, was not negotiated.
    pub fn context_contribution(&self, contribution: &ContextContribution) -> bool {
        self.send_notification("context/contribution", contribution)
    }

    /// Pushes an unsolicited status contribution (`status/contribution`, section 2.4);
    /// false when it could not be queued or, on API 0.3, was not negotiated.
    pub fn status_contribution(&self, contribution: &StatusContribution) -> bool {
        self.send_notification("status/contribution", contribution)
    }

    /// Asks the person a yes/no question (`confirmation/request`, section 2.2) and
    /// blocks until the host answers.
    pub fn confirm(
        &self,
        prompt: &str,
        detail: Option<&str>,
        destructive: bool,
        default: bool,
    ) -> Result<bool, ChildRequestError> {
        let mut params = Map::new();
        params.insert("prompt".into(), json!(prompt));
        if let Some(detail) = detail {
            params.insert("detail".into(), json!(detail));
        }
        params.insert("destructive".into(), json!(destructive));
        params.insert("default".into(), json!(default));
        let answer = self.request("confirmation/request", params)?;
        answer
            .get("confirmed")
            .and_then(Value::as_bool)
            .ok_or(ChildRequestError::MalformedAnswer {
                method: "confirmation/request",
            })
    }

    /// Asks for text (`input/request`, section 2.7, API 0.2+) and blocks until the
    /// host answers; `Ok(None)` when the frontend cancelled or could not answer.
    pub fn input(&self, prompt: &str, secret: bool) -> Result<Option<String>, ChildRequestError> {
        if !self.session.api_version.has_v0_2_fields() {
            return Err(ChildRequestError::Unsupported {
                method: "input/request",
                api_version: self.session.api_version,
            });
        }
        if prompt.trim().is_empty() {
            return Err(ChildRequestError::Invalid(
                "an input prompt needs non-whitespace text",
            ));
        }
        if prompt.len() > MAX_INPUT_PROMPT_BYTES {
            return Err(ChildRequestError::Invalid(
                "input prompts are at most 16 KiB",
            ));
        }
        let mut params = Map::new();
        params.insert("prompt".into(), json!(prompt));
        params.insert("secret".into(), json!(secret));
        let answer = self.request("input/request", params)?;
        match answer.get("value") {
            Some(Value::String(value)) => Ok(Some(value.clone())),
            Some(Value::Null) => Ok(None),
            _ => Err(ChildRequestError::MalformedAnswer {
                method: "input/request",
            }),
        }
    }

    /// Sends an operation-scoped extension-originated request (such as
    /// `artifact/publish` or `policy/evaluate`) and blocks until the host answers it,
    /// the handler's request is cancelled, or the connection ends. On API 0.2, 0.3 and
    /// 0.4, `parent_request_id` is set to this request's numeric id (section 2); on
    /// API 0.1 it is omitted. On API 0.3 a method the contract did not select fails
    /// with [`ChildRequestError::NotNegotiated`] without being sent.
    pub fn request(
        &self,
        method: &'static str,
        params: Map<String, Value>,
    ) -> Result<Value, ChildRequestError> {
        self.round_trip(method, params, true)
    }

    /// Like [`Context::request`] but never adds `parent_request_id`, for process-scoped
    /// methods such as `tools/register` (section 2.11).
    pub fn request_detached(
        &self,
        method: &'static str,
        params: Map<String, Value>,
    ) -> Result<Value, ChildRequestError> {
        self.round_trip(method, params, false)
    }

    /// Keeps a session-operation hook's `session_leaf` grant for
    /// [`Context::append_private_entry`]: only what an append names of it.
    pub(crate) fn open_private_lane(&self, leaf: &Map<String, Value>) {
        let Some(request) = &self.request else {
            return;
        };
        let spendable: Map<String, Value> = ["grant_id", "activation_epoch", "operation_id"]
            .into_iter()
            .filter_map(|k| leaf.get(k).map(|v| (k.to_string(), v.clone())))
            .collect();
        *request.session_leaf.lock() = Some(Value::Object(spendable));
    }

    /// Takes the unspent grant of this session-operation hook, if any.
    pub(crate) fn take_private_grant(&self) -> Option<Value> {
        self.request.as_ref()?.session_leaf.lock().take()
    }

    /// Keeps the successor grant of a receipt.
    pub(crate) fn keep_private_grant(&self, grant: Value) {
        if let Some(request) = &self.request {
            *request.session_leaf.lock() = Some(grant);
        }
    }

    /// Defers `work` until this handler's reply was written: it runs on a thread of its
    /// own with `true` after a successful reply, `false` after an error or cancellation.
    /// False (and `work` dropped) when there is no request or it already settled.
    pub(crate) fn after_reply(&self, work: Box<dyn FnOnce(bool) + Send>) -> bool {
        self.request
            .as_ref()
            .is_some_and(|request| request.defer(work))
    }

    /// Sends a request with exactly these params (the caller sets any parent and owner)
    /// and waits for its answer; not cancelled by this handler's cancellation.
    pub(crate) fn send_exact(
        &self,
        method: &'static str,
        params: Map<String, Value>,
    ) -> Result<Value, ChildRequestError> {
        if !self.session.allows(method) {
            return Err(ChildRequestError::NotNegotiated { method });
        }
        self.send_and_wait(method, params, false)
    }

    fn round_trip(
        &self,
        method: &'static str,
        mut params: Map<String, Value>,
        with_parent: bool,
    ) -> Result<Value, ChildRequestError> {
        if !self.session.allows(method) {
            return Err(ChildRequestError::NotNegotiated { method });
        }
        if with_parent && self.session.api_version.has_v0_2_fields() {
            let parent = self
                .parent_request_id()
                .ok_or(ChildRequestError::NoParent)?;
            params.insert("parent_request_id".into(), json!(parent));
        }
        if self.is_cancelled() {
            return Err(ChildRequestError::Cancelled);
        }
        // A catalog mutation stages the next epoch until its answer commits it
        // (section 2.12); mutations go out one at a time.
        let staged = match self.catalog() {
            Some(catalog) if catalog::MUTATIONS.contains(&method) => {
                Some(catalog.stage(method, &params))
            }
            _ => None,
        };
        // A mutation the host may have accepted is waited for even when the handler is
        // cancelled: its answer names the epoch later calls will carry.
        let outcome = self.send_and_wait(method, params, staged.is_none());
        if let (Some(staged), Ok(answer)) = (staged, &outcome) {
            staged.commit(answer);
        }
        outcome
    }

    /// The transfer directory of bulk objects the host offered (section 2.27).
    pub(crate) fn session_transfer_directory(&self) -> Option<&std::path::Path> {
        self.session.transfer_directory.as_deref()
    }

    /// The session's catalog epochs, when `dynamic_tools` was negotiated.
    pub(crate) fn catalog(&self) -> Option<&catalog::CatalogEpochs> {
        self.session.catalog.as_ref()
    }

    fn send_and_wait(
        &self,
        method: &'static str,
        params: Map<String, Value>,
        cancellable: bool,
    ) -> Result<Value, ChildRequestError> {
        let (id, answer) = self.shared.begin_child()?;
        let frame = match self
            .shared
            .encode_request(&id, method, &Value::Object(params))
        {
            Ok(frame) => frame,
            Err(error) => {
                self.shared.abandon_child(&id);
                return Err(ChildRequestError::Invalid(match error {
                    CodecEncodeError::TooLarge { .. } => "the request exceeds the frame bound",
                    _ => "the request has no valid encoding (API 0.3: no canonical form)",
                }));
            }
        };
        if !self.shared.send_frame(frame) {
            self.shared.abandon_child(&id);
            return Err(ChildRequestError::Closed);
        }
        let never_cancelled = never();
        let cancelled = match &self.request {
            Some(r) if cancellable => r.token.receiver(),
            _ => &never_cancelled,
        };
        // The host usually answers within microseconds: spin a little (within the
        // process's bound of spinners, as every waiting thread of the crate does)
        // before sleeping, so the answer does not pay a wake-up on top.
        crate::spin::spin_until(super::SPIN_BEFORE_SLEEP, || {
            !answer.is_empty() || !cancelled.is_empty()
        });
        // A worker that waits here lets its pool start another for the requests
        // queued behind it.
        let outcome = super::runtime::pool::while_blocked(|| {
            select! {
                recv(answer) -> outcome => Some(outcome.unwrap_or(Err(ChildRequestError::Closed))),
                recv(cancelled) -> _ => answer.try_recv().ok(),
            }
        });
        outcome.unwrap_or_else(|| {
            self.shared.abandon_child(&id);
            Err(ChildRequestError::Cancelled)
        })
    }
}

/// Splits `text` into pieces of at most `max` bytes at character boundaries.
fn utf8_chunks(text: &str, max: usize) -> Vec<&str> {
    let mut chunks = Vec::new();
    let mut rest = text;
    while rest.len() > max {
        let mut end = max;
        while !rest.is_char_boundary(end) {
            end -= 1;
        }
        chunks.push(&rest[..end]);
        rest = &rest[end..];
    }
    if !rest.is_empty() || chunks.is_empty() {
        chunks.push(rest);
    }
    chunks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_chunks_respect_boundaries_and_size() {
        let text = "é".repeat(10); // 20 bytes
        let chunks = utf8_chunks(&text, 5);
        assert!(chunks.iter().all(|c| c.len() <= 5));
        assert_eq!(chunks.concat(), text);
        assert_eq!(chunks.len(), 5);
        assert_eq!(utf8_chunks("", 8), vec![""]);
    }
}
