//! Menus returned by `menu/collect` (section 1.6b; section 4 ExtensionMenu and
//! ExtensionMenuItem).

use serde::{Deserialize, Serialize, Serializer};

/// A generic state word (section 2.5; used by menu status, section 1.6b).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    /// `"empty"`.
    Empty,
    /// `"loading"`.
    Loading,
    /// `"pending"`.
    Pending,
    /// `"active"`.
    Active,
    /// `"running"`.
    Running,
    /// `"succeeded"`.
    Succeeded,
    /// `"failed"`.
    Failed,
    /// `"cancelled"`.
    Cancelled,
    /// `"degraded"`.
    Degraded,
    /// `"stopped"`.
    Stopped,
    /// `"unavailable"`.
    Unavailable,
}

/// A menu's status line (section 1.6b).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MenuStatus {
    /// The state.
    pub state: State,
    /// A short label.
    pub label: String,
}

/// The result of `menu/collect` (section 1.6b; section 4 ExtensionMenu).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Menu {
    /// The menu's title.
    pub title: String,
    /// An optional status line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<MenuStatus>,
    /// Optional detail text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// The top-level items.
    pub items: Vec<MenuItem>,
}

impl Menu {
    /// A menu with a title and items.
    pub fn new(title: impl Into<String>, items: Vec<MenuItem>) -> Menu {
        Menu {
            title: title.into(),
            status: None,
            detail: None,
            items,
        }
    }

    /// Sets the status line.
    pub fn with_status(mut self, state: State, label: impl Into<String>) -> Menu {
        self.status = Some(MenuStatus {
            state,
            label: label.into(),
        });
        self
    }

    /// Sets the detail text.
    pub fn with_detail(mut self, detail: impl Into<String>) -> Menu {
        self.detail = Some(detail.into());
        self
    }
}

/// What a menu item does (section 1.6b): an item is either an action or a submenu.
#[derive(Clone, Debug, PartialEq)]
pub enum MenuItemKind {
    /// Runs `command/execute` with a declared command and literal arguments.
    Action {
        /// One of the extension's declared commands.
        command: String,
        /// Literal arguments.
        arguments: Vec<String>,
        /// The host confirms before running it.
        destructive: bool,
    },
    /// A nested list of items.
    Submenu {
        /// The nested items.
        items: Vec<MenuItem>,
    },
}

/// One menu entry (section 4 ExtensionMenuItem).
#[derive(Clone, Debug, PartialEq)]
pub struct MenuItem {
    /// Unique within its level.
    pub id: String,
    /// The visible label.
    pub label: String,
    /// Optional description.
    pub description: Option<String>,
    /// At most one recommended item per level.
    pub recommended: bool,
    /// Action or submenu.
    pub kind: MenuItemKind,
}

impl MenuItem {
    /// An action running `command` with `arguments`.
    pub fn action(
        id: impl Into<String>,
        label: impl Into<String>,
        command: impl Into<String>,
        arguments: Vec<String>,
    ) -> MenuItem {
        MenuItem {
            id: id.into(),
            label: label.into(),
            description: None,
            recommended: false,
            kind: MenuItemKind::Action {
                command: command.into(),
                arguments,
                destructive: false,
            },
        }
    }

    /// A submenu.
    pub fn submenu(
        id: impl Into<String>,
        label: impl Into<String>,
        items: Vec<MenuItem>,
    ) -> MenuItem {
        MenuItem {
            id: id.into(),
            label: label.into(),
            description: None,
            recommended: false,
            kind: MenuItemKind::Submenu { items },
        }
    }

    /// Sets the description.
    pub fn with_description(mut self, description: impl Into<String>) -> MenuItem {
        self.description = Some(description.into());
        self
    }

    /// Marks the item recommended.
    pub fn recommended(mut self) -> MenuItem {
        self.recommended = true;
        self
    }

    /// Marks an action destructive; a submenu cannot be destructive, so this does
    /// nothing to one.
    pub fn destructive(mut self) -> MenuItem {
        if let MenuItemKind::Action { destructive, .. } = &mut self.kind {
            *destructive = true;
        }
        self
    }
}

/// The wire shape of a [`MenuItem`]: optional members are omitted when unset.
#[derive(Serialize)]
struct MenuItemWire<'a> {
    id: &'a str,
    label: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    command: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    arguments: Option<&'a [String]>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    recommended: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    destructive: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    items: Option<&'a [MenuItem]>,
}

impl Serialize for MenuItem {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut wire = MenuItemWire {
            id: &self.id,
            label: &self.label,
            description: self.description.as_deref(),
            command: None,
            arguments: None,
            recommended: self.recommended,
            destructive: false,
            items: None,
        };
        match &self.kind {
            MenuItemKind::Action {
                command,
                arguments,
                destructive,
            } => {
                wire.command = Some(command);
                wire.arguments = Some(arguments);
                wire.destructive = *destructive;
            }
            MenuItemKind::Submenu { items } => wire.items = Some(items),
        }
        wire.serialize(serializer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sdk::output::to_value;
    use serde_json::json;

    #[test]
    fn menu_matches_section_1_6b() {
        let menu = Menu::new(
            "Computer use",
            vec![
                MenuItem::action("setup", "Set up", "computer-use", vec!["setup".into()])
                    .recommended()
                    .with_description("Install the driver"),
                MenuItem::submenu(
                    "jev",
                    "Jev (optional)",
                    vec![MenuItem::action(
                        "forget",
                        "Forget",
                        "computer-use",
                        vec!["jev".into(), "forget".into()],
                    )
                    .destructive()],
                )
                .destructive(),
            ],
        )
        .with_status(State::Pending, "Not set up");
        assert_eq!(
            to_value(&menu),
            json!({
                "title": "Computer use",
                "status": {"state": "pending", "label": "Not set up"},
                "items": [
                    {"id": "setup", "label": "Set up", "command": "computer-use",
                     "arguments": ["setup"], "recommended": true,
                     "description": "Install the driver"},
                    {"id": "jev", "label": "Jev (optional)", "items": [
                        {"id": "forget", "label": "Forget", "command": "computer-use",
                         "arguments": ["jev", "forget"], "destructive": true}
                    ]}
                ]
            })
        );
    }
}
