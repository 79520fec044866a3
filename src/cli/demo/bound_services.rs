//! Wave-1 services from the notes example (sections 2.19-2.21, 2.20, 1.11): the demo
//! binds an in-memory composer, session entries and shortcuts; `save_draft` moves the
//! composer's text into a labelled entry, and the demo triggers the shortcut the
//! extension registered inside `initialize`.

use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use serde_json::json;

use super::setup::{MORE_EXAMPLES, NOTES};
use super::Demo;
use crate::host::{CallOptions, HostEvent, ServiceBindings};
use crate::sdk::examples::notes::SAVE_SHORTCUT;
use crate::services::bound::{
    AppendEntry, ComposerEdit, ComposerService, ComposerText, EntryId, EntryLabel, NoParams, Reply,
    ServiceCall, SessionEntryService, SessionName, Shortcut, ShortcutService,
};

/// What the demo's composer holds when `notes` starts.
const DRAFT: &str = "Draft: retry the flaky upload with backoff";

/// How long the demo waits for the shortcut's notification.
const NOTIFICATION_WITHIN: Duration = Duration::from_secs(5);

/// The services the demo binds for `notes`, and what they saw.
#[derive(Clone, Default)]
pub(super) struct DemoServices {
    composer: Arc<Mutex<String>>,
    journal: Arc<Mutex<Vec<String>>>,
}

impl DemoServices {
    pub(super) fn new() -> DemoServices {
        let services = DemoServices::default();
        *services.composer.lock() = DRAFT.into();
        services
    }

    /// The bindings for `notes`.
    pub(super) fn bindings(&self) -> ServiceBindings {
        ServiceBindings::new()
            .composer(self.clone())
            .session_entries(self.clone())
            .shortcuts(self.clone())
    }

    fn log(&self, line: String) {
        self.journal.lock().push(line);
    }
}

impl ComposerService for DemoServices {
    fn get(&self, _call: ServiceCall, _params: NoParams, reply: Reply<ComposerText>) {
        let text = self.composer.lock().clone();
        self.log(format!("composer/get -> {text:?}"));
        reply.ok(ComposerText(text));
    }
    fn set(&self, _call: ServiceCall, params: ComposerEdit, reply: Reply<()>) {
        self.log(format!("composer/set {:?}", params.text));
        *self.composer.lock() = params.text;
        reply.ok(());
    }
    fn insert(&self, _call: ServiceCall, params: ComposerEdit, reply: Reply<()>) {
        self.log(format!("composer/insert {:?}", params.text));
        self.composer.lock().push_str(&params.text);
        reply.ok(());
    }
}

impl SessionEntryService for DemoServices {
    fn append_entry(&self, call: ServiceCall, entry: AppendEntry, reply: Reply<EntryId>) {
        let appended = self
            .journal
            .lock()
            .iter()
            .filter(|l| l.starts_with("session/append_entry"))
            .count();
        let id = format!("entry-{}", appended + 1);
        self.log(format!(
            "session/append_entry {} {} (owner generation {}) -> {id}",
            entry.entry_type, entry.data, call.owner.process_generation
        ));
        reply.ok(EntryId(id));
    }
    fn set_name(&self, _call: ServiceCall, params: SessionName, reply: Reply<()>) {
        self.log(format!("session/set_name {:?}", params.name));
        reply.ok(());
    }
    fn set_label(&self, _call: ServiceCall, params: EntryLabel, reply: Reply<()>) {
        self.log(format!(
            "session/set_label {} {:?}",
            params.entry_id, params.label
        ));
        reply.ok(());
    }
}

impl ShortcutService for DemoServices {
    fn register(&self, _call: ServiceCall, shortcut: Shortcut, reply: Reply<()>) {
        self.log(format!(
            "shortcut/register {} ({}) inside initialize",
            shortcut.id, shortcut.key
        ));
        reply.ok(());
    }
}

impl Demo<'_> {
    /// Starts notes with the demo's services, calls `save_draft`, and triggers its
    /// shortcut.
    pub(super) fn notes_services(&mut self) {
        self.t.section("Wave-1 services (notes, API 0.2)");
        let Some(notes) = self.start_example(&MORE_EXAMPLES[3], "services_start") else {
            return;
        };
        let registered: Vec<String> = self.bound.journal.lock().clone();
        for line in &registered {
            self.t.detail(format!("  service: {line}"));
        }
        let from = registered.len();
        self.t.request(format!("tool/call {NOTES} save_draft {{}}"));
        let result = notes.call_tool("save_draft", json!({}), CallOptions::default());
        let seen: Vec<String> = self.bound.journal.lock()[from..].to_vec();
        for line in &seen {
            self.t.detail(format!("  service: {line}"));
        }
        let composer_after = self.bound.composer.lock().clone();
        match result {
            Ok(output) => {
                let text = output.text();
                self.t.answer(&text);
                let ok = !output.is_error && composer_after.is_empty();
                if !ok {
                    self.t.failure("the draft was not saved");
                }
                self.t.record(
                    "save_draft",
                    ok,
                    json!({"extension": NOTES, "result": text, "services": seen}),
                );
            }
            Err(error) => {
                let error = self.call_failed(NOTES, "tool `save_draft`", error);
                self.t.record(
                    "save_draft",
                    false,
                    json!({"extension": NOTES, "error": error}),
                );
                return;
            }
        }
        self.collect_events();
        let from = self.events.len();
        self.t.request(format!("shortcut/trigger {SAVE_SHORTCUT}"));
        let sent = notes.trigger_shortcut(SAVE_SHORTCUT);
        let notified = sent.is_ok()
            && self
                .await_event(from, NOTIFICATION_WITHIN, |e| {
                    matches!(e, HostEvent::Notification { .. })
                })
                .is_some();
        match (&sent, notified) {
            (Ok(()), true) => self
                .t
                .answer("the extension's handler ran and sent a notification"),
            (Ok(()), false) => self.t.failure("no notification followed the trigger"),
            (Err(error), _) => self.t.failure(error.to_string()),
        }
        self.t.record(
            "shortcut_trigger",
            notified,
            json!({"extension": NOTES, "shortcut": SAVE_SHORTCUT}),
        );
    }
}
