//! The demo's steps, in transcript order.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::setup::{Example, WorkspaceKind, BROKEN, EXAMPLES, MORE_EXAMPLES};
use super::Demo;
use crate::cli::command::command_text;
use crate::cli::discover::{catalog_json, catalog_text};
use crate::cli::encode;
use crate::cli::error::CliError;
use crate::cli::hook::hook_text;
use crate::cli::output::{context_line, diagnostic_line, event_line, notification_line};
use crate::host::{
    CallError, CallOptions, ExtensionHandle, HostEvent, LifecycleState, StartedExtension,
};
use crate::manifest::UiSurface;
use crate::validate::{Disposition, HookPayload, RenderOutput};

/// The tool call arguments of hello_world.
const HELLO_NAME: &str = "octet";

/// The checkpoint label of the command step.
const CHECKPOINT_LABEL: &str = "release-v2";

/// The prompt of the hook and context steps.
const PROMPT: &str = "Summarize my changes before the checkpoint";

/// How long stderr lines may trail the answers they came with.
const EVENT_QUIET: Duration = Duration::from_millis(200);

/// The most the demo waits for trailing events.
const EVENT_SETTLE: Duration = Duration::from_secs(1);

/// How long the process check waits for a pid to disappear after shutdown.
const PROCESS_GONE_WITHIN: Duration = Duration::from_secs(3);

/// How often the demo polls a process or the host status while it waits.
pub(super) const POLL_INTERVAL: Duration = Duration::from_millis(20);

/// Longest segment excerpt shown for `tool/render`.
const EXCERPT_CHARS: usize = 48;

