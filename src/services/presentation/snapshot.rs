//! Parsing `presentation/update` params and the snapshot's top level, activities, actions
//! and references. The collection is parsed in [`super::collection`].

use std::collections::HashSet;

use serde_json::Value;

use crate::limits::{
    MAX_PRESENTATION_ACTIONS, MAX_PRESENTATION_ACTIVITIES, MAX_PRESENTATION_REFERENCES,
    MAX_PRESENTATION_SNAPSHOT_BYTES,
};
use crate::services::ResourceOwner;
use crate::validate::error::excerpt;
use crate::validate::path::Path;
use crate::validate::{check_bounds, Bounds, GenericState};

use super::collection::collection;
use super::error::{PresentationError, PresentationErrorKind};
use super::field::{
    as_str, as_u64, closed_object, member, optional_flag, optional_list, optional_safe_integer,
    required, safe_integer, Object, PresentationPath,
};
use super::text::{compact_id, compact_label};
use super::types::{
    Action, Activity, Metrics, PresentationScope, PresentationSnapshot, PresentationUpdate,
    Reference, ReferenceKind, SnapshotStatus,
};
use super::url::check_url;

#[doc(hidden)]
/// Validates the params of one `presentation/update` notification from an extension whose
/// manifest declared `declared_commands`, completely and atomically: either every rule of
/// section 2.5 holds and the whole update is returned, or the first broken rule is.
///
/// The params object holds `snapshot` and at most one of `parent_request_id` (an
/// unsigned integer) and `resource_owner` (the owner triple); neither means process-scoped
/// state. Whether the parent request is live and the triple was issued is for the caller
/// to check. See the [module documentation](super) for every rule.
pub fn parse_update(
    params: &Value,
    declared_commands: &[String],
) -> Result<PresentationUpdate, PresentationError> {
    let root = Path::Root;
    let object = closed_object(
        params,
        &root,
        &["parent_request_id", "resource_owner", "snapshot"],
    )?;
    let parent = member(object, "parent_request_id");
    let owner = member(object, "resource_owner");
    let scope = match (parent, owner) {
        (Some(_), Some(_)) => return Err(root.error(PresentationErrorKind::ConflictingScope)),
        (Some(parent), None) => {
            PresentationScope::Parent(as_u64(parent, &root.key("parent_request_id"))?)
        }
        (None, Some(owner)) => {
            PresentationScope::Owner(ResourceOwner::parse(owner).map_err(|error| {
                root.key("resource_owner")
                    .error(PresentationErrorKind::Owner(error))
            })?)
        }
        (None, None) => PresentationScope::Process,
    };
    let snapshot = snapshot(
        required(object, "snapshot", &root)?,
        &root.key("snapshot"),
        declared_commands,
    )?;
    if scope == PresentationScope::Process {
        check_no_session_reference(&snapshot, &root.key("snapshot"))?;
    }
    Ok(PresentationUpdate { scope, snapshot })
}

/// Process-scoped state "must contain no session-owned data" (section 2.5); the session
/// references are the session-owned data a snapshot can be seen to hold. The first one in
/// document order is reported.
fn check_no_session_reference(
    snapshot: &PresentationSnapshot,
    path: &Path,
) -> Result<(), PresentationError> {
    let find = |references: &[Reference], path: &Path| -> Result<(), PresentationError> {
        match references
            .iter()
            .position(|reference| reference.kind == ReferenceKind::Session)
        {
            Some(index) => Err(path
                .key("references")
                .index(index)
                .key("kind")
                .error(PresentationErrorKind::SessionReferenceInProcessScope)),
            None => Ok(()),
        }
    };
    let activities = path.key("activities");
    for (index, activity) in snapshot.activities.iter().enumerate() {
        find(&activity.references, &activities.index(index))?;
    }
    if let Some(collection) = &snapshot.collection {
        let collection_path = path.key("collection");
        let nodes = collection_path.key("nodes");
        for (index, node) in collection.nodes.iter().enumerate() {
            find(&node.references, &nodes.index(index))?;
        }
        if let Some(detail) = &collection.detail {
            find(&detail.references, &collection_path.key("detail"))?;
        }
    }
    Ok(())
}

