//! `menu/collect` results and the fallback menu (section 1.6b).

use super::*;

// ---------------------------------------------------------------------------
// menu/collect (section 1.6b).
// ---------------------------------------------------------------------------

fn action(id: &str) -> Value {
    json!({"id": id, "label": id, "command": "cmd"})
}

fn submenu(id: &str, items: Vec<Value>) -> Value {
    json!({"id": id, "label": id, "items": items})
}

pub(super) fn top(items: Vec<Value>) -> Value {
    json!({"title": "T", "items": items})
}

pub(super) fn check_menu(result: &Value) -> Result<ExtensionMenu, ResultError> {
    menu(result, &["cmd"])
}

#[test]
fn menu_rules() {
    let cases: Vec<(&str, Value, &str, ResultErrorKind)> = vec![
        (
            "title is required",
            json!({"items": []}),
            "title",
            ResultErrorKind::Missing,
        ),
        (
            "items are required",
            json!({"title": "T"}),
            "items",
            ResultErrorKind::Missing,
        ),
        (
            "status state is closed",
            json!({"title": "T", "status": {"state": "ready", "label": "x"}, "items": []}),
            "status.state",
            ResultErrorKind::UnknownValue {
                found: "ready".into(),
                allowed: &[
                    "empty",
                    "loading",
                    "pending",
                    "active",
                    "running",
                    "succeeded",
                    "failed",
                    "cancelled",
                    "degraded",
                    "stopped",
                    "unavailable",
                ],
            },
        ),
        (
            "status label is required",
            json!({"title": "T", "status": {"state": "active"}, "items": []}),
            "status.label",
            ResultErrorKind::Missing,
        ),
        (
            "ids are required",
            top(vec![json!({"label": "x", "command": "cmd"})]),
            "items[0].id",
            ResultErrorKind::Missing,
        ),
        (
            "ids are non-empty",
            top(vec![json!({"id": "", "label": "x", "command": "cmd"})]),
            "items[0].id",
            ResultErrorKind::Empty,
        ),
        (
            "labels are required",
            top(vec![json!({"id": "a", "command": "cmd"})]),
            "items[0].label",
            ResultErrorKind::Missing,
        ),
        (
            "undeclared command",
            top(vec![
                action("a"),
                json!({"id": "b", "label": "b", "command": "rm"}),
            ]),
            "items[1].command",
            ResultErrorKind::UndeclaredCommand {
                command: "rm".into(),
            },
        ),
        (
            "undeclared command in a submenu",
            top(vec![submenu(
                "s",
                vec![json!({"id": "b", "label": "b", "command": "rm"})],
            )]),
            "items[0].items[0].command",
            ResultErrorKind::UndeclaredCommand {
                command: "rm".into(),
            },
        ),
        (
            "duplicate id on one level",
            top(vec![action("a"), submenu("a", vec![action("x")])]),
            "items[1].id",
            ResultErrorKind::DuplicateItemId { id: "a".into() },
        ),
        (
            "two recommended items on one level",
            top(vec![
                json!({"id": "a", "label": "a", "command": "cmd", "recommended": true}),
                json!({"id": "b", "label": "b", "items": [], "recommended": true}),
            ]),
            "items[1].recommended",
            ResultErrorKind::MultipleRecommended { first: "a".into() },
        ),
        (
            "submenu with arguments",
            top(vec![
                json!({"id": "s", "label": "s", "items": [], "arguments": []}),
            ]),
            "items[0].arguments",
            ResultErrorKind::SubmenuMember {
                member: "arguments",
            },
        ),
        (
            "submenu with destructive",
            top(vec![
                json!({"id": "s", "label": "s", "items": [], "destructive": false}),
            ]),
            "items[0].destructive",
            ResultErrorKind::SubmenuMember {
                member: "destructive",
            },
        ),
        (
            "item with command and items",
            top(vec![
                json!({"id": "s", "label": "s", "items": [], "command": "cmd"}),
            ]),
            "items[0]",
            ResultErrorKind::AmbiguousMenuItem,
        ),
        (
            "item with neither",
            top(vec![json!({"id": "s", "label": "s"})]),
            "items[0]",
            ResultErrorKind::MenuItemKindMissing,
        ),
        (
            "arguments are strings",
            top(vec![
                json!({"id": "a", "label": "a", "command": "cmd", "arguments": ["x", 1]}),
            ]),
            "items[0].arguments[1]",
            ResultErrorKind::WrongType {
                expected: Expected::String,
            },
        ),
        (
            "destructive is a boolean",
            top(vec![
                json!({"id": "a", "label": "a", "command": "cmd", "destructive": "yes"}),
            ]),
            "items[0].destructive",
            ResultErrorKind::WrongType {
                expected: Expected::Boolean,
            },
        ),
    ];
    for (name, result, path, kind) in cases {
        let error = check_menu(&result).expect_err(name);
        assert_eq!(error.path(), path, "{name}: {error}");
        assert_eq!(error.kind(), &kind, "{name}: {error}");
    }
}

