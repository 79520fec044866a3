//! The method table: the one declaration of every service kind an embedder binds, every
//! extension-to-host method those services serve, and every host-to-extension
//! notification of a bound kind.
//!
//! A kind names its feature or capability, what offers it in `initialize`, its service
//! trait and its binder on [`ServiceBindings`](super::ServiceBindings). A method row
//! names, in order: request or notification, the variant, the wire name, the trait
//! method with its params type and result type, the API versions that carry it, how the
//! dispatcher admits it ([`Admission`](super::Admission)), the error vocabulary of its
//! refusals ([`ErrorFamily`](super::ErrorFamily)) and whether its answer is sensitive.
//!
//! The rows are written once, here, and expanded by `declare.rs` in two parts:
//! `methods.rs` expands them into the enums, [`ServiceRequest`](super::ServiceRequest)
//! and the result rules; `services.rs` into the traits with a default body per method,
//! the routing and the binders. serve's `service_request` lines follow from the enums,
//! and tests hold serve's JSON Schema and the method tables of docs/serve-protocol.md
//! and the README to the rows.
//!
//! The methods the host answers without a request service (the brokers, artifacts,
//! the tool catalog, the frontend's questions and the host's own notifications) are
//! rows of the dispatcher's route table (`dispatcher/route.rs`), which resolves every
//! message an extension sends, these rows included, in one place.
//!
//! Adding a method is a row here and its params and result types (a closed serde type
//! implementing [`ServiceParams`](super::ServiceParams) and a
//! [`ServiceResult`](super::ServiceResult)); adding a kind is a `kind` block, plus its
//! feature or capability when the protocol names a new one.

