//! What the operation-scoped services (`policy/evaluate`, `secret/get`,
//! `provider/credentials`) share: the context the dispatcher derives from the active
//! parent request, their typed errors and the reading of their closed `params` objects
//! (sections 2, 2.9, 2.10).
//!
//! No error here ever carries a string the extension sent, a secret value or an
//! approval token: every message is a fixed text naming at most a member path.

use std::fmt;

use serde_json::{Map, Value};

use super::owner::ResourceOwner;
use crate::cancel_flag::CancelFlag;
use crate::manifest::IdentifierRule;
use crate::wire::{codes, ResponseError};

/// What the host, not the extension, knows about an operation-scoped request: the
/// requesting extension's identity and the active parent request it names.
///
/// The dispatcher builds this from its own state after looking up the request's
/// `parent_request_id` (read it with [`parent_request_id`]); the services never accept
/// identity or owner from child JSON (section 2.10).
#[derive(Clone, Copy, Debug)]
pub struct OperationContext<'a> {
    /// The requesting extension's name, as the host knows it.
    pub extension: &'a str,
    /// The host request the `parent_request_id` names, when it is still active (not
    /// settled, not unknown, of this process generation); `None` otherwise.
    pub parent: Option<ActiveParent<'a>>,
    /// Set once the answer is no longer wanted (the parent settled, the extension
    /// cancelled the request); handed to the engine or broker in its request.
    pub cancelled: Option<&'a CancelFlag>,
}

/// An active host parent request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ActiveParent<'a> {
    /// The parent's numeric host request id.
    pub parent_request_id: u64,
    /// The resource owner the host issued with the parent, when it issued one.
    pub owner: Option<&'a ResourceOwner>,
}

impl<'a> OperationContext<'a> {
    /// The owner of the active parent `parent_request_id`, or [`ServiceError::NoOwner`]
    /// when that parent is not the active one or has no owner (section 2: -32002).
    pub fn owner_of(&self, parent_request_id: u64) -> Result<&'a ResourceOwner, ServiceError> {
        match self.parent {
            Some(ActiveParent {
                parent_request_id: active,
                owner: Some(owner),
            }) if active == parent_request_id => Ok(owner),
            _ => Err(ServiceError::NoOwner),
        }
    }
}

/// Why an operation-scoped request was refused. Every variant maps to one JSON-RPC
/// error code ([`ServiceError::code`]) and one fixed message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServiceError {
    /// The method's feature was not negotiated (section 3: -32601).
    NotNegotiated,
    /// The params are malformed (section 3: -32602).
    InvalidParams(ParamsError),
    /// The parent is not active or has no resource owner (sections 2, 2.10: -32002).
    NoOwner,
    /// The host has no such service bound (sections 1.1, 2.10: -32002).
    NoService,
    /// The secret broker had no value, failed, or its value was over the bound: always
    /// this one response (section 2.10: -32004).
    SecretUnavailable,
    /// The credential resolver had no credential for the named identity, failed, or
    /// answered for another identity (section 1.1; the code follows section 2.10).
    CredentialUnavailable,
}

impl ServiceError {
    /// The JSON-RPC error code.
    pub fn code(&self) -> i64 {
        match self {
            ServiceError::NotNegotiated => codes::METHOD_NOT_FOUND,
            ServiceError::InvalidParams(_) => codes::INVALID_PARAMS,
            ServiceError::NoOwner | ServiceError::NoService => codes::NO_OWNER,
            ServiceError::SecretUnavailable | ServiceError::CredentialUnavailable => {
                codes::SECRET_UNAVAILABLE
            }
        }
    }

    /// The error object to answer the request with.
    pub fn to_response_error(&self) -> ResponseError {
        ResponseError::new(self.code(), self.to_string())
    }
}

impl fmt::Display for ServiceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServiceError::NotNegotiated => f.write_str("unknown or unnegotiated method"),
            ServiceError::InvalidParams(error) => write!(f, "invalid params: {error}"),
            ServiceError::NoOwner => {
                f.write_str("not_foreground_owner: no active parent request with a resource owner")
            }
            ServiceError::NoService => f.write_str("the service is not available"),
            ServiceError::SecretUnavailable => f.write_str("secret is unavailable"),
            ServiceError::CredentialUnavailable => {
                f.write_str("provider credential is unavailable")
            }
        }
    }
}

