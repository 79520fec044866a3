//! Parsing a snapshot's `collection`: its nodes, the list/tree structure rules, the
//! selection and the detail (section 2.5).

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use crate::limits::{MAX_PRESENTATION_NODES, MAX_PRESENTATION_TREE_DEPTH};
use crate::validate::error::excerpt;
use crate::validate::path::Path;

use super::error::{PresentationError, PresentationErrorKind};
use super::field::{
    as_str, bounded_array, closed_object, member, optional_list, required, PresentationPath,
};
use super::parts::{optional_label, references, required_id, required_label, state, unique_ids};
use super::text::{body, compact_id};
use super::types::{Collection, CollectionKind, Detail, Node};

/// Validates the collection at `path`; `action_ids` are the ids of the snapshot's actions.
pub(super) fn collection(
    value: &Value,
    path: &Path,
    action_ids: &HashSet<&str>,
) -> Result<Collection, PresentationError> {
    let object = closed_object(
        value,
        path,
        &["kind", "title", "nodes", "selected_node_id", "detail"],
    )?;
    let kind = kind(required(object, "kind", path)?, &path.key("kind"))?;
    let title = required_label(object, "title", path)?;
    let nodes_path = path.key("nodes");
    let nodes = bounded_array(
        required(object, "nodes", path)?,
        &nodes_path,
        MAX_PRESENTATION_NODES,
    )?
    .iter()
    .enumerate()
    .map(|(index, value)| node(value, &nodes_path.index(index), action_ids))
    .collect::<Result<Vec<Node>, PresentationError>>()?;
    unique_ids(nodes.iter().map(|node| node.id.as_str()), |index| {
        nodes_path.index(index).key("id").render()
    })?;
    match kind {
        CollectionKind::List => check_list(&nodes, &nodes_path)?,
        CollectionKind::Tree => check_tree(&nodes, &nodes_path)?,
    }
    let selected_node_id = member(object, "selected_node_id")
        .map(|value| compact_id(value, &path.key("selected_node_id")))
        .transpose()?;
    if let Some(selected) = &selected_node_id {
        if !nodes.iter().any(|node| node.id == *selected) {
            return Err(path.key("selected_node_id").error(
                PresentationErrorKind::UnknownSelectedNode {
                    id: excerpt(selected),
                },
            ));
        }
    }
    let detail = member(object, "detail")
        .map(|value| detail(value, &path.key("detail"), selected_node_id.as_deref()))
        .transpose()?;
    Ok(Collection {
        kind,
        title,
        nodes,
        selected_node_id,
        detail,
    })
}

fn kind(value: &Value, path: &Path) -> Result<CollectionKind, PresentationError> {
    match as_str(value, path)? {
        "list" => Ok(CollectionKind::List),
        "tree" => Ok(CollectionKind::Tree),
        other => Err(path.error(PresentationErrorKind::UnknownValue {
            found: excerpt(other),
            allowed: CollectionKind::NAMES,
        })),
    }
}

fn node(value: &Value, path: &Path, action_ids: &HashSet<&str>) -> Result<Node, PresentationError> {
    let object = closed_object(
        value,
        path,
        &[
            "id",
            "parent_id",
            "state",
            "label",
            "secondary",
            "action_ids",
            "references",
        ],
    )?;
    let id = required_id(object, "id", path)?;
    let parent_id = member(object, "parent_id")
        .map(|value| compact_id(value, &path.key("parent_id")))
        .transpose()?;
    let state = state(object, path)?;
    let label = required_label(object, "label", path)?;
    let secondary = optional_label(object, "secondary", path)?;
    let node_action_ids = optional_list(object, "action_ids", path, usize::MAX, |value, path| {
        let id = compact_id(value, path)?;
        if !action_ids.contains(id.as_str()) {
            return Err(path.error(PresentationErrorKind::UnknownAction { id: excerpt(&id) }));
        }
        Ok(id)
    })?;
    let action_ids_path = path.key("action_ids");
    unique_ids(node_action_ids.iter().map(String::as_str), |index| {
        action_ids_path.index(index).render()
    })?;
    Ok(Node {
        id,
        parent_id,
        state,
        label,
        secondary,
        action_ids: node_action_ids,
        references: references(object, path)?,
    })
}

