//! Child-session services written from the reference answer with the reference's own
//! result shapes (sections 2.13-2.18): the whole spawn record, `{delivered_to,
//! delivery}`, `{agent_id, agent_path, delivery}`, `{agent_id, agent_path,
//! previous_status, interrupt_requested}` and `{agent_id, shutdown_requested}`. The
//! runtime accepts them beside its minimal shapes, keeps its own values for the members
//! it owns, and refuses a copy that contradicts its records. Through the library here
//! (`Reply::ok_value`); through serve in `serve_agents.rs`.

mod support;

use std::sync::Mutex;

use octet_host::host::{Diagnostic, HostEvent, ServiceBindings};
use octet_host::services::bound::{
    AgentLifetimeService, AgentReport, AgentSend, AgentSessionService, AgentSpawn, AgentSpawned,
    AgentStatus, AgentTarget, FollowUpDelivered, InterruptRequested, MessageDelivered, Reply,
    ServiceCall, StopRequested,
};
use serde_json::json;
use support::agents::*;

/// Answers every method with the reference's whole result. `lie` names a method whose
/// answer names another child (or, for a spawn, another task) than the request's.
struct ReferenceAgents {
    lie: &'static str,
    spawned: Mutex<u64>,
}

impl ReferenceAgents {
    fn new(lie: &'static str) -> ReferenceAgents {
        ReferenceAgents {
            lie,
            spawned: Mutex::new(0),
        }
    }

    /// `target` (an id the runtime resolved) as this service's copy: its own id and
    /// the path it expects, or another child's when it is to lie about `method`.
    fn copy(&self, method: &str, target: &str) -> (String, String) {
        match self.lie == method {
            true => ("ref-999".into(), "/nowhere".into()),
            false => {
                let n: u64 = target.trim_start_matches("ref-").parse().unwrap();
                (target.to_string(), format!("/task-{n}"))
            }
        }
    }
}

fn answered(outcome: Result<(), String>) {
    outcome.expect("the reference's shape is an acceptable answer");
}

impl AgentSessionService for ReferenceAgents {
    fn spawn(&self, call: ServiceCall, params: AgentSpawn, reply: Reply<AgentSpawned>) {
        let n = {
            let mut spawned = self.spawned.lock().unwrap();
            *spawned += 1;
            *spawned
        };
        let agent_id = format!("ref-{n}");
        let task_name = match self.lie {
            "agent/spawn" => "another-task".to_string(),
            _ => params.task_name.clone(),
        };
        let result = json!({
            "agent_id": agent_id,
            "agent_path": format!("/{}", params.task_name),
            "task_name": task_name,
            "profile": params.profile,
            "fingerprint": params.fingerprint,
            "idempotency_key": params.idempotency_key,
            "status": {"state": "running"},
            "policy": params.policy,
            "created_at_ms": 1,
            "started_at_ms": 2,
            "completed_at_ms": null,
            "deadline_at_ms": null,
            "session": null,
            "resolved_model": {"provider": "p", "model": "m", "reasoning": {"type": "off"}},
        });
        // A report before the answer is kept until the answer arrives.
        let reports = call.agent_reports().expect("agent_sessions reports");
        let _ = reports.report(AgentReport::new(&agent_id, AgentStatus::Running));
        answered(reply.ok_value(result));
    }

    fn message(&self, _call: ServiceCall, params: AgentSend, reply: Reply<MessageDelivered>) {
        let (agent_id, _) = self.copy("agent/message", &params.target);
        answered(reply.ok_value(json!({"delivered_to": agent_id, "delivery": "steering"})));
    }

    fn follow_up(&self, _call: ServiceCall, params: AgentSend, reply: Reply<FollowUpDelivered>) {
        let (agent_id, agent_path) = self.copy("agent/follow_up", &params.target);
        answered(reply.ok_value(json!({
            "agent_id": agent_id, "agent_path": agent_path, "delivery": "follow_up",
        })));
    }

    fn interrupt(&self, call: ServiceCall, params: AgentTarget, reply: Reply<InterruptRequested>) {
        let (agent_id, agent_path) = self.copy("agent/interrupt", &params.target);
        let reports = call
            .agent_reports()
            .expect("agent_sessions reports")
            .clone();
        // The service's view of the previous status may lag the runtime's: only its
        // shape is checked.
        answered(reply.ok_value(json!({
            "agent_id": agent_id, "agent_path": agent_path,
            "previous_status": {"state": "pending"}, "interrupt_requested": true,
        })));
        let _ = reports.report(AgentReport::new(&params.target, AgentStatus::Interrupted));
    }
}

impl AgentLifetimeService for ReferenceAgents {
    fn stop(&self, call: ServiceCall, params: AgentTarget, reply: Reply<StopRequested>) {
        let (agent_id, _) = self.copy("agent/stop", &params.target);
        let reports = call
            .agent_reports()
            .expect("agent_sessions reports")
            .clone();
        answered(reply.ok_value(json!({"agent_id": agent_id, "shutdown_requested": true})));
        let _ = reports.report(AgentReport::new(&params.target, AgentStatus::Shutdown));
    }
}

fn reference_host(
    dir: &std::path::Path,
    lie: &'static str,
) -> (octet_host::ExtensionHost, octet_host::ExtensionHandle) {
    let (host, mut exts) = host_on(dir, "0.4", &["peer"], || {
        let service = std::sync::Arc::new(ReferenceAgents::new(lie));
        ServiceBindings::new()
            .agent_sessions(Shared(service.clone()))
            .agent_session_lifetime(Shared(service))
    });
    (host, exts.remove(0))
}

