//! Every protocol bound the host enforces, in one place.
//!
//! Each constant names the section of `wire-protocol-reference.txt` (or of
//! `SUPPLEMENT.md`, "Default bounds") that sets it. Code elsewhere refers to these
//! names, never to the bare numbers.

use std::time::Duration;

/// The host's own octet version, sent as `octet_version` in `initialize` (section 1.1)
/// and checked against a manifest's `requires_octet` before any process starts.
pub const OCTET_VERSION: &str = "0.8.0";

// ---------------------------------------------------------------------------
// Framing (Transport defaults; SUPPLEMENT "Default bounds").
// ---------------------------------------------------------------------------

/// Largest frame, one JSON object plus its terminating LF, in either direction:
/// 1 MiB (SUPPLEMENT "Default bounds": frame).
pub const MAX_FRAME_BYTES: usize = 1024 * 1024;

/// Largest request id string, in UTF-8 bytes (section 2, "Every extension-originated
/// request ID"; section 2.2).
pub const MAX_ID_STRING_BYTES: usize = 256;

// ---------------------------------------------------------------------------
// Requests, deadlines and cancellation (sections 1.6b, 1.8, 1.9; SUPPLEMENT).
// ---------------------------------------------------------------------------

/// Host requests admitted at once per generation unless negotiation lowers it
/// (section 1.1 `limits.max_concurrent_requests`; SUPPLEMENT "Default bounds").
pub const MAX_CONCURRENT_REQUESTS: u32 = 64;

/// Frames that may wait in one generation's writer queue (SUPPLEMENT "Default bounds").
pub const WRITER_QUEUE_FRAMES: usize = 128;

/// How long the embedder's tool policy may take to decide one `tools/register`
/// (section 2.11, "applies the active host tool policy"; host policy): the dispatcher
/// waits at most this long, and a policy that has not answered refuses every tool of
/// that registration.
pub const TOOL_POLICY_TIMEOUT: Duration = Duration::from_millis(200);

/// Bytes of answers and notifications that may wait for one generation behind its
/// writer queue before the host stops reading that extension (host policy: section 2
/// has every readable request answered, and no queue may grow without bound). Over it,
/// the reader leaves the extension's stdout alone until the backlog has drained, so an
/// extension that does not read its answers is stopped by its own blocked writes, and a
/// Wave-1 notification for it is refused (`bounds_exceeded`) instead of queued. Host
/// requests do not count: the negotiated concurrency bounds them.
pub const MAX_OUTBOUND_BACKLOG_BYTES: usize = 4 * 1024 * 1024;

/// Batches of one generation (each what one read of up to 64 KiB completed) that may
/// wait for the dispatcher at once; the reader reads on only once the dispatcher has
/// handled one (host policy, the bound on what an extension's flood can queue inside
/// the host).
pub const MAX_INFLIGHT_BATCHES: usize = 32;

/// Default deadline of an ordinary host request (SUPPLEMENT "Default bounds").
pub const REQUEST_DEADLINE: Duration = Duration::from_secs(30);

/// Default time an extension has to answer `initialize` (SUPPLEMENT "Default bounds":
/// the ordinary request deadline). [`crate::host::ExtensionHostBuilder::startup_timeout`]
/// and [`crate::host::StartOptions`] change it.
pub const STARTUP_TIMEOUT: Duration = REQUEST_DEADLINE;

/// Longest `label` of a `decoration` progress event, in bytes (section 2.6: "bounded
/// ephemeral annotation rules"; a host bound, as for menu labels).
pub const PROGRESS_DECORATION_LABEL_BYTES: usize = 256;

/// Longest `detail` of a `decoration` progress event, in bytes (section 2.6; a host
/// bound, as for menu item descriptions).
pub const PROGRESS_DECORATION_DETAIL_BYTES: usize = 4096;

/// Longest tool `description` of an API 0.3 `initialize` result, in UTF-8 bytes
/// (SUPPLEMENT "API 0.3", initialize: `description <= 4096 bytes`).
pub const MAX_V0_3_TOOL_DESCRIPTION_BYTES: usize = 4096;

/// Most delay `provider_retry` advice adds to one run's retries, in milliseconds
/// (SUPPLEMENT "API 0.2 typed hooks": "total added delay capped at 5 s").
pub const MAX_PROVIDER_RETRY_ADDED_DELAY_MS: u64 = 5_000;

/// Most namespaces in a `before_persistence` result's `persistence_metadata.value`
/// (SUPPLEMENT "API 0.2 typed hooks").
pub const MAX_PERSISTENCE_NAMESPACES: usize = 32;

/// Largest encoded value of one `persistence_metadata` namespace (SUPPLEMENT "API 0.2
/// typed hooks": 16 KiB per value).
pub const MAX_PERSISTENCE_NAMESPACE_BYTES: usize = 16 * 1024;

