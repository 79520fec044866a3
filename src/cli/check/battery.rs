//! The checks that need the extension running under the real runtime: `initialize`,
//! the calls, cancellation, the child request ids, stdout hygiene and shutdown.

use std::time::{Duration, Instant};

use serde_json::Value;

use super::finding::{Finding, Status};
use crate::host::{
    CallOptions, Diagnostic, ExtensionHandle, ExtensionHost, HostEvent, LifecycleState,
};
use crate::limits::{CANCELLATION_GRACE, SHUTDOWN_ACK_TIMEOUT, SHUTDOWN_EXIT_TIMEOUT};
use crate::manifest::LocatedManifest;

/// How long a `--call` may take before it counts as failed.
const CALL_DEADLINE: Duration = Duration::from_secs(30);

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

/// Runs the live checks against `located` and returns their findings.
pub(super) fn run(
    host: &ExtensionHost,
    located: &LocatedManifest,
    calls: &[(String, Value)],
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
    findings.extend(call_checks(&extension, calls));
    findings.push(cancel_check(host, &extension, calls));
    progress("shutdown");
    let pid = info.pid;
    let report = extension.shutdown();
    let record = report.and_then(|r| r.extensions.into_iter().find(|e| e.extension == name));
    let events: Vec<HostEvent> = host.events().try_iter().collect();
    findings.push(stdout_hygiene(&events, &name));
    findings.push(child_ids(&events, &name));
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

/// `call.<tool>` for each `--call`, then `call.concurrency`.
fn call_checks(extension: &ExtensionHandle, calls: &[(String, Value)]) -> Vec<Finding> {
    let mut findings = Vec::new();
    for (tool, arguments) in calls {
        progress(&format!("call.{tool}"));
        let outcome = extension.call_tool(
            tool,
            arguments.clone(),
            CallOptions::with_deadline(CALL_DEADLINE),
        );
        let id = format!("call.{tool}");
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
    let Some((tool, arguments)) = calls.first() else {
        findings.push(Finding::new(
            "call.concurrency",
            Status::Skip,
            "1.1",
            "no --call given: nothing to call at once",
        ));
        return findings;
    };
    progress("call.concurrency");
    let max = extension.info().negotiated.max_concurrent_requests.max(1);
    let pending: Vec<_> = (0..max)
        .map(|_| {
            extension.call_tool_async(
                tool,
                arguments.clone(),
                CallOptions::with_deadline(CALL_DEADLINE),
            )
        })
        .collect();
    let failed: Vec<String> = pending
        .into_iter()
        .filter_map(|call| call.wait().err().map(|e| e.to_string()))
        .collect();
    findings.push(match failed.first() {
        None => Finding::new(
            "call.concurrency",
            Status::Pass,
            "1.1",
            format!("{max} `{tool}` calls at once (its max_concurrent_requests) all answered"),
        ),
        Some(first) => Finding::new(
            "call.concurrency",
            Status::Fail,
            "1.1",
            format!("{} of {max} calls at once failed; the first: {first}", failed.len()),
        )
        .fix("serve as many requests at once as the max_concurrent_requests you negotiated, or negotiate fewer"),
    });
    findings
}

/// `cancel.cooperates`: a call cancelled mid-flight settles within the grace period.
fn cancel_check(
    host: &ExtensionHost,
    extension: &ExtensionHandle,
    calls: &[(String, Value)],
) -> Finding {
    let Some((tool, arguments)) = calls.first() else {
        return Finding::new(
            "cancel.cooperates",
            Status::Skip,
            "1.9",
            "no --call given: nothing to cancel",
        );
    };
    progress("cancel.cooperates");
    let generation = extension.info().generation;
    let mut call = extension.call_tool_async(
        tool,
        arguments.clone(),
        CallOptions::with_deadline(CALL_DEADLINE),
    );
    if call.wait_timeout(CANCEL_AFTER).is_some() {
        return Finding::new(
            "cancel.cooperates",
            Status::Skip,
            "1.9",
            format!(
                "`{tool}` settled within {} ms: no call ran long enough to cancel; give --call a slow one first",
                CANCEL_AFTER.as_millis()
            ),
        );
    }
    call.cancel();
    let _ = call.wait();
    // The runtime degrades a generation that does not settle within the grace period.
    std::thread::sleep(CANCELLATION_GRACE + Duration::from_millis(500));
    let degraded = host.status().into_iter().any(|s| {
        s.extension == extension.name()
            && s.generation == generation
            && matches!(s.state, LifecycleState::Degraded | LifecycleState::Crashed)
    });
    let replaced = !host
        .status()
        .into_iter()
        .any(|s| s.extension == extension.name() && s.generation == generation);
    match degraded || replaced {
        false => Finding::new(
            "cancel.cooperates",
            Status::Pass,
            "1.9",
            format!("`{tool}` settled within {} ms of $/cancelRequest", CANCELLATION_GRACE.as_millis()),
        ),
        true => Finding::new(
            "cancel.cooperates",
            Status::Fail,
            "1.9",
            format!(
                "`{tool}` did not settle within {} ms of $/cancelRequest; the host terminated the extension",
                CANCELLATION_GRACE.as_millis()
            ),
        )
        .fix("on $/cancelRequest stop the work and answer the request with -32800 (or its result)"),
    }
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
