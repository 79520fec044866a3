//! Every protocol bound the host enforces, in one place.
//!
//! Each constant names the section of `wire-protocol-reference.txt` (or of
//! `SUPPLEMENT.md`, "Default bounds") that sets it. Code elsewhere refers to these
//! names, never to the bare numbers. The transport's, the requests' and the lifecycle's
//! bounds are here; the extension-to-host services' in `services.rs`, and those of the
//! features the runtime serves itself (typed diagnostics, composition, resource refs,
//! bulk objects) in `features.rs`, all re-exported here.

use std::time::Duration;

mod features;
mod services;

pub use features::*;
pub use services::*;

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
