//! The generated fallback menu (section 1.6b): what the host shows instead of the
//! extension's own menu when `menu/collect` fails, times out or is rejected.

use std::collections::HashSet;

use serde_json::Value;

use crate::limits::{MAX_MENU_BYTES, MAX_MENU_ITEMS};
use crate::validate::{encoded_len, ResultError};

use super::{menu, ExtensionMenu, ExtensionMenuItem};

/// A declared command, as the fallback menu needs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FallbackCommand<'a> {
    /// The command's name.
    pub name: &'a str,
    /// Its description, if it has one.
    pub description: Option<&'a str>,
}

#[doc(hidden)]
/// The menu `result` when it is valid; otherwise the fallback menu for `commands` together
/// with the reason the result was rejected.
pub fn menu_or_fallback(
    result: &Value,
    extension_name: &str,
    commands: &[FallbackCommand],
) -> (ExtensionMenu, Option<ResultError>) {
    let names: Vec<&str> = commands.iter().map(|command| command.name).collect();
    match menu(result, &names) {
        Ok(menu) => (menu, None),
        Err(error) => (fallback_menu(extension_name, commands), Some(error)),
    }
}

#[doc(hidden)]
/// The generated menu used when `menu/collect` fails, times out or is rejected: titled
/// with the extension's name, one action per declared command, in order (section 1.6b).
///
/// The result always satisfies the menu rules: a repeated command name is listed once,
/// commands past [`MAX_MENU_ITEMS`] are left out, and the encoding stays within
/// [`MAX_MENU_BYTES`]. To fit, whole descriptions are dropped first, from the last item
/// backwards, so every command stays listed while the names alone fit; then whole items
/// from the end; last, a title too large on its own is clipped at a character boundary.
pub fn fallback_menu(extension_name: &str, commands: &[FallbackCommand]) -> ExtensionMenu {
    let mut seen = HashSet::new();
    let items = commands
        .iter()
        .filter(|command| !command.name.is_empty() && seen.insert(command.name))
        .take(MAX_MENU_ITEMS)
        .map(|command| ExtensionMenuItem::Action {
            id: command.name.to_owned(),
            label: command.name.to_owned(),
            command: command.name.to_owned(),
            arguments: Vec::new(),
            recommended: false,
            destructive: false,
            description: command.description.map(str::to_owned),
        })
        .collect();
    let mut menu = ExtensionMenu {
        title: extension_name.to_owned(),
        status: None,
        detail: None,
        items,
    };
    fit_fallback(&mut menu);
    menu
}

/// Shrinks a fallback `menu` (title and actions only) until its encoding is at most
/// [`MAX_MENU_BYTES`], changing nothing when it already fits.
///
/// Descriptions are dropped whole rather than clipped, because a clipped description can
/// say something else than the whole one, and they go before any action because they are
/// optional while each action is a command the person can run. Real manifests never get
/// past the descriptions (command names are short identifiers, the extension name too),
/// but the function takes any text, so items and then the title follow.
fn fit_fallback(menu: &mut ExtensionMenu) {
    let mut sizes: Vec<usize> = menu
        .items
        .iter()
        .map(|item| encoded_len(&item.to_value()))
        .collect();
    let items = std::mem::take(&mut menu.items);
    let frame = encoded_len(&menu.to_value());
    menu.items = items;
    // The items' array adds each item's encoding and a comma between two items.
    let mut total = frame + sizes.iter().sum::<usize>() + sizes.len().saturating_sub(1);
    for (item, size) in menu.items.iter_mut().zip(sizes.iter_mut()).rev() {
        if total <= MAX_MENU_BYTES {
            return;
        }
        if let ExtensionMenuItem::Action { description, .. } = item {
            if description.take().is_some() {
                let bare = encoded_len(&item.to_value());
                total -= *size - bare;
                *size = bare;
            }
        }
    }
    while total > MAX_MENU_BYTES {
        let Some(size) = sizes.pop() else { break };
        menu.items.pop();
        total -= size + usize::from(!sizes.is_empty());
    }
    if total > MAX_MENU_BYTES {
        // Only the title is left; everything around it encodes to a fixed size.
        let around = frame - encoded_len(&Value::from(menu.title.as_str()));
        menu.title = longest_prefix_encoding_within(&menu.title, MAX_MENU_BYTES - around);
    }
}

