//! Why an API 0.3 contract offer is invalid or a contract selection was rejected.

use std::fmt;

use super::{Capability, ContractMethod, CONTRACT_ENCODING, CONTRACT_SCHEMA};
use crate::manifest::ApiVersion;
use crate::wire::codes;

/// A failed `contract` rule (SUPPLEMENT "API 0.3 (canonical wire)").
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ContractError {
    // ----- The host's own offer -----
    /// Contract capabilities or methods are offered to a manifest that does not select
    /// API 0.3.
    OfferedOnApi {
        /// The manifest's version.
        api: ApiVersion,
    },
    /// An offered limit is zero or above the host's bound (`max_frame_bytes` above
    /// `limits::CANONICAL_MAX_FRAME_BYTES`, `max_tools` above `limits::MAX_TOOLS`).
    OfferInvalidLimit {
        /// The limit's member name, such as `max_frame_bytes`.
        name: &'static str,
        /// The offered value.
        value: u64,
    },
    /// A method is offered without the capability that gates it (upstream's
    /// extensions answer such an offer with -32011).
    OfferMethodWithoutCapability {
        /// The method.
        method: ContractMethod,
        /// The capability it needs.
        capability: Capability,
    },

    // ----- The extension's selection -----
    /// `contract.schema` is not `octet.extension.api/0.3`.
    SchemaMismatch {
        /// What the response said.
        got: String,
    },
    /// `contract.encoding` is not `octet-canonical-json-v1`.
    EncodingMismatch {
        /// What the response said.
        got: String,
    },
    /// `contract.capabilities` lacks a required capability.
    MissingRequiredCapability {
        /// The missing capability.
        capability: Capability,
    },
    /// `contract.capabilities` names a capability the offer does not contain (unknown
    /// names included).
    CapabilityNotOffered {
        /// The name as sent.
        name: String,
    },
    /// `contract.capabilities` names a capability twice.
    DuplicateCapability {
        /// The repeated name.
        name: String,
    },
    /// `contract.methods` lacks a required method.
    MissingRequiredMethod {
        /// The missing method.
        method: ContractMethod,
    },
    /// `contract.methods` selects a method without the capability that gates it.
    MethodWithoutCapability {
        /// The method.
        method: ContractMethod,
        /// The capability that was not selected.
        capability: Capability,
    },
    /// `contract.methods` names a method the offer does not contain (unknown names
    /// included).
    MethodNotOffered {
        /// The name as sent.
        name: String,
    },
    /// `contract.methods` names a method twice.
    DuplicateMethod {
        /// The repeated name.
        name: String,
    },
    /// A selected limit is not an integer, or is zero where zero is meaningless
    /// (`max_frame_bytes`, `max_concurrent_requests`).
    InvalidLimit {
        /// The limit's member name.
        name: &'static str,
        /// The value as JSON text.
        value: String,
    },
    /// A selected limit is above the offer.
    LimitAboveOffer {
        /// The limit's member name.
        name: &'static str,
        /// The selected value.
        value: u64,
        /// The offered value.
        offered: u64,
    },
    /// The response defines more tools than its own `max_tools`.
    TooManyTools {
        /// How many tools the response defines.
        count: usize,
        /// The selected `max_tools`.
        max_tools: usize,
    },
}

