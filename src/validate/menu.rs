//! The result of `menu/collect` (section 1.6b; section 4, ExtensionMenu) and the generated
//! fallback menu.
//!
//! Shape: `title` (required string), `status` (optional `{state, label}`, both required,
//! `state` from [`GenericState`]), `detail` (optional string) and `items` (required array).
//! An item with `command` is an action (`id`, `label`, `command` required; `arguments`
//! optional strings, empty when absent; `recommended` and `destructive` optional booleans,
//! false when absent; `description` optional). An item with `items` is a submenu (`id`,
//! `label`, `items` required; `recommended` and `description` optional). Ids must be
//! non-empty. Members the reference does not name are ignored.
//!
//! Rules that reject the whole menu: an action naming an undeclared command; more than
//! [`MAX_MENU_ITEMS`] items across all levels; an `items` array deeper than
//! [`MAX_MENU_DEPTH`] levels (the top level is 1, so a submenu at level 4 is refused even
//! when empty); a repeated id within one level; a second recommended item within one
//! level; a submenu carrying an `arguments` or `destructive` member at all (any non-null
//! value, `[]` and `false` included); an encoding over [`MAX_MENU_BYTES`].

use std::collections::HashSet;

use serde_json::{json, Map, Value};

use crate::limits::{MAX_MENU_BYTES, MAX_MENU_DEPTH, MAX_MENU_ITEMS};

use super::error::{excerpt, ResultError, ResultErrorKind};
use super::field::{
    as_array, as_object, as_str, keyword, member, optional_bool, optional_string, optional_strings,
    required, required_string, Object, ResultPath,
};
use super::json_bounds::{check_bounds, Bounds};
use super::path::Path;
use super::state::GenericState;

mod fallback;

pub use fallback::{fallback_menu, menu_or_fallback, FallbackCommand};

/// A validated extension menu.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExtensionMenu {
    /// The menu's title.
    pub title: String,
    /// The extension's overall state, if given.
    pub status: Option<ExtensionMenuStatus>,
    /// A longer explanation, if given.
    pub detail: Option<String>,
    /// The top-level items.
    pub items: Vec<ExtensionMenuItem>,
}

/// The `status` line of a menu.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExtensionMenuStatus {
    /// A generic state.
    pub state: GenericState,
    /// Its human label, such as "Not set up".
    pub label: String,
}

/// One menu entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExtensionMenuItem {
    /// Runs `command/execute` with a declared command and literal arguments.
    Action {
        /// Unique within its level.
        id: String,
        /// What the person sees.
        label: String,
        /// One of the extension's declared commands.
        command: String,
        /// Literal arguments.
        arguments: Vec<String>,
        /// Highlighted as the suggested choice (at most one per level).
        recommended: bool,
        /// Needs confirmation before it runs.
        destructive: bool,
        /// An optional explanation.
        description: Option<String>,
    },
    /// A nested level.
    Submenu {
        /// Unique within its level.
        id: String,
        /// What the person sees.
        label: String,
        /// The nested items.
        items: Vec<ExtensionMenuItem>,
        /// Highlighted as the suggested choice (at most one per level).
        recommended: bool,
        /// An optional explanation.
        description: Option<String>,
    },
}

impl ExtensionMenuItem {
    /// The item's id.
    pub fn id(&self) -> &str {
        match self {
            ExtensionMenuItem::Action { id, .. } | ExtensionMenuItem::Submenu { id, .. } => id,
        }
    }

    /// True when the item is the recommended one of its level.
    pub fn recommended(&self) -> bool {
        match self {
            ExtensionMenuItem::Action { recommended, .. }
            | ExtensionMenuItem::Submenu { recommended, .. } => *recommended,
        }
    }

    /// The item in wire shape; false flags, empty `arguments` and absent options are left
    /// out, so the wire form is never larger than the result it was validated from.
    pub fn to_value(&self) -> Value {
        let mut object = Map::new();
        object.insert("id".into(), Value::from(self.id()));
        match self {
            ExtensionMenuItem::Action {
                label,
                command,
                arguments,
                recommended,
                destructive,
                description,
                ..
            } => {
                object.insert("label".into(), Value::from(label.as_str()));
                object.insert("command".into(), Value::from(command.as_str()));
                if !arguments.is_empty() {
                    object.insert("arguments".into(), json!(arguments));
                }
                insert_flag(&mut object, "recommended", *recommended);
                insert_flag(&mut object, "destructive", *destructive);
                insert_option(&mut object, "description", description);
            }
            ExtensionMenuItem::Submenu {
                label,
                items,
                recommended,
                description,
                ..
            } => {
                object.insert("label".into(), Value::from(label.as_str()));
                object.insert(
                    "items".into(),
                    Value::Array(items.iter().map(ExtensionMenuItem::to_value).collect()),
                );
                insert_flag(&mut object, "recommended", *recommended);
                insert_option(&mut object, "description", description);
            }
        }
        Value::Object(object)
    }
}

