//! `initialize`: building the request for each API version and validating the response
//! (section 1.1).
//!
//! [`initialize_params`] builds the params from a located manifest, the workspace, the
//! [`HostContext`] and the host's [`InitializeOffer`];
//! [`validate_initialize_result`] checks the response against the same manifest and
//! offer and yields what the generation [`Negotiated`]. API 0.1, the
//! feature-negotiated API 0.2 and 0.4, and API 0.3, a distinct canonical wire whose
//! `contract` is described in [`contract`], are supported. An API 0.3 `initialize`
//! request is encoded with [`crate::wire::codec::Codec::Canonical`] from
//! [`InitializeParams::to_value`].
//!
//! Everything here is pure: no I/O, no clocks.

pub mod contract;
mod definitions;
mod error;
mod feature;
mod offer;
mod params;
mod result;

pub use contract::{Capability, Contract, ContractError, ContractLimits, ContractMethod};
#[doc(hidden)]
pub use contract::{CONTRACT_ENCODING, CONTRACT_SCHEMA};
pub use definitions::{CommandDefinition, Composition, CompositionMode, ToolDefinition};
pub use error::{
    CompositionProblem, LifecycleSubscriptionProblem, NameProblem, NegotiationError, PathProblem,
    PromptMetadataProblem,
};
pub use feature::{Feature, FeatureSet, LifecycleEvent};
pub use params::HostContext;
pub use result::Negotiated;
// Building and checking `initialize` by hand: the dispatcher does it; public for the
// crate's own tests and fuzz targets.
#[doc(hidden)]
pub use offer::{BulkLimits, BulkObjectsOffer, InitializeOffer};
#[doc(hidden)]
pub use params::{initialize_params, protocol_version, InitializeParams};
#[doc(hidden)]
pub use result::validate_initialize_result;
