//! The awaited session-operation hooks of section 1.4b, the embedder's side:
//! `model_turn_start` and `model_turn_end`, and the compaction callbacks
//! `session_before_compact` and `session_compact` (section 1.11), each invocation with
//! its private `session_leaf` grant.
//!
//! The embedder calls [`ExtensionHost::session_operation_hook`] at the boundary (before
//! the model request is prepared; after the assistant entry and its tool results
//! committed) and awaits it: every subscriber runs in the order it was started, one
//! after another, under one deadline for all of them. While its hook is awaited an
//! extension may append private entries through the bound `session_entries` service
//! (`SessionEntryService::append_private`), spending its grant; the grant is revoked
//! when its hook settles. The first failure stops the run; nothing is retried and no
//! end is synthesized.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, TryRecvError};

use super::call::{CallError, CallOptions, CancelReason, LeafScope};
use super::extension::{send_call, Extras};
use super::{ExtensionHandle, ExtensionHost, HostInner};
use crate::dispatcher::{Command, HostRequest};
use crate::validate::{self, HookPayload, HookResult};

/// Why an awaited session-operation hook stopped the run.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct SessionOperationError {
    /// The extension whose hook failed.
    pub extension: String,
    /// How it failed.
    pub error: CallError,
    /// The hooks that completed before it, in order: what they committed stays.
    pub completed: Vec<(String, HookResult)>,
}

impl std::fmt::Display for SessionOperationError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the session-operation hook of `{}` failed: {}",
            self.extension, self.error
        )
    }
}

impl std::error::Error for SessionOperationError {}

/// Runs one awaited hook on `extension`'s routed generation with its grant; a message
/// on (or the disconnection of) `cancel` cancels it.
fn run(
    inner: &Arc<HostInner>,
    extension: String,
    payload: &HookPayload,
    scope: &LeafScope,
    options: &CallOptions,
    default_deadline: Duration,
    cancel: Option<&Receiver<()>>,
) -> Result<HookResult, CallError> {
    let hook = payload.hook();
    if !hook.is_session_operation() {
        return Err(CallError::InvalidRequest {
            reason: format!(
                "{} is not a session-operation hook (model_turn_start, model_turn_end, \
                 session_before_compact, session_compact)",
                hook.as_str()
            ),
        });
    }
    let request = HostRequest::HookRun {
        hook: hook.as_str().to_string(),
        payload: payload.to_value(),
        session_leaf: Some(scope.clone()),
    };
    let pending = send_call(
        (inner, extension),
        request,
        options,
        default_deadline,
        Extras::default(),
        move |reply| validate::hook_output(&reply?.value, hook).map_err(CallError::InvalidResult),
    );
    let Some(cancel) = cancel else {
        return pending.wait();
    };
    let answer = pending.answer().clone();
    crossbeam_channel::select! {
        recv(answer) -> received => pending.settle(received),
        recv(cancel) -> _ => {
            pending.cancel();
            pending.wait()
        }
    }
}

impl ExtensionHandle {
    /// Runs one awaited session-operation hook (`model_turn_start`, `model_turn_end`,
    /// `session_before_compact` or `session_compact`, section 1.4b) on this extension with a private `session_leaf` grant minted in
    /// `scope`, and checks its result (no context; on a model-turn hook no deny and
    /// `session_operation` only `continue`; a compaction hook may `cancel`, and the
    /// before-hook may `replace_compaction`, a deny counting as cancel). Fails with [`CallError::NotDeclared`] unless the extension declared
    /// the hook and negotiated `session_entries` on API 0.4.
    pub fn run_session_operation_hook(
        &self,
        payload: &HookPayload,
        scope: &LeafScope,
        options: CallOptions,
    ) -> Result<HookResult, CallError> {
        let deadline = self.request_deadline();
        run(
            self.inner(),
            self.name().to_string(),
            payload,
            scope,
            &options,
            deadline,
            None,
        )
    }
}

impl ExtensionHost {
    /// Awaits the session-operation hook `payload` names on every subscriber (ready,
    /// API 0.4, `session_entries` negotiated, the hook declared), one after another in
    /// the order they were started, under one deadline for all of them (`options`, or
    /// the request deadline). Each invocation gets its own private grant in `scope`.
    /// The first failure stops the run: the error names it and what completed before.
    ///
    /// `cancel` is the run's shared cancellation: once it carries a message or is
    /// disconnected, the hook in flight is cancelled (its generation gets
    /// `$/cancelRequest`) and no later one runs; the run fails with
    /// [`CallError::Cancelled`]. What completed stays completed.
    ///
    /// ```no_run
    /// # use octet_host::host::{CallOptions, ExtensionHost, LeafScope};
    /// # use octet_host::validate::HookPayload;
    /// # fn turn(host: &ExtensionHost) {
    /// let (stop, stopped) = octet_host::channel::bounded::<()>(0);
    /// let start = HookPayload::ModelTurnStart {
    ///     run_id: "run:001".into(),
    ///     turn_index: 0,
    ///     timestamp_ms: 1_791_129_600_000,
    /// };
    /// // Dropping `stop` (say, when the person presses Esc) cancels the run.
    /// let outcome = host.session_operation_hook(&start, &LeafScope::default(), CallOptions::default(), Some(&stopped));
    /// # drop(stop);
    /// # }
    /// ```
    pub fn session_operation_hook(
        &self,
        payload: &HookPayload,
        scope: &LeafScope,
        options: CallOptions,
        cancel: Option<&Receiver<()>>,
    ) -> Result<Vec<(String, HookResult)>, Box<SessionOperationError>> {
        let hook = payload.hook();
        let total = options
            .deadline
            .unwrap_or(self.inner.shared.timeouts.request);
        let deadline = Instant::now() + total;
        let failed = |extension: String, error, completed| {
            Box::new(SessionOperationError {
                extension,
                error,
                completed,
            })
        };
        let (reply, answer) = crossbeam_channel::bounded(1);
        let command = Command::HookSubscribers { hook, reply };
        let subscribers = match self.inner.commands.send(command) {
            Ok(()) => answer.recv().unwrap_or_default(),
            Err(_) => return Err(failed(String::new(), CallError::HostShutDown, Vec::new())),
        };
        let mut completed = Vec::new();
        // A message, or the sender gone, stops the run.
        let stopped = || cancel.is_some_and(|c| !matches!(c.try_recv(), Err(TryRecvError::Empty)));
        for extension in subscribers {
            if stopped() {
                let error = CallError::Cancelled {
                    reason: CancelReason::User,
                };
                return Err(failed(extension, error, completed));
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                let error = CallError::DeadlineExceeded { after: total };
                return Err(failed(extension, error, completed));
            }
            let options = CallOptions {
                deadline: Some(left),
                progress: options.progress.clone(),
            };
            match run(
                &self.inner,
                extension.clone(),
                payload,
                scope,
                &options,
                left,
                cancel,
            ) {
                Ok(result) => completed.push((extension, result)),
                Err(error) => return Err(failed(extension, error, completed)),
            }
        }
        Ok(completed)
    }
}
