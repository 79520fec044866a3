//! Immutable bulk objects (section 2.27): the dispatcher's side of
//! `features::bulk`.
//!
//! `bulk/write` and `bulk/release` are answered at once; `bulk/commit` (the snapshot
//! copy and hash) and `bulk/read` (the lease copy) run on a thread of their own and
//! answer through the dispatcher, like a broker's answer, so that a 256 MiB copy never
//! holds the dispatcher. Every request needs a live `tool/call` parent; its
//! settlement cancels a commit still copying, whose blob is then never recorded.
//! A call's arguments grant it the blobs they carry ([`Dispatcher::grant_blobs`]); its
//! successful answer publishes the blobs it committed and returned.

use std::collections::HashSet;
use std::sync::Arc;

use serde_json::{json, Map, Value};

use crate::dispatcher::connection::{ChildKind, ChildRequest};
use crate::dispatcher::route::HostMethod;
use crate::dispatcher::Dispatcher;
use crate::features::bulk::blob::{is_media_type, parse_digest};
use crate::features::bulk::store::BulkStore;
use crate::features::bulk::{BlobRef, BulkError};
use crate::model::frontend::CancelFlag;
use crate::negotiation::{BulkObjectsOffer, Feature};
use crate::services::bound::{Outcome, ServiceAnswer};
use crate::transport::ConnId;
use crate::wire::RequestId;

/// The closed params of a bulk request: `parent_request_id` and exactly `members`.
fn closed<'a>(
    params: Option<&'a Value>,
    members: &[&str],
) -> Result<(u64, &'a Map<String, Value>), BulkError> {
    let map = params
        .and_then(Value::as_object)
        .ok_or_else(|| BulkError::unavailable("params must be an object"))?;
    if let Some(name) = map
        .keys()
        .find(|k| *k != "parent_request_id" && !members.contains(&k.as_str()))
    {
        return Err(BulkError::unavailable(format!(
            "the params have the unknown member `{name}` (no caller owner or path is accepted)"
        )));
    }
    for member in members {
        if !map.contains_key(*member) {
            return Err(BulkError::unavailable(format!("`{member}` is required")));
        }
    }
    let parent = map
        .get("parent_request_id")
        .and_then(Value::as_u64)
        .ok_or_else(|| BulkError::unavailable("`parent_request_id` must name a live tool/call"))?;
    Ok((parent, map))
}

fn profile(map: &Map<String, Value>) -> Result<(), BulkError> {
    match map.get("profile").and_then(Value::as_str) {
        Some(BulkObjectsOffer::PROFILE) => Ok(()),
        _ => Err(BulkError::unavailable(
            "`profile` must be \"local-file.v1\"",
        )),
    }
}

fn text<'a>(map: &'a Map<String, Value>, member: &str) -> Result<&'a str, BulkError> {
    map.get(member)
        .and_then(Value::as_str)
        .ok_or_else(|| BulkError::unavailable(format!("`{member}` must be a string")))
}

/// What a bulk job hands back: its answer, and the store work it still owes.
enum Job {
    Commit {
        ticket: crate::features::bulk::store::Ticket,
        parent: u64,
        extension: String,
        bytes: u64,
        sha256: String,
    },
    Read {
        lease: String,
        locator: String,
        snapshot: String,
        bytes: u64,
    },
}

impl Dispatcher {
    /// A `bulk/*` request of `conn`.
    pub(in crate::dispatcher) fn on_bulk_request(
        &mut self,
        conn: ConnId,
        id: &RequestId,
        method: HostMethod,
        params: Option<&Value>,
    ) -> Result<(), crate::wire::ResponseError> {
        match self.bulk_request(conn, id, method, params) {
            Ok(Some(answer)) => {
                self.answer_with(conn, id, &answer, false);
                Ok(())
            }
            Ok(None) => Ok(()),
            Err(error) => {
                self.report_refused(conn, method.name(), error.to_string());
                self.send_error(conn, id, &error.to_response_error());
                Ok(())
            }
        }
    }

    /// Answers at once (`Some`), or hands the request to a thread (`None`).
    fn bulk_request(
        &mut self,
        conn: ConnId,
        id: &RequestId,
        method: HostMethod,
        params: Option<&Value>,
    ) -> Result<Option<Value>, BulkError> {
        let c = self.conns.get(&conn).expect("connection is live");
        let store = match (
            self.shared.features.bulk.get(),
            c.features().contains(Feature::BulkObjectsV1),
        ) {
            (Some(store), true) => store.clone(),
            _ => return Err(BulkError::UnsupportedFeature),
        };
        let owner = c.owner.session_id.clone();
        let extension = c.source.extension.clone();
        let members: &[&str] = match method {
            HostMethod::BulkWrite => &["profile", "capacity", "media_type"],
            HostMethod::BulkCommit => &["ticket", "bytes", "digest"],
            HostMethod::BulkRead => &["profile", "blob"],
            _ => &["id"],
        };
        let (parent, map) = closed(params, members)?;
        if !c.pending.is_tool_call(&parent) {
            return Err(BulkError::unavailable(
                "`parent_request_id` names no live tool/call of this generation",
            ));
        }
        match method {
            HostMethod::BulkWrite => {
                profile(map)?;
                let capacity = map.get("capacity").and_then(Value::as_u64).ok_or_else(|| {
                    BulkError::unavailable("`capacity` must be a non-negative integer")
                })?;
                let media_type = text(map, "media_type")?;
                if !is_media_type(media_type) {
                    return Err(BulkError::unavailable(
                        "`media_type` must be a type/subtype",
                    ));
                }
                let (ticket, locator) = store.write(conn, &owner, capacity, media_type)?;
                Ok(Some(json!({
                    "ticket": ticket,
                    "profile": BulkObjectsOffer::PROFILE,
                    "locator": locator,
                    "capacity": capacity,
                })))
            }
            HostMethod::BulkCommit => {
                // The ticket is consumed first, so a malformed commit still spends it.
                let ticket = store.take_ticket(conn, text(map, "ticket")?)?;
                let checked = map
                    .get("bytes")
                    .and_then(Value::as_u64)
                    .zip(parse_digest(map.get("digest")));
                let Some((bytes, sha256)) = checked else {
                    store.finish_commit(
                        &ticket,
                        parent,
                        &extension,
                        0,
                        "",
                        None,
                        &CancelFlag::default(),
                    );
                    return Err(BulkError::unavailable(
                        "`bytes` must be a non-negative integer and `digest` a closed sha256 digest",
                    ));
                };
                self.bulk_job(
                    conn,
                    id,
                    parent,
                    store,
                    Job::Commit {
                        ticket,
                        parent,
                        extension,
                        bytes,
                        sha256,
                    },
                );
                Ok(None)
            }
            HostMethod::BulkRead => {
                profile(map)?;
                let blob = BlobRef::parse(&map["blob"])
                    .map_err(|problem| BulkError::unavailable(problem.to_string()))?;
                let (lease, locator, snapshot) =
                    store.lease(conn, parent, &extension, &owner, &blob)?;
                self.bulk_job(
                    conn,
                    id,
                    parent,
                    store,
                    Job::Read {
                        lease,
                        locator,
                        snapshot,
                        bytes: blob.bytes,
                    },
                );
                Ok(None)
            }
            _ => {
                store.release(conn, text(map, "id")?)?;
                Ok(Some(json!({"released": true})))
            }
        }
    }

