//! The peer: rust-analyzer's `lsp-server` (synchronous, crossbeam channels) as the
//! host side of the same echo round trip.
//!
//! `lsp_server::Connection` is a pair of channels; `Connection::stdio` serves the
//! process's own stdio, so this builds the same transport over a child's pipes: like
//! lsp-server's `stdio_transport`, rendezvous (`bounded(0)`) channels, a writer thread
//! that writes and flushes each `Message`, a dropper thread that frees written
//! messages, and a reader thread that reads `Content-Length` frames with
//! `Message::read`. The writer's `BufWriter` makes each message one `write` (lsp-server
//! on a real stdout does two: header line, then body). The child is
//! `octet-host __bench-echo lsp`, the JSON floor's echo with LSP framing.

use std::io::{self, BufReader, BufWriter};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::thread::JoinHandle;
use std::time::Duration;

use crossbeam_channel::bounded;
use lsp_server::{Connection, Message, Request, RequestId};
use octet_host::bench::{echo_answer_text, echo_arguments, pipelined, BenchError, RoundTrip};
use serde_json::Value;

/// The `lsp_server` subject.
pub struct LspPeer {
    /// `None` only while dropping: dropping the sender ends the writer, which closes
    /// the child's stdin.
    connection: Option<Connection>,
    child: Child,
    threads: Vec<JoinHandle<io::Result<()>>>,
    next_id: i32,
    arguments: Value,
    expected: String,
}

impl LspPeer {
    /// Spawns `exe __bench-echo lsp` and connects to it.
    pub fn spawn(exe: &Path) -> io::Result<LspPeer> {
        let mut child = Command::new(exe)
            .args(["__bench-echo", "lsp"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()?;
        let stdin = child.stdin.take().expect("stdin is piped");
        let stdout = child.stdout.take().expect("stdout is piped");
        let (drop_sender, drop_receiver) = bounded::<Message>(0);
        let (writer_sender, writer_receiver) = bounded::<Message>(0);
        let writer = std::thread::Builder::new()
            .name("LspServerWriter".to_owned())
            .spawn(move || {
                let mut stdin = BufWriter::new(stdin);
                writer_receiver.into_iter().try_for_each(|message| {
                    let result = message.write(&mut stdin);
                    let _ = drop_sender.send(message);
                    result
                })
            })?;
        let dropper = std::thread::Builder::new()
            .name("LspMessageDropper".to_owned())
            .spawn(move || {
                drop_receiver.into_iter().for_each(drop);
                Ok(())
            })?;
        let (reader_sender, reader_receiver) = bounded::<Message>(0);
        let reader = std::thread::Builder::new()
            .name("LspServerReader".to_owned())
            .spawn(move || {
                let mut stdout = BufReader::new(stdout);
                while let Some(message) = Message::read(&mut stdout)? {
                    if reader_sender.send(message).is_err() {
                        break;
                    }
                }
                Ok(())
            })?;
        Ok(LspPeer {
            connection: Some(Connection {
                sender: writer_sender,
                receiver: reader_receiver,
            }),
            child,
            threads: vec![writer, dropper, reader],
            next_id: 0,
            arguments: echo_arguments(),
            expected: echo_answer_text(),
        })
    }

    fn send(&mut self, connection: &Connection) -> Result<(), BenchError> {
        let params = serde_json::json!({"name": "echo", "arguments": self.arguments.clone()});
        let request = Request::new(
            RequestId::from(self.next_id),
            "tool/call".to_owned(),
            params,
        );
        self.next_id = self.next_id.wrapping_add(1);
        connection
            .sender
            .send(request.into())
            .map_err(|_| BenchError::ChildClosed)
    }
}

impl RoundTrip for LspPeer {
    fn name(&self) -> &str {
        octet_host::bench::suite::LSP_SERVER
    }

    fn run(&mut self, calls: u64, depth: usize) -> Result<Duration, BenchError> {
        let connection = self.connection.take().expect("connected");
        let outcome = self.run_on(&connection, calls, depth);
        self.connection = Some(connection);
        outcome
    }
}

impl LspPeer {
    fn run_on(
        &mut self,
        connection: &Connection,
        calls: u64,
        depth: usize,
    ) -> Result<Duration, BenchError> {
        let first_id = self.next_id;
        pipelined(
            self,
            calls,
            depth,
            |peer| peer.send(connection),
            |peer, answered| {
                let message = connection
                    .receiver
                    .recv()
                    .map_err(|_| BenchError::ChildClosed)?;
                let expected_id = first_id.wrapping_add(answered as i32);
                let good = match &message {
                    Message::Response(response) => {
                        response.id == RequestId::from(expected_id)
                            && (answered > 0
                                || response.response_result.as_ref().is_ok_and(|r| {
                                    r["content"][0]["text"] == peer.expected.as_str()
                                }))
                    }
                    _ => false,
                };
                if good {
                    Ok(())
                } else {
                    Err(BenchError::WrongAnswer { call: answered })
                }
            },
        )
    }
}

impl Drop for LspPeer {
    fn drop(&mut self) {
        drop(self.connection.take());
        let _ = self.child.wait();
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}
