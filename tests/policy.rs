//! `policy/evaluate` with approval tokens (section 2.9), `secret/get` (section 2.10) and
//! `provider/credentials` (section 1.1), driven through their public entry points with
//! injected clocks.
//!
//! The shared fixtures live here; the rules are tested in `policy/*.rs`.

#[path = "policy/credentials.rs"]
mod credentials;
#[path = "policy/evaluate.rs"]
mod evaluate;
#[path = "policy/redaction.rs"]
mod redaction;
#[path = "policy/secrets.rs"]
mod secrets;

use std::sync::Mutex;
use std::time::{Duration, Instant};

use octet_host::limits::{
    MAX_APPROVAL_TOKENS_PER_GENERATION, MAX_APPROVAL_TOKEN_TTL, MAX_SECRET_VALUE_BYTES,
};
use octet_host::negotiation::{Feature, FeatureSet};
use octet_host::services::{
    policy_evaluate, provider_credentials, secret_get, ActiveParent, Approval, ApprovalToken,
    ApprovalTokens, Approver, BrokerError, CredentialRequest, CredentialResolver, Decision,
    DenyAll, InMemoryCredentialResolver, InMemorySecretBroker, OperationContext, ParamsError,
    PolicyEngine, PolicyRequest, PolicyService, ProviderCredential, Redemption, ResourceOwner,
    RulesEngine, SecretBroker, SecretRequest, SecretValue, ServiceError,
};
use serde_json::{json, Value};

const EXTENSION: &str = "browser";
const SECRET: &str = "sk-live-7f3a-very-secret-value";

fn owner(generation: u64) -> ResourceOwner {
    ResourceOwner {
        session_id: "session-1".into(),
        extension_instance_id: "instance-1".into(),
        process_generation: generation,
    }
}

fn ctx(parent: u64, owner: &ResourceOwner) -> OperationContext<'_> {
    OperationContext {
        cancelled: None,
        extension: EXTENSION,
        parent: Some(ActiveParent {
            parent_request_id: parent,
            owner: Some(owner),
        }),
    }
}

fn features(list: &[Feature]) -> FeatureSet {
    list.iter().copied().collect()
}

fn intent() -> Value {
    json!({
        "kind": "external_side_effect",
        "operation": "browser.submit_form",
        "target": {"origin": "https://example.com", "label": "Publish comment"},
        "data_classes": ["user_text"],
        "adapter_hints": {"read_only": false, "destructive": false}
    })
}

fn params(parent: u64, intent: Value, token: Option<&str>) -> Value {
    let mut params = json!({ "parent_request_id": parent, "intent": intent });
    if let Some(token) = token {
        params["approval_token"] = json!(token);
    }
    params
}

/// Approves everything and records what it was shown.
#[derive(Default)]
struct RecordingApprover {
    seen: Mutex<Vec<(String, ResourceOwner, u64, String)>>,
}

impl Approver for RecordingApprover {
    fn approve(&self, request: &PolicyRequest<'_>) -> Approval {
        self.seen.lock().unwrap().push((
            request.extension.to_owned(),
            request.owner.clone(),
            request.parent_request_id,
            request.intent.operation().to_owned(),
        ));
        Approval::Approved
    }
}

struct Declining;

impl Approver for Declining {
    fn approve(&self, _request: &PolicyRequest<'_>) -> Approval {
        Approval::Declined
    }
}

/// Everything a `policy/evaluate` test needs, with approvals negotiated.
struct Bench {
    engine: RulesEngine,
    approver: RecordingApprover,
    tokens: parking_lot::Mutex<ApprovalTokens>,
    features: FeatureSet,
    now: Instant,
}

impl Bench {
    fn new(decision: Decision) -> Bench {
        Bench {
            engine: RulesEngine::new().with_rule("browser.submit_form", decision),
            approver: RecordingApprover::default(),
            tokens: parking_lot::Mutex::new(ApprovalTokens::new()),
            features: features(&[Feature::PolicyIntents, Feature::Approvals]),
            now: Instant::now(),
        }
    }

    fn evaluate_at(
        &mut self,
        params: &Value,
        ctx: &OperationContext<'_>,
        now: Instant,
    ) -> Result<Value, ServiceError> {
        let service = PolicyService {
            engine: &self.engine,
            approver: Some(&self.approver),
            approvals: Some(&self.tokens),
        };
        policy_evaluate(params, ctx, &self.features, service, now)
    }

    fn evaluate(
        &mut self,
        params: &Value,
        ctx: &OperationContext<'_>,
    ) -> Result<Value, ServiceError> {
        self.evaluate_at(params, ctx, self.now)
    }

    /// Classifies the reference intent as `ask` under parent 2 and returns the token.
    fn approved_token(&mut self, owner: &ResourceOwner) -> String {
        let answer = self
            .evaluate(&params(2, intent(), None), &ctx(2, owner))
            .unwrap();
        assert_eq!(answer["decision"], "ask");
        let token = answer["approval_token"].as_str().unwrap().to_owned();
        assert_eq!(answer.as_object().unwrap().len(), 2);
        token
    }
}

fn decision(answer: &Value) -> &str {
    assert!(
        answer.get("approval_token").is_none(),
        "only an approved ask carries a token: {answer}"
    );
    assert_eq!(answer.as_object().unwrap().len(), 1);
    answer["decision"].as_str().unwrap()
}

fn is_token(text: &str) -> bool {
    text.len() == 64
        && text
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

// Fixtures of `secret/get`.

/// What a scripted broker answers.
type Outcome = fn() -> Result<Option<SecretValue>, BrokerError>;

/// A broker that records requests and answers with a fixed outcome.
struct ScriptedBroker {
    outcome: Outcome,
    seen: Mutex<Vec<(String, ResourceOwner, u64, String)>>,
}

impl ScriptedBroker {
    fn new(outcome: Outcome) -> ScriptedBroker {
        ScriptedBroker {
            outcome,
            seen: Mutex::new(Vec::new()),
        }
    }
}

impl SecretBroker for ScriptedBroker {
    fn get(&self, request: &SecretRequest<'_>) -> Result<Option<SecretValue>, BrokerError> {
        self.seen.lock().unwrap().push((
            request.extension.to_owned(),
            request.owner.clone(),
            request.parent_request_id,
            request.name.to_owned(),
        ));
        (self.outcome)()
    }
}

fn declared() -> Vec<String> {
    vec!["browser.api_token".to_owned(), "_other".to_owned()]
}

fn secret_params(name: &str) -> Value {
    json!({"parent_request_id": 2, "name": name})
}

fn secrets_on() -> FeatureSet {
    features(&[Feature::Secrets])
}

// Fixtures of `provider/credentials`.

/// Answers every request for another identity than the one asked.
struct Widening;

impl CredentialResolver for Widening {
    fn resolve(
        &self,
        _request: &CredentialRequest<'_>,
    ) -> Result<Option<ProviderCredential>, BrokerError> {
        Ok(Some(ProviderCredential {
            provider: "anthropic".into(),
            model: "claude-opus".into(),
            credential: SecretValue::from(SECRET),
        }))
    }
}

struct Failing;

impl CredentialResolver for Failing {
    fn resolve(
        &self,
        _request: &CredentialRequest<'_>,
    ) -> Result<Option<ProviderCredential>, BrokerError> {
        Err(BrokerError::Failed)
    }
}

fn credential_params(provider: &str, model: &str) -> Value {
    json!({"parent_request_id": 2, "provider": provider, "model": model})
}
