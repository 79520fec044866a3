//! The handle to one started extension and its typed host-to-extension methods.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::call::{CallError, CallId, CallOptions, CallReply, PendingCall, RawResult};
use super::{HostInner, ShutdownReport, StartedExtension};
use crate::dispatcher::{CallRequest, Command, HostRequest};
use crate::limits::MENU_COLLECT_DEADLINE;
use crate::manifest::UiSurface;
use crate::model::notify::{BoundNotification, NotifyError};
use crate::validate::{
    self, CommandResult, ContextContribution, ExtensionMenu, FallbackCommand, HookAdvice,
    HookPayload, HookResult, RenderOutput, ResultError, StatusContribution, ToolResult,
};

/// A handle to a started extension. Cheap to clone; usable from any thread.
///
/// Calls go to the extension's current generation. Every method has a blocking form
/// and an `_async` form returning a [`PendingCall`].
#[derive(Clone)]
pub struct ExtensionHandle {
    info: Arc<StartedExtension>,
    inner: Arc<HostInner>,
}

impl std::fmt::Debug for ExtensionHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExtensionHandle")
            .field("name", &self.info.name)
            .field("generation", &self.info.generation)
            .finish_non_exhaustive()
    }
}

/// The result of [`ExtensionHandle::collect_menu`]: the menu to show, and why the generated
/// fallback was used instead of the extension's own menu, if it was (section 1.6b).
#[derive(Clone, Debug, PartialEq)]
pub struct MenuOutcome {
    /// The menu to show.
    pub menu: ExtensionMenu,
    /// Why the extension's menu was replaced by one entry per declared command.
    pub fallback_reason: Option<MenuFallbackReason>,
}

/// Why the generated fallback menu was used.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum MenuFallbackReason {
    /// The call failed (including the 5-second deadline).
    Call(CallError),
    /// The menu broke a rule of section 1.6b.
    Invalid(ResultError),
}

impl std::fmt::Display for MenuFallbackReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MenuFallbackReason::Call(error) => write!(f, "menu/collect failed: {error}"),
            MenuFallbackReason::Invalid(error) => write!(f, "the menu broke a rule: {error}"),
        }
    }
}

/// What only some host requests carry.
#[derive(Default)]
pub(super) struct Extras {
    /// The first `confirmation/request` is answered yes without asking (section 1.6b).
    pub preapproved: bool,
    /// Where a `provider/stream`'s events go.
    pub stream: Option<crossbeam_channel::Sender<crate::validate::host_driven::ProviderEvent>>,
}

impl ExtensionHandle {
    /// The host's command channel, for handles that outlive a call (provider streams).
    pub(super) fn commands(&self) -> &crossbeam_channel::Sender<Command> {
        &self.inner.commands
    }

    pub(crate) fn new(info: Arc<StartedExtension>, inner: Arc<HostInner>) -> ExtensionHandle {
        ExtensionHandle { info, inner }
    }

    /// The extension's name.
    pub fn name(&self) -> &str {
        &self.info.name
    }

    /// The host this handle calls through.
    pub(super) fn inner(&self) -> &Arc<HostInner> {
        &self.inner
    }

    /// What `initialize` settled for the generation this handle was started with.
    pub fn info(&self) -> &StartedExtension {
        &self.info
    }

    /// The tools the extension offers now ([`ToolCatalog`](crate::model::catalog::ToolCatalog)), or `None` while no
    /// generation of it is routed (stopped, restarting, parked). Unlike
    /// [`ExtensionHandle::info`], which describes the generation this handle started, this
    /// follows restarts, reloads and `tools/register`.
    pub fn tools(&self) -> Option<crate::model::catalog::ToolCatalog> {
        let (reply, answer) = crossbeam_channel::bounded(1);
        let command = Command::Tools {
            extension: self.info.name.clone(),
            reply,
        };
        self.inner.commands.send(command).ok()?;
        answer.recv().ok().flatten()
    }

    /// Sends a Wave-1 notification (section 1.11) to the extension's current
    /// generation. Refused, with nothing sent, when its feature was not negotiated,
    /// when a payload breaks a bound, or when a shortcut was not admitted by this
    /// generation; the host also reports the refusal as a diagnostic.
    pub fn notify(&self, notification: BoundNotification) -> Result<(), NotifyError> {
        self.send_notify(None, notification)
    }

    /// Takes the terminal grant back (section 2.24): the holder receives
    /// `terminal/grant-lost {"reason"}` and the grant ends at once. Refused unless this
    /// extension's current generation holds the live grant, or when `reason` is over
    /// [`crate::limits::MAX_GRANT_LOST_REASON_BYTES`]. Restore the terminal after.
    pub fn revoke_terminal(&self, reason: &str) -> Result<(), NotifyError> {
        self.notify(BoundNotification::TerminalGrantLost {
            reason: reason.to_string(),
        })
    }

