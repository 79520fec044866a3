//! The services an extension asks of the host's session and its UI: the composer,
//! shortcuts, session entries, message injection and the active tool set (features of
//! sections 2.19-2.23), and session lifecycle (an API 0.3 capability). One trait per
//! kind, and how each is routed from a validated request.
//!
//! Every method gets the [`ServiceCall`] (who asks, the derived owner, a cancellation
//! flag), the typed, validated params, and a [`Reply`] to answer exactly once. It runs
//! on a thread of its own, never the dispatcher's: a method may block (ask a person,
//! wait for an editor) or keep the reply and answer later from another thread. Every
//! method has a default body that refuses `unsupported_feature`, so a binding written
//! before a method was added keeps compiling and refuses the new method.

use serde_json::Value;

use super::call::{ComposerText, EntryId, RawReply, Reply, ServiceCall};
use super::provider_models::SessionId;
use super::request::{MessageRole, ServiceRequest, Shortcut};
use super::route::{misrouted, RawService, Routed};

/// The host-owned composer (section 2.19, feature `composer`). Texts are checked
/// before the service sees them, and the text `get` returns is checked the same way
/// ([`crate::limits::MAX_COMPOSER_TEXT_BYTES`], no terminal control characters).
#[allow(unused_variables)] // default bodies refuse without reading the params
pub trait ComposerService: Send + Sync + 'static {
    /// `composer/get`: the composer's whole text.
    fn get(&self, call: ServiceCall, reply: Reply<ComposerText>) {
        reply.unsupported(&call);
    }
    /// `composer/set`: replaces the whole text. Refuse (for example with
    /// [`Refusal::InvalidRequest`](super::Refusal::InvalidRequest)) while another editor owns the composer.
    fn set(&self, call: ServiceCall, text: String, reply: Reply<()>) {
        reply.unsupported(&call);
    }
    /// `composer/insert`: inserts `text` at the composer's cursor.
    fn insert(&self, call: ServiceCall, text: String, reply: Reply<()>) {
        reply.unsupported(&call);
    }
}

/// Runtime shortcuts (section 2.20, feature `shortcuts`). Only registrations sent
/// inside the `initialize` request reach the service, at most
/// [`crate::limits::MAX_SHORTCUTS`] per generation; a duplicate id is refused by the
/// runtime and makes that id unavailable. A registration the service answers `ok` while
/// `initialize` is still pending is admitted: [`crate::ExtensionHandle::trigger_shortcut`]
/// then reaches it for that generation only.
#[allow(unused_variables)] // default bodies refuse without reading the params
pub trait ShortcutService: Send + Sync + 'static {
    /// `shortcut/register`: bind `shortcut.key` so that pressing it triggers it.
    fn register(&self, call: ServiceCall, shortcut: Shortcut, reply: Reply<()>) {
        reply.unsupported(&call);
    }
}

/// Session entries, name and labels (section 2.21, feature `session_entries`).
#[allow(unused_variables)] // default bodies refuse without reading the params
pub trait SessionEntryService: Send + Sync + 'static {
    /// `session/append_entry`: store `data` durably and return the new entry's id.
    fn append_entry(
        &self,
        call: ServiceCall,
        entry_type: String,
        data: Value,
        reply: Reply<EntryId>,
    ) {
        reply.unsupported(&call);
    }
    /// `session/set_name`; an empty name clears it.
    fn set_name(&self, call: ServiceCall, name: String, reply: Reply<()>) {
        reply.unsupported(&call);
    }
    /// `session/set_label`; an empty label clears it.
    fn set_label(&self, call: ServiceCall, entry_id: String, label: String, reply: Reply<()>) {
        reply.unsupported(&call);
    }
}

/// Message injection (section 2.22, feature `message_injection`). Answer `ok` once the
/// injection is admitted.
#[allow(unused_variables)] // default bodies refuse without reading the params
pub trait MessageInjectionService: Send + Sync + 'static {
    /// `session/send_message`: an `assistant` or `system` message.
    fn send_message(&self, call: ServiceCall, role: MessageRole, text: String, reply: Reply<()>) {
        reply.unsupported(&call);
    }
    /// `session/send_user_message`: a message as if the user had typed it.
    fn send_user_message(&self, call: ServiceCall, text: String, reply: Reply<()>) {
        reply.unsupported(&call);
    }
}

