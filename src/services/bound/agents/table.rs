//! The records of every child spawned through the host (sections 2.13-2.18), keyed by
//! `agent_id`, and the idempotency keys of each owner.

use std::collections::{HashMap, HashSet, VecDeque};

use serde_json::Value;

use super::record::{cut, flatten, same_input, EventLog, OwnerKey, Record};
use crate::limits::{
    MAX_AGENT_ERROR_BYTES, MAX_AGENT_EVENT_BATCH, MAX_AGENT_EVENT_BATCH_BYTES,
    MAX_AGENT_QUEUED_FOLLOW_UPS, MAX_AGENT_RECENT_TOOLS, MAX_AGENT_RECORDS, MAX_AGENT_TEXT_BYTES,
    MAX_AGENT_TOOL_ARGS_BYTES, MAX_AGENT_WORKERS,
};
use crate::services::bound::{
    AgentEvent, AgentEventBatch, AgentEventRecord, AgentList, AgentPhase, AgentReport, AgentSpawn,
    AgentSpawned, AgentStatus, AgentUsage, RecentTool, Refusal, ReportError, ServiceRefusal,
};

/// What an owner's `agent/spawn` may do.
pub(crate) enum SpawnAdmission {
    /// A new child: the service spawns it.
    Fresh,
    /// An identical retry of a retained child: its result, without the service.
    Retry(Value),
}

/// A target resolved within its owner's trees.
pub(crate) struct Resolved {
    pub agent_id: String,
    pub agent_path: String,
    pub status: &'static str,
}

/// Every child's record, and each owner's idempotency keys and spawns in flight.
#[derive(Default)]
pub(crate) struct AgentTable {
    records: HashMap<String, Record>,
    /// `agent_id`s in spawn order.
    order: Vec<String>,
    /// `(owner, idempotency_key)` → `agent_id`.
    idempotency: HashMap<(OwnerKey, String), String>,
    /// Spawns the service has not answered yet, per owner.
    spawning: HashMap<OwnerKey, usize>,
    /// Idempotency keys of spawns in flight (a second spawn with one is refused).
    spawning_keys: HashSet<(OwnerKey, String)>,
    /// Reports that came before the answer they follow reached the dispatcher (a
    /// service reports from its own thread): a child's reports before its spawn
    /// answer, or a new run before the follow-up's answer. Kept in order per
    /// `agent_id`, at most [`MAX_EARLY_REPORTS`] in all, and applied once the answer
    /// is; every later report of that child queues behind them.
    early: HashMap<String, Vec<(AgentReport, u64)>>,
    /// Events that came before their child's spawn answer, kept the same way.
    early_events: HashMap<String, Vec<(AgentEvent, u64)>>,
}

/// Reports kept for children whose answer is still on its way.
const MAX_EARLY_REPORTS: usize = 256;

impl AgentTable {
    /// Admits `spawn` for `owner`: an identical retry of a retained child is answered
    /// from its record; the same key with other input, a retry still in flight and a
    /// ninth unsettled child are refused. A fresh spawn counts against the eight-worker
    /// bound until [`AgentTable::spawned`] or [`AgentTable::end_spawn`].
    pub fn admit_spawn(
        &mut self,
        owner: &OwnerKey,
        spawn: &AgentSpawn,
    ) -> Result<SpawnAdmission, ServiceRefusal> {
        if let Some(key) = &spawn.idempotency_key {
            let scoped = (owner.clone(), key.clone());
            if let Some(agent_id) = self.idempotency.get(&scoped) {
                match self.records.get(agent_id) {
                    Some(record) if same_input(&record.spawn, spawn) => {
                        return Ok(SpawnAdmission::Retry(record.spawned.clone()));
                    }
                    Some(_) => {
                        return Err(Refusal::NotForegroundOwner.because(format!(
                            "idempotency_key `{key}` was used for another spawn (a different \
                             task_name, profile, fingerprint, message or policy)"
                        )))
                    }
                    // The record was pruned: the stale key goes with it.
                    None => {
                        self.idempotency.remove(&scoped);
                    }
                }
            }
            if self.spawning_keys.contains(&scoped) {
                return Err(Refusal::NotForegroundOwner.because(format!(
                    "a spawn with idempotency_key `{key}` is still in flight; retry once it settled"
                )));
            }
        }
        self.prune();
        let in_flight: usize = self.spawning.values().sum();
        if self.records.len() + in_flight >= MAX_AGENT_RECORDS {
            return Err(Refusal::ResourceExhausted.because(format!(
                "the host keeps at most {MAX_AGENT_RECORDS} child records and none has settled"
            )));
        }
        let live = self.unsettled(owner) + self.spawning.get(owner).copied().unwrap_or(0);
        if live >= MAX_AGENT_WORKERS as usize {
            return Err(Refusal::ResourceExhausted.because(format!(
                "this owner already has {MAX_AGENT_WORKERS} children pending or running \
                 (spawns in flight included); wait for one to settle"
            )));
        }
        *self.spawning.entry(owner.clone()).or_default() += 1;
        if let Some(key) = &spawn.idempotency_key {
            self.spawning_keys.insert((owner.clone(), key.clone()));
        }
        Ok(SpawnAdmission::Fresh)
    }

