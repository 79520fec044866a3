//! The checks that need the extension running under the real runtime: `initialize`,
//! the calls, cancellation, the child request ids, stdout hygiene and shutdown.

use std::time::{Duration, Instant};

use serde_json::Value;

use super::finding::{Finding, Status};
use crate::host::{CallError, CallOptions, Diagnostic, ExtensionHandle, ExtensionHost, HostEvent};
use crate::limits::{CANCELLATION_GRACE, SHUTDOWN_ACK_TIMEOUT, SHUTDOWN_EXIT_TIMEOUT};
use crate::manifest::LocatedManifest;

/// How long a `--call` may take before it counts as failed, unless `--timeout` says.
pub(super) const CALL_DEADLINE: Duration = Duration::from_secs(30);

/// How long past a cancellation's grace period the check waits before it reads what
/// the host reported of it.
const GRACE_MARGIN: Duration = Duration::from_millis(500);

/// How long a call must still be running to be cancelled mid-flight.
const CANCEL_AFTER: Duration = Duration::from_millis(100);

/// Says which slow check runs, on stderr, when a person watches.
fn progress(what: &str) {
    use std::io::IsTerminal;
    if std::io::stderr().is_terminal() {
        eprint!("\r\x1b[2Kchecking {what}…");
    }
}

/// Clears the progress line.
pub(super) fn progress_done() {
    use std::io::IsTerminal;
    if std::io::stderr().is_terminal() {
        eprint!("\r\x1b[2K");
    }
}

/// One `--call` as the battery saw it.
struct Observed<'a> {
    tool: &'a str,
    arguments: &'a Value,
    /// How long it took to settle.
    took: Duration,
    /// True when the extension answered it with a result.
    answered: bool,
    /// When the host cancelled it because its deadline passed.
    cancelled_at: Option<Instant>,
}

/// The host's events as the battery goes, and the first evidence that the extension
/// left a cancelled request unsettled.
struct Watch {
    name: String,
    events: Vec<HostEvent>,
    /// The latest cancellation the battery knows of, in words.
    cancelled: Option<String>,
    /// That cancellation when the host reported a request unsettled, and the report.
    unsettled: Option<(String, String)>,
}

impl Watch {
    /// Notes a cancellation, so that a report of it can say which call it was.
    fn cancelled(&mut self, what: String) {
        self.cancelled = Some(what);
    }

    /// Takes the events that arrived meanwhile.
    fn drain(&mut self, host: &ExtensionHost) {
        for event in host.events().try_iter() {
            if let HostEvent::Diagnostic {
                source,
                diagnostic: diagnostic @ Diagnostic::CancellationUnsettled { .. },
            } = &event
            {
                if source.extension == self.name && self.unsettled.is_none() {
                    let what = self.cancelled.clone().unwrap_or_else(|| "a call".into());
                    self.unsettled = Some((what, diagnostic.to_string()));
                }
            }
            self.events.push(event);
        }
    }
}