impl Demo<'_> {
    pub(super) fn discovery(&mut self) {
        self.t
            .section("Discovery (reads manifests, executes nothing)");
        self.t.request(format!(
            "discover {} explicit extension directories (global extensions skipped)",
            self.world.extension_dirs.len()
        ));
        let catalog = self.session.host().discover();
        self.t.line(catalog_text(&catalog, "    ").trim_end());
        let found = EXAMPLES
            .iter()
            .chain(&MORE_EXAMPLES)
            .all(|e| catalog.get(e.name).is_some());
        let diagnosed = catalog.diagnostics.iter().any(|d| {
            d.path
                .starts_with(self.world.root().join("extensions").join(BROKEN))
        });
        if diagnosed {
            self.t.detail(format!(
                "  ({BROKEN} is broken on purpose: a diagnostic for that entry, not a failure)"
            ));
        }
        if !found {
            self.t.failure("not every bundled example was discovered");
        }
        self.t.record(
            "discover",
            found,
            json!({"catalog": catalog_json(&catalog)}),
        );
    }

    pub(super) fn start_all(&mut self) -> [Option<ExtensionHandle>; 3] {
        self.t.section("Start and initialize");
        EXAMPLES.map(|example| self.start_example(&example, "start"))
    }

    /// Starts `example`, prints what `initialize` settled, and records it as `step`.
    pub(super) fn start_example(
        &mut self,
        example: &Example,
        step: &str,
    ) -> Option<ExtensionHandle> {
        self.t.request(format!(
            "spawn {} and initialize (api {})",
            example.name, example.api
        ));
        match self.session.start(example.name) {
            Ok(extension) => {
                let info = extension.info();
                self.t.answer(ready_text(info));
                let data = json!({
                    "extension": example.name,
                    "generation": info.generation,
                    "pid": info.pid,
                    "negotiated": encode::negotiated(&info.negotiated),
                });
                self.t.record(step, true, data);
                self.started.push(extension.clone());
                Some(extension)
            }
            Err(error) => {
                self.t.failure(error.to_string());
                self.t.record(
                    step,
                    false,
                    json!({"extension": example.name, "error": error.to_json()}),
                );
                None
            }
        }
    }

    /// Calls hello_world and git_status; returns git_status's text and is_error.
    pub(super) fn tool_calls(
        &mut self,
        hello: Option<&ExtensionHandle>,
        git: Option<&ExtensionHandle>,
    ) -> Option<(String, bool)> {
        self.t.section("Tool calls (tool/call)");
        if let Some(hello) = hello {
            let arguments = json!({ "name": HELLO_NAME });
            self.t
                .request(format!("tool/call hello-world hello_world {arguments}"));
            let result = hello.call_tool("hello_world", arguments.clone(), CallOptions::default());
            let ok = result
                .as_ref()
                .is_ok_and(|o| !o.is_error && o.text().starts_with("Hello, "));
            self.tool_answer("hello_world", "hello-world", arguments, result, ok);
        }
        let git = git?;
        self.t.request("tool/call git-status git_status {}");
        let result = git.call_tool("git_status", json!({}), CallOptions::default());
        let outcome = result.as_ref().ok().map(|o| (o.text(), o.is_error));
        let expected_error = matches!(self.world.kind, WorkspaceKind::Plain { .. });
        let ok = result.as_ref().is_ok_and(|o| o.is_error == expected_error);
        self.tool_answer("git_status", "git-status", json!({}), result, ok);
        if expected_error && ok {
            self.t
                .detail("  (an error result is expected: the workspace is not a git repository)");
        }
        outcome
    }

    pub(super) fn tool_answer(
        &mut self,
        tool: &str,
        extension: &str,
        arguments: Value,
        result: Result<crate::validate::ToolResult, CallError>,
        ok: bool,
    ) {
        let mut data = json!({"extension": extension, "tool": tool, "arguments": arguments});
        match result {
            Ok(output) => {
                let marker = if output.is_error { " (is_error)" } else { "" };
                self.t.answer(format!("{}{marker}", output.text()));
                data["output"] = encode::tool_output(&output);
            }
            Err(error) => {
                data["error"] = self.call_failed(extension, &format!("tool `{tool}`"), error)
            }
        }
        if !ok && data.get("error").is_none() {
            self.t.failure("unexpected tool output");
        }
        self.t.record("tool_call", ok, data);
    }

    /// Prints a failed call and returns its JSON error.
    pub(super) fn call_failed(&self, extension: &str, target: &str, error: CallError) -> Value {
        let error = CliError::Call {
            extension: extension.to_owned(),
            target: target.to_owned(),
            error: Box::new(error),
        };
        self.t.failure(error.to_string());
        error.to_json()
    }

    pub(super) fn render(&mut self, git: &ExtensionHandle, output: &str, is_error: bool) {
        self.t.section("Rendering (tool/render)");
        self.t
            .request("tool/render git-status git_status (the output above)");
        let result = git.render_tool(
            "git_status",
            json!({}),
            output,
            is_error,
            CallOptions::default(),
        );
        let mut data = json!({"extension": "git-status", "tool": "git_status"});
        let ok = match result {
            Ok(rendered) => {
                self.t.answer(segments_text(&rendered));
                data["output"] = encode::render_output(&rendered);
                true
            }
            Err(e) => {
                data["error"] = self.call_failed("git-status", "tool/render `git_status`", e);
                false
            }
        };
        self.t.record("tool_render", ok, data);
    }

    pub(super) fn command(&mut self, checkpoint: &ExtensionHandle) {
        self.t.section("Command (command/execute)");
        self.t.request(format!(
            "command/execute checkpoint /checkpoint {CHECKPOINT_LABEL}"
        ));
        let result = checkpoint.execute_command(
            "checkpoint",
            vec![CHECKPOINT_LABEL.to_owned()],
            CallOptions::default(),
        );
        let mut data = json!({"extension": "checkpoint", "command": "checkpoint",
                              "arguments": [CHECKPOINT_LABEL]});
        let ok = match result {
            Ok(output) => {
                self.t.answer(command_text(&output, ""));
                data["output"] = encode::command_output(&output);
                true
            }
            Err(e) => {
                data["error"] = self.call_failed("checkpoint", "command `checkpoint`", e);
                false
            }
        };
        self.t.record("command", ok, data);
    }

    pub(super) fn hook(&mut self, checkpoint: &ExtensionHandle) {
        self.t.section("Hook (hook/run)");
        let payload = HookPayload::BeforePrompt {
            prompt: PROMPT.to_owned(),
        };
        self.t.request(format!(
            "hook/run checkpoint before_prompt {}",
            payload.to_value()
        ));
        let mut data = json!({"extension": "checkpoint", "hook": "before_prompt",
                              "payload": payload.to_value()});
        let ok = match checkpoint.run_hook(payload, CallOptions::default()) {
            Ok(output) => {
                self.t.answer(hook_text(&output, ""));
                data["output"] = encode::hook_output(&output);
                *output.effective_disposition() == Disposition::Continue
            }
            Err(e) => {
                data["error"] = self.call_failed("checkpoint", "hook `before_prompt`", e);
                false
            }
        };
        self.t.record("hook", ok, data);
    }

    pub(super) fn context_and_status(
        &mut self,
        hello: Option<&ExtensionHandle>,
        git: Option<&ExtensionHandle>,
        checkpoint: Option<&ExtensionHandle>,
    ) {
        self.t
            .section("Context and status (context/collect, status/collect)");
        for extension in [checkpoint, hello].into_iter().flatten() {
            self.t.request(format!(
                "context/collect {} (prompt: {PROMPT:?})",
                extension.name()
            ));
            let mut data = json!({"extension": extension.name()});
            let ok = match extension.collect_context(Some(PROMPT), CallOptions::default()) {
                Ok(contributions) => {
                    let lines: Vec<String> = contributions.iter().map(context_line).collect();
                    self.t.answer(if lines.is_empty() {
                        "nothing".to_owned()
                    } else {
                        lines.join("\n")
                    });
                    data["contributions"] =
                        Value::Array(contributions.iter().map(encode::context).collect());
                    true
                }
                Err(e) => {
                    data["error"] = self.call_failed(extension.name(), "context/collect", e);
                    false
                }
            };
            self.t.record("context_collect", ok, data);
        }
        for extension in [git, hello].into_iter().flatten() {
            self.t.request(format!(
                "status/collect {} (surface: status)",
                extension.name()
            ));
            let mut data = json!({"extension": extension.name(), "surface": "status"});
            let ok = match extension.collect_status(UiSurface::Status, CallOptions::default()) {
                Ok(Some(status)) => {
                    let role = status.style_role.as_deref().unwrap_or("unstyled");
                    self.t.answer(format!("{}   [{role}]", status.text));
                    data["contribution"] = encode::status_contribution(&status);
                    true
                }
                Ok(None) => {
                    self.t.answer("nothing to show");
                    data["contribution"] = Value::Null;
                    true
                }
                Err(e) => {
                    data["error"] = self.call_failed(extension.name(), "status/collect", e);
                    false
                }
            };
            self.t.record("status_collect", ok, data);
        }
    }

    pub(super) fn host_events(&mut self) {
        self.t
            .section("Host events (notifications, diagnostics, stderr)");
        self.collect_events();
        let trailing = self.session.settle_events(EVENT_QUIET, EVENT_SETTLE);
        self.events.extend(trailing);
        let mut notifications = Vec::new();
        let mut diagnostics = Vec::new();
        let mut others = Vec::new();
        for event in &self.events {
            match event {
                HostEvent::Notification {
                    source,
                    notification,
                } => notifications.push(format!("{source} {}", notification_line(notification))),
                HostEvent::Diagnostic { source, diagnostic } => {
                    diagnostics.push(format!("{source} {}", diagnostic_line(diagnostic)))
                }
                other => others.extend(event_line(other)),
            }
        }
        let lifecycle: Vec<String> = state_chains(&self.events)
            .into_iter()
            .map(|(source, chain)| format!("{source} {chain}"))
            .collect();
        for (title, lines) in [
            ("notifications", notifications),
            ("diagnostics and stderr lines", diagnostics),
            ("other events", others),
            ("lifecycle", lifecycle),
        ] {
            if lines.is_empty() && title == "other events" {
                continue;
            }
            self.t.detail(title);
            if lines.is_empty() {
                self.t.detail("  • none");
            }
            for line in lines {
                self.t.detail(format!("  • {line}"));
            }
        }
        let events: Vec<Value> = self.events.iter().map(HostEvent::to_value).collect();
        self.t
            .record("host_events", true, json!({"events": events}));
    }

    pub(super) fn shutdown(&mut self) {
        self.t.section("Shutdown (section 1.8)");
        self.t
            .request("shutdown every extension: 2 s for the ack, 2 s for the exit, 3 s in all");
        let report = self.session.shutdown();
        let before = self.events.len();
        self.collect_events();
        let chains = state_chains(&self.events[before..]);
        let mut all_clean = true;
        for ended in &report.extensions {
            let clean = ended.acknowledged && !ended.forced;
            all_clean &= clean;
            let ack = if ended.acknowledged {
                "acknowledged"
            } else {
                "not acknowledged"
            };
            let forced = if ended.forced {
                "forced (killed)"
            } else {
                "not forced"
            };
            let exit = ended
                .exit_status
                .as_deref()
                .unwrap_or("exit status unknown");
            let source = format!("{}#{}", ended.extension, ended.generation);
            let chain = chains
                .iter()
                .find(|(s, _)| *s == source)
                .map(|(_, chain)| chain.as_str())
                .unwrap_or(ended.final_state.as_str());
            self.t
                .answer(format!("{source}: {ack}, {forced}, {exit} ({chain})"));
            if !clean {
                self.t
                    .failure(format!("{source} did not shut down cleanly"));
            }
        }
        let every_started = self.started.iter().all(|e| {
            report
                .extensions
                .iter()
                .any(|r| r.extension == e.name() && r.final_state == LifecycleState::Stopped)
        });
        let ok = all_clean && every_started;
        self.t
            .record("shutdown", ok, json!({"report": report.to_value()}));
        self.process_check();
    }

    /// Checks through `/proc/<pid>/stat` that every child is gone (a zombie counts as
    /// gone: it no longer runs).
    fn process_check(&mut self) {
        let mut pids: Vec<u32> = self.started.iter().map(|e| e.info().pid).collect();
        pids.extend(&self.later_pids);
        let deadline = Instant::now() + PROCESS_GONE_WITHIN;
        let mut left: Vec<u32> = pids.clone();
        while !left.is_empty() && Instant::now() < deadline {
            left.retain(|pid| child_alive(*pid));
            if !left.is_empty() {
                std::thread::sleep(POLL_INTERVAL);
            }
        }
        let list = |pids: &[u32]| {
            pids.iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        };
        let ok = left.is_empty();
        if ok {
            self.t.line(format!(
                "  ✓ no child process left: pids {} are gone",
                list(&pids)
            ));
        } else {
            self.t
                .failure(format!("child processes still running: {}", list(&left)));
        }
        self.t
            .record("processes", ok, json!({"pids": pids, "running": left}));
    }
}

