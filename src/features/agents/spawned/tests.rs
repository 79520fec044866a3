use super::*;
use serde_json::json;

fn owner(name: &str) -> OwnerKey {
    OwnerKey {
        principal: format!("{name}:sha256:0"),
        resource_owner: "agent-owner:s/i".into(),
    }
}

fn spawn(task: &str, key: Option<&str>) -> AgentSpawn {
    serde_json::from_value(json!({
        "task_name": task, "message": "m", "idempotency_key": key,
        "policy": {"tools": ["read"], "max_depth": 1, "max_concurrent_children": 8,
                   "max_output_bytes": 512}
    }))
    .unwrap()
}

fn spawned(table: &mut AgentTable, owner: &OwnerKey, id: &str, key: Option<&str>) -> Value {
    let request = spawn("task", key);
    assert!(matches!(
        table.admit_spawn(owner, &request),
        Ok(SpawnAdmission::Fresh)
    ));
    let answer = AgentSpawned {
        agent_id: id.into(),
        session: None,
        resolved_model: None,
    };
    table.spawned(owner, request, answer, 1_000, false).unwrap()
}

#[test]
fn the_eight_worker_bound_counts_spawns_in_flight_and_frees_on_settlement() {
    let mut table = AgentTable::default();
    let a = owner("a");
    for n in 0..4 {
        spawned(&mut table, &a, &format!("c{n}"), None);
    }
    for _ in 0..4 {
        assert!(table.admit_spawn(&a, &spawn("t", None)).is_ok());
    }
    let ninth = table.admit_spawn(&a, &spawn("t", None)).err().unwrap();
    assert_eq!(ninth.refusal, Refusal::ResourceExhausted);
    // Another owner has a bound of its own.
    assert!(table.admit_spawn(&owner("b"), &spawn("t", None)).is_ok());
    table.end_spawn(&a, &spawn("t", None));
    assert!(table.admit_spawn(&a, &spawn("t", None)).is_ok());
    let done = AgentStatus::Completed { output: "x".into() };
    table.apply(AgentReport::new("c0", done), 2_000).unwrap();
    assert!(table.admit_spawn(&a, &spawn("t", None)).is_ok());
}

#[test]
fn reports_ahead_of_their_answer_are_applied_in_order_once_it_arrives() {
    let mut table = AgentTable::default();
    let a = owner("a");
    let request = spawn("task", None);
    assert!(table.admit_spawn(&a, &request).is_ok());
    let done = AgentStatus::Completed { output: "x".into() };
    table
        .apply(AgentReport::new("c1", AgentStatus::Running), 1_100)
        .unwrap();
    table.apply(AgentReport::new("c1", done), 1_200).unwrap();
    let answer = AgentSpawned {
        agent_id: "c1".into(),
        session: None,
        resolved_model: None,
    };
    table.spawned(&a, request, answer, 1_000, false).unwrap();
    let record = &table.snapshot(&a)["agents"][0];
    assert_eq!(record["status"]["state"], "completed");
    assert!(record["started_at_ms"].is_u64() && record["completed_at_ms"].is_u64());
    // A new run reported before its follow-up's answer, then its settlement.
    assert!(table.admit_follow_up("c1").is_ok());
    table
        .apply(AgentReport::new("c1", AgentStatus::Running), 2_000)
        .unwrap();
    let again = AgentStatus::Completed { output: "y".into() };
    table.apply(AgentReport::new("c1", again), 2_100).unwrap();
    assert_eq!(table.snapshot(&a)["agents"][0]["status"]["output"], "x");
    table.followed_up("c1", 2_200);
    assert_eq!(table.snapshot(&a)["agents"][0]["status"]["output"], "y");
}

