//! `policy/evaluate` (section 2.9), `secret/get` (section 2.10) and
//! `provider/credentials` (section 1.1): the host answers them through the policy
//! engine and approver, the broker or the resolver the embedder bound. That is
//! embedder code, which may block (a person approving, a keychain prompt, a network
//! round trip), so it runs on a thread of its own, never the dispatcher's. The answer
//! comes back as a [`ServiceAnswer`], is written in a frame the writer wipes (a secret
//! may be in it), and is wiped here too. A parent that settles first cancels the
//! request with -32800, like any child.

use std::panic::{self, AssertUnwindSafe};
use std::time::Instant;

use serde_json::Value;

use super::connection::{ChildKind, ChildRequest};
use super::route::HostMethod;
use super::Dispatcher;
use crate::model::frontend::CancelFlag;
use crate::negotiation::Feature;
use crate::services::bound::{Outcome, ServiceAnswer};
use crate::services::{
    policy_evaluate, provider_credentials, secret_get, ActiveParent, OperationContext,
    PolicyService,
};
use crate::transport::ConnId;
use crate::wire::{codes, RequestId, ResponseError};

impl Dispatcher {
    /// Hands a `secret/get` or `provider/credentials` to a thread that checks it and
    /// asks the broker.
    pub(super) fn on_brokered_request(
        &mut self,
        conn: ConnId,
        id: &RequestId,
        method: HostMethod,
        params: Option<&Value>,
    ) {
        let c = self.conns.get_mut(&conn).expect("connection is live");
        // This generation's bindings: the host-wide ones under its own.
        let services = c.services.clone();
        let params = params.cloned().unwrap_or(Value::Null);
        let features = c.features();
        let parent = c.live_parent(&params);
        let owner = c.owner.clone();
        let extension = c.source.extension.clone();
        let declared = c.located.manifest.capabilities.secrets.clone();
        let credentials_declared = c.located.manifest.capabilities.provider_credentials;
        // Approval tokens are issued only with a bound approver and negotiated
        // `approvals` (section 2.9).
        let approvals = match (
            services.approver_service(),
            features.contains(Feature::Approvals),
        ) {
            (Some(_), true) => Some(c.approvals.clone()),
            _ => None,
        };
        let cancelled = CancelFlag::default();
        // The engine or broker can stop waiting once the answer is no longer wanted.
        let flag = cancelled.clone();
        c.children.insert(
            id.clone(),
            ChildRequest {
                kind: ChildKind::Brokered,
                parent,
                cancelled,
            },
        );
        let answers = self.service_answer_sender.clone();
        let request_id = id.clone();
        let job = move || {
            let ctx = OperationContext {
                extension: &extension,
                parent: parent.map(|parent_request_id| ActiveParent {
                    parent_request_id,
                    owner: Some(&owner),
                }),
                cancelled: Some(&flag),
            };
            let answered = panic::catch_unwind(AssertUnwindSafe(|| match method {
                HostMethod::PolicyEvaluate => {
                    let engine = services.policy_engine();
                    let service = PolicyService {
                        engine: engine.as_ref(),
                        approver: services.approver_service().map(|a| a.as_ref()),
                        approvals: approvals.as_deref(),
                    };
                    policy_evaluate(&params, &ctx, &features, service, Instant::now())
                }
                HostMethod::SecretGet => secret_get(
                    &params,
                    &declared,
                    &features,
                    services.secret_broker().map(|b| b.as_ref()),
                    &ctx,
                ),
                _ => provider_credentials(
                    &params,
                    credentials_declared,
                    &features,
                    services.credential_resolver().map(|r| r.as_ref()),
                    &ctx,
                ),
            }));
            let outcome = match answered {
                Ok(Ok(result)) => Outcome::Answered(result),
                Ok(Err(error)) => Outcome::Error(error.to_response_error()),
                Err(_) => Outcome::Error(ResponseError::new(
                    codes::INTERNAL_ERROR,
                    format!(
                        "internal error: the host's service for {} failed",
                        method.name()
                    ),
                )),
            };
            let _ = answers.send(ServiceAnswer {
                conn,
                id: request_id,
                outcome,
            });
        };
        if let Err(error) = std::thread::Builder::new()
            .name("octet-broker".into())
            .spawn(job)
        {
            if let Some(c) = self.conns.get_mut(&conn) {
                c.children.remove(id);
            }
            let error = ResponseError::new(
                codes::INTERNAL_ERROR,
                format!("internal error: no thread to ask the broker: {error}"),
            );
            self.send_error(conn, id, &error);
        }
    }

    /// A broker's answer: written in a frame the writer wipes, then wiped.
    pub(super) fn on_brokered_answer(&mut self, conn: ConnId, id: &RequestId, outcome: Outcome) {
        match outcome {
            Outcome::Answered(result) => {
                self.answer_with(conn, id, &result, true);
                super::runtime_answers::wipe_result(result);
            }
            Outcome::Error(error) => self.send_error(conn, id, &error),
            _ => {
                let error = ResponseError::new(codes::INTERNAL_ERROR, "internal error");
                self.send_error(conn, id, &error);
            }
        }
    }
}
