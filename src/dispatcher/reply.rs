//! Where the outcome of a call goes, and where a nested call's partial results go: the
//! embedder waiting on its `PendingCall`, or the dispatcher itself for a nested call, one
//! that a runtime-served feature makes on behalf of another generation's request. It
//! sits below the modules that carry these (the commands, the pending table, the
//! features) so that none of them imports another through it.

use crossbeam_channel::Sender;

use crate::model::call::CallReply;
use crate::transport::ConnId;
use crate::wire::RequestId;

/// Where a call's outcome goes.
#[derive(Clone, Debug)]
pub(crate) enum ReplyTo {
    /// The embedder waiting on its `PendingCall`.
    Caller(Sender<CallReply>),
    /// The dispatcher itself: a nested call, whose outcome answers the request of
    /// another generation that asked for it.
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
    /// The generation that asked for the nested call.
    pub conn: ConnId,
    /// Its request.
    pub request: RequestId,
    /// The nested call's outcome.
    pub reply: CallReply,
}

/// Where a nested call's partial results go: notifications to the request of the
/// generation that asked for the call, a bounded number of them unwritten at a time.
#[derive(Clone, Debug)]
pub(crate) struct Relay {
    /// The generation that asked for the nested call.
    pub conn: ConnId,
    /// Its request.
    pub request: RequestId,
    /// The notification method each partial result is relayed as.
    pub method: &'static str,
    /// Updates relayed so far: the `sequence` of the last one.
    pub sent: u32,
    /// The relayed updates the asking generation's writer has not started yet.
    pub unwritten: std::collections::VecDeque<std::sync::Arc<crate::transport::FrameState>>,
    /// Most updates left unwritten at a time; a snapshot beyond it is not relayed.
    capacity: usize,
}

impl Relay {
    /// A relay to `request` on `conn` as `method` notifications, holding at most
    /// `capacity` unwritten; nothing relayed yet.
    pub fn new(conn: ConnId, request: RequestId, method: &'static str, capacity: usize) -> Relay {
        Relay {
            conn,
            request,
            method,
            sent: 0,
            unwritten: std::collections::VecDeque::new(),
            capacity,
        }
    }

    /// True when the channel has room for one more snapshot: the ones the writer
    /// started are let go first.
    pub fn has_room(&mut self) -> bool {
        while self.unwritten.front().is_some_and(|s| s.is_started()) {
            self.unwritten.pop_front();
        }
        self.unwritten.len() < self.capacity
    }
}