/// "ready · generation N · pid P" and what `initialize` settled, one item a line.
pub(super) fn ready_text(info: &StartedExtension) -> String {
    let n = &info.negotiated;
    let none = |items: Vec<String>| {
        if items.is_empty() {
            "none".to_owned()
        } else {
            items.join(", ")
        }
    };
    format!(
        "ready · generation {} · pid {}\n\
         api_version  {}\n\
         features     {}\n\
         concurrency  at most {} requests at once\n\
         tools        {}\n\
         commands     {}",
        info.generation,
        info.pid,
        n.api_version,
        none(n.features.iter().map(|f| f.as_str().to_owned()).collect()),
        n.max_concurrent_requests,
        none(n.tools.iter().map(|t| t.name.clone()).collect()),
        none(n.commands.iter().map(|c| format!("/{}", c.name)).collect()),
    )
}

/// Waits up to `within` for `pid` to be gone; true when it is.
pub(super) fn wait_gone(pid: u32, within: Duration) -> bool {
    let deadline = Instant::now() + within;
    while child_alive(pid) {
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(POLL_INTERVAL);
    }
    true
}

/// True while `pid` names a process that is not a zombie.
pub(super) fn process_alive(pid: u32) -> bool {
    stat_fields(pid).is_some_and(|(state, _)| !matches!(state.as_str(), "Z" | "X"))
}

