//! The Wave-1 service traits an embedder implements (sections 2.19-2.23), one per
//! feature, and how each is routed from a validated request.
//!
//! Every method gets the [`ServiceCall`] (who asks, the derived owner, a cancellation
//! flag), the typed, validated params, and a [`Reply`] to answer exactly once. It runs
//! on a thread of its own, never the dispatcher's: a method may block (ask a person,
//! wait for an editor) or keep the reply and answer later from another thread.

use std::sync::Arc;

use serde_json::Value;

use super::call::{ComposerText, EntryId, RawReply, Reply, ServiceCall};
use super::refusal::Refusal;
use super::request::{MessageRole, ServiceRequest, Shortcut};

/// The host-owned composer (section 2.19, feature `composer`). Texts are checked
/// before the service sees them, and the text `get` returns is checked the same way
/// ([`crate::limits::MAX_COMPOSER_TEXT_BYTES`], no terminal control characters).
pub trait ComposerService: Send + Sync + 'static {
    /// `composer/get`: the composer's whole text.
    fn get(&self, call: ServiceCall, reply: Reply<ComposerText>);
    /// `composer/set`: replaces the whole text. Refuse (for example with
    /// [`Refusal::InvalidRequest`]) while another editor owns the composer.
    fn set(&self, call: ServiceCall, text: String, reply: Reply<()>);
    /// `composer/insert`: inserts `text` at the composer's cursor.
    fn insert(&self, call: ServiceCall, text: String, reply: Reply<()>);
}

/// Runtime shortcuts (section 2.20, feature `shortcuts`). Only registrations sent
/// inside the `initialize` request reach the service, at most
/// [`crate::limits::MAX_SHORTCUTS`] per generation; a duplicate id is refused by the
/// runtime and makes that id unavailable. A registration the service answers `ok` while
/// `initialize` is still pending is admitted: [`crate::ExtensionHandle::trigger_shortcut`]
/// then reaches it for that generation only.
pub trait ShortcutService: Send + Sync + 'static {
    /// `shortcut/register`: bind `shortcut.key` so that pressing it triggers it.
    fn register(&self, call: ServiceCall, shortcut: Shortcut, reply: Reply<()>);
}

/// Session entries, name and labels (section 2.21, feature `session_entries`).
pub trait SessionEntryService: Send + Sync + 'static {
    /// `session/append_entry`: store `data` durably and return the new entry's id.
    fn append_entry(
        &self,
        call: ServiceCall,
        entry_type: String,
        data: Value,
        reply: Reply<EntryId>,
    );
    /// `session/set_name`; an empty name clears it.
    fn set_name(&self, call: ServiceCall, name: String, reply: Reply<()>);
    /// `session/set_label`; an empty label clears it.
    fn set_label(&self, call: ServiceCall, entry_id: String, label: String, reply: Reply<()>);
}

/// Message injection (section 2.22, feature `message_injection`). Answer `ok` once the
/// injection is admitted.
pub trait MessageInjectionService: Send + Sync + 'static {
    /// `session/send_message`: an `assistant` or `system` message.
    fn send_message(&self, call: ServiceCall, role: MessageRole, text: String, reply: Reply<()>);
    /// `session/send_user_message`: a message as if the user had typed it.
    fn send_user_message(&self, call: ServiceCall, text: String, reply: Reply<()>);
}

/// The active tool set (section 2.23, feature `active_tools`). A host that cannot
/// apply the set must refuse ([`Refusal::UnsupportedFeature`]) rather than accept it.
pub trait ActiveToolsService: Send + Sync + 'static {
    /// `tools/set_active`: `names` is the complete replacement set.
    fn set_active(&self, call: ServiceCall, names: Vec<String>, reply: Reply<()>);
}

/// A bound feature as the runtime drives it: one validated request and its reply.
/// The embedder's traits are routed through it; `serve` forwards through it to its
/// client.
pub(crate) trait RawService: Send + Sync + 'static {
    fn serve(&self, call: ServiceCall, request: ServiceRequest, reply: RawReply);
}

/// Routes requests of one feature to one of the traits above.
pub(crate) struct Routed<S: ?Sized>(pub Arc<S>);

/// A request that reached a binding of another feature: the runtime never routes one
/// there, so this refuses instead of guessing.
fn misrouted(request: &ServiceRequest, reply: RawReply) {
    reply.refuse(
        Refusal::UnsupportedFeature.because(format!("{} is not bound here", request.method())),
    );
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
