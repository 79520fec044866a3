//! The stderr drain: a flood never blocks the child; events are rate-bounded.

use std::sync::Arc;
use std::time::{Duration, Instant};

use octet_host::transport::{IoConfig, StderrEvent};
use parking_lot::Mutex;

use super::support::*;

#[test]
fn stderr_flood_never_blocks_the_child_and_events_are_rate_bounded() {
    const FLOOD: usize = 50_000_000;
    let dir = tempfile::tempdir().unwrap();
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = {
        let events = events.clone();
        Box::new(move |event: StderrEvent| {
            // A slow sink: the drain must keep reading regardless.
            std::thread::sleep(Duration::from_millis(2));
            events.lock().push(event);
        })
    };
    let started = Instant::now();
    let running = start_with(
        &python_spec("stderr_flood.py", &[&FLOOD.to_string()], dir.path()),
        IoConfig::default(),
        sink,
    );
    let outcome = running.read_until_closed();
    let done = outcome
        .seen
        .iter()
        .filter_map(notification)
        .find(|(m, _)| *m == "done");
    let lines = FLOOD / 100;
    assert_eq!(done.expect("the child finished").1["lines"], lines);
    running.io.writer.close();
    wait_until("the drain reached EOF", || running.io.is_finished());
    let elapsed = started.elapsed();
    let tail = running.io.stderr_tail.clone();
    let (mut process, _) = running.stop_and_join();
    assert!(process.finish().unwrap().success());

    let totals = tail.totals();
    assert_eq!(totals.bytes as usize, 10_000 + FLOOD + "final\n".len());
    assert_eq!(totals.lines as usize, 1 + lines + 1);
    assert_eq!(
        totals.cut_bytes as usize,
        9_999 - octet_host::limits::MAX_STDERR_LINE_BYTES
    );

    let snapshot = tail.snapshot();
    assert_eq!(snapshot.len(), octet_host::limits::STDERR_TAIL_LINES);
    assert_eq!(snapshot.last().unwrap(), "final");
    assert!(snapshot[snapshot.len() - 2].starts_with(&format!("line {:09} ", lines - 1)));

    let events = events.lock();
    match &events[0] {
        StderrEvent::Line { text, cut } => {
            assert_eq!(text.len(), octet_host::limits::MAX_STDERR_LINE_BYTES);
            assert_eq!(*cut, 9_999 - octet_host::limits::MAX_STDERR_LINE_BYTES);
        }
        other => panic!("first event {other:?}"),
    }
    let shown = events
        .iter()
        .filter(|e| matches!(e, StderrEvent::Line { .. }))
        .count();
    let suppressed: u64 = events
        .iter()
        .map(|e| match e {
            StderrEvent::Suppressed { count } => *count,
            _ => 0,
        })
        .sum();
    assert_eq!(
        shown as u64 + suppressed,
        totals.lines,
        "every line is accounted for"
    );
    assert_eq!(suppressed, totals.suppressed);
    let windows = elapsed.as_secs() + 2;
    let bound = windows * u64::from(octet_host::limits::STDERR_EVENTS_PER_SECOND);
    assert!(
        shown as u64 <= bound,
        "{shown} line events in {elapsed:?} exceed the rate bound"
    );
    let summaries = events.len() - shown;
    assert!(
        summaries as u64 <= windows,
        "one summary per window at most"
    );
}
