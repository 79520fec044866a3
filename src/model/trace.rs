//! The wire trace: every frame the host writes to or reads from an extension, handed
//! to the embedder's sink as it passes ([`crate::ExtensionHostBuilder::wire_trace_sink`]).

use std::sync::Arc;
use std::time::Instant;

use super::events::GenerationRef;

/// Which way a frame went.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WireDirection {
    /// Written to the extension's stdin.
    ToExtension,
    /// Read from the extension's stdout.
    FromExtension,
}

impl WireDirection {
    /// `to_extension` or `from_extension`.
    pub fn as_str(self) -> &'static str {
        match self {
            WireDirection::ToExtension => "to_extension",
            WireDirection::FromExtension => "from_extension",
        }
    }
}

/// One frame of the wire trace.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct WireFrame<'a> {
    /// The generation it belongs to.
    pub source: &'a GenerationRef,
    /// Which way it went.
    pub direction: WireDirection,
    /// When the host wrote it to the writer's queue, or read it.
    pub at: Instant,
    /// The frame's JSON text without its LF; `None` when the frame may carry a secret
    /// (the answers to `secret/get` and `provider/credentials`), which the trace
    /// withholds.
    pub text: Option<&'a str>,
}

/// Who receives the wire trace: called on the dispatcher thread for every frame, so it
/// must not block (hand the frame to a bounded queue and drop what does not fit).
pub(crate) type WireTraceSink = Arc<dyn Fn(&WireFrame<'_>) + Send + Sync>;
