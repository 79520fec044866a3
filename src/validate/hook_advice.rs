//! The typed API 0.2 hooks (section 1.4: "API 0.2 additionally supports typed
//! provider_retry, before_persistence, and post_mutation hooks"; SUPPLEMENT "API 0.2
//! typed hooks"): their payloads, and the advice their results carry beside the hook
//! envelope, each checked against its bounds.
//!
//! - `provider_retry`: the payload describes one retry the host is about to make; the
//!   result's `provider_retry` member is `"retry"`, `"stop"` or
//!   `{"delay":{"additional_delay_ms":N}}`. Advice never shortens a retry: a delay only
//!   adds to the host's, at most [`MAX_PROVIDER_RETRY_ADDED_DELAY_MS`] for one run.
//! - `before_persistence`: the payload describes the assistant message about to be
//!   persisted (no text); the result's `persistence_metadata` is `{value, public}`, the
//!   value an object of at most [`MAX_PERSISTENCE_NAMESPACES`] namespaces within the
//!   bounds of [`PERSISTENCE_METADATA_BOUNDS`] and [`MAX_PERSISTENCE_NAMESPACE_BYTES`].
//! - `post_mutation`: the payload names a committed or rolled-back mutation and the
//!   resources it affected; the result's `post_mutation` is `{"action":"no_rescan"}` or
//!   `{"action":"request_rescan","resource_ids":[..]}`, the ids a subset of the
//!   payload's `affected_resources`.
//!
//! An absent advice member leaves the host's own behaviour; an advice that breaks a
//! rule fails the result, naming the rule ([`ResultErrorKind::HookAdvice`]).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::error::{ResultError, ResultErrorKind};
use super::field::{member, Object, ResultPath};
use super::json_bounds::{check_bounds, Bounds};
use super::names::HookName;
use super::path::Path;
use crate::limits::{
    BEFORE_PERSISTENCE_DEADLINE, MAX_JSON_KEY_BYTES, MAX_PERSISTENCE_METADATA_BYTES,
    MAX_PERSISTENCE_METADATA_DEPTH, MAX_PERSISTENCE_METADATA_NODES, MAX_PERSISTENCE_NAMESPACES,
    MAX_PERSISTENCE_NAMESPACE_BYTES, MAX_POST_MUTATION_RESOURCES,
    MAX_PROVIDER_RETRY_ADDED_DELAY_MS, POST_MUTATION_DEADLINE,
};

/// The bounds of a `persistence_metadata.value` as a whole.
pub const PERSISTENCE_METADATA_BOUNDS: Bounds = Bounds {
    max_bytes: MAX_PERSISTENCE_METADATA_BYTES,
    max_depth: MAX_PERSISTENCE_METADATA_DEPTH,
    max_nodes: MAX_PERSISTENCE_METADATA_NODES,
    max_key_bytes: MAX_JSON_KEY_BYTES,
};

/// What the host was doing when a provider call needs a retry (`operation`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RetryOperation {
    /// Compacting the session locally.
    LocalCompaction,
    /// The provider's own compaction.
    NativeCompaction,
    /// A terminal gate.
    TerminalGate,
}

/// Where in the provider call the retry comes (`kind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RetryKind {
    /// Before any output was generated.
    BeforeGeneration,
    /// When the stream started.
    StreamStart,
    /// Inference was interrupted.
    InterruptedInference,
    /// Waiting for the network to come back.
    WaitingForNetwork,
}

/// The `provider_retry` payload.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderRetryPayload {
    /// The run being retried.
    pub run_id: String,
    /// This attempt, counted from 1.
    pub attempt: u64,
    /// The most attempts the host makes, `None` when unbounded.
    pub max_attempts: Option<u64>,
    /// What the host was doing, `None` for an ordinary model call.
    pub operation: Option<RetryOperation>,
    /// The delay the host itself waits before the retry, in milliseconds.
    pub host_delay_ms: u64,
    /// Where in the call the retry comes.
    pub kind: RetryKind,
}

