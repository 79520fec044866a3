//! The Wave-1 services (sections 2, 2.19-2.23, 3) and notifications (1.11) through the
//! library, against a raw Python peer (`tests/fixtures/wave1_peer.py`): offers follow
//! bindings, the runtime checks every request before a service sees it and every answer
//! before the extension sees it, owners follow the precedence rule, and a settled
//! parent cancels the service call.

mod support;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use std::time::Duration;
use support::Journal;

use octet_host::host::{BoundNotification, NotifyError, ServiceBindings};
use octet_host::limits::{
    MAX_COMPOSER_TEXT_BYTES, MAX_ENTRY_DATA_BYTES, MAX_INJECTED_TEXT_BYTES, MAX_SHORTCUTS,
};
use octet_host::services::bound::{
    ActiveToolSet, ActiveToolsService, AppendEntry, ComposerEdit, ComposerService, ComposerText,
    EntryId, EntryLabel, InjectedMessage, MessageInjectionService, NoParams, Refusal, Reply,
    ServiceCall, SessionEntryService, SessionName, Shortcut, ShortcutService, UserMessage,
};
use octet_host::{CallOptions, ExtensionHandle, ExtensionHost};
use serde_json::{json, Value};
use support::tool_json as tool;

/// A composer holding its text; `get` answers whatever `answer_with` holds when set.
#[derive(Clone, Default)]
struct Composer {
    journal: Journal,
    text: Arc<Mutex<String>>,
    answer_with: Arc<Mutex<Option<String>>>,
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
struct Shortcuts(Journal);

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
struct Entries(Journal);

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
struct Messages(Journal);

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
struct NoToolPolicy;

impl ActiveToolsService for NoToolPolicy {
    fn set_active(&self, _call: ServiceCall, _set: ActiveToolSet, reply: Reply<()>) {
        reply.refuse(Refusal::UnsupportedFeature.because("this host cannot apply a tool set"));
    }
}

struct World {
    _dir: tempfile::TempDir,
    host: ExtensionHost,
    composer: Composer,
    shortcuts: Shortcuts,
    entries: Entries,
    messages: Messages,
}

fn bindings(world: &World) -> ServiceBindings {
    ServiceBindings::new()
        .composer(world.composer.clone())
        .shortcuts(world.shortcuts.clone())
        .session_entries(world.entries.clone())
        .message_injection(world.messages.clone())
        .active_tools(NoToolPolicy)
}

/// A host with every Wave-1 service bound (or none), over one peer named `peer`.
fn world(bound: bool, api: &str, env: &str) -> World {
    let dir = tempfile::tempdir().unwrap();
    let ext = support::wave1_extension(dir.path(), "peer", api, env);
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
fn seen_until(ext: &ExtensionHandle, what: &str, done: impl Fn(&Value) -> bool) -> Value {
    let mut seen = Value::Null;
    support::eventually(what, || {
        seen = tool(ext, "seen", json!({}));
        done(&seen)
    });
    seen
}

/// Sends `requests` from inside one `ask` call and returns the answers by id.
fn ask(ext: &ExtensionHandle, requests: Value) -> Value {
    tool(ext, "ask", json!({ "requests": requests }))
}

fn request(id: &str, method: &str, params: Value) -> Value {
    json!({"id": id, "method": method, "params": params})
}

/// The error code and message of an answer.
fn error(answer: &Value) -> (i64, String) {
    let e = &answer["error"];
    assert!(e.is_object(), "expected an error, got {answer}");
    (
        e["code"].as_i64().unwrap(),
        e["message"].as_str().unwrap().to_string(),
    )
}

fn assert_refused(answer: &Value, code: i64, token: &str) {
    let (got, message) = error(answer);
    assert_eq!(got, code, "{answer}");
    assert_eq!(message.split(':').next().unwrap(), token, "{answer}");
}

const WAVE1: [&str; 5] = [
    "composer",
    "shortcuts",
    "session_entries",
    "message_injection",
    "active_tools",
];

#[test]
fn features_are_offered_only_when_bound() {
    let unbound = world(false, "0.2", "");
    let ext = unbound.host.start("peer").unwrap();
    let seen = tool(&ext, "seen", json!({}));
    let offered = support::offered(&seen);
    for feature in WAVE1 {
        assert!(
            !offered.iter().any(|f| f == feature),
            "{feature} offered unbound: {offered:?}"
        );
    }
    let answers = ask(&ext, json!([request("1", "composer/get", json!({}))]));
    assert_refused(&answers["1"], -32601, "unsupported_feature");

    for api in ["0.2", "0.4"] {
        let bound = world(true, api, "");
        let ext = bound.host.start("peer").unwrap();
        let seen = tool(&ext, "seen", json!({}));
        let offered = support::offered(&seen);
        for feature in WAVE1 {
            assert!(
                offered.iter().any(|f| f == feature),
                "{feature} not offered on {api}: {offered:?}"
            );
        }
    }
}

#[test]
fn composer_round_trip_and_bounds() {
    let w = world(true, "0.2", "");
    let ext = w.host.start("peer").unwrap();
    let at = "x".repeat(MAX_COMPOSER_TEXT_BYTES);
    let past = "x".repeat(MAX_COMPOSER_TEXT_BYTES + 1);
    let answers = ask(
        &ext,
        json!([
            request("set", "composer/set", json!({"text": "hello"})),
            request("insert", "composer/insert", json!({"text": " world"})),
            request("get", "composer/get", json!({})),
            request("at", "composer/set", json!({"text": at})),
            request("past", "composer/set", json!({"text": past})),
            request("control", "composer/insert", json!({"text": "\u{1b}[2J"})),
            request("extra", "composer/get", json!({"cursor": 3})),
            request("no-text", "composer/set", json!({})),
        ]),
    );
    assert_eq!(answers["set"]["result"], json!({}));
    assert_eq!(answers["insert"]["result"], json!({}));
    assert_eq!(answers["get"]["result"], json!({"text": "hello world"}));
    assert_eq!(answers["at"]["result"], json!({}));
    assert_refused(&answers["past"], -32602, "bounds_exceeded");
    assert_refused(&answers["control"], -32602, "invalid_request");
    assert_refused(&answers["extra"], -32602, "invalid_request");
    assert_refused(&answers["no-text"], -32602, "invalid_request");
    // Refused requests never reached the service.
    let journal = w.composer.journal.entries();
    assert_eq!(
        journal,
        vec![
            "set 5 independent=false".to_string(),
            "insert  world".into(),
            "get independent=false".into(),
            format!("set {MAX_COMPOSER_TEXT_BYTES} independent=false"),
        ]
    );
}

#[test]
fn answers_that_break_the_rules_never_reach_the_extension() {
    let w = world(true, "0.2", "");
    let ext = w.host.start("peer").unwrap();
    *w.composer.answer_with.lock().unwrap() = Some("bell \u{7}".into());
    let answers = ask(
        &ext,
        json!([
            request("get", "composer/get", json!({})),
            request("drop", "composer/set", json!({"text": "drop"})),
        ]),
    );
    let (code, message) = error(&answers["get"]);
    assert_eq!(code, -32603);
    assert!(!message.contains('\u{7}'), "{message}");
    assert_eq!(error(&answers["drop"]).0, -32603);
    // The host learns why.
    let events = support::collect_events(&w.host, Duration::from_secs(10), |events| {
        support::diagnostics(events).len() >= 2
    });
    let reasons: Vec<String> = support::diagnostics(&events)
        .iter()
        .map(|d| d.to_string())
        .collect();
    assert!(
        reasons
            .iter()
            .any(|r| r.contains("broke the method's rules")),
        "{reasons:?}"
    );
    assert!(
        reasons.iter().any(|r| r.contains("dropped the request")),
        "{reasons:?}"
    );
}

#[test]
fn a_cancelled_parent_admits_no_child_even_with_the_issued_owner() {
    let w = world(true, "0.2", "");
    let ext = w.host.start("peer").unwrap();
    // The first call waits on a composer/set the service holds until the parent
    // settles; the host cancels the call at its deadline and tombstones its id.
    let blocked = ext.call_tool(
        "ask",
        json!({"requests": [request("blocked", "composer/set", json!({"text": "block"}))]}),
        CallOptions::with_deadline(Duration::from_millis(500)),
    );
    assert!(blocked.is_err(), "{blocked:?}");
    let mut late = request("late", "composer/get", json!({}));
    late["parent"] = json!("cancelled");
    late["owner"] = json!("issued");
    let answers = ask(&ext, json!([late]));
    assert_refused(&answers["late"], -32002, "not_foreground_owner");
    let message = answers["late"]["error"]["message"].as_str().unwrap();
    assert!(message.contains("was cancelled"), "{message}");
    assert!(
        !w.composer
            .journal
            .entries()
            .iter()
            .any(|e| e.starts_with("get")),
        "{:?}",
        w.composer.journal.entries()
    );
}

#[test]
fn owner_precedence() {
    let w = world(true, "0.2", "");
    let ext = w.host.start("peer").unwrap();
    // A first call settles, so "previous" names a settled parent.
    ask(&ext, json!([]));
    let get = |id: &str, parent: Value, owner: Value| {
        let mut r = request(id, "composer/get", json!({}));
        r["parent"] = parent;
        r["owner"] = owner;
        r
    };
    let answers = ask(
        &ext,
        json!([
            // A live parent wins; the explicit field is ignored, even a foreign one.
            get("live-foreign", json!("live"), json!("foreign")),
            // A settled parent with the issued triple: admitted, answered independently.
            get("settled-issued", json!("previous"), json!("issued")),
            get("settled-foreign", json!("previous"), json!("foreign")),
            get("settled-absent", json!("previous"), Value::Null),
            get(
                "settled-malformed",
                json!("previous"),
                json!({"session_id": 1})
            ),
            get("never-issued", json!(999_999), json!("issued")),
            get("no-parent", json!("none"), Value::Null),
        ]),
    );
    assert_eq!(answers["live-foreign"]["result"], json!({"text": ""}));
    assert_eq!(answers["settled-issued"]["result"], json!({"text": ""}));
    for id in [
        "settled-foreign",
        "settled-absent",
        "settled-malformed",
        "never-issued",
    ] {
        assert_refused(&answers[id], -32002, "not_foreground_owner");
    }
    assert_refused(&answers["no-parent"], -32602, "invalid_request");
    assert_eq!(
        w.composer.journal.entries(),
        vec!["get independent=false", "get independent=true"]
    );
}

#[test]
fn a_settled_parent_cancels_the_service_call() {
    let w = world(true, "0.2", "");
    let ext = w.host.start("peer").unwrap();
    let mut blocked = request("blocked", "composer/set", json!({"text": "block"}));
    blocked["wait"] = json!(false);
    // The call returns at once, settling the parent while the service still blocks.
    ask(&ext, json!([blocked]));
    let answers = tool(&ext, "answers", json!({"ids": ["blocked"]}));
    let (code, _) = error(&answers["blocked"]);
    assert_eq!(code, -32800);
    // The service observed the cancellation; its late reply went nowhere.
    w.composer.journal.wait_for("cancelled=true");
}

#[test]
fn session_entries_bounds_and_answers() {
    let w = world(true, "0.2", "");
    let ext = w.host.start("peer").unwrap();
    let data_at = json!("d".repeat(MAX_ENTRY_DATA_BYTES - 2));
    let data_past = json!("d".repeat(MAX_ENTRY_DATA_BYTES - 1));
    let answers = ask(
        &ext,
        json!([
            request(
                "append",
                "session/append_entry",
                json!({"entry_type": "note", "data": {"n": 1}})
            ),
            request(
                "at",
                "session/append_entry",
                json!({"entry_type": "t".repeat(128), "data": data_at})
            ),
            request(
                "past",
                "session/append_entry",
                json!({"entry_type": "note", "data": data_past})
            ),
            request(
                "type-past",
                "session/append_entry",
                json!({"entry_type": "t".repeat(129), "data": 1})
            ),
            request(
                "name",
                "session/set_name",
                json!({"name": "n".repeat(4096)})
            ),
            request(
                "name-past",
                "session/set_name",
                json!({"name": "n".repeat(4097)})
            ),
            request("clear", "session/set_name", json!({"name": ""})),
            request(
                "label",
                "session/set_label",
                json!({"entry_id": "e".repeat(256), "label": "x"})
            ),
            request(
                "label-id-past",
                "session/set_label",
                json!({"entry_id": "e".repeat(257), "label": "x"})
            ),
            request(
                "label-past",
                "session/set_label",
                json!({"entry_id": "e", "label": "l".repeat(4097)})
            ),
        ]),
    );
    assert_eq!(answers["append"]["result"], json!({"entry_id": "entry-1"}));
    assert!(answers["at"]["result"]["entry_id"].is_string());
    for id in [
        "past",
        "type-past",
        "name-past",
        "label-id-past",
        "label-past",
    ] {
        assert_refused(&answers[id], -32602, "bounds_exceeded");
    }
    for id in ["name", "clear", "label"] {
        assert_eq!(answers[id]["result"], json!({}), "{id}");
    }
    assert_eq!(w.entries.0.entries()[0], "append note {\"n\":1}");
}

#[test]
fn message_injection_roles_are_never_coerced() {
    let w = world(true, "0.2", "");
    let ext = w.host.start("peer").unwrap();
    let at = "m".repeat(MAX_INJECTED_TEXT_BYTES);
    let past = "m".repeat(MAX_INJECTED_TEXT_BYTES + 1);
    let answers = ask(
        &ext,
        json!([
            request(
                "assistant",
                "session/send_message",
                json!({"role": "assistant", "text": "hi"})
            ),
            request(
                "system",
                "session/send_message",
                json!({"role": "system", "text": at})
            ),
            request(
                "user-role",
                "session/send_message",
                json!({"role": "user", "text": "hi"})
            ),
            request("past", "session/send_user_message", json!({"text": past})),
            request(
                "user",
                "session/send_user_message",
                json!({"text": "typed"})
            ),
        ]),
    );
    for id in ["assistant", "system", "user"] {
        assert_eq!(answers[id]["result"], json!({}), "{id}");
    }
    assert_refused(&answers["user-role"], -32602, "invalid_request");
    assert_refused(&answers["past"], -32602, "bounds_exceeded");
    assert_eq!(
        w.messages.0.entries(),
        vec![
            "assistant 2".to_string(),
            format!("system {MAX_INJECTED_TEXT_BYTES}"),
            "user 5".into()
        ]
    );
}

#[test]
fn active_tools_are_bounded_and_a_host_that_cannot_apply_them_refuses() {
    let w = world(true, "0.2", "");
    let ext = w.host.start("peer").unwrap();
    let at: Vec<String> = (0..256).map(|i| format!("t{i}")).collect();
    let past: Vec<String> = (0..257).map(|i| format!("t{i}")).collect();
    let answers = ask(
        &ext,
        json!([
            request("at", "tools/set_active", json!({ "names": at })),
            request("past", "tools/set_active", json!({ "names": past })),
            request(
                "long",
                "tools/set_active",
                json!({"names": ["n".repeat(129)]})
            ),
        ]),
    );
    // Within bounds the service decides: this one cannot apply a set.
    assert_refused(&answers["at"], -32601, "unsupported_feature");
    assert_refused(&answers["past"], -32602, "bounds_exceeded");
    assert_refused(&answers["long"], -32602, "bounds_exceeded");
}

fn shortcuts_env(shortcuts: Value) -> String {
    format!("OCTET_PEER_SHORTCUTS = {:?}", shortcuts.to_string())
}

fn shortcut(id: &str) -> Value {
    json!({"id": id, "key": "ctrl+k", "description": "d"})
}

#[test]
fn shortcuts_register_inside_initialize_and_trigger_only_when_admitted() {
    let mut list: Vec<Value> = vec![
        shortcut("open"),
        shortcut("refused"),
        shortcut("twice"),
        shortcut("twice"),
    ];
    list.push(json!({"id": "i".repeat(129), "key": "k", "description": ""}));
    let env = format!(
        "{}, OCTET_PEER_LATE_SHORTCUT = \"late\"",
        shortcuts_env(json!(list))
    );
    let w = world(true, "0.2", &env);
    let ext = w.host.start("peer").unwrap();
    // The late registration is sent, and answered, after initialize settled.
    let seen = seen_until(&ext, "the late registration", |seen| {
        seen["registrations"].get("late").is_some()
    });
    let regs = &seen["registrations"];
    assert_eq!(regs["open"]["result"], json!({}));
    assert_refused(&regs["refused"], -32602, "invalid_request");
    assert_refused(&regs["twice"], -32602, "invalid_request");
    assert_refused(&regs["i".repeat(129)], -32602, "bounds_exceeded");
    assert_refused(&regs["late"], -32002, "not_foreground_owner");

    ext.trigger_shortcut("open").unwrap();
    for id in ["refused", "twice", "late", "unknown"] {
        match ext.trigger_shortcut(id) {
            Err(NotifyError::Refused(r)) => assert_eq!(r.refusal, Refusal::InvalidRequest, "{id}"),
            other => panic!("{id}: {other:?}"),
        }
    }
    let notifications = seen_until(&ext, "the trigger", |seen| {
        !seen["notifications"].as_array().unwrap().is_empty()
    })["notifications"]
        .clone();
    assert_eq!(
        notifications,
        json!([{"method": "shortcut/trigger", "params": {"id": "open"}}])
    );

    // A new generation does not inherit the old one's admissions unless it registers.
    let generation = ext.info().generation;
    ext.reload().unwrap();
    match ext.notify_generation(
        generation,
        BoundNotification::ShortcutTrigger { id: "open".into() },
    ) {
        Err(NotifyError::Refused(r)) => assert!(r.detail.contains("stale"), "{r}"),
        other => panic!("{other:?}"),
    }
    ext.trigger_shortcut("open").unwrap();
}

#[test]
fn at_most_64_shortcuts_per_process() {
    let list: Vec<Value> = (0..=MAX_SHORTCUTS)
        .map(|i| shortcut(&format!("s{i}")))
        .collect();
    let w = world(true, "0.2", &shortcuts_env(json!(list)));
    let ext = w.host.start("peer").unwrap();
    let seen = tool(&ext, "seen", json!({}));
    let regs = &seen["registrations"];
    assert_eq!(regs[format!("s{}", MAX_SHORTCUTS - 1)]["result"], json!({}));
    assert_refused(
        &regs[format!("s{MAX_SHORTCUTS}")],
        -32602,
        "bounds_exceeded",
    );
}

#[test]
fn shortcuts_need_the_negotiated_feature() {
    let w = world(false, "0.2", &shortcuts_env(json!([shortcut("open")])));
    let ext = w.host.start("peer").unwrap();
    let seen = tool(&ext, "seen", json!({}));
    assert_refused(
        &seen["registrations"]["open"],
        -32601,
        "unsupported_feature",
    );
    match ext.trigger_shortcut("open") {
        Err(NotifyError::Refused(r)) => assert_eq!(r.refusal, Refusal::UnsupportedFeature),
        other => panic!("{other:?}"),
    }
}

#[test]
fn message_updates_are_coalesced_in_order() {
    let w = world(true, "0.2", "");
    let ext = w.host.start("peer").unwrap();
    // 100 ten-byte deltas handed over at once: one batch at 64 deltas, the rest when
    // the message settles (or its 50 ms pass first). Timing never changes the first.
    let deltas: Vec<String> = (0..100).map(|i| format!("{i:09} ")).collect();
    ext.notify(BoundNotification::MessageDeltas {
        message_id: "m1".into(),
        deltas,
    })
    .unwrap();
    ext.message_settled("m1").unwrap();
    // A 5,000-byte delta goes out in a batch of its own, never split.
    ext.message_delta("m2", &"x".repeat(5000)).unwrap();
    ext.message_settled("m2").unwrap();
    // Three 2,000-byte deltas: the third passes 4,096 bytes, so all three go at once.
    ext.notify(BoundNotification::MessageDeltas {
        message_id: "m4".into(),
        deltas: vec!["y".repeat(2000); 3],
    })
    .unwrap();
    let too_many = BoundNotification::MessageDeltas {
        message_id: "m3".into(),
        deltas: vec!["x".into(); 1025],
    };
    match ext.notify(too_many) {
        Err(NotifyError::Refused(r)) => assert_eq!(r.refusal, Refusal::BoundsExceeded),
        other => panic!("{other:?}"),
    }
    let deltas = |seen: &Value| -> u64 {
        let batches = seen["notifications"].as_array().unwrap();
        batches
            .iter()
            .map(|b| b["params"]["deltas"].as_u64().unwrap())
            .sum()
    };
    let seen = seen_until(&ext, "104 deltas", |seen| deltas(seen) >= 104);
    let batches = seen["notifications"].as_array().unwrap().clone();
    let m1: Vec<&Value> = batches
        .iter()
        .filter(|b| b["params"]["message_id"] == "m1")
        .collect();
    assert!(m1.len() >= 2, "{batches:?}");
    assert_eq!(m1[0]["params"]["deltas"], json!(64));
    let text: String = m1
        .iter()
        .map(|b| b["params"]["delta"].as_str().unwrap())
        .collect();
    let expected: String = (0..100).map(|i| format!("{i:09} ")).collect();
    assert_eq!(text, expected);
    let m2: Vec<&Value> = batches
        .iter()
        .filter(|b| b["params"]["message_id"] == "m2")
        .collect();
    assert_eq!(m2.len(), 1);
    assert_eq!(m2[0]["params"]["delta"].as_str().unwrap().len(), 5000);
    let m4: Vec<&Value> = batches
        .iter()
        .filter(|b| b["params"]["message_id"] == "m4")
        .collect();
    assert_eq!(m4.len(), 1, "{batches:?}");
    assert_eq!(m4[0]["params"]["deltas"], json!(3));
    assert!(batches.iter().all(|b| b["method"] == "message/updated"));
}

#[test]
fn lone_deltas_go_out_after_50_ms_without_a_settle() {
    let w = world(true, "0.2", "");
    let ext = w.host.start("peer").unwrap();
    ext.message_delta("m", "hello").unwrap();
    let seen = seen_until(&ext, "a batch", |seen| {
        !seen["notifications"].as_array().unwrap().is_empty()
    });
    assert_eq!(
        seen["notifications"][0]["params"],
        json!({"message_id": "m", "delta": "hello", "deltas": 1})
    );
}

#[test]
fn message_updates_need_the_negotiated_feature() {
    let w = world(false, "0.2", "");
    let ext = w.host.start("peer").unwrap();
    match ext.message_delta("m", "x") {
        Err(NotifyError::Refused(r)) => assert_eq!(r.refusal, Refusal::UnsupportedFeature),
        other => panic!("{other:?}"),
    }
}

#[test]
fn per_extension_bindings_come_with_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let a = support::wave1_extension(dir.path(), "bound", "0.2", "");
    let b = support::wave1_extension(dir.path(), "plain", "0.2", "");
    let host = support::host(dir.path(), &[a, b]);
    let composer = Composer::default();
    let options = octet_host::host::StartOptions::default()
        .services(ServiceBindings::new().composer(composer.clone()));
    let bound = host.start_with("bound", options).unwrap();
    let plain = host.start("plain").unwrap();
    let answers = ask(
        &bound,
        json!([request("1", "composer/set", json!({"text": "x"}))]),
    );
    assert_eq!(answers["1"]["result"], json!({}));
    let answers = ask(
        &plain,
        json!([request("1", "composer/set", json!({"text": "x"}))]),
    );
    assert_refused(&answers["1"], -32601, "unsupported_feature");
}

#[test]
fn the_sdk_side_registers_shortcuts_and_uses_the_services() {
    let dir = tempfile::tempdir().unwrap();
    let ext = support::sdk_extension(
        dir.path(),
        "notes",
        "0.2",
        "notes",
        "tools = [\"save_draft\"]\nnotifications = true",
    );
    let composer = Composer::default();
    *composer.text.lock().unwrap() = "Draft: fix the parser".into();
    let shortcuts = Shortcuts::default();
    let entries = Entries::default();
    let services = ServiceBindings::new()
        .composer(composer.clone())
        .shortcuts(shortcuts.clone())
        .session_entries(entries.clone());
    let host = support::host_builder(dir.path(), &[ext])
        .bind(services)
        .build()
        .unwrap();
    let notes = host.start("notes").unwrap();
    // The registration happened inside initialize.
    assert_eq!(shortcuts.0.entries(), vec!["register notes.save"]);

    let options = CallOptions::with_deadline(Duration::from_secs(60));
    let result = notes.call_tool("save_draft", json!({}), options).unwrap();
    assert!(
        result.text().contains("as entry entry-1 (draft)"),
        "{}",
        result.text()
    );
    assert_eq!(composer.text.lock().unwrap().as_str(), "");
    assert_eq!(
        entries.0.entries(),
        vec![
            "append draft {\"text\":\"Draft: fix the parser\"}".to_string(),
            "label entry-1 \"draft\"".into(),
        ]
    );

    notes.trigger_shortcut("notes.save").unwrap();
    let events = support::collect_events(&host, Duration::from_secs(20), |events| {
        events
            .iter()
            .any(|e| matches!(e, octet_host::HostEvent::Notification { .. }))
    });
    let notified = events.iter().any(|e| match e {
        octet_host::HostEvent::Notification { notification, .. } => {
            notification.message == "the save shortcut was pressed"
        }
        _ => false,
    });
    assert!(notified, "{events:?}");
}

#[test]
fn cancelling_the_parent_cancels_the_service_call() {
    let w = world(true, "0.2", "");
    let ext = w.host.start("peer").unwrap();
    let requests = json!([request("blocked", "composer/set", json!({"text": "block"}))]);
    let options = CallOptions::with_deadline(Duration::from_secs(60));
    let pending = ext.call_tool_async("ask", json!({ "requests": requests }), options);
    support::eventually("the service receiving the request", || {
        w.composer
            .journal
            .entries()
            .iter()
            .any(|e| e.starts_with("set 5"))
    });
    pending.cancel();
    assert!(matches!(
        pending.wait(),
        Err(octet_host::CallError::Cancelled { .. })
    ));
    w.composer.journal.wait_for("cancelled=true");
    // The extension got the cancellation for its request.
    let answers = tool(&ext, "answers", json!({"ids": ["blocked"]}));
    assert_eq!(error(&answers["blocked"]).0, -32800);
}

#[test]
fn methods_of_features_the_host_does_not_offer_are_unsupported_feature() {
    for api in ["0.2", "0.4"] {
        let w = world(true, api, "");
        let ext = w.host.start("peer").unwrap();
        let methods = [
            "session/wait_for_idle",
            "session/compact",
            "terminal/acquire",
            "ui/autocomplete/register",
            // The API 0.3 session_lifecycle row is not a method of this version.
            "session/create",
        ];
        let requests: Vec<Value> = methods.iter().map(|m| request(m, m, json!({}))).collect();
        let answers = ask(&ext, Value::Array(requests));
        for method in methods {
            assert_refused(&answers[method], -32601, "unsupported_feature");
        }
        // A method no feature names stays an unknown method.
        let answers = ask(&ext, json!([request("x", "nothing/here", json!({}))]));
        assert_eq!(
            error(&answers["x"]),
            (-32601, "unknown or unnegotiated method".to_string()),
            "on {api}"
        );
    }
}

/// An API 0.4 peer that declares `model_turn_start`, refusing the features listed.
fn model_turn_peer(root: &std::path::Path, name: &str, refuse: &str) -> PathBuf {
    let dir = support::wave1_extension(
        root,
        name,
        "0.4",
        &format!("OCTET_PEER_REFUSE_FEATURES = {refuse:?}"),
    );
    let manifest = dir.join("extension.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    let text = text.replace(
        "[contributes]\n",
        "[contributes]\nhooks = [\"model_turn_start\"]\n",
    );
    std::fs::write(&manifest, text).unwrap();
    dir
}

#[test]
fn model_turn_hooks_go_only_to_extensions_that_negotiated_session_entries() {
    let dir = tempfile::tempdir().unwrap();
    let with = model_turn_peer(dir.path(), "with", "");
    let without = model_turn_peer(dir.path(), "without", "session_entries");
    let host = support::host_builder(dir.path(), &[with, without])
        .tool_namespace(octet_host::host::ToolNamespace::PerExtension)
        .bind(ServiceBindings::new().session_entries(Entries::default()))
        .build()
        .unwrap();
    let payload = || octet_host::validate::HookPayload::ModelTurnStart {
        run_id: "run:e1".into(),
        turn_index: 0,
        timestamp_ms: 1,
    };
    let options = || CallOptions::with_deadline(Duration::from_secs(60));
    let with = host.start("with").unwrap();
    assert!(with.run_hook(payload(), options()).is_ok());
    let without = host.start("without").unwrap();
    match without.run_hook(payload(), options()) {
        Err(octet_host::CallError::NotDeclared { kind, name }) => {
            assert_eq!((kind, name.as_str()), ("feature", "session_entries"));
        }
        other => panic!("expected not declared, got {other:?}"),
    }
    let seen = tool(&without, "seen", json!({}));
    assert_eq!(seen["hooks"], json!([]), "nothing reached the extension");
    let seen = tool(&with, "seen", json!({}));
    assert_eq!(seen["hooks"], json!(["model_turn_start"]));
}