impl ContractError {
    /// A stable machine-readable name for the failed rule.
    pub fn code(&self) -> &'static str {
        match self {
            ContractError::OfferedOnApi { .. } => "contract_offered_on_api",
            ContractError::OfferInvalidLimit { .. } => "contract_offer_invalid_limit",
            ContractError::OfferMethodWithoutCapability { .. } => {
                "contract_offer_method_without_capability"
            }
            ContractError::SchemaMismatch { .. } => "contract_schema_mismatch",
            ContractError::EncodingMismatch { .. } => "contract_encoding_mismatch",
            ContractError::MissingRequiredCapability { .. } => {
                "contract_missing_required_capability"
            }
            ContractError::CapabilityNotOffered { .. } => "contract_capability_not_offered",
            ContractError::DuplicateCapability { .. } => "contract_duplicate_capability",
            ContractError::MissingRequiredMethod { .. } => "contract_missing_required_method",
            ContractError::MethodNotOffered { .. } => "contract_method_not_offered",
            ContractError::MethodWithoutCapability { .. } => "contract_method_without_capability",
            ContractError::DuplicateMethod { .. } => "contract_duplicate_method",
            ContractError::InvalidLimit { .. } => "contract_invalid_limit",
            ContractError::LimitAboveOffer { .. } => "contract_limit_above_offer",
            ContractError::TooManyTools { .. } => "contract_too_many_tools",
        }
    }

    /// The code of the API 0.3 fixed error table that names this failure, for logs
    /// and for an extension that reports the same failure on the wire: a schema or
    /// encoding mismatch is `version_mismatch` (-32010), a capability or method outside
    /// the offer or missing is `capability_mismatch` (-32011), a limit above the offer
    /// or too many tools is `resource_exhausted` (-32012), a malformed selection is
    /// invalid params (-32602) and a bad host offer is internal (-32603).
    pub fn wire_code(&self) -> i64 {
        match self {
            ContractError::OfferedOnApi { .. }
            | ContractError::OfferInvalidLimit { .. }
            | ContractError::OfferMethodWithoutCapability { .. } => codes::INTERNAL_ERROR,
            ContractError::SchemaMismatch { .. } | ContractError::EncodingMismatch { .. } => {
                codes::VERSION_MISMATCH
            }
            ContractError::MissingRequiredCapability { .. }
            | ContractError::CapabilityNotOffered { .. }
            | ContractError::MissingRequiredMethod { .. }
            | ContractError::MethodWithoutCapability { .. }
            | ContractError::MethodNotOffered { .. } => codes::CAPABILITY_MISMATCH,
            ContractError::LimitAboveOffer { .. } | ContractError::TooManyTools { .. } => {
                codes::RESOURCE_EXHAUSTED
            }
            ContractError::DuplicateCapability { .. }
            | ContractError::DuplicateMethod { .. }
            | ContractError::InvalidLimit { .. } => codes::INVALID_PARAMS,
        }
    }
}

impl fmt::Display for ContractError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ContractError::OfferedOnApi { api } => write!(
                f,
                "contract capabilities and methods cannot be offered on API {api}"
            ),
            ContractError::OfferInvalidLimit { name, value } => write!(
                f,
                "offered contract limit `{name}` = {value} is zero or above the host's bound"
            ),
            ContractError::OfferMethodWithoutCapability { method, capability } => write!(
                f,
                "contract method `{method}` is offered without its capability `{capability}`"
            ),
            ContractError::SchemaMismatch { got } => {
                write!(f, "contract.schema {got:?} is not \"{CONTRACT_SCHEMA}\"")
            }
            ContractError::EncodingMismatch { got } => write!(
                f,
                "contract.encoding {got:?} is not \"{CONTRACT_ENCODING}\""
            ),
            ContractError::MissingRequiredCapability { capability } => write!(
                f,
                "contract.capabilities lacks required capability `{capability}`"
            ),
            ContractError::CapabilityNotOffered { name } => write!(
                f,
                "contract.capabilities selects {name:?}, which was not offered"
            ),
            ContractError::DuplicateCapability { name } => {
                write!(f, "contract.capabilities names {name:?} twice")
            }
            ContractError::MissingRequiredMethod { method } => {
                write!(f, "contract.methods lacks required method `{method}`")
            }
            ContractError::MethodWithoutCapability { method, capability } => write!(
                f,
                "contract.methods selects `{method}` without its capability `{capability}`"
            ),
            ContractError::MethodNotOffered { name } => {
                write!(
                    f,
                    "contract.methods selects {name:?}, which was not offered"
                )
            }
            ContractError::DuplicateMethod { name } => {
                write!(f, "contract.methods names {name:?} twice")
            }
            ContractError::InvalidLimit { name, value } => write!(
                f,
                "contract.limits.{name} {value} is not a valid integer for this limit"
            ),
            ContractError::LimitAboveOffer {
                name,
                value,
                offered,
            } => write!(
                f,
                "contract.limits.{name} {value} is above the offered {offered}"
            ),
            ContractError::TooManyTools { count, max_tools } => write!(
                f,
                "initialize response has {count} tools; the contract allows {max_tools}"
            ),
        }
    }
}

impl std::error::Error for ContractError {}
