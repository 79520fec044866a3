//! The session and frontend services from the turns example (sections 1.4b, 2.21b,
//! 2.24, 2.24b): the demo binds a session writer with the private lane, a terminal, an
//! autocomplete-capable editor and session control, then awaits a model-turn hook, lets
//! the extension take the terminal, completes a slash command and waits for idle.

use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use serde_json::json;

use super::setup::{MORE_EXAMPLES, TURNS};
use super::Demo;
use crate::host::{CallError, CallOptions, LeafScope, ServiceBindings};
use crate::services::autocomplete::CompletionQuery;
use crate::services::bound::{
    Accepted, AppendEntry, AutocompleteRegistration, AutocompleteService, EntryId, NoParams,
    PrivateAppend, PrivateCommit, Reply, ServiceCall, SessionControlService, SessionEntryService,
    SessionId, SessionTarget, TerminalGrant, TerminalService,
};
use crate::validate::HookPayload;

/// How long the demo waits for the extension's completion chain to be admitted, and for
/// its answer (the host-wide query's 500 ms is for a person typing, not a busy machine).
const REGISTRATION_WITHIN: Duration = Duration::from_secs(5);

/// The demo's frontend for `turns`: what each service saw.
#[derive(Clone, Default)]
pub(super) struct DemoFrontend {
    journal: Arc<Mutex<Vec<String>>>,
}

impl DemoFrontend {
    /// The bindings for `turns`.
    pub(super) fn bindings(&self) -> ServiceBindings {
        ServiceBindings::new()
            .session_entries(self.clone())
            .terminal_handoff(self.clone())
            .autocomplete(self.clone())
            .session_control(self.clone())
    }

    fn log(&self, line: String) {
        self.journal.lock().push(line);
    }

    fn since(&self, from: usize) -> Vec<String> {
        self.journal.lock()[from..].to_vec()
    }

    fn len(&self) -> usize {
        self.journal.lock().len()
    }
}

impl SessionEntryService for DemoFrontend {
    fn append_entry(&self, _call: ServiceCall, entry: AppendEntry, reply: Reply<EntryId>) {
        self.log(format!("session/append_entry {}", entry.entry_type));
        reply.ok(EntryId("entry-public".into()));
    }
    fn append_private(
        &self,
        _call: ServiceCall,
        entry: PrivateAppend,
        reply: Reply<PrivateCommit>,
    ) {
        let n = self.len() + 1;
        let id = format!("private-{n}");
        self.log(format!(
            "private session/append_entry {} {} under {} -> committed {id}",
            entry.entry_type, entry.data, entry.session_leaf.operation_id
        ));
        reply.ok(PrivateCommit {
            entry_id: id.clone(),
            head: id,
        });
    }
}

impl TerminalService for DemoFrontend {
    fn acquire(&self, _call: ServiceCall, _: NoParams, reply: Reply<TerminalGrant>) {
        // The demo has no tty to hand over: it cedes a virtual 80x24 terminal.
        self.log("terminal/acquire -> ceded the terminal as grant tty-1 (80x24)".into());
        reply.ok(TerminalGrant {
            grant_id: "tty-1".into(),
            columns: 80,
            rows: 24,
        });
    }
    fn release(&self, _call: ServiceCall, _: NoParams, reply: Reply<()>) {
        self.log("terminal/release -> took the terminal back".into());
        reply.ok(());
    }
}

impl AutocompleteService for DemoFrontend {
    fn register(&self, _call: ServiceCall, r: AutocompleteRegistration, reply: Reply<Accepted>) {
        self.log(format!(
            "ui/autocomplete/register revision {} -> accepted",
            r.revision
        ));
        reply.ok(Accepted);
    }
}

impl SessionControlService for DemoFrontend {
    fn wait_for_idle(&self, _call: ServiceCall, _: SessionTarget, reply: Reply<SessionId>) {
        self.log("session/wait_for_idle -> idle".into());
        reply.ok(SessionId {
            session_id: "demo-session".into(),
        });
    }
}

