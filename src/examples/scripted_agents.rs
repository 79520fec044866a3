//! An example child-session service that runs no model: [`ScriptedAgents`] runs each
//! child as a deterministic script read from its message, so that `agent_sessions` can
//! be seen working (in the demo and the tests) without a model provider. It is an
//! honest example of an [`AgentSessionService`], not a model: it executes the granted
//! tools against the workspace, keeps real timestamps and statuses, reports usage of
//! zero, and handles interrupts and timeouts for real.
//!
//! A script is one command per line:
//!
//! | line | what the child does |
//! |---|---|
//! | `read <path>` | the `read` tool: appends the file's text to the output |
//! | `write <path> <text>` | the `write` tool: writes `<text>` to the file |
//! | `edit <path> <old> => <new>` | the `edit` tool: replaces the first `<old>` |
//! | `bash <command>` | the `bash` tool: `sh -c <command>` in the workspace; appends its stdout |
//! | `sleep <ms>` | waits (an interrupt or the timeout ends the wait) |
//! | `fail <error>` | fails the run with `<error>` |
//! | anything else | appended to the output as it is |
//!
//! Paths are relative to the workspace and may not leave it. A tool the child was not
//! granted fails that call (the run goes on). `agent/message` adds its lines to the
//! running script; `agent/follow_up` queues a script after the current run, or starts
//! a new run of a settled child. It also serves `agent/stop`, reports `agent/events`
//! observations, and lists the one child model it has (the inherited one); bind it
//! with [`ScriptedAgents::bindings`].

use std::collections::{HashMap, VecDeque};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::features::agents::hub::now_ms;
use crate::services::bound::{
    AgentEvent, AgentEventService, AgentLifetimeService, AgentModelRow, AgentModelService,
    AgentModels, AgentModelsQuery, AgentPhase, AgentReport, AgentReports, AgentSend,
    AgentSessionService, AgentSpawn, AgentSpawned, AgentStatus, AgentTarget, AgentTool, EventText,
    FollowUpDelivered, FollowUpDelivery, InterruptRequested, MessageDelivered, MessageDelivery,
    OutputChannel, RecentTool, Refusal, Reply, RunFinish, ServiceCall, StopRequested,
};

/// The example service: every child a thread running its script.
#[derive(Clone)]
pub struct ScriptedAgents {
    inner: Arc<Inner>,
}

struct Inner {
    workspace: PathBuf,
    next: AtomicU64,
    children: Mutex<HashMap<String, Arc<Child>>>,
}

/// One child: its script, its state and the condition its thread waits on.
struct Child {
    id: String,
    tools: Vec<AgentTool>,
    timeout: Option<Duration>,
    reports: AgentReports,
    state: Mutex<ChildState>,
    wake: Condvar,
}

struct ChildState {
    /// Lines still to run in this run.
    script: VecDeque<String>,
    /// Scripts of queued follow-ups.
    follow_ups: VecDeque<String>,
    /// The output of this run so far.
    output: String,
    running: bool,
    interrupt: bool,
    shutdown: bool,
    report: AgentReport,
}

impl ScriptedAgents {
    /// A service whose children work in `workspace`.
    pub fn new(workspace: impl Into<PathBuf>) -> ScriptedAgents {
        ScriptedAgents {
            inner: Arc::new(Inner {
                workspace: workspace.into(),
                next: AtomicU64::new(1),
                children: Mutex::new(HashMap::new()),
            }),
        }
    }

    /// The bindings of every `agent_sessions` kind this service serves: the sessions,
    /// their events, their lifetime and the (inherited-only) model list.
    pub fn bindings(&self) -> crate::services::bound::ServiceBindings {
        crate::services::bound::ServiceBindings::new()
            .agent_sessions(self.clone())
            .agent_session_events(self.clone())
            .agent_session_lifetime(self.clone())
            .agent_model_selection(self.clone())
    }

