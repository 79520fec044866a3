//! What a bound service is told about one request, and the reply it owes: typed for
//! the embedder ([`Reply`]), checked against the method's result rules before it goes
//! back to the dispatcher, and answered exactly once: a reply dropped unanswered
//! answers the extension with an internal error.

use std::marker::PhantomData;

use crossbeam_channel::Sender;
use serde_json::Value;

use super::methods::ServiceMethod;
use super::refusal::ServiceRefusal;
use super::results::ServiceResult;
use crate::cancel_flag::CancelFlag;
use crate::generation::GenerationRef;
use crate::services::ResourceOwner;
use crate::transport::ConnId;
use crate::wire::RequestId;

/// What a bound service is told about one request.
#[derive(Clone)]
#[non_exhaustive]
pub struct ServiceCall {
    /// The generation that asked.
    pub source: GenerationRef,
    /// The request's method.
    pub method: ServiceMethod,
    /// The host request the extension named as parent (`None` for the API 0.3
    /// methods, which name none).
    pub parent_request_id: Option<u64>,
    /// The resource owner the runtime derived (section 2): the live parent's, or the
    /// explicit `resource_owner` admitted with a settled parent.
    pub owner: ResourceOwner,
    /// True when the parent had settled and the explicit owner was admitted: the
    /// request is answered independently of it (section 2).
    pub independent: bool,
    /// Set once the answer is no longer wanted: the parent settled, the extension
    /// cancelled the request, or the generation ended. The extension has been
    /// answered already; a reply sent after this is ignored.
    pub cancelled: CancelFlag,
    /// Where an `agent_sessions` service reports its children.
    pub(crate) reports: Option<super::AgentReports>,
}

impl ServiceCall {
    /// The host's handle for reporting children's changes: for a request of
    /// `agent_sessions` or of one of its features (`None` for every other kind). Report every change of a
    /// child it spawns (running, each turn and tool call, its settlement): the runtime
    /// answers `agent/list` and `agent/wait` from what it was told.
    pub fn agent_reports(&self) -> Option<&super::AgentReports> {
        self.reports.as_ref()
    }
}

/// Shows what an embedder needs: the method, who asks, the parent and the owner.
impl std::fmt::Debug for ServiceCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServiceCall")
            .field("method", &self.method.name())
            .field("source", &self.source.to_string())
            .field("parent_request_id", &self.parent_request_id)
            .field("owner", &self.owner)
            .field("independent", &self.independent)
            .field("cancelled", &self.cancelled.is_cancelled())
            .finish()
    }
}

/// How a service request ended, as the dispatcher receives it.
#[derive(Debug)]
pub(crate) enum Outcome {
    /// A result that keeps the method's rules.
    Answered(Value),
    /// A refusal from the vocabulary.
    Refused(ServiceRefusal),
    /// A result that breaks the method's rules (why, in words).
    Broken(String),
    /// The reply was dropped unanswered.
    Dropped,
    /// A host-served method's own error (the brokered `secret/get` and
    /// `provider/credentials`).
    Error(crate::wire::ResponseError),
}

/// A service's answer on its way back to the dispatcher.
pub(crate) struct ServiceAnswer {
    pub conn: ConnId,
    pub id: RequestId,
    pub outcome: Outcome,
}

/// The untyped reply the runtime hands a binding: sends exactly one [`Outcome`].
pub(crate) struct RawReply {
    target: Option<(ConnId, RequestId, Sender<ServiceAnswer>)>,
    method: ServiceMethod,
    cancelled: CancelFlag,
    /// Dropped with the reply, once its outcome was sent: the serial lane waits on it.
    sent: Option<Sender<()>>,
}

impl RawReply {
    pub(crate) fn new(
        conn: ConnId,
        id: RequestId,
        method: ServiceMethod,
        cancelled: CancelFlag,
        answers: Sender<ServiceAnswer>,
    ) -> RawReply {
        RawReply {
            target: Some((conn, id, answers)),
            method,
            cancelled,
            sent: None,
        }
    }

    /// `sent` is dropped once this reply's outcome went out (or it was dropped).
    pub(crate) fn notify_when_sent(&mut self, sent: Sender<()>) {
        self.sent = Some(sent);
    }

