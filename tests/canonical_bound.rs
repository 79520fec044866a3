//! API 0.3's extension-to-host services on the bound-service mechanism (SUPPLEMENT
//! "API 0.3 (canonical wire)"): `provider_auth`, `provider_catalog` and
//! `session_lifecycle` are offered only when bound, their closed models are checked
//! before the service sees them, and refusals use the fixed 0.3 error table. Against
//! the stdlib-only 0.3 peer, which checks the offer as strictly as upstream.

mod support;

use std::path::{Path, PathBuf};
use std::time::Duration;

use octet_host::host::ServiceBindings;
use octet_host::services::bound::{
    AuthStatus, CatalogRevision, NoParams, ProviderAuthAnswer, ProviderAuthParams,
    ProviderAuthService, ProviderCatalogService, ProviderRef, ProviderRegistration, Reply,
    ServiceCall, SessionId, SessionLifecycleService,
};
use octet_host::{CallOptions, ExtensionHandle};
use serde_json::{json, Value};
use support::*;

/// The 0.3 peer with the tool `ask`, taking the optional capabilities in `select`.
fn peer03(root: &Path, name: &str, select: &str) -> PathBuf {
    let env = format!("OCTET_PEER_SELECT = {select:?}");
    peer03_extension(root, name, "good", &["ask", "seen"], &env)
}

/// The test's services record every call.
#[derive(Clone, Default)]
struct Recorder(Journal);

impl Recorder {
    fn push(&self, line: String) {
        self.0.push(line);
    }
    fn lines(&self) -> Vec<String> {
        self.0.entries()
    }
}

impl ProviderAuthService for Recorder {
    fn request(
        &self,
        _call: ServiceCall,
        params: ProviderAuthParams,
        reply: Reply<ProviderAuthAnswer>,
    ) {
        self.push(format!("auth {} {:?}", params.provider_id, params.action));
        reply.ok(ProviderAuthAnswer {
            status: AuthStatus::Ready,
            lease: Some("lease-1".into()),
        });
    }
    fn revoke(
        &self,
        _call: ServiceCall,
        params: ProviderAuthParams,
        reply: Reply<ProviderAuthAnswer>,
    ) {
        self.push(format!("revoke {}", params.provider_id));
        // A lease longer than the bound: the extension must never see it.
        reply.ok(ProviderAuthAnswer {
            status: AuthStatus::Revoked,
            lease: Some("x".repeat(257)),
        });
    }
}

impl ProviderCatalogService for Recorder {
    fn register(&self, _call: ServiceCall, r: ProviderRegistration, reply: Reply<CatalogRevision>) {
        self.push(format!("register {} {}", r.provider.id, r.models.len()));
        reply.ok(CatalogRevision {
            revision: 1,
            provider_ids: vec![r.provider.id],
            model_ids: r.models.into_iter().map(|m| m.id).collect(),
        });
    }
    fn update(&self, call: ServiceCall, r: ProviderRegistration, reply: Reply<CatalogRevision>) {
        self.register(call, r, reply);
    }
    fn unregister(&self, _call: ServiceCall, params: ProviderRef, reply: Reply<CatalogRevision>) {
        self.push(format!("unregister {}", params.provider_id));
        reply.ok(CatalogRevision {
            revision: 2,
            provider_ids: vec![],
            model_ids: vec![],
        });
    }
    fn complete(&self, _call: ServiceCall, _params: NoParams) {
        self.push("complete".into());
    }
}

impl SessionLifecycleService for Recorder {
    fn create(&self, _call: ServiceCall, _params: NoParams, reply: Reply<SessionId>) {
        self.push("create".into());
        reply.ok(SessionId {
            session_id: "s-2".into(),
        });
    }
    fn fork(&self, _call: ServiceCall, _params: NoParams, reply: Reply<SessionId>) {
        reply.ok(SessionId {
            session_id: "s-3".into(),
        });
    }
    fn reload(&self, _call: ServiceCall, _params: NoParams, reply: Reply<SessionId>) {
        reply.ok(SessionId {
            session_id: "s-1".into(),
        });
    }
    fn switch(&self, _call: ServiceCall, target: SessionId, reply: Reply<SessionId>) {
        self.push(format!("switch {}", target.session_id));
        reply.ok(target);
    }
}

