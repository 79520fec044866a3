//! The bounds of the extension-to-host services: the brokers, the Wave-1 services and
//! notifications, API 0.3's services and child agent sessions.

use std::time::Duration;

use super::{MAX_CONTRIBUTION_NAME_BYTES, MAX_ID_STRING_BYTES, MAX_TOOLS};

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
/// [`CANONICAL_MAX_DEPTH`](super::CANONICAL_MAX_DEPTH)).
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
/// its nesting is bounded by [`MAX_JSON_DEPTH`](super::MAX_JSON_DEPTH).
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