/// Validates one snapshot at `path`.
fn snapshot(
    value: &Value,
    path: &Path,
    declared_commands: &[String],
) -> Result<PresentationSnapshot, PresentationError> {
    check_bounds(value, Bounds::bytes_only(MAX_PRESENTATION_SNAPSHOT_BYTES)).map_err(|_| {
        path.error(PresentationErrorKind::SnapshotTooLarge {
            max: MAX_PRESENTATION_SNAPSHOT_BYTES,
        })
    })?;
    let object = closed_object(
        value,
        path,
        &["revision", "status", "activities", "collection", "actions"],
    )?;
    let revision = safe_integer(required(object, "revision", path)?, &path.key("revision"))?;
    let status = member(object, "status")
        .map(|value| status(value, &path.key("status")))
        .transpose()?;
    let activities = optional_list(
        object,
        "activities",
        path,
        MAX_PRESENTATION_ACTIVITIES,
        activity,
    )?;
    let activities_path = path.key("activities");
    unique_ids(
        activities.iter().map(|activity| activity.id.as_str()),
        |index| activities_path.index(index).key("id").render(),
    )?;
    let actions = optional_list(
        object,
        "actions",
        path,
        MAX_PRESENTATION_ACTIONS,
        |value, path| action(value, path, declared_commands),
    )?;
    let actions_path = path.key("actions");
    let action_ids = unique_ids(actions.iter().map(|action| action.id.as_str()), |index| {
        actions_path.index(index).key("id").render()
    })?;
    let collection = member(object, "collection")
        .map(|value| collection(value, &path.key("collection"), &action_ids))
        .transpose()?;
    Ok(PresentationSnapshot {
        revision,
        status,
        activities,
        collection,
        actions,
    })
}

/// Checks that `ids` holds no repeat, naming the repeat's path through `path_of` (given its
/// index); returns the set of ids.
pub(super) fn unique_ids<'a>(
    ids: impl Iterator<Item = &'a str>,
    path_of: impl Fn(usize) -> String,
) -> Result<HashSet<&'a str>, PresentationError> {
    let mut seen = HashSet::new();
    for (index, id) in ids.enumerate() {
        if !seen.insert(id) {
            return Err(PresentationError::new(
                path_of(index),
                PresentationErrorKind::DuplicateId { id: excerpt(id) },
            ));
        }
    }
    Ok(seen)
}

/// A required generic `state` member.
pub(super) fn state(object: &Object, path: &Path) -> Result<GenericState, PresentationError> {
    let state_path = path.key("state");
    let text = as_str(required(object, "state", path)?, &state_path)?;
    GenericState::parse(text).ok_or_else(|| {
        state_path.error(PresentationErrorKind::UnknownState {
            found: excerpt(text),
        })
    })
}

/// A required compact id member.
pub(super) fn required_id(
    object: &Object,
    key: &str,
    path: &Path,
) -> Result<String, PresentationError> {
    compact_id(required(object, key, path)?, &path.key(key))
}

/// A required compact label member.
pub(super) fn required_label(
    object: &Object,
    key: &str,
    path: &Path,
) -> Result<String, PresentationError> {
    compact_label(required(object, key, path)?, &path.key(key))
}

/// An optional compact label member.
pub(super) fn optional_label(
    object: &Object,
    key: &str,
    path: &Path,
) -> Result<Option<String>, PresentationError> {
    member(object, key)
        .map(|value| compact_label(value, &path.key(key)))
        .transpose()
}

/// An optional `references` member, empty when absent.
pub(super) fn references(
    object: &Object,
    path: &Path,
) -> Result<Vec<Reference>, PresentationError> {
    optional_list(
        object,
        "references",
        path,
        MAX_PRESENTATION_REFERENCES,
        reference,
    )
}

