//! The validated shape of a `presentation/update` (section 2.5; section 4,
//! ExtensionPresentationSnapshot), and its wire encoding.

use serde_json::{json, Map, Value};

use crate::services::ResourceOwner;
use crate::validate::GenericState;

/// One validated `presentation/update` notification.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PresentationUpdate {
    /// Whose state the snapshot is, as the extension claimed it; the dispatcher resolves
    /// it to a [`PresentationOwner`] after checking it.
    pub scope: PresentationScope,
    /// The complete snapshot.
    pub snapshot: PresentationSnapshot,
}

/// The owner an update claims, before the host checks the claim.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PresentationScope {
    /// `parent_request_id`: a handler-time snapshot for the active host request with this
    /// id; the owner is derived from that request.
    Parent(u64),
    /// `resource_owner`: a background publisher's host-issued triple, admitted only if
    /// exactly that triple was issued to this process generation.
    Owner(ResourceOwner),
    /// Neither: process-scoped state, which must contain no session-owned data.
    Process,
}

/// The key a retained snapshot is stored and throttled under, once the host has resolved
/// and checked the update's scope.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum PresentationOwner {
    /// Process-scoped state of the extension.
    Process,
    /// State owned by this host-issued owner triple.
    Resource(ResourceOwner),
}

/// One complete semantic state snapshot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PresentationSnapshot {
    /// The process-generation revision; monotonic within a generation.
    pub revision: u64,
    /// The overall state, if given.
    pub status: Option<SnapshotStatus>,
    /// Activities, empty when absent.
    pub activities: Vec<Activity>,
    /// The collection, if given.
    pub collection: Option<Collection>,
    /// Actions nodes may offer, empty when absent.
    pub actions: Vec<Action>,
}

/// The snapshot's overall state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SnapshotStatus {
    /// A generic state.
    pub state: GenericState,
    /// Its human label, such as "1 worker".
    pub label: String,
}

/// One activity, such as a delegated worker.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Activity {
    /// Stable extension-scoped id, unique among the activities.
    pub id: String,
    /// What kind of activity it is, such as "delegation".
    pub kind: String,
    /// A generic state.
    pub state: GenericState,
    /// One line saying what it does.
    pub summary: String,
    /// Where it runs, such as "local child".
    pub provenance: Option<String>,
    /// When it started, in milliseconds since the Unix epoch.
    pub started_at_ms: Option<u64>,
    /// Usage counters.
    pub metrics: Option<Metrics>,
    /// References, empty when absent.
    pub references: Vec<Reference>,
}

/// Usage counters of an activity. Every counter is within the portable JSON integer bound.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Metrics {
    /// Tool calls made.
    pub tool_calls: Option<u64>,
    /// Input tokens, disjoint from the cache counters.
    pub input_tokens: Option<u64>,
    /// Tokens read from cache.
    pub cache_read_tokens: Option<u64>,
    /// Tokens written to cache.
    pub cache_write_tokens: Option<u64>,
    /// Output tokens.
    pub output_tokens: Option<u64>,
    /// The reasoning subset of the output tokens; never above `output_tokens`.
    pub reasoning_tokens: Option<u64>,
    /// Cost in millionths of a dollar.
    pub cost_microdollars: Option<u64>,
}

/// Whether a collection is flat or nested.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CollectionKind {
    /// Flat: no node has a parent.
    List,
    /// Nested through `parent_id`, at most 16 levels.
    Tree,
}

impl CollectionKind {
    /// Every wire name.
    pub const NAMES: &'static [&'static str] = &["list", "tree"];

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            CollectionKind::List => "list",
            CollectionKind::Tree => "tree",
        }
    }
}

/// A list or tree of nodes, with an optional selection and its detail.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Collection {
    /// List or tree.
    pub kind: CollectionKind,
    /// Its title.
    pub title: String,
    /// The nodes, ids unique, in the extension's order.
    pub nodes: Vec<Node>,
    /// The selected node, which exists.
    pub selected_node_id: Option<String>,
    /// Detail of the selected node.
    pub detail: Option<Detail>,
}

/// One node of a collection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    /// Stable extension-scoped id, unique in the collection.
    pub id: String,
    /// The parent node of a tree node; always `None` in a list.
    pub parent_id: Option<String>,
    /// A generic state.
    pub state: GenericState,
    /// What the person sees.
    pub label: String,
    /// A secondary line.
    pub secondary: Option<String>,
    /// Ids of snapshot actions this node offers, each naming an action, no repeats.
    pub action_ids: Vec<String>,
    /// References, empty when absent.
    pub references: Vec<Reference>,
}

/// Detail of the selected node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Detail {
    /// Equal to the collection's `selected_node_id`.
    pub node_id: String,
    /// Its title.
    pub title: String,
    /// Plain multi-line text of at most 64 KiB.
    pub body: String,
    /// References, empty when absent.
    pub references: Vec<Reference>,
}

/// An action a node may offer: a declared command with literal arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Action {
    /// Stable id, unique among the actions.
    pub id: String,
    /// What the person sees.
    pub label: String,
    /// One of the manifest's declared commands.
    pub command: String,
    /// Literal arguments, empty when absent.
    pub arguments: Vec<String>,
    /// Needs confirmation before it runs.
    pub destructive: bool,
}

/// What a reference points at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReferenceKind {
    /// A session, by opaque id; a read-only lookup key.
    Session,
    /// An artifact, by opaque id.
    Artifact,
    /// A resource, by opaque id.
    Resource,
    /// An absolute HTTP(S) URL that passed [`check_url`](super::check_url).
    Url,
}

