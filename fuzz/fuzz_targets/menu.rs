//! `validate::menu` (section 1.6b) on arbitrary JSON, with a fixed declared-command list.
//!
//! The input is one JSON document (inputs that are not JSON are skipped).
//!
//! Invariants: it never panics, nor does an error's `Display`; an accepted menu obeys
//! the menu rules (declared commands only, at most 256 items over at most 4 levels,
//! unique ids and at most one recommended item per level); its wire form
//! (`ExtensionMenu::to_value`) validates again to the same menu; `menu_or_fallback` agrees with
//! `menu`, and its fallback is itself a valid menu.

#![no_main]

use std::collections::HashSet;

use libfuzzer_sys::fuzz_target;
use octet_host::limits::{MAX_MENU_DEPTH, MAX_MENU_ITEMS};
use octet_host::validate::{self, ExtensionMenu, ExtensionMenuItem, FallbackCommand};
use serde_json::Value;

const DECLARED: [&str; 3] = ["computer-use", "hello", "checkpoint"];

const FALLBACK: [FallbackCommand<'static>; 3] = [
    FallbackCommand {
        name: "computer-use",
        description: Some("Set up computer use"),
    },
    FallbackCommand {
        name: "hello",
        description: None,
    },
    FallbackCommand {
        name: "checkpoint",
        description: Some("Preview a checkpoint"),
    },
];

/// Checks one level at `depth` (the top level is 1); returns the items it holds,
/// nested ones included.
fn check_level(items: &[ExtensionMenuItem], depth: usize) -> usize {
    assert!(depth <= MAX_MENU_DEPTH, "level {depth} accepted");
    let ids: HashSet<&str> = items.iter().map(ExtensionMenuItem::id).collect();
    assert_eq!(ids.len(), items.len(), "repeated id accepted");
    assert!(items.iter().filter(|item| item.recommended()).count() <= 1);
    let mut total = items.len();
    for item in items {
        assert!(!item.id().is_empty());
        match item {
            ExtensionMenuItem::Action { command, .. } => {
                assert!(DECLARED.contains(&command.as_str()), "undeclared {command}");
            }
            ExtensionMenuItem::Submenu { items, .. } => total += check_level(items, depth + 1),
        }
    }
    total
}

fn check_accepted(menu: &ExtensionMenu) {
    assert!(check_level(&menu.items, 1) <= MAX_MENU_ITEMS);
    let wire = menu.to_value();
    match validate::menu(&wire, &DECLARED) {
        Ok(again) => assert_eq!(&again, menu, "to_value() does not round-trip"),
        Err(error) => panic!("to_value() of an accepted menu is rejected: {error}\n{wire}"),
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(result) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let validated = validate::menu(&result, &DECLARED);
    match &validated {
        Ok(menu) => check_accepted(menu),
        Err(error) => {
            let _ = error.to_string();
            let _ = error.code();
        }
    }
    let (menu, rejection) = validate::menu_or_fallback(&result, "computer-use", &FALLBACK);
    match (validated, rejection) {
        (Ok(accepted), None) => assert_eq!(menu, accepted),
        (Err(error), Some(rejection)) => {
            assert_eq!(error, rejection);
            check_accepted(&menu);
        }
        (validated, rejection) => {
            panic!("menu_or_fallback disagrees: {validated:?} vs {rejection:?}")
        }
    }
});
