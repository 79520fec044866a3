//! `check NAME`: a conformance kit for extension authors. It starts the extension under
//! the real runtime and runs a battery of checks, each with a stable id, a status, the
//! reference section it rests on, what was observed and how to fix it. Exit 0 when
//! nothing failed, 1 when something did, 2 for a usage error.
//!
//! The ids: `manifest.valid`, `manifest.entrypoint`, `manifest.requires_octet`,
//! `manifest.unused`, `initialize.answers`, `call.<tool>` (one per `--call`),
//! `call.concurrency`, `cancel.cooperates`, `stdout.hygiene`, `ids.child`,
//! `shutdown.ack`, `shutdown.exit`, `eof.exit`.

mod battery;
mod finding;
mod process;

use clap::Args;
use serde_json::Value;

use super::GlobalArgs;
use crate::host::ExtensionHost;
use crate::limits::{OCTET_VERSION, SHUTDOWN_EXIT_TIMEOUT, STARTUP_TIMEOUT};
use crate::manifest::{self, ApiVersion, LocatedManifest};
use finding::{Finding, Status};

/// Arguments of `check`.
#[derive(Debug, Args)]
pub(crate) struct CheckArgs {
    /// The extension's name
    name: String,
    /// A tool to call and its arguments, `TOOL=JSON` (`TOOL` alone calls it with `{}`);
    /// repeat it for more. The slowest one answered is then called at once up to the
    /// negotiated concurrency and cancelled mid-flight, whatever the flags' order.
    #[arg(long = "call", value_name = "TOOL=JSON")]
    calls: Vec<String>,
    /// How long each call may take before the host cancels it and the call fails
    /// (`30s`, `500ms`, `2m`; a plain number is milliseconds) [default: 30s]
    #[arg(long, value_name = "DURATION", value_parser = super::duration::parse)]
    timeout: Option<std::time::Duration>,
    /// Run on this API version instead of the manifest's (0.1, 0.2, 0.3 or 0.4)
    #[arg(long, value_name = "VERSION")]
    api: Option<String>,
}

/// Runs `check` and prints its report; returns the exit code.
pub(crate) fn run(global: &GlobalArgs, args: &CheckArgs) -> i32 {
    let usage = |message: String| {
        super::output::eprint_line(&format!("error: {message}"));
        2
    };
    let calls = match parse_calls(&args.calls) {
        Ok(calls) => calls,
        Err(message) => return usage(message),
    };
    let api = match args.api.as_deref().map(|v| (v, ApiVersion::parse(v))) {
        None => None,
        Some((_, Some(api))) => Some(api),
        Some((given, None)) => {
            return usage(format!(
                "--api {given}: the API versions are 0.1, 0.2, 0.3 and 0.4"
            ))
        }
    };
    let builder = match super::session::builder_for(global) {
        Ok(builder) => builder,
        Err(error) => return usage(error.to_string()),
    };
    let host = match builder.build() {
        Ok(host) => host,
        Err(error) => return usage(format!("cannot start a host: {error}")),
    };
    let (findings, api_version) = battery_for(
        &host,
        &args.name,
        api,
        &calls,
        Timeouts {
            startup: global.startup_timeout.unwrap_or(STARTUP_TIMEOUT),
            call: args.timeout.unwrap_or(battery::CALL_DEADLINE),
        },
    );
    host.shutdown();
    battery::progress_done();
    if global.json {
        let report = finding::json_report(&args.name, api_version.as_deref(), &findings);
        super::output::print_json(&report);
    } else {
        println!(
            "{}",
            finding::human_report(&args.name, api_version.as_deref(), &findings)
        );
    }
    match findings.iter().any(|f| f.status == Status::Fail) {
        true => 1,
        false => 0,
    }
}

/// `TOOL=JSON` pairs; the JSON must be an object.
fn parse_calls(given: &[String]) -> Result<Vec<(String, Value)>, String> {
    given
        .iter()
        .map(|call| {
            let (tool, json) = call.split_once('=').unwrap_or((call, "{}"));
            let arguments: Value = serde_json::from_str(json)
                .map_err(|e| format!("--call {call}: the arguments are not JSON: {e}"))?;
            match arguments.is_object() && !tool.is_empty() {
                true => Ok((tool.to_string(), arguments)),
                false => Err(format!("--call {call}: give TOOL=JSON with a JSON object")),
            }
        })
        .collect()
}

/// How long `initialize` and each call may take.
struct Timeouts {
    startup: std::time::Duration,
    call: std::time::Duration,
}