    /// The method this reply answers.
    pub(crate) fn method(&self) -> ServiceMethod {
        self.method
    }

    /// True once the answer is no longer wanted.
    pub(crate) fn is_cancelled(&self) -> bool {
        self.cancelled.is_cancelled()
    }

    /// Sends a result, after checking it (once) against the method's result rules;
    /// returns why it broke them, when it did (the extension then gets -32603).
    pub(crate) fn answer(self, result: Value) -> Result<(), String> {
        let checked = self.method.check_result(&result);
        let outcome = match &checked {
            Ok(()) => Outcome::Answered(result),
            Err(why) => Outcome::Broken(why.clone()),
        };
        self.send(outcome);
        checked
    }

    /// A reply to a notification: nothing is ever sent.
    pub(crate) fn detached(method: ServiceMethod, cancelled: CancelFlag) -> RawReply {
        RawReply {
            target: None,
            method,
            cancelled,
            sent: None,
        }
    }

    /// Ends without an answer: the request was a notification.
    pub(crate) fn discard(mut self) {
        self.target = None;
    }

    /// Sends a refusal.
    pub(crate) fn refuse(self, refusal: ServiceRefusal) {
        self.send(Outcome::Refused(refusal));
    }

    fn send(mut self, outcome: Outcome) {
        if let Some((conn, id, answers)) = self.target.take() {
            let _ = answers.send(ServiceAnswer { conn, id, outcome });
        }
    }
}

impl Drop for RawReply {
    fn drop(&mut self) {
        if let Some((conn, id, answers)) = self.target.take() {
            let _ = answers.send(ServiceAnswer {
                conn,
                id,
                outcome: Outcome::Dropped,
            });
        }
    }
}

impl std::fmt::Debug for RawReply {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RawReply")
            .field("method", &self.method)
            .field("answered", &self.target.is_none())
            .finish()
    }
}

/// The answer a service owes one request. Answer it exactly once, from any thread, now
/// or later; dropping it unanswered answers the extension with -32603. A result that
/// breaks the method's rules never reaches the extension: it gets -32603 and the host
/// a diagnostic naming the rule.
#[must_use = "the extension waits until the reply is answered"]
pub struct Reply<T: ServiceResult> {
    raw: RawReply,
    _result: PhantomData<fn(T)>,
}

impl<T: ServiceResult> Reply<T> {
    pub(crate) fn new(raw: RawReply) -> Reply<T> {
        Reply {
            raw,
            _result: PhantomData,
        }
    }

    /// Answers with a result.
    pub fn ok(self, result: T) {
        // A broken result reaches the host as a diagnostic; nothing more to do here.
        let _ = self.raw.answer(result.into_result());
    }

    /// Answers with `result` as JSON: `T`'s shape, or the reference's own result shape
    /// for the method, which is always acceptable (docs/serve-protocol.md names both
    /// per method; the members the runtime owns must agree with its records). Checked
    /// like any result: a result that breaks the method's rules is not sent, the
    /// extension gets -32603, and the rule it broke is returned here too.
    pub fn ok_value(self, result: Value) -> Result<(), String> {
        self.raw.answer(result)
    }

    /// Refuses with a refusal of the vocabulary (section 3).
    pub fn refuse(self, refusal: ServiceRefusal) {
        self.raw.refuse(refusal);
    }

    /// Answers with `outcome`.
    pub fn send(self, outcome: Result<T, ServiceRefusal>) {
        match outcome {
            Ok(result) => self.ok(result),
            Err(refusal) => self.refuse(refusal),
        }
    }

    /// True once the answer is no longer wanted (see [`ServiceCall::cancelled`]).
    pub fn is_cancelled(&self) -> bool {
        self.raw.is_cancelled()
    }

    /// Refuses with `unsupported_feature`: the binding does not serve `call`'s method.
    /// Every service trait method does this unless the embedder implements it, so a
    /// binding written before a method existed keeps compiling and refuses it.
    pub fn unsupported(self, call: &ServiceCall) {
        self.refuse(
            super::refusal::Refusal::UnsupportedFeature
                .because(format!("the bound service does not serve {}", call.method)),
        );
    }
}

impl<T: ServiceResult> std::fmt::Debug for Reply<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.raw.fmt(f)
    }
}
