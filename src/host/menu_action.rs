//! Running a menu action the way section 1.6b says: attended, confirmed when
//! destructive, with its own first confirmation pre-approved.

use super::call::{CallError, CallOptions, CancelReason, PendingCall};
use super::extension::{ExtensionHandle, Extras};
use super::frontend::{CancelFlag, ConfirmationRequest};
use super::GenerationRef;
use crate::dispatcher::HostRequest;
use crate::limits::ATTENDED_MENU_ACTION_DEADLINE;
use crate::validate::{self, CommandResult, ExtensionMenuItem};

impl ExtensionHandle {
    /// Runs a menu action (section 1.6b) and waits for it: see
    /// [`ExtensionHandle::run_menu_action_async`].
    pub fn run_menu_action(
        &self,
        item: &ExtensionMenuItem,
        options: CallOptions,
    ) -> Result<CommandResult, CallError> {
        self.run_menu_action_async(item, options)?.wait()
    }

    /// Runs a menu action as section 1.6b says a person's choice runs:
    ///
    /// - `command/execute` with the item's command and its literal arguments; the
    ///   command must be one the extension declared ([`CallError::NotDeclared`]), and
    ///   a submenu is no action ([`CallError::InvalidRequest`]);
    /// - a destructive item is confirmed first through the host's
    ///   [`crate::host::Frontend`], on this thread, before anything is sent
    ///   ([`CallError::Declined`] when the person says no or nobody can be asked);
    ///   the action's own first `confirmation/request` is then answered yes without
    ///   asking again;
    /// - its progress, confirmations and input reach the frontend and the progress
    ///   sink like any call's, and the returned call can be cancelled;
    /// - its deadline is the attended one, [`ATTENDED_MENU_ACTION_DEADLINE`] (30
    ///   minutes), unless `options` sets one.
    pub fn run_menu_action_async(
        &self,
        item: &ExtensionMenuItem,
        options: CallOptions,
    ) -> Result<PendingCall<CommandResult>, CallError> {
        self.run_menu_action_withdrawable(item, options, &CancelFlag::default())
    }

    /// [`ExtensionHandle::run_menu_action_async`] whose confirmation can be withdrawn:
    /// when `withdrawn` is set while the person is still being asked, the frontend may
    /// close its question, nothing is sent, and the call fails with
    /// [`CallError::Cancelled`] (reason `user`).
    pub(crate) fn run_menu_action_withdrawable(
        &self,
        item: &ExtensionMenuItem,
        options: CallOptions,
        withdrawn: &CancelFlag,
    ) -> Result<PendingCall<CommandResult>, CallError> {
        let ExtensionMenuItem::Action {
            label,
            command,
            arguments,
            destructive,
            description,
            ..
        } = item
        else {
            return Err(CallError::InvalidRequest {
                reason: format!("menu item `{}` is a submenu, not an action", item.id()),
            });
        };
        let info = self.info();
        if !info.negotiated.commands.iter().any(|c| &c.name == command) {
            return Err(CallError::NotDeclared {
                kind: "command",
                name: command.clone(),
            });
        }
        if *destructive {
            let confirmed = self.confirm_destructive(label, description.as_deref(), withdrawn);
            if withdrawn.is_cancelled() {
                return Err(CallError::Cancelled {
                    reason: CancelReason::User,
                });
            }
            if !confirmed {
                return Err(CallError::Declined {
                    action: label.clone(),
                });
            }
        }
        let request = HostRequest::CommandExecute {
            name: command.clone(),
            arguments: arguments.clone(),
        };
        Ok(self.send_request(
            request,
            &options,
            ATTENDED_MENU_ACTION_DEADLINE,
            Extras {
                preapproved: *destructive,
                ..Extras::default()
            },
            |reply| {
                reply.and_then(|raw| {
                    validate::command_output(&raw.value).map_err(CallError::InvalidResult)
                })
            },
        ))
    }

    /// Asks the frontend to confirm a destructive action; false when it declines or
    /// cannot ask.
    fn confirm_destructive(
        &self,
        label: &str,
        description: Option<&str>,
        withdrawn: &CancelFlag,
    ) -> bool {
        let frontend = self.frontend();
        if !frontend.is_interactive() {
            return false;
        }
        let info = self.info();
        frontend.confirm(ConfirmationRequest {
            source: GenerationRef {
                extension: info.name.clone(),
                generation: info.generation,
            },
            prompt: format!("Run \u{201c}{label}\u{201d}? It cannot be undone."),
            detail: description.map(str::to_string),
            destructive: true,
            default: false,
            cancelled: withdrawn.clone(),
        })
    }
}