/// The longest prefix of `text`, cut at a character boundary, whose JSON string encoding
/// (quotes and escapes included) is at most `max` bytes.
fn longest_prefix_encoding_within(text: &str, max: usize) -> String {
    let floor = |mut end: usize| {
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        end
    };
    let fits = |end: usize| encoded_len(&Value::from(&text[..floor(end)])) <= max;
    // A longer prefix never encodes shorter, so bisect on its length: `fits(low)` holds
    // throughout, and `fits(high)` does not (or `high` is past the end).
    let (mut low, mut high) = (0, text.len() + 1);
    while high - low > 1 {
        let middle = low + (high - low) / 2;
        if fits(middle) {
            low = middle;
        } else {
            high = middle;
        }
    }
    text[..floor(low)].to_owned()
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
                ExtensionMenuItem::Action {
                    id: "hello".into(),
                    label: "hello".into(),
                    command: "hello".into(),
                    arguments: Vec::new(),
                    recommended: false,
                    destructive: false,
                    description: Some("Show a greeting notification".into()),
                },
                ExtensionMenuItem::Action {
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

    /// `count` distinct command names `c0…`, each padded with zeros to `name_bytes`.
    fn declared(count: usize, name_bytes: usize) -> Vec<String> {
        (0..count)
            .map(|index| format!("c{index:0>width$}", width = name_bytes - 1))
            .collect()
    }

    fn fallback_commands<'a>(
        names: &'a [String],
        description: Option<&'a str>,
    ) -> Vec<FallbackCommand<'a>> {
        names
            .iter()
            .map(|name| FallbackCommand { name, description })
            .collect()
    }

    fn description_of(item: &ExtensionMenuItem) -> Option<&str> {
        match item {
            ExtensionMenuItem::Action { description, .. }
            | ExtensionMenuItem::Submenu { description, .. } => description.as_deref(),
        }
    }

    /// Found by fuzzing: 256 commands with ~4 KiB descriptions gave a fallback over
    /// `MAX_MENU_BYTES`, which `menu` rejects. The descriptions mix characters that JSON
    /// escapes and multi-byte ones, so encoded size and text size differ.
    #[test]
    fn fallback_of_the_worst_case_drops_descriptions_from_the_end_until_it_fits() {
        use crate::limits::MAX_CONTRIBUTION_NAME_BYTES;

        let names = declared(MAX_MENU_ITEMS + 8, MAX_CONTRIBUTION_NAME_BYTES);
        let description = "\"é\u{1}".repeat(4096 / 4);
        let commands = fallback_commands(&names, Some(&description));
        let fallback = fallback_menu("many", &commands);

        assert_eq!(fallback.items.len(), MAX_MENU_ITEMS);
        let wire = fallback.to_value();
        assert!(encoded_len(&wire) <= MAX_MENU_BYTES);
        assert_eq!(menu(&wire, &names).unwrap(), fallback);

        // Descriptions are kept whole on a prefix of the items and dropped after it.
        let kept = fallback
            .items
            .iter()
            .take_while(|item| description_of(item).is_some())
            .count();
        assert!(kept > 0 && kept < MAX_MENU_ITEMS, "kept {kept}");
        for item in &fallback.items[..kept] {
            assert_eq!(description_of(item), Some(description.as_str()));
        }
        for item in &fallback.items[kept..] {
            assert_eq!(description_of(item), None);
        }
        // No more was dropped than needed: one description back and it is too large.
        let mut one_more = fallback.clone();
        if let ExtensionMenuItem::Action {
            description: slot, ..
        } = &mut one_more.items[kept]
        {
            *slot = Some(description.clone());
        }
        assert!(encoded_len(&one_more.to_value()) > MAX_MENU_BYTES);
    }

    #[test]
    fn fallback_drops_items_from_the_end_when_the_names_alone_are_too_large() {
        let names = declared(MAX_MENU_ITEMS, 2048);
        let commands = fallback_commands(&names, Some("described"));
        let fallback = fallback_menu("long-names", &commands);

        let wire = fallback.to_value();
        assert!(encoded_len(&wire) <= MAX_MENU_BYTES);
        assert_eq!(menu(&wire, &names).unwrap(), fallback);
        let kept = fallback.items.len();
        assert!(kept > 0 && kept < MAX_MENU_ITEMS, "kept {kept}");
        for (item, name) in fallback.items.iter().zip(&names) {
            assert_eq!(item.id(), name);
            assert_eq!(description_of(item), None);
        }
        // No more was dropped than needed: the next command back and it is too large.
        let mut one_more = fallback.clone();
        one_more.items.push(ExtensionMenuItem::Action {
            id: names[kept].clone(),
            label: names[kept].clone(),
            command: names[kept].clone(),
            arguments: Vec::new(),
            recommended: false,
            destructive: false,
            description: None,
        });
        assert!(encoded_len(&one_more.to_value()) > MAX_MENU_BYTES);
    }

    #[test]
    fn fallback_clips_a_title_too_large_on_its_own_at_a_character_boundary() {
        let title = "é\u{1}".repeat(MAX_MENU_BYTES / 4);
        let commands = [FallbackCommand {
            name: "hello",
            description: None,
        }];
        let fallback = fallback_menu(&title, &commands);

        let wire = fallback.to_value();
        assert!(encoded_len(&wire) <= MAX_MENU_BYTES);
        assert_eq!(menu(&wire, &["hello"]).unwrap(), fallback);
        assert!(fallback.items.is_empty());
        assert!(!fallback.title.is_empty());
        assert!(title.starts_with(&fallback.title));
        // No more was clipped than needed: one character back and it is too large.
        let next = title[fallback.title.len()..].chars().next().unwrap();
        let mut one_more = fallback.clone();
        one_more.title.push(next);
        assert!(encoded_len(&one_more.to_value()) > MAX_MENU_BYTES);
    }
}