fn ask(ext: &ExtensionHandle, requests: Value) -> Value {
    let options = CallOptions::with_deadline(Duration::from_secs(60));
    let out = ext
        .call_tool("ask", json!({ "requests": requests }), options)
        .unwrap();
    serde_json::from_str(&out.text()).unwrap()
}

fn model(id: &str) -> Value {
    json!({"id": id, "api_name": id, "protocol": "openai_chat", "context_window": 128000,
           "max_output_tokens": 4096, "capabilities": {"tools": true,
           "parallel_tool_calls": false, "structured_output": true, "reasoning": false}})
}

fn registration(models: Vec<Value>) -> Value {
    json!({"provider": {"id": "acme", "label": "Acme", "auth": {"kind": "oauth"}}, "models": models})
}

const ALL: &str = "provider_auth,provider_catalog,session_lifecycle";

#[test]
fn bound_capabilities_are_offered_and_served_with_closed_models() {
    let root = tempfile::tempdir().unwrap();
    let dir = peer03(root.path(), "prov", ALL);
    let recorder = Recorder::default();
    let services = ServiceBindings::new()
        .provider_auth(recorder.clone())
        .provider_catalog(recorder.clone())
        .session_lifecycle(recorder.clone());
    let host = host_builder(root.path(), &[dir])
        .bind(services)
        .build()
        .unwrap();
    let ext = host.start("prov").unwrap();
    let capabilities = &ext
        .info()
        .negotiated
        .contract
        .as_ref()
        .unwrap()
        .capabilities;
    let names: Vec<String> = capabilities.iter().map(|c| c.to_string()).collect();
    for name in ALL.split(',') {
        assert!(
            names.contains(&name.to_string()),
            "{name} not selected: {names:?}"
        );
    }
    let auth = json!({"provider_id": "acme", "action": "authorize", "interactive": false});
    let models_past: Vec<Value> = (0..257).map(|i| model(&format!("m{i}"))).collect();
    let answers = ask(
        &ext,
        json!([
            {"id": "auth", "method": "provider/auth/request", "params": auth},
            {"id": "revoke", "method": "provider/auth/revoke", "params": {"provider_id": "acme", "action": "revoke", "interactive": false}},
            {"id": "auth-extra", "method": "provider/auth/request", "params": {"provider_id": "acme", "action": "authorize", "interactive": false, "parent_request_id": 1}},
            {"id": "auth-long", "method": "provider/auth/request", "params": {"provider_id": "p".repeat(65), "action": "authorize", "interactive": false}},
            {"id": "auth-action", "method": "provider/auth/request", "params": {"provider_id": "acme", "action": "steal", "interactive": false}},
            {"id": "register", "method": "providers/register", "params": registration(vec![model("fast"), model("smart")])},
            {"id": "register-dup", "method": "providers/register", "params": registration(vec![model("fast"), model("fast")])},
            {"id": "register-past", "method": "providers/register", "params": registration(models_past)},
            {"id": "complete", "method": "providers/complete", "params": {}, "notify": true},
            // A notification row sent with an id is still answered, and never served.
            {"id": "complete-as-request", "method": "providers/complete", "params": {}},
            {"id": "unregister", "method": "providers/unregister", "params": {"provider_id": "acme"}},
            {"id": "create", "method": "session/create", "params": {}},
            {"id": "create-extra", "method": "session/create", "params": {"name": "x"}},
            {"id": "switch", "method": "session/switch", "params": {"session_id": "s-9"}},
            {"id": "switch-long", "method": "session/switch", "params": {"session_id": "s".repeat(257)}},
        ]),
    );
    assert_eq!(
        answers["auth"]["result"],
        json!({"status": "ready", "lease": "lease-1"})
    );
    // The service's oversized lease never reached the extension.
    assert_eq!(answers["revoke"]["error"]["code"], -32603, "{answers}");
    // The 0.3 error table's exact message; the detail travels in `data`.
    assert_eq!(answers["revoke"]["error"]["message"], "internal error");
    assert_eq!(
        answers["revoke"]["error"]["data"]["reason"],
        "internal error: the host's provider_auth service answered wrongly"
    );
    for id in [
        "auth-extra",
        "auth-long",
        "auth-action",
        "register-dup",
        "register-past",
        "create-extra",
        "switch-long",
        "complete-as-request",
    ] {
        let error = &answers[id]["error"];
        assert_eq!(error["code"], -32602, "{id}: {answers}");
        assert_eq!(
            error["message"], "invalid params",
            "{id}: the 0.3 table's exact message"
        );
    }
    assert_eq!(
        answers["register"]["result"],
        json!({"revision": 1, "provider_ids": ["acme"], "model_ids": ["fast", "smart"]})
    );
    assert_eq!(answers["unregister"]["result"]["revision"], 2);
    assert_eq!(answers["create"]["result"], json!({"session_id": "s-2"}));
    assert_eq!(answers["switch"]["result"], json!({"session_id": "s-9"}));
    recorder.0.wait_for("complete");
    let lines = recorder.lines();
    assert_eq!(
        lines.iter().filter(|l| *l == "complete").count(),
        1,
        "{lines:?}"
    );
    assert!(
        lines.contains(&"auth acme Authorize".to_string()),
        "{lines:?}"
    );
    assert!(lines.contains(&"register acme 2".to_string()), "{lines:?}");
    assert!(
        !lines.iter().any(|l| l.contains("register acme 257")),
        "{lines:?}"
    );
}