/// No node of a list has a parent.
fn check_list(nodes: &[Node], nodes_path: &Path) -> Result<(), PresentationError> {
    match nodes.iter().position(|node| node.parent_id.is_some()) {
        Some(index) => Err(parent_error(
            nodes_path,
            index,
            PresentationErrorKind::ParentInList,
        )),
        None => Ok(()),
    }
}

/// Every parent of a tree exists, following parents never cycles, and no node is deeper
/// than [`MAX_PRESENTATION_TREE_DEPTH`] (a root node is level 1). Nodes are examined in
/// order; each chain of parents is walked once, so the check is linear.
fn check_tree(nodes: &[Node], nodes_path: &Path) -> Result<(), PresentationError> {
    let index_of: HashMap<&str, usize> = nodes
        .iter()
        .enumerate()
        .map(|(index, node)| (node.id.as_str(), index))
        .collect();
    let mut parents = Vec::with_capacity(nodes.len());
    for (index, node) in nodes.iter().enumerate() {
        let parent = match &node.parent_id {
            None => None,
            Some(parent_id) => Some(*index_of.get(parent_id.as_str()).ok_or_else(|| {
                parent_error(
                    nodes_path,
                    index,
                    PresentationErrorKind::MissingParent {
                        parent_id: excerpt(parent_id),
                    },
                )
            })?),
        };
        parents.push(parent);
    }

    #[derive(Clone, Copy)]
    enum Mark {
        Unvisited,
        OnChain,
        Level(usize),
    }
    let mut marks = vec![Mark::Unvisited; nodes.len()];
    let mut chain = Vec::new();
    for start in 0..nodes.len() {
        chain.clear();
        let mut current = start;
        // Walks up until a node of known level, a root, or a node already on this chain.
        let mut level = loop {
            match marks[current] {
                Mark::Level(level) => break level,
                Mark::OnChain => {
                    // The last node pushed points back into the chain.
                    let closing = chain.last().copied().unwrap_or(current);
                    return Err(parent_error(
                        nodes_path,
                        closing,
                        PresentationErrorKind::Cycle,
                    ));
                }
                Mark::Unvisited => {
                    marks[current] = Mark::OnChain;
                    chain.push(current);
                    match parents[current] {
                        Some(parent) => current = parent,
                        None => break 0,
                    }
                }
            }
        };
        for &node in chain.iter().rev() {
            level += 1;
            if level > MAX_PRESENTATION_TREE_DEPTH {
                return Err(parent_error(
                    nodes_path,
                    node,
                    PresentationErrorKind::TooDeep {
                        max: MAX_PRESENTATION_TREE_DEPTH,
                    },
                ));
            }
            marks[node] = Mark::Level(level);
        }
    }
    Ok(())
}

/// An error of `kind` at `parent_id` of node `index`.
fn parent_error(nodes_path: &Path, index: usize, kind: PresentationErrorKind) -> PresentationError {
    nodes_path.index(index).key("parent_id").error(kind)
}

fn detail(
    value: &Value,
    path: &Path,
    selected_node_id: Option<&str>,
) -> Result<Detail, PresentationError> {
    let object = closed_object(value, path, &["node_id", "title", "body", "references"])?;
    let node_id = required_id(object, "node_id", path)?;
    if selected_node_id != Some(node_id.as_str()) {
        return Err(path
            .key("node_id")
            .error(PresentationErrorKind::DetailNotSelected {
                node_id: excerpt(&node_id),
                selected: selected_node_id.map(excerpt),
            }));
    }
    Ok(Detail {
        node_id,
        title: required_label(object, "title", path)?,
        body: body(required(object, "body", path)?, &path.key("body"))?,
        references: references(object, path)?,
    })
}
