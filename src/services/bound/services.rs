//! The service traits an embedder implements, one per kind, expanded from the rows of
//! the method table (`table.rs`): each method with a default body that refuses
//! `unsupported_feature`, the routing from a validated request to its trait method,
//! and the kind's binder on [`ServiceBindings`].

use std::sync::Arc;

use super::agents::{
    AgentModels, AgentModelsQuery, AgentSend, AgentSpawn, AgentSpawned, AgentTarget,
    FollowUpDelivered, InterruptRequested, MessageDelivered, StopRequested,
};
use super::bindings::ServiceBindings;
use super::call::{RawReply, Reply, ServiceCall};
use super::frontend_models::{Accepted, AutocompleteRegistration, TerminalGrant};
use super::methods::{ServiceKind, ServiceRequest};
use super::params::{
    ActiveToolSet, AppendEntry, ComposerEdit, EntryLabel, InjectedMessage, NoParams, SessionName,
    Shortcut, UserMessage,
};
use super::private_lane::{PrivateAppend, PrivateCommit};
use super::provider_models::{
    CatalogRevision, ProviderAuthAnswer, ProviderAuthParams, ProviderRef, ProviderRegistration,
    SessionId,
};
use super::results::{ComposerText, EntryId};
use super::route::{misrouted, RawService, Routed};
use super::session_control::{CompactRequest, Compaction, SessionTarget};

service_table!(services);