/// The `before_persistence` payload: what is about to be persisted, without its text.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BeforePersistencePayload {
    /// The run the message belongs to.
    pub run_id: String,
    /// The model that wrote it.
    pub model: String,
    /// The provider protocol.
    pub protocol: String,
    /// Why generation stopped.
    pub stop_reason: String,
    /// Its text, in UTF-8 bytes.
    pub text_bytes: u64,
    /// Its tool calls.
    pub tool_call_count: u64,
    /// Its reasoning parts.
    pub reasoning_part_count: u64,
    /// Its media parts.
    pub media_part_count: u64,
}

/// What a mutation changed (`kind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MutationKind {
    /// The host's configuration.
    Configuration,
    /// A resource.
    Resource,
    /// An ingestion of migrated configuration.
    MigrationIngestion,
}

/// How a mutation ended (`state`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MutationState {
    /// It committed.
    Committed,
    /// It was rolled back.
    RolledBack,
}

/// The `post_mutation` payload.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PostMutationPayload {
    /// The mutation; the host sends each id once within its window of
    /// [`MAX_POST_MUTATION_IDS`](crate::limits::MAX_POST_MUTATION_IDS).
    pub mutation_id: String,
    /// What changed.
    pub kind: MutationKind,
    /// The resources it affected, at most [`MAX_POST_MUTATION_RESOURCES`].
    pub affected_resources: Vec<String>,
    /// The generation of the changed state, at least 1.
    pub generation: u64,
    /// How it ended.
    pub state: MutationState,
}

impl PostMutationPayload {
    /// The payload's own bounds: at most [`MAX_POST_MUTATION_RESOURCES`] resources and
    /// a generation of at least 1.
    pub fn check(&self) -> Result<(), String> {
        if self.affected_resources.len() > MAX_POST_MUTATION_RESOURCES {
            return Err(format!(
                "`affected_resources` lists {} resources; at most {MAX_POST_MUTATION_RESOURCES}",
                self.affected_resources.len()
            ));
        }
        if self.generation == 0 {
            return Err("`generation` must be at least 1".into());
        }
        Ok(())
    }
}

/// `provider_retry` advice.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RetryAdvice {
    /// Retry as the host planned.
    Retry,
    /// Do not retry.
    Stop,
    /// Retry after waiting this much longer than the host would.
    Delay {
        /// Added to the host's delay, never subtracted; at most
        /// [`MAX_PROVIDER_RETRY_ADDED_DELAY_MS`] for one run.
        additional_delay_ms: u64,
    },
}

/// `before_persistence` advice: metadata to persist with the message.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PersistenceMetadata {
    /// The metadata: an object of namespaces.
    pub value: Value,
    /// True when it may be shown beyond the host; `false` by default.
    #[serde(default)]
    pub public: bool,
}

/// `post_mutation` advice.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case", deny_unknown_fields)]
pub enum RescanAdvice {
    /// Nothing to rescan.
    NoRescan,
    /// Rescan these resources, a subset of the payload's `affected_resources`.
    RequestRescan {
        /// The resources.
        resource_ids: Vec<String>,
    },
}

/// The advice a typed API 0.2 hook answered with.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HookAdvice {
    /// `provider_retry`'s.
    ProviderRetry(RetryAdvice),
    /// `before_persistence`'s.
    Persistence(PersistenceMetadata),
    /// `post_mutation`'s.
    PostMutation(RescanAdvice),
}

impl HookAdvice {
    /// The result member it came in and its value, as serve and `--json` print it.
    pub fn to_member(&self) -> (&'static str, Value) {
        let value = match self {
            HookAdvice::ProviderRetry(advice) => serde_json::to_value(advice),
            HookAdvice::Persistence(metadata) => serde_json::to_value(metadata),
            HookAdvice::PostMutation(advice) => serde_json::to_value(advice),
        }
        .expect("advice serializes");
        (advice_member(self.hook()).unwrap_or_default(), value)
    }

