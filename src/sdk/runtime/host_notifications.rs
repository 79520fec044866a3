//! The runtime side of the SDK's Wave-1 support (sections 1.11, 2.20): registering
//! shortcuts inside `initialize` before answering it, and running the handlers of
//! `shortcut/trigger` and `message/updated` one at a time on a thread of their own.

use std::collections::HashSet;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use crossbeam_channel::{bounded, Sender};
use parking_lot::Mutex;
use serde_json::Value;

use super::state::{diagnostic, Session, Shared};
use crate::sdk::context::Context;
use crate::sdk::extension::Extension;
use crate::sdk::features::FEATURE_SHORTCUTS;
use crate::sdk::request::TerminalNotice;
use crate::sdk::services::{registration, MessageUpdate};
use crate::wire::{Notification, RequestId};

/// How long one registration waits for the host's answer.
const REGISTRATION_TIMEOUT: Duration = Duration::from_secs(10);

/// Notifications queued for the handler thread before new ones are dropped.
const EVENT_QUEUE: usize = 256;

/// What the handler thread runs.
pub(super) enum Event {
    Shortcut(String),
    Message(MessageUpdate),
    Terminal(TerminalNotice),
}

/// The Wave-1 state of a ready connection.
pub(super) struct HostNotifications {
    /// Shortcut ids the host admitted inside `initialize`.
    admitted: Arc<Mutex<HashSet<String>>>,
    events: Option<Sender<Event>>,
}

impl HostNotifications {
    /// Starts the handler thread when the extension has handlers.
    pub(super) fn start(
        ext: &Arc<Extension>,
        shared: &Arc<Shared>,
        session: &Arc<Session>,
    ) -> HostNotifications {
        let admitted = Arc::new(Mutex::new(HashSet::new()));
        if ext.shortcuts.is_empty() && ext.message_update.is_none() && ext.terminal.is_none() {
            return HostNotifications {
                admitted,
                events: None,
            };
        }
        let cx = Context::new(Arc::clone(shared), Arc::clone(session), None, Value::Null);
        let (tx, rx) = bounded::<Event>(EVENT_QUEUE);
        let ext = Arc::clone(ext);
        let spawned = thread::Builder::new()
            .name("octet-sdk-notifications".into())
            .spawn(move || {
                for event in rx {
                    let ran = panic::catch_unwind(AssertUnwindSafe(|| match &event {
                        Event::Shortcut(id) => {
                            if let Some(s) = ext.shortcuts.iter().find(|s| &s.id == id) {
                                (s.handler)(&cx);
                            }
                        }
                        Event::Message(update) => {
                            if let Some(handler) = &ext.message_update {
                                handler(update.clone(), &cx);
                            }
                        }
                        Event::Terminal(notice) => {
                            if let Some(handler) = &ext.terminal {
                                handler(notice.clone(), &cx);
                            }
                        }
                    }));
                    if ran.is_err() {
                        diagnostic(format_args!(
                            "a shortcut, message or terminal handler panicked"
                        ));
                    }
                }
            });
        HostNotifications {
            admitted,
            events: spawned.ok().map(|_| tx),
        }
    }

    /// True when `initialize` must wait for shortcut registrations.
    pub(super) fn registers(ext: &Extension, session: &Session) -> bool {
        session.has_feature(FEATURE_SHORTCUTS) && !ext.shortcuts.is_empty()
    }

    /// Registers every shortcut inside the `initialize` request `id`, one at a time,
    /// then answers it with `result` and runs `then`; on a thread of its own, since the reader must
    /// keep reading the answers.
    pub(super) fn register_then_answer(
        &self,
        ext: &Arc<Extension>,
        shared: &Arc<Shared>,
        id: RequestId,
        result: Value,
        then: impl FnOnce() + Send + 'static,
    ) {
        let ext = Arc::clone(ext);
        let shared = Arc::clone(shared);
        let admitted = Arc::clone(&self.admitted);
        let job = move || {
            if let RequestId::Number(parent) = id {
                for shortcut in &ext.shortcuts {
                    if register(&shared, parent, shortcut) {
                        admitted.lock().insert(shortcut.id.clone());
                    }
                }
            }
            shared.send_result(&id, &result);
            then();
        };
        if let Err(error) = thread::Builder::new()
            .name("octet-sdk-shortcuts".into())
            .spawn(job)
        {
            diagnostic(format_args!("no thread to register shortcuts: {error}"));
        }
    }

    /// Routes a Wave-1 notification; false when it is not one.
    pub(super) fn on_notification(&self, notification: &Notification) -> bool {
        let params = notification.params.clone().unwrap_or(Value::Null);
        let event = match notification.method.as_str() {
            "shortcut/trigger" => {
                let id = params.get("id").and_then(Value::as_str).unwrap_or_default();
                // A trigger for a shortcut the host did not admit fails closed.
                if !self.admitted.lock().contains(id) {
                    diagnostic(format_args!(
                        "ignoring a trigger of unadmitted shortcut {id:?}"
                    ));
                    return true;
                }
                Event::Shortcut(id.to_string())
            }
            "message/updated" => match MessageUpdate::parse(&params) {
                Ok(update) => Event::Message(update),
                Err(refusal) => {
                    diagnostic(format_args!("refusing a message/updated batch: {refusal}"));
                    return true;
                }
            },
            method => match TerminalNotice::parse(method, &params) {
                Some(notice) => Event::Terminal(notice),
                None => return false,
            },
        };
        if let Some(events) = &self.events {
            if events.try_send(event).is_err() {
                diagnostic(format_args!(
                    "the shortcut and message queue is full; dropped one"
                ));
            }
        }
        true
    }
}

/// Sends one `shortcut/register` and waits for the answer: true when admitted.
fn register(shared: &Shared, parent: u64, shortcut: &crate::sdk::extension::ShortcutEntry) -> bool {
    let Ok((id, answer)) = shared.begin_child() else {
        return false;
    };
    let params = Value::Object(registration(parent, shortcut));
    let Ok(frame) = shared.encode_request(&id, "shortcut/register", &params) else {
        shared.abandon_child(&id);
        return false;
    };
    if !shared.send_frame(frame) {
        shared.abandon_child(&id);
        return false;
    }
    match answer.recv_timeout(REGISTRATION_TIMEOUT) {
        Ok(Ok(_)) => true,
        Ok(Err(error)) => {
            diagnostic(format_args!(
                "shortcut {:?} was not admitted: {error}",
                shortcut.id
            ));
            false
        }
        Err(_) => {
            shared.abandon_child(&id);
            diagnostic(format_args!("shortcut {:?} got no answer", shortcut.id));
            false
        }
    }
}
