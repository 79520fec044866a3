//! A generation's table of host requests awaiting their answers, keyed by request id,
//! which keeps count of the embedder calls among them so the concurrency check that
//! runs for every admitted call is O(1).

use std::sync::Arc;

use crossbeam_channel::Sender;

use super::command::InitRole;
use super::id_hash::IdMap;
use crate::model::call::CallId;
use crate::model::progress::Progress;
use crate::negotiation::{InitializeOffer, ToolDefinition};
use crate::transport::FrameState;

/// Why a pending host request was sent.
pub(crate) enum PendingKind {
    /// The `initialize` request; the starter waits on `reply`.
    Initialize {
        role: InitRole,
        offer: InitializeOffer,
    },
    /// The `shutdown` request (section 1.8).
    Shutdown,
    /// An API 0.3 `hook/run` of `lifecycle_events`; its disposition never vetoes.
    LifecycleHook,
    /// A request a runtime-served feature sent; its answer and its deadline go to
    /// that feature's hooks.
    Feature(FeatureRequest),
    /// An embedder call.
    Call {
        call: CallId,
        reply: super::reply::ReplyTo,
        progress: Option<Sender<Progress>>,
        /// The catalog epoch the request named (sections 2.11, 2.12): its answer is
        /// validated against this catalog, whatever the catalog is when it arrives.
        catalog: Arc<Vec<ToolDefinition>>,
        /// True for `tool/call`, the only request `partial_result` progress is for.
        tool_call: bool,
        /// True for `tool/call` and `command/execute`: the requests that may be the
        /// parents of delegated sessions (sections 2.13, 2.16).
        delegating: bool,
        /// Its first `confirmation/request` is pre-approved (section 1.6b); cleared
        /// once used.
        preapproved: bool,
        /// Where its partial results are relayed, when the caller asked for them
        /// as notifications to another generation's request.
        relay: Option<super::reply::Relay>,
    },
}

/// A host request a runtime-served feature sent, with what the feature needs to
/// settle it (its `request_answered` hook).
pub(crate) struct FeatureRequest {
    /// The name of the feature that sent it, as the registration table lists it.
    pub feature: &'static str,
    /// What the feature keeps with the request until it settles.
    pub state: Box<dyn std::any::Any + Send>,
}

/// A host request written (or queued for writing) and not yet settled.
pub(crate) struct Pending {
    pub kind: PendingKind,
    pub frame: Arc<FrameState>,
    /// The last accepted `$/progress` sequence number (section 2.6).
    pub last_progress: Option<u64>,
}

/// The pending host requests of one generation.
#[derive(Default)]
pub(crate) struct PendingTable {
    entries: IdMap<u64, Pending>,
    /// How many entries are [`PendingKind::Call`].
    calls: usize,
}

fn is_call(pending: &Pending) -> bool {
    matches!(pending.kind, PendingKind::Call { .. })
}

impl PendingTable {
    /// Adds request `id`, replacing (and returning) an entry of the same id.
    pub fn insert(&mut self, id: u64, pending: Pending) -> Option<Pending> {
        self.calls += usize::from(is_call(&pending));
        let old = self.entries.insert(id, pending);
        self.uncount(old)
    }

    /// Removes request `id`.
    pub fn remove(&mut self, id: &u64) -> Option<Pending> {
        let old = self.entries.remove(id);
        self.uncount(old)
    }

    fn uncount(&mut self, old: Option<Pending>) -> Option<Pending> {
        if old.as_ref().is_some_and(is_call) {
            self.calls -= 1;
        }
        old
    }

    /// Request `id`, if pending, to update its progress bookkeeping. (Its kind stays
    /// what it is: the count of calls depends on it.)
    pub fn get_mut(&mut self, id: &u64) -> Option<&mut Pending> {
        self.entries.get_mut(id)
    }

    /// True when request `id` is pending.
    pub fn contains_key(&self, id: &u64) -> bool {
        self.entries.contains_key(id)
    }

