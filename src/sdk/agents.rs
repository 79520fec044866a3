//! The extension side of child agent sessions (sections 2.13-2.18): enable
//! [`FEATURE_AGENT_SESSIONS`] with [`crate::sdk::Extension::feature`] and call these from
//! a tool or command handler, whose request is the parent of every child it spawns. The
//! host answers with typed records ([`AgentSpawnResult`], [`AgentList`],
//! [`AgentWaited`]); requests are checked locally against the host's bounds first.
//!
//! ```no_run
//! use octet_host::sdk::{Context, ToolOutput};
//! use octet_host::services::bound::{AgentPolicy, AgentSpawn, AgentTool};
//!
//! fn delegate(ctx: &Context) -> Result<ToolOutput, octet_host::sdk::ChildRequestError> {
//!     let child = ctx.spawn_agent(AgentSpawn {
//!         task_name: "survey".into(),
//!         profile: None,
//!         fingerprint: None,
//!         message: "read README.md".into(),
//!         idempotency_key: None,
//!         policy: AgentPolicy::read_only(4096),
//!     })?;
//!     let waited = ctx.wait_agents(Some(30_000))?;
//!     Ok(ToolOutput::text(format!("{} settled: {}", child.agent_id, !waited.timed_out)))
//! }
//! ```
//!
//! [`FEATURE_AGENT_SESSIONS`]: super::FEATURE_AGENT_SESSIONS

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::context::Context;
use super::error::ChildRequestError;
use crate::services::bound::{
    AgentEventBatch, AgentEventsQuery, AgentList, AgentModels, AgentModelsQuery, AgentSend,
    AgentSpawn, AgentSpawnResult, AgentTarget, AgentWait, AgentWaited, FollowUpDelivery,
    MessageDelivery, NoParams, ServiceRequest,
};

impl Context {
    /// `agent/spawn` (section 2.13): one bounded child session, a child of this
    /// handler's request.
    pub fn spawn_agent(&self, spawn: AgentSpawn) -> Result<AgentSpawnResult, ChildRequestError> {
        let answer = self.service(ServiceRequest::AgentSpawn(spawn))?;
        typed(answer, "agent/spawn")
    }

    /// `agent/message` (section 2.14): steering input for an owned child, by id or path.
    pub fn message_agent(
        &self,
        target: &str,
        message: &str,
    ) -> Result<MessageDelivery, ChildRequestError> {
        let answer = self.service(ServiceRequest::AgentMessage(send(target, message)))?;
        typed(member(answer, "delivery"), "agent/message")
    }

    /// `agent/follow_up` (section 2.15): a subsequent run of an owned child.
    pub fn follow_up_agent(
        &self,
        target: &str,
        message: &str,
    ) -> Result<FollowUpDelivery, ChildRequestError> {
        let answer = self.service(ServiceRequest::AgentFollowUp(send(target, message)))?;
        typed(member(answer, "delivery"), "agent/follow_up")
    }

    /// `agent/interrupt` (section 2.18): true when an active child was asked to stop.
    pub fn interrupt_agent(&self, target: &str) -> Result<bool, ChildRequestError> {
        let params = AgentTarget {
            target: target.into(),
        };
        let answer = self.service(ServiceRequest::AgentInterrupt(params))?;
        typed(member(answer, "interrupt_requested"), "agent/interrupt")
    }

    /// `agent/list` (section 2.16): this extension's and owner's children.
    pub fn list_agents(&self) -> Result<AgentList, ChildRequestError> {
        let answer = self.service(ServiceRequest::AgentList(NoParams {}))?;
        typed(answer, "agent/list")
    }

    /// `agent/stop` (section 2.18, API 0.4, `agent_session_lifetime_v1`): requests
    /// shutdown of the owned child's tree; true once it was requested (observe the
    /// settlement with [`Context::list_agents`]).
    pub fn stop_agent(&self, target: &str) -> Result<bool, ChildRequestError> {
        let params = AgentTarget {
            target: target.into(),
        };
        let answer = self.service(ServiceRequest::AgentStop(params))?;
        typed(member(answer, "shutdown_requested"), "agent/stop")
    }

    /// `agent/events` (section 2.18, API 0.4, `agent_session_events_v1`): the child's
    /// observations after `after_sequence`, waiting up to `timeout_ms` (at most
    /// 25,000) for the next one. Cursors are not consumed: read again from any
    /// retained sequence.
    pub fn agent_events(
        &self,
        target: &str,
        after_sequence: u64,
        timeout_ms: Option<u64>,
    ) -> Result<AgentEventBatch, ChildRequestError> {
        let query = AgentEventsQuery {
            target: target.into(),
            after_sequence,
            timeout_ms,
        };
        let answer = self.service(ServiceRequest::AgentEvents(query))?;
        typed(answer, "agent/events")
    }

    /// `agent/models` (section 2.13, `agent_model_selection_v1`): the host's child
    /// models matching `query`, at most `limit` (default 50).
    pub fn agent_models(
        &self,
        query: Option<&str>,
        limit: Option<u64>,
    ) -> Result<AgentModels, ChildRequestError> {
        let query = AgentModelsQuery {
            query: query.map(str::to_string),
            limit,
        };
        let answer = self.service(ServiceRequest::AgentModels(query))?;
        typed(answer, "agent/models")
    }

    /// `agent/wait` (section 2.17): until every owned child settled, or `timeout_ms`
    /// (default 30 s, clamped to 1..=60,000 by the host).
    pub fn wait_agents(&self, timeout_ms: Option<u64>) -> Result<AgentWaited, ChildRequestError> {
        let answer = self.service(ServiceRequest::AgentWait(AgentWait { timeout_ms }))?;
        typed(answer, "agent/wait")
    }
}

fn send(target: &str, message: &str) -> AgentSend {
    AgentSend {
        target: target.into(),
        message: message.into(),
    }
}

fn member(mut answer: Value, name: &str) -> Value {
    answer.get_mut(name).map(Value::take).unwrap_or(Value::Null)
}

fn typed<T: DeserializeOwned>(answer: Value, method: &'static str) -> Result<T, ChildRequestError> {
    serde_json::from_value(answer).map_err(|_| ChildRequestError::MalformedAnswer { method })
}
