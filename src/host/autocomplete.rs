//! Host-mediated autocomplete (section 2.24b), the embedder's side: query one
//! extension's admitted chain, or every admitted chain in turn under the one aggregate
//! deadline, and get back only replies checked against the exact snapshot asked about.

use std::sync::Arc;
use std::time::Instant;

use super::call::{CallError, CallOptions};
use super::extension::{send_call, Extras};
use super::{ExtensionHandle, ExtensionHost, HostInner};
use crate::dispatcher::{Command, HostRequest};
use crate::limits::AUTOCOMPLETE_DEADLINE;
use crate::negotiation::Feature;
use crate::services::autocomplete::{completion_reply, CompletionQuery, CompletionReply};
use crate::validate::{ResultError, ResultErrorKind};

/// What one aggregate autocomplete query found (section 2.24b).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct AutocompleteOutcome {
    /// The first chain that claimed the query: its extension and its checked reply, each
    /// item with the edit it makes. `None` when every chain left it unclaimed, failed or
    /// ran out of time: fall back to native completion, if the editor still shows the
    /// snapshot ([`CompletionQuery::still_matches`]).
    pub claimed: Option<(String, CompletionReply)>,
    /// The chains that failed (a refused reply, an error, the deadline), in order. A
    /// failed chain is skipped like an unclaimed one; nothing of its reply is used.
    pub failures: Vec<(String, CallError)>,
}

/// Checks the snapshot before anything is sent.
fn checked(query: &CompletionQuery) -> Result<(), CallError> {
    query.check().map_err(|e| CallError::InvalidRequest {
        reason: e.to_string(),
    })
}

/// Sends the checked `query` to `extension` and checks the reply against it.
fn complete(
    host: &Arc<HostInner>,
    extension: String,
    edit_v1: bool,
    query: &CompletionQuery,
    options: &CallOptions,
) -> Result<CompletionReply, CallError> {
    let request = HostRequest::AutocompleteComplete {
        text: query.text.clone(),
        cursor: query.cursor,
        revision: query.revision,
    };
    let (text, cursor) = (query.text.clone(), query.cursor);
    send_call(
        (host, extension),
        request,
        options,
        AUTOCOMPLETE_DEADLINE,
        Extras::default(),
        move |reply| {
            let raw = reply?;
            completion_reply(&raw.value, &text, cursor, edit_v1).map_err(|e| {
                CallError::InvalidResult(ResultError::new(
                    format!("result.{}", e.path),
                    ResultErrorKind::Autocomplete { reason: e.reason },
                ))
            })
        },
    )
    .wait()
}

impl ExtensionHandle {
    /// Asks this extension's admitted chain to complete `query`
    /// (`ui/autocomplete/complete`, section 2.24b) and checks the reply against it on
    /// receipt: the closed shapes and bounds, and every item's edit (with
    /// `autocomplete_edit_v1`, its `replace_after_bytes` and `cursor_offset_bytes`). The
    /// deadline is [`AUTOCOMPLETE_DEADLINE`] unless `options` gives one. An extension
    /// whose frontend admitted no chain fails with [`CallError::NotDeclared`] and is not
    /// asked; a snapshot over the budget or with the cursor inside a character fails
    /// with [`CallError::InvalidRequest`] before anything is sent.
    pub fn autocomplete(
        &self,
        query: &CompletionQuery,
        options: CallOptions,
    ) -> Result<CompletionReply, CallError> {
        let edit_v1 = self
            .info()
            .negotiated
            .features
            .contains(Feature::AutocompleteEditV1);
        checked(query)?;
        complete(
            self.inner(),
            self.name().to_string(),
            edit_v1,
            query,
            &options,
        )
    }
}

impl ExtensionHost {
    /// Completes `query` through every admitted autocomplete chain in the order the
    /// frontend admitted them, under one [`AUTOCOMPLETE_DEADLINE`] for all of them
    /// (section 2.24b): the first chain that returns items claims it; an empty reply,
    /// a refused reply or a failure passes to the next chain. Each reply is checked
    /// against the exact snapshot; whether the editor still shows it when the outcome
    /// arrives is the embedder's to check ([`CompletionQuery::still_matches`]).
    pub fn autocomplete(&self, query: &CompletionQuery) -> Result<AutocompleteOutcome, CallError> {
        checked(query)?;
        let deadline = Instant::now() + AUTOCOMPLETE_DEADLINE;
        let (reply, answer) = crossbeam_channel::bounded(1);
        if self
            .inner
            .commands
            .send(Command::AutocompleteChains { reply })
            .is_err()
        {
            return Err(CallError::HostShutDown);
        }
        let chains = answer.recv().map_err(|_| CallError::HostShutDown)?;
        let mut outcome = AutocompleteOutcome {
            claimed: None,
            failures: Vec::new(),
        };
        for (extension, edit_v1) in chains {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                let after = AUTOCOMPLETE_DEADLINE;
                outcome
                    .failures
                    .push((extension, CallError::DeadlineExceeded { after }));
                continue;
            }
            let options = CallOptions::with_deadline(left);
            match complete(&self.inner, extension.clone(), edit_v1, query, &options) {
                Ok(reply) if !reply.is_unclaimed() => {
                    outcome.claimed = Some((extension, reply));
                    break;
                }
                Ok(_) => {}
                Err(error) => outcome.failures.push((extension, error)),
            }
        }
        Ok(outcome)
    }
}
