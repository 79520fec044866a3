//! One connection's [`AgentGuard`]: admits its `agent_sessions` requests against the
//! host's records, completes the service's answers, answers `agent/list` and holds
//! `agent/wait`.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::dispatcher::guard::{KindGuard, Placed, Verdict};
use crate::features::agents::defaults::InheritedModel;
use crate::features::agents::hub::{now_ms, AgentHub, OwnerKey};
use crate::features::agents::spawned::SpawnAdmission;
use crate::limits::{AGENT_MODELS_DEFAULT_LIMIT, AGENT_WAIT_DEFAULT, AGENT_WAIT_MS};
use crate::negotiation::{Feature, FeatureSet};
use crate::services::bound::agents::{closed_answer, parse_spawn_answer, SpawnEcho, TargetAnswer};
use crate::services::bound::ServiceKind;
use crate::services::bound::{
    AgentFollowUpResult, AgentInterruptResult, AgentList, AgentMessageResult, AgentModels,
    AgentSpawn, AgentStopResult, AgentWaited, FollowUpDelivered, InterruptRequested,
    MessageDelivered, Refusal, ServiceRefusal, ServiceRequest, StopRequested,
};
use crate::services::ResourceOwner;
use crate::transport::ConnId;

/// What a request the service is serving will need when it settles.
enum InFlight {
    /// A fresh spawn, and when the runtime admitted it (its `created_at_ms`).
    Spawn(Box<AgentSpawn>, u64),
    Message {
        agent_id: String,
        agent_path: String,
    },
    FollowUp {
        agent_id: String,
        agent_path: String,
    },
    Interrupt {
        agent_id: String,
        agent_path: String,
        previous: &'static str,
    },
    Stop {
        agent_id: String,
        agent_path: String,
    },
    Models {
        limit: usize,
    },
}

/// A held `agent/events` long poll.
struct Poll {
    agent_id: String,
    after: u64,
    deadline: Instant,
}

/// One connection's view of the host's child sessions.
pub(crate) struct AgentGuard {
    hub: Arc<AgentHub>,
    owner: OwnerKey,
    /// Requests the service is serving, by the key they hold.
    in_flight: HashMap<String, InFlight>,
    /// Held `agent/wait` requests: their deadlines, by key.
    waits: HashMap<String, Instant>,
    /// Held `agent/events` long polls, by key.
    polls: HashMap<String, Poll>,
    /// What `initialize` negotiated.
    features: FeatureSet,
    /// The runtime's own companions this connection is served by, in place of the
    /// embedder's.
    defaults: AgentDefaults,
    next_key: u64,
}

/// Which `agent_sessions` companions the runtime serves for a connection
/// ([`crate::services::bound::agents::defaults`]).
#[derive(Clone, Debug, Default)]
pub(crate) struct AgentDefaults {
    /// No model resolver is bound: only this inherited binding may be selected.
    pub inherited: Option<InheritedModel>,
    /// No event service is bound: the runtime logs the children's `run_finished`
    /// transitions itself.
    pub log_transitions: bool,
}

impl AgentGuard {
    /// The guard of a generation of `name` (manifest at `manifest_path`), issued `owner`,
    /// served by the runtime's `defaults` where the embedder bound no companion.
    pub fn new(
        hub: Arc<AgentHub>,
        name: &str,
        manifest_path: &std::path::Path,
        owner: &ResourceOwner,
        defaults: AgentDefaults,
    ) -> AgentGuard {
        AgentGuard {
            hub,
            owner: OwnerKey::new(name, manifest_path, owner),
            in_flight: HashMap::new(),
            waits: HashMap::new(),
            polls: HashMap::new(),
            features: FeatureSet::default(),
            defaults,
            next_key: 0,
        }
    }

    /// The owner of this connection's children.
    pub fn owner(&self) -> &OwnerKey {
        &self.owner
    }

    /// The owner was retired: every `agent/wait` and `agent/events` held now is due,
    /// answered with what there is, as at its deadline. Requests that come later are
    /// held as usual (observation outlives the owner's run).
    pub fn wake_held(&mut self, now: Instant) {
        self.waits.values_mut().for_each(|deadline| *deadline = now);
        self.polls.values_mut().for_each(|poll| poll.deadline = now);
    }

    fn key(&mut self, what: &str) -> String {
        self.next_key += 1;
        format!("{what}:{}", self.next_key)
    }

    fn serve(&mut self, what: &str, in_flight: InFlight) -> Verdict {
        let key = self.key(what);
        self.in_flight.insert(key.clone(), in_flight);
        Verdict::Serve(Some(key))
    }
}

