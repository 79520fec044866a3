//! Host-to-extension Wave-1 notifications (section 1.11): `shortcut/trigger` for
//! admitted shortcuts, and assistant-message deltas coalesced into `message/updated`
//! batches.
//!
//! A batch is emitted when it holds [`MESSAGE_BATCH_BYTES`] of text or
//! [`MESSAGE_BATCH_DELTAS`] deltas, when its oldest delta is [`MESSAGE_BATCH_INTERVAL`]
//! old, or when the message settles, whichever comes first. Each batch goes out once,
//! in order, as one notification `{"message_id", "delta", "deltas"}`; a delta is never
//! split between batches. `message/updated` is gated by `message_injection`, the
//! feature of the assistant-message surface (the reference names no other).

use std::time::Instant;

use serde_json::{json, Value};

use super::connection::Connection;
use super::guards::ShortcutBook;
use super::timers::Timer;
use super::Dispatcher;
use crate::limits::{
    MAX_GRANT_LOST_REASON_BYTES, MAX_HOST_NOTIFICATION_BYTES, MAX_MESSAGE_BATCH_DELTAS,
    MAX_MESSAGE_DELTA_BYTES, MAX_OUTBOUND_BACKLOG_BYTES, MAX_TERMINAL_INPUT_BYTES,
    MESSAGE_BATCH_BYTES, MESSAGE_BATCH_DELTAS, MESSAGE_BATCH_INTERVAL,
};
use crate::model::events::Diagnostic;
use crate::model::notify::{BoundNotification, NotifyError};
use crate::services::bound::{check_message_id, Refusal, ServiceKind, ServiceRefusal};
use crate::transport::{ConnId, OutboundFrame};
use crate::validate::encoded_len;

pub(super) mod batches;

use batches::Batch;

impl Dispatcher {
    /// Sends (or batches) a Wave-1 notification to the routed generation of
    /// `extension`; `generation`, when given, must be that generation.
    pub(super) fn on_notify(
        &mut self,
        extension: &str,
        generation: Option<u64>,
        notification: BoundNotification,
    ) -> Result<(), NotifyError> {
        let Some(&conn) = self.routes.get(extension) else {
            return Err(NotifyError::NotRunning {
                extension: extension.into(),
            });
        };
        let method = notification.method();
        let outcome = self.notify_conn(conn, generation, notification);
        if let (Err(NotifyError::Refused(refusal)), Some(c)) = (&outcome, self.conns.get(&conn)) {
            self.shared.events.diagnostic(
                &c.source,
                Diagnostic::Refused {
                    method: method.into(),
                    reason: refusal.to_string(),
                },
            );
        }
        outcome
    }

