//! `tests/fixtures/peer03.py`, the stdlib-only API 0.3 peer written from the SUPPLEMENT
//! alone, checked against this crate: every frame it writes goes through
//! `Codec::Canonical.decode`, its initialize answer through the host's validation, and
//! each misbehaving scenario produces exactly the rejection the codec promises.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use crossbeam_channel::{unbounded, Receiver, RecvTimeoutError};
use octet_host::negotiation::{
    initialize_params, validate_initialize_result, Feature, InitializeOffer, Negotiated,
    NegotiationError,
};
use octet_host::wire::canonical::CanonicalError;
use octet_host::wire::codec::{Codec, CodecEncodeError};
use octet_host::wire::{FrameError, Message, RequestId, Response, ResponseError};
use serde_json::{json, Value};

use crate::support::{default_offer, echo_only, example_host, peer03_script, workspace, TIMEOUT};

struct Peer {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Vec<u8>>,
}

impl Peer {
    fn spawn(args: &[&str]) -> Peer {
        let mut child = Command::new("python3")
            .arg(peer03_script())
            .args(args)
            .env("OCTET_PEER_TOOLS", "echo")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawning python3");
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = unbounded();
        thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            loop {
                let mut line = Vec::new();
                match reader.read_until(b'\n', &mut line) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        if tx.send(line).is_err() {
                            break;
                        }
                    }
                }
            }
        });
        let stdin = child.stdin.take();
        Peer {
            child,
            stdin,
            lines,
        }
    }

    /// Spawns the peer and negotiates with this host's default offer for the
    /// `echo` manifest.
    fn start(args: &[&str]) -> (Peer, Negotiated) {
        let mut peer = Peer::spawn(args);
        let answer = peer.initialize(&default_offer(&echo_only()));
        let located = echo_only();
        let negotiated =
            validate_initialize_result(&located, &default_offer(&located), &answer).unwrap();
        (peer, negotiated)
    }

    /// Sends the host's initialize for the `echo` manifest with `offer`; returns the
    /// answer's result.
    fn initialize(&mut self, offer: &InitializeOffer) -> Value {
        let params = initialize_params(&echo_only(), workspace(), &example_host(), offer)
            .unwrap()
            .to_value();
        self.request(1, "initialize", &params);
        match self.message() {
            Ok(Message::Response(Response {
                id,
                outcome: Ok(result),
            })) => {
                assert_eq!(id, RequestId::Number(1));
                result
            }
            other => panic!("expected the initialize result, got {other:?}"),
        }
    }

    fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    fn request(&mut self, id: u64, method: &str, params: &Value) {
        let frame = Codec::Canonical
            .encode_request(&RequestId::Number(id), method, params, usize::MAX)
            .unwrap();
        self.send_raw(&frame);
    }

    fn call(&mut self, id: u64, arguments: Value) {
        self.request(
            id,
            "tool/call",
            &json!({"name": "echo", "arguments": arguments}),
        );
    }

    /// The next frame the peer wrote, decoded by `Codec::Canonical`.
    fn message(&self) -> Result<Message, FrameError> {
        let line = match self.lines.recv_timeout(TIMEOUT) {
            Ok(line) => line,
            Err(RecvTimeoutError::Timeout) => panic!("no frame within {TIMEOUT:?}"),
            Err(RecvTimeoutError::Disconnected) => panic!("the peer closed stdout"),
        };
        let body = line.strip_suffix(b"\n").expect("a frame ends with LF");
        Codec::Canonical.decode(body)
    }

    fn result(&self, id: u64) -> Value {
        match self.message() {
            Ok(Message::Response(Response {
                id: got,
                outcome: Ok(result),
            })) if got == RequestId::Number(id) => result,
            other => panic!("expected the result of {id}, got {other:?}"),
        }
    }

    fn error(&self, id: Option<u64>) -> ResponseError {
        match (self.message(), id) {
            (Err(FrameError::ErrorWithoutId(error)), None) => error,
            (
                Ok(Message::Response(Response {
                    id: got,
                    outcome: Err(error),
                })),
                Some(id),
            ) if got == RequestId::Number(id) => error,
            (other, _) => panic!("expected an error for {id:?}, got {other:?}"),
        }
    }

    fn wait_exit(&mut self) -> ExitStatus {
        let deadline = Instant::now() + TIMEOUT;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(Instant::now() < deadline, "the peer did not exit");
            thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap()
}