impl ExtensionMenu {
    /// The menu in wire shape (section 1.6b).
    pub fn to_value(&self) -> Value {
        let mut object = Map::new();
        object.insert("title".into(), Value::from(self.title.as_str()));
        if let Some(status) = &self.status {
            object.insert(
                "status".into(),
                json!({"state": status.state.as_str(), "label": status.label}),
            );
        }
        insert_option(&mut object, "detail", &self.detail);
        object.insert(
            "items".into(),
            Value::Array(self.items.iter().map(ExtensionMenuItem::to_value).collect()),
        );
        Value::Object(object)
    }
}

fn insert_flag(object: &mut Map<String, Value>, key: &str, flag: bool) {
    if flag {
        object.insert(key.into(), Value::Bool(true));
    }
}

fn insert_option(object: &mut Map<String, Value>, key: &str, value: &Option<String>) {
    if let Some(value) = value {
        object.insert(key.into(), Value::from(value.as_str()));
    }
}

#[doc(hidden)]
/// Validates the `result` of `menu/collect` for an extension that declared
/// `declared_commands`.
pub fn menu<S: AsRef<str>>(
    result: &Value,
    declared_commands: &[S],
) -> Result<ExtensionMenu, ResultError> {
    let root = Path::Root;
    check_bounds(result, Bounds::bytes_only(MAX_MENU_BYTES))
        .map_err(|error| root.error(ResultErrorKind::Bounds(error)))?;
    let object = as_object(result, &root)?;
    let status = match member(object, "status") {
        Some(value) => {
            let path = root.key("status");
            let status = as_object(value, &path)?;
            Some(ExtensionMenuStatus {
                state: keyword(required(status, "state", &path)?, &path.key("state"))?,
                label: required_string(status, "label", &path)?,
            })
        }
        None => None,
    };
    let mut walk = MenuWalk {
        declared: declared_commands.iter().map(AsRef::as_ref).collect(),
        total: 0,
    };
    Ok(ExtensionMenu {
        title: required_string(object, "title", &root)?,
        status,
        detail: optional_string(object, "detail", &root)?,
        items: walk.level(object, &root, 1)?,
    })
}

/// State shared across the levels of one menu.
struct MenuWalk<'c> {
    declared: HashSet<&'c str>,
    total: usize,
}