#[test]
fn unbound_capabilities_are_never_offered() {
    let root = tempfile::tempdir().unwrap();
    // The peer would take them all; none is offered, so none is selected.
    let dir = peer03(root.path(), "plain", ALL);
    let host = host_builder(root.path(), &[dir]).build().unwrap();
    let ext = host.start("plain").unwrap();
    let contract = ext.info().negotiated.contract.as_ref().unwrap();
    let names: Vec<String> = contract
        .capabilities
        .iter()
        .map(|c| c.to_string())
        .collect();
    for name in ALL.split(',') {
        assert!(
            !names.contains(&name.to_string()),
            "{name} selected unbound: {names:?}"
        );
    }
    let answers = ask(
        &ext,
        json!([{"id": "create", "method": "session/create", "params": {}}]),
    );
    assert_eq!(answers["create"]["error"]["code"], -32601, "{answers}");
    assert_eq!(
        answers["create"]["error"]["message"],
        "unknown or unnegotiated method"
    );
}

#[test]
fn api_0_3_services_are_not_offered_on_the_feature_wire() {
    let root = tempfile::tempdir().unwrap();
    let dir = services_extension(root.path(), "w", "0.2", "");
    let recorder = Recorder::default();
    let host = host_builder(root.path(), &[dir])
        .bind(ServiceBindings::new().session_lifecycle(recorder.clone()))
        .build()
        .unwrap();
    let ext = host.start("w").unwrap();
    let options = CallOptions::with_deadline(Duration::from_secs(60));
    let out = ext
        .call_tool(
            "ask",
            json!({"requests": [{"id": "c", "method": "session/create", "params": {}}]}),
            options,
        )
        .unwrap();
    let answers: Value = serde_json::from_str(&out.text()).unwrap();
    assert_eq!(answers["c"]["error"]["code"], -32601, "{answers}");
    assert!(recorder.lines().is_empty());
}
