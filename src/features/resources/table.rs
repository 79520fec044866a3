//! One generation's resource records (section 2.26).

use std::collections::HashMap;

use super::ResourceError;
use crate::limits::{RESOURCE_REFS_MAX_RECORDS, RESOURCE_REFS_MAX_REGISTRATIONS_PER_PARENT};
use crate::validate::resource::{ResourceRef, ResourceSlot, TypeId};

/// Where a record is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Registered under the live call `parent`; not yet usable.
    Provisional { parent: u64 },
    /// Exported by a successful call: usable as an input, releasable.
    Active,
    /// Invalidated while a running call pinned it: its dispose waits for that call to
    /// settle.
    Retired,
    /// Its `resource/dispose` is out (or queued); the extension may still hold the
    /// native object, so it still counts against `max_records`.
    Disposing,
}

#[derive(Clone, Debug)]
struct Record {
    type_id: TypeId,
    state: State,
    /// The host request id of the call that pins it.
    pinned_by: Option<u64>,
}

/// Every ResourceRef one generation issued that it may still hold: its records,
/// registrations per parent and pins per call. It never shares a token with another
/// generation, so a reload or restart invalidates by starting a new table.
#[derive(Debug)]
pub struct ResourceTable {
    prefix: String,
    next: u64,
    records: HashMap<String, Record>,
    registrations: HashMap<u64, u32>,
    pins: HashMap<u64, Vec<String>>,
    /// The tool and declared outputs of the running calls whose tool exports any.
    outputs: HashMap<u64, (String, Vec<ResourceSlot>)>,
}

impl ResourceTable {
    /// An empty table whose tokens begin with `prefix` (random per generation).
    pub fn new(prefix: impl Into<String>) -> ResourceTable {
        ResourceTable {
            prefix: prefix.into(),
            next: 1,
            records: HashMap::new(),
            registrations: HashMap::new(),
            pins: HashMap::new(),
            outputs: HashMap::new(),
        }
    }

    /// The call of `tool` sent as request `call` may export `slots` when it settles.
    pub fn expect_outputs(&mut self, call: u64, tool: &str, slots: Vec<ResourceSlot>) {
        self.outputs.insert(call, (tool.to_string(), slots));
    }

    /// The declared outputs of the running call `call`, if its tool exports any.
    pub fn outputs_of(&self, call: u64) -> Option<&[ResourceSlot]> {
        self.outputs.get(&call).map(|(_, slots)| slots.as_slice())
    }

    /// The call `call` settled: its tool and declared outputs, which are forgotten.
    pub fn forget_outputs(&mut self, call: u64) -> Option<(String, Vec<ResourceSlot>)> {
        self.outputs.remove(&call)
    }

    /// Records the extension may still hold natively, retired ones whose cleanup is
    /// not yet confirmed included (at most `max_records`).
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// True when no record is held.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// `resource/register`: a new provisional value of `type_id` under the live call
    /// `parent`.
    pub fn register(&mut self, parent: u64, type_id: TypeId) -> Result<ResourceRef, ResourceError> {
        let registered = self.registrations.get(&parent).copied().unwrap_or(0);
        if self.records.len() >= RESOURCE_REFS_MAX_RECORDS as usize
            || registered >= RESOURCE_REFS_MAX_REGISTRATIONS_PER_PARENT
        {
            return Err(ResourceError::QuotaExceeded);
        }
        let token = format!("{}-{}", self.prefix, self.next);
        self.next += 1;
        self.records.insert(
            token.clone(),
            Record {
                type_id: type_id.clone(),
                state: State::Provisional { parent },
                pinned_by: None,
            },
        );
        self.registrations.insert(parent, registered + 1);
        Ok(ResourceRef { token, type_id })
    }

    /// The live record `resource` names, for `parent` (provisional values are live only
    /// for the call that registered them).
    fn live(&self, resource: &ResourceRef, parent: Option<u64>) -> Result<&Record, ResourceError> {
        let record = self
            .records
            .get(&resource.token)
            .ok_or(ResourceError::Unavailable)?;
        match record.state {
            State::Active => {}
            State::Provisional { parent: owner } if Some(owner) == parent => {}
            _ => return Err(ResourceError::Unavailable),
        }
        if record.type_id != resource.type_id {
            return Err(ResourceError::TypeMismatch);
        }
        Ok(record)
    }

