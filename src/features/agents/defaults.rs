//! What the runtime supplies for the `agent_sessions` companions an embedder did not
//! bind (section 2.13: "When agent_sessions is offered, the host also offers
//! agent_model_selection_v1 ... API 0.4 additionally offers agent_session_events_v1 and
//! agent_session_lifetime_v1 at that same authorized service boundary").
//!
//! Binding the child-session service alone therefore offers all four features, each
//! served as plainly as the reference allows without more from the embedder:
//!
//! - `agent_model_selection_v1` ([`InheritedModel`]): "Without a configured resolver,
//!   only the inherited binding is available." `agent/models` lists the one inherited
//!   model (the model of the host information the embedder gave the builder), and
//!   `policy.model_selection` accepts only inheritance (the connection's guard checks
//!   spawns against [`InheritedModel::allows`]).
//! - `agent_session_events_v1` ([`RuntimeEvents`]): `agent/events` is answered from
//!   the runtime's own log, as with any binding: the events the service feeds through
//!   [`AgentReports::event`](super::super::AgentReports::event), and the
//!   `run_finished` transitions the runtime records itself from the service's reports.
//! - `agent_session_lifetime_v1` ([`StopThroughInterrupt`]): `agent/stop` asks the
//!   child-session service to interrupt the target's tree and answers
//!   `{agent_id, shutdown_requested: true}` at once (the acknowledgement "does not mean
//!   settlement").
//!
//! Binding a richer service for a companion replaces its default.

use std::sync::Arc;

use crate::cancel_flag::CancelFlag;
use crate::negotiation::HostContext;

use crate::services::bound::{
    AgentEventService, AgentModelRow, AgentModelService, AgentModels, AgentModelsQuery,
    ModelSelection, RawReply, RawService, Reply, ServiceBindings, ServiceCall, ServiceKind,
    ServiceMethod, ServiceRequest,
};

/// The word every model-selection member may always be.
const INHERIT: &str = "inherit";

/// The companions' defaults for `bindings`, which bind `agent_sessions`: each companion
/// kind the embedder left unbound is bound to the runtime's own.
pub(crate) fn with_agent_defaults(
    bindings: ServiceBindings,
    host: &HostContext,
) -> ServiceBindings {
    let Some(sessions) = bindings.get(ServiceKind::AgentSessions).cloned() else {
        return bindings;
    };
    let mut bindings = bindings;
    if !bindings.is_bound(ServiceKind::AgentModelSelection) {
        bindings = bindings
            .agent_model_selection(InheritedModel::of(host))
            .mark_runtime_default(ServiceKind::AgentModelSelection);
    }
    if !bindings.is_bound(ServiceKind::AgentSessionEvents) {
        bindings = bindings
            .agent_session_events(RuntimeEvents)
            .mark_runtime_default(ServiceKind::AgentSessionEvents);
    }
    if !bindings.is_bound(ServiceKind::AgentSessionLifetime) {
        bindings = bindings
            .bind(
                ServiceKind::AgentSessionLifetime,
                Arc::new(StopThroughInterrupt { sessions }),
            )
            .mark_runtime_default(ServiceKind::AgentSessionLifetime);
    }
    bindings
}

/// The one child model there is without a configured resolver: the parent's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct InheritedModel {
    row: AgentModelRow,
}

impl InheritedModel {
    /// The inherited model of a host whose information is `host`: its model id when
    /// the embedder gave one (`inherit` otherwise), its provider `inherit` (the host
    /// information names none), no reasoning labels to choose from, and sizes of 0
    /// (unknown to the runtime: the child gets the parent's).
    pub(crate) fn of(host: &HostContext) -> InheritedModel {
        let model = host
            .model
            .clone()
            .filter(|m| !m.is_empty())
            .unwrap_or_else(|| INHERIT.to_string());
        InheritedModel {
            row: AgentModelRow {
                display_name: Some(format!("The parent session's model ({model})")),
                model,
                provider: INHERIT.into(),
                reasoning: Vec::new(),
                context_window: 0,
                max_output_tokens: 0,
            },
        }
    }

