//! The traits an embedder implements to bind a frontend or broker, and the stores the
//! host keeps for the services it answers (artifacts, approvals, presentation). The
//! features the runtime serves itself are in [`crate::features`].

pub mod approvals;
pub mod artifacts;
pub mod autocomplete;
pub mod bound;
pub mod operation;
pub mod owner;
pub mod policy;
pub mod presentation;
pub mod secrets;
pub mod tool_policy;

pub use approvals::{ApprovalToken, IssueError, Redemption};
pub use artifacts::{Artifact, ArtifactError, ArtifactId};
pub use operation::ServiceError;
pub use owner::{OwnerError, ResourceOwner};
pub use policy::{
    AdapterHints, Approval, Approver, Decision, DenyAll, Intent, PolicyEngine, PolicyRequest,
    RulesEngine,
};
pub use presentation::{PresentationError, PresentationUpdate};
pub use secrets::{
    BrokerError, CredentialRequest, CredentialResolver, InMemoryCredentialResolver,
    InMemorySecretBroker, ProviderCredential, SecretBroker, SecretRequest, SecretValue,
};
pub use tool_policy::ToolPolicy;

// The host-served methods and their per-generation state, as the dispatcher runs
// them: public for the crate's own tests; embedders bind the traits above.
#[doc(hidden)]
pub use approvals::ApprovalTokens;
#[doc(hidden)]
pub use artifacts::{ArtifactStore, OwnerArtifacts};
#[doc(hidden)]
pub use operation::{parent_request_id, ActiveParent, OperationContext, ParamsError};
#[doc(hidden)]
pub use policy::{policy_evaluate, PolicyService};
#[doc(hidden)]
pub use presentation::{parse_update, PresentationStore, PresentationThrottle};
#[doc(hidden)]
pub use secrets::{provider_credentials, secret_get, wipe_bytes, wipe_json};
