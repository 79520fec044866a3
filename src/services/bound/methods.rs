//! The enums of the method table, expanded from its rows (`table.rs`):
//! [`ServiceKind`], [`ServiceMethod`] with every column of a row, [`ServiceRequest`]
//! with its parsing and the result rules, and [`HostNotification`]; and the lookups
//! they share: by name, and by name on an API version with the negotiated features
//! ([`ServiceMethod::resolve`]).

use std::fmt;

use serde_json::{Map, Value};

use super::agents::{
    AgentEventsQuery, AgentModels, AgentModelsQuery, AgentSend, AgentSnapshot, AgentSpawn,
    AgentSpawned, AgentTarget, AgentWait, FollowUpDelivered, InterruptRequested, MessageDelivered,
    StopRequested,
};
use super::family::ErrorFamily;
use super::frontend_models::{Accepted, AutocompleteRegistration, TerminalGrant};
use super::params::{
    closed, ActiveToolSet, AppendEntry, ComposerEdit, EntryLabel, InjectedMessage, NoParams,
    ServiceParams, SessionName, Shortcut, UserMessage,
};
use super::private_lane::{PrivateAppend, PrivateCommit};
use super::provider_models::{
    CatalogRevision, ProviderAuthAnswer, ProviderAuthParams, ProviderRef, ProviderRegistration,
    SessionId,
};
use super::refusal::ServiceRefusal;
use super::results::{ComposerText, EntryId, ServiceResult};
use super::row::{Admission, Lane, Offer, Shape, V0_2_AND_V0_4_APIS, V0_3_APIS, V0_4_APIS};
use super::session_control::{CompactRequest, Compaction, SessionTarget};
use crate::manifest::ApiVersion;
use crate::negotiation::{Capability, Feature, FeatureSet};

service_table!(methods);
host_notification_table!(host_notifications);

impl HostNotification {
    /// The notification a wire name names.
    pub fn from_name(name: &str) -> Option<HostNotification> {
        HostNotification::ALL.into_iter().find(|n| n.name() == name)
    }
}

impl ServiceKind {
    /// The kind a name names.
    pub fn from_name(name: &str) -> Option<ServiceKind> {
        ServiceKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// The API 0.2/0.4 feature it is offered as, for the feature-offered kinds.
    pub fn feature(self) -> Option<Feature> {
        match self.offer() {
            Offer::Feature(feature) => Some(feature),
            Offer::Capability(_) => None,
        }
    }

    /// The API 0.3 contract capability it is offered as, for the API 0.3 kinds.
    pub fn capability(self) -> Option<Capability> {
        match self.offer() {
            Offer::Capability(capability) => Some(capability),
            Offer::Feature(_) => None,
        }
    }
}

impl fmt::Display for ServiceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl ServiceMethod {
    /// The method a wire name names on `api`, with `features` negotiated, for a request
    /// with `params`: a name two rows share resolves to the row this connection speaks
    /// (its API version, then its negotiated features), and among rows of one name and
    /// version the one whose admission's marker member (`session_leaf`) the params have,
    /// or lack. `None` when no row of that name is carried by `api`.
    pub fn resolve(
        name: &str,
        api: ApiVersion,
        features: &FeatureSet,
        params: Option<&Value>,
    ) -> Option<ServiceMethod> {
        let carries = |m: &ServiceMethod| {
            let marker = m.admission().marker();
            marker.is_some_and(|k| params.and_then(|p| p.get(k)).is_some())
        };
        let named = || {
            ServiceMethod::ALL
                .into_iter()
                .filter(|m| m.name() == name && m.apis().contains(&api))
        };
        // A request that carries a row's marker is that row's; one that carries none
        // belongs to the rows without one.
        let marked = named().any(|m| carries(&m));
        let mut rows = named().filter(|m| match marked {
            true => carries(m),
            false => m.admission().marker().is_none(),
        });
        let first = rows.next()?;
        let negotiated = |m: &ServiceMethod| match m.kind().offer() {
            Offer::Feature(feature) => features.contains(feature),
            Offer::Capability(_) => true,
        };
        if negotiated(&first) {
            return Some(first);
        }
        Some(rows.find(negotiated).unwrap_or(first))
    }

    /// The method a wire name names on any API version (the first row of that name).
    pub fn from_name(name: &str) -> Option<ServiceMethod> {
        ServiceMethod::ALL.into_iter().find(|m| m.name() == name)
    }