    /// Asks every child to shut down (an embedder does this when the host closes).
    pub fn shutdown_all(&self) {
        let children: Vec<Arc<Child>> = self
            .inner
            .children
            .lock()
            .unwrap()
            .values()
            .cloned()
            .collect();
        for child in children {
            let mut state = child.state.lock().unwrap();
            state.shutdown = true;
            let running = state.running;
            if !running {
                state.report.status = AgentStatus::Shutdown;
                let _ = child.reports.report(state.report.clone());
            }
            drop(state);
            child.wake.notify_all();
        }
    }

    fn child(&self, id: &str) -> Option<Arc<Child>> {
        self.inner.children.lock().unwrap().get(id).cloned()
    }
}

impl AgentSessionService for ScriptedAgents {
    fn spawn(&self, call: ServiceCall, params: AgentSpawn, reply: Reply<AgentSpawned>) {
        let Some(reports) = call.agent_reports().cloned() else {
            return reply.refuse(Refusal::Unavailable.because("no agent reports on this call"));
        };
        let id = format!("agent-{}", self.inner.next.fetch_add(1, Ordering::Relaxed));
        let child = Arc::new(Child {
            id: id.clone(),
            tools: params.policy.tools.clone(),
            timeout: params.policy.timeout_ms.map(Duration::from_millis),
            reports,
            state: Mutex::new(ChildState {
                script: params.message.lines().map(str::to_string).collect(),
                follow_ups: VecDeque::new(),
                output: String::new(),
                running: true,
                interrupt: false,
                shutdown: false,
                report: AgentReport::new(id.clone(), AgentStatus::Running),
            }),
            wake: Condvar::new(),
        });
        self.inner
            .children
            .lock()
            .unwrap()
            .insert(id.clone(), child.clone());
        let workspace = self.inner.workspace.clone();
        let started = std::thread::Builder::new()
            .name(format!("octet-scripted-{id}"))
            .spawn(move || child.run(&workspace));
        match started {
            Ok(_) => reply.ok(AgentSpawned {
                session: Some(format!("agent-session:{id}")),
                resolved_model: None,
                agent_id: id,
            }),
            Err(e) => {
                self.inner.children.lock().unwrap().remove(&id);
                reply.refuse(Refusal::Unavailable.because(format!("no thread for the child: {e}")))
            }
        }
    }

    fn message(&self, _call: ServiceCall, params: AgentSend, reply: Reply<MessageDelivered>) {
        let Some(child) = self.child(&params.target) else {
            return reply.refuse(Refusal::NotForegroundOwner.because("no such child"));
        };
        let mut state = child.state.lock().unwrap();
        let delivery = match state.running {
            true => {
                state
                    .script
                    .extend(params.message.lines().map(str::to_string));
                MessageDelivery::Steering
            }
            false => {
                state.follow_ups.push_back(params.message);
                MessageDelivery::Queued
            }
        };
        drop(state);
        child.wake.notify_all();
        reply.ok(MessageDelivered { delivery });
    }

    fn follow_up(&self, _call: ServiceCall, params: AgentSend, reply: Reply<FollowUpDelivered>) {
        let Some(child) = self.child(&params.target) else {
            return reply.refuse(Refusal::NotForegroundOwner.because("no such child"));
        };
        let mut state = child.state.lock().unwrap();
        if state.shutdown {
            return reply.refuse(Refusal::NotForegroundOwner.because("the child was shut down"));
        }
        if state.running {
            state.follow_ups.push_back(params.message);
            state.report.queued_follow_ups = Some(state.follow_ups.len() as u32);
            drop(state);
            return reply.ok(FollowUpDelivered {
                delivery: FollowUpDelivery::FollowUp,
            });
        }
        // A settled child: a new run, on a thread of its own. The answer goes first, so
        // that the runtime knows the child may run again before it is told it does.
        state.script = params.message.lines().map(str::to_string).collect();
        state.running = true;
        state.interrupt = false;
        drop(state);
        reply.ok(FollowUpDelivered {
            delivery: FollowUpDelivery::NewRun,
        });
        let workspace = self.inner.workspace.clone();
        let run = child.clone();
        let started = std::thread::Builder::new()
            .name(format!("octet-scripted-{}", child.id))
            .spawn(move || run.run(&workspace));
        if started.is_err() {
            let mut state = child.state.lock().unwrap();
            state.running = false;
            state.report.status = AgentStatus::Failed {
                error: "no thread for the new run".into(),
            };
            let _ = child.reports.report(state.report.clone());
        }
    }