/// Runs the live checks against `located` and returns their findings; each `--call`
/// may take `deadline`.
pub(super) fn run(
    host: &ExtensionHost,
    located: &LocatedManifest,
    calls: &[(String, Value)],
    deadline: Duration,
) -> Vec<Finding> {
    let mut findings = Vec::new();
    let name = located.manifest.name.clone();
    let api = located.manifest.api_version;
    progress("initialize");
    let started = Instant::now();
    let extension = match host.start_manifest(located.clone()) {
        Ok(extension) => extension,
        Err(error) => {
            findings.push(
                Finding::new("initialize.answers", Status::Fail, "1.1", error.to_string()).fix(
                    "answer `initialize` with the shape of section 1.1 for this API version; \
                          the error names the member at fault",
                ),
            );
            return findings;
        }
    };
    let info = extension.info().clone();
    findings.push(Finding::new(
        "initialize.answers",
        Status::Pass,
        "1.1",
        format!(
            "API {api} answered in {} ms; tools: {}; features: [{}]; max_concurrent_requests: {}",
            started.elapsed().as_millis(),
            info.negotiated.tools.len(),
            info.negotiated
                .features
                .iter()
                .map(|f| f.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            info.negotiated.max_concurrent_requests
        ),
    ));
    findings.extend(unused_declarations(located, &extension));
    let mut watch = Watch {
        name: name.clone(),
        events: Vec::new(),
        cancelled: None,
        unsettled: None,
    };
    let observed = call_checks(host, &extension, calls, deadline, &mut watch, &mut findings);
    findings.push(concurrency_check(
        host, &extension, calls, &observed, deadline, &mut watch,
    ));
    findings.push(cancel_check(host, &extension, calls, &observed, &mut watch));
    progress("shutdown");
    let pid = info.pid;
    let report = extension.shutdown();
    let record = report.and_then(|r| r.extensions.into_iter().find(|e| e.extension == name));
    watch.drain(host);
    findings.push(stdout_hygiene(&watch.events, &name));
    findings.push(child_ids(&watch.events, &name));
    findings.extend(shutdown_checks(record, pid));
    findings
}

/// `manifest.unused`: tools the manifest declares that `initialize` never offered.
fn unused_declarations(located: &LocatedManifest, extension: &ExtensionHandle) -> Vec<Finding> {
    let offered: Vec<&str> = extension
        .info()
        .negotiated
        .tools
        .iter()
        .map(|t| t.name.as_str())
        .collect();
    let negotiated = &extension.info().negotiated;
    let commands: Vec<&str> = negotiated
        .commands
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    let contributes = &located.manifest.contributes;
    let mut unused: Vec<String> = contributes
        .tools
        .iter()
        .filter(|t| !offered.contains(&t.as_str()))
        .map(|t| format!("tool `{t}`"))
        .collect();
    unused.extend(
        contributes
            .commands
            .iter()
            .filter(|c| !commands.contains(&c.as_str()))
            .map(|c| format!("command `{c}`")),
    );
    let secrets = !located.manifest.capabilities.secrets.is_empty();
    if secrets
        && !negotiated
            .features
            .contains(crate::negotiation::Feature::Secrets)
    {
        unused.push("the secrets allowlist (`secrets` was not negotiated)".into());
    }
    let finding = match unused.is_empty() {
        true => Finding::new(
            "manifest.unused",
            Status::Pass,
            "1.1",
            "every declared tool is offered",
        ),
        false => Finding::new(
            "manifest.unused",
            Status::Warn,
            "1.1",
            format!(
                "declared but not in the initialize answer: {}",
                unused.join(", ")
            ),
        )
        .fix("offer every tool `contributes.tools` names, or stop declaring it"),
    };
    vec![finding]
}

/// `call.<tool>` for each `--call`, each timed; what was seen of each.
fn call_checks<'a>(
    host: &ExtensionHost,
    extension: &ExtensionHandle,
    calls: &'a [(String, Value)],
    deadline: Duration,
    watch: &mut Watch,
    findings: &mut Vec<Finding>,
) -> Vec<Observed<'a>> {
    let mut observed = Vec::new();
    for (tool, arguments) in calls {
        let id = format!("call.{tool}");
        progress(&id);
        let started = Instant::now();
        let outcome = extension.call_tool(
            tool,
            arguments.clone(),
            CallOptions::with_deadline(deadline),
        );
        let cancelled_at = match outcome {
            Err(CallError::DeadlineExceeded { after }) => {
                watch.cancelled(format!(
                    "`{tool}` was cancelled at its {} ms deadline",
                    after.as_millis()
                ));
                Some(Instant::now())
            }
            _ => None,
        };
        observed.push(Observed {
            tool,
            arguments,
            took: started.elapsed(),
            answered: outcome.is_ok(),
            cancelled_at,
        });
        watch.drain(host);
        findings.push(match outcome {
            Ok(result) if result.is_error => Finding::new(
                id,
                Status::Warn,
                "1.2",
                format!("valid, but an error result: {}", first_line(&result.text())),
            )
            .fix("check the arguments given with --call; an error result is valid but says the call failed"),
            Ok(result) => Finding::new(
                id,
                Status::Pass,
                "1.2",
                format!("valid result: {}", first_line(&result.text())),
            ),
            Err(error) => Finding::new(id, Status::Fail, "1.2", error.to_string())
                .fix("answer `tool/call` with a result of section 1.2 that keeps the tool's output schema"),
        });
    }
    observed
}