/// True while `pid` names a live child of this process: the demo's extensions are its
/// children, so a pid the kernel already gave to someone else's process (pids are
/// reused, sooner on a busy machine) does not count as one of them still running.
fn child_alive(pid: u32) -> bool {
    process_alive(pid) && stat_fields(pid).is_some_and(|(_, parent)| parent == std::process::id())
}

/// The state letter and the parent pid of `pid`, from `/proc/<pid>/stat` (they follow
/// the parenthesised command name).
fn stat_fields(pid: u32) -> Option<(String, u32)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let mut rest = stat.rsplit(')').next()?.split_whitespace();
    let state = rest.next()?.to_string();
    let parent = rest.next()?.parse().ok()?;
    Some((state, parent))
}

/// Each generation's state changes among `events`, as `a → b → c`, in first-seen order.
/// A state repeated right after itself (the host reports a generation's final state
/// once more when it forgets the generation) is shown once.
pub(super) fn state_chains(events: &[HostEvent]) -> Vec<(String, String)> {
    let mut chains: Vec<(String, Vec<&'static str>)> = Vec::new();
    for event in events {
        if let HostEvent::StateChanged { source, state } = event {
            let key = source.to_string();
            match chains.iter_mut().find(|(k, _)| *k == key) {
                Some((_, states)) => {
                    if states.last() != Some(&state.as_str()) {
                        states.push(state.as_str());
                    }
                }
                None => chains.push((key, vec![state.as_str()])),
            }
        }
    }
    chains
        .into_iter()
        .map(|(k, states)| (k, states.join(" → ")))
        .collect()
}

/// One line per render segment: its style role and an excerpt of its text.
fn segments_text(rendered: &RenderOutput) -> String {
    let lines: Vec<String> = rendered
        .segments
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let role = s.style_role.as_deref().unwrap_or("unstyled");
            format!("segment {} · {role}: {}", i + 1, excerpt(&s.text))
        })
        .collect();
    lines.join("\n")
}

