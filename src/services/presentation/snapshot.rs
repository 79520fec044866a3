//! Parsing `presentation/update` params and the snapshot's top level, activities, actions
//! and references. The collection is parsed in [`super::collection`].

use serde_json::Value;

use crate::limits::{
    MAX_PRESENTATION_ACTIONS, MAX_PRESENTATION_ACTIVITIES, MAX_PRESENTATION_SNAPSHOT_BYTES,
};
use crate::services::ResourceOwner;
use crate::validate::error::excerpt;
use crate::validate::path::Path;
use crate::validate::{check_bounds, Bounds};

use super::collection::collection;
use super::error::{PresentationError, PresentationErrorKind};
use super::field::{
    as_str, as_u64, closed_object, member, optional_flag, optional_list, optional_safe_integer,
    required, safe_integer, PresentationPath,
};
use super::parts::{optional_label, references, required_id, required_label, state, unique_ids};
use super::types::{
    Action, Activity, Metrics, PresentationScope, PresentationSnapshot, PresentationUpdate,
    Reference, ReferenceKind, SnapshotStatus,
};

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
