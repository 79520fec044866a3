//! The bound services the tests record with, and a host over the raw Wave-1 peer.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use octet_host::host::ServiceBindings;
use octet_host::services::bound::{
    ActiveToolSet, ActiveToolsService, AppendEntry, ComposerEdit, ComposerService, ComposerText,
    EntryId, EntryLabel, InjectedMessage, MessageInjectionService, NoParams, Refusal, Reply,
    ServiceCall, SessionEntryService, SessionName, Shortcut, ShortcutService, UserMessage,
};
use octet_host::{ExtensionHandle, ExtensionHost};
use serde_json::{json, Value};

use crate::support::{self, tool_json as tool, Journal};

/// A composer holding its text; `get` answers whatever `answer_with` holds when set.
#[derive(Clone, Default)]
pub(crate) struct Composer {
    pub(crate) journal: Journal,
    pub(crate) text: Arc<Mutex<String>>,
    pub(crate) answer_with: Arc<Mutex<Option<String>>>,
}

impl ComposerService for Composer {
    fn get(&self, call: ServiceCall, _params: NoParams, reply: Reply<ComposerText>) {
        self.journal
            .push(format!("get independent={}", call.independent));
        let text = self.answer_with.lock().unwrap().clone();
        reply.ok(ComposerText(
            text.unwrap_or_else(|| self.text.lock().unwrap().clone()),
        ));
    }
    fn set(&self, call: ServiceCall, ComposerEdit { text }: ComposerEdit, reply: Reply<()>) {
        self.journal.push(format!(
            "set {} independent={}",
            text.len(),
            call.independent
        ));
        if text == "block" {
            // Wait until the parent settles, then report that it was seen.
            call.cancelled.wait_timeout(Duration::from_secs(20));
            self.journal
                .push(format!("cancelled={}", call.cancelled.is_cancelled()));
            reply.ok(());
            return;
        }
        if text == "drop" {
            drop(reply);
            return;
        }
        *self.text.lock().unwrap() = text;
        reply.ok(());
    }
    fn insert(&self, _call: ServiceCall, ComposerEdit { text }: ComposerEdit, reply: Reply<()>) {
        self.journal.push(format!("insert {text}"));
        self.text.lock().unwrap().push_str(&text);
        reply.ok(());
    }
}

#[derive(Clone, Default)]
pub(crate) struct Shortcuts(pub(crate) Journal);

impl ShortcutService for Shortcuts {
    fn register(&self, _call: ServiceCall, shortcut: Shortcut, reply: Reply<()>) {
        self.0.push(format!("register {}", shortcut.id));
        if shortcut.id == "refused" {
            reply.refuse(Refusal::InvalidRequest.because("the key is taken"));
        } else {
            reply.ok(());
        }
    }
}

#[derive(Clone, Default)]
pub(crate) struct Entries(pub(crate) Journal);

impl SessionEntryService for Entries {
    fn append_entry(
        &self,
        _call: ServiceCall,
        AppendEntry { entry_type, data }: AppendEntry,
        reply: Reply<EntryId>,
    ) {
        self.0.push(format!("append {entry_type} {data}"));
        reply.ok(EntryId(format!("entry-{}", self.0.entries().len())));
    }
    fn set_name(&self, _call: ServiceCall, SessionName { name }: SessionName, reply: Reply<()>) {
        self.0.push(format!("name {name:?}"));
        reply.ok(());
    }
    fn set_label(&self, _call: ServiceCall, params: EntryLabel, reply: Reply<()>) {
        let EntryLabel { entry_id, label } = params;
        self.0.push(format!("label {entry_id} {label:?}"));
        reply.ok(());
    }
}

#[derive(Clone, Default)]
pub(crate) struct Messages(pub(crate) Journal);

impl MessageInjectionService for Messages {
    fn send_message(&self, _call: ServiceCall, params: InjectedMessage, reply: Reply<()>) {
        let InjectedMessage { role, text } = params;
        self.0.push(format!("{} {}", role.name(), text.len()));
        reply.ok(());
    }
    fn send_user_message(
        &self,
        _call: ServiceCall,
        UserMessage { text }: UserMessage,
        reply: Reply<()>,
    ) {
        self.0.push(format!("user {}", text.len()));
        reply.ok(());
    }
}

/// A host build that cannot apply a tool policy: it refuses every set.
pub(crate) struct NoToolPolicy;

impl ActiveToolsService for NoToolPolicy {
    fn set_active(&self, _call: ServiceCall, _set: ActiveToolSet, reply: Reply<()>) {
        reply.refuse(Refusal::UnsupportedFeature.because("this host cannot apply a tool set"));
    }
}

pub(crate) struct World {
    pub(crate) _dir: tempfile::TempDir,
    pub(crate) host: ExtensionHost,
    pub(crate) composer: Composer,
    pub(crate) shortcuts: Shortcuts,
    pub(crate) entries: Entries,
    pub(crate) messages: Messages,
}

pub(crate) fn bindings(world: &World) -> ServiceBindings {
    ServiceBindings::new()
        .composer(world.composer.clone())
        .shortcuts(world.shortcuts.clone())
        .session_entries(world.entries.clone())
        .message_injection(world.messages.clone())
        .active_tools(NoToolPolicy)
}

/// A host with every Wave-1 service bound (or none), over one peer named `peer`.
pub(crate) fn world(bound: bool, api: &str, env: &str) -> World {
    let dir = tempfile::tempdir().unwrap();
    let ext = support::services_extension(dir.path(), "peer", api, env);
    let host = support::host_builder(dir.path(), &[ext]).build().unwrap();
    let mut world = World {
        _dir: dir,
        host,
        composer: Composer::default(),
        shortcuts: Shortcuts::default(),
        entries: Entries::default(),
        messages: Messages::default(),
    };
    if bound {
        let ext: PathBuf = world._dir.path().join("peer");
        world.host = support::host_builder(world._dir.path(), &[ext])
            .bind(bindings(&world))
            .build()
            .unwrap();
    }
    world
}

/// What the peer's `seen` reports once `done` holds for it (polled; 20 s at most).
pub(crate) fn seen_until(
    ext: &ExtensionHandle,
    what: &str,
    done: impl Fn(&Value) -> bool,
) -> Value {
    let mut seen = Value::Null;
    support::eventually(what, || {
        seen = tool(ext, "seen", json!({}));
        done(&seen)
    });
    seen
}

/// Sends `requests` from inside one `ask` call and returns the answers by id.
pub(crate) fn ask(ext: &ExtensionHandle, requests: Value) -> Value {
    tool(ext, "ask", json!({ "requests": requests }))
}

pub(crate) fn request(id: &str, method: &str, params: Value) -> Value {
    json!({"id": id, "method": method, "params": params})
}

/// The error code and message of an answer.
pub(crate) fn error(answer: &Value) -> (i64, String) {
    let e = &answer["error"];
    assert!(e.is_object(), "expected an error, got {answer}");
    (
        e["code"].as_i64().unwrap(),
        e["message"].as_str().unwrap().to_string(),
    )
}

pub(crate) fn assert_refused(answer: &Value, code: i64, token: &str) {
    let (got, message) = error(answer);
    assert_eq!(got, code, "{answer}");
    assert_eq!(message.split(':').next().unwrap(), token, "{answer}");
}

pub(crate) const WAVE1: [&str; 5] = [
    "composer",
    "shortcuts",
    "session_entries",
    "message_injection",
    "active_tools",
];