/// `text` quoted with escapes, cut to [`EXCERPT_CHARS`] characters.
fn excerpt(text: &str) -> String {
    let quoted = format!("{text:?}");
    if quoted.chars().count() <= EXCERPT_CHARS {
        return quoted;
    }
    let cut: String = quoted.chars().take(EXCERPT_CHARS).collect();
    format!("{cut}…\" ({} lines)", text.lines().count())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::GenerationRef;

    #[test]
    fn state_changes_chain_per_generation() {
        let source = |n: &str| GenerationRef {
            extension: n.into(),
            generation: 1,
        };
        let events = vec![
            HostEvent::StateChanged {
                source: source("a"),
                state: LifecycleState::Starting,
            },
            HostEvent::StateChanged {
                source: source("b"),
                state: LifecycleState::Ready,
            },
            HostEvent::StateChanged {
                source: source("a"),
                state: LifecycleState::Ready,
            },
            HostEvent::StateChanged {
                source: source("b"),
                state: LifecycleState::Crashed,
            },
            HostEvent::StateChanged {
                source: source("b"),
                state: LifecycleState::Crashed,
            },
        ];
        assert_eq!(
            state_chains(&events),
            vec![
                ("a#1".to_owned(), "starting → ready".to_owned()),
                ("b#1".to_owned(), "ready → crashed".to_owned())
            ]
        );
    }

    #[test]
    fn excerpts_are_bounded() {
        assert_eq!(excerpt("a\nb"), "\"a\\nb\"");
        let long = "x\n".repeat(100);
        let cut = excerpt(&long);
        assert!(cut.ends_with("(100 lines)"), "{cut}");
        assert!(cut.chars().count() < EXCERPT_CHARS + 20);
    }

    #[test]
    fn this_process_is_alive_and_a_bogus_pid_is_not() {
        assert!(process_alive(std::process::id()));
        assert!(!process_alive(u32::MAX));
        // This process is nobody's child here, and a child is one until it is reaped.
        assert!(!child_alive(std::process::id()));
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        assert!(child_alive(child.id()));
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(!child_alive(child.id()));
    }
}
