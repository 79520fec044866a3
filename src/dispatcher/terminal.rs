//! The terminal handoff's host state (section 2.24): one lease for the whole host, so
//! that the grant stays exclusive across every extension, and each connection's
//! [`TerminalGuard`] over it.
//!
//! A generation may acquire only while no grant is live and no acquire is waiting for
//! the frontend; only the holder may release. The grant ends when the holder releases
//! it, when the embedder revokes it (`terminal/grant-lost`, sent through
//! [`crate::ExtensionHandle::revoke_terminal`]), or when the holder's generation ends,
//! which the embedder hears as [`HostEvent::TerminalGrantLost`] so that it restores its
//! terminal. While the grant is live the holder gets no `ui/terminal-input` or
//! `ui/resize`.

use std::sync::Arc;

use parking_lot::Mutex;
use serde_json::Value;

use super::guard::{KindGuard, Placed};
use super::Dispatcher;
use crate::model::events::HostEvent;
use crate::services::bound::{Refusal, ServiceRefusal, ServiceRequest};
use crate::transport::ConnId;

/// Who holds the terminal, host-wide.
#[derive(Debug, Default)]
pub(crate) struct TerminalLease {
    /// The holder and the grant the frontend minted for it.
    holder: Option<(ConnId, String)>,
    /// A generation whose acquire waits for the frontend.
    acquiring: Option<ConnId>,
}

impl TerminalLease {
    /// True when `conn` holds the live grant.
    pub fn holds(&self, conn: ConnId) -> bool {
        self.holder
            .as_ref()
            .is_some_and(|(holder, _)| *holder == conn)
    }

    /// Ends `conn`'s grant, if it holds it, and forgets its waiting acquire: the grant
    /// id that ended.
    pub fn end(&mut self, conn: ConnId) -> Option<String> {
        if self.acquiring == Some(conn) {
            self.acquiring = None;
        }
        match self.holds(conn) {
            true => self.holder.take().map(|(_, grant)| grant),
            false => None,
        }
    }
}

/// One connection's view of the host-wide lease.
pub(crate) struct TerminalGuard {
    conn: ConnId,
    lease: Arc<Mutex<TerminalLease>>,
}

impl TerminalGuard {
    pub fn new(conn: ConnId, lease: Arc<Mutex<TerminalLease>>) -> TerminalGuard {
        TerminalGuard { conn, lease }
    }
}

impl KindGuard for TerminalGuard {
    fn admit(
        &mut self,
        request: &ServiceRequest,
        _placed: Placed,
        _pending: &[&str],
    ) -> Result<Option<String>, ServiceRefusal> {
        let mut lease = self.lease.lock();
        match request {
            ServiceRequest::TerminalAcquire(_) => {
                if lease.holds(self.conn) {
                    return Err(Refusal::InvalidRequest
                        .because("this process already holds the terminal grant"));
                }
                if lease.holder.is_some() || lease.acquiring.is_some() {
                    return Err(Refusal::InvalidRequest
                        .because("another extension holds the terminal, or is acquiring it"));
                }
                lease.acquiring = Some(self.conn);
                Ok(Some("acquire".into()))
            }
            ServiceRequest::TerminalRelease(_) => match lease.holds(self.conn) {
                true => Ok(Some("release".into())),
                false => Err(Refusal::InvalidRequest
                    .because("this process does not hold the current terminal grant")),
            },
            _ => Ok(None),
        }
    }

    fn settled(&mut self, key: String, result: Option<&mut Value>) {
        let mut lease = self.lease.lock();
        match key.as_str() {
            "acquire" => {
                if lease.acquiring == Some(self.conn) {
                    lease.acquiring = None;
                }
                let grant = result
                    .and_then(|r| r.get("grant_id"))
                    .and_then(Value::as_str);
                if let Some(grant) = grant {
                    lease.holder = Some((self.conn, grant.to_string()));
                }
            }
            "release" if result.is_some() => {
                lease.end(self.conn);
            }
            _ => {}
        }
    }

    fn initialize_settled(&mut self, _negotiated: bool) {}
}

impl Dispatcher {
    /// The generation on `conn` is going away: a grant it held ends, and the embedder
    /// hears it so it restores its terminal.
    pub(super) fn terminal_closed(&mut self, conn: ConnId) {
        let Some(grant_id) = self.terminal.lock().end(conn) else {
            return;
        };
        if let Some(c) = self.conns.get(&conn) {
            self.shared.events.emit(HostEvent::TerminalGrantLost {
                source: c.source.clone(),
                grant_id,
                reason: "the holder's generation ended".into(),
            });
        }
    }
}