/// The call the later checks use: the slowest `--call` that was answered, so that the
/// order of the flags does not decide a verdict; with words saying which and why.
fn probe<'o, 'a>(observed: &'o [Observed<'a>]) -> Option<(&'o Observed<'a>, String)> {
    let slowest = observed
        .iter()
        .filter(|o| o.answered)
        .max_by_key(|o| o.took)?;
    let why = match observed.iter().filter(|o| o.answered).count() {
        1 => format!("the one --call answered, {} ms", slowest.took.as_millis()),
        _ => format!(
            "the slowest --call answered, {} ms",
            slowest.took.as_millis()
        ),
    };
    Some((slowest, why))
}

/// `call.concurrency`: the probe called at once up to the negotiated concurrency.
fn concurrency_check(
    host: &ExtensionHost,
    extension: &ExtensionHandle,
    calls: &[(String, Value)],
    observed: &[Observed],
    deadline: Duration,
    watch: &mut Watch,
) -> Finding {
    let Some((probe, why)) = probe(observed) else {
        let detail = match calls.is_empty() {
            true => "no --call given: nothing to call at once",
            false => "no --call was answered: nothing to call at once",
        };
        return Finding::new("call.concurrency", Status::Skip, "1.1", detail);
    };
    progress("call.concurrency");
    let tool = probe.tool;
    let max = extension.info().negotiated.max_concurrent_requests.max(1);
    let pending: Vec<_> = (0..max)
        .map(|_| {
            extension.call_tool_async(
                tool,
                probe.arguments.clone(),
                CallOptions::with_deadline(deadline),
            )
        })
        .collect();
    let errors: Vec<CallError> = pending
        .into_iter()
        .filter_map(|call| call.wait().err())
        .collect();
    if let Some(CallError::DeadlineExceeded { after }) = errors
        .iter()
        .find(|e| matches!(e, CallError::DeadlineExceeded { .. }))
    {
        watch.cancelled(format!(
            "a `{tool}` of call.concurrency was cancelled at its {} ms deadline",
            after.as_millis()
        ));
    }
    watch.drain(host);
    let failed: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
    match failed.first() {
        None => Finding::new(
            "call.concurrency",
            Status::Pass,
            "1.1",
            format!(
                "{max} `{tool}` calls at once (its max_concurrent_requests; `{tool}`: {why}) all answered"
            ),
        ),
        Some(first) => Finding::new(
            "call.concurrency",
            Status::Fail,
            "1.1",
            format!(
                "{} of {max} `{tool}` calls at once failed; the first: {first}",
                failed.len()
            ),
        )
        .fix("serve as many requests at once as the max_concurrent_requests you negotiated, or negotiate fewer"),
    }
}