    /// The hook it answers.
    pub fn hook(&self) -> HookName {
        match self {
            HookAdvice::ProviderRetry(_) => HookName::ProviderRetry,
            HookAdvice::Persistence(_) => HookName::BeforePersistence,
            HookAdvice::PostMutation(_) => HookName::PostMutation,
        }
    }
}

/// What `provider_retry` advice has added to each recent run's retries, so that no run
/// gets more than [`MAX_PROVIDER_RETRY_ADDED_DELAY_MS`] in all ("total added delay
/// capped at 5 s"). The last [`RetryBudget::RUNS`] runs are remembered.
#[derive(Debug, Default)]
pub struct RetryBudget {
    added: std::collections::VecDeque<(String, u64)>,
}

impl RetryBudget {
    /// Runs remembered; the oldest is forgotten first.
    pub const RUNS: usize = 256;

    /// `advice` for a retry of `run_id`, its added delay cut to what the run has left.
    pub fn grant(&mut self, run_id: &str, advice: RetryAdvice) -> RetryAdvice {
        let RetryAdvice::Delay {
            additional_delay_ms,
        } = advice
        else {
            return advice;
        };
        let at = match self.added.iter().position(|(run, _)| run == run_id) {
            Some(at) => at,
            None => {
                if self.added.len() == Self::RUNS {
                    self.added.pop_front();
                }
                self.added.push_back((run_id.to_string(), 0));
                self.added.len() - 1
            }
        };
        let total = &mut self.added[at].1;
        let granted = additional_delay_ms.min(MAX_PROVIDER_RETRY_ADDED_DELAY_MS - *total);
        *total += granted;
        RetryAdvice::Delay {
            additional_delay_ms: granted,
        }
    }
}

/// The fixed deadline of `hook`, if it has one: [`BEFORE_PERSISTENCE_DEADLINE`] and
/// [`POST_MUTATION_DEADLINE`].
pub fn fixed_deadline(hook: HookName) -> Option<std::time::Duration> {
    match hook {
        HookName::BeforePersistence => Some(BEFORE_PERSISTENCE_DEADLINE),
        HookName::PostMutation => Some(POST_MUTATION_DEADLINE),
        _ => None,
    }
}

/// The result member that carries `hook`'s advice, if it is a typed hook.
pub fn advice_member(hook: HookName) -> Option<&'static str> {
    match hook {
        HookName::ProviderRetry => Some("provider_retry"),
        HookName::BeforePersistence => Some("persistence_metadata"),
        HookName::PostMutation => Some("post_mutation"),
        _ => None,
    }
}

