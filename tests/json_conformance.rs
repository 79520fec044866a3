//! JSON parsing conformance (nst/JSONTestSuite `test_parsing/`, vendored under
//! `tests/data/json-parsing/`), by its README's rules:
//!
//! - `y_*` must decode as one JSON value;
//! - `n_*` must be rejected with a parse error, without crashing;
//! - `i_*` may go either way, but must not crash.
//!
//! Each file's raw bytes go to [`parse_json`], the decoding the reader uses. A second
//! test sends every file without an internal LF through a real child and the reader
//! thread, one frame per file.

#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use octet_host::transport::{
    spawn, start_io, ConnId, InboundFrame, IoConfig, SpawnSpec, TransportEvent,
};
use octet_host::wire::codec::Codec;
use octet_host::wire::{classify, decode, parse_json, FrameError};

/// How long the framed run may take on a loaded machine.
const LIVENESS: Duration = Duration::from_secs(120);

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/json-parsing/test_parsing")
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Class {
    Accept,
    Reject,
    Either,
}

struct Case {
    name: String,
    class: Class,
    bytes: Vec<u8>,
}

fn cases() -> Vec<Case> {
    let mut cases: Vec<Case> = std::fs::read_dir(data_dir())
        .expect("readable conformance directory")
        .map(|entry| {
            let path = entry.expect("directory entry").path();
            let name = path.file_name().unwrap().to_str().unwrap().to_string();
            let class = match &name[..2] {
                "y_" => Class::Accept,
                "n_" => Class::Reject,
                "i_" => Class::Either,
                _ => panic!("unexpected file {name}"),
            };
            let bytes = std::fs::read(&path).expect("readable case");
            Case { name, class, bytes }
        })
        .collect();
    cases.sort_by(|a, b| a.name.cmp(&b.name));
    cases
}

fn count(cases: &[Case], class: Class) -> usize {
    cases.iter().filter(|c| c.class == class).count()
}

#[test]
fn parse_json_follows_the_suite() {
    let cases = cases();
    assert_eq!(count(&cases, Class::Accept), 95);
    assert_eq!(count(&cases, Class::Reject), 188);
    assert_eq!(count(&cases, Class::Either), 35);

    let mut failures = Vec::new();
    for case in &cases {
        let outcome = parse_json(&case.bytes);
        match (case.class, &outcome) {
            (Class::Accept, Ok(_)) | (Class::Reject, Err(FrameError::Parse { .. })) => {}
            (Class::Either, Ok(_) | Err(FrameError::Parse { .. })) => {}
            _ => failures.push(format!("{}: {outcome:?}", case.name)),
        }
    }
    assert!(failures.is_empty(), "non-conforming: {failures:#?}");
}