impl ReferenceKind {
    /// Every wire name.
    pub const NAMES: &'static [&'static str] = &["session", "artifact", "resource", "url"];

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            ReferenceKind::Session => "session",
            ReferenceKind::Artifact => "artifact",
            ReferenceKind::Resource => "resource",
            ReferenceKind::Url => "url",
        }
    }
}

/// A reference from an activity, node or detail.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reference {
    /// What it points at.
    pub kind: ReferenceKind,
    /// The opaque id, or the URL for [`ReferenceKind::Url`].
    pub id: String,
    /// What the person sees.
    pub label: Option<String>,
}

impl PresentationSnapshot {
    /// The snapshot in wire shape. Absent options are left out; `activities` and `actions`
    /// are always present, as are `references` and `action_ids`, and `destructive` is
    /// written only when true. Validating the result yields this snapshot again.
    pub fn to_value(&self) -> Value {
        let mut object = Map::new();
        object.insert("revision".into(), Value::from(self.revision));
        if let Some(status) = &self.status {
            object.insert(
                "status".into(),
                json!({"state": status.state.as_str(), "label": status.label}),
            );
        }
        object.insert(
            "activities".into(),
            Value::Array(self.activities.iter().map(Activity::to_value).collect()),
        );
        if let Some(collection) = &self.collection {
            object.insert("collection".into(), collection.to_value());
        }
        object.insert(
            "actions".into(),
            Value::Array(self.actions.iter().map(Action::to_value).collect()),
        );
        Value::Object(object)
    }
}

impl Activity {
    fn to_value(&self) -> Value {
        let mut object = Map::new();
        object.insert("id".into(), Value::from(self.id.as_str()));
        object.insert("kind".into(), Value::from(self.kind.as_str()));
        object.insert("state".into(), Value::from(self.state.as_str()));
        object.insert("summary".into(), Value::from(self.summary.as_str()));
        insert_text(&mut object, "provenance", &self.provenance);
        if let Some(started_at_ms) = self.started_at_ms {
            object.insert("started_at_ms".into(), Value::from(started_at_ms));
        }
        if let Some(metrics) = &self.metrics {
            object.insert("metrics".into(), metrics.to_value());
        }
        object.insert("references".into(), references(&self.references));
        Value::Object(object)
    }
}

impl Metrics {
    /// The counter names, in wire order.
    pub const NAMES: &'static [&'static str] = &[
        "tool_calls",
        "input_tokens",
        "cache_read_tokens",
        "cache_write_tokens",
        "output_tokens",
        "reasoning_tokens",
        "cost_microdollars",
    ];

    /// The counters in the order of [`Metrics::NAMES`].
    pub fn counters(&self) -> [Option<u64>; 7] {
        [
            self.tool_calls,
            self.input_tokens,
            self.cache_read_tokens,
            self.cache_write_tokens,
            self.output_tokens,
            self.reasoning_tokens,
            self.cost_microdollars,
        ]
    }

    fn to_value(self) -> Value {
        let object = Metrics::NAMES
            .iter()
            .zip(self.counters())
            .filter_map(|(name, counter)| counter.map(|n| ((*name).to_owned(), Value::from(n))))
            .collect();
        Value::Object(object)
    }
}

impl Collection {
    fn to_value(&self) -> Value {
        let mut object = Map::new();
        object.insert("kind".into(), Value::from(self.kind.as_str()));
        object.insert("title".into(), Value::from(self.title.as_str()));
        object.insert(
            "nodes".into(),
            Value::Array(self.nodes.iter().map(Node::to_value).collect()),
        );
        insert_text(&mut object, "selected_node_id", &self.selected_node_id);
        if let Some(detail) = &self.detail {
            object.insert(
                "detail".into(),
                json!({
                    "node_id": detail.node_id,
                    "title": detail.title,
                    "body": detail.body,
                    "references": references(&detail.references),
                }),
            );
        }
        Value::Object(object)
    }
}

impl Node {
    fn to_value(&self) -> Value {
        let mut object = Map::new();
        object.insert("id".into(), Value::from(self.id.as_str()));
        insert_text(&mut object, "parent_id", &self.parent_id);
        object.insert("state".into(), Value::from(self.state.as_str()));
        object.insert("label".into(), Value::from(self.label.as_str()));
        insert_text(&mut object, "secondary", &self.secondary);
        object.insert("action_ids".into(), json!(self.action_ids));
        object.insert("references".into(), references(&self.references));
        Value::Object(object)
    }
}

impl Action {
    fn to_value(&self) -> Value {
        let mut object = Map::new();
        object.insert("id".into(), Value::from(self.id.as_str()));
        object.insert("label".into(), Value::from(self.label.as_str()));
        object.insert("command".into(), Value::from(self.command.as_str()));
        object.insert("arguments".into(), json!(self.arguments));
        if self.destructive {
            object.insert("destructive".into(), Value::Bool(true));
        }
        Value::Object(object)
    }
}

fn references(references: &[Reference]) -> Value {
    Value::Array(
        references
            .iter()
            .map(|reference| {
                let mut object = Map::new();
                object.insert("kind".into(), Value::from(reference.kind.as_str()));
                object.insert("id".into(), Value::from(reference.id.as_str()));
                insert_text(&mut object, "label", &reference.label);
                Value::Object(object)
            })
            .collect(),
    )
}

fn insert_text(object: &mut Map<String, Value>, key: &str, value: &Option<String>) {
    if let Some(value) = value {
        object.insert(key.into(), Value::from(value.as_str()));
    }
}
