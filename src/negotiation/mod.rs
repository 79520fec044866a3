//! `initialize`: building the request for each API version and validating the response
//! (section 1.1).
//!
//! [`initialize_params`] builds the params from a located manifest, the workspace, the
//! [`HostContext`] and the host's [`InitializeOffer`];
//! [`validate_initialize_result`] checks the response against the same manifest and
//! offer and yields what the generation [`Negotiated`]. API 0.1 and the
//! feature-negotiated API 0.2 and 0.4 are supported; API 0.3, a distinct canonical wire,
//! is refused by both with [`NegotiationError::UnsupportedApiVersion`].
//!
//! Everything here is pure: no I/O, no clocks.

mod definitions;
mod error;
mod feature;
mod offer;
mod params;
mod result;

pub use definitions::{CommandDefinition, Composition, CompositionMode, ToolDefinition};
pub use error::{
    CompositionProblem, LifecycleSubscriptionProblem, NameProblem, NegotiationError, PathProblem,
    PromptMetadataProblem,
};
pub use feature::{Feature, FeatureSet, LifecycleEvent};
pub use offer::{BulkLimits, BulkObjectsOffer, InitializeOffer};
pub use params::{initialize_params, protocol_version, HostContext, InitializeParams};
pub use result::{validate_initialize_result, Negotiated};