impl KindGuard for AgentGuard {
    fn admit(
        &mut self,
        _request: &ServiceRequest,
        _placed: Placed,
        _pending: &[&str],
    ) -> Result<Option<String>, ServiceRefusal> {
        Ok(None)
    }

    fn decide(
        &mut self,
        request: &mut ServiceRequest,
        _placed: Placed,
        _owner: &ResourceOwner,
        _pending: &[&str],
    ) -> Result<Verdict, ServiceRefusal> {
        let hub = self.hub.clone();
        let mut table = hub.table();
        let mutation = matches!(
            request,
            ServiceRequest::AgentSpawn(_)
                | ServiceRequest::AgentMessage(_)
                | ServiceRequest::AgentFollowUp(_)
                | ServiceRequest::AgentInterrupt(_)
                | ServiceRequest::AgentStop(_)
        );
        if mutation && table.is_retired(&self.owner) {
            return Err(Refusal::NotForegroundOwner.because(
                "the session owner was retired (its session settled): its children may be \
                 listed and waited on, but not spawned, messaged, followed up, interrupted \
                 or stopped",
            ));
        }
        match request {
            ServiceRequest::AgentSpawn(spawn)
                if spawn.policy.model_selection.is_some()
                    && !self.features.contains(Feature::AgentModelSelectionV1) =>
            {
                Err(Refusal::InvalidRequest.because(
                    "policy.model_selection needs agent_model_selection_v1, which was not negotiated",
                ))
            }
            ServiceRequest::AgentSpawn(spawn)
                if matches!(
                    (&self.defaults.inherited, &spawn.policy.model_selection),
                    (Some(inherited), Some(selection)) if !inherited.allows(selection)
                ) =>
            {
                Err(Refusal::Unavailable.because(
                    "no model resolver is configured: only the inherited model is available \
                     (see agent/models); select `inherit`",
                ))
            }
            ServiceRequest::AgentSpawn(spawn) => match table.admit_spawn(&self.owner, spawn)? {
                SpawnAdmission::Retry(result) => Ok(Verdict::Answer(result)),
                SpawnAdmission::Fresh => {
                    Ok(self.serve("spawn", InFlight::Spawn(Box::new(spawn.clone()), now_ms())))
                }
            },
            ServiceRequest::AgentMessage(send) => {
                let target = table.resolve_into(&self.owner, &mut send.target)?;
                let in_flight = InFlight::Message {
                    agent_id: target.agent_id,
                    agent_path: target.agent_path,
                };
                Ok(self.serve("message", in_flight))
            }
            ServiceRequest::AgentFollowUp(send) => {
                let target = table.resolve_into(&self.owner, &mut send.target)?;
                table.admit_follow_up(&target.agent_id)?;
                let in_flight = InFlight::FollowUp {
                    agent_id: target.agent_id,
                    agent_path: target.agent_path,
                };
                Ok(self.serve("follow_up", in_flight))
            }
            ServiceRequest::AgentInterrupt(target_params) => {
                let target = table.resolve_into(&self.owner, &mut target_params.target)?;
                let in_flight = InFlight::Interrupt {
                    agent_id: target.agent_id,
                    agent_path: target.agent_path,
                    previous: target.status,
                };
                Ok(self.serve("interrupt", in_flight))
            }
            ServiceRequest::AgentStop(target_params) => {
                let target = table.resolve_into(&self.owner, &mut target_params.target)?;
                let in_flight = InFlight::Stop {
                    agent_id: target.agent_id,
                    agent_path: target.agent_path,
                };
                Ok(self.serve("stop", in_flight))
            }
            ServiceRequest::AgentModels(query) => {
                let limit = query.limit.unwrap_or(AGENT_MODELS_DEFAULT_LIMIT) as usize;
                Ok(self.serve("models", InFlight::Models { limit }))
            }
            ServiceRequest::AgentEvents(query) => {
                let target = table.resolve(&self.owner, &query.target)?;
                let (batch, empty) = table.events_after(&target.agent_id, query.after_sequence)?;
                let timeout = query.timeout_ms.unwrap_or(0);
                if !empty || timeout == 0 || table.is_settled(&target.agent_id) {
                    return Ok(Verdict::Answer(batch));
                }
                let key = self.key("events");
                let poll = Poll {
                    agent_id: target.agent_id,
                    after: query.after_sequence,
                    deadline: Instant::now() + Duration::from_millis(timeout),
                };
                self.polls.insert(key.clone(), poll);
                Ok(Verdict::Hold(key))
            }
            ServiceRequest::AgentList(_) => Ok(Verdict::Answer(table.snapshot(&self.owner))),
            ServiceRequest::AgentWait(wait) => {
                if table.unsettled(&self.owner) == 0 {
                    return Ok(Verdict::Answer(waited(false, table.list(&self.owner))));
                }
                let ms = wait
                    .timeout_ms
                    .map_or(AGENT_WAIT_DEFAULT.as_millis() as u64, |ms| {
                        ms.clamp(*AGENT_WAIT_MS.start(), *AGENT_WAIT_MS.end())
                    });
                let key = self.key("wait");
                self.waits
                    .insert(key.clone(), Instant::now() + Duration::from_millis(ms));
                Ok(Verdict::Hold(key))
            }
            _ => Ok(Verdict::Serve(None)),
        }
    }

