//! serve's wire trace (`serve --wire-trace`, [`super::ServeOptions::wire_trace`]): every
//! frame to and from every extension as a `trace` output line, with its direction, its
//! time, and for a response the request it answers and the latency.
//!
//! The dispatcher hands each frame to a bounded queue and never waits: a frame that
//! finds the queue full is dropped and counted in the next line's `dropped`. A thread
//! of its own pairs responses with their requests, builds the lines and waits for
//! serve's output. Frames that may carry a secret are withheld (`frame` is `null`,
//! `withheld` is true), as the library's `wire_trace` withholds them.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

use serde_json::{json, Value};

use super::io::Emitter;
use crate::limits::{TRACE_OPEN_REQUESTS, TRACE_QUEUE_FRAMES};
use crate::model::trace::{WireDirection, WireFrame};

/// The wire trace's sink, as serve hands it to the host builder.
pub(crate) type Sink = Box<dyn Fn(&WireFrame<'_>) + Send + Sync>;

/// One frame as the dispatcher handed it over.
struct Traced {
    extension: String,
    generation: u64,
    direction: WireDirection,
    at: Instant,
    text: Option<String>,
}

/// A request waiting for its response: which generation, which way it went, its id.
type OpenKey = (String, u64, WireDirection, String);

/// The forwarder thread; [`Tracer::finish`] ends it.
pub(crate) struct Tracer {
    stop: crossbeam_channel::Sender<()>,
    thread: JoinHandle<()>,
}

impl Tracer {
    /// Writes the frames still queued and ends the thread (the host is gone, so no
    /// frame comes any more).
    pub fn finish(self) {
        drop(self.stop);
        let _ = self.thread.join();
    }
}

/// Starts the forwarder writing to `out`; returns the sink to give the host builder
/// and the forwarder.
pub(crate) fn start(
    out: Emitter,
) -> std::io::Result<(impl Fn(&WireFrame<'_>) + Send + Sync + 'static, Tracer)> {
    let (frames, received) = crossbeam_channel::bounded::<Traced>(TRACE_QUEUE_FRAMES);
    let dropped = Arc::new(AtomicU64::new(0));
    let counted = dropped.clone();
    let sink = move |frame: &WireFrame<'_>| {
        let traced = Traced {
            extension: frame.source.extension.clone(),
            generation: frame.source.generation,
            direction: frame.direction,
            at: frame.at,
            text: frame.text.map(str::to_owned),
        };
        if frames.try_send(traced).is_err() {
            counted.fetch_add(1, Ordering::Relaxed);
        }
    };
    let started = Instant::now();
    let (stop, stopped) = crossbeam_channel::bounded::<()>(0);
    let thread = std::thread::Builder::new()
        .name("octet-serve-trace".into())
        .spawn(move || {
            let mut pairs = Pairs::default();
            let mut write = |traced: Traced| {
                let lost = dropped.swap(0, Ordering::Relaxed);
                out.emit(pairs.line(&traced, started, lost))
            };
            loop {
                crossbeam_channel::select! {
                    recv(received) -> traced => match traced {
                        Ok(traced) => if !write(traced) { return },
                        Err(_) => return,
                    },
                    recv(stopped) -> _ => {
                        for traced in received.try_iter() {
                            if !write(traced) {
                                return;
                            }
                        }
                        return;
                    }
                }
            }
        })?;
    Ok((sink, Tracer { stop, thread }))
}

/// The requests waiting for their responses, at most [`TRACE_OPEN_REQUESTS`]; the
/// oldest is forgotten first. `order` may hold keys already answered (each with the
/// sequence number it was opened under), which are skipped, so that answering is O(1).
#[derive(Default)]
struct Pairs {
    open: HashMap<OpenKey, (u64, Instant, String)>,
    order: VecDeque<(u64, OpenKey)>,
    next: u64,
}

impl Pairs {
    /// The `trace` line of `traced`; `lost` frames were dropped before it.
    fn line(&mut self, traced: &Traced, started: Instant, lost: u64) -> Value {
        let frame: Value = traced
            .text
            .as_deref()
            .and_then(|text| serde_json::from_str(text).ok())
            .unwrap_or(Value::Null);
        let mut line = json!({
            "type": "trace",
            "extension": traced.extension,
            "generation": traced.generation,
            "direction": traced.direction.as_str(),
            "at_ms": millis(traced.at.saturating_duration_since(started)),
            "withheld": traced.text.is_none(),
        });
        if lost > 0 {
            line["dropped"] = lost.into();
        }
        let id = frame
            .get("id")
            .filter(|id| !id.is_null())
            .map(Value::to_string);
        let method = frame.get("method").and_then(Value::as_str);
        match (id, method) {
            (Some(id), Some(method)) => self.opened(traced, id, method),
            (Some(id), None) => {
                if let Some((asked, method)) = self.answered(traced, id) {
                    line["answers"] = json!({
                        "method": method,
                        "latency_ms": millis(traced.at.saturating_duration_since(asked)),
                    });
                }
            }
            _ => {}
        }
        line["frame"] = frame;
        line
    }

    fn opened(&mut self, traced: &Traced, id: String, method: &str) {
        let key = (
            traced.extension.clone(),
            traced.generation,
            traced.direction,
            id,
        );
        self.next += 1;
        self.open
            .insert(key.clone(), (self.next, traced.at, method.to_owned()));
        self.order.push_back((self.next, key));
        while self.open.len() > TRACE_OPEN_REQUESTS || self.order.len() > 2 * TRACE_OPEN_REQUESTS {
            let Some((seq, oldest)) = self.order.pop_front() else {
                break;
            };
            if self
                .open
                .get(&oldest)
                .is_some_and(|(open, ..)| *open == seq)
            {
                self.open.remove(&oldest);
            }
        }
    }

    /// The request a response answers: one that went the other way, with its id.
    fn answered(&mut self, traced: &Traced, id: String) -> Option<(Instant, String)> {
        let asked_way = match traced.direction {
            WireDirection::ToExtension => WireDirection::FromExtension,
            WireDirection::FromExtension => WireDirection::ToExtension,
        };
        let key = (traced.extension.clone(), traced.generation, asked_way, id);
        self.open
            .remove(&key)
            .map(|(_, asked, method)| (asked, method))
    }
}

/// A duration in milliseconds, to the microsecond.
fn millis(duration: std::time::Duration) -> f64 {
    (duration.as_micros() as f64) / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn traced(direction: WireDirection, text: Option<&str>, at: Instant) -> Traced {
        Traced {
            extension: "x".into(),
            generation: 1,
            direction,
            at,
            text: text.map(str::to_owned),
        }
    }

    #[test]
    fn a_response_names_the_request_it_answers_and_its_latency() {
        let started = Instant::now();
        let mut pairs = Pairs::default();
        let asked = pairs.line(
            &traced(
                WireDirection::ToExtension,
                Some(r#"{"jsonrpc":"2.0","id":7,"method":"tool/call","params":{}}"#),
                started,
            ),
            started,
            0,
        );
        assert_eq!(asked["frame"]["method"], "tool/call");
        assert!(asked.get("answers").is_none());
        let later = started + std::time::Duration::from_millis(5);
        let answered = pairs.line(
            &traced(
                WireDirection::FromExtension,
                Some(r#"{"jsonrpc":"2.0","id":7,"result":{}}"#),
                later,
            ),
            started,
            2,
        );
        assert_eq!(answered["answers"]["method"], "tool/call");
        assert_eq!(answered["answers"]["latency_ms"], 5.0);
        assert_eq!(answered["dropped"], 2);
        // A second answer to the same id pairs with nothing.
        let again = pairs.line(
            &traced(
                WireDirection::FromExtension,
                Some(r#"{"jsonrpc":"2.0","id":7,"result":{}}"#),
                later,
            ),
            started,
            0,
        );
        assert!(again.get("answers").is_none());
        let withheld = pairs.line(&traced(WireDirection::ToExtension, None, later), started, 0);
        assert_eq!(
            (withheld["withheld"].clone(), withheld["frame"].clone()),
            (json!(true), Value::Null)
        );
    }

    #[test]
    fn unanswered_requests_are_bounded() {
        let started = Instant::now();
        let mut pairs = Pairs::default();
        for id in 0..TRACE_OPEN_REQUESTS + 10 {
            let text = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"m"}}"#);
            pairs.line(
                &traced(WireDirection::ToExtension, Some(&text), started),
                started,
                0,
            );
        }
        assert_eq!(pairs.open.len(), TRACE_OPEN_REQUESTS);
        assert!(pairs.order.len() <= 2 * TRACE_OPEN_REQUESTS);
        // The oldest were forgotten, the newest are still open.
        let newest = (TRACE_OPEN_REQUESTS + 9).to_string();
        assert!(pairs
            .open
            .contains_key(&("x".into(), 1, WireDirection::ToExtension, newest)));
        assert!(!pairs
            .open
            .contains_key(&("x".into(), 1, WireDirection::ToExtension, "0".into())));
    }
}
