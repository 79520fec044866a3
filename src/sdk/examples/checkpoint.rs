//! `checkpoint`: a read-only checkpoint preview command (section 1.3) with a
//! `before_prompt` hook (section 1.4) and `context/collect` (section 1.5).

use std::sync::Arc;

use parking_lot::Mutex;
use serde::Deserialize;

use super::git_status;
use crate::sdk::{
    CommandOutput, ContextContribution, Extension, ExtensionNotification, HandlerError, HookOutput,
    Placement,
};

/// The `before_prompt` payload (section 1.4).
#[derive(Deserialize)]
struct BeforePrompt {
    #[serde(default)]
    prompt: String,
}

/// Command `checkpoint <label>`: a read-only preview
/// (`Checkpoint preview · <label>\n<branch> · <state>\n\n<git summary>`) with the info
/// notification "Read-only checkpoint" / "No commit or filesystem mutation was
/// performed."; -32602 without a label. Hook `before_prompt` continues and adds a
/// `system_suffix` context contribution labelled `checkpoint`; `context/collect`
/// answers one contribution naming the last previewed label.
pub fn checkpoint() -> Extension {
    let last_label: Arc<Mutex<Option<String>>> = Arc::new(Mutex::new(None));
    let remember = Arc::clone(&last_label);
    let recall = Arc::clone(&last_label);
    Extension::new()
        .command(
            "checkpoint",
            "Preview a checkpoint of the workspace without changing anything",
            Some("/checkpoint <label>"),
            move |args, cx| {
                if args.is_empty() {
                    return Err(HandlerError::invalid_params("usage: /checkpoint <label>"));
                }
                let label = args.join(" ");
                let detail = match git_status::status(cx.workspace(), false) {
                    Ok(summary) => format!(
                        "{} · {}\n\n{}",
                        summary.branch,
                        summary.state(),
                        summary.to_text(20)
                    ),
                    Err(e) => format!("no git state · {e}"),
                };
                *remember.lock() = Some(label.clone());
                Ok(
                    CommandOutput::text(format!("Checkpoint preview · {label}\n{detail}"))
                        .with_notification(ExtensionNotification::info(
                            "Read-only checkpoint",
                            "No commit or filesystem mutation was performed.",
                        )),
                )
            },
        )
        .hook("before_prompt", |payload: BeforePrompt, _cx| {
            let mut content = "Checkpoints are read-only previews: /checkpoint <label> shows \
                               what would be saved, without committing."
                .to_owned();
            if payload.prompt.contains("checkpoint") {
                content.push_str(" The person mentioned checkpoints in this prompt.");
            }
            Ok(HookOutput::continue_().with_context(
                ContextContribution::new("checkpoint", content)
                    .with_placement(Placement::SystemSuffix),
            ))
        })
        .context(move |_prompt, _cx| {
            let content = match recall.lock().as_deref() {
                Some(label) => format!("The last checkpoint preview was `{label}`."),
                None => "No checkpoint preview was taken in this process yet.".to_owned(),
            };
            Ok(vec![ContextContribution::new("checkpoint", content)])
        })
}