fn status(value: &Value, path: &Path) -> Result<SnapshotStatus, PresentationError> {
    let object = closed_object(value, path, &["state", "label"])?;
    Ok(SnapshotStatus {
        state: state(object, path)?,
        label: required_label(object, "label", path)?,
    })
}

fn activity(value: &Value, path: &Path) -> Result<Activity, PresentationError> {
    let object = closed_object(
        value,
        path,
        &[
            "id",
            "kind",
            "state",
            "summary",
            "provenance",
            "started_at_ms",
            "metrics",
            "references",
        ],
    )?;
    Ok(Activity {
        id: required_id(object, "id", path)?,
        kind: required_id(object, "kind", path)?,
        state: state(object, path)?,
        summary: required_label(object, "summary", path)?,
        provenance: optional_label(object, "provenance", path)?,
        started_at_ms: optional_safe_integer(object, "started_at_ms", path)?,
        metrics: member(object, "metrics")
            .map(|value| metrics(value, &path.key("metrics")))
            .transpose()?,
        references: references(object, path)?,
    })
}

fn metrics(value: &Value, path: &Path) -> Result<Metrics, PresentationError> {
    let object = closed_object(value, path, Metrics::NAMES)?;
    let counter = |key| optional_safe_integer(object, key, path);
    let metrics = Metrics {
        tool_calls: counter("tool_calls")?,
        input_tokens: counter("input_tokens")?,
        cache_read_tokens: counter("cache_read_tokens")?,
        cache_write_tokens: counter("cache_write_tokens")?,
        output_tokens: counter("output_tokens")?,
        reasoning_tokens: counter("reasoning_tokens")?,
        cost_microdollars: counter("cost_microdollars")?,
    };
    if let Some(reasoning) = metrics.reasoning_tokens {
        let reasoning_path = path.key("reasoning_tokens");
        match metrics.output_tokens {
            None => return Err(reasoning_path.error(PresentationErrorKind::ReasoningWithoutOutput)),
            Some(output) if reasoning > output => {
                return Err(reasoning_path
                    .error(PresentationErrorKind::ReasoningExceedsOutput { reasoning, output }))
            }
            Some(_) => {}
        }
    }
    Ok(metrics)
}

fn action(
    value: &Value,
    path: &Path,
    declared_commands: &[String],
) -> Result<Action, PresentationError> {
    let object = closed_object(
        value,
        path,
        &["id", "label", "command", "arguments", "destructive"],
    )?;
    let id = required_id(object, "id", path)?;
    let label = required_label(object, "label", path)?;
    let command = required_id(object, "command", path)?;
    if !declared_commands.contains(&command) {
        return Err(path
            .key("command")
            .error(PresentationErrorKind::UndeclaredCommand {
                command: excerpt(&command),
            }));
    }
    let arguments = optional_list(object, "arguments", path, usize::MAX, |value, path| {
        as_str(value, path).map(str::to_owned)
    })?;
    Ok(Action {
        id,
        label,
        command,
        arguments,
        destructive: optional_flag(object, "destructive", path)?,
    })
}

fn reference(value: &Value, path: &Path) -> Result<Reference, PresentationError> {
    let object = closed_object(value, path, &["kind", "id", "label"])?;
    let kind_path = path.key("kind");
    let kind_text = as_str(required(object, "kind", path)?, &kind_path)?;
    let kind = match kind_text {
        "session" => ReferenceKind::Session,
        "artifact" => ReferenceKind::Artifact,
        "resource" => ReferenceKind::Resource,
        "url" => ReferenceKind::Url,
        other => {
            return Err(kind_path.error(PresentationErrorKind::UnknownValue {
                found: excerpt(other),
                allowed: ReferenceKind::NAMES,
            }))
        }
    };
    let id = required_id(object, "id", path)?;
    if kind == ReferenceKind::Url {
        check_url(&id).map_err(|error| path.key("id").error(PresentationErrorKind::Url(error)))?;
    }
    Ok(Reference {
        kind,
        id,
        label: optional_label(object, "label", path)?,
    })
}
