//! Floods: an extension writing hundreds of megabytes to stderr, and one writing
//! hundreds of thousands of notifications to stdout, while calls keep being answered.

use std::time::{Duration, Instant};

use octet_host::host::events::EVENT_CHANNEL_CAPACITY;
use octet_host::host::{CallOptions, Diagnostic, ExtensionHandle, HostEvent};
use octet_host::limits::{MAX_STDERR_LINE_BYTES, STDERR_EVENTS_PER_SECOND, STDERR_TAIL_LINES};
use serde_json::{json, Value};

use super::harness::*;

/// How long a flood may take on a loaded machine.
const FLOOD_LIVENESS: Duration = Duration::from_secs(180);

/// One `echo` call that must be answered with its arguments.
fn echo(ext: &ExtensionHandle, n: u64) {
    let out = ext
        .call_tool("echo", json!({"n": n}), CallOptions::default())
        .unwrap_or_else(|e| panic!("echo {n} during the flood: {e:?}"));
    assert_eq!(out.text(), format!(r#"{{"n":{n}}}"#));
}

/// The fault peer's flood progress: `(done, written)`.
fn flood_status(ext: &ExtensionHandle) -> (bool, u64) {
    let out = ext
        .call_tool("flood_status", json!({}), CallOptions::default())
        .unwrap();
    let status: Value = serde_json::from_str(&out.text()).unwrap();
    (
        status["done"].as_bool().unwrap(),
        status["written"].as_u64().unwrap(),
    )
}

#[test]
fn fault_stderr_flood() {
    const LINE_BYTES: u64 = 100;
    const TOTAL_BYTES: u64 = 300 * 1000 * 1000;
    const LINES: u64 = TOTAL_BYTES / LINE_BYTES;
    let scene = Scene::new();
    let dir = scene.fault(
        "flooder",
        &["stderr-flood", &TOTAL_BYTES.to_string()],
        &["echo", "flood_status"],
        &[],
    );
    let (host, bystander) = scene.host(&[dir]);
    let mut log = EventLog::default();
    let rss_before = rss_kb();
    let mut rss_max = rss_before;
    let start = Instant::now();
    let flooder = host.start("flooder").unwrap();

    let mut n = 0;
    loop {
        n += 1;
        echo(&flooder, n);
        let (done, written) = flood_status(&flooder);
        log.pump(&host);
        rss_max = rss_max.max(rss_kb());
        if done {
            assert_eq!(written, LINES);
            break;
        }
        assert!(
            start.elapsed() < FLOOD_LIVENESS,
            "the flood did not finish: {written} of {LINES} lines"
        );
        if n % 10 == 0 {
            bystander.ping("during the stderr flood");
        }
        std::thread::sleep(Duration::from_millis(50));
    }

    // Every line is accounted for: reported as a line or counted in a summary.
    let accounted = |log: &EventLog| -> u64 {
        log.diagnostics("flooder")
            .iter()
            .map(|d| match d {
                Diagnostic::Stderr { .. } => 1,
                Diagnostic::StderrSuppressed { lines } => *lines,
                _ => 0,
            })
            .sum()
    };
    let all_counted = log.wait_until(&host, LIVENESS, |log| accounted(log) >= LINES);
    assert!(
        all_counted,
        "{} of {LINES} lines accounted for",
        accounted(&log)
    );
    let elapsed = start.elapsed();
    rss_max = rss_max.max(rss_kb());
    assert_eq!(accounted(&log), LINES);
    let diags = log.diagnostics("flooder");
    let reported: Vec<&String> = diags
        .iter()
        .filter_map(|d| match d {
            Diagnostic::Stderr { line } => Some(line),
            _ => None,
        })
        .collect();
    let summaries = diags
        .iter()
        .filter(|d| matches!(d, Diagnostic::StderrSuppressed { .. }))
        .count();
    // At most one window of events per second since the process started, give or take
    // the window in progress.
    let bound = u64::from(STDERR_EVENTS_PER_SECOND) * (elapsed.as_secs() + 2);
    assert!(
        (reported.len() as u64) <= bound,
        "{} stderr events in {elapsed:?} (bound {bound})",
        reported.len()
    );
    assert!(
        !reported.is_empty() && summaries > 0,
        "{} lines, {summaries} summaries",
        reported.len()
    );
    let expected_line = format!("flood {}", ".".repeat(93));
    assert!(reported.iter().all(|l| **l == expected_line));
    let status = host.status();
    let tail = &status
        .iter()
        .find(|s| s.extension == "flooder")
        .unwrap()
        .stderr_tail;
    assert!(
        !tail.is_empty() && tail.len() <= STDERR_TAIL_LINES,
        "{}",
        tail.len()
    );
    assert!(tail.iter().all(|l| l.len() <= MAX_STDERR_LINE_BYTES));
    assert!(
        rss_max < rss_before + RSS_SLACK_KB,
        "RSS grew from {rss_before} KiB to {rss_max} KiB"
    );

    echo(&flooder, 0);
    bystander.ping("after the stderr flood");
    bystander.finish();
    let report = scene.finish(host);
    assert!(
        report.extensions.iter().all(|e| e.acknowledged),
        "{report:?}"
    );
}

#[test]
fn fault_notification_flood() {
    const COUNT: u64 = 200_000;
    let scene = Scene::new();
    let dir = scene.fault(
        "notifier",
        &["notify-flood", &COUNT.to_string()],
        &["echo", "flood", "flood_status", "notify_once"],
        &[],
    );
    let (host, bystander) = scene.host(&[dir]);
    let notifier = host.start("notifier").unwrap();
    // Start from an empty event channel, and read none of it during the flood.
    let _ = host.events().try_iter().count();
    let rss_before = rss_kb();
    let mut rss_max = rss_before;
    let start = Instant::now();

    notifier
        .call_tool("flood", json!({}), CallOptions::default())
        .unwrap();
    for n in 1..=20 {
        echo(&notifier, n);
        bystander.ping("during the notification flood");
    }
    loop {
        let (done, written) = flood_status(&notifier);
        rss_max = rss_max.max(rss_kb());
        if done {
            assert_eq!(written, COUNT);
            break;
        }
        assert!(
            start.elapsed() < FLOOD_LIVENESS,
            "the flood did not finish: {written} of {COUNT}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }

    // The status answer came after every notification on the same stream, so all of
    // them were handled: the first ones filled the channel, the rest were dropped.
    let queued: Vec<HostEvent> = host.events().try_iter().collect();
    let messages: Vec<&str> = queued
        .iter()
        .filter_map(|e| match e {
            HostEvent::Notification {
                source,
                notification,
            } if source.extension == "notifier" => Some(notification.message.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        messages.len(),
        queued.len(),
        "unexpected events: {:?}",
        queued
            .iter()
            .filter(|e| !matches!(e, HostEvent::Notification { .. }))
            .collect::<Vec<_>>()
    );
    assert_eq!(messages.len(), EVENT_CHANNEL_CAPACITY);
    for (i, message) in messages.iter().enumerate() {
        assert_eq!(*message, format!("n{i}"), "notifications out of order");
    }

    // The next event that fits is preceded by the count of those dropped.
    notifier
        .call_tool("notify_once", json!({}), CallOptions::default())
        .unwrap();
    let mut log = EventLog::default();
    let is_final = |e: &HostEvent| matches!(e, HostEvent::Notification { notification, .. } if notification.message == "final");
    assert!(log.wait_until(&host, LIVENESS, |log| log.seen.iter().any(is_final)));
    let final_at = log.seen.iter().position(is_final).unwrap();
    let dropped: u64 = log.seen[..final_at]
        .iter()
        .filter_map(|e| match e {
            HostEvent::EventsDropped { count } => Some(*count),
            _ => None,
        })
        .sum();
    assert_eq!(
        dropped + messages.len() as u64,
        COUNT,
        "{:?}",
        &log.seen[..final_at]
    );
    rss_max = rss_max.max(rss_kb());
    assert!(
        rss_max < rss_before + RSS_SLACK_KB,
        "RSS grew from {rss_before} KiB to {rss_max} KiB"
    );

    echo(&notifier, 0);
    bystander.finish();
    let report = scene.finish(host);
    assert!(
        report.extensions.iter().all(|e| e.acknowledged),
        "{report:?}"
    );
}