#[test]
fn the_event_log_is_bounded_and_an_expired_cursor_fails() {
    let mut table = AgentTable::default();
    let a = owner("a");
    spawned(&mut table, &a, "c1", None);
    let delta = |text: &str| AgentEvent::OutputDelta {
        channel: crate::services::bound::OutputChannel::Text,
        text: text.into(),
    };
    for _ in 0..crate::limits::MAX_AGENT_EVENT_RECORDS + 1 {
        table.event("c1", delta("x"), 1).unwrap();
    }
    assert!(
        table.events_after("c1", 0).is_err(),
        "the first record was dropped"
    );
    let (batch, empty) = table.events_after("c1", 1).unwrap();
    assert!(!empty);
    assert_eq!(batch["events"][0]["sequence"], 2);
    assert_eq!(
        batch["events"].as_array().unwrap().len(),
        crate::limits::MAX_AGENT_EVENT_BATCH
    );
    assert_eq!(batch["has_more"], true);
    let big = "y".repeat(crate::limits::MAX_AGENT_EVENT_BYTES);
    let sequence = table.event("c1", delta(&big), 2).unwrap();
    let (batch, _) = table.events_after("c1", sequence - 1).unwrap();
    assert_eq!(batch["events"][0]["event"]["kind"], "observation_error");
    assert!(
        table.events_after("c1", sequence + 1).is_err(),
        "a future cursor"
    );
    assert!(table.event("zz", delta("x"), 3).is_err());
}

#[test]
fn an_identical_retry_returns_the_same_child_and_other_input_is_refused() {
    let mut table = AgentTable::default();
    let a = owner("a");
    let first = spawned(&mut table, &a, "c1", Some("k"));
    match table.admit_spawn(&a, &spawn("task", Some("k"))) {
        Ok(SpawnAdmission::Retry(result)) => assert_eq!(result, first),
        _ => panic!("an identical retry is answered from the record"),
    }
    let other = table.admit_spawn(&a, &spawn("other", Some("k"))).err();
    assert_eq!(other.unwrap().refusal, Refusal::NotForegroundOwner);
    // The key is scoped to its owner.
    assert!(matches!(
        table.admit_spawn(&owner("b"), &spawn("other", Some("k"))),
        Ok(SpawnAdmission::Fresh)
    ));
}

#[test]
fn targets_resolve_only_within_their_owner_and_reports_keep_the_bounds() {
    let mut table = AgentTable::default();
    let a = owner("a");
    spawned(&mut table, &a, "c1", None);
    spawned(&mut table, &a, "c2", None);
    assert_eq!(table.resolve(&a, "/task-2").unwrap().agent_id, "c2");
    assert!(table.resolve(&owner("b"), "c1").is_err());
    let mut report = AgentReport::new(
        "c1",
        AgentStatus::Completed {
            output: "é".repeat(400),
        },
    );
    report.recent_tools = (0..9)
        .map(|n| RecentTool {
            name: format!("tool{n}"),
            args: "a\nb".repeat(100),
            started_at_ms: n,
            finished_at_ms: None,
            error: false,
        })
        .collect();
    table.apply(report, 5_000).unwrap();
    let list = table.snapshot(&a);
    let record = &list["agents"][0];
    assert_eq!(record["status"]["output"].as_str().unwrap().len(), 512);
    assert_eq!(record["completed_at_ms"], 5_000);
    let tools = record["recent_tools"].as_array().unwrap();
    assert_eq!(tools.len(), MAX_AGENT_RECENT_TOOLS);
    assert_eq!(tools[0]["name"], "tool3");
    let args = tools[0]["args"].as_str().unwrap();
    assert!(args.len() <= MAX_AGENT_TOOL_ARGS_BYTES && !args.contains('\n'));
    assert_eq!(table.snapshot(&owner("b"))["agents"], json!([]));
    // A settled child runs again only after an accepted new-run follow-up.
    let running = AgentReport::new("c1", AgentStatus::Running);
    assert!(table.apply(running.clone(), 6_000).is_err());
    assert!(table.admit_follow_up("c1").is_ok());
    table.followed_up("c1", 6_000);
    table.apply(running, 6_000).unwrap();
    table
        .apply(AgentReport::new("c1", AgentStatus::Shutdown), 7_000)
        .unwrap();
    let again = table.apply(AgentReport::new("c1", AgentStatus::Running), 8_000);
    assert!(again.is_err());
    assert!(table.admit_follow_up("c1").is_err());
    assert!(table
        .apply(AgentReport::new("zz", AgentStatus::Running), 0)
        .is_err());
}

