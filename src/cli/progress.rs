//! Waiting for a call while showing its `$/progress` (section 2.6) on stderr.
//!
//! Status events become an indicatif progress bar (a spinner when they carry no
//! `total`); output events are printed above it. Nothing is drawn unless stderr is a
//! terminal. Every host event that arrives meanwhile is returned to the caller.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

use crate::host::{CallError, ExtensionHost, HostEvent, PendingCall, ProgressEvent};

/// How often the waiter looks at the event stream while the call is in flight.
const POLL_INTERVAL: Duration = Duration::from_millis(50);

/// How often an indeterminate spinner ticks.
const SPINNER_TICK: Duration = Duration::from_millis(100);

/// Waits for `pending`, showing progress events of `extension`; returns the outcome and
/// every host event (state changes excluded) that arrived until it settled.
pub(crate) fn wait<T>(
    host: &ExtensionHost,
    extension: &str,
    mut pending: PendingCall<T>,
) -> (Result<T, CallError>, Vec<HostEvent>) {
    let mut view = ProgressView::new(std::io::stderr().is_terminal());
    let mut events = Vec::new();
    let mut take = |event: HostEvent, view: &mut ProgressView| {
        if let HostEvent::Progress { source, progress } = &event {
            if source.extension == extension {
                view.show(&progress.event);
            }
        }
        if !matches!(event, HostEvent::StateChanged { .. }) {
            events.push(event);
        }
    };
    let outcome = loop {
        if super::tty::handed_off() {
            view.clear();
        }
        for event in host.events().try_iter() {
            // The holder of the terminal is gone: the CLI takes it back at once.
            if let HostEvent::TerminalGrantLost { .. } = event {
                super::tty::restore_now();
            }
            take(event, &mut view);
        }
        if let Some(outcome) = pending.wait_timeout(POLL_INTERVAL) {
            break outcome;
        }
    };
    // Events the extension sent before its answer are already queued.
    for event in host.events().try_iter() {
        if let HostEvent::TerminalGrantLost { .. } = event {
            super::tty::restore_now();
        }
        take(event, &mut view);
    }
    view.clear();
    (outcome, events)
}

/// The bar on the screen, if any: questions suspend it while they ask.
static ACTIVE_BAR: parking_lot::Mutex<Option<ProgressBar>> = parking_lot::Mutex::new(None);

/// Runs `ask` with the progress bar (if one is drawn) hidden, so a prompt is never
/// drawn over.
pub(crate) fn suspended<R>(ask: impl FnOnce() -> R) -> R {
    let bar = ACTIVE_BAR.lock().clone();
    match bar {
        Some(bar) => bar.suspend(ask),
        None => ask(),
    }
}

/// The progress bar, created on the first status event.
struct ProgressView {
    enabled: bool,
    bar: Option<ProgressBar>,
    determinate: bool,
}

impl ProgressView {
    fn new(enabled: bool) -> ProgressView {
        ProgressView {
            enabled,
            bar: None,
            determinate: false,
        }
    }

    fn show(&mut self, event: &ProgressEvent) {
        // Nothing is drawn over a terminal an extension holds.
        if super::tty::handed_off() {
            self.clear();
            return;
        }
        if !self.enabled {
            return;
        }
        match event {
            ProgressEvent::Status {
                message,
                current,
                total,
                unit,
            } => self.status(message, *current, *total, unit.as_deref().unwrap_or("")),
            ProgressEvent::Output { data, .. } => self.output(data),
            ProgressEvent::Decoration { label, detail } => {
                let text = match detail {
                    Some(detail) => format!("{label}: {detail}"),
                    None => label.clone(),
                };
                self.output(text.as_bytes())
            }
            // A snapshot of the result so far: its text replaces the status line.
            ProgressEvent::PartialResult(result) => {
                let text = result.text();
                let line = text.lines().last().unwrap_or("partial result");
                self.status(line, None, None, "")
            }
        }
    }

    fn status(&mut self, message: &str, current: Option<u64>, total: Option<u64>, unit: &str) {
        let bar = self.bar.get_or_insert_with(|| {
            let bar = ProgressBar::new_spinner();
            bar.enable_steady_tick(SPINNER_TICK);
            *ACTIVE_BAR.lock() = Some(bar.clone());
            bar
        });
        match total {
            Some(total) => {
                if !self.determinate {
                    self.determinate = true;
                    let template =
                        format!("{{spinner}} [{{bar:30}}] {{pos}}/{{len}} {unit} {{msg}}");
                    if let Ok(style) = ProgressStyle::with_template(&template) {
                        bar.set_style(style.progress_chars("=> "));
                    }
                }
                bar.set_length(total);
                bar.set_position(current.unwrap_or(0).min(total));
            }
            None => {
                if let Some(current) = current {
                    bar.set_position(current);
                }
            }
        }
        bar.set_message(message.to_owned());
    }

    fn output(&mut self, data: &[u8]) {
        let text = String::from_utf8_lossy(data);
        let text = text.trim_end_matches('\n');
        match &self.bar {
            Some(bar) => bar.println(text),
            None => super::output::eprint_line(text),
        }
    }

    fn clear(&mut self) {
        if let Some(bar) = self.bar.take() {
            ACTIVE_BAR.lock().take();
            bar.finish_and_clear();
        }
    }
}