    /// True when request `id` is a pending embedder call (a valid parent for child
    /// requests, section 2).
    pub fn is_call(&self, id: &u64) -> bool {
        self.entries.get(id).is_some_and(is_call)
    }

    /// True when `id` is a pending `tool/call`.
    pub fn is_tool_call(&self, id: &u64) -> bool {
        self.entries.get(id).is_some_and(|pending| {
            matches!(
                pending.kind,
                PendingKind::Call {
                    tool_call: true,
                    ..
                }
            )
        })
    }

    /// True when `id` is a pending `tool/call` or `command/execute`.
    pub fn is_delegating(&self, id: &u64) -> bool {
        self.entries.get(id).is_some_and(|pending| {
            matches!(
                pending.kind,
                PendingKind::Call {
                    delegating: true,
                    ..
                }
            )
        })
    }

    /// The id of the pending `initialize` request, if any.
    pub fn initialize_id(&self) -> Option<u64> {
        self.entries
            .iter()
            .find(|(_, p)| matches!(p.kind, PendingKind::Initialize { .. }))
            .map(|(id, _)| *id)
    }

    /// True when `id` is the pending `initialize` and its offer holds `feature`.
    pub fn offers(&self, id: u64, feature: crate::negotiation::Feature) -> bool {
        match self.entries.get(&id).map(|p| &p.kind) {
            Some(PendingKind::Initialize { offer, .. }) => offer.offers(feature),
            _ => false,
        }
    }

    /// Pending requests of every kind.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Pending embedder calls.
    pub fn calls(&self) -> usize {
        self.calls
    }

    /// The ids of every pending request.
    pub fn ids(&self) -> Vec<u64> {
        self.entries.keys().copied().collect()
    }

    /// Removes and returns every pending request.
    pub fn drain(&mut self) -> impl Iterator<Item = (u64, Pending)> + '_ {
        self.calls = 0;
        self.entries.drain()
    }

    /// Removes every pending `shutdown` request.
    pub fn remove_shutdown(&mut self) {
        self.entries
            .retain(|_, p| !matches!(p.kind, PendingKind::Shutdown));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::call::CallId;
    use crate::transport::FrameState;

    fn call(n: u64) -> Pending {
        let (reply, _) = crossbeam_channel::bounded(1);
        Pending {
            kind: PendingKind::Call {
                call: CallId(n),
                reply: crate::dispatcher::ReplyTo::Caller(reply),
                progress: None,
                catalog: Default::default(),
                tool_call: true,
                delegating: true,
                preapproved: false,
                relay: None,
            },
            frame: FrameState::new(),
            last_progress: None,
        }
    }

    fn shutdown() -> Pending {
        Pending {
            kind: PendingKind::Shutdown,
            frame: FrameState::new(),
            last_progress: None,
        }
    }

    #[test]
    fn the_call_count_follows_every_change() {
        let mut table = PendingTable::default();
        for id in 1..=3 {
            table.insert(id, call(id));
        }
        table.insert(4, shutdown());
        assert_eq!((table.len(), table.calls()), (4, 3));
        assert!(table.is_call(&2) && !table.is_call(&4) && !table.is_call(&9));
        assert!(table.remove(&2).is_some());
        assert!(table.remove(&2).is_none());
        assert_eq!((table.len(), table.calls()), (3, 2));
        // Replacing a call by a non-call, and the other way round.
        table.insert(1, shutdown());
        assert_eq!(table.calls(), 1);
        table.insert(4, call(4));
        assert_eq!(table.calls(), 2);
        table.remove_shutdown();
        assert_eq!((table.len(), table.calls()), (2, 2));
        let mut ids = table.ids();
        ids.sort_unstable();
        assert_eq!(ids, [3, 4]);
        assert_eq!(table.drain().count(), 2);
        assert_eq!((table.len(), table.calls()), (0, 0));
    }
}
