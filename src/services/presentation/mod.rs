//! `presentation/update` (section 2.5; section 4, ExtensionPresentationSnapshot): complete
//! validation of one update ([`parse_update`]), the per-generation emission throttle
//! ([`PresentationThrottle`]) and the retention of the latest accepted snapshot per owner
//! ([`PresentationStore`]).
//!
//! The intended flow in the dispatcher, for an extension whose manifest has
//! `contributes.presentation = true`: [`parse_update`] (a refusal is a diagnostic; nothing
//! of the update is kept); resolve the [`PresentationScope`] to a [`PresentationOwner`]
//! (live parent request's owner, or an issued triple, or process scope); drop foreign or
//! stale owners; [`PresentationStore::accept`] (a [`StaleUpdate`] is ignored or diagnosed);
//! then [`PresentationThrottle::offer`] and, whenever
//! [`PresentationThrottle::next_wakeup`] passes, [`PresentationThrottle::poll`] to decide
//! when the accepted snapshot reaches frontends. Because the store refuses non-increasing
//! revisions first, the throttle's last-wins coalescing always keeps the newest revision.
//!
//! # Shape and rules
//!
//! Every object is closed: a member its type does not define is refused, so no layout
//! coordinates or styling can ride along ("plain data"). A member whose value is `null`
//! counts as absent; a required member absent or null is refused.
//!
//! - params: `snapshot` (required), `parent_request_id` (unsigned integer) or
//!   `resource_owner` (the closed owner triple), never both. With neither, the state is
//!   process-scoped and "must contain no session-owned data": a `session` reference
//!   anywhere in it is refused. (Artifact and resource references are opaque ids checked
//!   against the resolved owner when a frontend dereferences them, not here.)
//! - snapshot: `revision` (required, unsigned integer at most 2^53 - 1, zero valid),
//!   `status` (optional `{state, label}`), `activities` (optional, at most 128, empty when
//!   absent), `collection` (optional), `actions` (optional, at most 64, empty when absent).
//!   Its compact JSON encoding is at most 256 KiB.
//! - activity: `id`, `kind`, `state`, `summary` required; `provenance`, `started_at_ms`
//!   (at most 2^53 - 1), `metrics`, `references` optional. Activity ids are unique.
//! - metrics: each of `tool_calls`, `input_tokens`, `cache_read_tokens`,
//!   `cache_write_tokens`, `output_tokens`, `reasoning_tokens`, `cost_microdollars` is
//!   optional, an unsigned integer at most 2^53 - 1. `reasoning_tokens` is a subset of
//!   `output_tokens`: it may not exceed it, and is refused when `output_tokens` is absent.
//! - collection: `kind` (`list` or `tree`), `title` and `nodes` (at most 256) required;
//!   `selected_node_id` and `detail` optional. Node ids are unique. A list node has no
//!   `parent_id`; a tree node's `parent_id` names a node of the collection, parents never
//!   cycle, and no node is deeper than 16 levels (a node without parent is level 1). The
//!   selected node exists. `detail` (`node_id`, `title`, `body` required, `references`
//!   optional) requires `node_id` equal to `selected_node_id`; the body is at most 64 KiB.
//! - node: `id`, `state`, `label` required; `parent_id`, `secondary`, `action_ids`,
//!   `references` optional. Each action id names an action of the snapshot, without
//!   repeats.
//! - action: `id`, `label`, `command` required; `arguments` (strings, empty when absent)
//!   and `destructive` (false when absent) optional. Action ids are unique; `command` is one
//!   of the manifest's declared commands. Arguments are literal data passed to
//!   `command/execute`, not displayed text, so only their type is checked.
//! - reference: `kind` (`session`, `artifact`, `resource`, `url`) and `id` required, `label`
//!   optional; at most 8 per activity, node or detail. A `url` reference's id passes
//!   [`check_url`].
//! - `state` everywhere is a [`GenericState`](crate::validate::GenericState).
//! - Text: every id, label, kind, title, summary, provenance, secondary line, command and
//!   reference id or label is compact text: at most 1,024 UTF-8 bytes (ids and activity
//!   kinds non-empty, labels may be empty) and no control character at all (C0 U+0000 to
//!   U+001F, DEL U+007F, C1 U+0080 to U+009F, and the line and paragraph separators U+2028
//!   and U+2029), so no ANSI escape sequence can start. The detail body is at most 64 KiB
//!   and admits line feed and tab, nothing else of those. Markup is refused in both: `<`
//!   directly followed by an ASCII letter, `/`, `!` or `?`, which is how every HTML tag,
//!   end tag, comment, doctype and processing instruction (and so every `<script>` and
//!   `<style>`) starts. A lone `<` as in `a < b` or `<=` is text; `Vec<String>` is refused.

mod collection;
mod error;
mod field;
mod parts;
mod snapshot;
mod store;
mod text;
mod throttle;
mod types;
mod url;

pub use error::{JsonType, PresentationError, PresentationErrorKind};
pub use snapshot::parse_update;
pub use store::{PresentationStore, RetainedSnapshot, StaleUpdate};
pub use throttle::{Offer, PresentationThrottle};
pub use types::{
    Action, Activity, Collection, CollectionKind, Detail, Metrics, Node, PresentationOwner,
    PresentationScope, PresentationSnapshot, PresentationUpdate, Reference, ReferenceKind,
    SnapshotStatus,
};
pub use url::{check_url, classify, AddressClass, UrlError};