    fn notify_conn(
        &mut self,
        conn: ConnId,
        generation: Option<u64>,
        notification: BoundNotification,
    ) -> Result<(), NotifyError> {
        let refused = |refusal: ServiceRefusal| Err(NotifyError::Refused(refusal));
        let c = self
            .conns
            .get_mut(&conn)
            .expect("routes name live connections");
        if let Some(expected) = generation.filter(|g| *g != c.source.generation) {
            return refused(Refusal::InvalidRequest.because(format!(
                "generation {expected} is stale; generation {} is current",
                c.source.generation
            )));
        }
        // The notification table names the feature that gates each one.
        let feature = notification.notification().feature();
        if !c.features().contains(feature) {
            return refused(
                Refusal::UnsupportedFeature.because(format!("{feature} was not negotiated")),
            );
        }
        match notification {
            BoundNotification::ShortcutTrigger { id } => {
                // Unknown, refused or stale registrations fail closed (section 1.11).
                let book = c.guards.get::<ShortcutBook>(ServiceKind::Shortcuts);
                if !book.is_some_and(|book| book.is_admitted(&id)) {
                    return refused(Refusal::InvalidRequest.because(format!(
                        "shortcut `{id}` is not admitted in generation {}",
                        c.source.generation
                    )));
                }
                self.send_notification(conn, "shortcut/trigger", json!({ "id": id }))
            }
            BoundNotification::MessageDeltas { message_id, deltas } => {
                check_message_id(&message_id).map_err(NotifyError::Refused)?;
                if deltas.len() > MAX_MESSAGE_BATCH_DELTAS {
                    return refused(Refusal::BoundsExceeded.because(format!(
                        "{} deltas at once; at most {MAX_MESSAGE_BATCH_DELTAS}",
                        deltas.len()
                    )));
                }
                if let Some(big) = deltas.iter().find(|d| d.len() > MAX_MESSAGE_DELTA_BYTES) {
                    return refused(Refusal::BoundsExceeded.because(format!(
                        "a delta of {} bytes; at most {MAX_MESSAGE_DELTA_BYTES}",
                        big.len()
                    )));
                }
                self.push_deltas(conn, &message_id, deltas)
            }
            BoundNotification::MessageSettled { message_id } => {
                check_message_id(&message_id).map_err(NotifyError::Refused)?;
                self.flush_message(conn, &message_id)
            }
            BoundNotification::TerminalGrantLost { reason } => {
                if reason.len() > MAX_GRANT_LOST_REASON_BYTES {
                    return refused(Refusal::BoundsExceeded.because(format!(
                        "a reason of {} bytes; at most {MAX_GRANT_LOST_REASON_BYTES}",
                        reason.len()
                    )));
                }
                if self.terminal.lock().end(conn).is_none() {
                    return refused(Refusal::InvalidRequest.because(format!(
                        "generation {} holds no terminal grant",
                        c.source.generation
                    )));
                }
                self.send_notification(conn, "terminal/grant-lost", json!({ "reason": reason }))
            }
            BoundNotification::TerminalInput { .. } | BoundNotification::Resize { .. } => {
                if self.terminal.lock().holds(conn) {
                    return refused(Refusal::InvalidRequest.because(
                        "the extension holds the terminal grant: it reads the tty itself",
                    ));
                }
                let (method, params) = match notification {
                    BoundNotification::TerminalInput { data } => {
                        if data.len() > MAX_TERMINAL_INPUT_BYTES {
                            return refused(Refusal::BoundsExceeded.because(format!(
                                "{} bytes of input; at most {MAX_TERMINAL_INPUT_BYTES}",
                                data.len()
                            )));
                        }
                        ("ui/terminal-input", json!({ "data": data }))
                    }
                    BoundNotification::Resize { columns, rows } => {
                        ("ui/resize", json!({ "columns": columns, "rows": rows }))
                    }
                    _ => unreachable!("matched above"),
                };
                self.send_notification(conn, method, params)
            }
        }
    }

    /// Adds one control line's deltas to the open batch of `message_id`, sending each
    /// batch they fill. The line is accepted whole or refused whole: every batch it
    /// fills is encoded and checked before any is sent, and a refused line leaves the
    /// open batch as it was.
    fn push_deltas(
        &mut self,
        conn: ConnId,
        message_id: &str,
        deltas: Vec<String>,
    ) -> Result<(), NotifyError> {
        let c = self.conns.get_mut(&conn).expect("connection is live");
        refuse_if_not_reading(c, "message/updated")?;
        let open = c.messages.open.get(message_id);
        let (mut text, mut count) = open.map_or((String::new(), 0), |b| (b.text.clone(), b.deltas));
        let mut seq = open.map(|b| b.seq);
        let mut frames = Vec::new();
        for delta in deltas {
            text.push_str(&delta);
            count += 1;
            if text.len() >= MESSAGE_BATCH_BYTES || count >= MESSAGE_BATCH_DELTAS {
                let params = json!({"message_id": message_id, "delta": text, "deltas": count});
                frames.push(services_frame(c, "message/updated", &params)?);
                text.clear();
                count = 0;
                seq = None;
            }
        }
        for frame in frames {
            c.push_frame(frame);
        }
        let books = &mut c.messages;
        if count == 0 {
            books.open.remove(message_id);
            return Ok(());
        }
        let seq = match seq {
            Some(seq) => seq,
            None => {
                // A new batch: its interval starts with its first delta.
                books.next_seq += 1;
                self.timers.schedule(
                    Instant::now() + MESSAGE_BATCH_INTERVAL,
                    Timer::MessageBatch {
                        conn,
                        seq: books.next_seq,
                    },
                );
                books.next_seq
            }
        };
        books.open.insert(
            message_id.to_string(),
            Batch {
                text,
                deltas: count,
                seq,
            },
        );
        Ok(())
    }