    /// Like [`ExtensionHandle::notify`], refused unless `generation` is the current
    /// one: for a caller that learned a shortcut or message from one generation.
    pub fn notify_generation(
        &self,
        generation: u64,
        notification: BoundNotification,
    ) -> Result<(), NotifyError> {
        self.send_notify(Some(generation), notification)
    }

    /// Sends `shortcut/trigger {"id"}` (sections 1.11 and 2.20): only a shortcut the
    /// current generation registered inside `initialize` and the bound
    /// [`ShortcutService`](crate::services::bound::ShortcutService) admitted is
    /// triggered; any other id fails closed.
    pub fn trigger_shortcut(&self, id: &str) -> Result<(), NotifyError> {
        self.notify(BoundNotification::ShortcutTrigger { id: id.into() })
    }

    /// Adds an assistant-message delta. The host coalesces deltas into
    /// `message/updated` batches (at 4,096 bytes, 64 deltas or 50 ms, section 1.11);
    /// needs the negotiated `message_injection`.
    pub fn message_delta(&self, message_id: &str, delta: &str) -> Result<(), NotifyError> {
        self.notify(BoundNotification::MessageDeltas {
            message_id: message_id.into(),
            deltas: vec![delta.into()],
        })
    }

    /// The message settled: its last `message/updated` batch is sent now.
    pub fn message_settled(&self, message_id: &str) -> Result<(), NotifyError> {
        self.notify(BoundNotification::MessageSettled {
            message_id: message_id.into(),
        })
    }

    fn send_notify(
        &self,
        generation: Option<u64>,
        notification: BoundNotification,
    ) -> Result<(), NotifyError> {
        let not_running = || NotifyError::NotRunning {
            extension: self.info.name.clone(),
        };
        let (reply, answer) = crossbeam_channel::bounded(1);
        let command = Command::Notify {
            extension: self.info.name.clone(),
            generation,
            notification,
            reply,
        };
        self.inner
            .commands
            .send(command)
            .map_err(|_| not_running())?;
        answer.recv().map_err(|_| not_running())?
    }

    /// The deadline of a call that sets none (the builder's `request_deadline`).
    pub(super) fn request_deadline(&self) -> Duration {
        self.inner.shared.timeouts.request
    }

    /// The frontend the host asks confirmations and input of.
    pub(super) fn frontend(&self) -> &Arc<dyn super::Frontend> {
        &self.inner.shared.frontend
    }

    /// Calls a model tool (`tool/call`, section 1.2) and waits for the validated result.
    pub fn call_tool(
        &self,
        name: &str,
        arguments: Value,
        options: CallOptions,
    ) -> Result<ToolResult, CallError> {
        self.call_tool_async(name, arguments, options).wait()
    }

    /// Calls a model tool without waiting.
    pub fn call_tool_async(
        &self,
        name: &str,
        arguments: Value,
        options: CallOptions,
    ) -> PendingCall<ToolResult> {
        let tool = name.to_string();
        let request = HostRequest::ToolCall {
            name: name.to_string(),
            arguments,
        };
        self.request(request, &options, self.request_deadline(), move |raw| {
            raw.tool_output(&tool)
        })
    }

    /// Runs a slash command (`command/execute`, section 1.3).
    pub fn execute_command(
        &self,
        name: &str,
        arguments: Vec<String>,
        options: CallOptions,
    ) -> Result<CommandResult, CallError> {
        self.execute_command_async(name, arguments, options).wait()
    }

    /// Runs a slash command without waiting.
    pub fn execute_command_async(
        &self,
        name: &str,
        arguments: Vec<String>,
        options: CallOptions,
    ) -> PendingCall<CommandResult> {
        let request = HostRequest::CommandExecute {
            name: name.to_string(),
            arguments,
        };
        self.request(request, &options, self.request_deadline(), |raw| {
            validate::command_output(&raw.value).map_err(CallError::InvalidResult)
        })
    }

    /// Runs a lifecycle hook (`hook/run`, section 1.4).
    pub fn run_hook(
        &self,
        payload: HookPayload,
        options: CallOptions,
    ) -> Result<HookResult, CallError> {
        self.run_hook_async(payload, options).wait()
    }

