//! Where every message an extension sends the host goes: one resolution by name, API
//! version, negotiated features and (for rows that share a name) a params marker.
//!
//! The bound services' methods are rows of the method table
//! (`services/bound/table.rs`). The rest are answered without an embedder's request
//! service, and are declared here, one row each, with who answers them:
//!
//! - [`Answerer::Broker`]: an embedder's policy engine, secret broker or credential
//!   resolver, on a thread of its own (`brokered.rs`); the answer may be sensitive.
//! - [`Answerer::Runtime`]: the runtime itself, on the dispatcher (artifacts, the tool
//!   catalog, progress, cancellation and presentation snapshots; `runtime_answers.rs`,
//!   `inbound.rs`).
//! - [`Answerer::Frontend`]: the person at the frontend, on a thread of its own
//!   (`extension_requests.rs`).
//! - [`Answerer::Feature`]: a feature the runtime serves itself (`features/`): the
//!   feature whose registration lists the method answers it.
//! - [`Answerer::Embedder`]: a notification the embedder receives as a
//!   [`crate::HostEvent`] once it is checked.
//!
//! A name that resolves to no route is not a method the host accepts: a request is
//! answered -32601, a notification dropped with a diagnostic.

use serde_json::Value;

use crate::manifest::ApiVersion;
use crate::negotiation::FeatureSet;
use crate::services::bound::{ServiceMethod, Shape};

/// Every API version.
const ALL_APIS: &[ApiVersion] = &ApiVersion::ALL;
/// API 0.4 only.
const V0_4_APIS: &[ApiVersion] = &[ApiVersion::V0_4];
/// The API versions with the 0.2 fields (section 2: parent correlation).
const V0_2_FIELDS_APIS: &[ApiVersion] = &[ApiVersion::V0_2, ApiVersion::V0_3, ApiVersion::V0_4];

/// Who answers a host method.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Answerer {
    /// An embedder's broker, off the dispatcher.
    Broker,
    /// The runtime itself, on the dispatcher.
    Runtime,
    /// The person at the frontend, off the dispatcher.
    Frontend,
    /// A feature the runtime serves itself (`features/`), the one whose registration
    /// lists the method.
    Feature,
    /// The embedder, as an event (notifications only).
    Embedder,
}

/// Declares the host methods: each row names the variant, request or notification,
/// the wire name, who answers it, and the API versions that carry it.
macro_rules! host_methods {
    ($(
        $(#[$doc:meta])*
        $variant:ident = $shape:ident $name:literal, $answerer:ident, apis $apis:expr;
    )*) => {
        /// An extension-to-host method the host answers without a bound request
        /// service.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub(super) enum HostMethod {
            $($(#[$doc])* $variant,)*
        }

        impl HostMethod {
            /// Every host method, in the order of their rows.
            pub(super) const ALL: &'static [HostMethod] = &[$(HostMethod::$variant,)*];

            /// The wire name.
            pub(super) fn name(self) -> &'static str {
                match self {
                    $(HostMethod::$variant => $name,)*
                }
            }

            /// Request or notification.
            pub(super) fn shape(self) -> Shape {
                match self {
                    $(HostMethod::$variant => host_shape!($shape),)*
                }
            }

            /// Who answers it.
            pub(super) fn answerer(self) -> Answerer {
                match self {
                    $(HostMethod::$variant => Answerer::$answerer,)*
                }
            }

            /// The API versions that carry it.
            pub(super) fn apis(self) -> &'static [ApiVersion] {
                match self {
                    $(HostMethod::$variant => $apis,)*
                }
            }
        }
    };
}

/// A row's shape keyword as a [`Shape`].
macro_rules! host_shape {
    (request) => {
        Shape::Request
    };
    (notification) => {
        Shape::Notification
    };
}

host_methods! {
    /// `policy/evaluate` (section 2.9): the policy engine, and the approver for `ask`.
    PolicyEvaluate = request "policy/evaluate", Broker, apis ALL_APIS;
    /// `secret/get` (section 2.10): the secret broker; the answer is wiped.
    SecretGet = request "secret/get", Broker, apis ALL_APIS;
    /// `provider/credentials` (section 1.1): the credential resolver; the answer is
    /// wiped.
    ProviderCredentials = request "provider/credentials", Broker, apis ALL_APIS;
    /// `artifact/publish` (section 2.8): the generation's artifact store.
    ArtifactPublish = request "artifact/publish", Runtime, apis ALL_APIS;
    /// `tools/register` (section 2.11): the next catalog epoch.
    ToolsRegister = request "tools/register", Runtime, apis ALL_APIS;
    /// `tools/unregister` (section 2.12): the next catalog epoch.
    ToolsUnregister = request "tools/unregister", Runtime, apis ALL_APIS;
    /// `composition/context` (section 2.25): the frozen outer-call snapshot.
    CompositionContext = request "composition/context", Feature, apis V0_4_APIS;
    /// `composition/call` (section 2.25): one nested call on another tool.
    CompositionCall = request "composition/call", Feature, apis V0_4_APIS;
    /// `composition/store` (section 2.25): the parent's one write to its store.
    CompositionStore = request "composition/store", Feature, apis V0_4_APIS;
    /// `resource/register` (section 2.26): a provisional native resource value.
    ResourceRegister = request "resource/register", Feature, apis V0_4_APIS;
    /// `resource/release` (section 2.26): retires a value; its dispose follows.
    ResourceRelease = request "resource/release", Feature, apis V0_4_APIS;
    /// `bulk/write` (section 2.27): a write ticket and its locator.
    BulkWrite = request "bulk/write", Feature, apis V0_4_APIS;
    /// `bulk/commit` (section 2.27): the ticket's file, snapshot and verified.
    BulkCommit = request "bulk/commit", Feature, apis V0_4_APIS;
    /// `bulk/read` (section 2.27): a read lease on a blob.
    BulkRead = request "bulk/read", Feature, apis V0_4_APIS;
    /// `bulk/release` (section 2.27): ends a ticket or a lease.
    BulkRelease = request "bulk/release", Feature, apis V0_4_APIS;
    /// `confirmation/request` (section 2.2): a yes or no from the person.
    ConfirmationRequest = request "confirmation/request", Frontend, apis ALL_APIS;
    /// `input/request` (section 2.7): a line of text from the person, perhaps secret.
    InputRequest = request "input/request", Frontend, apis V0_2_FIELDS_APIS;
    /// `notification` (section 2.1).
    Notification = notification "notification", Embedder, apis ALL_APIS;
    /// `context/contribution` (section 2.3).
    ContextContribution = notification "context/contribution", Embedder, apis ALL_APIS;
    /// `status/contribution` (section 2.4).
    StatusContribution = notification "status/contribution", Embedder, apis ALL_APIS;
    /// `provider/event` (API 0.3, `provider_catalog`): a provider's stream event.
    ProviderEvent = notification "provider/event", Embedder, apis ALL_APIS;
    /// `$/progress` (section 2.6): progress of an active host request.
    Progress = notification "$/progress", Runtime, apis ALL_APIS;
    /// `$/cancelRequest` (section 1.9): the extension withdraws its own request.
    CancelRequest = notification "$/cancelRequest", Runtime, apis ALL_APIS;
    /// `presentation/update` (section 2.5): a presentation snapshot.
    PresentationUpdate = notification "presentation/update", Runtime, apis ALL_APIS;
}