    fn interrupt(&self, _call: ServiceCall, params: AgentTarget, reply: Reply<InterruptRequested>) {
        let Some(child) = self.child(&params.target) else {
            return reply.refuse(Refusal::NotForegroundOwner.because("no such child"));
        };
        let mut state = child.state.lock().unwrap();
        let requested = state.running;
        state.interrupt |= requested;
        drop(state);
        child.wake.notify_all();
        reply.ok(InterruptRequested {
            interrupt_requested: requested,
        });
    }
}

/// Without a model resolver the only child model is the inherited one (section 2.13):
/// this example answers that one row.
impl AgentModelService for ScriptedAgents {
    fn models(&self, _call: ServiceCall, params: AgentModelsQuery, reply: Reply<AgentModels>) {
        let row = AgentModelRow {
            model: "inherit".into(),
            provider: "inherit".into(),
            display_name: Some("The parent session's model (scripted example)".into()),
            reasoning: Vec::new(),
            context_window: 0,
            max_output_tokens: 0,
        };
        let wanted = params.query.as_deref().unwrap_or("").to_lowercase();
        let matches = [
            &row.model,
            &row.provider,
            row.display_name.as_ref().unwrap(),
        ]
        .iter()
        .any(|text| text.to_lowercase().contains(&wanted));
        reply.ok(AgentModels {
            models: matches.then_some(row).into_iter().collect(),
            truncated: false,
        });
    }
}

/// Its children report `agent/events` observations: turn starts, output, tool calls
/// and run ends.
impl AgentEventService for ScriptedAgents {}

impl AgentLifetimeService for ScriptedAgents {
    fn stop(&self, _call: ServiceCall, params: AgentTarget, reply: Reply<StopRequested>) {
        let Some(child) = self.child(&params.target) else {
            return reply.refuse(Refusal::NotForegroundOwner.because("no such child"));
        };
        let mut state = child.state.lock().unwrap();
        state.shutdown = true;
        if !state.running && state.report.status != AgentStatus::Shutdown {
            state.report.status = AgentStatus::Shutdown;
            let _ = child.reports.report(state.report.clone());
        }
        drop(state);
        child.wake.notify_all();
        reply.ok(StopRequested);
    }
}

/// How one run ended.
enum RunEnd {
    Completed,
    Failed(String),
    Interrupted,
    TimedOut,
    Shutdown,
}

