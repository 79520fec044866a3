//! `menu NAME [ITEM]`: show an extension's menu, or run one of its actions attended
//! (section 1.6b).

use clap::Args;
use serde_json::json;

use super::call::{call_options, events_json, print_events};
use super::command::command_text;
use super::encode;
use super::error::CliError;
use super::output::Report;
use super::session::Session;
use super::{progress, GlobalArgs};
use crate::host::MenuOutcome;
use crate::validate::ExtensionMenuItem;

/// Arguments of `menu`.
#[derive(Debug, Args)]
pub(crate) struct MenuArgs {
    /// The extension's name
    name: String,
    /// The action to run, as its id path (`setup`, or `jev/forget` inside a submenu);
    /// without it, the menu is printed
    item: Option<String>,
    /// Deadline (`30s`, `500ms`; a plain number is milliseconds) [default: 5s to collect
    /// the menu, 30 minutes for an action]
    #[arg(long, value_name = "DURATION", value_parser = super::duration::parse)]
    timeout: Option<std::time::Duration>,
}

/// Runs `menu`.
pub(crate) fn run(global: &GlobalArgs, args: &MenuArgs) -> Result<Report, CliError> {
    let session = Session::open(global)?;
    let result = execute(&session, args, global.json);
    session.finish(result)
}

fn execute(session: &Session, args: &MenuArgs, json: bool) -> Result<Report, CliError> {
    let extension = session.start(&args.name)?;
    let call_error = |target: String| {
        let extension = args.name.clone();
        move |error| CliError::Call {
            extension,
            target,
            error: Box::new(error),
        }
    };
    let outcome =
        match extension.collect_menu(call_options(args.timeout.filter(|_| args.item.is_none()))) {
            Ok(outcome) => outcome,
            // Asking for a menu that is not declared is a usage error, with the fix.
            Err(crate::host::CallError::NotDeclared { .. }) => {
                return Err(CliError::Usage {
                    message: format!(
                    "`{}` declares no menu; to give it one, add `menu = true` to `[contributes]` \
                     in its extension.toml (API 0.2 or later, with at least one command) and \
                     answer `menu/collect`",
                    args.name
                ),
                })
            }
            Err(error) => return Err(call_error("the menu".into())(error)),
        };
    let Some(path) = &args.item else {
        let fallback = outcome.fallback_reason.as_ref().map(|r| r.to_string());
        return Ok(Report::new(
            json!({"extension": args.name, "menu": outcome.menu.to_value(), "fallback_reason": fallback}),
            menu_text(&outcome),
        ));
    };
    let item = find(&outcome.menu.items, path).ok_or_else(|| CliError::Usage {
        message: format!(
            "the menu of `{}` has no item `{path}` (ids: {})",
            args.name,
            ids(&outcome.menu.items, "").join(", ")
        ),
    })?;
    let pending = extension
        .run_menu_action_async(item, call_options(args.timeout))
        .map_err(call_error(format!("menu item `{path}`")))?;
    let (result, events) = progress::wait(session.host(), &args.name, pending);
    print_events(&events, json);
    let output = result.map_err(call_error(format!("menu item `{path}`")))?;
    Ok(Report::new(
        json!({
            "extension": args.name,
            "item": path,
            "output": encode::command_output(&output),
            "events": events_json(&events),
        }),
        command_text(&output, ""),
    ))
}

/// The item at `path` (ids joined with `/`).
fn find<'a>(items: &'a [ExtensionMenuItem], path: &str) -> Option<&'a ExtensionMenuItem> {
    let (first, rest) = match path.split_once('/') {
        Some((first, rest)) => (first, Some(rest)),
        None => (path, None),
    };
    let item = items.iter().find(|i| i.id() == first)?;
    match (item, rest) {
        (_, None) => Some(item),
        (ExtensionMenuItem::Submenu { items, .. }, Some(rest)) => find(items, rest),
        (ExtensionMenuItem::Action { .. }, Some(_)) => None,
    }
}

/// Every action's id path.
fn ids(items: &[ExtensionMenuItem], prefix: &str) -> Vec<String> {
    items
        .iter()
        .flat_map(|item| match item {
            ExtensionMenuItem::Action { id, .. } => vec![format!("{prefix}{id}")],
            ExtensionMenuItem::Submenu { id, items, .. } => ids(items, &format!("{prefix}{id}/")),
        })
        .collect()
}

/// The menu as an indented list, actions with their id paths.
fn menu_text(outcome: &MenuOutcome) -> String {
    let menu = &outcome.menu;
    let mut lines = vec![menu.title.clone()];
    if let Some(detail) = &menu.detail {
        lines.push(format!("  {detail}"));
    }
    fn walk(items: &[ExtensionMenuItem], prefix: &str, depth: usize, lines: &mut Vec<String>) {
        let indent = "  ".repeat(depth + 1);
        for item in items {
            match item {
                ExtensionMenuItem::Action {
                    id,
                    label,
                    destructive,
                    recommended,
                    ..
                } => {
                    let marks = match (*recommended, *destructive) {
                        (true, true) => " (recommended, destructive)",
                        (true, false) => " (recommended)",
                        (false, true) => " (destructive)",
                        (false, false) => "",
                    };
                    lines.push(format!("{indent}{prefix}{id}  {label}{marks}"));
                }
                ExtensionMenuItem::Submenu {
                    id, label, items, ..
                } => {
                    lines.push(format!("{indent}{label}"));
                    walk(items, &format!("{prefix}{id}/"), depth + 1, lines);
                }
            }
        }
    }
    walk(&menu.items, "", 0, &mut lines);
    if let Some(reason) = &outcome.fallback_reason {
        lines.push(format!("  (the generated fallback menu: {reason})"));
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn action(id: &str) -> ExtensionMenuItem {
        ExtensionMenuItem::Action {
            id: id.into(),
            label: id.into(),
            command: "c".into(),
            arguments: vec![],
            recommended: false,
            destructive: false,
            description: None,
        }
    }

    #[test]
    fn items_are_found_by_their_id_path() {
        let items = vec![
            action("setup"),
            ExtensionMenuItem::Submenu {
                id: "jev".into(),
                label: "Jev".into(),
                items: vec![action("forget")],
                recommended: false,
                description: None,
            },
        ];
        assert_eq!(
            find(&items, "setup").map(ExtensionMenuItem::id),
            Some("setup")
        );
        assert_eq!(
            find(&items, "jev/forget").map(ExtensionMenuItem::id),
            Some("forget")
        );
        assert!(find(&items, "setup/x").is_none());
        assert!(find(&items, "nope").is_none());
        assert_eq!(ids(&items, ""), ["setup", "jev/forget"]);
    }
}