/// Expands the `$part` (`methods` or `services`) of the method table.
macro_rules! service_table {
    ($part:ident) => {
        declare_table! { $part;
            /// The host-owned composer (section 2.19, feature `composer`). Texts are checked
            /// before the service sees them, and the text `get` returns is checked the same way
            /// ([`crate::limits::MAX_COMPOSER_TEXT_BYTES`], no terminal control characters).
            kind Composer = "composer", offered by Offer::Feature(Feature::Composer),
                served by ComposerService, bound with composer {
                /// `composer/get`: the composer's whole text.
                request ComposerGet = "composer/get", fn get(NoParams) -> ComposerText,
                    apis V0_2_AND_V0_4_APIS, admission LiveParentOrIssuedOwner, family ContractTokens,
                    sensitive false;
                /// `composer/set`: replaces the whole text. Refuse (for example with
                /// [`Refusal::InvalidRequest`](super::Refusal::InvalidRequest)) while another
                /// editor owns the composer.
                request ComposerSet = "composer/set", fn set(ComposerEdit) -> (),
                    apis V0_2_AND_V0_4_APIS, admission LiveParentOrIssuedOwner, family ContractTokens,
                    sensitive false;
                /// `composer/insert`: inserts the text at the composer's cursor.
                request ComposerInsert = "composer/insert", fn insert(ComposerEdit) -> (),
                    apis V0_2_AND_V0_4_APIS, admission LiveParentOrIssuedOwner, family ContractTokens,
                    sensitive false;
            }

            /// Runtime shortcuts (section 2.20, feature `shortcuts`). Only registrations sent
            /// inside the `initialize` request reach the service, at most
            /// [`crate::limits::MAX_SHORTCUTS`] per generation; a duplicate id is refused by the
            /// runtime and makes that id unavailable. A registration the service answers `ok`
            /// while `initialize` is still pending is admitted:
            /// [`crate::ExtensionHandle::trigger_shortcut`] then reaches it for that generation
            /// only.
            kind Shortcuts = "shortcuts", offered by Offer::Feature(Feature::Shortcuts),
                served by ShortcutService, bound with shortcuts {
                /// `shortcut/register`: bind the shortcut's key so that pressing it triggers it.
                request ShortcutRegister = "shortcut/register", fn register(Shortcut) -> (),
                    apis V0_2_AND_V0_4_APIS, admission InsideInitialize, family ContractTokens,
                    sensitive false;
            }

            /// Session entries, name and labels (section 2.21, feature `session_entries`).
            kind SessionEntries = "session_entries",
                offered by Offer::Feature(Feature::SessionEntries),
                served by SessionEntryService, bound with session_entries {
                /// `session/append_entry`: store the data durably and return the new entry's id.
                request SessionAppendEntry = "session/append_entry",
                    fn append_entry(AppendEntry) -> EntryId,
                    apis V0_2_AND_V0_4_APIS, admission LiveParentOrIssuedOwner, family ContractTokens,
                    sensitive false;
                /// The private `session/append_entry` lane of the awaited model-turn hooks
                /// (section 1.4b, API 0.4): the runtime admitted the live invocation's
                /// single-use `session_leaf` grant; commit through the session writer and
                /// answer the entry and the new head. The extension's receipt also carries
                /// the successor grant the runtime mints.
                request SessionAppendPrivate = "session/append_entry",
                    fn append_private(PrivateAppend) -> PrivateCommit,
                    apis V0_4_APIS, admission InvocationGrant, family ContractTokens,
                    sensitive false;
                /// `session/set_name`; an empty name clears it.
                request SessionSetName = "session/set_name", fn set_name(SessionName) -> (),
                    apis V0_2_AND_V0_4_APIS, admission LiveParentOrIssuedOwner, family ContractTokens,
                    sensitive false;
                /// `session/set_label`; an empty label clears it.
                request SessionSetLabel = "session/set_label", fn set_label(EntryLabel) -> (),
                    apis V0_2_AND_V0_4_APIS, admission LiveParentOrIssuedOwner, family ContractTokens,
                    sensitive false;
            }

            /// Message injection (section 2.22, feature `message_injection`). Answer `ok` once
            /// the injection is admitted. Binding it also lets the host send `message/updated`
            /// batches (section 1.11).
            kind MessageInjection = "message_injection",
                offered by Offer::Feature(Feature::MessageInjection),
                served by MessageInjectionService, bound with message_injection {
                /// `session/send_message`: an `assistant` or `system` message.
                request SessionSendMessage = "session/send_message",
                    fn send_message(InjectedMessage) -> (),
                    apis V0_2_AND_V0_4_APIS, admission LiveParentOrIssuedOwner, family ContractTokens,
                    sensitive false;
                /// `session/send_user_message`: a message as if the user had typed it.
                request SessionSendUserMessage = "session/send_user_message",
                    fn send_user_message(UserMessage) -> (),
                    apis V0_2_AND_V0_4_APIS, admission LiveParentOrIssuedOwner, family ContractTokens,
                    sensitive false;
            }

            /// The active tool set (section 2.23, feature `active_tools`). A host that cannot
            /// apply the set must refuse
            /// ([`Refusal::UnsupportedFeature`](super::Refusal::UnsupportedFeature)) rather
            /// than accept it.
            kind ActiveTools = "active_tools", offered by Offer::Feature(Feature::ActiveTools),
                served by ActiveToolsService, bound with active_tools {
                /// `tools/set_active`: the names are the complete replacement set.
                request ToolsSetActive = "tools/set_active", fn set_active(ActiveToolSet) -> (),
                    apis V0_2_AND_V0_4_APIS, admission LiveParentOrIssuedOwner, family ContractTokens,
                    sensitive false;
            }

            /// The terminal handoff (section 2.24, feature `terminal_handoff`): the frontend
            /// that owns the foreground tty cedes it to one extension at a time. The runtime
            /// keeps the grant exclusive across every extension of the host, refuses a
            /// release from anyone but the holder, and revokes the grant when the holder's
            /// generation ends ([`crate::ExtensionHandle::revoke_terminal`] revokes it at any
            /// time), sending `terminal/grant-lost`. Answer `acquire` only once the tty was
            /// actually ceded, `release` once the frontend re-entered its own terminal.
            kind TerminalHandoff = "terminal_handoff",
                offered by Offer::Feature(Feature::TerminalHandoff),
                served by TerminalService, bound with terminal_handoff {
                /// `terminal/acquire`: the grant the frontend minted for the tty it ceded.
                request TerminalAcquire = "terminal/acquire", fn acquire(NoParams) -> TerminalGrant,
                    apis V0_2_AND_V0_4_APIS, admission LiveParentOrIssuedOwner, family ContractTokens,
                    sensitive false;
                /// `terminal/release`: the holder gives the tty back.
                request TerminalRelease = "terminal/release", fn release(NoParams) -> (),
                    apis V0_2_AND_V0_4_APIS, admission LiveParentOrIssuedOwner, family ContractTokens,
                    sensitive false;
            }

            /// Host-mediated autocomplete (section 2.24b, feature `autocomplete`): an
            /// interactive frontend admits an extension's completion chain. Answer
            /// [`Accepted`](super::Accepted) only when a live editor will query it; refuse
            /// otherwise. An admitted chain is queried with
            /// [`crate::ExtensionHost::autocomplete`].
            kind Autocomplete = "autocomplete", offered by Offer::Feature(Feature::Autocomplete),
                served by AutocompleteService, bound with autocomplete {
                /// `ui/autocomplete/register {revision}`.
                request AutocompleteRegister = "ui/autocomplete/register",
                    fn register(AutocompleteRegistration) -> Accepted,
                    apis V0_2_AND_V0_4_APIS, admission None, family ContractTokens, sensitive false;
            }

            /// Active-session control (section 2.21b, feature `session_control_v1`, API 0.4
            /// only): the product's active session, not an extension's own agents. Requests
            /// reach the service one at a time in admission order ([`Lane::Serial`](super::Lane)),
            /// at most [`crate::limits::MAX_SESSION_OPERATIONS_QUEUED`] waiting; answer only once
            /// the operation completed (an idle wait: once an idle boundary was observed). Refuse
            /// with [`Refusal::Unavailable`](super::Refusal::Unavailable) when it cannot run or
            /// failed (-32603), or [`Refusal::ResourceExhausted`](super::Refusal::ResourceExhausted)
            /// when the embedder's own worker is busy (-32012).
            kind SessionControl = "session_control_v1",
                offered by Offer::Feature(Feature::SessionControlV1),
                served by SessionControlService, bound with session_control, lane Serial {
                /// `session/wait_for_idle`: answered after an observed idle boundary.
                request SessionWaitForIdle = "session/wait_for_idle",
                    fn wait_for_idle(SessionTarget) -> SessionId,
                    apis V0_4_APIS, admission LiveParentOrIssuedOwner, family SessionControl,
                    sensitive false;
                /// `session/create`: a new durable session, without switching to it.
                request ActiveSessionCreate = "session/create", fn create(SessionTarget) -> SessionId,
                    apis V0_4_APIS, admission LiveParentOrIssuedOwner, family SessionControl,
                    sensitive false;
                /// `session/fork`: a fork at the active head, without switching to it.
                request ActiveSessionFork = "session/fork", fn fork(SessionTarget) -> SessionId,
                    apis V0_4_APIS, admission LiveParentOrIssuedOwner, family SessionControl,
                    sensitive false;
                /// `session/reload`: the active session, reopened.
                request ActiveSessionReload = "session/reload", fn reload(SessionTarget) -> SessionId,
                    apis V0_4_APIS, admission LiveParentOrIssuedOwner, family SessionControl,
                    sensitive false;
                /// `session/switch`: an existing workspace session made active; answered once
                /// it is.
                request ActiveSessionSwitch = "session/switch", fn switch(SessionId) -> SessionId,
                    apis V0_4_APIS, admission LiveParentOrIssuedOwner, family SessionControl,
                    sensitive false;
            }

            /// `session/compact` (section 2.21c, feature `session_compaction_v1`, API 0.4 only).
            /// Offered only together with `session_control_v1`; binding it alone offers neither
            /// (the start succeeds without it). It shares the serial lane of the bindings it is
            /// bound in. Answer with the compaction entry actually committed, after its
            /// after-hooks; a veto, nothing to compact or no consumer is a refusal.
            kind SessionCompaction = "session_compaction_v1",
                offered by Offer::Feature(Feature::SessionCompactionV1),
                served by SessionCompactionService, bound with session_compaction, lane Serial {
                /// `session/compact`: only once the parent settled, with its issued owner.
                request SessionCompact = "session/compact", fn compact(CompactRequest) -> Compaction,
                    apis V0_4_APIS, admission SettledOwnerOnly, family SessionControl,
                    sensitive false;
            }

            /// Child agent sessions (sections 2.13-2.18, feature `agent_sessions`, conditional):
            /// the embedder's model runs each child; the runtime keeps the records. Every
            /// request names a live `tool/call` or `command/execute` as its parent. The runtime
            /// resolves each target within the extension principal's and owner's trees (the
            /// service is handed the `agent_id`), keeps the eight-worker bound and the
            /// idempotency keys, completes every answer from its records with host-owned
            /// timestamps, and answers `agent/list` and `agent/wait` itself. Report each change
            /// of a child with [`ServiceCall::agent_reports`](super::ServiceCall::agent_reports).
            /// Bind it only for the extensions allowed to delegate (per extension, on the
            /// builder or at start).
            kind AgentSessions = "agent_sessions", offered by Offer::Feature(Feature::AgentSessions),
                served by AgentSessionService, bound with agent_sessions {
                /// `agent/spawn`: start one bounded child session and answer its new id; report
                /// its progress from then on. A refusal is -32002 to the extension.
                request AgentSpawn = "agent/spawn", fn spawn(AgentSpawn) -> AgentSpawned,
                    apis V0_2_AND_V0_4_APIS, admission LiveToolOrCommand, family AgentSessions,
                    sensitive false;
                /// `agent/message`: steering input for the child `target` names (its id).
                request AgentMessage = "agent/message", fn message(AgentSend) -> MessageDelivered,
                    apis V0_2_AND_V0_4_APIS, admission LiveToolOrCommand, family AgentSessions,
                    sensitive false;
                /// `agent/follow_up`: a subsequent run; `new_run` resumes a settled child
                /// (report it running), `follow_up` queues on an active one.
                request AgentFollowUp = "agent/follow_up", fn follow_up(AgentSend) -> FollowUpDelivered,
                    apis V0_2_AND_V0_4_APIS, admission LiveToolOrCommand, family AgentSessions,
                    sensitive false;
                /// `agent/interrupt`: cancel the child's tree when it is active; report it
                /// `interrupted` once it stopped.
                request AgentInterrupt = "agent/interrupt",
                    fn interrupt(AgentTarget) -> InterruptRequested,
                    apis V0_2_AND_V0_4_APIS, admission LiveToolOrCommand, family AgentSessions,
                    sensitive false;
                /// `agent/list`: answered by the runtime from its records, filtered by owner.
                guarded AgentList = "agent/list", fn list(NoParams) -> AgentSnapshot,
                    apis V0_2_AND_V0_4_APIS, admission LiveToolOrCommand, family AgentSessions,
                    sensitive false;
                /// `agent/wait`: held by the runtime until every owned child settled or the
                /// clamped timeout passed.
                guarded AgentWait = "agent/wait", fn wait(AgentWait) -> AgentSnapshot,
                    apis V0_2_AND_V0_4_APIS, admission LiveToolOrCommand, family AgentSessions,
                    sensitive false;
            }

            /// Child model selection (section 2.13, feature `agent_model_selection_v1`,
            /// offered whenever `agent_sessions` is): the host's configured child models. Once
            /// negotiated, `agent/spawn` accepts `policy.model_selection`; answer the spawn with
            /// the `resolved_model` you confirmed. Unbound, the runtime serves the inherited
            /// model alone (`features::agents::defaults`).
            kind AgentModelSelection = "agent_model_selection_v1",
                offered by Offer::Feature(Feature::AgentModelSelectionV1),
                served by AgentModelService, bound with agent_model_selection {
                /// `agent/models`: the rows matching `query`; the runtime cuts them to `limit`.
                request AgentModels = "agent/models", fn models(AgentModelsQuery) -> AgentModels,
                    apis V0_2_AND_V0_4_APIS, admission LiveToolOrCommand, family AgentSessions,
                    sensitive false;
            }

            /// Child observations (section 2.18, feature `agent_session_events_v1`, API 0.4,
            /// offered whenever `agent_sessions` is): the runtime answers `agent/events` from
            /// the log the service feeds with [`AgentReports::event`](super::AgentReports::event).
            /// Binding it promises those events; the trait has no methods. Unbound, the
            /// runtime logs each run's `run_finished` from the service's reports itself.
            kind AgentSessionEvents = "agent_session_events_v1",
                offered by Offer::Feature(Feature::AgentSessionEventsV1),
                served by AgentEventService, bound with agent_session_events {
                /// `agent/events`: a batch after the cursor, long-polled by the runtime.
                guarded AgentEvents = "agent/events", fn events(AgentEventsQuery) -> AgentSnapshot,
                    apis V0_4_APIS, admission LiveToolOrCommand, family AgentSessions,
                    sensitive false;
            }

            /// Retained child lifetime (section 2.18, feature `agent_session_lifetime_v1`, API
            /// 0.4, offered whenever `agent_sessions` is): `agent/*` requests may carry the
            /// issued `resource_owner` (with a live parent it must match; without one, the
            /// still-issued owner is admitted; a cancelled parent is refused), and
            /// `agent/stop`. Unbound, `agent/stop` asks the child-session service to
            /// interrupt the tree.
            kind AgentSessionLifetime = "agent_session_lifetime_v1",
                offered by Offer::Feature(Feature::AgentSessionLifetimeV1),
                served by AgentLifetimeService, bound with agent_session_lifetime {
                /// `agent/stop`: request shutdown of the child's tree (answer once it was
                /// requested, not once it settled; report it `shutdown` when it is).
                request AgentStop = "agent/stop", fn stop(AgentTarget) -> StopRequested,
                    apis V0_4_APIS, admission LiveToolOrCommand, family AgentSessions,
                    sensitive false;
            }

            /// `provider_auth` (API 0.3 capability): the host's authentication for an
            /// extension's providers. Refusals use API 0.3's fixed error table.
            kind ProviderAuth = "provider_auth",
                offered by Offer::Capability(Capability::ProviderAuth),
                served by ProviderAuthService, bound with provider_auth {
                /// `provider/auth/request`.
                request ProviderAuthRequest = "provider/auth/request",
                    fn request(ProviderAuthParams) -> ProviderAuthAnswer,
                    apis V0_3_APIS, admission None, family V0_3Table, sensitive false;
                /// `provider/auth/revoke`.
                request ProviderAuthRevoke = "provider/auth/revoke",
                    fn revoke(ProviderAuthParams) -> ProviderAuthAnswer,
                    apis V0_3_APIS, admission None, family V0_3Table, sensitive false;
            }

            /// `provider_catalog` (API 0.3 capability): the providers and models an extension
            /// contributes. Refusals use API 0.3's fixed error table.
            kind ProviderCatalog = "provider_catalog",
                offered by Offer::Capability(Capability::ProviderCatalog),
                served by ProviderCatalogService, bound with provider_catalog {
                /// `providers/register`.
                request ProvidersRegister = "providers/register",
                    fn register(ProviderRegistration) -> CatalogRevision,
                    apis V0_3_APIS, admission None, family V0_3Table, sensitive false;
                /// `providers/update`.
                request ProvidersUpdate = "providers/update",
                    fn update(ProviderRegistration) -> CatalogRevision,
                    apis V0_3_APIS, admission None, family V0_3Table, sensitive false;
                /// `providers/unregister`.
                request ProvidersUnregister = "providers/unregister",
                    fn unregister(ProviderRef) -> CatalogRevision,
                    apis V0_3_APIS, admission None, family V0_3Table, sensitive false;
                /// `providers/complete`: the extension registered everything it will at start.
                notification ProvidersComplete = "providers/complete", fn complete(NoParams) -> (),
                    apis V0_3_APIS, admission None, family V0_3Table, sensitive false;
            }

            /// `session_lifecycle` (API 0.3 capability): the extension asks for session
            /// changes. Refusals use API 0.3's fixed error table.
            kind SessionLifecycle = "session_lifecycle",
                offered by Offer::Capability(Capability::SessionLifecycle),
                served by SessionLifecycleService, bound with session_lifecycle {
                /// `session/create`: a new session.
                request SessionCreate = "session/create", fn create(NoParams) -> SessionId,
                    apis V0_3_APIS, admission None, family V0_3Table, sensitive false;
                /// `session/fork`: a fork of the current session.
                request SessionFork = "session/fork", fn fork(NoParams) -> SessionId,
                    apis V0_3_APIS, admission None, family V0_3Table, sensitive false;
                /// `session/reload`: the current session, reopened.
                request SessionReload = "session/reload", fn reload(NoParams) -> SessionId,
                    apis V0_3_APIS, admission None, family V0_3Table, sensitive false;
                /// `session/switch`: make the named session current.
                request SessionSwitch = "session/switch", fn switch(SessionId) -> SessionId,
                    apis V0_3_APIS, admission None, family V0_3Table, sensitive false;
            }
        }
    };
}

