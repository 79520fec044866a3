//! Where the outcome of a call goes, and where a nested call's partial results go: the
//! embedder waiting on its `PendingCall`, or the dispatcher itself for the nested calls
//! of composition (section 2.25, `composition/`). It sits below the modules that
//! carry these (the commands, the pending table, composition) so that none of them
//! imports another through it.

use crossbeam_channel::Sender;

use crate::model::call::CallReply;
use crate::transport::ConnId;
use crate::wire::RequestId;

/// Where a call's outcome goes.
#[derive(Clone, Debug)]
pub(crate) enum ReplyTo {
    /// The embedder waiting on its `PendingCall`.
    Caller(Sender<CallReply>),
    /// The dispatcher itself: a nested call of composition (section 2.25), whose outcome
    /// answers the composing generation's `composition/call` request.
    Nested {
        conn: ConnId,
        request: RequestId,
        to: Sender<NestedReply>,
    },
}

impl ReplyTo {
    /// Hands the outcome on; an error when nobody waits for it any more.
    pub fn send(&self, reply: CallReply) -> Result<(), ()> {
        match self {
            ReplyTo::Caller(caller) => caller.send(reply).map_err(|_| ()),
            ReplyTo::Nested { conn, request, to } => to
                .send(NestedReply {
                    conn: *conn,
                    request: request.clone(),
                    reply,
                })
                .map_err(|_| ()),
        }
    }
}

/// The outcome of a nested call, which the dispatcher hands itself (`ReplyTo::Nested`).
pub(crate) struct NestedReply {
    /// The composing generation.
    pub conn: ConnId,
    /// Its `composition/call` request.
    pub request: RequestId,
    /// The nested call's outcome.
    pub reply: CallReply,
}

/// Where a nested call's partial results go: the `composition/call` request of the
/// composing generation, as `composition/update` notifications.
#[derive(Clone, Debug)]
pub(crate) struct Relay {
    /// The composing generation.
    pub conn: ConnId,
    /// Its `composition/call` request.
    pub request: RequestId,
    /// Updates relayed so far: the `sequence` of the last one.
    pub sent: u32,
    /// The relayed updates the composing generation's writer has not started yet: the
    /// channel, which holds at most [`crate::limits::MAX_COMPOSITION_UPDATES`].
    pub unwritten: std::collections::VecDeque<std::sync::Arc<crate::transport::FrameState>>,
}

impl Relay {
    /// A relay to `request` on `conn`, nothing relayed yet.
    pub fn new(conn: ConnId, request: RequestId) -> Relay {
        Relay {
            conn,
            request,
            sent: 0,
            unwritten: std::collections::VecDeque::new(),
        }
    }

    /// True when the channel has room for one more snapshot: the ones the writer
    /// started are let go first.
    pub fn has_room(&mut self) -> bool {
        while self.unwritten.front().is_some_and(|s| s.is_started()) {
            self.unwritten.pop_front();
        }
        self.unwritten.len() < crate::limits::MAX_COMPOSITION_UPDATES
    }
}