/// Largest encoded `persistence_metadata.value` as a whole (SUPPLEMENT "API 0.2 typed
/// hooks": 128 KiB in all).
pub const MAX_PERSISTENCE_METADATA_BYTES: usize = 128 * 1024;

/// Deepest nesting of `persistence_metadata.value` (SUPPLEMENT "API 0.2 typed hooks").
pub const MAX_PERSISTENCE_METADATA_DEPTH: usize = 16;

/// Most JSON values in `persistence_metadata.value` (SUPPLEMENT "API 0.2 typed hooks").
pub const MAX_PERSISTENCE_METADATA_NODES: usize = 256;

/// The one deadline of a `before_persistence` hook (SUPPLEMENT "API 0.2 typed hooks").
pub const BEFORE_PERSISTENCE_DEADLINE: Duration = Duration::from_millis(200);

/// Most `affected_resources` of a `post_mutation` payload (SUPPLEMENT "API 0.2 typed
/// hooks").
pub const MAX_POST_MUTATION_RESOURCES: usize = 32;

/// The deadline of a `post_mutation` hook for one process (SUPPLEMENT "API 0.2 typed
/// hooks").
pub const POST_MUTATION_DEADLINE: Duration = Duration::from_millis(250);

/// The window of recent `post_mutation` ids within which a mutation is sent to a
/// generation once (SUPPLEMENT "API 0.2 typed hooks": "mutation ids deduplicated over a
/// window of 256").
pub const MAX_POST_MUTATION_IDS: usize = 256;

/// Longest `source_root` of an API 0.3 `migration/detect` or `migration/import`, in
/// bytes (SUPPLEMENT "Methods in brief").
pub const MAX_SOURCE_ROOT_BYTES: usize = 4096;

/// Longest `content` of a skill an API 0.3 `migration/import` returns, in bytes
/// (SUPPLEMENT "Methods in brief").
pub const MAX_SKILL_CONTENT_BYTES: usize = 131_072;

/// Events an API 0.3 provider stream buffers for its reader; further ones are dropped
/// with a diagnostic until the reader catches up (a host bound).
pub const PROVIDER_STREAM_QUEUE: usize = 256;

/// Most stderr lines a start error carries ([`crate::host::StartupEvidence`]); a host
/// bound, not the reference's.
pub const STARTUP_STDERR_LINES: usize = 8;

/// Longest stderr line a start error carries, in characters; a host bound.
pub const STARTUP_STDERR_LINE_CHARS: usize = 200;

/// Deadline of `menu/collect` before the generated fallback menu is used (section 1.6b).
pub const MENU_COLLECT_DEADLINE: Duration = Duration::from_secs(5);

/// Deadline of a menu action a person started and watches (section 1.6b).
pub const ATTENDED_MENU_ACTION_DEADLINE: Duration = Duration::from_secs(30 * 60);

/// How long a cancelled request may take to settle before its generation is degraded
/// and terminated (section 1.9).
pub const CANCELLATION_GRACE: Duration = Duration::from_secs(2);

/// Most cancelled ids remembered per generation as tombstones (SUPPLEMENT "Default bounds").
pub const MAX_TOMBSTONES: usize = 512;

/// How long a tombstone is remembered (SUPPLEMENT "Default bounds").
pub const TOMBSTONE_TTL: Duration = Duration::from_secs(30);

/// Extension-originated requests that may be outstanding at once (section 2).
pub const MAX_OUTSTANDING_CHILD_REQUESTS: usize = 128;

/// Distinct extension-originated request ids one generation may ever use (section 2).
pub const MAX_CHILD_IDS_PER_GENERATION: usize = 65_536;

// ---------------------------------------------------------------------------
// Shutdown (section 1.8).
// ---------------------------------------------------------------------------

/// How long the host waits for the `shutdown` acknowledgement (section 1.8).
pub const SHUTDOWN_ACK_TIMEOUT: Duration = Duration::from_secs(2);

/// How long the host then waits for the child to exit (section 1.8).
pub const SHUTDOWN_EXIT_TIMEOUT: Duration = Duration::from_secs(2);

/// Aggregate deadline for shutting every connection down in parallel (section 1.8).
pub const SHUTDOWN_AGGREGATE_DEADLINE: Duration = Duration::from_secs(3);

/// Cap on the whole extension shutdown during coordinated signal exits (section 1.8).
pub const SIGNAL_SHUTDOWN_CAP: Duration = Duration::from_millis(1400);

// ---------------------------------------------------------------------------
// initialize (section 1.1).
// ---------------------------------------------------------------------------

/// Most command definitions an initialize response may contain (section 1.1).
pub const MAX_COMMANDS: usize = 256;

/// Most tools in a catalog, at initialize or after dynamic registration (sections 2.11, 2.12).
pub const MAX_TOOLS: usize = 256;

/// Most `prompt_guidelines` per tool with `tool_prompt_metadata_v1` (section 1.1, API 0.4).
pub const MAX_PROMPT_GUIDELINES: usize = 16;

