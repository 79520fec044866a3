//! The dynamic tool catalog's epochs as the extension keeps them (sections 1.2, 2.11,
//! 2.12, feature `dynamic_tools`).
//!
//! Revision 0 is the `initialize` catalog; every accepted `tools/register` or
//! `tools/unregister` makes the next one, and the host's answer lists the complete set
//! it accepted. Calls carry the revision the model saw (`tool/call.catalog_revision`),
//! and the extension must dispatch against that epoch's catalog, rejecting an unknown or
//! retired revision with -32602. Like the Python SDK, this keeps the last
//! [`RETAINED_EPOCHS`] committed epochs, and exposes the staged next epoch while a
//! mutation is out: the host publishes before it acknowledges, so a call for the new
//! revision can arrive before the answer does. Mutations are sent one at a time, so the
//! staged epoch is always the next revision.

use std::collections::{BTreeSet, VecDeque};

use parking_lot::{Mutex, MutexGuard};
use serde_json::{Map, Value};

/// Committed catalog epochs kept for calls of overlapping turns (section 2.12: the
/// Python SDK retains eight).
pub(crate) const RETAINED_EPOCHS: usize = 8;

/// The catalog methods whose answers make a new epoch.
pub(crate) const MUTATIONS: [&str; 2] = ["tools/register", "tools/unregister"];

/// One catalog revision and the tool names it offered.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Epoch {
    revision: u64,
    tools: BTreeSet<String>,
}

#[derive(Debug)]
struct Epochs {
    /// Oldest first; never empty.
    committed: VecDeque<Epoch>,
    /// The next epoch while a mutation awaits its answer.
    staged: Option<Epoch>,
}

/// A session's catalog epochs.
#[derive(Debug)]
pub(crate) struct CatalogEpochs {
    epochs: Mutex<Epochs>,
    /// Held from staging a mutation until its answer is committed or dropped.
    mutation: Mutex<()>,
}

/// Why a call's revision or tool cannot be dispatched; the message of its -32602.
pub(crate) type EpochError = String;

impl CatalogEpochs {
    /// Epoch 0: the tools of the `initialize` answer.
    pub(crate) fn new(initial: impl IntoIterator<Item = String>) -> CatalogEpochs {
        let first = Epoch {
            revision: 0,
            tools: initial.into_iter().collect(),
        };
        CatalogEpochs {
            epochs: Mutex::new(Epochs {
                committed: VecDeque::from([first]),
                staged: None,
            }),
            mutation: Mutex::new(()),
        }
    }

    /// Checks that `tool` belongs to epoch `revision` (the newest committed one when the
    /// call carries none).
    pub(crate) fn check(&self, revision: Option<u64>, tool: &str) -> Result<(), EpochError> {
        let epochs = self.epochs.lock();
        let newest = epochs.committed.back().expect("never empty");
        let revision = revision.unwrap_or(newest.revision);
        let epoch = epochs
            .committed
            .iter()
            .chain(&epochs.staged)
            .find(|e| e.revision == revision);
        let Some(epoch) = epoch else {
            let oldest = epochs.committed.front().expect("never empty").revision;
            return Err(if revision < oldest {
                format!("catalog revision {revision} is retired (the oldest kept is {oldest})")
            } else {
                format!("unknown catalog revision {revision}")
            });
        };
        if epoch.tools.contains(tool) {
            Ok(())
        } else {
            Err(format!(
                "tool `{tool}` is not in catalog revision {revision}"
            ))
        }
    }

    /// Stages the epoch a `tools/register` or `tools/unregister` with `params` would
    /// make, waiting while another mutation is out. The returned guard holds the
    /// mutation lock; hand it the answer with [`Staged::commit`], or drop it when the
    /// request failed.
    pub(crate) fn stage(&self, method: &str, params: &Map<String, Value>) -> Staged<'_> {
        let lock = self.mutation.lock();
        let mut epochs = self.epochs.lock();
        let newest = epochs.committed.back().expect("never empty");
        let mut tools = newest.tools.clone();
        if method == "tools/register" {
            let names = params.get("tools").and_then(Value::as_array);
            for tool in names.into_iter().flatten() {
                if let Some(name) = tool.get("name").and_then(Value::as_str) {
                    tools.insert(name.to_owned());
                }
            }
        } else {
            let names = params.get("names").and_then(Value::as_array);
            for name in names.into_iter().flatten().filter_map(Value::as_str) {
                tools.remove(name);
            }
        }
        epochs.staged = Some(Epoch {
            revision: newest.revision + 1,
            tools,
        });
        Staged {
            catalog: self,
            _lock: lock,
        }
    }
}

