//! The members snapshots and collections share (section 2.5): ids, labels, states,
//! references, and the check that ids are unique.

use std::collections::HashSet;

use serde_json::Value;

use crate::limits::MAX_PRESENTATION_REFERENCES;
use crate::validate::error::excerpt;
use crate::validate::path::Path;
use crate::validate::GenericState;

use super::error::{PresentationError, PresentationErrorKind};
use super::field::{
    as_str, closed_object, member, optional_list, required, Object, PresentationPath,
};
use super::text::{compact_id, compact_label};
use super::types::{Reference, ReferenceKind};
use super::url::check_url;

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