impl MenuWalk<'_> {
    /// The `items` member of `parent` (at `path`), which sits at menu level `depth`.
    fn level(
        &mut self,
        parent: &Object,
        path: &Path,
        depth: usize,
    ) -> Result<Vec<ExtensionMenuItem>, ResultError> {
        let items_path = path.key("items");
        let values = as_array(required(parent, "items", path)?, &items_path)?;
        if depth > MAX_MENU_DEPTH {
            return Err(items_path.error(ResultErrorKind::MenuTooDeep {
                max: MAX_MENU_DEPTH,
            }));
        }
        let mut ids = HashSet::new();
        let mut recommended: Option<usize> = None;
        let mut items: Vec<ExtensionMenuItem> = Vec::with_capacity(values.len());
        for (index, value) in values.iter().enumerate() {
            let item_path = items_path.index(index);
            self.total += 1;
            if self.total > MAX_MENU_ITEMS {
                return Err(item_path.error(ResultErrorKind::TooManyMenuItems {
                    max: MAX_MENU_ITEMS,
                }));
            }
            let item = self.item(value, &item_path, depth)?;
            if !ids.insert(item.id().to_owned()) {
                return Err(item_path.key("id").error(ResultErrorKind::DuplicateItemId {
                    id: excerpt(item.id()),
                }));
            }
            if item.recommended() {
                if let Some(first) = recommended {
                    return Err(item_path.key("recommended").error(
                        ResultErrorKind::MultipleRecommended {
                            first: excerpt(items[first].id()),
                        },
                    ));
                }
                recommended = Some(items.len());
            }
            items.push(item);
        }
        Ok(items)
    }

    /// One item at `path` on level `depth`.
    fn item(
        &mut self,
        value: &Value,
        path: &Path,
        depth: usize,
    ) -> Result<ExtensionMenuItem, ResultError> {
        let object = as_object(value, path)?;
        let id = required_string(object, "id", path)?;
        if id.is_empty() {
            return Err(path.key("id").error(ResultErrorKind::Empty));
        }
        let label = required_string(object, "label", path)?;
        let recommended = optional_bool(object, "recommended", path, false)?;
        let description = optional_string(object, "description", path)?;
        match (member(object, "command"), member(object, "items")) {
            (Some(_), Some(_)) => Err(path.error(ResultErrorKind::AmbiguousMenuItem)),
            (None, None) => Err(path.error(ResultErrorKind::MenuItemKindMissing)),
            (Some(command), None) => {
                let command_path = path.key("command");
                let command = as_str(command, &command_path)?;
                if !self.declared.contains(command) {
                    return Err(command_path.error(ResultErrorKind::UndeclaredCommand {
                        command: excerpt(command),
                    }));
                }
                Ok(ExtensionMenuItem::Action {
                    id,
                    label,
                    command: command.to_owned(),
                    arguments: optional_strings(object, "arguments", path)?,
                    recommended,
                    destructive: optional_bool(object, "destructive", path, false)?,
                    description,
                })
            }
            (None, Some(_)) => {
                for forbidden in ["arguments", "destructive"] {
                    if member(object, forbidden).is_some() {
                        return Err(path
                            .key(forbidden)
                            .error(ResultErrorKind::SubmenuMember { member: forbidden }));
                    }
                }
                Ok(ExtensionMenuItem::Submenu {
                    id,
                    label,
                    items: self.level(object, path, depth + 1)?,
                    recommended,
                    description,
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const COMMANDS: &[&str] = &["computer-use"];

    fn reference_menu() -> Value {
        json!({
            "title": "Computer use",
            "status": {"state": "pending", "label": "Not set up"},
            "detail": "Set up installs Cua Driver and checks what your desktop needs.",
            "items": [
                {"id": "setup", "label": "Set up computer use", "command": "computer-use",
                 "arguments": ["setup"], "recommended": true,
                 "description": "Install the driver, then check permissions"},
                {"id": "jev", "label": "Jev (optional)", "items": [
                    {"id": "forget", "label": "Forget stored API key", "command": "computer-use",
                     "arguments": ["jev", "forget"], "destructive": true}
                ]}
            ]
        })
    }

    #[test]
    fn reference_example_menu() {
        let parsed = menu(&reference_menu(), COMMANDS).unwrap();
        assert_eq!(
            parsed,
            ExtensionMenu {
                title: "Computer use".into(),
                status: Some(ExtensionMenuStatus {
                    state: GenericState::Pending,
                    label: "Not set up".into()
                }),
                detail: Some(
                    "Set up installs Cua Driver and checks what your desktop needs.".into()
                ),
                items: vec![
                    ExtensionMenuItem::Action {
                        id: "setup".into(),
                        label: "Set up computer use".into(),
                        command: "computer-use".into(),
                        arguments: vec!["setup".into()],
                        recommended: true,
                        destructive: false,
                        description: Some("Install the driver, then check permissions".into()),
                    },
                    ExtensionMenuItem::Submenu {
                        id: "jev".into(),
                        label: "Jev (optional)".into(),
                        items: vec![ExtensionMenuItem::Action {
                            id: "forget".into(),
                            label: "Forget stored API key".into(),
                            command: "computer-use".into(),
                            arguments: vec!["jev".into(), "forget".into()],
                            recommended: false,
                            destructive: true,
                            description: None,
                        }],
                        recommended: false,
                        description: None,
                    },
                ],
            }
        );
    }

    #[test]
    fn to_value_round_trips() {
        let parsed = menu(&reference_menu(), COMMANDS).unwrap();
        assert_eq!(menu(&parsed.to_value(), COMMANDS).unwrap(), parsed);
        assert_eq!(parsed.to_value(), reference_menu());
    }

    /// Found by the `menu` fuzz target's invariant: `to_value` once wrote `"arguments":[]`
    /// for every action without arguments, so a menu accepted near the byte bound came
    /// back over it and its own wire form was rejected.
    #[test]
    fn to_value_of_a_menu_at_the_byte_bound_validates_again() {
        use crate::validate::json_bounds::encoded_len;

        let padded =
            |pad: usize| {
                let items: Vec<Value> = (0..MAX_MENU_ITEMS)
                .map(|index| {
                    let label = if index == 0 { "x".repeat(pad) } else { String::new() };
                    json!({"id": format!("i{index}"), "label": label, "command": "computer-use"})
                })
                .collect();
                json!({"title": "t", "items": items})
            };
        let result = padded(MAX_MENU_BYTES - encoded_len(&padded(0)));
        assert_eq!(encoded_len(&result), MAX_MENU_BYTES);
        let parsed = menu(&result, COMMANDS).unwrap();
        assert!(encoded_len(&parsed.to_value()) <= MAX_MENU_BYTES);
        assert_eq!(menu(&parsed.to_value(), COMMANDS).unwrap(), parsed);
    }

    #[test]
    fn undeclared_command_is_rejected_at_its_path() {
        let error = menu(&reference_menu(), &["other"]).unwrap_err();
        assert_eq!(error.path(), "items[0].command");
        assert_eq!(
            error.kind(),
            &ResultErrorKind::UndeclaredCommand {
                command: "computer-use".into()
            }
        );
    }

    #[test]
    fn menu_or_fallback_reports_the_rejection() {
        let commands = [FallbackCommand {
            name: "computer-use",
            description: None,
        }];
        let (chosen, error) = menu_or_fallback(&reference_menu(), "cu", &commands);
        assert!(error.is_none());
        assert_eq!(chosen.title, "Computer use");
        let (chosen, error) = menu_or_fallback(&json!({"title": "x"}), "cu", &commands);
        assert_eq!(chosen, fallback_menu("cu", &commands));
        assert_eq!(error.unwrap().path(), "items");
    }
}