/// Largest `prompt_snippet` or single guideline, in UTF-8 bytes (section 1.1, API 0.4).
pub const MAX_PROMPT_METADATA_BYTES: usize = 1024;

/// Largest `composition.inline_budget` of a tool definition, in estimated tokens
/// (section 2.25, API 0.4 `tool_composition_v1`).
pub const MAX_COMPOSITION_INLINE_BUDGET: u64 = 16_000;

/// `protocol.limits.resource_refs_v1.max_records` advertised with `resource_refs_v1`
/// (section 2.26).
pub const RESOURCE_REFS_MAX_RECORDS: u32 = 256;

/// `protocol.limits.resource_refs_v1.max_registrations_per_parent` advertised with
/// `resource_refs_v1` (section 2.26).
pub const RESOURCE_REFS_MAX_REGISTRATIONS_PER_PARENT: u32 = 32;

/// Default bulk `object_bytes` limit with `bulk_objects_v1` (section 2.27).
pub const BULK_OBJECT_BYTES: u64 = 268_435_456;

/// Default bulk `owner_bytes` limit with `bulk_objects_v1` (section 2.27).
pub const BULK_OWNER_BYTES: u64 = 536_870_912;

/// Default bulk `write_tickets_per_generation` limit with `bulk_objects_v1` (section 2.27).
pub const BULK_WRITE_TICKETS_PER_GENERATION: u64 = 8;

/// Default bulk `read_leases_per_generation` limit with `bulk_objects_v1` (section 2.27).
pub const BULK_READ_LEASES_PER_GENERATION: u64 = 32;

/// Default bulk `blobs_per_owner` limit with `bulk_objects_v1` (section 2.27).
pub const BULK_BLOBS_PER_OWNER: u64 = 256;

/// Largest extension name, in bytes (SUPPLEMENT "Manifest").
pub const MAX_EXTENSION_NAME_BYTES: usize = 64;

/// Largest tool, command, hook or renderer identifier, in bytes (section 2.23: tool names
/// are at most 128 UTF-8 bytes).
pub const MAX_CONTRIBUTION_NAME_BYTES: usize = 128;

/// Largest secret name, in ASCII bytes (section 1.1, secrets).
pub const MAX_SECRET_NAME_BYTES: usize = 64;

/// Largest manifest read on the discovery path (Transport defaults; SUPPLEMENT).
pub const MAX_MANIFEST_BYTES_DISCOVERY: u64 = 256 * 1024;

/// Default bound of the low-level manifest loader (Transport defaults; SUPPLEMENT).
pub const MAX_MANIFEST_BYTES_LOADER: u64 = 64 * 1024;

// ---------------------------------------------------------------------------
// Results (section 1.2).
// ---------------------------------------------------------------------------

/// Most content parts in an API 0.2 tool result (section 1.2).
pub const MAX_CONTENT_PARTS: usize = 256;

/// Largest encoded `structured_content` (section 1.2).
pub const MAX_STRUCTURED_CONTENT_BYTES: usize = 256 * 1024;

/// Largest encoded result `metadata` (section 1.2).
pub const MAX_METADATA_BYTES: usize = 64 * 1024;

/// Deepest nesting of structured content, metadata and output schemas (sections 1.1, 1.2).
pub const MAX_JSON_DEPTH: usize = 32;

/// Most JSON nodes in structured content or metadata (section 1.2).
pub const MAX_JSON_NODES: usize = 16_384;

/// Largest metadata object key, and largest output-schema property name (sections 1.1, 1.2).
pub const MAX_JSON_KEY_BYTES: usize = 256;

/// Aggregate bytes of media referenced by one tool result (section 1.2).
pub const MAX_RESULT_MEDIA_BYTES: u64 = 64 * 1024 * 1024;

// ---------------------------------------------------------------------------
// Artifacts (section 2.8).
// ---------------------------------------------------------------------------

/// Largest decoded inline (`data`, base64) artifact publication, in bytes (section 2.8:
/// "256 KiB inline").
pub const MAX_ARTIFACT_INLINE_BYTES: u64 = 256 * 1024;

/// Largest single artifact, in bytes (section 2.8: "20 MiB per artifact").
pub const MAX_ARTIFACT_BYTES: u64 = 20 * 1024 * 1024;

/// Aggregate bytes of the artifacts one process generation may publish (section 2.8:
/// "64 MiB ... per process generation").
pub const MAX_ARTIFACT_GENERATION_BYTES: u64 = 64 * 1024 * 1024;

/// Most artifacts one process generation may publish (section 2.8: "64 artifacts per
/// process generation").
pub const MAX_ARTIFACTS_PER_GENERATION: usize = 64;

/// Longest relative scratch `path` of a publication, in UTF-8 bytes (section 2.8:
/// "a 4096-byte/64-component relative path").
pub const MAX_ARTIFACT_PATH_BYTES: usize = 4096;

