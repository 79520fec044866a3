//! Host services and the traits an embedder implements to bind a frontend or broker.

pub mod approvals;
pub mod artifacts;
pub mod bound;
pub mod operation;
pub mod owner;
pub mod policy;
pub mod presentation;
pub mod secrets;
pub mod tool_policy;

pub use approvals::{ApprovalToken, ApprovalTokens, IssueError, Redemption};
pub use artifacts::{Artifact, ArtifactError, ArtifactId, ArtifactStore, OwnerArtifacts};
pub use operation::{parent_request_id, ActiveParent, OperationContext, ParamsError, ServiceError};
pub use owner::{OwnerError, ResourceOwner};
pub use policy::{
    policy_evaluate, AdapterHints, Approval, Approver, Decision, DenyAll, Intent, PolicyEngine,
    PolicyRequest, PolicyService, RulesEngine,
};
pub use presentation::{
    parse_update, PresentationError, PresentationStore, PresentationThrottle, PresentationUpdate,
};
pub use secrets::{
    provider_credentials, secret_get, wipe_bytes, wipe_json, BrokerError, CredentialRequest,
    CredentialResolver, InMemoryCredentialResolver, InMemorySecretBroker, ProviderCredential,
    SecretBroker, SecretRequest, SecretValue,
};
pub use tool_policy::ToolPolicy;