#[test]
fn the_peer_negotiates_and_serves_the_canonical_wire() {
    // The peer checks the offer as strictly as upstream's 0.3 extensions: it accepts
    // ours, which holds only the 0.3 vocabulary.
    let (mut peer, negotiated) = Peer::start(&[]);
    assert!(!negotiated.features.contains(Feature::RequestProgress));
    let contract = negotiated.contract.unwrap();
    assert!(!contract.allows("$/progress"));
    assert!(!contract.allows("input/request"));
    assert_eq!(negotiated.tools[0].name, "echo");

    peer.call(2, json!({"b": [1, -2], "a": "é\u{2028}"}));
    let result = peer.result(2);
    assert_eq!(text(&result), "{\"a\":\"é\u{2028}\",\"b\":[1,-2]}");
    assert_eq!(result["is_error"], false);

    // Cancellation of a call in flight.
    peer.call(3, json!({"sleep_ms": 60000}));
    let cancel = Codec::Canonical
        .encode_notification("$/cancelRequest", &json!({"id": 3}), usize::MAX)
        .unwrap();
    peer.send_raw(&cancel);
    assert_eq!(peer.error(Some(3)).code, -32800);

    // The fixed error table for what a host must never send.
    peer.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tool/call\",\"params\":{}}\n");
    assert_eq!(peer.error(None).code, -32700);
    peer.send_raw(
        b"{\"id\":4,\"jsonrpc\":\"2.0\",\"method\":\"tool/call\",\"params\":{\"x\":0.5}}\n",
    );
    assert_eq!(peer.error(None).code, -32700);
    peer.send_raw(b"{\"id\":4,\"jsonrpc\":\"2.0\",\"method\":\"tool/call\",\"params\":{}}\r\n");
    assert_eq!(peer.error(None).code, -32700);
    peer.send_raw(b"\n");
    assert_eq!(peer.error(None).code, -32700);
    peer.send_raw(
        b"{\"id\":5,\"jsonrpc\":\"2.0\",\"method\":\"tool/call\",\"params\":{},\"x\":1}\n",
    );
    assert_eq!(peer.error(Some(5)).code, -32600);
    peer.send_raw(b"{\"id\":6,\"jsonrpc\":\"2.0\",\"method\":\"tool/call\"}\n");
    assert_eq!(peer.error(Some(6)).code, -32600);
    peer.request(7, "context/collect", &json!({}));
    let error = peer.error(Some(7));
    assert_eq!(
        error,
        ResponseError::new(-32601, "unknown or unnegotiated method")
    );

    peer.call(8, json!({}));
    let seen = peer.result(8);
    peer.request(9, "tool/call", &json!({"name": "seen", "arguments": {}}));
    assert_eq!(text(&peer.result(9)), "{\"cancels\":[3]}");
    assert_eq!(text(&seen), "{}");

    peer.request(10, "shutdown", &json!({}));
    assert_eq!(peer.result(10), json!({"terminal": "shutdown"}));
    assert!(peer.wait_exit().success());
}

#[test]
fn the_peer_answers_a_limited_offer_within_it() {
    let mut peer = Peer::spawn(&[]);
    let located = echo_only();
    let offer = InitializeOffer::default()
        .with_max_concurrent_requests(3)
        .with_max_frame_bytes(4096)
        .with_max_tools(1);
    let answer = peer.initialize(&offer);
    let negotiated = validate_initialize_result(&located, &offer, &answer).unwrap();
    // Nothing optional was offered, so nothing optional was selected.
    assert!(!negotiated.features.contains(Feature::RequestProgress));
    let contract = negotiated.contract.unwrap();
    assert_eq!(contract.methods.len(), 4);
    assert_eq!(contract.transport_frame_limit(), 4097);
    assert_eq!(negotiated.max_concurrent_requests, 3);
}