/// Most components of a relative scratch `path` of a publication (section 2.8:
/// "a 4096-byte/64-component relative path").
pub const MAX_ARTIFACT_PATH_COMPONENTS: usize = 64;

// ---------------------------------------------------------------------------
// Menus (section 1.6b, section 4 ExtensionMenu).
// ---------------------------------------------------------------------------

/// Most menu items across all levels (section 1.6b).
pub const MAX_MENU_ITEMS: usize = 256;

/// Deepest menu nesting, counting the top level as 1 (section 1.6b).
pub const MAX_MENU_DEPTH: usize = 4;

/// Largest encoded menu (section 4, ExtensionMenu).
pub const MAX_MENU_BYTES: usize = 256 * 1024;

// ---------------------------------------------------------------------------
// Extension-to-host messages (section 2).
// ---------------------------------------------------------------------------

/// Largest `input/request` prompt, in UTF-8 bytes (section 2.7).
pub const MAX_INPUT_PROMPT_BYTES: usize = 16 * 1024;

/// Largest `input/request` answer, in UTF-8 bytes (section 2.7).
pub const MAX_INPUT_ANSWER_BYTES: usize = 256 * 1024;

/// Size of each chunk `$/progress` output is split into (section 2.6).
pub const PROGRESS_OUTPUT_CHUNK_BYTES: usize = 8 * 1024;

/// Largest lifecycle `reason`, in UTF-8 bytes (section 1.10).
pub const MAX_LIFECYCLE_REASON_BYTES: usize = 4 * 1024;

/// Deadline for delivering session and turn lifecycle notifications (section 1.10).
pub const LIFECYCLE_SESSION_TURN_DEADLINE: Duration = Duration::from_millis(250);

/// Largest JSON integer exactly representable in a double, the portable bound on
/// counters, revisions and timestamps (section 2.5).
pub const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

// ---------------------------------------------------------------------------
// presentation/update (section 2.5; section 4, ExtensionPresentationSnapshot).
// ---------------------------------------------------------------------------

/// Largest encoded presentation snapshot (section 2.5).
pub const MAX_PRESENTATION_SNAPSHOT_BYTES: usize = 256 * 1024;

/// Most activities in one presentation snapshot (section 2.5).
pub const MAX_PRESENTATION_ACTIVITIES: usize = 128;

/// Most collection nodes in one presentation snapshot (section 2.5).
pub const MAX_PRESENTATION_NODES: usize = 256;

/// Most actions in one presentation snapshot (section 2.5).
pub const MAX_PRESENTATION_ACTIONS: usize = 64;

/// Most levels of a presentation tree, counting a root node as level 1 (section 2.5).
pub const MAX_PRESENTATION_TREE_DEPTH: usize = 16;

/// Most references on one activity, node or detail (section 2.5).
pub const MAX_PRESENTATION_REFERENCES: usize = 8;

/// Largest compact label or id of a presentation snapshot, in UTF-8 bytes (section 2.5).
pub const MAX_PRESENTATION_COMPACT_BYTES: usize = 1024;

/// Largest presentation detail `body`, in UTF-8 bytes (section 2.5).
pub const MAX_PRESENTATION_BODY_BYTES: usize = 64 * 1024;

/// Most presentation snapshots one generation emits per throttle window (section 2.5;
/// SUPPLEMENT "Default bounds").
pub const PRESENTATION_SNAPSHOTS_PER_WINDOW: usize = 32;

/// Length of the presentation throttle window (section 2.5).
pub const PRESENTATION_THROTTLE_WINDOW: Duration = Duration::from_secs(1);

// ---------------------------------------------------------------------------
// Canonical wire (SUPPLEMENT "API 0.3 (canonical wire)").
// ---------------------------------------------------------------------------

/// Deepest nesting of arrays and objects in an `octet-canonical-json-v1` frame, counting
/// the outermost array or object as 1 (SUPPLEMENT "API 0.3 (canonical wire)": depth at
/// most 32).
pub const CANONICAL_MAX_DEPTH: usize = 32;

/// Largest magnitude of an integer in an `octet-canonical-json-v1` frame: integers lie
/// within +-(2^53-1) (SUPPLEMENT "API 0.3 (canonical wire)").
pub const CANONICAL_MAX_INTEGER: u64 = MAX_SAFE_INTEGER;

/// Largest frame of the API 0.3 canonical wire, the LF excluded: the `max_frame_bytes`
/// the host offers in the `contract` (SUPPLEMENT "API 0.3 (canonical wire)":
/// `max_frame_bytes` at most 1048576, excluding the LF). The transport's limits include
/// the LF, so the matching transport limit is one byte more
/// ([`crate::wire::codec::canonical_frame_limit`]).
pub const CANONICAL_MAX_FRAME_BYTES: usize = 1024 * 1024;

