//! The reader thread: framing, the frame limit, classification, batching, EOF.

use std::fs;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

use octet_host::transport::{InboundFrame, IoConfig, TransportEvent};
use octet_host::wire::FrameError;

use super::support::*;

fn emit(args: &[&str]) -> ReadOutcome {
    emit_with(args, IoConfig::default())
}

fn emit_with(args: &[&str], config: IoConfig) -> ReadOutcome {
    let dir = tempfile::tempdir().unwrap();
    let running = start_with(
        &python_spec("emit.py", args, dir.path()),
        config,
        Box::new(|_| {}),
    );
    let outcome = running.read_until_closed();
    let (mut process, rest) = running.stop_and_join();
    assert!(process.finish().unwrap().success());
    assert!(
        !rest.iter().any(|e| matches!(
            e,
            TransportEvent::Frames(_) | TransportEvent::ReaderClosed { .. }
        )),
        "nothing follows ReaderClosed: {rest:?}"
    );
    outcome
}

fn methods(seen: &[Seen]) -> Vec<String> {
    seen.iter()
        .map(|s| match s {
            Seen::Frame(InboundFrame::Message(_)) => {
                notification(s).map_or("<message>".into(), |(m, _)| m.to_string())
            }
            Seen::Frame(InboundFrame::Invalid { error, .. }) => format!("<invalid {error:?}>"),
            Seen::Frame(InboundFrame::Oversized { bytes, .. }) => format!("<oversized {bytes}>"),
            Seen::Frame(InboundFrame::Undecoded(frame)) => format!("<undecoded {}>", frame.len()),
            Seen::Closed {
                unterminated,
                error,
            } => {
                format!("<closed {unterminated:?} {}>", error.is_some())
            }
        })
        .collect()
}

#[test]
fn reader_joins_frames_split_across_reads() {
    let outcome = emit(&["split"]);
    assert_eq!(
        methods(&outcome.seen),
        ["one", "two", "<closed None false>"]
    );
    assert_eq!(notification(&outcome.seen[0]).unwrap().1["n"], 1);
}

#[test]
fn reader_splits_on_lf_only() {
    let outcome = emit(&["separators"]);
    let seen = &outcome.seen;
    assert_eq!(seen.len(), 6, "{:?}", methods(seen));
    assert_eq!(notification(&seen[0]).unwrap().0, "a\u{2028}b");
    assert_eq!(notification(&seen[0]).unwrap().1["s"], "x\u{2029}y");
    assert_eq!(
        notification(&seen[1]).unwrap().0,
        "cr",
        "CR before LF is whitespace"
    );
    for frame in &seen[2..4] {
        assert!(
            matches!(
                frame,
                Seen::Frame(InboundFrame::Invalid {
                    error: FrameError::Parse { .. },
                    ..
                })
            ),
            "CR and U+2028 do not end a frame: {frame:?}"
        );
    }
    assert_eq!(notification(&seen[4]).unwrap().0, "last");
}

#[test]
fn reader_discards_an_oversized_line_and_keeps_its_neighbours() {
    let outcome = emit(&["oversized"]);
    let big = r#"{"jsonrpc":"2.0","method":"big","params":{"pad":""}}"#.len() + 2 * 1024 * 1024 + 1;
    assert_eq!(
        methods(&outcome.seen),
        [
            "before".to_string(),
            format!("<oversized {big}>"),
            "after".to_string(),
            "<closed None false>".to_string()
        ]
    );
}

#[test]
fn reader_applies_the_shared_frame_limit() {
    let config = IoConfig {
        frame_limit: Arc::new(AtomicUsize::new(100)),
        ..IoConfig::default()
    };
    let outcome = emit_with(&["long", "100", "101", "99"], config);
    assert_eq!(
        methods(&outcome.seen),
        ["long", "<oversized 101>", "long", "<closed None false>"]
    );
}

#[test]
fn reader_applies_a_lowered_frame_limit_from_the_next_read() {
    let dir = tempfile::tempdir().unwrap();
    let go = dir.path().join("go");
    let config = IoConfig::default();
    let limit = config.frame_limit.clone();
    let running = start_with(
        &python_spec(
            "emit.py",
            &["wait", go.to_str().unwrap(), "200", "200", "100"],
            dir.path(),
        ),
        config,
        Box::new(|_| {}),
    );
    match running.next_event() {
        TransportEvent::Frames(frames) => {
            assert!(
                matches!(&frames[..], [InboundFrame::Message(_)]),
                "{frames:?}"
            );
        }
        other => panic!("expected the first frame, got {other:?}"),
    }
    // As after negotiating a smaller max_frame_bytes.
    limit.store(100, std::sync::atomic::Ordering::Relaxed);
    fs::write(&go, b"").unwrap();
    let outcome = running.read_until_closed();
    assert_eq!(
        methods(&outcome.seen),
        ["<oversized 200>", "long", "<closed None false>"]
    );
    let (mut process, _) = running.stop_and_join();
    assert!(process.finish().unwrap().success());
}

#[test]
fn reader_classifies_invalid_frames() {
    let outcome = emit(&["invalid"]);
    let kinds: Vec<_> = outcome
        .seen
        .iter()
        .map(|s| match s {
            Seen::Frame(InboundFrame::Invalid { error, bytes, .. }) => {
                Some((error.clone(), *bytes))
            }
            _ => None,
        })
        .collect();
    assert!(
        matches!(kinds[0], Some((FrameError::Parse { .. }, 1))),
        "empty frame"
    );
    assert!(matches!(kinds[1], Some((FrameError::Parse { .. }, 9))));
    assert_eq!(kinds[2], Some((FrameError::NotObject, 6)));
    assert!(matches!(kinds[3], Some((FrameError::BadVersion, _))));
    assert!(matches!(kinds[4], Some((FrameError::MethodNotString, _))));
    assert!(matches!(
        kinds[5],
        Some((FrameError::ResultAndErrorMismatch, _))
    ));
    assert!(matches!(kinds[6], Some((FrameError::ErrorWithoutId(_), _))));
    assert_eq!(notification(&outcome.seen[7]).unwrap().0, "valid");
    assert!(matches!(
        outcome.seen[8],
        Seen::Closed {
            unterminated: None,
            error: None
        }
    ));
    assert_eq!(outcome.seen.len(), 9);
}

#[test]
fn reader_batches_the_frames_of_one_read() {
    let outcome = emit(&["batch"]);
    let frames = outcome.seen.len() - 1;
    assert_eq!(frames, 100);
    assert!(
        outcome.batches < 10,
        "100 frames written at once arrive in few batches, got {}",
        outcome.batches
    );
    for (i, frame) in outcome.seen[..100].iter().enumerate() {
        assert_eq!(notification(frame).unwrap().1["i"], i, "in order");
    }
}

#[test]
fn reader_reports_an_unterminated_tail_once_at_eof() {
    let outcome = emit(&["unterminated"]);
    assert_eq!(methods(&outcome.seen), ["whole", "<closed Some(10) false>"]);
}