    /// `resource/release` under the live call `parent`: the value is retired at once
    /// and returned for its `resource/dispose`. A pinned value is `resource_busy`.
    pub fn release(
        &mut self,
        parent: u64,
        resource: &ResourceRef,
    ) -> Result<ResourceRef, ResourceError> {
        if self.live(resource, Some(parent))?.pinned_by.is_some() {
            return Err(ResourceError::Busy);
        }
        let record = self
            .records
            .get_mut(&resource.token)
            .expect("the record is live");
        record.state = State::Disposing;
        Ok(resource.clone())
    }

    /// Pins `inputs` exclusively for the call sent as request `call`: all of them or,
    /// when one is unknown, of another type or already pinned (by another call or twice
    /// by this one), none.
    pub fn pin(&mut self, call: u64, inputs: &[ResourceRef]) -> Result<(), ResourceError> {
        for (i, input) in inputs.iter().enumerate() {
            if self.live(input, None)?.pinned_by.is_some()
                || inputs[..i].iter().any(|other| other.token == input.token)
            {
                return Err(ResourceError::Busy);
            }
        }
        if inputs.is_empty() {
            return Ok(());
        }
        for input in inputs {
            self.records
                .get_mut(&input.token)
                .expect("checked above")
                .pinned_by = Some(call);
        }
        self.pins
            .insert(call, inputs.iter().map(|r| r.token.clone()).collect());
        Ok(())
    }

    /// The call `call` settled (answered, refused, or a cancelled one's late answer):
    /// its pins are released. Values invalidated meanwhile are returned for their
    /// dispose.
    pub fn unpin(&mut self, call: u64) -> Vec<ResourceRef> {
        let mut dispose = Vec::new();
        for token in self.pins.remove(&call).unwrap_or_default() {
            if let Some(record) = self.records.get_mut(&token) {
                record.pinned_by = None;
                if record.state == State::Retired {
                    record.state = State::Disposing;
                    dispose.push(ResourceRef {
                        token,
                        type_id: record.type_id.clone(),
                    });
                }
            }
        }
        dispose
    }

    /// The call `parent` settled successfully with `exports` at its declared output
    /// paths: each must be a provisional value it registered, of the slot's type.
    /// Then, atomically, they become active and every other provisional value of the
    /// parent is retired and returned for its dispose. On an error nothing changed
    /// (the caller retires the parent's values with [`ResourceTable::retire_parent`]).
    pub fn export(
        &mut self,
        parent: u64,
        exports: &[ResourceRef],
    ) -> Result<Vec<ResourceRef>, ResourceError> {
        for (i, export) in exports.iter().enumerate() {
            let record = self
                .records
                .get(&export.token)
                .ok_or(ResourceError::Unavailable)?;
            if record.state != (State::Provisional { parent })
                || exports[..i].iter().any(|other| other.token == export.token)
            {
                return Err(ResourceError::Unavailable);
            }
            if record.type_id != export.type_id {
                return Err(ResourceError::TypeMismatch);
            }
        }
        for export in exports {
            self.records
                .get_mut(&export.token)
                .expect("checked above")
                .state = State::Active;
        }
        Ok(self.retire_parent(parent))
    }

    /// The call `parent` failed, answered an invalid result or was cancelled: every
    /// provisional value it registered is retired and returned for its dispose.
    pub fn retire_parent(&mut self, parent: u64) -> Vec<ResourceRef> {
        self.registrations.remove(&parent);
        self.retire_where(|state| state == State::Provisional { parent })
    }

    /// Invalidates every live value (the owner went away). Unpinned ones are returned
    /// for their dispose; pinned ones are disposed of when their call settles.
    pub fn invalidate(&mut self) -> Vec<ResourceRef> {
        self.registrations.clear();
        self.retire_where(|state| matches!(state, State::Active | State::Provisional { .. }))
    }

    /// Retires the records whose state `which` picks: unpinned ones are returned, in
    /// token order, for their dispose; a pinned one waits for its call to settle.
    fn retire_where(&mut self, which: impl Fn(State) -> bool) -> Vec<ResourceRef> {
        let mut retired = Vec::new();
        for (token, record) in &mut self.records {
            if !which(record.state) {
                continue;
            }
            if record.pinned_by.is_some() {
                record.state = State::Retired;
            } else {
                record.state = State::Disposing;
                retired.push(ResourceRef {
                    token: token.clone(),
                    type_id: record.type_id.clone(),
                });
            }
        }
        retired.sort_by(|a, b| a.token.cmp(&b.token));
        retired
    }