    /// Runs a lifecycle hook without waiting.
    pub fn run_hook_async(
        &self,
        payload: HookPayload,
        options: CallOptions,
    ) -> PendingCall<HookResult> {
        let hook = payload.hook();
        if let HookPayload::PostMutation(mutation) = &payload {
            if let Err(reason) = mutation.check() {
                return failed_call(self.inner(), CallError::InvalidRequest { reason });
            }
        }
        let request = HostRequest::HookRun {
            hook: hook.as_str().to_string(),
            payload: payload.to_value(),
            // A session-operation hook always carries its private grant (section 1.4b).
            session_leaf: hook
                .is_session_operation()
                .then(crate::model::call::LeafScope::default),
        };
        // `before_persistence` and `post_mutation` have one fixed deadline each
        // (SUPPLEMENT "API 0.2 typed hooks"); a shorter one of the caller's stands.
        let mut options = options;
        if let Some(fixed) = validate::hook_advice::fixed_deadline(hook) {
            options.deadline = Some(options.deadline.map_or(fixed, |d| d.min(fixed)));
        }
        let inner = self.inner().clone();
        self.request(request, &options, self.request_deadline(), move |raw| {
            let mut output = validate::hook::hook_output_for(&raw.value, &payload)
                .map_err(CallError::InvalidResult)?;
            // A run's retries get at most 5 s added by advice in all.
            if let (HookPayload::ProviderRetry(retry), Some(HookAdvice::ProviderRetry(advice))) =
                (&payload, &mut output.advice)
            {
                *advice = inner
                    .shared
                    .retry_budget
                    .lock()
                    .grant(&retry.run_id, advice.clone());
            }
            Ok(output)
        })
    }

    /// Collects prompt context (`context/collect`, section 1.5).
    pub fn collect_context(
        &self,
        prompt: Option<&str>,
        options: CallOptions,
    ) -> Result<Vec<ContextContribution>, CallError> {
        self.collect_context_async(prompt, options).wait()
    }

    /// Collects prompt context without waiting.
    pub fn collect_context_async(
        &self,
        prompt: Option<&str>,
        options: CallOptions,
    ) -> PendingCall<Vec<ContextContribution>> {
        let request = HostRequest::ContextCollect {
            prompt: prompt.map(str::to_string),
        };
        self.request(request, &options, self.request_deadline(), |raw| {
            validate::context_collect(&raw.value).map_err(CallError::InvalidResult)
        })
    }

    /// Collects a status, header or footer contribution (`status/collect`, section 1.6).
    pub fn collect_status(
        &self,
        surface: UiSurface,
        options: CallOptions,
    ) -> Result<Option<StatusContribution>, CallError> {
        self.collect_status_async(surface, options).wait()
    }

    /// Collects a status, header or footer contribution without waiting.
    pub fn collect_status_async(
        &self,
        surface: UiSurface,
        options: CallOptions,
    ) -> PendingCall<Option<StatusContribution>> {
        let request = HostRequest::StatusCollect { surface };
        self.request(request, &options, self.request_deadline(), move |raw| {
            validate::status_collect(&raw.value, surface).map_err(CallError::InvalidResult)
        })
    }

    /// Asks for renderer output for a tool call (`tool/render`, section 1.7).
    pub fn render_tool(
        &self,
        name: &str,
        arguments: Value,
        output: &str,
        is_error: bool,
        options: CallOptions,
    ) -> Result<RenderOutput, CallError> {
        self.render_tool_async(name, arguments, output, is_error, options)
            .wait()
    }

    /// Asks for renderer output for a tool call without waiting.
    pub fn render_tool_async(
        &self,
        name: &str,
        arguments: Value,
        output: &str,
        is_error: bool,
        options: CallOptions,
    ) -> PendingCall<RenderOutput> {
        let request = HostRequest::ToolRender {
            name: name.to_string(),
            arguments,
            output: output.to_string(),
            is_error,
        };
        self.request(request, &options, self.request_deadline(), |raw| {
            validate::render_output(&raw.value).map_err(CallError::InvalidResult)
        })
    }

    /// Pulls the extension's menu (`menu/collect`, section 1.6b). The host waits at
    /// most 5 seconds (or `options.deadline`); when the call fails or the menu breaks a
    /// rule, the generated fallback (one entry per declared command) is returned
    /// together with the reason.
    pub fn collect_menu(&self, options: CallOptions) -> Result<MenuOutcome, CallError> {
        self.collect_menu_async(options).wait()
    }

