//! The host's brokers, answered by `serve`'s client: the policy engine
//! (`policy/evaluate`), the approver (`policy/approve`), the secret broker
//! (`secret/get`) and the credential resolver (`provider/credentials`).
//!
//! The runtime has checked the extension's request (negotiated feature, closed params,
//! live parent and its owner, the manifest's allowlist) before a line is written, and
//! turns the client's answer into the extension's answer exactly as it does an embedded
//! broker's. Each forwarder blocks the broker's own thread until the client answers or
//! the answer is no longer wanted. Whatever goes wrong fails closed: no answer denies
//! the intent and leaves the secret or credential unavailable.
//!
//! Secret values travel only in the client's `service_answer` line and the frame to the
//! extension, which the writer wipes: never in a reply, a diagnostic, an event or a log.

use std::sync::Arc;

use serde_json::{json, Value};

use super::bindings::Broker;
use super::services::ServeServices;
use crate::model::events::GenerationRef;
use crate::services::bound::ServiceBindings;
use crate::services::{
    Approval, Approver, BrokerError, CredentialRequest, CredentialResolver, Decision, Intent,
    PolicyEngine, PolicyRequest, ProviderCredential, ResourceOwner, SecretBroker, SecretRequest,
    SecretValue,
};

/// `bindings` with `broker` answered by the client of `services`.
pub(crate) fn bind(
    bindings: ServiceBindings,
    broker: Broker,
    services: &Arc<ServeServices>,
) -> ServiceBindings {
    let forward = Forward(services.clone());
    match broker {
        Broker::Policy => bindings.policy(forward),
        Broker::Approvals => bindings.approver(forward),
        Broker::Secrets => bindings.secrets(forward),
        Broker::ProviderCredentials => bindings.credentials(forward),
    }
}

/// Forwards one broker's questions to the client.
struct Forward(Arc<ServeServices>);

impl Forward {
    fn ask(
        &self,
        broker: Broker,
        extension: &str,
        owner: &ResourceOwner,
        parent_request_id: u64,
        params: Value,
        cancelled: Option<&crate::host::CancelFlag>,
    ) -> Option<Result<Value, crate::services::bound::ServiceRefusal>> {
        let source = GenerationRef {
            extension: extension.to_string(),
            generation: owner.process_generation,
        };
        self.0
            .ask_broker(broker, &source, params, owner, parent_request_id, cancelled)
    }
}

/// The intent as the client sees it.
fn intent_json(intent: &Intent) -> Value {
    let hints = intent.adapter_hints();
    json!({
        "intent": {
            "kind": intent.kind(),
            "operation": intent.operation(),
            "target": intent.target(),
            "data_classes": intent.data_classes(),
            "adapter_hints": {"read_only": hints.read_only, "destructive": hints.destructive},
        }
    })
}

impl Forward {
    /// Asks `broker` about the intent of `request`.
    fn ask_intent(
        &self,
        broker: Broker,
        request: &PolicyRequest<'_>,
    ) -> Option<Result<Value, crate::services::bound::ServiceRefusal>> {
        self.ask(
            broker,
            request.extension,
            request.owner,
            request.parent_request_id,
            intent_json(request.intent),
            request.cancelled,
        )
    }
}

impl PolicyEngine for Forward {
    fn evaluate(&self, request: &PolicyRequest<'_>) -> Decision {
        match self.ask_intent(Broker::Policy, request) {
            Some(Ok(result)) => match result["decision"].as_str() {
                Some("allow") => Decision::Allow,
                Some("ask") => Decision::Ask,
                _ => Decision::Deny,
            },
            _ => Decision::Deny,
        }
    }
}

impl Approver for Forward {
    fn approve(&self, request: &PolicyRequest<'_>) -> Approval {
        match self.ask_intent(Broker::Approvals, request) {
            Some(Ok(result)) if result["approved"] == true => Approval::Approved,
            _ => Approval::Declined,
        }
    }
}

/// The string member `name` of a secret-carrying result, taken out of it; what is left
/// is wiped.
fn take_secret(mut result: Value, name: &str) -> Option<SecretValue> {
    let value = match result.get_mut(name).map(Value::take) {
        Some(Value::String(text)) => Some(SecretValue::new(text)),
        _ => None,
    };
    crate::services::wipe_json(&mut result);
    value
}

impl SecretBroker for Forward {
    fn get(&self, request: &SecretRequest<'_>) -> Result<Option<SecretValue>, BrokerError> {
        let answer = self.ask(
            Broker::Secrets,
            request.extension,
            request.owner,
            request.parent_request_id,
            json!({ "name": request.name }),
            request.cancelled,
        );
        match answer {
            Some(Ok(result)) => Ok(take_secret(result, "value")),
            Some(Err(_)) => Err(BrokerError::Refused),
            None => Err(BrokerError::Unreachable),
        }
    }
}

impl CredentialResolver for Forward {
    fn resolve(
        &self,
        request: &CredentialRequest<'_>,
    ) -> Result<Option<ProviderCredential>, BrokerError> {
        let answer = self.ask(
            Broker::ProviderCredentials,
            request.extension,
            request.owner,
            request.parent_request_id,
            json!({ "provider": request.provider, "model": request.model }),
            request.cancelled,
        );
        match answer {
            Some(Ok(result)) => {
                Ok(
                    take_secret(result, "credential").map(|credential| ProviderCredential {
                        provider: request.provider.to_string(),
                        model: request.model.to_string(),
                        credential,
                    }),
                )
            }
            Some(Err(_)) => Err(BrokerError::Refused),
            None => Err(BrokerError::Unreachable),
        }
    }
}