    /// True when `selection` asks for nothing but the inherited binding: every member
    /// absent or `inherit`, or the model named by its own id.
    pub(crate) fn allows(&self, selection: &ModelSelection) -> bool {
        let inherits = |member: &Option<String>| member.as_deref().is_none_or(|m| m == INHERIT);
        inherits(&selection.provider)
            && inherits(&selection.reasoning)
            && (inherits(&selection.model) || selection.model.as_deref() == Some(&self.row.model))
    }
}

impl AgentModelService for InheritedModel {
    fn models(&self, _call: ServiceCall, params: AgentModelsQuery, reply: Reply<AgentModels>) {
        let wanted = params.query.as_deref().unwrap_or("").to_lowercase();
        let row = &self.row;
        let texts = [
            Some(&row.model),
            Some(&row.provider),
            row.display_name.as_ref(),
        ];
        let matches = texts
            .into_iter()
            .flatten()
            .any(|text| text.to_lowercase().contains(&wanted));
        reply.ok(AgentModels {
            models: matches.then(|| row.clone()).into_iter().collect(),
            truncated: false,
        });
    }
}

/// `agent/events` is answered by the runtime from its log whatever is bound; this
/// binding only offers the feature.
pub(crate) struct RuntimeEvents;

impl AgentEventService for RuntimeEvents {}

/// `agent/stop` through the child-session service's `agent/interrupt`.
struct StopThroughInterrupt {
    sessions: Arc<dyn RawService>,
}

impl RawService for StopThroughInterrupt {
    fn serve(&self, call: ServiceCall, request: ServiceRequest, reply: RawReply) {
        let ServiceRequest::AgentStop(target) = request else {
            return crate::services::bound::misrouted(&request, reply);
        };
        // The interrupt is asked for and not waited on: its answer goes nowhere, and
        // whatever the child does next the service reports as usual.
        let cancelled = CancelFlag::default();
        let mut interrupt = call;
        interrupt.method = ServiceMethod::AgentInterrupt;
        interrupt.cancelled = cancelled.clone();
        self.sessions.serve(
            interrupt,
            ServiceRequest::AgentInterrupt(target),
            RawReply::detached(ServiceMethod::AgentInterrupt, cancelled),
        );
        // `{}`: the connection's guard completes `agent_id` and `shutdown_requested`.
        let _ = reply.answer(serde_json::json!({}));
    }

    fn inline(&self) -> bool {
        self.sessions.inline()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn selection(
        provider: Option<&str>,
        model: Option<&str>,
        reasoning: Option<&str>,
    ) -> ModelSelection {
        ModelSelection {
            provider: provider.map(str::to_string),
            model: model.map(str::to_string),
            reasoning: reasoning.map(str::to_string),
        }
    }

    #[test]
    fn only_the_inherited_binding_is_allowed() {
        let host = HostContext {
            model: Some("parent-model".into()),
            ..HostContext::default()
        };
        let inherited = InheritedModel::of(&host);
        assert_eq!(inherited.row.model, "parent-model");
        assert!(inherited.allows(&selection(None, None, None)));
        assert!(inherited.allows(&selection(
            Some("inherit"),
            Some("inherit"),
            Some("inherit")
        )));
        assert!(inherited.allows(&selection(None, Some("parent-model"), None)));
        assert!(!inherited.allows(&selection(None, Some("other"), None)));
        assert!(!inherited.allows(&selection(Some("acme"), Some("parent-model"), None)));
        assert!(!inherited.allows(&selection(None, None, Some("high"))));
        // Without a model in the host information the row is `inherit` itself.
        let unnamed = InheritedModel::of(&HostContext::default());
        assert_eq!(unnamed.row.model, "inherit");
        assert!(!unnamed.allows(&selection(None, Some("parent-model"), None)));
    }
}