#[test]
fn a_retired_owner_keeps_its_records_until_its_next_run_prunes_the_settled_ones() {
    let mut table = AgentTable::default();
    let a = owner("a");
    let mut other = owner("a");
    other.resource_owner = "agent-owner:other/i".into();
    spawned(&mut table, &a, "settled", Some("k"));
    spawned(&mut table, &a, "running", Some("r"));
    spawned(&mut table, &other, "elsewhere", Some("k"));
    let done = AgentStatus::Completed {
        output: "ok".into(),
    };
    table
        .apply(AgentReport::new("settled", done.clone()), 2_000)
        .unwrap();
    table
        .apply(AgentReport::new("elsewhere", done), 2_000)
        .unwrap();
    assert!(table.retire(&a.resource_owner));
    assert!(
        !table.retire(&a.resource_owner),
        "retiring twice is a no-op"
    );
    assert!(table.is_retired(&a) && !table.is_retired(&other));
    // Retirement alone drops nothing: the owner still observes its trees.
    assert_eq!(table.snapshot(&a)["agents"].as_array().unwrap().len(), 2);
    table.begin_run(&a.resource_owner);
    assert!(!table.is_retired(&a));
    let left: Vec<Value> = table.snapshot(&a)["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["agent_id"].clone())
        .collect();
    assert_eq!(
        left,
        vec![json!("running")],
        "a child still winding down stays"
    );
    // The pruned child's key spawns afresh; another session's key is untouched.
    assert!(matches!(
        table.admit_spawn(&a, &spawn("task", Some("k"))),
        Ok(SpawnAdmission::Fresh)
    ));
    assert!(matches!(
        table.admit_spawn(&other, &spawn("task", Some("k"))),
        Ok(SpawnAdmission::Retry(_))
    ));
    // A run that begins without a retirement before it changes nothing.
    table.begin_run(&other.resource_owner);
    assert_eq!(
        table.snapshot(&other)["agents"].as_array().unwrap().len(),
        1
    );
}

#[test]
fn without_an_event_service_the_runtime_logs_each_runs_end_once() {
    let kinds = |table: &AgentTable, id: &str| -> Vec<String> {
        let (batch, _) = table.events_after(id, 0).unwrap();
        batch["events"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["event"]["kind"].as_str().unwrap().to_string())
            .collect()
    };
    let mut table = AgentTable::default();
    let a = owner("a");
    for (id, log) in [("logged", true), ("fed", false)] {
        let request = spawn(id, None);
        assert!(table.admit_spawn(&a, &request).is_ok());
        let answer = AgentSpawned {
            agent_id: id.into(),
            session: None,
            resolved_model: None,
        };
        table.spawned(&a, request, answer, 1_000, log).unwrap();
        table
            .apply(AgentReport::new(id, AgentStatus::Running), 1_100)
            .unwrap();
        let done = AgentStatus::Completed { output: "x".into() };
        table.apply(AgentReport::new(id, done), 1_200).unwrap();
        // The service's own run_finished, after its report: never a second one.
        let end = AgentEvent::RunFinished {
            reason: RunFinish::Completed,
        };
        table.event(id, end, 1_300).unwrap();
    }
    assert_eq!(kinds(&table, "logged"), ["run_finished"]);
    // With an event service the log is the service's alone.
    assert_eq!(kinds(&table, "fed"), ["run_finished"]);
    let (batch, _) = table.events_after("logged", 0).unwrap();
    assert_eq!(batch["events"][0]["event"]["timestamp"], 1_200);
    let (batch, _) = table.events_after("fed", 0).unwrap();
    assert_eq!(batch["events"][0]["event"]["timestamp"], 1_300);
}
