//! Starting the host request of each call kind as a selectable, cancellable job.

use crate::host::{CallOptions, CancelFlag, ExtensionHandle};
use crate::serve::calls::{FailedJob, PendingJob, TypedPending};
use crate::serve::control::CallKind;
use crate::serve::encode;

/// Starts the host request of `kind`; every kind is a [`PendingCall`], so selectable
/// and cancellable. `withdrawn` withdraws a destructive menu action's confirmation
/// while it is being asked.
///
/// [`PendingCall`]: crate::host::PendingCall
pub(super) fn start_job(
    handle: &ExtensionHandle,
    kind: CallKind,
    options: CallOptions,
    withdrawn: &CancelFlag,
) -> Box<dyn PendingJob> {
    let pending = |job: Box<dyn PendingJob>| job;
    match kind {
        CallKind::Tool { tool, arguments } => pending(Box::new(TypedPending {
            pending: handle.call_tool_async(&tool, arguments, options),
            encode: encode::tool_output,
        })),
        CallKind::Command { name, arguments } => pending(Box::new(TypedPending {
            pending: handle.execute_command_async(&name, arguments, options),
            encode: encode::command_output,
        })),
        CallKind::Hook(payload) => pending(Box::new(TypedPending {
            pending: handle.run_hook_async(payload, options),
            encode: encode::hook_output,
        })),
        CallKind::Context { prompt } => pending(Box::new(TypedPending {
            pending: handle.collect_context_async(prompt.as_deref(), options),
            encode: |c| encode::context_output(c),
        })),
        CallKind::StatusCollect { surface } => pending(Box::new(TypedPending {
            pending: handle.collect_status_async(surface, options),
            encode: |c| encode::status_output(c.as_ref()),
        })),
        CallKind::Render {
            tool,
            arguments,
            output,
            is_error,
        } => pending(Box::new(TypedPending {
            pending: handle.render_tool_async(&tool, arguments, &output, is_error, options),
            encode: encode::render_output,
        })),
        CallKind::Menu => pending(Box::new(TypedPending {
            pending: handle.collect_menu_async(options),
            encode: encode::menu_output,
        })),
        // A destructive action blocks here for its confirmation: `call` runs those
        // on a thread of their own.
        CallKind::MenuAction(item) => {
            match handle.run_menu_action_withdrawable(&item, options, withdrawn) {
                Ok(call) => pending(Box::new(TypedPending {
                    pending: call,
                    encode: encode::command_output,
                })),
                Err(error) => Box::new(FailedJob::new(error)),
            }
        }
    }
}
