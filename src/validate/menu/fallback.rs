//! The generated fallback menu (section 1.6b): what the host shows instead of the
//! extension's own menu when `menu/collect` fails, times out or is rejected.

use std::collections::HashSet;

use serde_json::Value;

use crate::limits::MAX_MENU_ITEMS;
use crate::validate::ResultError;

use super::{menu, Menu, MenuItem};

/// A declared command, as the fallback menu needs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FallbackCommand<'a> {
    /// The command's name.
    pub name: &'a str,
    /// Its description, if it has one.
    pub description: Option<&'a str>,
}

/// The menu `result` when it is valid; otherwise the fallback menu for `commands` together
/// with the reason the result was rejected.
pub fn menu_or_fallback(
    result: &Value,
    extension_name: &str,
    commands: &[FallbackCommand],
) -> (Menu, Option<ResultError>) {
    let names: Vec<&str> = commands.iter().map(|command| command.name).collect();
    match menu(result, &names) {
        Ok(menu) => (menu, None),
        Err(error) => (fallback_menu(extension_name, commands), Some(error)),
    }
}

/// The generated menu used when `menu/collect` fails, times out or is rejected: titled
/// with the extension's name, one action per declared command, in order (section 1.6b).
///
/// The result always satisfies the menu rules: a repeated command name is listed once, and
/// commands past [`MAX_MENU_ITEMS`] are left out.
pub fn fallback_menu(extension_name: &str, commands: &[FallbackCommand]) -> Menu {
    let mut seen = HashSet::new();
    let items = commands
        .iter()
        .filter(|command| !command.name.is_empty() && seen.insert(command.name))
        .take(MAX_MENU_ITEMS)
        .map(|command| MenuItem::Action {
            id: command.name.to_owned(),
            label: command.name.to_owned(),
            command: command.name.to_owned(),
            arguments: Vec::new(),
            recommended: false,
            destructive: false,
            description: command.description.map(str::to_owned),
        })
        .collect();
    Menu {
        title: extension_name.to_owned(),
        status: None,
        detail: None,
        items,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fallback_lists_each_declared_command_once() {
        let commands = [
            FallbackCommand {
                name: "hello",
                description: Some("Show a greeting notification"),
            },
            FallbackCommand {
                name: "bye",
                description: None,
            },
            FallbackCommand {
                name: "hello",
                description: None,
            },
        ];
        let fallback = fallback_menu("hello-world", &commands);
        assert_eq!(fallback.title, "hello-world");
        assert_eq!(
            fallback.items,
            vec![
                MenuItem::Action {
                    id: "hello".into(),
                    label: "hello".into(),
                    command: "hello".into(),
                    arguments: Vec::new(),
                    recommended: false,
                    destructive: false,
                    description: Some("Show a greeting notification".into()),
                },
                MenuItem::Action {
                    id: "bye".into(),
                    label: "bye".into(),
                    command: "bye".into(),
                    arguments: Vec::new(),
                    recommended: false,
                    destructive: false,
                    description: None,
                },
            ]
        );
        assert_eq!(
            menu(&fallback.to_value(), &["hello", "bye"]).unwrap(),
            fallback
        );
    }
}