/// A staged mutation (see [`CatalogEpochs::stage`]); dropping it unstages.
pub(crate) struct Staged<'a> {
    catalog: &'a CatalogEpochs,
    _lock: MutexGuard<'a, ()>,
}

impl Staged<'_> {
    /// Commits the host's authoritative `{revision, tools}` answer as the newest epoch,
    /// retiring the oldest beyond [`RETAINED_EPOCHS`]. A malformed answer commits
    /// nothing.
    pub(crate) fn commit(self, answer: &Value) {
        let revision = answer.get("revision").and_then(Value::as_u64);
        let tools = answer.get("tools").and_then(Value::as_array).map(|tools| {
            tools
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect::<BTreeSet<String>>()
        });
        let (Some(revision), Some(tools)) = (revision, tools) else {
            return;
        };
        let mut epochs = self.catalog.epochs.lock();
        epochs.committed.retain(|e| e.revision != revision);
        epochs.committed.push_back(Epoch { revision, tools });
        while epochs.committed.len() > RETAINED_EPOCHS {
            epochs.committed.pop_front();
        }
    }
}

impl Drop for Staged<'_> {
    fn drop(&mut self) {
        self.catalog.epochs.lock().staged = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn params(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => unreachable!("test params are objects"),
        }
    }

    fn names(tools: &[&str]) -> Vec<String> {
        tools.iter().map(|t| (*t).to_owned()).collect()
    }

    #[test]
    fn calls_dispatch_against_the_epoch_they_name() {
        let catalog = CatalogEpochs::new(names(&["a"]));
        assert_eq!(catalog.check(Some(0), "a"), Ok(()));
        assert_eq!(catalog.check(None, "a"), Ok(()));
        assert!(catalog.check(Some(0), "b").unwrap_err().contains("not in"));
        assert!(catalog.check(Some(1), "a").unwrap_err().contains("unknown"));

        let staged = catalog.stage(
            "tools/register",
            &params(json!({"tools": [{"name": "b"}, {"name": "c"}]})),
        );
        // Published before acknowledged: revision 1 is callable while staged.
        assert_eq!(catalog.check(Some(1), "b"), Ok(()));
        assert_eq!(
            catalog.check(None, "a"),
            Ok(()),
            "the newest committed is still 0"
        );
        // The host's answer is authoritative: policy omitted `c`.
        staged.commit(&json!({"revision": 1, "tools": ["a", "b"]}));
        assert_eq!(catalog.check(Some(1), "b"), Ok(()));
        assert!(catalog.check(Some(1), "c").is_err());
        assert_eq!(catalog.check(None, "b"), Ok(()));
        // The old epoch still dispatches its own catalog.
        assert!(catalog.check(Some(0), "b").is_err());
        assert_eq!(catalog.check(Some(0), "a"), Ok(()));

        catalog
            .stage("tools/unregister", &params(json!({"names": ["a"]})))
            .commit(&json!({"revision": 2, "tools": ["b"]}));
        assert!(catalog.check(Some(2), "a").is_err());
        assert_eq!(catalog.check(Some(1), "a"), Ok(()));
    }

    #[test]
    fn a_failed_mutation_unstages_and_old_epochs_retire() {
        let catalog = CatalogEpochs::new(names(&["a"]));
        drop(catalog.stage("tools/register", &params(json!({"tools": [{"name": "b"}]}))));
        assert!(catalog.check(Some(1), "b").is_err(), "nothing committed");
        // A malformed answer commits nothing either.
        catalog
            .stage("tools/register", &params(json!({"tools": [{"name": "b"}]})))
            .commit(&json!({"revision": "1"}));
        assert!(catalog.check(Some(1), "b").is_err());

        for revision in 1..=RETAINED_EPOCHS as u64 {
            catalog
                .stage("tools/register", &params(json!({"tools": [{"name": "b"}]})))
                .commit(&json!({"revision": revision, "tools": ["a", "b"]}));
        }
        let retired = catalog.check(Some(0), "a").unwrap_err();
        assert!(retired.contains("retired"), "{retired}");
        assert_eq!(catalog.check(Some(1), "a"), Ok(()));
        assert_eq!(catalog.check(Some(RETAINED_EPOCHS as u64), "b"), Ok(()));
    }
}

