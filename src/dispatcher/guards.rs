//! Host state a service kind keeps per generation, behind one trait.
//!
//! The generic admission (negotiated feature, closed params and bounds, parent and
//! owner) is the same for every method. What a kind must remember on top of it lives in
//! its [`KindGuard`]: the guard admits each request the generic checks passed, the
//! request holds the key the guard gave it while its service works, and the guard learns
//! how it settled and when `initialize` settled. A kind with host state registers its
//! guard in [`guards_for`], the one place; a kind without keeps none.
//!
//! The kinds that keep host state: `shortcuts` ([`ShortcutBook`], section 2.20),
//! `autocomplete` ([`AutocompleteChain`], section 2.24b), `terminal_handoff`
//! (`super::terminal::TerminalGuard`, section 2.24) and the private lane of
//! `session_entries` (`super::private_lane::PrivateLane`, section 1.4b); a
//! runtime-served feature registers the guard of the kind it completes through
//! [`KindGuards::register`].

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};

use std::sync::Arc;
use std::time::Instant;

use parking_lot::Mutex;
use serde_json::Value;

use crate::limits::MAX_SHORTCUTS;
use crate::negotiation::FeatureSet;
use crate::services::bound::{Refusal, ServiceKind, ServiceRefusal, ServiceRequest};
use crate::transport::ConnId;

pub(crate) use super::guard::{KindGuard, Placed, Verdict};

/// Every guard of one connection, by kind. A kind may share the guard of another (a
/// feature's companions share its records).
#[derive(Default)]
pub(crate) struct KindGuards {
    guards: HashMap<ServiceKind, Box<dyn KindGuard>>,
    /// Kinds whose requests the guard of another kind decides.
    aliases: HashMap<ServiceKind, ServiceKind>,
    /// When the `HeldDeadline` timer of each kind that holds requests is due, so that
    /// one timer per deadline is scheduled however often the kind's state changes.
    held_timers: HashMap<ServiceKind, Instant>,
}

/// The guards of a new connection on `conn`: the one place a bound kind's host state
/// is registered (the runtime-served features register theirs with
/// [`KindGuards::register`] when the generation is launched). `terminal` is the
/// host-wide terminal lease.
pub(crate) fn guards_for(
    conn: ConnId,
    terminal: &Arc<Mutex<super::terminal::TerminalLease>>,
) -> KindGuards {
    let mut guards = KindGuards::default();
    guards
        .guards
        .insert(ServiceKind::Shortcuts, Box::new(ShortcutBook::default()));
    guards.guards.insert(
        ServiceKind::Autocomplete,
        Box::new(AutocompleteChain::default()),
    );
    guards.guards.insert(
        ServiceKind::SessionEntries,
        Box::new(super::private_lane::PrivateLane::default()),
    );
    guards.guards.insert(
        ServiceKind::TerminalHandoff,
        Box::new(super::terminal::TerminalGuard::new(conn, terminal.clone())),
    );
    guards
}

impl KindGuards {
    /// Registers `guard` for `kind`, deciding the requests of `shared_by` too (kinds
    /// that share its records).
    pub fn register(
        &mut self,
        kind: ServiceKind,
        guard: Box<dyn KindGuard>,
        shared_by: &[ServiceKind],
    ) {
        self.guards.insert(kind, guard);
        for other in shared_by {
            self.aliases.insert(*other, kind);
        }
    }

    /// The kind whose guard decides `kind`'s requests: `kind` itself unless it shares
    /// another's.
    pub fn decided_by(&self, kind: ServiceKind) -> ServiceKind {
        self.aliases.get(&kind).copied().unwrap_or(kind)
    }

    /// The guard of `kind` (or of the kind it shares a guard with), if it keeps host
    /// state.
    pub fn get_mut(&mut self, kind: ServiceKind) -> Option<&mut (dyn KindGuard + 'static)> {
        let kind = self.decided_by(kind);
        self.guards.get_mut(&kind).map(|guard| guard.as_mut())
    }

    /// True when a `HeldDeadline` timer of `kind` is to be scheduled for `at`: none is
    /// due later than `now` and no earlier than `at` (one that already fired, or an
    /// earlier deadline, needs its own). Records `at` when it is.
    pub fn wants_held_timer(&mut self, kind: ServiceKind, at: Instant, now: Instant) -> bool {
        let kind = self.decided_by(kind);
        let wanted = self
            .held_timers
            .get(&kind)
            .is_none_or(|&scheduled| scheduled > at || scheduled <= now);
        if wanted {
            self.held_timers.insert(kind, at);
        }
        wanted
    }

    /// The guard of `kind` as its own type.
    pub fn get<G: KindGuard>(&self, kind: ServiceKind) -> Option<&G> {
        self.guards.get(&kind)?.as_ref().as_any().downcast_ref()
    }

    /// The guard of `kind` as its own type, to change it.
    pub fn get_typed_mut<G: KindGuard>(&mut self, kind: ServiceKind) -> Option<&mut G> {
        self.guards
            .get_mut(&kind)?
            .as_mut()
            .as_any_mut()
            .downcast_mut()
    }

    /// The host request `parent` settled: every guard hears it.
    pub fn parent_settled(&mut self, parent: u64) {
        for guard in self.guards.values_mut() {
            guard.parent_settled(parent);
        }
    }