#[test]
fn same_id_and_recommended_on_different_levels_are_fine() {
    let result = top(vec![
        json!({"id": "a", "label": "a", "command": "cmd", "recommended": true}),
        submenu(
            "s",
            vec![json!({"id": "a", "label": "a", "command": "cmd", "recommended": true})],
        ),
        submenu(
            "t",
            vec![json!({"id": "a", "label": "a", "command": "cmd", "recommended": true})],
        ),
    ]);
    let parsed = check_menu(&result).unwrap();
    assert_eq!(parsed.items.len(), 3);
}

#[test]
fn menu_depth_is_bounded_at_four_levels() {
    // Levels: items (1) > s1.items (2) > s2.items (3) > s3.items (4).
    let mut deepest = vec![action("leaf")];
    for level in (1..MAX_MENU_DEPTH).rev() {
        deepest = vec![submenu(&format!("s{level}"), deepest)];
    }
    let four = top(deepest.clone());
    assert!(check_menu(&four).is_ok());
    // One more submenu level, even an empty one, is a fifth level.
    let mut five = vec![submenu("s4", Vec::new())];
    for level in (1..MAX_MENU_DEPTH).rev() {
        five = vec![submenu(&format!("s{level}"), five)];
    }
    assert_eq!(
        expect_error(
            check_menu(&top(five)),
            "items[0].items[0].items[0].items[0].items"
        ),
        ResultErrorKind::MenuTooDeep {
            max: MAX_MENU_DEPTH
        }
    );
}

#[test]
fn menu_items_are_counted_across_levels() {
    // One submenu plus 255 actions inside it: 256 items.
    let inner: Vec<Value> = (0..MAX_MENU_ITEMS - 1)
        .map(|i| action(&format!("a{i}")))
        .collect();
    let at_limit = top(vec![submenu("s", inner.clone())]);
    assert!(check_menu(&at_limit).is_ok());
    let over = top(vec![submenu("s", inner), action("extra")]);
    assert_eq!(
        expect_error(check_menu(&over), "items[1]"),
        ResultErrorKind::TooManyMenuItems {
            max: MAX_MENU_ITEMS
        }
    );
}

#[test]
fn menu_encoding_is_bounded() {
    let huge = json!({"title": "x".repeat(MAX_MENU_BYTES), "items": []});
    assert_eq!(
        expect_error(check_menu(&huge), ""),
        ResultErrorKind::Bounds(BoundsError::TooManyBytes {
            max: MAX_MENU_BYTES
        })
    );
}

#[test]
fn fallback_is_always_a_valid_menu() {
    let names: Vec<String> = (0..300).map(|i| format!("c{i}")).collect();
    let commands: Vec<FallbackCommand> = names
        .iter()
        .map(|name| FallbackCommand {
            name,
            description: None,
        })
        .collect();
    let fallback = fallback_menu("many", &commands);
    assert_eq!(fallback.items.len(), MAX_MENU_ITEMS);
    assert_eq!(menu(&fallback.to_value(), &names).unwrap(), fallback);
}

#[test]
fn every_generic_state_is_accepted_in_menus() {
    for state in [
        "empty",
        "loading",
        "pending",
        "active",
        "running",
        "succeeded",
        "failed",
        "cancelled",
        "degraded",
        "stopped",
        "unavailable",
    ] {
        let result = json!({"title": "T", "status": {"state": state, "label": "l"}, "items": []});
        let parsed = check_menu(&result).unwrap();
        assert_eq!(parsed.status.unwrap().state.as_str(), state);
    }
}
