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
    AgentSpawned, AgentStatus, AgentUsage, RecentTool, Refusal, ReportError, RunFinish,
    ServiceRefusal,
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
    /// The session owners (`resource_owner` strings) the embedder retired: their
    /// owners may observe their trees but not change them, until the next owning run.
    retired: HashSet<String>,
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
        log_transitions: bool,
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
            log_transitions,
            run_finished: false,
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
        let finished = matches!(event, AgentEvent::RunFinished { .. });
        if finished && record.log_transitions && record.run_finished {
            // The runtime logged this run's end already, from the service's report.
            return Ok(record.events.last);
        }
        record.run_finished |= finished;
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
        serde_json::to_value(self.list(owner)).expect("records serialize")
    }

    /// The `agent/list` result of `owner`'s children, in spawn order.
    pub fn list(&self, owner: &OwnerKey) -> AgentList {
        AgentList {
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
        }
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
            record.run_finished = false;
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
            if from.is_unsettled() && record.log_transitions && !record.run_finished {
                let reason = match to {
                    AgentStatus::Completed { .. } => RunFinish::Completed,
                    AgentStatus::TimedOut => RunFinish::LimitReached,
                    AgentStatus::Failed { .. } => RunFinish::Failed,
                    _ => RunFinish::Interrupted,
                };
                let body = serde_json::to_value(AgentEvent::RunFinished { reason })
                    .expect("events serialize");
                record.events.push(body, now);
                record.run_finished = true;
            }
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

    /// Retires the session owner `resource_owner` (section 2.18: the owner's run
    /// ended). From now on its owners' spawns, messages, follow-ups, interrupts and
    /// stops are refused; `agent/list`, `agent/wait` and `agent/events` still observe
    /// the trees. True when the owner was not retired already.
    pub fn retire(&mut self, resource_owner: &str) -> bool {
        self.retired.insert(resource_owner.to_string())
    }

    /// True when `owner`'s session owner was retired.
    pub fn is_retired(&self, owner: &OwnerKey) -> bool {
        self.retired.contains(&owner.resource_owner)
    }

    /// A new owning run of the session owner `resource_owner` begins. If its last run
    /// ended (it was retired), the settled children of that run are dropped with their
    /// idempotency keys, so a retry of an old key spawns afresh rather than naming a
    /// session that ended; children still winding down stay listed until they settle.
    pub fn begin_run(&mut self, resource_owner: &str) {
        if !self.retired.remove(resource_owner) {
            return;
        }
        let stale: HashSet<String> = self
            .records
            .values()
            .filter(|r| r.owner.resource_owner == resource_owner && !r.is_active())
            .map(|r| r.agent_id.clone())
            .collect();
        self.records.retain(|id, _| !stale.contains(id));
        self.order.retain(|id| !stale.contains(id));
        self.idempotency.retain(|_, id| !stale.contains(id));
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
mod tests;
