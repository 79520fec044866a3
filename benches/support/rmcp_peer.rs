//! The second peer: `rmcp`, the official Rust MCP SDK (tokio), as the host side of the
//! same echo round trip.
//!
//! The client is rmcp's own: `()` as the client handler, served over its stdio
//! child-process transport (`TokioChildProcess`), on a tokio multi-thread runtime with
//! its default worker count (one per CPU), as an application would start it. The child
//! is `octet-host __bench-echo mcp`, the JSON floor's echo with MCP's `initialize`
//! handshake: one thread, newline-delimited JSON-RPC. Depth 1 is one `call_tool` after
//! another; depth D is D tasks, each calling in a loop, so D calls are always in
//! flight.

use std::path::Path;
use std::time::{Duration, Instant};

use octet_host::bench::{echo_answer_text, echo_arguments, BenchError, RoundTrip};
use rmcp::model::{CallToolRequestParam, RawContent};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::ServiceExt;

/// The `rmcp` subject.
pub struct RmcpPeer {
    runtime: tokio::runtime::Runtime,
    /// `None` only while dropping: cancelling the service ends the child.
    client: Option<RunningService<RoleClient, ()>>,
    arguments: serde_json::Map<String, serde_json::Value>,
    expected: String,
}

impl RmcpPeer {
    /// Spawns `exe __bench-echo mcp` and completes MCP's `initialize` with it.
    pub fn spawn(exe: &Path) -> Result<RmcpPeer, BenchError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()?;
        let mut command = tokio::process::Command::new(exe);
        command.args(["__bench-echo", "mcp"]);
        let client = runtime.block_on(async {
            let transport = TokioChildProcess::new(command)?;
            ().serve(transport)
                .await
                .map_err(|e| BenchError::Io(std::io::Error::other(format!("MCP initialize: {e}"))))
        })?;
        let serde_json::Value::Object(arguments) = echo_arguments() else {
            unreachable!("the echo arguments are an object")
        };
        Ok(RmcpPeer {
            runtime,
            client: Some(client),
            arguments,
            expected: echo_answer_text(),
        })
    }
}

impl RoundTrip for RmcpPeer {
    fn name(&self) -> &str {
        octet_host::bench::suite::RMCP
    }

    fn run(&mut self, calls: u64, depth: usize) -> Result<Duration, BenchError> {
        let peer = self.client.as_ref().expect("connected").peer().clone();
        let depth = depth.max(1) as u64;
        let arguments = self.arguments.clone();
        let expected = self.expected.clone();
        self.runtime.block_on(async move {
            let start = Instant::now();
            let mut tasks = tokio::task::JoinSet::new();
            for lane in 0..depth {
                // Each task makes its share of the calls, one after another.
                let share = calls / depth + u64::from(lane < calls % depth);
                let peer = peer.clone();
                let arguments = arguments.clone();
                let expected = expected.clone();
                tasks.spawn(async move {
                    for call in 0..share {
                        let param = CallToolRequestParam {
                            name: "echo".into(),
                            arguments: Some(arguments.clone()),
                        };
                        let result = peer
                            .call_tool(param)
                            .await
                            .map_err(|_| BenchError::ChildClosed)?;
                        let good = call > 0
                            || result.content.first().is_some_and(|c| match &c.raw {
                                RawContent::Text(text) => text.text == expected,
                                _ => false,
                            });
                        if !good {
                            return Err(BenchError::WrongAnswer { call });
                        }
                    }
                    Ok(())
                });
            }
            while let Some(done) = tasks.join_next().await {
                done.map_err(|_| BenchError::ChildClosed)??;
            }
            Ok(start.elapsed())
        })
    }
}

impl Drop for RmcpPeer {
    fn drop(&mut self) {
        if let Some(client) = self.client.take() {
            let _ = self.runtime.block_on(client.cancel());
        }
    }
}