    /// Sends the open batch of `message_id`, if any.
    fn flush_message(&mut self, conn: ConnId, message_id: &str) -> Result<(), NotifyError> {
        let Some(c) = self.conns.get_mut(&conn) else {
            return Ok(());
        };
        let Some(batch) = c.messages.open.remove(message_id) else {
            return Ok(());
        };
        let params = json!({"message_id": message_id, "delta": batch.text, "deltas": batch.deltas});
        self.send_notification(conn, "message/updated", params)
    }

    /// A batch's interval elapsed: send it unless it went out already.
    pub(super) fn on_message_batch_timer(&mut self, conn: ConnId, seq: u64) {
        let Some(c) = self.conns.get(&conn) else {
            return;
        };
        let due = c
            .messages
            .open
            .iter()
            .find(|(_, batch)| batch.seq == seq)
            .map(|(id, _)| id.clone());
        if let Some(message_id) = due {
            if let Err(error) = self.flush_message(conn, &message_id) {
                let source = self.conns[&conn].source.clone();
                self.shared.events.diagnostic(
                    &source,
                    Diagnostic::Refused {
                        method: "message/updated".into(),
                        reason: error.to_string(),
                    },
                );
            }
        }
    }

    /// Writes a Wave-1 notification: a bounded plain object (section 1.11).
    fn send_notification(
        &mut self,
        conn: ConnId,
        method: &str,
        params: Value,
    ) -> Result<(), NotifyError> {
        let c = self.conns.get_mut(&conn).expect("connection is live");
        refuse_if_not_reading(c, method)?;
        let frame = services_frame(c, method, &params)?;
        c.push_frame(frame);
        Ok(())
    }
}

/// Refuses a Wave-1 notification for an extension that is not reading its stdin (its
/// outbound backlog is over the bound), instead of queueing it.
fn refuse_if_not_reading(c: &Connection, method: &str) -> Result<(), NotifyError> {
    match c.outbound_full() {
        true => Err(NotifyError::Refused(Refusal::BoundsExceeded.because(
            format!(
                "the extension is not reading its stdin (over {MAX_OUTBOUND_BACKLOG_BYTES} \
                 bytes wait to be written to it); {method} was not sent"
            ),
        ))),
        false => Ok(()),
    }
}

/// A Wave-1 notification encoded as a frame, refused when its payload is over the bound
/// or cannot be encoded.
fn services_frame(
    c: &Connection,
    method: &str,
    params: &Value,
) -> Result<OutboundFrame, NotifyError> {
    let size = encoded_len(params);
    if size > MAX_HOST_NOTIFICATION_BYTES {
        return Err(NotifyError::Refused(Refusal::BoundsExceeded.because(
            format!("a {method} payload of {size} bytes; at most {MAX_HOST_NOTIFICATION_BYTES}"),
        )));
    }
    match c.encode_notification(method, params) {
        Ok(bytes) => Ok(OutboundFrame {
            bytes,
            state: None,
            wipe: false,
        }),
        Err(e) => Err(NotifyError::Refused(
            Refusal::BoundsExceeded.because(format!("{method} cannot be sent: {e}")),
        )),
    }
}