    fn complete_answer(&mut self, key: &str, result: Value) -> Result<Value, String> {
        let Some(in_flight) = self.in_flight.remove(key) else {
            return Ok(result);
        };
        let hub = self.hub.clone();
        let mut table = hub.table();
        let completed = match in_flight {
            InFlight::Spawn(spawn, created) => {
                let (answer, echo) = match parse_spawn_answer(&result) {
                    Ok(parsed) => parsed,
                    Err(e) => {
                        table.end_spawn(&self.owner, &spawn);
                        return Err(e);
                    }
                };
                if let Some(why) = spawn_contradiction(&echo, &spawn, &self.owner) {
                    table.end_spawn(&self.owner, &spawn);
                    return Err(why);
                }
                // A new child only adds to what the owner's waits wait for: no held
                // request becomes answerable, so nothing is woken.
                return table.spawned(
                    &self.owner,
                    *spawn,
                    answer,
                    created,
                    self.defaults.log_transitions,
                );
            }
            InFlight::Message {
                agent_id,
                agent_path,
            } => {
                let answer: MessageDelivered = target_answer(&result, &agent_id, &agent_path)?;
                to_result(AgentMessageResult {
                    delivered_to: agent_id,
                    delivery: answer.delivery,
                })
            }
            InFlight::FollowUp {
                agent_id,
                agent_path,
            } => {
                let answer: FollowUpDelivered = target_answer(&result, &agent_id, &agent_path)?;
                table.followed_up(&agent_id, now_ms());
                drop(table);
                hub.wake();
                to_result(AgentFollowUpResult {
                    agent_id,
                    agent_path,
                    delivery: answer.delivery,
                })
            }
            InFlight::Interrupt {
                agent_id,
                agent_path,
                previous,
            } => {
                let answer: InterruptRequested = target_answer(&result, &agent_id, &agent_path)?;
                table.interrupted(&agent_id, answer.interrupt_requested);
                to_result(AgentInterruptResult {
                    agent_id,
                    agent_path,
                    previous_status: previous.into(),
                    interrupt_requested: answer.interrupt_requested,
                })
            }
            InFlight::Stop {
                agent_id,
                agent_path,
            } => {
                let StopRequested = target_answer(&result, &agent_id, &agent_path)?;
                to_result(AgentStopResult {
                    agent_id,
                    shutdown_requested: true,
                })
            }
            InFlight::Models { limit } => {
                let mut models: AgentModels = closed_answer(&result)?;
                if models.models.len() > limit {
                    models.models.truncate(limit);
                    models.truncated = true;
                }
                to_result(models)
            }
        };
        Ok(completed)
    }

    fn ready(&mut self, now: Instant) -> Vec<(String, Result<Value, ServiceRefusal>)> {
        if self.waits.is_empty() && self.polls.is_empty() {
            return Vec::new();
        }
        let table = self.hub.table();
        let mut answers = Vec::new();
        let polled: Vec<String> = self.polls.keys().cloned().collect();
        for key in polled {
            let poll = &self.polls[&key];
            let answer = match table.events_after(&poll.agent_id, poll.after) {
                Ok((batch, empty)) => {
                    let due = !empty || poll.deadline <= now || table.is_settled(&poll.agent_id);
                    due.then_some(Ok(batch))
                }
                // The log moved past the cursor while it waited: the records it would
                // have got are gone, which is said rather than skipped.
                Err(refusal) => Some(Err(refusal)),
            };
            if let Some(answer) = answer {
                self.polls.remove(&key);
                answers.push((key, answer));
            }
        }
        let settled = table.unsettled(&self.owner) == 0;
        let due: Vec<String> = self
            .waits
            .iter()
            .filter(|(_, deadline)| settled || **deadline <= now)
            .map(|(key, _)| key.clone())
            .collect();
        if !due.is_empty() {
            let snapshot = table.list(&self.owner);
            for key in due {
                self.waits.remove(&key);
                answers.push((key, Ok(waited(!settled, snapshot.clone()))));
            }
        }
        answers
    }