/// The advice in `object`, the result of `hook`, checked against its rules; `affected`
/// are the payload's `affected_resources` when `hook` is `post_mutation` (a rescan may
/// name only those; `None` when the payload is not known, which checks the shape only).
pub(crate) fn advice(
    object: &Object,
    root: &Path,
    hook: HookName,
    affected: Option<&[String]>,
) -> Result<Option<HookAdvice>, ResultError> {
    let Some(name) = advice_member(hook) else {
        return Ok(None);
    };
    let Some(value) = member(object, name) else {
        return Ok(None);
    };
    let path = root.key(name);
    let broken = |rule: String| path.error(ResultErrorKind::HookAdvice { hook, rule });
    let advice = match hook {
        HookName::ProviderRetry => {
            let advice = serde_json::from_value::<RetryAdvice>(value.clone()).map_err(|_| {
                broken(
                    "must be \"retry\", \"stop\" or {\"delay\":{\"additional_delay_ms\":N}}".into(),
                )
            })?;
            if let RetryAdvice::Delay {
                additional_delay_ms,
            } = advice
            {
                if additional_delay_ms > MAX_PROVIDER_RETRY_ADDED_DELAY_MS {
                    return Err(broken(format!(
                        "adds {additional_delay_ms} ms; advice adds at most \
                         {MAX_PROVIDER_RETRY_ADDED_DELAY_MS} ms to a run's retries"
                    )));
                }
            }
            HookAdvice::ProviderRetry(advice)
        }
        HookName::BeforePersistence => {
            let metadata: PersistenceMetadata = serde_json::from_value(value.clone())
                .map_err(|e| broken(format!("must be {{\"value\", \"public\"?}}: {e}")))?;
            check_persistence(&metadata.value).map_err(broken)?;
            HookAdvice::Persistence(metadata)
        }
        _ => {
            let advice: RescanAdvice = serde_json::from_value(value.clone()).map_err(|_| {
                broken(
                    "must be {\"action\":\"no_rescan\"} or \
                     {\"action\":\"request_rescan\",\"resource_ids\":[..]}"
                        .into(),
                )
            })?;
            if let (RescanAdvice::RequestRescan { resource_ids }, Some(affected)) =
                (&advice, affected)
            {
                if let Some(id) = resource_ids.iter().find(|id| !affected.contains(id)) {
                    return Err(broken(format!(
                        "asks to rescan `{id}`, which the mutation did not affect"
                    )));
                }
            }
            HookAdvice::PostMutation(advice)
        }
    };
    Ok(Some(advice))
}