// ---------------------------------------------------------------------------
// stderr drain (section "Every request and response"; DESIGN "stderr drain").
// ---------------------------------------------------------------------------

/// Longest stderr line kept; the rest of the line is cut and counted (host policy).
pub const MAX_STDERR_LINE_BYTES: usize = 4 * 1024;

/// Most stderr lines kept in a generation's tail ring buffer (host policy).
pub const STDERR_TAIL_LINES: usize = 64;

/// Most stderr diagnostic events emitted per second per generation; the rest are
/// counted and summarized (host policy).
pub const STDERR_EVENTS_PER_SECOND: u32 = 20;

// ---------------------------------------------------------------------------
// Supervision and reload (section 5; SUPPLEMENT "Default bounds": supervisor).
// ---------------------------------------------------------------------------

/// Base of the full-jitter exponential restart backoff (section 5).
pub const RESTART_BACKOFF_BASE: Duration = Duration::from_millis(250);

/// Cap of the restart backoff (section 5).
pub const RESTART_BACKOFF_CAP: Duration = Duration::from_secs(30);

/// Failed restart attempts after which the extension is parked (section 5).
pub const MAX_RESTART_ATTEMPTS: u32 = 8;

/// Continuous readiness that resets the restart budget (section 5).
pub const RESTART_BUDGET_RESET: Duration = Duration::from_secs(30);

/// Frames of serve's wire trace waiting for its output (`serve --wire-trace`; host
/// policy): the dispatcher never waits for the trace, so a frame that finds the queue
/// full is dropped and counted in the next trace line's `dropped`.
pub const TRACE_QUEUE_FRAMES: usize = 4096;

/// Requests serve's wire trace remembers to pair with their responses (host policy):
/// past this many unanswered requests, the oldest is forgotten and its response is
/// traced without `answers`.
pub const TRACE_OPEN_REQUESTS: usize = 4096;

/// How long a generation being replaced by a reload may finish its in-flight requests
/// before the rest are cancelled (section 5, "waits the bounded drain"; host policy).
pub const RELOAD_DRAIN_TIMEOUT: Duration = Duration::from_secs(5);

// ---------------------------------------------------------------------------
// Policy, approvals, secrets and provider credentials (sections 1.1, 2.9, 2.10).
// ---------------------------------------------------------------------------

/// Longest a single-use approval token stays valid after it was issued: five minutes,
/// the reference's upper bound ("bounded expiry (at most five minutes)", section 2.9).
pub const MAX_APPROVAL_TOKEN_TTL: Duration = Duration::from_secs(5 * 60);

/// Most unredeemed approval tokens one extension's process generation may hold at once
/// (host policy bounding section 2.9's approval state).
pub const MAX_APPROVAL_TOKENS_PER_GENERATION: usize = 64;

/// Length of an approval token: 64 lowercase hexadecimal characters (section 2.9).
pub const APPROVAL_TOKEN_HEX_LEN: usize = 64;

/// Largest `intent.kind`, `intent.operation` or `intent.data_classes` element, in UTF-8
/// bytes (host policy bounding section 2.9's intent).
pub const MAX_INTENT_STRING_BYTES: usize = 1024;

/// Most `intent.data_classes` elements (host policy bounding section 2.9's intent).
pub const MAX_INTENT_DATA_CLASSES: usize = 32;

/// Largest `intent.target`, as compact JSON, in bytes (host policy bounding section
/// 2.9's intent).
pub const MAX_INTENT_TARGET_BYTES: usize = 16 * 1024;

/// Deepest nesting of `intent.target`, counting the target object itself as 1 (host
/// policy bounding section 2.9's intent; keeps the whole intent within
/// [`CANONICAL_MAX_DEPTH`]).
pub const MAX_INTENT_TARGET_DEPTH: usize = 16;

/// Largest secret value `secret/get` returns, in UTF-8 bytes: 64 KiB (sections 2.10 and
/// 4, ExtensionSecretGetRequest).
pub const MAX_SECRET_VALUE_BYTES: usize = 64 * 1024;

/// Largest provider or model identifier a `provider/credentials` request may name, in
/// UTF-8 bytes (section 1.1; the identifier bound of section 2.13's model selection).
pub const MAX_PROVIDER_IDENTITY_BYTES: usize = 256;

/// Largest credential `provider/credentials` returns, in UTF-8 bytes (host policy:
/// the same bound as a secret value, section 2.10).
pub const MAX_PROVIDER_CREDENTIAL_BYTES: usize = MAX_SECRET_VALUE_BYTES;

// ---------------------------------------------------------------------------
// Wave-1 services and notifications (sections 1.11, 2, 2.19-2.23, 3).
// ---------------------------------------------------------------------------

/// Longest detail after a Wave-1 refusal's contract name in `error.message`, in bytes
/// (section 3; SUPPLEMENT "Wave-1 refusal vocabulary").
pub const MAX_REFUSAL_DETAIL_BYTES: usize = 512;

