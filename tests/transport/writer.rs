//! The writer thread: skipping cancelled frames, close, a child that never reads, EPIPE.

use std::fs;
use std::sync::Arc;

use octet_host::transport::{
    spawn, start_io, ConnId, FrameState, IoConfig, OutboundFrame, TransportEvent, TrySendFrameError,
};

use super::support::*;

fn frame(text: &str, state: Option<Arc<FrameState>>) -> OutboundFrame {
    OutboundFrame {
        bytes: format!("{text}\n").into_bytes(),
        state,
        wipe: false,
    }
}

#[test]
fn writer_skips_a_frame_cancelled_before_it_started() {
    let dir = tempfile::tempdir().unwrap();
    let go = dir.path().join("go");
    let running = start(&python_spec(
        "stdin_echo.py",
        &[go.to_str().unwrap()],
        dir.path(),
    ));
    let writer = running.io.writer.clone();

    // A frame far larger than the pipe: the writer starts it and then waits, because
    // the child reads nothing until `go` exists.
    let big_state = FrameState::new();
    let mut big = vec![b'b'; 2 * 1024 * 1024];
    big.push(b'\n');
    writer
        .send(OutboundFrame {
            bytes: big,
            state: Some(big_state.clone()),
            wipe: false,
        })
        .unwrap();
    wait_until("the big frame started", || big_state.is_started());

    let cancelled = FrameState::new();
    writer
        .send(frame("cancelled", Some(cancelled.clone())))
        .unwrap();
    writer.send(frame("after", None)).unwrap();
    assert!(
        cancelled.try_skip(),
        "not started while the big frame is written"
    );
    assert!(!big_state.try_skip(), "a started frame cannot be skipped");

    fs::write(&go, b"").unwrap();
    writer.close();
    let outcome = running.read_until_closed();
    let lines: Vec<(u64, String)> = outcome
        .seen
        .iter()
        .filter_map(notification)
        .filter(|(m, _)| *m == "line")
        .map(|(_, p)| {
            (
                p["len"].as_u64().unwrap(),
                p["head"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(
        lines[0].0,
        2 * 1024 * 1024 + 1,
        "the started frame is whole"
    );
    assert_eq!(lines[1], (6, "after\n".to_string()));
    let eof = outcome
        .seen
        .iter()
        .filter_map(notification)
        .find(|(m, _)| *m == "eof");
    assert_eq!(eof.unwrap().1["lines"], 2);
    assert_eq!(outcome.written, 3, "written and skipped frames are counted");
    assert!(matches!(
        writer.send(frame("late", None)),
        Err(octet_host::transport::WriterClosed(_))
    ));
    let (mut process, _) = running.stop_and_join();
    assert!(process.finish().unwrap().success());
}

#[test]
fn writer_close_writes_the_queue_then_closes_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let running = start(&python_spec("stdin_echo.py", &[], dir.path()));
    for text in ["one", "two", "three"] {
        running.io.writer.send(frame(text, None)).unwrap();
    }
    running.io.writer.close();
    assert!(running.io.writer.is_closed());
    let outcome = running.read_until_closed();
    let heads: Vec<_> = outcome
        .seen
        .iter()
        .filter_map(notification)
        .map(|(m, p)| format!("{m}:{}", p.get("head").or(p.get("lines")).unwrap()))
        .collect();
    assert_eq!(
        heads,
        [
            r#"line:"one\n""#,
            r#"line:"two\n""#,
            r#"line:"three\n""#,
            "eof:3"
        ]
    );
    assert!(matches!(
        running.io.writer.try_send(frame("late", None)),
        Err(TrySendFrameError::Closed(_))
    ));
    let (mut process, _) = running.stop_and_join();
    assert!(process.finish().unwrap().success());
}

#[test]
fn writer_to_a_child_that_never_reads_stops_promptly() {
    let dir = tempfile::tempdir().unwrap();
    let running = start(&command_spec("sleep", &["1000"], dir.path()));
    let writer = running.io.writer.clone();
    let chunk = "x".repeat(16 * 1024);

    // The host keeps sending: the pipe fills, then the queue, then `send` blocks.
    let first = FrameState::new();
    let sender = std::thread::spawn({
        let writer = writer.clone();
        let chunk = chunk.clone();
        let first = first.clone();
        move || {
            let mut accepted = 0;
            let mut state = Some(first);
            while writer.send(frame(&chunk, state.take())).is_ok() {
                accepted += 1;
            }
            accepted
        }
    });
    wait_until("the writer took a frame and the queue is full", || {
        first.is_started() && writer.queued() == writer.capacity()
    });
    let (mut process, rest) = running.stop_and_join();
    let accepted = sender.join().expect("send() returned after the stop");
    assert!(accepted > writer.capacity(), "accepted {accepted}");
    assert!(!rest
        .iter()
        .any(|e| matches!(e, TransportEvent::WriterFailed { .. })));
    let written: usize = rest
        .iter()
        .map(|e| match e {
            TransportEvent::Written { frames } => *frames,
            _ => 0,
        })
        .sum();
    assert!(
        written < accepted,
        "not everything was written ({written} of {accepted})"
    );
    assert!(writer.send(frame("late", None)).is_err());
    process.terminate_and_reap().unwrap();
}

#[test]
fn writer_reports_a_broken_pipe_once() {
    let dir = tempfile::tempdir().unwrap();
    let running = start(&command_spec("true", &[], dir.path()));
    assert!(running.process.wait_exited_timeout(LIVENESS).unwrap());
    running
        .io
        .writer
        .send(frame("into the void", None))
        .unwrap();
    let error = loop {
        match running.next_event() {
            TransportEvent::WriterFailed { error } => break error,
            TransportEvent::Written { frames } => panic!("{frames} frames written to a dead child"),
            _ => {}
        }
    };
    assert_eq!(error.kind(), std::io::ErrorKind::BrokenPipe);
    // All three threads end by themselves: EOF on stdout and stderr, and the failure.
    wait_until("all I/O threads ended", || running.io.is_finished());
    assert!(running.io.writer.send(frame("late", None)).is_err());
    let (mut process, rest) = running.stop_and_join();
    assert!(!rest
        .iter()
        .any(|e| matches!(e, TransportEvent::WriterFailed { .. })));
    assert!(process.finish().unwrap().success());
}

#[test]
fn writer_never_waits_on_a_dispatcher_blocked_in_send() {
    const FRAMES: usize = 200;
    let dir = tempfile::tempdir().unwrap();
    // A child that reads all of stdin and writes nothing; an event channel of one
    // slot that nobody reads while the frames are sent; a queue of two frames.
    let mut child = spawn(&command_spec("sh", &["-c", "cat > /dev/null"], dir.path())).unwrap();
    let (tx, rx) = crossbeam_channel::bounded(1);
    let config = IoConfig {
        writer_queue: 2,
        ..IoConfig::default()
    };
    let io = start_io(ConnId(7), &mut child, config, tx, Box::new(|_| {})).unwrap();
    let mut process = child.into_process();

    let writer = io.writer.clone();
    let sender = std::thread::spawn(move || {
        for i in 0..FRAMES {
            writer.send(frame(&format!("frame {i}"), None)).unwrap();
        }
        writer.close();
    });
    let (done_tx, done_rx) = crossbeam_channel::bounded(1);
    std::thread::spawn(move || done_tx.send(sender.join().is_ok()));
    assert_eq!(
        done_rx.recv_timeout(LIVENESS),
        Ok(true),
        "every send completed although the event channel stayed full"
    );

    let mut written = 0;
    let mut reader_closed = false;
    while written < FRAMES || !reader_closed {
        match rx
            .recv_timeout(LIVENESS)
            .expect("the remaining events")
            .event
        {
            TransportEvent::Written { frames } => written += frames,
            TransportEvent::ReaderClosed { .. } => reader_closed = true,
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(written, FRAMES, "each frame is counted exactly once");
    join_within(io, LIVENESS);
    assert!(process.finish().unwrap().success());
}