/// The catalog epochs against a scripted host that answers the extension's own
/// `tools/register` (section 2.12).
#[cfg(test)]
mod scripted_host_tests {
    use crate::sdk::{Context, Extension, HandlerError, Tool, ToolOutput};
    use serde_json::{json, Value};

    use super::super::tests::ScriptedHost;

    fn call(host: &ScriptedHost, id: u64, name: &str, revision: u64) {
        host.send(
            json!({"jsonrpc": "2.0", "id": id, "method": "tool/call", "params": {
                "name": name, "arguments": {}, "catalog_revision": revision,
                "context": {"workspace": "/w"}}}),
        );
    }

    #[test]
    fn calls_use_the_epoch_they_name_including_the_staged_one() {
        let ext = Extension::new()
            .feature("dynamic_tools")
            .tool(
                "grow",
                "registers dyn",
                json!({"type": "object"}),
                |_: Value, cx: &Context| {
                    let params = json!({"tools": [{"name": "dyn", "description": "d",
                    "parameters": {"type": "object"}}]});
                    let Value::Object(params) = params else {
                        unreachable!()
                    };
                    let answer = cx
                        .request_detached("tools/register", params)
                        .map_err(|e| HandlerError::internal(e.to_string()))?;
                    Ok(ToolOutput::text(answer["revision"].to_string()))
                },
            )
            .dynamic_tool(
                Tool::new("dyn", "d", json!({"type": "object"})),
                |_: Value, _: &Context| Ok(ToolOutput::text("dyn ran")),
            );
        let host = ScriptedHost::start(ext);
        let init = host.initialize("/w", &["dynamic_tools"]);
        assert_eq!(
            init["result"]["protocol"]["features"],
            json!(["request_cancellation", "content_parts", "dynamic_tools"])
        );
        // Epoch 0 is the initialize catalog: `dyn` is not in it.
        call(&host, 2, "dyn", 0);
        assert_eq!(host.frames.answer(2)["error"]["code"], -32602);
        call(&host, 3, "grow", 0);
        let register = host
            .frames
            .wait_for("tools/register", |f| f["method"] == "tools/register");
        // Published before acknowledged: revision 1 is callable while the answer is out.
        call(&host, 4, "dyn", 1);
        assert_eq!(
            host.frames.answer(4)["result"]["content"][0]["text"],
            "dyn ran"
        );
        host.send(json!({"jsonrpc": "2.0", "id": register["id"],
                "result": {"revision": 1, "tools": ["grow", "dyn"]}}));
        assert_eq!(host.frames.answer(3)["result"]["content"][0]["text"], "1");
        call(&host, 5, "dyn", 1);
        assert_eq!(
            host.frames.answer(5)["result"]["content"][0]["text"],
            "dyn ran"
        );
        // The old epoch still has its own catalog; an unknown one is refused.
        call(&host, 6, "dyn", 0);
        assert_eq!(host.frames.answer(6)["error"]["code"], -32602);
        call(&host, 7, "grow", 0);
        let again = host.frames.wait_for("a second tools/register", |f| {
            f["method"] == "tools/register" && f["id"] != register["id"]
        });
        host.send(
            json!({"jsonrpc": "2.0", "id": again["id"], "error": {"code": -32602, "message": "no"}}),
        );
        assert!(host.frames.answer(7).get("error").is_some());
        call(&host, 8, "dyn", 2);
        let unknown = host.frames.answer(8);
        assert_eq!(unknown["error"]["code"], -32602);
        assert!(unknown["error"]["message"]
            .as_str()
            .unwrap()
            .contains("unknown catalog revision 2"));
        host.shut_down(9);
    }
}