/// Largest composer text `composer/get` returns or `composer/set` and
/// `composer/insert` write, in UTF-8 bytes: the editor handoff's 256 KiB (section 2.19).
pub const MAX_COMPOSER_TEXT_BYTES: usize = 256 * 1024;

/// Most runtime shortcuts admitted per process generation (section 2.20).
pub const MAX_SHORTCUTS: usize = 64;

/// Longest shortcut id, in UTF-8 bytes (section 2.20).
pub const MAX_SHORTCUT_ID_BYTES: usize = 128;

/// Longest shortcut key, in bytes (section 2.20).
pub const MAX_SHORTCUT_KEY_BYTES: usize = 128;

/// Longest shortcut description, in UTF-8 bytes (section 2.20).
pub const MAX_SHORTCUT_DESCRIPTION_BYTES: usize = 4 * 1024;

/// Longest `session/append_entry` `entry_type`, in UTF-8 bytes (section 2.21).
pub const MAX_ENTRY_TYPE_BYTES: usize = 128;

/// Largest `session/append_entry` `data`, as compact JSON, in bytes (section 2.21);
/// its nesting is bounded by [`MAX_JSON_DEPTH`].
pub const MAX_ENTRY_DATA_BYTES: usize = 64 * 1024;

/// Longest session entry id, in UTF-8 bytes (section 2.21), both the one
/// `session/append_entry` returns and the one `session/set_label` names.
pub const MAX_ENTRY_ID_BYTES: usize = 256;

/// Longest session name or entry label, in UTF-8 bytes (section 2.21).
pub const MAX_SESSION_LABEL_BYTES: usize = 4 * 1024;

/// Largest injected message text, in UTF-8 bytes (section 2.22).
pub const MAX_INJECTED_TEXT_BYTES: usize = 256 * 1024;

/// Most names in one `tools/set_active` replacement set (section 2.23, bounded like
/// `tools/register`).
pub const MAX_ACTIVE_TOOLS: usize = MAX_TOOLS;

/// Longest name in a `tools/set_active` set, in UTF-8 bytes (section 2.23).
pub const MAX_ACTIVE_TOOL_NAME_BYTES: usize = MAX_CONTRIBUTION_NAME_BYTES;

/// Most session-control operations waiting in one lifecycle queue behind the one that
/// runs (SUPPLEMENT 2.21b: "at most 16 queued"); one more is refused at once with
/// -32012.
pub const MAX_SESSION_OPERATIONS_QUEUED: usize = 16;

/// How often the lifecycle queue's worker looks whether the operation it waits on was
/// cancelled (its parent settled, the extension cancelled it, the generation ended), so
/// that a service that keeps a cancelled reply never stalls the operations behind it.
pub const SESSION_QUEUE_POLL: std::time::Duration = std::time::Duration::from_millis(50);

/// Longest `session/compact` `custom_instructions`, in UTF-8 bytes before
/// normalization (section 2.21c: "capped at 16 KiB raw UTF-8").
pub const MAX_COMPACT_INSTRUCTIONS_BYTES: usize = 16 * 1024;

/// Longest `summary` a `session/compact` result carries, in UTF-8 bytes. The reference
/// bounds it only by the frame ("oversized results are not truncated into success"); this
/// host keeps it at the composer's 256 KiB so the answer always fits one frame.
pub const MAX_COMPACTION_SUMMARY_BYTES: usize = 256 * 1024;

/// Largest private `session/append_entry` `data` on the 1.4b lane, as compact JSON, in
/// bytes (SUPPLEMENT 1.4b: "private value <= 16 KiB").
pub const MAX_PRIVATE_ENTRY_BYTES: usize = 16 * 1024;

/// Most JSON nodes in a private `session/append_entry` `data` (SUPPLEMENT 1.4b: "256
/// nodes").
pub const MAX_PRIVATE_ENTRY_NODES: usize = 256;

/// Longest `session_leaf` `operation_id`, in bytes (`session-operation:N`; this host's
/// bound, an id string's).
pub const MAX_OPERATION_ID_BYTES: usize = MAX_ID_STRING_BYTES;

/// Longest terminal `grant_id` the frontend mints, in UTF-8 bytes (section 2.24).
pub const MAX_TERMINAL_GRANT_ID_BYTES: usize = 128;

/// Longest `terminal/grant-lost` `reason`, in UTF-8 bytes (section 2.24: "a bounded
/// reason"; this host's bound, the refusal detail's).
pub const MAX_GRANT_LOST_REASON_BYTES: usize = MAX_REFUSAL_DETAIL_BYTES;

/// Largest `ui/terminal-input` `data`, in bytes (SUPPLEMENT 2.24).
pub const MAX_TERMINAL_INPUT_BYTES: usize = 256;

