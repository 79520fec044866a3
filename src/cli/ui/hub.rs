//! Where serve's output lines go under `octet-host ui`: a reply to a line the page
//! posted goes back to that request; every other line goes to every open event stream
//! and into the session's recording.
//!
//! Nothing here waits for a browser. Each stream has a queue of its own of
//! [`TAB_QUEUE_LINES`] lines and [`TAB_QUEUE_BYTES`] bytes; a tab whose queue is full
//! is dropped (its stream ends, and the page reconnects). Lines are shared between tabs (`Arc<str>`), so ten tabs cost
//! little more than one. The recording is a ring of at most [`RECORDED_LINES`] lines
//! and [`RECORDED_BYTES`] bytes, oldest first out.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender, TrySendError};
use parking_lot::Mutex;
use serde_json::Value;

/// Lines waiting for one tab's event stream.
pub(crate) const TAB_QUEUE_LINES: usize = 4096;
/// Bytes waiting for one tab's event stream.
pub(crate) const TAB_QUEUE_BYTES: usize = 16 * 1024 * 1024;
/// Lines the session's recording keeps.
pub(crate) const RECORDED_LINES: usize = 20_000;
/// Bytes the session's recording keeps.
pub(crate) const RECORDED_BYTES: usize = 64 * 1024 * 1024;

/// The hub of one `ui` session.
#[derive(Default)]
pub(crate) struct Hub {
    state: Mutex<State>,
}

/// The sending end of one tab's queue.
struct Tab {
    lines: Sender<Arc<str>>,
    /// Bytes queued and not yet taken by the tab's stream.
    queued: Arc<AtomicUsize>,
}

/// The receiving end of one tab's queue.
pub(crate) struct TabLines {
    lines: Receiver<Arc<str>>,
    queued: Arc<AtomicUsize>,
}

impl TabLines {
    /// The next line, waiting at most `timeout`.
    pub fn recv_timeout(&self, timeout: Duration) -> Result<Arc<str>, RecvTimeoutError> {
        let line = self.lines.recv_timeout(timeout)?;
        self.queued.fetch_sub(line.len(), Ordering::AcqRel);
        Ok(line)
    }
}

#[derive(Default)]
struct State {
    tabs: Vec<Tab>,
    /// Replies waited for, by the id the hub gave the posted line.
    waiting: HashMap<String, Sender<Value>>,
    next_id: u64,
    recorded: VecDeque<Arc<str>>,
    recorded_bytes: usize,
}

impl Hub {
    /// A new event stream: the lines written from now on.
    pub fn subscribe(&self) -> TabLines {
        let (sender, receiver) = crossbeam_channel::bounded(TAB_QUEUE_LINES);
        let queued = Arc::new(AtomicUsize::new(0));
        self.state.lock().tabs.push(Tab {
            lines: sender,
            queued: queued.clone(),
        });
        TabLines {
            lines: receiver,
            queued,
        }
    }

    /// How many event streams are open.
    #[cfg(test)]
    pub fn tabs(&self) -> usize {
        self.state.lock().tabs.len()
    }

    /// An id for a posted line, and where its reply will arrive.
    pub fn expect_reply(&self) -> (String, Receiver<Value>) {
        let (sender, receiver) = crossbeam_channel::bounded(1);
        let mut state = self.state.lock();
        state.next_id += 1;
        let id = format!("ui-{}", state.next_id);
        state.waiting.insert(id.clone(), sender);
        (id, receiver)
    }

    /// Forgets the reply to `id` (its request gave up).
    pub fn forget(&self, id: &str) {
        self.state.lock().waiting.remove(id);
    }

    /// Records a line the page posted, as `{"type":"control","line":...}`.
    pub fn record_control(&self, line: &Value) {
        let text: Arc<str> = serde_json::json!({"type": "control", "line": line})
            .to_string()
            .into();
        self.state.lock().record(text);
    }

