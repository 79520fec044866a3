//! Attended menu actions (section 1.6b) against a raw Python peer: literal arguments,
//! confirmation before a destructive action and pre-approval of its own first
//! confirmation, and refusals.

mod support;

use std::sync::{Arc, Mutex};

use octet_host::host::{CallError, CallOptions, ConfirmationRequest, Frontend, InputRequest};
use octet_host::validate::ExtensionMenuItem;
use octet_host::ExtensionHost;
use serde_json::{json, Value};
use support::*;

/// Says yes to the host's own "Run …?" question when `confirm_actions`, no to every
/// other confirmation, and records every prompt.
#[derive(Clone, Default)]
struct Person {
    confirm_actions: bool,
    asked: Arc<Mutex<Vec<String>>>,
}

impl Frontend for Person {
    fn is_interactive(&self) -> bool {
        true
    }

    fn confirm(&self, request: ConfirmationRequest) -> bool {
        self.asked.lock().unwrap().push(request.prompt.clone());
        request.prompt.starts_with("Run") && self.confirm_actions
    }

    fn input(&self, _request: InputRequest) -> Option<String> {
        None
    }
}

fn actions(person: Person) -> (tempfile::TempDir, tempfile::TempDir, ExtensionHost) {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dir = menu_actions_extension(root.path());
    let host = host_builder(workspace.path(), &[dir])
        .frontend(person)
        .build()
        .unwrap();
    (root, workspace, host)
}

fn item(items: &[ExtensionMenuItem], id: &str) -> ExtensionMenuItem {
    items.iter().find(|i| i.id() == id).unwrap().clone()
}

fn report(out: &octet_host::validate::CommandResult) -> Value {
    serde_json::from_str(out.text.as_deref().unwrap()).unwrap()
}

#[test]
fn a_destructive_action_is_confirmed_once_by_the_person() {
    let person = Person {
        confirm_actions: true,
        ..Person::default()
    };
    let (_root, _workspace, host) = actions(person.clone());
    let ext = host.start("actions").unwrap();
    let menu = ext.collect_menu(CallOptions::default()).unwrap().menu;

    let wipe = ext
        .run_menu_action(&item(&menu.items, "wipe"), CallOptions::default())
        .unwrap();
    // The literal arguments, and the action's own confirmation answered yes without a
    // second question.
    assert_eq!(
        report(&wipe),
        json!({"arguments": ["wipe", "--all"], "confirmation": {"confirmed": true}})
    );
    assert_eq!(
        *person.asked.lock().unwrap(),
        ["Run \u{201c}Wipe\u{201d}? It cannot be undone."]
    );

    // A safe action is not confirmed first, and its confirmation is the person's.
    let safe = ext
        .run_menu_action(&item(&menu.items, "safe"), CallOptions::default())
        .unwrap();
    assert_eq!(
        report(&safe),
        json!({"arguments": ["safe"], "confirmation": {"confirmed": false}})
    );
    assert_eq!(person.asked.lock().unwrap().last().unwrap(), "Really?");
}

#[test]
fn a_declined_or_undeclared_action_sends_nothing() {
    let person = Person::default();
    let (_root, _workspace, host) = actions(person.clone());
    let ext = host.start("actions").unwrap();
    let menu = ext.collect_menu(CallOptions::default()).unwrap().menu;
    match ext.run_menu_action(&item(&menu.items, "wipe"), CallOptions::default()) {
        Err(CallError::Declined { action }) => assert_eq!(action, "Wipe"),
        other => panic!("expected a declined action, got {other:?}"),
    }
    // Only the host's question was asked: the command never reached the extension.
    assert_eq!(person.asked.lock().unwrap().len(), 1);
    let forged = ExtensionMenuItem::Action {
        id: "x".into(),
        label: "Forged".into(),
        command: "rm".into(),
        arguments: vec![],
        recommended: false,
        destructive: false,
        description: None,
    };
    assert!(matches!(
        ext.run_menu_action(&forged, CallOptions::default()),
        Err(CallError::NotDeclared {
            kind: "command",
            ..
        })
    ));
}
