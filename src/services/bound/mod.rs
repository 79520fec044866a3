//! Services the embedder binds, and the mechanism that serves them: the requests of
//! sections 2.13-2.24b and the API 0.3 `provider_auth`, `provider_catalog` and
//! `session_lifecycle` requests.
//!
//! A service is a trait bound in [`ServiceBindings`] on the builder or per start, one
//! per kind of the method table: [`ComposerService`], [`ShortcutService`],
//! [`SessionEntryService`], [`MessageInjectionService`], [`ActiveToolsService`],
//! [`TerminalService`], [`AutocompleteService`], [`SessionControlService`],
//! [`SessionCompactionService`], [`AgentSessionService`] with [`AgentModelService`],
//! [`AgentEventService`] and [`AgentLifetimeService`] (served by the runtime when
//! left unbound), and on API 0.3 [`ProviderAuthService`], [`ProviderCatalogService`]
//! and [`SessionLifecycleService`]. The runtime enforces everything
//! the reference says before a service sees a request (the feature was negotiated, the
//! closed params shape, every bound, the parent and owner precedence of section 2, the
//! child-request id rules) and checks the answer before the extension sees it. Services
//! get typed values and the derived owner, never raw JSON, on a thread of their own:
//! requests an extension sends without waiting run concurrently, in no set order.
//! When a request's parent settles the service's [`ServiceCall::cancelled`] is set and
//! the extension gets -32800 at once. Refusals use one vocabulary, [`Refusal`]
//! (section 3).

#[macro_use]
mod declare;
#[macro_use]
mod table;
pub(crate) mod agents;
mod bindings;
mod call;
mod family;
mod frontend_models;
mod lane;
mod methods;
mod params;
mod private_lane;
mod provider_models;
mod refusal;
mod results;
mod route;
mod row;
mod services;
mod session_control;

pub use agents::{
    AgentEvent, AgentEventBatch, AgentEventRecord, AgentEventsQuery, AgentFollowUpResult,
    AgentInterruptResult, AgentList, AgentMessageResult, AgentModelRow, AgentModels,
    AgentModelsQuery, AgentPhase, AgentPhaseLabel, AgentPolicy, AgentProvenance, AgentRecord,
    AgentReport, AgentReports, AgentSend, AgentSnapshot, AgentSpawn, AgentSpawnResult,
    AgentSpawned, AgentStatus, AgentStopResult, AgentTarget, AgentTool, AgentUsage, AgentWait,
    AgentWaited, EventText, FollowUpDelivered, FollowUpDelivery, InterruptRequested,
    MessageDelivered, MessageDelivery, ModelSelection, OutputChannel, RecentTool, ReportError,
    ResolvedModel, RunFinish, StopRequested,
};
pub use bindings::ServiceBindings;
pub(crate) use call::{Outcome, RawReply, ServiceAnswer};
pub use call::{Reply, ServiceCall};
pub use family::ErrorFamily;
pub use frontend_models::{Accepted, AutocompleteRegistration, TerminalGrant};
pub use methods::{HostNotification, ServiceKind, ServiceMethod, ServiceRequest};
pub use params::{
    check_composer_text, check_message_id, ActiveToolSet, AppendEntry, ComposerEdit, EntryLabel,
    InjectedMessage, MessageRole, NoParams, ServiceParams, SessionName, Shortcut, UserMessage,
};
pub(crate) use private_lane::mint_grant_id;
pub use private_lane::{LeafRef, PrivateAppend, PrivateCommit};
pub use provider_models::{
    AuthAction, AuthStatus, CatalogRevision, ModelCapabilities, ModelProtocol, ProviderAuthAnswer,
    ProviderAuthInfo, ProviderAuthKind, ProviderAuthParams, ProviderInfo, ProviderModel,
    ProviderRef, ProviderRegistration, SessionId,
};
pub use refusal::{Refusal, ServiceRefusal};
pub use results::{ClosedResult, ComposerText, EmptyResult, EntryId, ServiceResult};
pub(crate) use route::{misrouted, RawService};
pub use row::{Admission, Lane, Offer, Shape};
pub use services::{
    ActiveToolsService, AgentEventService, AgentLifetimeService, AgentModelService,
    AgentSessionService, AutocompleteService, ComposerService, MessageInjectionService,
    ProviderAuthService, ProviderCatalogService, SessionCompactionService, SessionControlService,
    SessionEntryService, SessionLifecycleService, ShortcutService, TerminalService,
};
pub use session_control::{CompactRequest, Compaction, SessionTarget};
