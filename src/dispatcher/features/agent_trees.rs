//! What the dispatcher does to the host's child trees as a whole (sections 2.17, 2.18):
//! asks a service to stop an owner's trees when its extension goes away for good, wakes
//! held waits when records change, and retires a session owner when the embedder says
//! its session settled.

use std::collections::HashSet;
use std::time::Instant;

use crate::dispatcher::bound::{run_service, Admitted};
use crate::dispatcher::features::agents::AgentGuard;
use crate::dispatcher::guards::Verdict;
use crate::dispatcher::Dispatcher;
use crate::features::agents::hub::OwnerKey;
use crate::model::frontend::CancelFlag;
use crate::services::bound::{AgentTarget, RawReply, ServiceKind, ServiceMethod, ServiceRequest};
use crate::transport::ConnId;

impl Dispatcher {
    /// The extension on `conn` is going away for good (an explicit stop, the host's
    /// shutdown; never a restart or reload, which resume the tree): its service is asked
    /// to shut down each of the owner's children still active (section 2.18: "process
    /// shutdown requests shutdown of the service's owned trees"), with `agent/stop` when
    /// `agent_session_lifetime_v1` is bound and `agent/interrupt` otherwise. The asks
    /// are detached: nobody waits for their answers.
    pub(in crate::dispatcher) fn stop_owned_trees(&mut self, conn: ConnId) {
        let Some(c) = self.conns.get(&conn) else {
            return;
        };
        let Some(guard) = c.guards.get::<AgentGuard>(ServiceKind::AgentSessions) else {
            return;
        };
        let active = self.shared.features.agents.table().active_of(guard.owner());
        let stop = c.services.get(ServiceKind::AgentSessionLifetime).cloned();
        let (method, service) = match (stop, c.services.get(ServiceKind::AgentSessions)) {
            (Some(service), _) => (ServiceMethod::AgentStop, service),
            (None, Some(service)) => (ServiceMethod::AgentInterrupt, service.clone()),
            (None, None) => return,
        };
        for target in active {
            let target = AgentTarget { target };
            let request = match method {
                ServiceMethod::AgentStop => ServiceRequest::AgentStop(target),
                _ => ServiceRequest::AgentInterrupt(target),
            };
            let cancelled = CancelFlag::default();
            let admitted = Admitted {
                parent: None,
                owner: c.owner.clone(),
                independent: true,
                verdict: Verdict::Serve(None),
            };
            let reports = crate::dispatcher::features::offering::call_reports(
                &self.shared,
                &c.guards,
                method,
            );
            let call = admitted.into_call(c.source.clone(), method, cancelled.clone(), reports);
            let reply = RawReply::detached(method, cancelled);
            let _ = run_service(service.clone(), call, request, reply);
        }
    }

    /// Records changed: every connection's held `agent/wait` requests that can be
    /// answered now are.
    pub(in crate::dispatcher) fn on_agents_changed(&mut self) {
        let conns: Vec<_> = self.conns.keys().copied().collect();
        for conn in conns {
            self.answer_held(conn, ServiceKind::AgentSessions);
        }
    }

    /// The embedder's `session/settled` for `session_id` retires that session owner
    /// (section 2.18 "owner retirement invalidates further calls, wakes in-flight waits
    /// and requests shutdown of only that owner's child trees"): the owners of that
    /// session may list, wait on and observe their trees but change nothing, every held
    /// `agent/wait` and `agent/events` of theirs is answered now, and each owner's
    /// active children are asked to stop. Other sessions' trees are untouched.
    pub(in crate::dispatcher) fn retire_session_owner(&mut self, session_id: &str) {
        // The owner's native resources go with it (section 2.26).
        let owned: Vec<ConnId> = self
            .conns
            .values()
            .filter(|c| c.owner.session_id == session_id)
            .map(|c| c.conn)
            .collect();
        for conn in owned {
            self.invalidate_resources(conn);
        }
        let retired = OwnerKey::resource_owner_of(session_id, &self.shared.instance_id);
        if !self.shared.features.agents.table().retire(&retired) {
            return;
        }
        let now = Instant::now();
        let mut owners = HashSet::new();
        let mut stop = Vec::new();
        let mut woken = Vec::new();
        for c in self.conns.values_mut() {
            let Some(guard) = c
                .guards
                .get_typed_mut::<AgentGuard>(ServiceKind::AgentSessions)
            else {
                continue;
            };
            if guard.owner().resource_owner != retired {
                continue;
            }
            guard.wake_held(now);
            woken.push(c.conn);
            // A reload's two generations share an owner: its trees are stopped once.
            if owners.insert(guard.owner().clone()) {
                stop.push(c.conn);
            }
        }
        for conn in stop {
            self.stop_owned_trees(conn);
        }
        for conn in woken {
            self.answer_held(conn, ServiceKind::AgentSessions);
        }
    }

    /// The embedder's `session/started` for `session_id` begins a new owning run of
    /// that session owner: if it was retired, it may change its trees again, and the
    /// settled children of its last run go with their idempotency keys (section 2.13:
    /// "at the next owning run, stale idempotency entries are pruned with their missing
    /// child records").
    pub(in crate::dispatcher) fn begin_owning_run(&mut self, session_id: &str) {
        let owner = OwnerKey::resource_owner_of(session_id, &self.shared.instance_id);
        self.shared.features.agents.table().begin_run(&owner);
    }
}