/// One service object behind both bindings.
struct Shared(std::sync::Arc<ReferenceAgents>);

impl AgentSessionService for Shared {
    fn spawn(&self, call: ServiceCall, params: AgentSpawn, reply: Reply<AgentSpawned>) {
        self.0.spawn(call, params, reply)
    }
    fn message(&self, call: ServiceCall, params: AgentSend, reply: Reply<MessageDelivered>) {
        self.0.message(call, params, reply)
    }
    fn follow_up(&self, call: ServiceCall, params: AgentSend, reply: Reply<FollowUpDelivered>) {
        self.0.follow_up(call, params, reply)
    }
    fn interrupt(&self, call: ServiceCall, params: AgentTarget, reply: Reply<InterruptRequested>) {
        self.0.interrupt(call, params, reply)
    }
}

impl AgentLifetimeService for Shared {
    fn stop(&self, call: ServiceCall, params: AgentTarget, reply: Reply<StopRequested>) {
        self.0.stop(call, params, reply)
    }
}

#[test]
fn answers_in_the_references_shapes_are_accepted_and_completed_from_the_records() {
    let dir = tempfile::tempdir().unwrap();
    let (_host, ext) = reference_host(dir.path(), "");
    let spawned = one(&ext, "agent/spawn", spawn_params("task-1", "go"));
    let record = &spawned["result"];
    assert_eq!(record["agent_id"], "ref-1", "{spawned}");
    assert_eq!(record["agent_path"], "/task-1");
    // Host-owned members are the runtime's, not the service's copies.
    assert_ne!(record["created_at_ms"], 1, "{record}");
    assert_eq!(record["status"]["state"], "pending", "{record}");
    // Section 2.13: resolved_model in the record and in the effective policy.
    let resolved = json!({"provider": "p", "model": "m", "reasoning": {"type": "off"}});
    assert_eq!(record["resolved_model"], resolved);
    assert_eq!(record["policy"]["resolved_model"], resolved);
    let list = one(&ext, "agent/list", json!({}));
    assert_eq!(
        list["result"]["agents"][0]["policy"]["resolved_model"],
        resolved
    );

    let message = one(
        &ext,
        "agent/message",
        json!({"target": "/task-1", "message": "m"}),
    );
    assert_eq!(
        message["result"],
        json!({"delivered_to": "ref-1", "delivery": "steering"})
    );
    let follow = one(
        &ext,
        "agent/follow_up",
        json!({"target": "ref-1", "message": "m"}),
    );
    assert_eq!(
        follow["result"],
        json!({"agent_id": "ref-1", "agent_path": "/task-1", "delivery": "follow_up"})
    );
    let interrupt = one(&ext, "agent/interrupt", json!({"target": "ref-1"}));
    assert_eq!(interrupt["result"]["agent_id"], "ref-1", "{interrupt}");
    assert_eq!(interrupt["result"]["interrupt_requested"], true);
    // The runtime's own observation, not the service's lagging copy.
    assert_eq!(
        interrupt["result"]["previous_status"], "running",
        "{interrupt}"
    );

    let second = one(&ext, "agent/spawn", spawn_params("task-2", "go"));
    let stopped = one(
        &ext,
        "agent/stop",
        json!({"target": second["result"]["agent_id"]}),
    );
    assert_eq!(
        stopped["result"],
        json!({"agent_id": "ref-2", "shutdown_requested": true})
    );
}

#[test]
fn a_copy_that_contradicts_the_records_is_refused_with_the_reason() {
    for lie in [
        "agent/spawn",
        "agent/message",
        "agent/follow_up",
        "agent/interrupt",
        "agent/stop",
    ] {
        let dir = tempfile::tempdir().unwrap();
        let (host, ext) = reference_host(dir.path(), lie);
        let events = host.events();
        let spawned = one(&ext, "agent/spawn", spawn_params("task-1", "go"));
        let answer = match lie {
            "agent/spawn" => spawned,
            "agent/message" | "agent/follow_up" => {
                one(&ext, lie, json!({"target": "ref-1", "message": "m"}))
            }
            _ => one(&ext, lie, json!({"target": "ref-1"})),
        };
        assert_eq!(code(&answer), -32603, "{lie}: {answer}");
        // The host is told why before the extension is answered.
        let reason = events
            .try_iter()
            .find_map(|event| match event {
                HostEvent::Diagnostic {
                    diagnostic: Diagnostic::Refused { method, reason },
                    ..
                } if method == lie => Some(reason),
                _ => None,
            })
            .unwrap_or_else(|| panic!("{lie}: no diagnostic"));
        let expected = match lie {
            "agent/spawn" => "task_name",
            _ => "ref-999",
        };
        assert!(reason.contains(expected), "{lie}: {reason}");
    }
}

#[test]
fn members_the_reference_does_not_define_are_still_refused() {
    struct Extra;
    impl AgentSessionService for Extra {
        fn spawn(&self, _call: ServiceCall, _params: AgentSpawn, reply: Reply<AgentSpawned>) {
            let refused = reply.ok_value(json!({"agent_id": "x-1", "session": null, "mood": 1}));
            assert!(refused.unwrap_err().contains("mood"));
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let (_host, exts) = host_on(dir.path(), "0.4", &["peer"], || {
        ServiceBindings::new().agent_sessions(Extra)
    });
    let answer = one(&exts[0], "agent/spawn", spawn_params("t", "go"));
    assert_eq!(code(&answer), -32603, "{answer}");
}