/// Hands the host-to-extension notifications of bound kinds to `$declare`
/// (`host_notifications`): each names the feature whose negotiation gates it, its
/// closed params and whether a `serve` client sends it with `notify`.
macro_rules! host_notification_table {
    ($declare:ident) => {
        $declare! {
            /// `shortcut/trigger {"id"}`, for a shortcut admitted inside `initialize`.
            ShortcutTrigger = "shortcut/trigger", Shortcuts,
                members &["id"], from the client: true;
            /// `message/updated {"message_id","delta","deltas"}`: one coalesced batch of
            /// assistant-message deltas.
            MessageUpdated = "message/updated", MessageInjection,
                members &["message_id", "delta", "deltas"], from the client: false;
            /// `terminal/grant-lost {"reason"}`: the host took the terminal grant back
            /// (section 2.24); sent by the runtime when a grant is revoked.
            TerminalGrantLost = "terminal/grant-lost", TerminalHandoff,
                members &["reason"], from the client: false;
            /// `ui/terminal-input {"data"}`: observe-only terminal input (section 2.24,
            /// feature `terminal_input`); never to the grant's holder.
            TerminalInput = "ui/terminal-input", TerminalInput,
                members &["data"], from the client: true;
            /// `ui/resize {"columns","rows"}` (section 2.24, feature `terminal_input`);
            /// never to the grant's holder.
            Resize = "ui/resize", TerminalInput,
                members &["columns", "rows"], from the client: true;
        }
    };
}