    /// The service answered a fresh spawn the runtime admitted at `created` (ms since
    /// the epoch): the child's record, and the result the extension sees. An
    /// `agent_id` the host already records is a broken answer.
    pub fn spawned(
        &mut self,
        owner: &OwnerKey,
        spawn: AgentSpawn,
        answer: AgentSpawned,
        created: u64,
    ) -> Result<Value, String> {
        let early = self.early.remove(&answer.agent_id);
        let early_events = self.early_events.remove(&answer.agent_id);
        let answer_id = answer.agent_id.clone();
        self.end_spawn(owner, &spawn);
        if self.records.contains_key(&answer.agent_id) {
            return Err(format!(
                "agent_id `{}` is already a child of this host; every spawn needs a new id",
                answer.agent_id
            ));
        }
        self.prune();
        let agent_path = self.free_path(owner, &spawn.task_name);
        let deadline_at_ms = spawn.policy.timeout_ms.map(|ms| created.saturating_add(ms));
        if let Some(key) = &spawn.idempotency_key {
            self.idempotency
                .insert((owner.clone(), key.clone()), answer.agent_id.clone());
        }
        let mut record = Record {
            owner: owner.clone(),
            agent_id: answer.agent_id.clone(),
            agent_path,
            spawn,
            spawned: Value::Null,
            session: answer.session,
            status: AgentStatus::Pending,
            created_at_ms: created,
            started_at_ms: None,
            completed_at_ms: None,
            deadline_at_ms,
            turn_count: 0,
            tool_call_count: 0,
            phase: None,
            tool_name: None,
            recent_tools: VecDeque::new(),
            usage: AgentUsage::default(),
            cost_microdollars: None,
            follow_ups: 0,
            follow_ups_in_flight: 0,
            interrupting: false,
            resolved_model: answer.resolved_model,
            events: EventLog::default(),
        };
        let result = record.spawn_result();
        record.spawned = result.clone();
        self.order.push(answer.agent_id.clone());
        self.records.insert(answer.agent_id, record);
        // What the service reported before its answer arrived; a report that breaks
        // the rules is dropped as it would have been refused.
        for (report, at) in early.into_iter().flatten() {
            let _ = self.apply(report, at);
        }
        for (event, at) in early_events.into_iter().flatten() {
            let _ = self.event(&answer_id, event, at);
        }
        Ok(result)
    }