    /// [`ExtensionHandle::collect_menu`] without blocking: the returned call settles with
    /// the menu or the fallback, and cancelling it yields the fallback too.
    pub fn collect_menu_async(&self, options: CallOptions) -> PendingCall<MenuOutcome> {
        let info = self.info.clone();
        let fallback = move || {
            let commands: Vec<FallbackCommand<'_>> = info
                .negotiated
                .commands
                .iter()
                .map(|c| FallbackCommand {
                    name: &c.name,
                    description: Some(&c.description),
                })
                .collect();
            validate::fallback_menu(&info.name, &commands)
        };
        let declared: Vec<String> = (self.info.negotiated.commands.iter())
            .map(|c| c.name.clone())
            .collect();
        self.request_settled(
            HostRequest::MenuCollect,
            &options,
            MENU_COLLECT_DEADLINE,
            move |reply| match reply.map(|raw| validate::menu(&raw.value, &declared)) {
                Ok(Ok(menu)) => Ok(MenuOutcome {
                    menu,
                    fallback_reason: None,
                }),
                Ok(Err(e)) => Ok(MenuOutcome {
                    menu: fallback(),
                    fallback_reason: Some(MenuFallbackReason::Invalid(e)),
                }),
                Err(
                    e @ (CallError::NotStarted { .. }
                    | CallError::NotDeclared { .. }
                    | CallError::HostShutDown),
                ) => Err(e),
                Err(e) => Ok(MenuOutcome {
                    menu: fallback(),
                    fallback_reason: Some(MenuFallbackReason::Call(e)),
                }),
            },
        )
    }

    /// Reloads this extension candidate-first (see [`ExtensionHost::reload`]); this
    /// handle keeps working and its calls go to the new generation.
    ///
    /// [`ExtensionHost::reload`]: super::ExtensionHost::reload
    pub fn reload(&self) -> Result<StartedExtension, super::StartError> {
        super::start::reload(&self.inner, &self.info.name)
    }

    /// Shuts this extension down (section 1.8) and waits until its process is gone.
    pub fn shutdown(&self) -> Option<ShutdownReport> {
        let (reply, answer) = crossbeam_channel::bounded(1);
        let command = Command::Stop {
            extension: self.info.name.clone(),
            reply,
        };
        if self.inner.commands.send(command).is_err() {
            return None;
        }
        answer.recv().ok().flatten()
    }

    fn request<T: 'static>(
        &self,
        request: HostRequest,
        options: &CallOptions,
        default_deadline: Duration,
        convert: impl FnOnce(RawResult) -> Result<T, CallError> + Send + 'static,
    ) -> PendingCall<T> {
        self.request_settled(request, options, default_deadline, move |reply| {
            reply.and_then(convert)
        })
    }

    /// [`ExtensionHandle::request`] with a conversion that sees failures too.
    fn request_settled<T: 'static>(
        &self,
        request: HostRequest,
        options: &CallOptions,
        default_deadline: Duration,
        convert: impl FnOnce(CallReply) -> Result<T, CallError> + Send + 'static,
    ) -> PendingCall<T> {
        self.send_request(
            request,
            options,
            default_deadline,
            Extras::default(),
            convert,
        )
    }

    /// Sends a host request with what only some requests carry ([`Extras`]).
    pub(super) fn send_request<T: 'static>(
        &self,
        request: HostRequest,
        options: &CallOptions,
        default_deadline: Duration,
        extras: Extras,
        convert: impl FnOnce(CallReply) -> Result<T, CallError> + Send + 'static,
    ) -> PendingCall<T> {
        let target = (self.inner(), self.info.name.clone());
        send_call(target, request, options, default_deadline, extras, convert)
    }
}

/// A call that failed before anything was sent: `error` is its outcome.
pub(super) fn failed_call<T: 'static>(inner: &Arc<HostInner>, error: CallError) -> PendingCall<T> {
    let call = CallId(inner.next_call.fetch_add(1, Ordering::Relaxed));
    let (reply, answer) = crossbeam_channel::bounded(1);
    let _ = reply.send(Err(error));
    PendingCall::new(
        call,
        answer,
        inner.commands.clone(),
        inner.shared.spin_before_sleep,
        Box::new(|reply: crate::model::call::CallReply| {
            Err(reply.err().unwrap_or(CallError::HostShutDown))
        }),
    )
}

/// Sends a host request to the routed generation of `extension`.
pub(super) fn send_call<T: 'static>(
    (inner, extension): (&Arc<HostInner>, String),
    request: HostRequest,
    options: &CallOptions,
    default_deadline: Duration,
    extras: Extras,
    convert: impl FnOnce(CallReply) -> Result<T, CallError> + Send + 'static,
) -> PendingCall<T> {
    let call = CallId(inner.next_call.fetch_add(1, Ordering::Relaxed));
    let (reply, answer) = crossbeam_channel::bounded(1);
    let command = Command::Call(Box::new(CallRequest {
        preapproved: extras.preapproved,
        stream: extras.stream,
        relay: None,
        call,
        extension,
        request,
        deadline: options.deadline.unwrap_or(default_deadline),
        progress: options.progress.clone(),
        reply: crate::dispatcher::ReplyTo::Caller(reply.clone()),
    }));
    if inner.commands.send(command).is_err() {
        let _ = reply.send(Err(CallError::HostShutDown));
    }
    PendingCall::new(
        call,
        answer,
        inner.commands.clone(),
        inner.shared.spin_before_sleep,
        Box::new(convert),
    )
}