    /// True for a notification: nothing is answered.
    pub fn is_notification(self) -> bool {
        self.shape() == Shape::Notification
    }
}

impl fmt::Display for ServiceMethod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference's own result for each method a service answers (sections
    /// 1.4b, 2.13-2.24b and SUPPLEMENT "API 0.3"), by method name and params marker.
    fn reference_result(method: ServiceMethod) -> serde_json::Value {
        use serde_json::json;
        let policy = json!({"tools": ["read"], "max_depth": 1, "max_concurrent_children": 8,
            "max_turns": null, "max_tokens": null, "max_cost_microdollars": null,
            "max_output_bytes": 8192, "timeout_ms": null});
        match method {
            ServiceMethod::ComposerGet => json!({"text": "draft"}),
            ServiceMethod::SessionAppendEntry => json!({"entry_id": "e-1"}),
            ServiceMethod::SessionAppendPrivate => json!({"entry_id": "e-1", "head": "e-1",
                "successor": {"grant_id": "0".repeat(64), "activation_epoch": 1,
                              "operation_id": "session-operation:1"}}),
            ServiceMethod::TerminalAcquire => json!({"grant_id": "g-1", "columns": 80, "rows": 24}),
            ServiceMethod::AutocompleteRegister => json!({"accepted": true}),
            ServiceMethod::SessionWaitForIdle
            | ServiceMethod::ActiveSessionCreate
            | ServiceMethod::ActiveSessionFork
            | ServiceMethod::ActiveSessionReload
            | ServiceMethod::ActiveSessionSwitch
            | ServiceMethod::SessionCreate
            | ServiceMethod::SessionFork
            | ServiceMethod::SessionReload
            | ServiceMethod::SessionSwitch => json!({"session_id": "s-1"}),
            ServiceMethod::SessionCompact => json!({"entry_id": "checkpoint-id",
                "summary": "Actual stored summary.", "first_kept": "retained-entry-id"}),
            ServiceMethod::AgentSpawn => json!({"agent_id": "agent-1", "agent_path": "/inspect",
                "task_name": "inspect", "profile": "review", "fingerprint": null,
                "idempotency_key": "k", "status": {"state": "pending"}, "policy": policy,
                "created_at_ms": 1, "started_at_ms": null, "completed_at_ms": null,
                "deadline_at_ms": null, "principal": "p", "resource_owner": "o",
                "resolved_model": {"provider": "p", "model": "m", "reasoning": {"type": "off"}}}),
            ServiceMethod::AgentMessage => json!({"delivered_to": "agent-1", "delivery": "queued"}),
            ServiceMethod::AgentFollowUp => {
                json!({"agent_id": "agent-1", "agent_path": "/inspect", "delivery": "new_run"})
            }
            ServiceMethod::AgentInterrupt => json!({"agent_id": "agent-1",
                "agent_path": "/inspect", "previous_status": {"state": "running"},
                "interrupt_requested": true}),
            ServiceMethod::AgentStop => json!({"agent_id": "agent-1", "shutdown_requested": true}),
            ServiceMethod::AgentModels => json!({"models": [{"model": "m", "provider": "p",
                "display_name": null, "reasoning": ["high"], "context_window": 200000,
                "max_output_tokens": 64000}], "truncated": false}),
            ServiceMethod::ProviderAuthRequest | ServiceMethod::ProviderAuthRevoke => {
                json!({"status": "ready", "lease": "lease-1"})
            }
            ServiceMethod::ProvidersRegister
            | ServiceMethod::ProvidersUpdate
            | ServiceMethod::ProvidersUnregister => {
                json!({"revision": 1, "provider_ids": ["p"], "model_ids": ["m"]})
            }
            // `{}` is the reference's result of every other request.
            _ => json!({}),
        }
    }

    #[test]
    fn the_references_own_result_shape_is_always_an_acceptable_answer() {
        for method in ServiceMethod::ALL
            .into_iter()
            .filter(|m| !m.is_guarded() && !m.is_notification())
        {
            let result = reference_result(method);
            assert_eq!(method.check_result(&result), Ok(()), "{method}: {result}");
        }
    }

    #[test]
    fn names_round_trip_and_every_row_is_consistent() {
        let every = FeatureSet::from_iter(Feature::ALL);
        for method in ServiceMethod::ALL {
            let params = method
                .admission()
                .marker()
                .map(|marker| serde_json::json!({ marker: {} }));
            for &api in method.apis() {
                assert_eq!(
                    ServiceMethod::resolve(method.name(), api, &every, params.as_ref()),
                    Some(method)
                );
            }
            // A method's family follows its kind's offer; its API versions are the
            // ones its feature rides.
            match method.kind().offer() {
                Offer::Feature(feature) => {
                    assert_ne!(method.family(), ErrorFamily::V0_3Table);
                    for &api in method.apis() {
                        assert!(feature.available_on(api), "{method} on {api}");
                    }
                }
                Offer::Capability(_) => assert_eq!(method.family(), ErrorFamily::V0_3Table),
            }
        }
        for kind in ServiceKind::ALL {
            assert_eq!(ServiceKind::from_name(kind.name()), Some(kind));
            assert!(
                ServiceMethod::ALL.iter().any(|m| m.kind() == kind),
                "{kind}"
            );
        }
        assert_eq!(ServiceMethod::from_name("composer/clear"), None);
    }

    #[test]
    fn every_host_notification_has_closed_params() {
        for notification in HostNotification::ALL {
            assert_eq!(
                HostNotification::from_name(notification.name()),
                Some(notification)
            );
            assert!(!notification.members().is_empty(), "{notification:?}");
        }
        assert!(HostNotification::ShortcutTrigger.from_client());
        assert!(!HostNotification::MessageUpdated.from_client());
    }

    #[test]
    fn a_name_resolves_by_api_version() {
        let none = FeatureSet::default();
        assert_eq!(
            ServiceMethod::resolve("session/create", ApiVersion::V0_3, &none, None),
            Some(ServiceMethod::SessionCreate)
        );
        assert_eq!(
            ServiceMethod::resolve("session/create", ApiVersion::V0_4, &none, None),
            Some(ServiceMethod::ActiveSessionCreate)
        );
        assert_eq!(
            ServiceMethod::resolve("session/create", ApiVersion::V0_2, &none, None),
            None
        );
        assert_eq!(
            ServiceMethod::resolve("composer/get", ApiVersion::V0_3, &none, None),
            None
        );
        assert_eq!(
            ServiceMethod::resolve("composer/get", ApiVersion::V0_2, &none, None),
            Some(ServiceMethod::ComposerGet)
        );
    }
}