    fn next_deadline(&self) -> Option<Instant> {
        let polls = self.polls.values().map(|p| p.deadline);
        self.waits.values().copied().chain(polls).min()
    }

    fn settled(&mut self, key: String, result: Option<&mut Value>) {
        self.waits.remove(&key);
        self.polls.remove(&key);
        match (self.in_flight.remove(&key), result) {
            (Some(InFlight::Spawn(spawn, _)), None) => {
                self.hub.table().end_spawn(&self.owner, &spawn);
            }
            (Some(InFlight::FollowUp { agent_id, .. }), None) => {
                self.hub.table().follow_up_failed(&agent_id);
            }
            _ => {}
        }
    }

    fn initialize_settled(&mut self, _negotiated: bool) {}

    fn features_negotiated(&mut self, features: FeatureSet) {
        self.features = features;
    }
}

/// A target method's answer as its typed part `T` (its shape was checked on the way
/// in), refused when a member it copied from the runtime's records names another child.
fn target_answer<T>(result: &Value, agent_id: &str, agent_path: &str) -> Result<T, String>
where
    T: TryFrom<TargetAnswer, Error = String>,
{
    let answer: TargetAnswer = closed_answer(result)?;
    match answer.contradiction(agent_id, agent_path) {
        Some(why) => Err(why),
        None => T::try_from(answer),
    }
}

/// A result the runtime completed, as the JSON the extension gets.
fn to_result(result: impl serde::Serialize) -> Value {
    serde_json::to_value(result).expect("a typed result serializes")
}

/// The first member of a reference-shaped spawn answer that contradicts the request
/// or the owner, in words.
fn spawn_contradiction(echo: &SpawnEcho, spawn: &AgentSpawn, owner: &OwnerKey) -> Option<String> {
    let differs = |name: &str, copied: Option<Option<&str>>, ours: Option<&str>| {
        copied.filter(|c| *c != ours).map(|c| {
            format!(
                "`{name}` is {}, but the spawn asked for {}",
                c.map_or("null".into(), |c| format!("`{c}`")),
                ours.map_or("none".into(), |o| format!("`{o}`"))
            )
        })
    };
    differs(
        "task_name",
        echo.task_name.as_deref().map(Some),
        Some(&spawn.task_name),
    )
    .or_else(|| differs("profile", present(&echo.profile), spawn.profile.as_deref()))
    .or_else(|| {
        differs(
            "fingerprint",
            present(&echo.fingerprint),
            spawn.fingerprint.as_deref(),
        )
    })
    .or_else(|| {
        differs(
            "idempotency_key",
            present(&echo.idempotency_key),
            spawn.idempotency_key.as_deref(),
        )
    })
    .or_else(|| {
        echo.principal
            .as_deref()
            .filter(|p| *p != owner.principal)
            .map(|p| {
                format!(
                    "`principal` is `{p}`, but the extension's is `{}`",
                    owner.principal
                )
            })
    })
    .or_else(|| {
        echo.resource_owner
            .as_deref()
            .filter(|o| *o != owner.resource_owner)
            .map(|o| {
                format!(
                    "`resource_owner` is `{o}`, but the request's owner is `{}`",
                    owner.resource_owner
                )
            })
    })
}

/// A copied member that may be `null`: absent (`None`) or present (`Some`).
fn present(member: &Option<Option<String>>) -> Option<Option<&str>> {
    member.as_ref().map(|v| v.as_deref())
}

/// The `agent/wait` result (section 2.17).
fn waited(timed_out: bool, snapshot: AgentList) -> Value {
    to_result(AgentWaited {
        timed_out,
        snapshot,
    })
}

impl crate::dispatcher::Dispatcher {
    /// Registers the agent guard of the new generation `conn`: its view of the host's
    /// child sessions decides `agent_sessions` and the companions that share its
    /// records.
    pub(in crate::dispatcher) fn register_agent_guard(&mut self, conn: ConnId) {
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        let guard = AgentGuard::new(
            self.shared.features.agents.clone(),
            &c.source.extension,
            &c.located.manifest_path,
            &c.owner,
            AgentDefaults {
                inherited: c
                    .services
                    .is_runtime_default(ServiceKind::AgentModelSelection)
                    .then(|| InheritedModel::of(&self.shared.host_context)),
                log_transitions: c
                    .services
                    .is_runtime_default(ServiceKind::AgentSessionEvents),
            },
        );
        c.guards.register(
            ServiceKind::AgentSessions,
            Box::new(guard),
            &[
                ServiceKind::AgentModelSelection,
                ServiceKind::AgentSessionEvents,
                ServiceKind::AgentSessionLifetime,
            ],
        );
    }
}