    /// `initialize` settled with `features` negotiated: each guard learns whether its
    /// kind was, and the whole set.
    pub fn initialize_settled(&mut self, features: FeatureSet) {
        for (kind, guard) in &mut self.guards {
            let negotiated = kind.feature().is_none_or(|f| features.contains(f));
            guard.initialize_settled(negotiated);
            guard.features_negotiated(features);
        }
    }
}

/// The shortcuts of one generation (section 2.20): registrations the service admitted
/// inside `initialize`, and ids a duplicate made unavailable.
#[derive(Default)]
pub(crate) struct ShortcutBook {
    /// Registrations the service admitted inside `initialize`.
    admitted: HashSet<String>,
    /// Ids registered twice: unavailable for the rest of the generation.
    poisoned: HashSet<String>,
}

impl ShortcutBook {
    /// True when a `shortcut/trigger` for `id` may be sent.
    pub fn is_admitted(&self, id: &str) -> bool {
        self.admitted.contains(id)
    }
}

impl KindGuard for ShortcutBook {
    /// Only inside `initialize`; a duplicate (admitted, poisoned or pending) makes the id
    /// unavailable for the generation; at most [`MAX_SHORTCUTS`] per process.
    fn admit(
        &mut self,
        request: &ServiceRequest,
        placed: Placed,
        pending: &[&str],
    ) -> Result<Option<String>, ServiceRefusal> {
        let ServiceRequest::ShortcutRegister(shortcut) = request else {
            return Ok(None);
        };
        if placed.independent || !placed.live {
            return Err(Refusal::InvalidRequest
                .because("shortcut/register is admitted only inside the initialize request"));
        }
        let id = shortcut.id.as_str();
        if self.admitted.contains(id) || self.poisoned.contains(id) || pending.contains(&id) {
            self.admitted.remove(id);
            self.poisoned.insert(id.to_string());
            return Err(Refusal::InvalidRequest.because(format!(
                "shortcut `{id}` was registered twice and is now unavailable"
            )));
        }
        if self.admitted.len() + pending.len() >= MAX_SHORTCUTS {
            return Err(Refusal::BoundsExceeded
                .because(format!("at most {MAX_SHORTCUTS} shortcuts per process")));
        }
        Ok(Some(id.to_string()))
    }

    /// Admits the id once the service answered, unless a duplicate poisoned it meanwhile.
    fn settled(&mut self, key: String, result: Option<&mut Value>) {
        if result.is_some() && !self.poisoned.contains(&key) {
            self.admitted.insert(key);
        }
    }

    /// Without the negotiated `shortcuts` feature none stays admitted.
    fn initialize_settled(&mut self, negotiated: bool) {
        if !negotiated {
            *self = ShortcutBook::default();
        }
    }
}

/// The autocomplete chain of one generation (section 2.24b): the revision the frontend
/// admitted with `ui/autocomplete/register`. Only a generation with an admitted chain is
/// sent `ui/autocomplete/complete`; a later registration replaces the revision.
#[derive(Default)]
pub(crate) struct AutocompleteChain {
    registered: Option<u64>,
    /// When the chain was admitted, in the host-wide admission order.
    admitted_at: Option<u64>,
}

/// The host-wide order in which autocomplete chains are admitted.
static CHAIN_ORDER: AtomicU64 = AtomicU64::new(0);

impl AutocompleteChain {
    /// The admitted revision, if the frontend admitted one.
    pub fn registered(&self) -> Option<u64> {
        self.registered
    }

    /// The chain's place in the admission order, if admitted.
    pub fn admitted_at(&self) -> Option<u64> {
        self.admitted_at
    }
}

impl KindGuard for AutocompleteChain {
    fn admit(
        &mut self,
        request: &ServiceRequest,
        _placed: Placed,
        _pending: &[&str],
    ) -> Result<Option<String>, ServiceRefusal> {
        match request {
            ServiceRequest::AutocompleteRegister(registration) => {
                Ok(Some(registration.revision.to_string()))
            }
            _ => Ok(None),
        }
    }

    /// The chain is live once the frontend acknowledged `{"accepted": true}`.
    fn settled(&mut self, key: String, result: Option<&mut Value>) {
        if result.is_some() {
            self.registered = key.parse().ok();
            if self.admitted_at.is_none() {
                self.admitted_at = Some(CHAIN_ORDER.fetch_add(1, Ordering::Relaxed));
            }
        }
    }

    fn initialize_settled(&mut self, negotiated: bool) {
        if !negotiated {
            *self = AutocompleteChain::default();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn one_held_timer_per_deadline_however_often_the_state_changes() {
        let mut guards = KindGuards::default();
        let kind = ServiceKind::Shortcuts;
        let now = Instant::now();
        let at = now + Duration::from_secs(30);
        assert!(guards.wants_held_timer(kind, at, now));
        // The same deadline, or a later one, is covered by the timer already due.
        assert!(!guards.wants_held_timer(kind, at, now));
        assert!(!guards.wants_held_timer(kind, at + Duration::from_secs(1), now));
        // An earlier deadline needs its own.
        let sooner = now + Duration::from_secs(1);
        assert!(guards.wants_held_timer(kind, sooner, now));
        // Once the timer fired, the next deadline gets one.
        let later = sooner + Duration::from_millis(1);
        assert!(guards.wants_held_timer(kind, at, later));
    }
}