/// `cancel.cooperates`: every cancelled call settles within the grace period. The
/// evidence is each `--call` the host cancelled at its deadline, and the probe
/// cancelled mid-flight; any one left unsettled fails the check.
fn cancel_check(
    host: &ExtensionHost,
    extension: &ExtensionHandle,
    calls: &[(String, Value)],
    observed: &[Observed],
    watch: &mut Watch,
) -> Finding {
    let fail = |cancelled: &str, what: &str| {
        Finding::new(
            "cancel.cooperates",
            Status::Fail,
            "1.9",
            format!("{cancelled}: {what}"),
        )
        .fix("on $/cancelRequest stop the work and answer the request with -32800 (or its result)")
    };
    // A call cancelled at its deadline had its grace period; see how it ended.
    let deadline_cancelled = observed
        .iter()
        .filter_map(|o| o.cancelled_at.map(|at| (o, at)));
    let mut settled_after_deadline = None;
    for (call, at) in deadline_cancelled {
        progress("cancel.cooperates");
        wait_out_grace(host, at);
        watch.drain(host);
        if let Some((check, what)) = &watch.unsettled {
            return fail(check, what);
        }
        settled_after_deadline.get_or_insert(call.tool);
    }
    if let Some((check, what)) = &watch.unsettled {
        return fail(check, what);
    }
    let skip = |why: String| match settled_after_deadline {
        Some(tool) => Finding::new(
            "cancel.cooperates",
            Status::Pass,
            "1.9",
            format!(
                "`{tool}` was cancelled at its deadline and settled within {} ms ({why})",
                CANCELLATION_GRACE.as_millis()
            ),
        ),
        None => Finding::new("cancel.cooperates", Status::Skip, "1.9", why),
    };
    let Some((probe, why)) = probe(observed) else {
        return skip(match calls.is_empty() {
            true => "no --call given: nothing to cancel".to_string(),
            false => "no --call was answered: none could be cancelled mid-flight".to_string(),
        });
    };
    let tool = probe.tool;
    if probe.took < CANCEL_AFTER {
        return skip(format!(
            "`{tool}` ({why}) settles within {} ms: no --call runs long enough to cancel mid-flight; give one that does",
            CANCEL_AFTER.as_millis()
        ));
    }
    progress("cancel.cooperates");
    let generation = extension.info().generation;
    let mut call = extension.call_tool_async(
        tool,
        probe.arguments.clone(),
        CallOptions::with_deadline(CALL_DEADLINE),
    );
    if let Some(outcome) = call.wait_timeout(CANCEL_AFTER) {
        return skip(match outcome {
            Ok(_) | Err(CallError::Remote(_)) => format!(
                "`{tool}` ({why}) answered within {} ms this time: nothing to cancel mid-flight",
                CANCEL_AFTER.as_millis()
            ),
            Err(error) => format!("`{tool}` could not be called to cancel it: {error}"),
        });
    }
    call.cancel();
    let cancelled = Instant::now();
    watch.cancelled(format!(
        "`{tool}` ({why}) was cancelled {} ms into a call",
        CANCEL_AFTER.as_millis()
    ));
    let _ = call.wait();
    wait_out_grace(host, cancelled);
    watch.drain(host);
    if let Some((check, what)) = &watch.unsettled {
        return fail(check, what);
    }
    let live = host
        .status()
        .into_iter()
        .any(|s| s.extension == extension.name() && s.generation == generation);
    match live {
        true => Finding::new(
            "cancel.cooperates",
            Status::Pass,
            "1.9",
            format!(
                "`{tool}` ({why}) cancelled after {} ms settled within {} ms of $/cancelRequest",
                CANCEL_AFTER.as_millis(),
                CANCELLATION_GRACE.as_millis()
            ),
        ),
        false => Finding::new(
            "cancel.cooperates",
            Status::Fail,
            "1.9",
            format!("the extension exited after `{tool}` was cancelled mid-flight"),
        )
        .fix("on $/cancelRequest stop the work and answer the request; keep running"),
    }
}

/// Sleeps until a cancellation sent at `cancelled` has had its grace period and a
/// margin, then makes a round trip through the host so that its grace timer has fired.
fn wait_out_grace(host: &ExtensionHost, cancelled: Instant) {
    let end = cancelled + CANCELLATION_GRACE + GRACE_MARGIN;
    std::thread::sleep(end.saturating_duration_since(Instant::now()));
    let _ = host.status();
}

/// `stdout.hygiene`: no frame the host refused, and stderr within its rate bound.
fn stdout_hygiene(events: &[HostEvent], name: &str) -> Finding {
    let mut suppressed = 0;
    for event in events {
        let HostEvent::Diagnostic { source, diagnostic } = event else {
            continue;
        };
        if source.extension != name {
            continue;
        }
        match diagnostic {
            Diagnostic::InvalidFrame { .. }
            | Diagnostic::OversizedFrame { .. }
            | Diagnostic::UnterminatedFrame { .. } => {
                return Finding::new(
                    "stdout.hygiene",
                    Status::Fail,
                    "intro",
                    diagnostic.to_string(),
                )
                .fix("write only JSON-RPC frames to stdout, one per line; send logs to stderr");
            }
            Diagnostic::StderrSuppressed { lines } => suppressed += lines,
            _ => {}
        }
    }
    match suppressed {
        0 => Finding::new(
            "stdout.hygiene",
            Status::Pass,
            "intro",
            "every stdout line was a frame",
        ),
        n => Finding::new(
            "stdout.hygiene",
            Status::Warn,
            "intro",
            format!("stdout was clean, but {n} stderr lines went over the rate bound"),
        )
        .fix("log less on stderr: the host reports a bounded rate of lines"),
    }
}