impl Child {
    /// Runs scripts until no follow-up is queued: each run reports running, each tool
    /// call, and how it settled.
    fn run(&self, workspace: &Path) {
        loop {
            let end = self.one_run(workspace);
            let completed = matches!(end, RunEnd::Completed);
            let reason = match end {
                RunEnd::Completed => RunFinish::Completed,
                RunEnd::Failed(_) => RunFinish::Failed,
                RunEnd::TimedOut => RunFinish::LimitReached,
                RunEnd::Interrupted | RunEnd::Shutdown => RunFinish::Interrupted,
            };
            let _ = self
                .reports
                .event(&self.id, AgentEvent::RunFinished { reason });
            let mut state = self.state.lock().unwrap();
            state.report.phase = None;
            state.report.tool_name = None;
            state.report.status = match end {
                RunEnd::Completed => AgentStatus::Completed {
                    output: std::mem::take(&mut state.output),
                },
                RunEnd::Failed(error) => AgentStatus::Failed { error },
                RunEnd::Interrupted => AgentStatus::Interrupted,
                RunEnd::TimedOut => AgentStatus::TimedOut,
                RunEnd::Shutdown => AgentStatus::Shutdown,
            };
            // Counted before the next one is taken: the runtime lets the settled child
            // run again for a queued follow-up.
            state.report.queued_follow_ups = Some(state.follow_ups.len() as u32);
            let next = match completed {
                true => state.follow_ups.pop_front(),
                false => None,
            };
            let settled = state.report.clone();
            match next {
                Some(script) => {
                    // The queued follow-up runs at once: report the settlement, then
                    // the next run (the runtime sees the follow-up it accepted).
                    state.script = script.lines().map(str::to_string).collect();
                    drop(state);
                    let _ = self.reports.report(settled);
                }
                None => {
                    state.running = false;
                    drop(state);
                    let _ = self.reports.report(settled);
                    return;
                }
            }
        }
    }

    fn one_run(&self, workspace: &Path) -> RunEnd {
        let deadline = self.timeout.map(|t| Instant::now() + t);
        {
            let mut state = self.state.lock().unwrap();
            state.report.status = AgentStatus::Running;
            state.report.phase = Some(AgentPhase::Thinking);
            state.report.turn_count += 1;
            state.output.clear();
            let _ = self.reports.report(state.report.clone());
            let _ = self.reports.event(&self.id, AgentEvent::TurnStarted {});
        }
        loop {
            let mut state = self.state.lock().unwrap();
            if let Some(end) = state.interrupted(deadline) {
                return end;
            }
            let Some(line) = state.script.pop_front() else {
                return RunEnd::Completed;
            };
            let (word, rest) = line.split_once(' ').unwrap_or((line.as_str(), ""));
            let rest = rest.to_string();
            match word {
                "sleep" => {
                    let ms: u64 = rest.trim().parse().unwrap_or(0);
                    let until = Instant::now() + Duration::from_millis(ms);
                    while Instant::now() < until {
                        if let Some(end) = state.interrupted(deadline) {
                            return end;
                        }
                        let wait = until
                            .min(deadline.unwrap_or(until))
                            .saturating_duration_since(Instant::now());
                        state = self.wake.wait_timeout(state, wait).unwrap().0;
                    }
                }
                "fail" => return RunEnd::Failed(rest),
                "read" | "write" | "edit" | "bash" => {
                    let tool = match word {
                        "read" => AgentTool::Read,
                        "write" => AgentTool::Write,
                        "edit" => AgentTool::Edit,
                        _ => AgentTool::Bash,
                    };
                    let started_at_ms = now_ms();
                    state.report.phase = Some(AgentPhase::UsingTool);
                    state.report.tool_name = Some(word.to_string());
                    state.report.tool_call_count += 1;
                    let call_id = format!("tool-{}", state.report.tool_call_count);
                    let _ = self.reports.report(state.report.clone());
                    let _ = self.reports.event(
                        &self.id,
                        AgentEvent::ToolStarted {
                            id: call_id.clone(),
                            name: word.to_string(),
                            arguments: serde_json::json!({ "args": rest }),
                        },
                    );
                    drop(state);
                    let outcome = match self.tools.contains(&tool) {
                        true => run_tool(tool, &rest, workspace),
                        false => Err(format!("the tool `{word}` was not granted")),
                    };
                    let mut state = self.state.lock().unwrap();
                    let error = outcome.is_err();
                    let finished = match &outcome {
                        Ok(text) => AgentEvent::ToolFinished {
                            id: call_id,
                            content: Some(vec![EventText {
                                kind: "text".into(),
                                text: text.clone(),
                            }]),
                            metadata: None,
                            error: None,
                            is_error: false,
                        },
                        Err(why) => AgentEvent::ToolFinished {
                            id: call_id,
                            content: None,
                            metadata: None,
                            error: Some(why.clone()),
                            is_error: true,
                        },
                    };
                    let _ = self.reports.event(&self.id, finished);
                    match outcome {
                        Ok(text) => state.output.push_str(&text),
                        Err(why) => state.output.push_str(&format!("[{word} failed: {why}]\n")),
                    }
                    state.report.recent_tools.push(RecentTool {
                        name: word.to_string(),
                        args: rest,
                        started_at_ms,
                        finished_at_ms: Some(now_ms()),
                        error,
                    });
                    let keep = state.report.recent_tools.len().saturating_sub(6);
                    state.report.recent_tools.drain(..keep);
                    state.report.phase = Some(AgentPhase::Thinking);
                    state.report.tool_name = None;
                    let _ = self.reports.report(state.report.clone());
                }
                _ => {
                    state.output.push_str(&line);
                    state.output.push('\n');
                    let delta = AgentEvent::OutputDelta {
                        channel: OutputChannel::Text,
                        text: format!("{line}\n"),
                    };
                    let _ = self.reports.event(&self.id, delta);
                }
            }
        }
    }
}

