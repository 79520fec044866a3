//! API 0.3 provider streams (`provider_stream`): the host opens a stream with
//! `provider/stream`; the extension answers whether it accepted it and then sends
//! `provider/event` notifications with a strictly increasing `sequence` until a
//! `finished` or `error` event; the host may end it early with `provider/cancel`.
//!
//! Events reach the caller over the stream's bounded channel, never blocking the
//! dispatcher: when the caller reads too slowly, further events are dropped with a
//! diagnostic (the `sequence` gap shows it). A stream ends, and its channel closes, on
//! its terminal event, a refusal, a cancel, or the end of its generation.

use std::collections::HashMap;

use crossbeam_channel::{Sender, TrySendError};
use serde_json::{json, Value};

use super::Dispatcher;
use crate::model::events::Diagnostic;
use crate::transport::{ConnId, OutboundFrame};
use crate::validate::host_driven::{self, ProviderEvent};

/// One open stream.
struct Stream {
    events: Sender<ProviderEvent>,
    last_sequence: Option<u64>,
}

/// The open streams of one generation, by `stream_id`.
#[derive(Default)]
pub(crate) struct ProviderStreams {
    open: HashMap<String, Stream>,
}

impl ProviderStreams {
    /// Opens `stream_id`, whose events go to `events`.
    pub fn open(&mut self, stream_id: String, events: Sender<ProviderEvent>) {
        self.open.insert(
            stream_id,
            Stream {
                events,
                last_sequence: None,
            },
        );
    }

    /// Closes `stream_id`; true when it was open.
    pub fn close(&mut self, stream_id: &str) -> bool {
        self.open.remove(stream_id).is_some()
    }
}

impl Dispatcher {
    /// A `provider/event` notification: validated (closed model, an open stream, a
    /// strictly increasing sequence) and delivered; anything else is dropped with a
    /// diagnostic.
    pub(super) fn on_provider_event(&mut self, conn: ConnId, params: &Value) {
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        let source = c.source.clone();
        let outcome = match host_driven::provider_event(params) {
            Err(e) => Err(e.to_string()),
            Ok(event) => match c.streams.open.get_mut(&event.stream_id) {
                None => Err(format!("stream {:?} is not open", event.stream_id)),
                Some(stream) if stream.last_sequence.is_some_and(|l| event.sequence <= l) => {
                    Err(format!(
                        "sequence {} does not increase for stream {:?}",
                        event.sequence, event.stream_id
                    ))
                }
                Some(stream) => {
                    stream.last_sequence = Some(event.sequence);
                    let (stream_id, terminal) = (event.stream_id.clone(), event.kind.is_terminal());
                    let delivered = match stream.events.try_send(event) {
                        Ok(()) => Ok(()),
                        Err(TrySendError::Full(_)) => {
                            Err("the caller reads too slowly; the event was dropped".into())
                        }
                        // Nobody listens any more: the stream is over for the host.
                        Err(TrySendError::Disconnected(_)) => Ok(()),
                    };
                    if terminal {
                        c.streams.close(&stream_id);
                    }
                    delivered
                }
            },
        };
        if let Err(reason) = outcome {
            self.shared.events.diagnostic(
                &source,
                Diagnostic::Refused {
                    method: "provider/event".into(),
                    reason,
                },
            );
        }
    }

    /// Ends `stream_id` of `extension`'s routed generation early: `provider/cancel`
    /// goes to the extension and the caller's channel closes.
    pub(super) fn cancel_stream(&mut self, extension: &str, stream_id: &str) {
        let conns: Vec<ConnId> = self
            .conns
            .values()
            .filter(|c| c.source.extension == extension && c.streams.open.contains_key(stream_id))
            .map(|c| c.conn)
            .collect();
        for conn in conns {
            let c = self.conns.get_mut(&conn).expect("listed above");
            c.streams.close(stream_id);
            let params = json!({"stream_id": stream_id, "reason": "cancelled"});
            if let Ok(bytes) = c.encode_notification("provider/cancel", &params) {
                c.push_frame(OutboundFrame {
                    bytes,
                    state: None,
                    wipe: false,
                });
            }
        }
    }
}
