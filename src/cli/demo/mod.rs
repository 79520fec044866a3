//! `demo`: the bundled example extensions through the whole protocol, as a transcript.
//!
//! The manifests live in a temporary directory and start this very binary with
//! `__extension <example>`: hello-world on API 0.1, git-status and checkpoint on API
//! 0.4; then the test-extension fixture (crash and restart), a reload of hello-world,
//! the showcase example (host services) on API 0.4, notes (Wave-1 services) on API
//! 0.2, turns (session and frontend services) on API 0.4, delegate (child agent
//! sessions through an example scripted service) on API 0.2, and hello-world on API
//! 0.3. The
//! workspace is a temporary git repository (one commit, one modified file) when `git`
//! is available, a plain directory otherwise.

mod agents;
mod bound_services;
mod canonical;
mod composition;
mod resources;
mod services;
mod session_services;
mod setup;
mod steps;
mod supervision;
mod transcript;

use std::time::{Duration, Instant};

use serde_json::json;

use super::error::CliError;
use super::output::Report;
use super::session::Session;
use crate::examples::scripted_agents::ScriptedAgents;
use crate::host::{ExtensionHandle, ExtensionHost, HostEvent, ServiceBindings};
use setup::{DemoWorld, WorkspaceKind};
use transcript::Transcript;

/// Runs the demo; `json` selects the JSON document instead of the transcript.
pub(crate) fn run(json: bool) -> Result<Report, CliError> {
    let program = std::env::current_exe().map_err(CliError::Host)?;
    let world = DemoWorld::create(&program).map_err(CliError::Host)?;
    let bound = bound_services::DemoServices::new();
    let frontend = session_services::DemoFrontend::default();
    let mut builder = ExtensionHost::builder(&world.workspace)
        .no_global_extensions()
        .guardian(true)
        .bind_for(setup::NOTES, bound.bindings())
        .bind_for(setup::TURNS, frontend.bindings())
        .bind_for(
            setup::DELEGATE,
            ServiceBindings::new().agent_sessions(ScriptedAgents::new(&world.workspace)),
        )
        .tool_composition(true)
        .resource_refs(true)
        .bulk_storage(crate::features::bulk::BulkStorage::temporary());
    for dir in &world.extension_dirs {
        builder = builder.extension_dir(dir);
    }
    let session = Session::from_builder(builder)?;
    let mut demo = Demo {
        session: &session,
        world: &world,
        t: Transcript::new(json),
        events: Vec::new(),
        started: Vec::new(),
        later_pids: Vec::new(),
        bound,
        frontend,
    };
    demo.run_all();
    let Demo { t, events, .. } = demo;
    let failed = t.failed();
    let total = t.len();
    if failed == 0 {
        t.line(format!("\nDemo finished: {total} steps, all passed."));
    } else {
        t.line(format!(
            "\nDemo finished: {failed} of {total} steps failed."
        ));
    }
    let document = json!({
        "ok": failed == 0,
        "workspace": {
            "path": world.workspace,
            "git": world.kind == WorkspaceKind::Git,
        },
        "extension_dirs": world.extension_dirs,
        "steps": t.into_steps(),
        "events": events.iter().map(crate::host::HostEvent::to_value).collect::<Vec<_>>(),
        "summary": {"steps": total, "failed": failed},
    });
    let mut report = Report::new(document, String::new());
    if failed > 0 {
        report.failure = Some(CliError::DemoFailed { failed });
    }
    session.finish(Ok(report))
}

/// The demo's state while it runs.
struct Demo<'a> {
    session: &'a Session,
    world: &'a DemoWorld,
    t: Transcript,
    /// Every host event received so far, in order.
    events: Vec<HostEvent>,
    /// Every extension that started, for the process check after shutdown.
    started: Vec<ExtensionHandle>,
    /// Processes of later generations (restarts, reloads), for the same check.
    later_pids: Vec<u32>,
    /// The Wave-1 services bound for notes.
    bound: bound_services::DemoServices,
    /// The session and frontend services bound for turns.
    frontend: session_services::DemoFrontend,
}

impl Demo<'_> {
    fn run_all(&mut self) {
        self.intro();
        self.discovery();
        let [hello, git, checkpoint] = self.start_all();
        let git_output = self.tool_calls(hello.as_ref(), git.as_ref());
        if let (Some(git), Some((text, is_error))) = (git.as_ref(), git_output) {
            self.render(git, &text, is_error);
        }
        if let Some(checkpoint) = checkpoint.as_ref() {
            self.command(checkpoint);
            self.hook(checkpoint);
        }
        self.context_and_status(hello.as_ref(), git.as_ref(), checkpoint.as_ref());
        self.crash_and_restart();
        if let Some(hello) = hello.as_ref() {
            self.reload(hello);
        }
        self.host_services();
        self.notes_services();
        self.session_services();
        self.agent_sessions();
        self.composition();
        self.resource_refs();
        self.canonical_wire();
        self.host_events();
        self.shutdown();
    }

    /// Moves every delivered host event into `events`.
    fn collect_events(&mut self) {
        let fresh = self.session.drain_events();
        self.events.extend(fresh);
    }

    /// Receives host events into `events` until one from index `from` on satisfies
    /// `found`, or `within` passes. Returns the index of the first match.
    fn await_event(
        &mut self,
        from: usize,
        within: Duration,
        found: impl Fn(&HostEvent) -> bool,
    ) -> Option<usize> {
        self.collect_events();
        let deadline = Instant::now() + within;
        let mut next = from;
        loop {
            if let Some(offset) = self.events[next..].iter().position(&found) {
                return Some(next + offset);
            }
            next = self.events.len();
            let left = deadline.checked_duration_since(Instant::now())?;
            match self.session.host().events().recv_timeout(left) {
                Ok(event) => self.events.push(event),
                Err(_) => return None,
            }
        }
    }

    fn intro(&mut self) {
        let world = self.world;
        self.t
            .line("octet-host demo · bundled example extensions, started from this binary");
        let workspace = match &world.kind {
            WorkspaceKind::Git => format!(
                "{} (git repository on main: one commit, README.md modified)",
                world.workspace.display()
            ),
            WorkspaceKind::Plain { reason } => format!(
                "{} (plain directory: {reason}; git_status will answer an error result)",
                world.workspace.display()
            ),
        };
        self.t.detail(format!("workspace   {workspace}"));
        self.t.detail(format!(
            "manifests   {}",
            world.root().join("extensions").display()
        ));
    }
}