    /// A fresh spawn is no longer in flight (answered, refused, failed, dropped): it no
    /// longer counts against the bound, and its idempotency key is free again.
    pub fn end_spawn(&mut self, owner: &OwnerKey, spawn: &AgentSpawn) {
        if let Some(n) = self.spawning.get_mut(owner) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.spawning.remove(owner);
            }
        }
        if self.spawning.is_empty() {
            // No spawn answer is on its way: reports for unknown children go.
            let records = &self.records;
            self.early.retain(|id, _| records.contains_key(id));
            self.early_events.clear();
        }
        if let Some(key) = &spawn.idempotency_key {
            self.spawning_keys.remove(&(owner.clone(), key.clone()));
        }
    }

    /// Resolves `target` (an `agent_id` or `agent_path`) within `owner`'s trees: a
    /// child of another extension or owner is never found.
    pub fn resolve(&self, owner: &OwnerKey, target: &str) -> Result<Resolved, ServiceRefusal> {
        let record = self
            .records
            .get(target)
            .filter(|r| &r.owner == owner)
            .or_else(|| {
                self.records
                    .values()
                    .find(|r| &r.owner == owner && r.agent_path == target)
            })
            .ok_or_else(|| {
                Refusal::NotForegroundOwner.because(format!(
                    "no child `{target}` in this extension's trees for this owner"
                ))
            })?;
        Ok(Resolved {
            agent_id: record.agent_id.clone(),
            agent_path: record.agent_path.clone(),
            status: record.status.label(),
        })
    }

    /// Resolves `target` like [`AgentTable::resolve`] and rewrites it to the child's
    /// `agent_id`, which is what the service is handed.
    pub fn resolve_into(
        &self,
        owner: &OwnerKey,
        target: &mut String,
    ) -> Result<Resolved, ServiceRefusal> {
        let resolved = self.resolve(owner, target)?;
        target.clone_from(&resolved.agent_id);
        Ok(resolved)
    }

    /// Admits a follow-up for the resolved `agent_id`: not to a shut-down child, not
    /// while an interrupt is in flight, not past a full queue (follow-ups in flight
    /// count). It is in flight until [`AgentTable::followed_up`] or
    /// [`AgentTable::follow_up_failed`].
    pub fn admit_follow_up(&mut self, agent_id: &str) -> Result<(), ServiceRefusal> {
        let Some(record) = self.records.get_mut(agent_id) else {
            return Err(Refusal::NotForegroundOwner.because("the child's record is gone"));
        };
        if record.status == AgentStatus::Shutdown {
            return Err(Refusal::NotForegroundOwner.because(format!(
                "child `{agent_id}` was shut down; it takes no follow-up"
            )));
        }
        if record.interrupting {
            return Err(Refusal::NotForegroundOwner.because(format!(
                "an interrupt of child `{agent_id}` is in flight; follow up once it settled"
            )));
        }
        let queued = record.follow_ups + record.follow_ups_in_flight;
        if queued as usize >= MAX_AGENT_QUEUED_FOLLOW_UPS {
            return Err(Refusal::ResourceExhausted.because(format!(
                "child `{agent_id}` already has {MAX_AGENT_QUEUED_FOLLOW_UPS} follow-ups queued"
            )));
        }
        record.follow_ups_in_flight += 1;
        Ok(())
    }

    /// An admitted follow-up ended without being accepted.
    pub fn follow_up_failed(&mut self, agent_id: &str) {
        if let Some(record) = self.records.get_mut(agent_id) {
            record.follow_ups_in_flight = record.follow_ups_in_flight.saturating_sub(1);
            if record.follow_ups_in_flight == 0 {
                self.early.remove(agent_id);
            }
        }
    }

    /// The service accepted a follow-up (a `new_run` or one queued on the running
    /// child): it is queued until a run starts for it, and lets the settled child run
    /// again.
    pub fn followed_up(&mut self, agent_id: &str, now: u64) {
        if let Some(record) = self.records.get_mut(agent_id) {
            record.follow_ups_in_flight = record.follow_ups_in_flight.saturating_sub(1);
            record.follow_ups += 1;
        }
        // The new run the service reported before its answer arrived.
        for (report, at) in self.early.remove(agent_id).into_iter().flatten() {
            let _ = self.apply(report, at.min(now));
        }
    }

    /// The service accepted an interrupt: follow-ups wait until the child settles.
    pub fn interrupted(&mut self, agent_id: &str, requested: bool) {
        if let Some(record) = self.records.get_mut(agent_id) {
            record.interrupting |= requested && record.status.is_unsettled();
        }
    }

    /// Appends `event` to the log of child `agent_id` at `now`: its sequence (0 while
    /// it waits for the child's spawn answer).
    pub fn event(
        &mut self,
        agent_id: &str,
        event: AgentEvent,
        now: u64,
    ) -> Result<u64, ReportError> {
        let Some(record) = self.records.get_mut(agent_id) else {
            let queued: usize = self.early_events.values().map(Vec::len).sum();
            if !self.spawning.is_empty() && queued < MAX_EARLY_REPORTS {
                let queue = self.early_events.entry(agent_id.to_string()).or_default();
                queue.push((event, now));
                return Ok(0);
            }
            return Err(ReportError::UnknownAgent(agent_id.to_string()));
        };
        let body = serde_json::to_value(&event).expect("events serialize");
        Ok(record.events.push(body, now))
    }

    /// The `agent/events` result for child `agent_id` after cursor `after` (section
    /// 2.18): at most [`MAX_AGENT_EVENT_BATCH`] records and
    /// [`MAX_AGENT_EVENT_BATCH_BYTES`] of bodies, and whether it holds none. A cursor
    /// ahead of the log, or before what it still retains, is refused.
    pub fn events_after(
        &self,
        agent_id: &str,
        after: u64,
    ) -> Result<(Value, bool), ServiceRefusal> {
        let Some(record) = self.records.get(agent_id) else {
            return Err(Refusal::NotForegroundOwner.because("the child's record is gone"));
        };
        let log = &record.events;
        if after > log.last {
            return Err(Refusal::Unavailable.because(format!(
                "after_sequence {after} is ahead of the log, whose last record is {}",
                log.last
            )));
        }
        if after + 1 < log.first() {
            return Err(Refusal::Unavailable.because(format!(
                "after_sequence {after} has expired: the log keeps records from {} on",
                log.first()
            )));
        }
        let mut events = Vec::new();
        let mut bytes = 0;
        let mut next = after;
        for (seq, body, size) in log.records.iter().filter(|(seq, _, _)| *seq > after) {
            if events.len() == MAX_AGENT_EVENT_BATCH || bytes + size > MAX_AGENT_EVENT_BATCH_BYTES {
                break;
            }
            bytes += size;
            next = *seq;
            events.push(AgentEventRecord {
                sequence: *seq,
                event: body.clone(),
            });
        }
        let empty = events.is_empty();
        let batch = AgentEventBatch {
            agent_id: record.agent_id.clone(),
            session_id: record.session.clone(),
            events,
            next_sequence: next,
            has_more: next < log.last,
            status: record.status.clone(),
        };
        let result = serde_json::to_value(batch).expect("records serialize");
        Ok((result, empty))
    }

    /// True when child `agent_id` is settled (or gone): no run will add to its log.
    pub fn is_settled(&self, agent_id: &str) -> bool {
        self.records.get(agent_id).is_none_or(|r| !r.is_active())
    }

    /// How many of `owner`'s children are pending or running, a settled child whose
    /// accepted follow-up has not started its run yet included (`agent/wait` waits for
    /// that run).
    pub fn unsettled(&self, owner: &OwnerKey) -> usize {
        self.records
            .values()
            .filter(|r| &r.owner == owner && r.is_active())
            .count()
    }

    /// The ids of `owner`'s children still active, in spawn order.
    pub fn active_of(&self, owner: &OwnerKey) -> Vec<String> {
        self.order
            .iter()
            .filter_map(|id| self.records.get(id))
            .filter(|r| &r.owner == owner && r.is_active())
            .map(|r| r.agent_id.clone())
            .collect()
    }

    /// The `agent/list` result for `owner` (section 2.16): only its roots and their
    /// descendants, in spawn order.
    pub fn snapshot(&self, owner: &OwnerKey) -> Value {
        let list = AgentList {
            principal: owner.principal.clone(),
            resource_owner: owner.resource_owner.clone(),
            agents: self
                .order
                .iter()
                .filter_map(|id| self.records.get(id))
                .filter(|r| &r.owner == owner)
                .map(Record::list_record)
                .collect(),
            persistence_error: None,
        };
        serde_json::to_value(list).expect("records serialize")
    }

    /// Applies a service's report at `now`, normalized to the protocol's bounds.
    pub fn apply(&mut self, report: AgentReport, now: u64) -> Result<(), ReportError> {
        let room = self.early.values().map(Vec::len).sum::<usize>() < MAX_EARLY_REPORTS;
        if let Some(queued) = self.early.get_mut(&report.agent_id) {
            if room {
                queued.push((report, now));
                return Ok(());
            }
        }
        let Some(record) = self.records.get_mut(&report.agent_id) else {
            if room && !self.spawning.is_empty() {
                self.early
                    .insert(report.agent_id.clone(), vec![(report, now)]);
                return Ok(());
            }
            return Err(ReportError::UnknownAgent(report.agent_id));
        };
        let from = &record.status;
        let to = &report.status;
        let refused = || ReportError::Transition {
            agent_id: report.agent_id.clone(),
            from: from.label(),
            to: to.label(),
        };
        match (from.is_unsettled(), to.is_unsettled()) {
            _ if *from == AgentStatus::Shutdown && *to != AgentStatus::Shutdown => {
                return Err(refused())
            }
            (false, true) if record.follow_ups == 0 && record.follow_ups_in_flight > 0 => {
                // A new run reported before the follow-up's answer reached the
                // dispatcher: applied once it does.
                if room {
                    self.early
                        .insert(report.agent_id.clone(), vec![(report, now)]);
                    return Ok(());
                }
                return Err(refused());
            }
            (false, true) if record.follow_ups == 0 => return Err(refused()),
            (false, false) if *from != *to && *to != AgentStatus::Shutdown => return Err(refused()),
            _ => {}
        }
        if !from.is_unsettled() && to.is_unsettled() {
            // A resumed run (section 2.15): a new start, and an expired deadline is
            // re-anchored from the requested timeout.
            record.follow_ups -= 1;
            record.started_at_ms = None;
            record.completed_at_ms = None;
            if let (Some(deadline), Some(timeout)) =
                (record.deadline_at_ms, record.spawn.policy.timeout_ms)
            {
                if deadline <= now {
                    record.deadline_at_ms = Some(now.saturating_add(timeout));
                }
            }
        }
        if *to == AgentStatus::Running && record.started_at_ms.is_none() {
            record.started_at_ms = Some(now);
        }
        if !to.is_unsettled() {
            record.completed_at_ms.get_or_insert(now);
            record.interrupting = false;
        }
        let output_bytes = record.spawn.policy.max_output_bytes as usize;
        record.status = match report.status {
            AgentStatus::Completed { output } => AgentStatus::Completed {
                output: cut(&output, output_bytes).to_string(),
            },
            AgentStatus::Failed { error } => AgentStatus::Failed {
                error: cut(&error, MAX_AGENT_ERROR_BYTES).to_string(),
            },
            other => other,
        };
        record.turn_count = record.turn_count.max(report.turn_count);
        record.tool_call_count = record.tool_call_count.max(report.tool_call_count);
        record.phase = report.phase.filter(|_| record.status.is_unsettled());
        record.tool_name = report
            .tool_name
            .filter(|_| record.phase == Some(AgentPhase::UsingTool))
            .map(|name| cut(&flatten(&name), MAX_AGENT_TEXT_BYTES).to_string());
        let skip = report
            .recent_tools
            .len()
            .saturating_sub(MAX_AGENT_RECENT_TOOLS);
        record.recent_tools = report
            .recent_tools
            .into_iter()
            .skip(skip)
            .map(|tool| RecentTool {
                name: cut(&flatten(&tool.name), MAX_AGENT_TEXT_BYTES).to_string(),
                args: cut(&flatten(&tool.args), MAX_AGENT_TOOL_ARGS_BYTES).to_string(),
                ..tool
            })
            .collect();
        record.usage = report.usage;
        record.cost_microdollars = report.cost_microdollars.or(record.cost_microdollars);
        if let Some(queued) = report.queued_follow_ups {
            record.follow_ups = queued;
        }
        if record.status == AgentStatus::Shutdown {
            // A shut-down child never runs again: nothing stays queued on it.
            record.follow_ups = 0;
        }
        Ok(())
    }

    /// The first free `agent_path` for `task_name` among `owner`'s children.
    fn free_path(&self, owner: &OwnerKey, task_name: &str) -> String {
        let taken = |path: &str| {
            self.records
                .values()
                .any(|r| &r.owner == owner && r.agent_path == path)
        };
        let base = format!("/{task_name}");
        if !taken(&base) {
            return base;
        }
        (2u64..)
            .map(|n| format!("{base}-{n}"))
            .find(|path| !taken(path))
            .expect("some suffix is free")
    }

    /// Keeps the table within [`MAX_AGENT_RECORDS`]: the oldest settled records go, and
    /// their idempotency keys with them.
    fn prune(&mut self) {
        while self.records.len() >= MAX_AGENT_RECORDS {
            let Some(at) = self.order.iter().position(|id| {
                self.records
                    .get(id)
                    .is_some_and(|r| !r.status.is_unsettled())
            }) else {
                return;
            };
            let id = self.order.remove(at);
            self.records.remove(&id);
            self.idempotency.retain(|_, agent_id| *agent_id != id);
        }
    }
}

#[cfg(test)]
mod tests {
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
        table.spawned(owner, request, answer, 1_000).unwrap()
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
        table.spawned(&a, request, answer, 1_000).unwrap();
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
}