impl HostMethod {
    /// The host method of this name and shape on `api`.
    fn resolve(name: &str, shape: Shape, api: ApiVersion) -> Option<HostMethod> {
        HostMethod::ALL
            .iter()
            .copied()
            .find(|m| m.name() == name && m.shape() == shape && m.apis().contains(&api))
    }
}

/// Where one message of an extension goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Route {
    /// A row of the method table, to its bound service (or refused by the row's own
    /// rules when nothing serves it on this connection).
    Bound(ServiceMethod),
    /// A host method.
    Host(HostMethod),
}

impl Route {
    /// The route of a request. A name of the method table that this connection does
    /// not speak (another API version, a feature that was not negotiated) still
    /// routes to its row, which refuses it with its own token.
    pub(super) fn request(
        name: &str,
        api: ApiVersion,
        features: &FeatureSet,
        params: Option<&Value>,
    ) -> Option<Route> {
        if let Some(host) = HostMethod::resolve(name, Shape::Request, api) {
            return Some(Route::Host(host));
        }
        ServiceMethod::resolve(name, api, features, params)
            .or_else(|| ServiceMethod::from_name(name))
            .map(Route::Bound)
    }

    /// The route of a notification: a notification row of the method table this
    /// connection speaks, or a host notification.
    pub(super) fn notification(
        name: &str,
        api: ApiVersion,
        features: &FeatureSet,
        params: &Value,
    ) -> Option<Route> {
        if let Some(method) = ServiceMethod::resolve(name, api, features, Some(params))
            .filter(|m| m.is_notification())
        {
            return Some(Route::Bound(method));
        }
        HostMethod::resolve(name, Shape::Notification, api).map(Route::Host)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_host_method_shares_a_name_with_the_method_table() {
        for host in HostMethod::ALL {
            assert!(
                ServiceMethod::ALL.iter().all(|m| m.name() != host.name()),
                "{} is declared twice",
                host.name()
            );
        }
    }

    #[test]
    fn requests_and_notifications_resolve_by_shape_and_api() {
        let none = FeatureSet::default();
        assert_eq!(
            Route::request("secret/get", ApiVersion::V0_2, &none, None),
            Some(Route::Host(HostMethod::SecretGet))
        );
        assert_eq!(
            Route::request("input/request", ApiVersion::V0_1, &none, None),
            None
        );
        assert_eq!(
            Route::request("$/progress", ApiVersion::V0_2, &none, None),
            None,
            "a notification's name is no request"
        );
        assert_eq!(
            Route::notification("$/progress", ApiVersion::V0_4, &none, &Value::Null),
            Some(Route::Host(HostMethod::Progress))
        );
        assert_eq!(
            Route::request("composer/get", ApiVersion::V0_4, &none, None),
            Some(Route::Bound(ServiceMethod::ComposerGet)),
            "an unnegotiated row still routes to its own refusal"
        );
        assert_eq!(
            Route::request("nope/nothing", ApiVersion::V0_4, &none, None),
            None
        );
    }

    #[test]
    fn every_feature_method_is_registered_by_exactly_one_feature() {
        for host in HostMethod::ALL {
            let registered = super::super::features::FEATURES
                .iter()
                .filter(|feature| feature.methods().contains(host))
                .count();
            let expected = usize::from(host.answerer() == Answerer::Feature);
            assert_eq!(registered, expected, "{}", host.name());
        }
    }

    #[test]
    fn every_answerer_is_used_by_its_shape() {
        for host in HostMethod::ALL {
            if host.answerer() == Answerer::Embedder {
                assert_eq!(host.shape(), Shape::Notification, "{}", host.name());
            }
            if matches!(host.answerer(), Answerer::Broker | Answerer::Frontend) {
                assert_eq!(host.shape(), Shape::Request, "{}", host.name());
            }
        }
    }
}