/// The one aggregate deadline of an autocomplete query across every registered chain
/// (section 2.24b: "under one 500 ms aggregate deadline").
pub const AUTOCOMPLETE_DEADLINE: std::time::Duration = std::time::Duration::from_millis(500);

/// The editor budget of host-mediated autocomplete (section 2.24b): the text of a
/// `ui/autocomplete/complete` snapshot, and the editor text an accepted edit makes, are
/// at most this many UTF-8 bytes.
pub const MAX_AUTOCOMPLETE_TEXT_BYTES: usize = 262_144;

/// Most items in one autocomplete reply (section 2.24b).
pub const MAX_AUTOCOMPLETE_ITEMS: usize = 32;

/// Longest autocomplete `prefix`, item `value`, `label` or `description`, in UTF-8
/// bytes (section 2.24b).
pub const MAX_AUTOCOMPLETE_STRING_BYTES: usize = 1024;

/// Accumulated delta bytes at which a `message/updated` batch is emitted (section 1.11).
pub const MESSAGE_BATCH_BYTES: usize = 4096;

/// Accumulated deltas at which a `message/updated` batch is emitted (section 1.11).
pub const MESSAGE_BATCH_DELTAS: u64 = 64;

/// Age of the oldest delta at which a `message/updated` batch is emitted (section 1.11).
pub const MESSAGE_BATCH_INTERVAL: Duration = Duration::from_millis(50);

/// Most deltas in the array form of a `message/updated` batch (`deltas` or `updates`);
/// a longer array is refused as `bounds_exceeded` (section 1.11).
pub const MAX_MESSAGE_BATCH_DELTAS: usize = 1024;

/// Longest `message/updated` `message_id`, in UTF-8 bytes (section 1.11, "bounded id";
/// the request id bound of section 2).
pub const MAX_MESSAGE_ID_BYTES: usize = MAX_ID_STRING_BYTES;

/// Largest single assistant-message delta the embedder may supply, in UTF-8 bytes (host
/// policy bounding section 1.11's payloads: the injected-text bound of section 2.22).
pub const MAX_MESSAGE_DELTA_BYTES: usize = MAX_INJECTED_TEXT_BYTES;

/// Largest payload of a Wave-1 notification the host emits, as compact JSON, in bytes
/// (section 1.11, "an oversized payload is refused"; host policy, below the frame bound).
pub const MAX_HOST_NOTIFICATION_BYTES: usize = 512 * 1024;

// ---------------------------------------------------------------------------
// API 0.3 extension-to-host services (SUPPLEMENT "API 0.3 (canonical wire)").
// ---------------------------------------------------------------------------

/// Longest `provider_id`, in bytes (SUPPLEMENT, `provider/auth/request`).
pub const MAX_PROVIDER_ID_BYTES: usize = 64;

/// Longest authorization lease a `provider/auth/*` result carries, in bytes (SUPPLEMENT,
/// `provider/auth/request`).
pub const MAX_PROVIDER_LEASE_BYTES: usize = 256;

/// Most scopes in a `provider/auth/*` request or a provider's `auth` (host policy
/// bounding the SUPPLEMENT's `scopes?`).
pub const MAX_PROVIDER_SCOPES: usize = 32;

/// Longest scope, subject, label, model id, API name or display name of the API 0.3
/// provider models, in bytes (host policy: the id bound of section 2).
pub const MAX_PROVIDER_TEXT_BYTES: usize = MAX_ID_STRING_BYTES;

/// Most models in one `providers/register` or `providers/update` (host policy: the tool
/// catalog's bound).
pub const MAX_PROVIDER_MODELS: usize = MAX_TOOLS;

/// Longest `session_id` of `session/switch` and the `session_lifecycle` results, in
/// bytes (the id bound of section 2).
pub const MAX_SESSION_ID_BYTES: usize = MAX_ID_STRING_BYTES;

// ---------------------------------------------------------------------------
// Child agent sessions (sections 2.13-2.18, feature `agent_sessions`).
// ---------------------------------------------------------------------------

/// Longest `task_name` or `profile` of `agent/spawn`, in bytes; each is 1 or more of
/// `[a-z0-9_-]` (section 2.13).
pub const MAX_AGENT_NAME_BYTES: usize = 48;

/// Longest `message` of `agent/spawn`, `agent/message` and `agent/follow_up`, in UTF-8
/// bytes (sections 2.13-2.15).
pub const MAX_AGENT_MESSAGE_BYTES: usize = 128 * 1024;

/// Longest `idempotency_key` of `agent/spawn`, in bytes; at least 1 (section 2.13).
pub const MAX_AGENT_IDEMPOTENCY_KEY_BYTES: usize = 256;

/// Most children an owner may have pending or running at once, spawns still waiting
/// for the service included: the eight-worker bound (section 2.18); also the largest
/// `policy.max_concurrent_children` (section 2.13).
pub const MAX_AGENT_WORKERS: u32 = 8;