/// Every check, in order: the manifest's, then the live battery, then EOF. Each check
/// sees the host's workspace, made absolute as the host made it.
fn battery_for(
    host: &ExtensionHost,
    name: &str,
    api: Option<ApiVersion>,
    calls: &[(String, Value)],
    timeouts: Timeouts,
) -> (Vec<Finding>, Option<String>) {
    let catalog = host.discover();
    let Some(located) = catalog.get(name).cloned() else {
        let detail = match catalog
            .diagnostics
            .iter()
            .find(|d| d.path.to_string_lossy().contains(name))
        {
            Some(diagnostic) => diagnostic.to_string(),
            None => format!(
                "no manifest names `{name}`; discovered: [{}]",
                catalog.names().collect::<Vec<_>>().join(", ")
            ),
        };
        let findings = vec![Finding::new("manifest.valid", Status::Fail, "1.1", detail)
            .fix("fix extension.toml as the diagnostic says (octet-host discover lists them all)")];
        return (every_id(findings, calls, "the manifest did not load"), None);
    };
    let mut located: LocatedManifest = located;
    if let Some(api) = api {
        located.manifest.api_version = api;
    }
    let api_version = located.manifest.api_version.to_string();
    let mut findings = vec![Finding::new(
        "manifest.valid",
        Status::Pass,
        "1.1",
        format!("{} is valid", located.manifest_path.display()),
    )];
    findings.push(entrypoint(&located));
    findings.push(
        match manifest::check_requires_octet(&located.manifest, OCTET_VERSION) {
            Ok(()) => Finding::new(
                "manifest.requires_octet",
                Status::Pass,
                "1.1",
                match &located.manifest.requires_octet {
                    Some(requirement) => format!("`{requirement}` matches octet {OCTET_VERSION}"),
                    None => "no requirement".to_string(),
                },
            ),
            Err(error) => Finding::new(
                "manifest.requires_octet",
                Status::Fail,
                "1.1",
                error.to_string(),
            )
            .fix(format!("widen `requires_octet` to include {OCTET_VERSION}")),
        },
    );
    if findings.iter().any(|f| f.status == Status::Fail) {
        let findings = every_id(findings, calls, "the manifest cannot start");
        return (findings, Some(api_version));
    }
    findings.extend(battery::run(host, &located, calls, timeouts.call));
    let workspace = host.workspace();
    findings.push(
        match process::eof_exit(&located, workspace, timeouts.startup, SHUTDOWN_EXIT_TIMEOUT) {
            Ok(within) => Finding::new(
                "eof.exit",
                Status::Pass,
                "1.8",
                format!("exited {} ms after its stdin closed", within.as_millis()),
            ),
            Err(why) => Finding::new("eof.exit", Status::Fail, "1.8", why)
                .fix("exit when stdin reaches EOF, even without a `shutdown`"),
        },
    );
    (
        every_id(findings, calls, "initialize failed"),
        Some(api_version),
    )
}

/// Every id of a run, in report order, with the reference section each rests on.
fn ids(calls: &[(String, Value)]) -> Vec<(String, &'static str)> {
    let head = [
        ("manifest.valid", "1.1"),
        ("manifest.entrypoint", "1.1"),
        ("manifest.requires_octet", "1.1"),
        ("initialize.answers", "1.1"),
        ("manifest.unused", "1.1"),
    ];
    let tail = [
        ("call.concurrency", "1.1"),
        ("cancel.cooperates", "1.9"),
        ("stdout.hygiene", "intro"),
        ("ids.child", "2"),
        ("shutdown.ack", "1.8"),
        ("shutdown.exit", "1.8"),
        ("eof.exit", "1.8"),
    ];
    let calls = calls
        .iter()
        .map(|(tool, _)| (format!("call.{tool}"), "1.2"));
    head.into_iter()
        .map(|(id, section)| (id.to_string(), section))
        .chain(calls)
        .chain(
            tail.into_iter()
                .map(|(id, section)| (id.to_string(), section)),
        )
        .collect()
}

/// `found` in report order, every id it lacks reported `skip` because of `why`.
fn every_id(mut found: Vec<Finding>, calls: &[(String, Value)], why: &str) -> Vec<Finding> {
    ids(calls)
        .into_iter()
        .map(
            |(id, section)| match found.iter().position(|f| f.id == id) {
                Some(at) => found.remove(at),
                None => Finding::new(id, Status::Skip, section, why),
            },
        )
        .collect()
}

/// `manifest.entrypoint`: the command resolves to an executable file.
fn entrypoint(located: &LocatedManifest) -> Finding {
    use std::os::unix::fs::PermissionsExt;
    let command = &located.manifest.entrypoint.command;
    let path = crate::transport::process_environment("PATH");
    match crate::transport::resolve_command(command, &located.dir, path.as_deref()) {
        Err(error) => Finding::new(
            "manifest.entrypoint",
            Status::Fail,
            "1.1",
            error.to_string(),
        )
        .fix("point [entrypoint].command at an executable, relative to the manifest or on PATH"),
        Ok(program) => match std::fs::metadata(&program) {
            Ok(meta) if meta.is_file() && meta.permissions().mode() & 0o111 != 0 => Finding::new(
                "manifest.entrypoint",
                Status::Pass,
                "1.1",
                format!("{} is executable", program.display()),
            ),
            _ => Finding::new(
                "manifest.entrypoint",
                Status::Fail,
                "1.1",
                format!("{} is not an executable file", program.display()),
            )
            .fix(format!("chmod +x {}", program.display())),
        },
    }
}