/// The bounds of `persistence_metadata.value`: an object of at most
/// [`MAX_PERSISTENCE_NAMESPACES`] namespaces, each at most
/// [`MAX_PERSISTENCE_NAMESPACE_BYTES`] encoded, the whole within
/// [`PERSISTENCE_METADATA_BOUNDS`].
fn check_persistence(value: &Value) -> Result<(), String> {
    let Value::Object(namespaces) = value else {
        return Err("`value` must be an object of namespaces".into());
    };
    if namespaces.len() > MAX_PERSISTENCE_NAMESPACES {
        return Err(format!(
            "`value` has {} namespaces; at most {MAX_PERSISTENCE_NAMESPACES}",
            namespaces.len()
        ));
    }
    check_bounds(value, PERSISTENCE_METADATA_BOUNDS).map_err(|e| format!("`value` {e}"))?;
    for (namespace, inner) in namespaces {
        let bytes = serde_json::to_vec(inner).map_or(usize::MAX, |b| b.len());
        if bytes > MAX_PERSISTENCE_NAMESPACE_BYTES {
            return Err(format!(
                "namespace `{namespace}` is {bytes} bytes; at most \
                 {MAX_PERSISTENCE_NAMESPACE_BYTES}"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn advice_of(
        hook: HookName,
        result: Value,
        affected: Option<&[String]>,
    ) -> Result<Option<HookAdvice>, String> {
        let object = result.as_object().unwrap().clone();
        advice(&object, &Path::Root, hook, affected).map_err(|e| e.to_string())
    }

    #[test]
    fn provider_retry_advice_is_retry_stop_or_a_bounded_added_delay() {
        let hook = HookName::ProviderRetry;
        assert_eq!(
            advice_of(hook, json!({"provider_retry": "stop"}), None),
            Ok(Some(HookAdvice::ProviderRetry(RetryAdvice::Stop)))
        );
        assert_eq!(
            advice_of(
                hook,
                json!({"provider_retry": {"delay": {"additional_delay_ms": 5000}}}),
                None
            ),
            Ok(Some(HookAdvice::ProviderRetry(RetryAdvice::Delay {
                additional_delay_ms: 5000
            })))
        );
        assert_eq!(advice_of(hook, json!({}), None), Ok(None));
        let long = advice_of(
            hook,
            json!({"provider_retry": {"delay": {"additional_delay_ms": 5001}}}),
            None,
        );
        assert!(long.unwrap_err().contains("at most 5000 ms"));
        for bad in [
            json!("later"),
            json!({"delay": {"additional_delay_ms": -1}}),
            json!({"delay": {}}),
        ] {
            assert!(
                advice_of(hook, json!({ "provider_retry": bad }), None).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn a_runs_added_delay_is_capped_at_five_seconds_in_all() {
        let mut budget = RetryBudget::default();
        let delay = |ms| RetryAdvice::Delay {
            additional_delay_ms: ms,
        };
        assert_eq!(budget.grant("run:1", delay(3000)), delay(3000));
        assert_eq!(budget.grant("run:1", delay(3000)), delay(2000));
        assert_eq!(budget.grant("run:1", delay(1)), delay(0));
        assert_eq!(budget.grant("run:1", RetryAdvice::Stop), RetryAdvice::Stop);
        assert_eq!(budget.grant("run:2", delay(5000)), delay(5000));
    }

    #[test]
    fn persistence_metadata_keeps_its_bounds() {
        let hook = HookName::BeforePersistence;
        let ok = advice_of(
            hook,
            json!({"persistence_metadata": {"value": {"ns": {"k": 1}}}}),
            None,
        );
        assert_eq!(
            ok,
            Ok(Some(HookAdvice::Persistence(PersistenceMetadata {
                value: json!({"ns": {"k": 1}}),
                public: false
            })))
        );
        let many: serde_json::Map<String, Value> =
            (0..33).map(|n| (format!("ns{n}"), json!(1))).collect();
        let too_many = advice_of(hook, json!({"persistence_metadata": {"value": many}}), None);
        assert!(too_many.unwrap_err().contains("at most 32"));
        let big = json!({"ns": "x".repeat(16 * 1024)});
        assert!(
            advice_of(hook, json!({"persistence_metadata": {"value": big}}), None)
                .unwrap_err()
                .contains("namespace `ns`")
        );
        let key = json!({ "k".repeat(257): 1 });
        assert!(advice_of(hook, json!({"persistence_metadata": {"value": key}}), None).is_err());
        assert!(advice_of(hook, json!({"persistence_metadata": {"value": []}}), None).is_err());
        assert!(advice_of(
            hook,
            json!({"persistence_metadata": {"value": {}, "extra": 1}}),
            None
        )
        .is_err());
    }

    #[test]
    fn a_rescan_names_only_affected_resources() {
        let hook = HookName::PostMutation;
        let affected = vec!["r-1".to_string(), "r-2".to_string()];
        let request = |ids: Value| json!({"post_mutation": {"action": "request_rescan", "resource_ids": ids}});
        assert!(advice_of(hook, request(json!(["r-2"])), Some(&affected)).is_ok());
        let foreign = advice_of(hook, request(json!(["r-3"])), Some(&affected));
        assert!(foreign.unwrap_err().contains("r-3"));
        assert_eq!(
            advice_of(
                hook,
                json!({"post_mutation": {"action": "no_rescan"}}),
                Some(&affected)
            ),
            Ok(Some(HookAdvice::PostMutation(RescanAdvice::NoRescan)))
        );
        assert!(advice_of(hook, json!({"post_mutation": {"action": "later"}}), None).is_err());
    }

    #[test]
    fn payloads_are_closed_and_bounded() {
        let retry = json!({"run_id": "run:1", "attempt": 1, "max_attempts": null,
            "operation": "local_compaction", "host_delay_ms": 250, "kind": "stream_start"});
        let parsed: ProviderRetryPayload = serde_json::from_value(retry.clone()).unwrap();
        assert_eq!(serde_json::to_value(&parsed).unwrap(), retry);
        let mutation: PostMutationPayload = serde_json::from_value(json!({"mutation_id": "m-1",
            "kind": "resource", "affected_resources": ["r-1"], "generation": 0,
            "state": "committed"}))
        .unwrap();
        assert!(mutation.check().unwrap_err().contains("generation"));
        assert!(
            serde_json::from_value::<BeforePersistencePayload>(json!({"run_id": "r"})).is_err()
        );
    }
}