/// `ids.child`: the extension's own requests kept the id rules.
fn child_ids(events: &[HostEvent], name: &str) -> Finding {
    let broken = events.iter().find_map(|event| match event {
        HostEvent::Diagnostic {
            source,
            diagnostic: Diagnostic::Refused { method, reason },
        } if source.extension == name && reason.contains(" id") => {
            Some(format!("{method}: {reason}"))
        }
        _ => None,
    });
    match broken {
        None => Finding::new("ids.child", Status::Pass, "2", "no request id broke a rule"),
        Some(why) => Finding::new("ids.child", Status::Fail, "2", why).fix(
            "give each request of yours a new id: an unsigned integer or a string of at most 256 bytes, \
             never reused in a process",
        ),
    }
}

/// `shutdown.ack` and `shutdown.exit`.
fn shutdown_checks(record: Option<crate::host::ExtensionShutdown>, pid: u32) -> Vec<Finding> {
    let Some(record) = record else {
        return vec![
            Finding::new(
                "shutdown.ack",
                Status::Fail,
                "1.8",
                "the generation was gone before shutdown",
            )
            .fix("stay running until `shutdown` or EOF"),
            Finding::new(
                "shutdown.exit",
                Status::Skip,
                "1.8",
                "no generation to shut down",
            ),
        ];
    };
    let ack = match record.acknowledged {
        true => Finding::new(
            "shutdown.ack",
            Status::Pass,
            "1.8",
            "`shutdown` was acknowledged",
        ),
        false => Finding::new(
            "shutdown.ack",
            Status::Fail,
            "1.8",
            format!(
                "`shutdown` was not answered within {} ms",
                SHUTDOWN_ACK_TIMEOUT.as_millis()
            ),
        )
        .fix("answer `shutdown` with {} (API 0.3: {\"terminal\":\"shutdown\"}), then exit"),
    };
    // The extension and everything in its process group (section 1.8).
    let gone = gone_within(pid, SHUTDOWN_EXIT_TIMEOUT) && group_gone(pid, SHUTDOWN_EXIT_TIMEOUT);
    let exit = match (record.forced, gone) {
        (false, true) => Finding::new(
            "shutdown.exit",
            Status::Pass,
            "1.8",
            format!(
                "exited ({})",
                record.exit_status.as_deref().unwrap_or("status unknown")
            ),
        ),
        _ => Finding::new(
            "shutdown.exit",
            Status::Fail,
            "1.8",
            format!(
                "did not exit within {} ms of the acknowledgement; its process group was killed",
                SHUTDOWN_EXIT_TIMEOUT.as_millis()
            ),
        )
        .fix("exit after answering `shutdown`, and take your child processes along"),
    };
    vec![ack, exit]
}

/// True once no process is left in the group `pgid`.
fn group_gone(pgid: u32, within: Duration) -> bool {
    let end = Instant::now() + within;
    // SAFETY: signal 0 to a group only checks whether any member exists.
    while unsafe { libc::kill(-(pgid as libc::pid_t), 0) } == 0 {
        if Instant::now() >= end {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    true
}

/// True once `pid` no longer runs (gone, or a zombie waiting to be reaped).
fn gone_within(pid: u32, within: Duration) -> bool {
    let end = Instant::now() + within;
    loop {
        // SAFETY: signal 0 only checks that the process exists.
        let exists = unsafe { libc::kill(pid as libc::pid_t, 0) } == 0;
        let zombie = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|stat| {
                stat.rsplit(')')
                    .next()
                    .is_some_and(|rest| rest.trim_start().starts_with('Z'))
            })
            .unwrap_or(false);
        if !exists || zombie {
            return true;
        }
        if Instant::now() >= end {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn first_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default();
    match line.char_indices().nth(80) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line.to_string(),
    }
}