/// The active tool set (section 2.23, feature `active_tools`). A host that cannot
/// apply the set must refuse ([`Refusal::UnsupportedFeature`](super::Refusal::UnsupportedFeature)) rather than accept it.
#[allow(unused_variables)] // default bodies refuse without reading the params
pub trait ActiveToolsService: Send + Sync + 'static {
    /// `tools/set_active`: `names` is the complete replacement set.
    fn set_active(&self, call: ServiceCall, names: Vec<String>, reply: Reply<()>) {
        reply.unsupported(&call);
    }
}

impl RawService for Routed<dyn ComposerService> {
    fn serve(&self, call: ServiceCall, request: ServiceRequest, reply: RawReply) {
        match request {
            ServiceRequest::ComposerGet => self.0.get(call, Reply::new(reply)),
            ServiceRequest::ComposerSet { text } => self.0.set(call, text, Reply::new(reply)),
            ServiceRequest::ComposerInsert { text } => self.0.insert(call, text, Reply::new(reply)),
            other => misrouted(&other, reply),
        }
    }
}

impl RawService for Routed<dyn ShortcutService> {
    fn serve(&self, call: ServiceCall, request: ServiceRequest, reply: RawReply) {
        match request {
            ServiceRequest::ShortcutRegister(shortcut) => {
                self.0.register(call, shortcut, Reply::new(reply))
            }
            other => misrouted(&other, reply),
        }
    }
}

impl RawService for Routed<dyn SessionEntryService> {
    fn serve(&self, call: ServiceCall, request: ServiceRequest, reply: RawReply) {
        match request {
            ServiceRequest::SessionAppendEntry { entry_type, data } => {
                self.0
                    .append_entry(call, entry_type, data, Reply::new(reply))
            }
            ServiceRequest::SessionSetName { name } => {
                self.0.set_name(call, name, Reply::new(reply))
            }
            ServiceRequest::SessionSetLabel { entry_id, label } => {
                self.0.set_label(call, entry_id, label, Reply::new(reply))
            }
            other => misrouted(&other, reply),
        }
    }
}

impl RawService for Routed<dyn MessageInjectionService> {
    fn serve(&self, call: ServiceCall, request: ServiceRequest, reply: RawReply) {
        match request {
            ServiceRequest::SessionSendMessage { role, text } => {
                self.0.send_message(call, role, text, Reply::new(reply))
            }
            ServiceRequest::SessionSendUserMessage { text } => {
                self.0.send_user_message(call, text, Reply::new(reply))
            }
            other => misrouted(&other, reply),
        }
    }
}

impl RawService for Routed<dyn ActiveToolsService> {
    fn serve(&self, call: ServiceCall, request: ServiceRequest, reply: RawReply) {
        match request {
            ServiceRequest::ToolsSetActive { names } => {
                self.0.set_active(call, names, Reply::new(reply))
            }
            other => misrouted(&other, reply),
        }
    }
}

/// `session_lifecycle` (API 0.3): the extension asks for session changes.
#[allow(unused_variables)] // default bodies refuse without reading the params
pub trait SessionLifecycleService: Send + Sync + 'static {
    /// `session/create`: a new session.
    fn create(&self, call: ServiceCall, reply: Reply<SessionId>) {
        reply.unsupported(&call);
    }
    /// `session/fork`: a fork of the current session.
    fn fork(&self, call: ServiceCall, reply: Reply<SessionId>) {
        reply.unsupported(&call);
    }
    /// `session/reload`: the current session, reopened.
    fn reload(&self, call: ServiceCall, reply: Reply<SessionId>) {
        reply.unsupported(&call);
    }
    /// `session/switch`: make `session_id` current.
    fn switch(&self, call: ServiceCall, session_id: String, reply: Reply<SessionId>) {
        reply.unsupported(&call);
    }
}

impl RawService for Routed<dyn SessionLifecycleService> {
    fn serve(&self, call: ServiceCall, request: ServiceRequest, reply: RawReply) {
        match request {
            ServiceRequest::SessionCreate => self.0.create(call, Reply::new(reply)),
            ServiceRequest::SessionFork => self.0.fork(call, Reply::new(reply)),
            ServiceRequest::SessionReload => self.0.reload(call, Reply::new(reply)),
            ServiceRequest::SessionSwitch { session_id } => {
                self.0.switch(call, session_id, Reply::new(reply))
            }
            other => misrouted(&other, reply),
        }
    }
}