/// The frame the peer writes in place of the answer to its first tool call.
fn first_bad_frame(scenario: &str) -> FrameError {
    let (mut peer, _) = Peer::start(&[scenario]);
    peer.call(2, json!({}));
    peer.message().unwrap_err()
}

#[test]
fn misbehaving_scenarios_are_rejected_by_the_codec() {
    assert!(matches!(
        first_bad_frame("float-result"),
        FrameError::NotCanonical(CanonicalError::Float { .. })
    ));
    assert!(matches!(
        first_bad_frame("unsorted-result"),
        FrameError::NotCanonical(CanonicalError::UnsortedKeys { .. })
    ));
    assert!(matches!(
        first_bad_frame("crlf-result"),
        FrameError::NotCanonical(CanonicalError::CarriageReturn { .. })
    ));
    assert_eq!(
        first_bad_frame("extra-member-result"),
        FrameError::ClosedEnvelope {
            member: "trace".into()
        }
    );
    assert_eq!(
        first_bad_frame("empty-frame"),
        FrameError::NotCanonical(CanonicalError::EmptyFrame)
    );
    assert_eq!(first_bad_frame("no-params"), FrameError::MissingParams);
    // An unnegotiated notification is a valid frame; rejecting it is the host's job.
    let (mut peer, negotiated) = Peer::start(&["unnegotiated"]);
    peer.call(2, json!({}));
    match peer.message() {
        Ok(Message::Notification(n)) => {
            assert_eq!(n.method, "context/contribution");
            assert!(!negotiated.contract.unwrap().allows(&n.method));
        }
        other => panic!("expected the unnegotiated notification, got {other:?}"),
    }
}

#[test]
fn bad_initialize_answers_are_rejected_by_the_host() {
    let located = echo_only();
    let offer = default_offer(&located);
    let answer = |args: &[&str]| {
        let mut peer = Peer::spawn(args);
        peer.initialize(&offer)
    };
    assert_eq!(
        validate_initialize_result(&located, &offer, &answer(&["commands-member"])).unwrap_err(),
        NegotiationError::UnknownMember {
            field: "commands".into()
        }
    );
    let error = validate_initialize_result(
        &located,
        &offer,
        &answer(&["bad-initialize", "{}", r#"{"methods": ["tool/call"]}"#]),
    )
    .unwrap_err();
    assert_eq!(error.code(), "contract_missing_required_method");
    let error = validate_initialize_result(
        &located,
        &offer,
        &answer(&["bad-initialize", r#"{"contract": null}"#]),
    )
    .unwrap_err();
    assert_eq!(
        error,
        NegotiationError::MissingMember {
            field: "contract".into()
        }
    );
}

#[test]
fn peer_frames_are_what_the_host_would_write() {
    // The peer's encoder and the codec agree byte for byte on a value with every
    // escape rule in play.
    let value = json!({"z": "\"\\/\u{0}\u{8}\t\n\u{b}\u{c}\r\u{1f}\u{7f}é\u{2028}😀", "a": [0, -1, 9_007_199_254_740_991u64], "m": {}});
    let (mut peer, _) = Peer::start(&[]);
    peer.call(2, value.clone());
    let result = peer.result(2);
    let mut ours = Vec::new();
    octet_host::wire::canonical::encode_canonical(&value, &mut ours).unwrap();
    assert_eq!(text(&result).as_bytes(), ours.as_slice());
    // And a host request the codec refuses to write never reaches the peer.
    assert!(matches!(
        Codec::Canonical.encode_request(
            &RequestId::Number(3),
            "tool/call",
            &json!({"x": 0.5}),
            4096
        ),
        Err(CodecEncodeError::NotCanonical(_))
    ));
}