    /// The extension confirmed (or failed) the cleanup of `token`: its record is gone.
    pub fn disposed(&mut self, token: &str) {
        if self
            .records
            .get(token)
            .is_some_and(|record| record.state == State::Disposing)
        {
            self.records.remove(token);
        }
    }

    /// True when `token` is a live, active value of `type_id`.
    pub fn is_active(&self, resource: &ResourceRef) -> bool {
        self.live(resource, None).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn circuit() -> TypeId {
        TypeId::parse("Circuit").unwrap()
    }

    #[test]
    fn a_value_is_usable_only_once_its_call_exported_it() {
        let mut table = ResourceTable::new("res-t");
        let value = table.register(1, circuit()).unwrap();
        assert_eq!(
            table.pin(2, std::slice::from_ref(&value)),
            Err(ResourceError::Unavailable)
        );
        assert_eq!(table.export(1, std::slice::from_ref(&value)), Ok(vec![]));
        assert!(table.is_active(&value));
        table.pin(2, std::slice::from_ref(&value)).unwrap();
        assert_eq!(
            table.pin(3, std::slice::from_ref(&value)),
            Err(ResourceError::Busy)
        );
        assert_eq!(table.release(4, &value), Err(ResourceError::Busy));
        assert_eq!(table.unpin(2), vec![]);
        assert_eq!(table.release(4, &value), Ok(value.clone()));
        assert_eq!(
            table.pin(5, std::slice::from_ref(&value)),
            Err(ResourceError::Unavailable)
        );
        assert_eq!(table.len(), 1, "a disposing value still counts");
        table.disposed(&value.token);
        assert!(table.is_empty());
    }

    #[test]
    fn a_failed_call_retires_what_it_registered_and_exports_are_atomic() {
        let mut table = ResourceTable::new("res-t");
        let a = table.register(1, circuit()).unwrap();
        let b = table.register(1, circuit()).unwrap();
        let other = table.register(9, circuit()).unwrap();
        // An export of another parent's value changes nothing.
        assert_eq!(
            table.export(1, &[a.clone(), other.clone()]),
            Err(ResourceError::Unavailable)
        );
        assert!(!table.is_active(&a));
        let wrong_type = ResourceRef {
            token: a.token.clone(),
            type_id: TypeId::parse("Part").unwrap(),
        };
        assert_eq!(
            table.export(1, &[wrong_type]),
            Err(ResourceError::TypeMismatch)
        );
        // Exported values activate; the rest of the parent's are retired.
        assert_eq!(
            table.export(1, std::slice::from_ref(&a)),
            Ok(vec![b.clone()])
        );
        assert_eq!(table.retire_parent(9), vec![other]);
        assert!(table.is_active(&a));
    }

    #[test]
    fn quotas_bound_records_and_registrations_per_parent() {
        let mut table = ResourceTable::new("res-t");
        for _ in 0..RESOURCE_REFS_MAX_REGISTRATIONS_PER_PARENT {
            table.register(1, circuit()).unwrap();
        }
        assert_eq!(
            table.register(1, circuit()),
            Err(ResourceError::QuotaExceeded)
        );
        for parent in 2..=8 {
            for _ in 0..RESOURCE_REFS_MAX_REGISTRATIONS_PER_PARENT {
                table.register(parent, circuit()).unwrap();
            }
        }
        assert_eq!(table.len(), RESOURCE_REFS_MAX_RECORDS as usize);
        assert_eq!(
            table.register(100, circuit()),
            Err(ResourceError::QuotaExceeded)
        );
    }

    #[test]
    fn invalidation_waits_for_a_pinning_call_before_its_dispose() {
        let mut table = ResourceTable::new("res-t");
        let pinned = table.register(1, circuit()).unwrap();
        let free = table.register(1, circuit()).unwrap();
        table.export(1, &[pinned.clone(), free.clone()]).unwrap();
        table.pin(2, std::slice::from_ref(&pinned)).unwrap();
        assert_eq!(table.invalidate(), vec![free]);
        assert!(!table.is_active(&pinned));
        assert_eq!(table.unpin(2), vec![pinned]);
    }

    #[test]
    fn one_call_cannot_pin_a_value_twice() {
        let mut table = ResourceTable::new("res-t");
        let value = table.register(1, circuit()).unwrap();
        table.export(1, std::slice::from_ref(&value)).unwrap();
        assert_eq!(
            table.pin(2, &[value.clone(), value.clone()]),
            Err(ResourceError::Busy)
        );
        table.pin(3, &[value]).unwrap();
    }
}