impl std::error::Error for ServiceError {}

impl From<ParamsError> for ServiceError {
    fn from(error: ParamsError) -> ServiceError {
        ServiceError::InvalidParams(error)
    }
}

/// What is wrong with a request's params. `member` is a fixed path such as
/// `intent.data_classes`, never text from the request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamsError {
    /// A required member is absent.
    Missing {
        /// The member's path.
        member: &'static str,
    },
    /// A member has the wrong JSON type (`null` included).
    WrongType {
        /// The member's path.
        member: &'static str,
    },
    /// An object has a member that is not part of its closed shape.
    UnknownMember {
        /// The path of the object holding it.
        object: &'static str,
    },
    /// A string that must not be empty is empty.
    Empty {
        /// The member's path.
        member: &'static str,
    },
    /// A string is longer than `max` UTF-8 bytes, or an encoded value larger than `max`
    /// bytes.
    TooLong {
        /// The member's path.
        member: &'static str,
        /// The largest size allowed, in bytes.
        max: usize,
    },
    /// An identifier string contains a control character.
    ControlCharacter {
        /// The member's path.
        member: &'static str,
    },
    /// An array has more than `max` elements.
    TooMany {
        /// The member's path.
        member: &'static str,
        /// The most elements allowed.
        max: usize,
    },
    /// An array that is a set repeats an element.
    Duplicate {
        /// The member's path.
        member: &'static str,
    },
    /// A value is nested deeper than `max`.
    TooDeep {
        /// The member's path.
        member: &'static str,
        /// The deepest nesting allowed.
        max: usize,
    },
    /// `approval_token` was supplied but `approvals` was not negotiated (section 2.9).
    ApprovalsNotNegotiated,
    /// `approval_token` is not 64 lowercase hexadecimal characters (section 2.9).
    MalformedApprovalToken,
    /// `name` breaks the secret-name rules (section 1.1).
    InvalidSecretName(IdentifierRule),
    /// `name` is not in the manifest's `[capabilities].secrets` allowlist (section 2.10).
    UndeclaredSecret,
}

impl fmt::Display for ParamsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamsError::Missing { member } => write!(f, "`{member}` is required"),
            ParamsError::WrongType { member } => write!(f, "`{member}` has the wrong type"),
            ParamsError::UnknownMember { object } => {
                write!(f, "`{object}` has an unknown member")
            }
            ParamsError::Empty { member } => write!(f, "`{member}` is empty"),
            ParamsError::TooLong { member, max } => {
                write!(f, "`{member}` is larger than {max} bytes")
            }
            ParamsError::ControlCharacter { member } => {
                write!(f, "`{member}` contains a control character")
            }
            ParamsError::TooMany { member, max } => {
                write!(f, "`{member}` has more than {max} elements")
            }
            ParamsError::Duplicate { member } => write!(f, "`{member}` repeats an element"),
            ParamsError::TooDeep { member, max } => {
                write!(f, "`{member}` is nested deeper than {max}")
            }
            ParamsError::ApprovalsNotNegotiated => {
                f.write_str("`approval_token` requires the negotiated approvals feature")
            }
            ParamsError::MalformedApprovalToken => {
                f.write_str("`approval_token` is not 64 lowercase hexadecimal characters")
            }
            ParamsError::InvalidSecretName(rule) => {
                write!(f, "`name` is not a valid secret name: {rule}")
            }
            ParamsError::UndeclaredSecret => {
                f.write_str("`name` is not declared in [capabilities].secrets")
            }
        }
    }
}

impl std::error::Error for ParamsError {}