impl Demo<'_> {
    /// Starts turns with the demo's frontend and runs each of its services once.
    pub(super) fn session_services(&mut self) {
        self.t
            .section("Session and frontend services (turns, API 0.4)");
        let Some(turns) = self.start_example(&MORE_EXAMPLES[4], "session_start") else {
            return;
        };
        let frontend = self.frontend.clone();

        // An awaited model-turn hook appends through its private lane.
        let from = frontend.len();
        self.t
            .request("model_turn_start, awaited, with a private session_leaf grant");
        let payload = HookPayload::ModelTurnStart {
            run_id: "run:demo".into(),
            turn_index: 0,
            timestamp_ms: 0,
        };
        let host = self.session.host();
        let outcome = host.session_operation_hook(
            &payload,
            &LeafScope::default(),
            CallOptions::default(),
            None,
        );
        let seen = frontend.since(from);
        for line in &seen {
            self.t.detail(format!("  service: {line}"));
        }
        let ok = matches!(&outcome, Ok(done) if done.iter().any(|(name, _)| name == TURNS))
            && seen.iter().any(|l| l.starts_with("private"));
        match &outcome {
            Ok(_) if ok => self
                .t
                .answer("continue; the private entry committed and the grant was revoked"),
            Ok(_) => self.t.failure("the hook ran without its private append"),
            Err(error) => self.t.failure(error.to_string()),
        }
        self.t.record(
            "model_turn_hook",
            ok,
            json!({"extension": TURNS, "services": seen}),
        );

        // The extension takes the terminal and gives it back.
        let from = frontend.len();
        self.t.request(format!("tool/call {TURNS} fullscreen {{}}"));
        let result = turns.call_tool("fullscreen", json!({}), CallOptions::default());
        let seen = frontend.since(from);
        for line in &seen {
            self.t.detail(format!("  service: {line}"));
        }
        let ok = match &result {
            Ok(output) => {
                self.t.answer(output.text());
                !output.is_error && seen.len() == 2
            }
            Err(error) => {
                self.t.failure(error.to_string());
                false
            }
        };
        self.t.record(
            "terminal_handoff",
            ok,
            json!({"extension": TURNS, "services": seen}),
        );

        // The editor asks the extension's completion chain once the frontend admitted
        // it (the extension registers it right after `initialize`).
        let query = CompletionQuery::new("ask /h", 6, 1);
        self.t
            .request("ui/autocomplete/complete {\"text\": \"ask /h\", \"cursor\": 6}");
        let deadline = Instant::now() + REGISTRATION_WITHIN;
        let completed = loop {
            let options = CallOptions::with_deadline(REGISTRATION_WITHIN);
            match turns.autocomplete(&query, options) {
                Err(CallError::NotDeclared { .. }) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(10));
                }
                outcome => break outcome,
            }
        };
        let items: Vec<String> = match &completed {
            Ok(reply) => reply
                .items
                .iter()
                .map(|(_, edit)| edit.text.clone())
                .collect(),
            Err(_) => Vec::new(),
        };
        let ok = items.iter().any(|t| t == "ask /help");
        match ok {
            true => self.t.answer(format!("completions: {}", items.join(", "))),
            false => self
                .t
                .failure(format!("no completion came back: {completed:?}")),
        }
        self.t.record(
            "autocomplete",
            ok,
            json!({"extension": TURNS, "texts": items}),
        );

        // Session control: wait for the active session's idle boundary.
        self.t.request(format!("tool/call {TURNS} wait_idle {{}}"));
        let result = turns.call_tool("wait_idle", json!({}), CallOptions::default());
        let ok = match &result {
            Ok(output) => {
                self.t.answer(output.text());
                !output.is_error
            }
            Err(error) => {
                self.t.failure(error.to_string());
                false
            }
        };
        self.t
            .record("session_control", ok, json!({"extension": TURNS}));
    }
}