    /// Runs a commit or read copy on a thread; its answer returns like a broker's.
    fn bulk_job(
        &mut self,
        conn: ConnId,
        id: &RequestId,
        parent: u64,
        store: Arc<BulkStore>,
        job: Job,
    ) {
        let cancelled = CancelFlag::default();
        let flag = cancelled.clone();
        if let Some(c) = self.conns.get_mut(&conn) {
            c.children.insert(
                id.clone(),
                ChildRequest {
                    kind: ChildKind::Brokered,
                    parent: Some(parent),
                    cancelled,
                },
            );
        }
        let answers = self.service_answer_sender.clone();
        let request_id = id.clone();
        let run = move || {
            let outcome = match job {
                Job::Commit {
                    ticket,
                    parent,
                    extension,
                    bytes,
                    sha256,
                } => {
                    let snapshot = store.snapshot(&ticket, bytes, &sha256);
                    let failure = snapshot.as_ref().err().cloned();
                    let recorded = store.finish_commit(
                        &ticket,
                        parent,
                        &extension,
                        bytes,
                        &sha256,
                        snapshot.ok(),
                        &flag,
                    );
                    match (recorded, failure) {
                        (Some(blob), _) => Outcome::Answered(blob.to_value()),
                        (None, Some(error)) => Outcome::Error(error.to_response_error()),
                        // The parent settled while it copied: nobody waits for it.
                        (None, None) => Outcome::Error(
                            BulkError::unavailable("the parent settled").to_response_error(),
                        ),
                    }
                }
                Job::Read {
                    lease,
                    locator,
                    snapshot,
                    bytes,
                } => match store.fill_lease(&snapshot, &locator) {
                    Ok(()) => Outcome::Answered(json!({
                        "lease": lease,
                        "profile": BulkObjectsOffer::PROFILE,
                        "locator": locator,
                        "bytes": bytes,
                    })),
                    Err(error) => {
                        store.drop_lease(&lease);
                        Outcome::Error(error.to_response_error())
                    }
                },
            };
            let _ = answers.send(ServiceAnswer {
                conn,
                id: request_id,
                outcome,
            });
        };
        if std::thread::Builder::new()
            .name("octet-bulk".into())
            .spawn(run)
            .is_err()
        {
            if let Some(c) = self.conns.get_mut(&conn) {
                c.children.remove(id);
            }
            let error = BulkError::StorageUnavailable("no thread for the copy".into());
            self.send_error(conn, id, &error.to_response_error());
        }
    }

    /// A `tool/call` of `tool` with `arguments` is sent as request `id` on a generation
    /// that negotiated bulk objects: the BlobRefs its arguments carry (at most 64) are
    /// the blobs it may read.
    pub(in crate::dispatcher) fn grant_blobs(
        &mut self,
        conn: ConnId,
        id: u64,
        tool: &str,
        arguments: &Value,
    ) {
        let Some(store) = self.shared.features.bulk.get() else {
            return;
        };
        let negotiated = self
            .conns
            .get(&conn)
            .is_some_and(|c| c.features().contains(Feature::BulkObjectsV1));
        if !negotiated {
            return;
        }
        let mut tokens = HashSet::new();
        for value in crate::features::bulk::blob_values(arguments, crate::limits::MAX_GRANTED_BLOBS)
        {
            if let Ok(blob) = BlobRef::parse(value) {
                tokens.insert(blob.token);
            }
        }
        store.grant(conn, id, tool, tokens);
    }

    /// The call `id` of `conn` ended without success: its provisional blobs go.
    pub(in crate::dispatcher) fn discard_blobs(&mut self, conn: ConnId, id: u64) {
        if let Some(store) = self.shared.features.bulk.get() {
            store.take_grant(conn, id);
            store.discard(conn, Some(id));
        }
    }

    /// The generation `conn` went away: its tickets, leases and provisional blobs go.
    pub(in crate::dispatcher) fn drop_bulk_generation(&mut self, conn: ConnId) {
        if let Some(store) = self.shared.features.bulk.get() {
            store.discard(conn, None);
        }
    }
}