/// `decode` reads an object's envelope without building a map; it must agree with
/// `classify(parse_json(..))` on every file, and on every file's value placed in each
/// envelope member and in an unknown one, where the typed path reads it.
#[test]
fn decode_agrees_with_parsing_into_a_value_first() {
    let reference = |bytes: &[u8]| parse_json(bytes).and_then(classify);
    let mut frames: Vec<(String, Vec<u8>)> = Vec::new();
    for case in cases() {
        let value = case.bytes.strip_suffix(b"\n").unwrap_or(&case.bytes);
        frames.push((case.name.clone(), case.bytes.clone()));
        for (shape, prefix, suffix) in [
            ("result", r#"{"jsonrpc":"2.0","id":1,"result":"#, "}"),
            ("params", r#"{"jsonrpc":"2.0","method":"m","params":"#, "}"),
            ("id", r#"{"jsonrpc":"2.0","result":1,"id":"#, "}"),
            ("method", r#"{"jsonrpc":"2.0","id":1,"method":"#, "}"),
            ("error", r#"{"jsonrpc":"2.0","id":1,"error":"#, "}"),
            ("jsonrpc", r#"{"id":1,"result":1,"jsonrpc":"#, "}"),
            ("unknown", r#"{"jsonrpc":"2.0","id":1,"result":1,"x":"#, "}"),
            (
                "duplicate",
                r#"{"jsonrpc":"2.0","id":1,"result":"#,
                r#","result":2}"#,
            ),
        ] {
            let mut frame = prefix.as_bytes().to_vec();
            frame.extend_from_slice(value);
            frame.extend_from_slice(suffix.as_bytes());
            frames.push((format!("{} in {shape}", case.name), frame));
        }
    }
    let mut disagreements = Vec::new();
    for (name, frame) in &frames {
        let (fast, slow) = (decode(frame), reference(frame));
        if fast != slow {
            disagreements.push(format!("{name}: {fast:?} vs {slow:?}"));
        }
    }
    assert_eq!(frames.len(), 318 * 9);
    assert!(disagreements.is_empty(), "{disagreements:#?}");
}

/// The frame a file becomes on the wire: its bytes, whose one trailing LF (if any)
/// is the frame terminator. `None` for a file with an LF elsewhere.
fn as_frame(bytes: &[u8]) -> Option<&[u8]> {
    let content = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    (!content.contains(&b'\n')).then_some(content)
}

#[test]
fn framed_cases_through_a_real_child_and_the_reader() {
    let cases = cases();
    let framed: Vec<&Case> = cases
        .iter()
        .filter(|c| as_frame(&c.bytes).is_some())
        .collect();
    assert_eq!(
        cases.len() - framed.len(),
        5,
        "the README lists five files with an internal LF"
    );
    let framed_in = |class| framed.iter().filter(|c| c.class == class).count();
    assert_eq!(
        (
            framed_in(Class::Accept),
            framed_in(Class::Reject),
            framed_in(Class::Either)
        ),
        (93, 185, 35)
    );

    let python = python();
    let dir = data_dir();
    let mut args = vec![Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/write_frames.py")
        .to_str()
        .unwrap()
        .to_string()];
    args.extend(
        framed
            .iter()
            .map(|c| dir.join(&c.name).to_str().unwrap().to_string()),
    );
    let workspace = tempfile::tempdir().unwrap();
    let spec = SpawnSpec {
        program: python,
        args,
        env: vec![],
        cwd: workspace.path().to_path_buf(),
    };
    let mut child = spawn(&spec).expect("spawn python");
    let (tx, rx) = crossbeam_channel::bounded(64);
    let io = start_io(
        ConnId(1),
        &mut child,
        IoConfig::default(),
        tx,
        Box::new(|_| {}),
    )
    .expect("start_io");
    let mut process = child.into_process();

    let mut frames = Vec::new();
    let deadline = Instant::now() + LIVENESS;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left).expect("the reader finishes").event {
            // A large frame reaches the dispatcher undecoded; decoded here as it would be there.
            TransportEvent::Frames(batch) => {
                frames.extend(batch.into_iter().map(|f| f.decoded(Codec::JsonRpc)))
            }
            TransportEvent::ReaderClosed {
                unterminated,
                error,
            } => {
                assert_eq!(unterminated, None);
                assert!(error.is_none(), "{error:?}");
                break;
            }
            _ => {}
        }
    }
    io.stop();
    io.join_checked().expect("no I/O thread panicked");
    assert!(process.finish().expect("finish").success());

    assert_eq!(
        frames.len(),
        framed.len(),
        "one frame per file, none skipped"
    );
    let mut failures = Vec::new();
    for (case, frame) in framed.iter().zip(&frames) {
        let size = as_frame(&case.bytes).unwrap().len() + 1;
        let ok = match (case.class, frame) {
            // A `y_` frame is JSON; whether it is a JSON-RPC message does not matter.
            (Class::Accept, InboundFrame::Message(_)) => true,
            (Class::Accept, InboundFrame::Invalid { error, bytes, .. }) => {
                !matches!(error, FrameError::Parse { .. }) && *bytes == size
            }
            (Class::Reject, InboundFrame::Invalid { error, bytes, .. }) => {
                matches!(error, FrameError::Parse { .. }) && *bytes == size
            }
            (Class::Either, InboundFrame::Message(_)) => true,
            (Class::Either, InboundFrame::Invalid { bytes, .. }) => *bytes == size,
            _ => false,
        };
        if !ok {
            failures.push(format!("{}: {frame:?}", case.name));
        }
    }
    assert!(failures.is_empty(), "non-conforming frames: {failures:#?}");
}

/// The Python interpreter itself (`python3` on PATH may be a wrapper script).
fn python() -> PathBuf {
    let output = std::process::Command::new("python3")
        .args(["-c", "import sys; sys.stdout.write(sys.executable)"])
        .output()
        .expect("python3 runs");
    assert!(output.status.success());
    PathBuf::from(String::from_utf8(output.stdout).unwrap())
}