impl ChildState {
    /// Why the run must end now, if it must.
    fn interrupted(&self, deadline: Option<Instant>) -> Option<RunEnd> {
        if self.shutdown {
            return Some(RunEnd::Shutdown);
        }
        if self.interrupt {
            return Some(RunEnd::Interrupted);
        }
        match deadline {
            Some(at) if Instant::now() >= at => Some(RunEnd::TimedOut),
            _ => None,
        }
    }
}

/// Runs one tool call against the workspace: the text it appends to the output.
fn run_tool(tool: AgentTool, args: &str, workspace: &Path) -> Result<String, String> {
    match tool {
        AgentTool::Read => {
            let path = inside(workspace, args.trim())?;
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", args.trim()))
        }
        AgentTool::Write => {
            let (path, text) = args.split_once(' ').unwrap_or((args, ""));
            let full = inside(workspace, path)?;
            std::fs::write(&full, text).map_err(|e| format!("{path}: {e}"))?;
            Ok(format!("wrote {} bytes to {path}\n", text.len()))
        }
        AgentTool::Edit => {
            let (path, change) = args.split_once(' ').unwrap_or((args, ""));
            let (old, new) = change
                .split_once(" => ")
                .ok_or("edit takes `<path> <old> => <new>`")?;
            let full = inside(workspace, path)?;
            let text = std::fs::read_to_string(&full).map_err(|e| format!("{path}: {e}"))?;
            if !text.contains(old) {
                return Err(format!("{path} does not contain {old:?}"));
            }
            std::fs::write(&full, text.replacen(old, new, 1))
                .map_err(|e| format!("{path}: {e}"))?;
            Ok(format!("edited {path}\n"))
        }
        AgentTool::Bash => {
            let out = std::process::Command::new("sh")
                .arg("-c")
                .arg(args)
                .current_dir(workspace)
                .stdin(std::process::Stdio::null())
                .output()
                .map_err(|e| format!("sh: {e}"))?;
            match out.status.success() {
                true => Ok(String::from_utf8_lossy(&out.stdout).into_owned()),
                false => Err(format!(
                    "exited with {}: {}",
                    out.status,
                    String::from_utf8_lossy(&out.stderr).trim()
                )),
            }
        }
    }
}

/// `path` under `workspace`, refusing absolute paths and `..`.
fn inside(workspace: &Path, path: &str) -> Result<PathBuf, String> {
    let relative = Path::new(path);
    let escapes = relative
        .components()
        .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir));
    match path.is_empty() || escapes {
        true => Err(format!("{path:?} is not a path inside the workspace")),
        false => Ok(workspace.join(relative)),
    }
}
