//! The bounds of the features the runtime serves itself: typed diagnostics in tool
//! results, tool composition, resource refs and operation descriptors, bulk objects.

use std::time::Duration;

// ---------------------------------------------------------------------------
// Typed diagnostics in tool results ("Typed diagnostics in tool results",
// `metadata.octet_diagnostics_v1`, and the shared SDK profile it names).
// ---------------------------------------------------------------------------

/// Most diagnostics in one result's `metadata.octet_diagnostics_v1`.
pub const MAX_DIAGNOSTICS: usize = 32;

/// Largest encoded `metadata.octet_diagnostics_v1` list, in bytes.
pub const MAX_DIAGNOSTICS_BYTES: usize = 64 * 1024;

/// Longest diagnostic `code`, in bytes: an ASCII letter, then letters, digits, `_`,
/// `.` or `-`.
pub const MAX_DIAGNOSTIC_CODE_BYTES: usize = 128;

/// Longest diagnostic `message`, related `message`, fix `title` and attachment
/// `label`, in UTF-8 bytes (LF and TAB allowed, no other control).
pub const MAX_DIAGNOSTIC_TEXT_BYTES: usize = 4096;

/// Longest `replacement` of a suggested edit, in UTF-8 bytes (may be empty).
pub const MAX_DIAGNOSTIC_REPLACEMENT_BYTES: usize = 16 * 1024;

/// Longest workspace-relative `path` of a diagnostic source, in bytes.
pub const MAX_DIAGNOSTIC_PATH_BYTES: usize = 4096;

/// Longest host-issued blob or artifact id a diagnostic names: printable ASCII.
pub const MAX_DIAGNOSTIC_ID_BYTES: usize = 128;

/// Most `related` locations of one diagnostic.
pub const MAX_DIAGNOSTIC_RELATED: usize = 16;

/// Most `fixes` of one diagnostic.
pub const MAX_DIAGNOSTIC_FIXES: usize = 8;

/// Most `edits` of one fix (at least one).
pub const MAX_DIAGNOSTIC_EDITS: usize = 16;

/// Most `attachments` of one diagnostic.
pub const MAX_DIAGNOSTIC_ATTACHMENTS: usize = 16;

/// Span offsets are portable JSON integers: below 2^53.
pub const MAX_DIAGNOSTIC_OFFSET: u64 = (1 << 53) - 1;

/// How many diagnostics the plain-text summary an SDK appends projects.
pub const DIAGNOSTIC_SUMMARY_COUNT: usize = 8;

/// Longest plain-text summary of a result's diagnostics, in UTF-8 bytes.
pub const MAX_DIAGNOSTIC_SUMMARY_BYTES: usize = 4096;

// ---------------------------------------------------------------------------
// Tool composition (section 2.25, API 0.4 `tool_composition_v1`).
// ---------------------------------------------------------------------------

/// The one deadline of all of a parent's nested calls, from the parent's admission
/// (`limits.timeout_ms` of `composition/context`), unless the embedder chose another
/// (`--composition-timeout`).
pub const COMPOSITION_TIMEOUT: Duration = Duration::from_secs(30);

/// The shortest composition deadline an embedder may choose (section 2.25's
/// `limits.timeout_ms`): a nested call needs time to start.
pub const MIN_COMPOSITION_TIMEOUT: Duration = Duration::from_millis(100);

/// The longest composition deadline an embedder may choose: a parent holds its frozen
/// registry, its sidecars and its store scope until then.
pub const MAX_COMPOSITION_TIMEOUT: Duration = Duration::from_secs(600);

/// Most `composition/call` requests per parent (`limits.max_calls`).
pub const MAX_COMPOSITION_CALLS: u32 = 256;

/// Longest frozen tool name a `composition/call` names, in UTF-8 bytes (at least 1).
pub const MAX_COMPOSITION_TOOL_NAME_BYTES: usize = 128;

/// Largest encoded `arguments` of a `composition/call`.
pub const MAX_COMPOSITION_ARGUMENTS_BYTES: usize = 128 * 1024;

