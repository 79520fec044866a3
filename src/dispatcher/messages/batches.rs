//! The assistant-message deltas of one generation not yet sent as `message/updated`.

use std::collections::HashMap;

/// One message's deltas not yet sent.
pub(super) struct Batch {
    pub(super) text: String,
    pub(super) deltas: u64,
    /// Names the batch's interval timer; a new batch gets a new one.
    pub(super) seq: u64,
}

/// The open messages of one generation, by message id.
#[derive(Default)]
pub(crate) struct MessageBatches {
    pub(super) open: HashMap<String, Batch>,
    pub(super) next_seq: u64,
}