    /// One line serve wrote.
    pub fn line(&self, text: &str) {
        // serve writes compact JSON, so only a line holding `"type":"reply"` can be a
        // reply: the others (a trace line may be a megabyte) are passed on unparsed.
        let reply = memchr::memmem::find(text.as_bytes(), br#""type":"reply""#)
            .and_then(|_| serde_json::from_str::<Value>(text).ok())
            .filter(|value| value["type"] == "reply");
        let mut state = self.state.lock();
        if let Some(reply) = reply {
            if let Some(waiter) = reply["id"].as_str().and_then(|id| state.waiting.remove(id)) {
                let _ = waiter.try_send(reply);
                return;
            }
        }
        let shared: Arc<str> = text.into();
        state.record(shared.clone());
        // A tab that does not keep up is dropped, never waited on.
        state.tabs.retain(|tab| {
            let queued = tab.queued.fetch_add(shared.len(), Ordering::AcqRel) + shared.len();
            if queued > TAB_QUEUE_BYTES {
                return false;
            }
            match tab.lines.try_send(shared.clone()) {
                Ok(()) => true,
                Err(TrySendError::Full(_)) | Err(TrySendError::Disconnected(_)) => false,
            }
        });
    }

    /// The recording, oldest first, as JSON lines.
    pub fn recording(&self) -> String {
        // The lines are shared: the lock is held to clone the ring, not to copy text,
        // so serve's output never waits for a download.
        let (lines, bytes): (Vec<Arc<str>>, usize) = {
            let state = self.state.lock();
            (
                state.recorded.iter().cloned().collect(),
                state.recorded_bytes,
            )
        };
        let mut text = String::with_capacity(bytes + lines.len());
        for line in &lines {
            text.push_str(line);
            text.push('\n');
        }
        text
    }

    /// serve ended: every stream ends, every waiting request is answered by its end.
    pub fn close(&self) {
        let mut state = self.state.lock();
        state.tabs.clear();
        state.waiting.clear();
    }
}

impl State {
    fn record(&mut self, line: Arc<str>) {
        self.recorded_bytes += line.len();
        self.recorded.push_back(line);
        while self.recorded.len() > RECORDED_LINES || self.recorded_bytes > RECORDED_BYTES {
            match self.recorded.pop_front() {
                Some(old) => self.recorded_bytes -= old.len(),
                None => break,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_goes_to_its_request_and_everything_else_to_every_tab() {
        let hub = Hub::default();
        let tab = hub.subscribe();
        let (id, reply) = hub.expect_reply();
        hub.line(&format!(r#"{{"type":"reply","id":"{id}","ok":true}}"#));
        assert_eq!(reply.try_recv().unwrap()["ok"], true);
        assert!(
            tab.recv_timeout(Duration::ZERO).is_err(),
            "a posted line's reply is not broadcast"
        );
        hub.line(r#"{"type":"event","event":"state"}"#);
        assert!(tab.recv_timeout(Duration::ZERO).unwrap().contains("state"));
        assert!(hub.recording().contains(r#""event":"state""#));
    }

    #[test]
    fn a_tab_that_does_not_keep_up_is_dropped_and_the_others_stay() {
        let hub = Hub::default();
        let stalled = hub.subscribe();
        let reading = hub.subscribe();
        for n in 0..TAB_QUEUE_LINES + 1 {
            hub.line(&format!(r#"{{"type":"event","n":{n}}}"#));
            let _ = reading.recv_timeout(Duration::ZERO);
        }
        assert_eq!(hub.tabs(), 1);
        // The stalled tab keeps what it had, then its stream ends.
        let mut kept = 0;
        while stalled.recv_timeout(Duration::ZERO).is_ok() {
            kept += 1;
        }
        assert_eq!(kept, TAB_QUEUE_LINES);
        assert_eq!(
            stalled.recv_timeout(Duration::ZERO),
            Err(RecvTimeoutError::Disconnected)
        );
    }

    #[test]
    fn a_tab_is_dropped_past_its_bytes_too() {
        let hub = Hub::default();
        let stalled = hub.subscribe();
        let big = format!(r#"{{"type":"event","pad":"{}"}}"#, "x".repeat(1024 * 1024));
        for _ in 0..TAB_QUEUE_BYTES / (1024 * 1024) + 1 {
            hub.line(&big);
        }
        assert_eq!(hub.tabs(), 0);
        drop(stalled);
    }

    #[test]
    fn the_recording_is_bounded() {
        let hub = Hub::default();
        for n in 0..RECORDED_LINES + 5 {
            hub.line(&format!(r#"{{"type":"event","n":{n}}}"#));
        }
        let recording = hub.recording();
        assert_eq!(recording.lines().count(), RECORDED_LINES);
        assert!(recording.starts_with(r#"{"type":"event","n":5}"#));
    }
}