#[doc(hidden)]
/// Reads the `parent_request_id` every operation-scoped request must carry (section 2):
/// an unsigned 64-bit integer member of the params object.
pub fn parent_request_id(params: &Value) -> Result<u64, ParamsError> {
    let Value::Object(map) = params else {
        return Err(ParamsError::WrongType { member: "params" });
    };
    match map.get("parent_request_id") {
        None => Err(ParamsError::Missing {
            member: "parent_request_id",
        }),
        Some(value) => value.as_u64().ok_or(ParamsError::WrongType {
            member: "parent_request_id",
        }),
    }
}

/// Checks that `value` is an object with no members outside `allowed`.
pub(crate) fn closed_object<'v>(
    value: &'v Value,
    path: &'static str,
    allowed: &[&str],
) -> Result<&'v Map<String, Value>, ParamsError> {
    let Value::Object(map) = value else {
        return Err(ParamsError::WrongType { member: path });
    };
    if map.keys().any(|key| !allowed.contains(&key.as_str())) {
        return Err(ParamsError::UnknownMember { object: path });
    }
    Ok(map)
}

/// Reads a required string member.
pub(crate) fn required_str<'v>(
    map: &'v Map<String, Value>,
    key: &str,
    member: &'static str,
) -> Result<&'v str, ParamsError> {
    match map.get(key) {
        None => Err(ParamsError::Missing { member }),
        Some(Value::String(text)) => Ok(text),
        Some(_) => Err(ParamsError::WrongType { member }),
    }
}

/// Checks an identifier-like string: non-empty, at most `max` bytes, no control
/// characters.
pub(crate) fn check_label(text: &str, member: &'static str, max: usize) -> Result<(), ParamsError> {
    if text.is_empty() {
        return Err(ParamsError::Empty { member });
    }
    if text.len() > max {
        return Err(ParamsError::TooLong { member, max });
    }
    if text.chars().any(char::is_control) {
        return Err(ParamsError::ControlCharacter { member });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parent_request_id_is_a_required_unsigned_integer() {
        assert_eq!(parent_request_id(&json!({"parent_request_id": 7})), Ok(7));
        assert_eq!(
            parent_request_id(&json!({})),
            Err(ParamsError::Missing {
                member: "parent_request_id"
            })
        );
        for bad in [json!(-1), json!("7"), json!(1.5), Value::Null] {
            assert_eq!(
                parent_request_id(&json!({ "parent_request_id": bad })),
                Err(ParamsError::WrongType {
                    member: "parent_request_id"
                })
            );
        }
        assert_eq!(
            parent_request_id(&json!([])),
            Err(ParamsError::WrongType { member: "params" })
        );
    }

    #[test]
    fn the_owner_is_only_that_of_the_named_active_parent() {
        let owner = ResourceOwner {
            session_id: "s".into(),
            extension_instance_id: "i".into(),
            process_generation: 1,
        };
        let ctx = OperationContext {
            cancelled: None,
            extension: "e",
            parent: Some(ActiveParent {
                parent_request_id: 4,
                owner: Some(&owner),
            }),
        };
        assert_eq!(ctx.owner_of(4), Ok(&owner));
        assert_eq!(ctx.owner_of(5), Err(ServiceError::NoOwner));
        let ownerless = OperationContext {
            cancelled: None,
            extension: "e",
            parent: Some(ActiveParent {
                parent_request_id: 4,
                owner: None,
            }),
        };
        assert_eq!(ownerless.owner_of(4), Err(ServiceError::NoOwner));
        let inactive = OperationContext {
            cancelled: None,
            extension: "e",
            parent: None,
        };
        assert_eq!(inactive.owner_of(4), Err(ServiceError::NoOwner));
    }

    #[test]
    fn codes_follow_the_reference() {
        assert_eq!(ServiceError::NotNegotiated.code(), -32601);
        assert_eq!(
            ServiceError::InvalidParams(ParamsError::UndeclaredSecret).code(),
            -32602
        );
        assert_eq!(ServiceError::NoOwner.code(), -32002);
        assert_eq!(ServiceError::NoService.code(), -32002);
        let unavailable = ServiceError::SecretUnavailable.to_response_error();
        assert_eq!(unavailable.code, -32004);
        assert_eq!(unavailable.message, "secret is unavailable");
        assert_eq!(unavailable.data, None);
    }
}