/// Deepest nesting of `composition/call` arguments.
pub const MAX_COMPOSITION_ARGUMENTS_DEPTH: usize = 32;

/// Most keys in one `composition/store` write batch (`set` and `delete` together).
pub const MAX_COMPOSITION_STORE_KEYS: usize = 4096;

/// Longest store key, in UTF-8 bytes.
pub const MAX_COMPOSITION_STORE_KEY_BYTES: usize = 1024;

/// Largest encoded store value.
pub const MAX_COMPOSITION_STORE_VALUE_BYTES: usize = 256 * 1024;

/// Largest encoded store of one composing tool, after a write.
pub const MAX_COMPOSITION_STORE_BYTES: usize = 1024 * 1024;

/// Largest sidecar file carrying an oversized `composition/context` or
/// `composition/call` answer.
pub const MAX_COMPOSITION_SIDECAR_BYTES: usize = 8 * 1024 * 1024;

/// Most sidecar files the host keeps for one parent.
pub const MAX_COMPOSITION_SIDECARS: usize = 256;

/// Most `composition/update` snapshots of one nested call that wait for the composing
/// generation's writer ("The channel holds at most 64 snapshots, is nonblocking, and
/// may drop progress under pressure", section 2.25): a bound on the backlog, not on
/// the total; a snapshot that finds the channel full is dropped.
pub const MAX_COMPOSITION_UPDATES: usize = 64;

// ---------------------------------------------------------------------------
// Resource refs and operation descriptors (section 2.26, API 0.4 `resource_refs_v1`,
// `operation_descriptors_v1`).
// ---------------------------------------------------------------------------

/// Longest nominal resource type id, in ASCII bytes (section 2.26: "1–128 ASCII
/// bytes"). Operation ids follow the same rule.
pub const MAX_RESOURCE_TYPE_BYTES: usize = 128;

/// Longest `$resource` token, in ASCII bytes (section 2.26: "tokens are at most 128
/// ASCII bytes").
pub const MAX_RESOURCE_TOKEN_BYTES: usize = 128;

/// Most entries of an operation descriptor's `resource_inputs`, and of its
/// `resource_outputs` (section 2.26 gives no number; this host's bound, as large as
/// `max_registrations_per_parent`).
pub const MAX_OPERATION_RESOURCES: usize = 32;

/// Most segments of a descriptor's JSON Pointer (section 2.26: "fixed JSON Pointers
/// through schema object properties"; the schema subset nests at most 32 levels).
pub const MAX_OPERATION_PATH_SEGMENTS: usize = 32;

/// Most refs one `resource/dispose` request carries (SUPPLEMENT "2.26 resource
/// methods": `resources:[<= 32 refs]`).
pub const MAX_DISPOSE_RESOURCES: usize = 32;

/// How long the host waits for a `resource/dispose` answer; an unanswered dispose is
/// unknown cleanup and ends the generation (section 2.26: "Unknown cleanup triggers
/// bounded generation termination").
pub const RESOURCE_DISPOSE_TIMEOUT: Duration = Duration::from_secs(10);

/// Cards `get_applicable_operations` answers when the model names no `limit`
/// (section 2.26: "Default limit is 8 cards").
pub const OPERATION_DISCOVERY_DEFAULT_LIMIT: usize = 8;

/// Most cards one `get_applicable_operations` page holds (section 2.26: "maximum 32").
pub const OPERATION_DISCOVERY_MAX_LIMIT: usize = 32;

// ---------------------------------------------------------------------------
// Bulk objects (section 2.27, API 0.4 `bulk_objects_v1`); the quotas' defaults are
// above, with the offer.
// ---------------------------------------------------------------------------

/// Most BlobRefs one result's structured content may carry (a host bound).
pub const MAX_RESULT_BLOBS: usize = 256;

/// Most BlobRefs of one call's arguments that grant it a read (a host bound; more are
/// ignored).
pub const MAX_GRANTED_BLOBS: usize = 64;