/// Fewest and most UTF-8 bytes a child may return, `policy.max_output_bytes`
/// (section 2.13); a completed child's output is cut to its own bound.
pub const AGENT_OUTPUT_BYTES: std::ops::RangeInclusive<u64> = 512..=16_384;

/// Explicit `policy.max_turns` (section 2.13).
pub const AGENT_TURNS: std::ops::RangeInclusive<u64> = 1..=256;

/// Explicit `policy.max_cost_microdollars` (section 2.13).
pub const AGENT_COST_MICRODOLLARS: std::ops::RangeInclusive<u64> = 1..=50_000_000;

/// Explicit `policy.timeout_ms` (section 2.13).
pub const AGENT_TIMEOUT_MS: std::ops::RangeInclusive<u64> = 5_000..=86_400_000;

/// Explicit `policy.max_tokens` (section 2.13).
pub const AGENT_MAX_TOKENS: std::ops::RangeInclusive<u64> = 1_000..=64_000;

/// `agent/wait`'s timeout when the request names none (section 2.17).
pub const AGENT_WAIT_DEFAULT: Duration = Duration::from_secs(30);

/// `agent/wait`'s timeout is clamped to this range, in milliseconds (section 2.17).
pub const AGENT_WAIT_MS: std::ops::RangeInclusive<u64> = 1..=60_000;

/// Most entries of an agent record's `recent_tools`, the last tool calls (section 2.16).
pub const MAX_AGENT_RECENT_TOOLS: usize = 6;

/// Longest single-line `args` summary of a `recent_tools` entry, in UTF-8 bytes
/// (section 2.16).
pub const MAX_AGENT_TOOL_ARGS_BYTES: usize = 160;

/// Longest agent id, agent path, tool name, phase, session reference or failure text
/// a service reports, in bytes (host policy: the id bound of section 2).
pub const MAX_AGENT_TEXT_BYTES: usize = MAX_ID_STRING_BYTES;

/// Longest `error` of a failed child, in UTF-8 bytes ("failed (with bounded error)",
/// section 2.16; host policy).
pub const MAX_AGENT_ERROR_BYTES: usize = 4 * 1024;

/// Most follow-ups queued on one running child; one more is refused (section 2.15:
/// "a full follow-up queue"; host policy).
pub const MAX_AGENT_QUEUED_FOLLOW_UPS: usize = 8;

/// Most children one host keeps records of (host policy: the ownership table is
/// bounded): the oldest settled records are pruned, with their idempotency keys; a
/// spawn past it while none has settled is refused.
pub const MAX_AGENT_RECORDS: usize = 4_096;

/// Most `agent/events` records one child's log retains (section 2.18, API 0.4); the
/// oldest go first, and a cursor before them has expired.
pub const MAX_AGENT_EVENT_RECORDS: usize = 4_096;

/// Most bytes of event bodies one child's log retains (section 2.18).
pub const MAX_AGENT_EVENT_LOG_BYTES: usize = 2 * 1024 * 1024;

/// Most records in one `agent/events` batch (section 2.18).
pub const MAX_AGENT_EVENT_BATCH: usize = 256;

/// Most bytes of event bodies in one `agent/events` batch (section 2.18).
pub const MAX_AGENT_EVENT_BATCH_BYTES: usize = 512 * 1024;

/// Largest event body; a larger one is recorded as an `observation_error` record
/// instead (section 2.18).
pub const MAX_AGENT_EVENT_BYTES: usize = 256 * 1024;

/// Longest `agent/events` long poll, `timeout_ms`, in milliseconds; more is refused,
/// not clamped (section 2.18). The default is 0: answer at once.
pub const MAX_AGENT_EVENTS_TIMEOUT_MS: u64 = 25_000;

/// Longest `agent/models` `query`, in UTF-8 bytes (section 2.13, "agent/models").
pub const MAX_AGENT_MODELS_QUERY_BYTES: usize = 128;

/// `agent/models` `limit` (section 2.13); 50 when absent or null.
pub const AGENT_MODELS_LIMIT: std::ops::RangeInclusive<u64> = 1..=100;

/// The `limit` of `agent/models` when the request names none.
pub const AGENT_MODELS_DEFAULT_LIMIT: u64 = 50;

/// Longest model or provider id in `agent/models` rows and a `model_selection`
/// member, in UTF-8 bytes (section 2.13).
pub const MAX_AGENT_MODEL_ID_BYTES: usize = 256;

/// Longest `display_name` of an `agent/models` row, in UTF-8 bytes (section 2.13).
pub const MAX_AGENT_MODEL_DISPLAY_BYTES: usize = 512;

/// Most `reasoning` labels of an `agent/models` row (section 2.13), each at most
/// [`MAX_AGENT_MODEL_ID_BYTES`].
pub const MAX_AGENT_MODEL_REASONING_LABELS: usize = 32;

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
