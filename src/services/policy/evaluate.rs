//! The whole `policy/evaluate` flow (section 2.9).

use std::time::Instant;

use parking_lot::Mutex;
use serde_json::{json, Map, Value};

use super::engine::{Approval, Approver, Decision, PolicyEngine, PolicyRequest};
use super::intent::Intent;
use crate::negotiation::{Feature, FeatureSet};
use crate::services::approvals::{ApprovalToken, ApprovalTokens, Redemption};
use crate::services::operation::{
    closed_object, parent_request_id, OperationContext, ParamsError, ServiceError,
};
use crate::services::owner::ResourceOwner;

/// The host side of `policy/evaluate`: the engine that classifies, and the optional
/// approval machinery.
pub struct PolicyService<'a> {
    /// The host's classification; [`super::DenyAll`] unless the embedder binds another.
    pub engine: &'a dyn PolicyEngine,
    /// The trusted frontend that may approve `ask` intents; `None` by default.
    pub approver: Option<&'a dyn Approver>,
    /// The generation's approval tokens, when approval-token issuance is enabled. They
    /// are locked only to discard, redeem or issue a token, never while the engine or
    /// the approver decides.
    pub approvals: Option<&'a Mutex<ApprovalTokens>>,
}

#[doc(hidden)]
/// Answers one `policy/evaluate` request (section 2.9) with its result object,
/// `{"decision": "allow"|"ask"|"deny"}` plus `"approval_token"` only on an approved
/// `ask`.
///
/// The steps, in order:
///
/// 1. Without negotiated `policy_intents` the method does not exist: -32601.
/// 2. `params` must be an object with no members but `parent_request_id`, `intent` and
///    `approval_token`: -32602 otherwise.
/// 3. `approval_token`, when present: without negotiated `approvals` it is -32602;
///    otherwise it must be a string of 64 lowercase hexadecimal characters (anything
///    else can never have been issued): -32602 otherwise.
/// 4. `parent_request_id` must be an unsigned integer and `intent` valid as
///    [`Intent::parse`] describes: -32602 otherwise.
/// 5. When `parent_request_id` is not the active parent of `ctx` or that parent has no
///    resource owner: -32002.
/// 6. The engine classifies the intent, and [`Decision::with_hints`] applies the
///    adapter hints, which can only raise caution.
/// 7. With a token, the token is consumed, and the answer is `allow` only when it was
///    live (its expiry not yet reached at `now`) and issued for this extension, this
///    exact owner triple (so this generation), this parent and this canonical intent,
///    and the fresh classification is not `deny`; in every other case (unknown,
///    reused, expired, mismatched, no token store) it is `deny`. No token is returned.
/// 8. Without a token, `allow` and `deny` are answered as they are. `ask` carries a
///    fresh token only when `approvals` was negotiated, a token store and an
///    [`Approver`] are bound, the approver approves this exact request, and the store
///    can issue one (it is bounded per generation); otherwise it is a plain `ask`.
///
/// A well-formed token the store recognizes is consumed whatever the outcome, errors
/// of steps 4 and 5 included.
pub fn policy_evaluate(
    params: &Value,
    ctx: &OperationContext<'_>,
    features: &FeatureSet,
    service: PolicyService<'_>,
    now: Instant,
) -> Result<Value, ServiceError> {
    if !features.contains(Feature::PolicyIntents) {
        return Err(ServiceError::NotNegotiated);
    }
    let approvals_negotiated = features.contains(Feature::Approvals);
    let map = closed_object(
        params,
        "params",
        &["parent_request_id", "intent", "approval_token"],
    )?;
    let token = match map.get("approval_token") {
        None => None,
        Some(_) if !approvals_negotiated => {
            return Err(ParamsError::ApprovalsNotNegotiated.into());
        }
        Some(Value::String(text)) => {
            Some(ApprovalToken::parse(text).ok_or(ParamsError::MalformedApprovalToken)?)
        }
        Some(_) => {
            return Err(ParamsError::WrongType {
                member: "approval_token",
            }
            .into());
        }
    };
    let PolicyService {
        engine,
        approver,
        approvals,
    } = service;
    let request = parse_request(map, params, ctx);
    let (parent, intent, owner) = match request {
        Ok(parsed) => parsed,
        Err(error) => {
            if let (Some(token), Some(store)) = (&token, approvals) {
                store.lock().discard(token);
            }
            return Err(error);
        }
    };
    let request = PolicyRequest {
        extension: ctx.extension,
        owner,
        parent_request_id: parent,
        intent: &intent,
        cancelled: ctx.cancelled,
    };
    let decision = engine.evaluate(&request).with_hints(intent.adapter_hints());

    if let Some(token) = token {
        let redemption = match approvals {
            Some(store) => store.lock().redeem(&token, &request, now),
            None => Redemption::Unknown,
        };
        let allowed = redemption == Redemption::Valid && decision != Decision::Deny;
        let decision = if allowed {
            Decision::Allow
        } else {
            Decision::Deny
        };
        return Ok(json!({ "decision": decision.as_str() }));
    }

    if decision == Decision::Ask && approvals_negotiated {
        if let (Some(store), Some(approver)) = (approvals, approver) {
            if approver.approve(&request) == Approval::Approved {
                let issued = store.lock().issue(&request, now);
                if let Ok(token) = issued {
                    return Ok(json!({
                        "decision": Decision::Ask.as_str(),
                        "approval_token": token.as_str(),
                    }));
                }
            }
        }
    }
    Ok(json!({ "decision": decision.as_str() }))
}

/// Steps 4 and 5: the parent id, the intent, and the owner of the active parent.
fn parse_request<'a>(
    map: &Map<String, Value>,
    params: &Value,
    ctx: &OperationContext<'a>,
) -> Result<(u64, Intent, &'a ResourceOwner), ServiceError> {
    let parent = parent_request_id(params)?;
    let intent = Intent::parse(
        map.get("intent")
            .ok_or(ParamsError::Missing { member: "intent" })?,
    )?;
    let owner = ctx.owner_of(parent)?;
    Ok((parent, intent, owner))
}
