//! The extension side of active-session control (section 2.21b) and compaction
//! (section 2.21c), API 0.4: enable [`FEATURE_SESSION_CONTROL`] (and
//! [`FEATURE_SESSION_COMPACTION`]) with [`crate::sdk::Extension::feature`].
//!
//! Control requests are children of the handler's request: the host answers each once
//! the operation completed, one at a time in order. Do not wait for idle from a handler
//! the idle boundary waits on. Compaction is different: the host refuses it while the
//! request that asked is live, so [`Context::compact`] queues it and sends it only after
//! this handler's successful reply was written, with the issued owner.
//!
//! [`FEATURE_SESSION_CONTROL`]: super::FEATURE_SESSION_CONTROL
//! [`FEATURE_SESSION_COMPACTION`]: super::FEATURE_SESSION_COMPACTION

use serde_json::{json, Map, Value};

use super::context::Context;
use super::error::ChildRequestError;
use crate::services::bound::{
    CompactRequest, Compaction, Refusal, ServiceMethod, ServiceParams, ServiceRequest, SessionId,
    SessionTarget,
};

impl Context {
    /// The private `session/append_entry` of an awaited session-operation hook
    /// (`model_turn_start`, `model_turn_end`; section 1.4b): appends `data` through the
    /// host's session writer, spending this hook's `session_leaf` grant, and returns the
    /// committed entry's id. The receipt's successor grant is kept for the next append.
    /// Only inside the hook's handler: once it returns, the host has revoked the grant.
    /// Fails with [`ChildRequestError::NotNegotiated`] outside such a hook, and when a
    /// refused append spent the grant.
    pub fn append_private_entry(
        &self,
        entry_type: &str,
        data: Value,
    ) -> Result<String, ChildRequestError> {
        const METHOD: &str = "session/append_entry";
        let grant = self
            .take_private_grant()
            .ok_or(ChildRequestError::NotNegotiated { method: METHOD })?;
        let mut params = Map::new();
        params.insert("entry_type".into(), json!(entry_type));
        params.insert("data".into(), data);
        params.insert("session_leaf".into(), grant);
        let receipt = self.request(METHOD, params)?;
        if let Some(successor) = receipt.get("successor").filter(|s| s.is_object()) {
            self.keep_private_grant(successor.clone());
        }
        receipt
            .get("entry_id")
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or(ChildRequestError::MalformedAnswer { method: METHOD })
    }

    /// `session/wait_for_idle`: returns the active session's id once the host observed an
    /// idle boundary after every operation queued before it.
    pub fn wait_for_idle(&self) -> Result<String, ChildRequestError> {
        self.control(ServiceRequest::SessionWaitForIdle(SessionTarget::default()))
    }

    /// `session/create`: a new durable session's id; the active session stays.
    pub fn create_session(&self) -> Result<String, ChildRequestError> {
        self.control(ServiceRequest::ActiveSessionCreate(SessionTarget::default()))
    }

    /// `session/fork`: a fork of the active session at its head; the active session stays.
    pub fn fork_session(&self) -> Result<String, ChildRequestError> {
        self.control(ServiceRequest::ActiveSessionFork(SessionTarget::default()))
    }

    /// `session/reload`: reopens the active session.
    pub fn reload_session(&self) -> Result<String, ChildRequestError> {
        self.control(ServiceRequest::ActiveSessionReload(SessionTarget::default()))
    }

    /// `session/switch`: makes the workspace session `session_id` active; returns once
    /// it is.
    pub fn switch_session(&self, session_id: &str) -> Result<String, ChildRequestError> {
        let target = SessionId {
            session_id: session_id.into(),
        };
        self.control(ServiceRequest::ActiveSessionSwitch(target))
    }

    fn control(&self, request: ServiceRequest) -> Result<String, ChildRequestError> {
        let method = request.method();
        let answer = self.service(request)?;
        answer
            .get("session_id")
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or(ChildRequestError::MalformedAnswer {
                method: method.name(),
            })
    }

    /// `session/compact`, queued until this handler's successful reply was written
    /// (section 2.21c: a live parent is refused): then it is sent with this request as
    /// `parent_request_id` and the issued `resource_owner`, and `done` receives the
    /// committed compaction entry or the error, on a thread of its own. When the reply is
    /// an error or the request was cancelled, nothing is sent and `done` gets
    /// [`ChildRequestError::Cancelled`]. Checked locally first: the feature, the
    /// instructions' bounds (16 KiB, LF and TAB only), an owner and a live request.
    pub fn compact<F>(
        &self,
        custom_instructions: Option<&str>,
        done: F,
    ) -> Result<(), ChildRequestError>
    where
        F: FnOnce(Result<Compaction, ChildRequestError>) + Send + 'static,
    {
        let method = ServiceMethod::SessionCompact;
        let feature = method.kind().feature().expect("a feature-offered kind");
        if !self.has_feature(feature.as_str()) {
            return Err(ChildRequestError::Refused(
                Refusal::UnsupportedFeature.because(format!("{feature} was not negotiated")),
            ));
        }
        let request = CompactRequest {
            custom_instructions: custom_instructions.map(str::to_string),
        };
        request.check().map_err(ChildRequestError::Refused)?;
        let owner = self.resource_owner().ok_or_else(|| {
            ChildRequestError::Refused(
                Refusal::NotForegroundOwner.because("this request carries no resource_owner"),
            )
        })?;
        let parent = self
            .parent_request_id()
            .ok_or(ChildRequestError::NoParent)?;
        let mut params = Map::new();
        params.insert("parent_request_id".into(), json!(parent));
        params.insert("resource_owner".into(), json!(owner));
        if let Some(text) = request.custom_instructions {
            params.insert("custom_instructions".into(), json!(text));
        }
        let cx = self.clone();
        let queued = self.after_reply(Box::new(move |replied| {
            if !replied {
                return done(Err(ChildRequestError::Cancelled));
            }
            let outcome = cx.send_exact(method.name(), params).and_then(|answer| {
                serde_json::from_value(answer).map_err(|_| ChildRequestError::MalformedAnswer {
                    method: method.name(),
                })
            });
            done(outcome);
        }));
        match queued {
            true => Ok(()),
            false => Err(ChildRequestError::NoParent),
        }
    }
}
