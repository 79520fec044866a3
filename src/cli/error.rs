//! The CLI's typed errors, their stable codes and their exit codes.

use std::fmt;
use std::path::PathBuf;

use serde_json::{json, Value};

use crate::host::{CallError, ShutdownReport, StartError};
use crate::validate::HookName;

/// Exit code of a call that failed or a tool that reported an error result.
pub(crate) const EXIT_CALL_FAILED: i32 = 1;

/// Exit code of usage, manifest and start errors.
pub(crate) const EXIT_USAGE: i32 = 2;

/// Where a JSON argument came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum JsonInput {
    /// The tool arguments of `call`.
    ToolArguments,
    /// The payload of `hook`.
    HookPayload,
}

impl JsonInput {
    fn as_str(self) -> &'static str {
        match self {
            JsonInput::ToolArguments => "tool arguments",
            JsonInput::HookPayload => "hook payload",
        }
    }
}

/// Everything that can make a subcommand fail.
#[derive(Debug)]
pub(crate) enum CliError {
    /// The command line itself is wrong (clap's message, already formatted).
    Usage {
        /// clap's rendered message, without the `error: ` prefix.
        message: String,
    },
    /// The workspace is not a directory.
    Workspace {
        /// The path given.
        path: PathBuf,
    },
    /// A JSON argument does not parse.
    InvalidJson {
        /// Which argument.
        input: JsonInput,
        /// The parser's error.
        error: serde_json::Error,
    },
    /// A JSON argument parses but is not an object.
    NotAnObject {
        /// Which argument.
        input: JsonInput,
    },
    /// Standard input could not be read.
    Stdin(std::io::Error),
    /// The hook name is not one a manifest can declare.
    UnknownHook {
        /// The name given.
        name: String,
    },
    /// A member of a legacy hook's payload is missing or has the wrong type.
    HookPayload {
        /// The hook.
        hook: HookName,
        /// The member.
        member: &'static str,
        /// What it must be.
        expected: &'static str,
    },
    /// The host could not be set up.
    Host(std::io::Error),
    /// An extension could not be started.
    Start {
        /// The extension.
        extension: String,
        /// Why.
        error: StartError,
    },
    /// Some of the discovered extensions could not be started (each was reported).
    StartsFailed {
        /// How many.
        failed: usize,
    },
    /// A call into an extension failed.
    Call {
        /// The extension.
        extension: String,
        /// What was called, such as `tool echo`.
        target: String,
        /// Why (boxed: a call error can carry a whole validation report).
        error: Box<CallError>,
    },
    /// The tool answered with `is_error: true`.
    ToolReportedError {
        /// The extension.
        extension: String,
        /// The tool.
        tool: String,
    },
    /// Some steps of the demo failed.
    DemoFailed {
        /// How many.
        failed: usize,
    },
    /// A signal arrived; every extension was shut down within the signal cap.
    Interrupted {
        /// The signal number.
        signal: i32,
        /// How the extensions ended.
        report: ShutdownReport,
    },
    /// An error already printed on stderr when it happened (at a call's deadline,
    /// before the extensions were shut down); everything else is the inner error's.
    Reported(Box<CliError>),
}

impl CliError {
    /// A stable, machine-readable code such as `call.deadline_exceeded`.
    pub(crate) fn code(&self) -> &'static str {
        match self {
            CliError::Usage { .. } => "usage.invalid_arguments",
            CliError::Workspace { .. } => "usage.workspace",
            CliError::InvalidJson { .. } => "usage.invalid_json",
            CliError::NotAnObject { .. } => "usage.not_an_object",
            CliError::Stdin(_) => "usage.stdin",
            CliError::UnknownHook { .. } => "usage.unknown_hook",
            CliError::HookPayload { .. } => "usage.hook_payload",
            CliError::Host(_) => "host.io",
            CliError::Start { error, .. } => start_code(error),
            CliError::StartsFailed { .. } => "start.some_failed",
            CliError::Call { error, .. } => call_code(error),
            CliError::ToolReportedError { .. } => "tool.is_error",
            CliError::DemoFailed { .. } => "demo.failed",
            CliError::Interrupted { .. } => "signal.interrupted",
            CliError::Reported(error) => error.code(),
        }
    }

    /// The process exit code: 2 for usage, manifest and start errors, 1 for call
    /// failures, 128 + the signal number after a signal.
    pub(crate) fn exit_code(&self) -> i32 {
        match self {
            CliError::Call { .. } | CliError::ToolReportedError { .. } => EXIT_CALL_FAILED,
            CliError::DemoFailed { .. } => EXIT_CALL_FAILED,
            CliError::Interrupted { signal, .. } => 128 + signal,
            CliError::Reported(error) => error.exit_code(),
            _ => EXIT_USAGE,
        }
    }

    /// The error as a JSON object: `code`, `message`, `exit_code`, and `rpc_code` when
    /// a JSON-RPC error code applies. A start or call error also carries serve's error
    /// object for it (one encoding of both): serve's code as `serve_code` and its
    /// details under the same names (`after_ms`, `path`, `discovered`, `stderr_tail`,
    /// ...; docs/serve-protocol.md, "Replies").
    pub(crate) fn to_json(&self) -> Value {
        if let CliError::Reported(error) = self {
            return error.to_json();
        }
        let mut error = match self.serve_error() {
            Some(serve) => {
                let mut object = serve.to_value();
                object["serve_code"] = object["code"].take();
                object
            }
            None => json!({}),
        };
        error["code"] = json!(self.code());
        error["message"] = json!(self.to_string());
        error["exit_code"] = json!(self.exit_code());
        if let CliError::Interrupted { signal, report } = self {
            error["signal"] = json!(crate::transport::process::signal_name(*signal));
            error["shutdown"] = report.to_value();
        }
        error
    }

    /// serve's error for a start or call error (its `rpc_code` included).
    fn serve_error(&self) -> Option<crate::serve::error::ServeError> {
        use crate::serve::error::ServeError;
        match self {
            CliError::Start { error, .. } => Some(ServeError::from(error)),
            CliError::Call { error, .. } => Some(ServeError::from(error.as_ref())),
            _ => None,
        }
    }
}

fn start_code(error: &StartError) -> &'static str {
    match error {
        StartError::UnknownExtension { .. } => "start.unknown_extension",
        StartError::ManifestRejected { .. } => "start.manifest",
        StartError::Manifest(_) => "start.manifest",
        StartError::AlreadyRunning { .. } => "start.already_running",
        StartError::UnsupportedApiVersion { .. } => "start.unsupported_api_version",
        StartError::Spawn(_) => "start.spawn",
        StartError::Io(_) => "start.io",
        StartError::Encode(_) => "start.encode",
        StartError::InitializeRejected(_) => "start.initialize_rejected",
        StartError::Negotiation(_) | StartError::RefusedInitializeAnswer { .. } => {
            "start.negotiation"
        }
        StartError::InitializeTimeout { .. } => "start.initialize_timeout",
        StartError::TransportLost { .. } => "start.transport_lost",
        StartError::ReRegistrationRequired { .. } => "start.re_registration_required",
        StartError::ToolConflict { .. } => "start.tool_conflict",
        StartError::NotStarted { .. } => "start.not_started",
        StartError::HostShutDown => "start.host_shut_down",
    }
}

fn call_code(error: &CallError) -> &'static str {
    match error {
        CallError::NotStarted { .. } => "call.not_started",
        CallError::NotReady { .. } => "call.not_ready",
        CallError::NotDeclared { .. } => "call.not_declared",
        CallError::Remote(_) => "call.remote_error",
        CallError::Cancelled { .. } => "call.cancelled",
        CallError::DeadlineExceeded { .. } => "call.deadline_exceeded",
        CallError::TransportLost { .. } => "call.transport_lost",
        CallError::InvalidResult(_) => "call.invalid_result",
        CallError::RefusedResponse { .. } => "call.refused_response",
        CallError::RequestTooLarge { .. } => "call.request_too_large",
        CallError::Overloaded { .. } => "call.overloaded",
        CallError::InvalidRequest { .. } => "call.invalid_request",
        CallError::Parked { .. } => "call.parked",
        CallError::Declined { .. } => "call.declined",
        CallError::ResourceRefused { .. } => "call.resource_refused",
        CallError::HostShutDown => "call.host_shut_down",
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Usage { message } => f.write_str(message),
            CliError::Workspace { path } => {
                write!(f, "the workspace {} is not a directory", path.display())
            }
            CliError::InvalidJson { input, error } => {
                write!(f, "the {} are not valid JSON: {error}", input.as_str())
            }
            CliError::NotAnObject { input } => {
                write!(f, "the {} must be a JSON object", input.as_str())
            }
            CliError::Stdin(e) => write!(f, "cannot read standard input: {e}"),
            CliError::UnknownHook { name } => {
                let known: Vec<&str> = HookName::ALL.iter().map(|h| h.as_str()).collect();
                write!(f, "unknown hook `{name}`")?;
                if let Some(close) = crate::suggest::closest(name, known.iter().copied()) {
                    write!(f, "; did you mean `{close}`?")?;
                }
                write!(f, " (known: {})", known.join(", "))
            }
            CliError::HookPayload {
                hook,
                member,
                expected,
            } => write!(f, "the {hook} payload needs `{member}` ({expected})"),
            CliError::Host(e) => write!(f, "cannot start the host: {e}"),
            CliError::Start { extension, error } => {
                write!(f, "cannot start `{extension}`: {error}")
            }
            CliError::StartsFailed { failed } => {
                write!(f, "{failed} extension(s) could not be started")
            }
            CliError::Call {
                extension,
                target,
                error,
            } => write!(f, "{target} of `{extension}` failed: {error}"),
            CliError::ToolReportedError { extension, tool } => {
                write!(f, "tool `{tool}` of `{extension}` reported an error result")
            }
            CliError::DemoFailed { failed } => {
                let steps = if *failed == 1 { "step" } else { "steps" };
                write!(f, "{failed} demo {steps} failed")
            }
            CliError::Interrupted { signal, report } => write!(
                f,
                "interrupted by {}; {} extension process(es) shut down",
                crate::transport::process::signal_name(*signal),
                report.extensions.len()
            ),
            CliError::Reported(error) => error.fmt(f),
        }
    }
}

impl std::error::Error for CliError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_follow_the_error_class() {
        let start = CliError::Start {
            extension: "x".into(),
            error: StartError::UnknownExtension {
                name: "x".into(),
                discovered: Vec::new(),
                problems: Vec::new(),
            },
        };
        assert_eq!(start.exit_code(), EXIT_USAGE);
        assert_eq!(start.code(), "start.unknown_extension");
        let call = CliError::Call {
            extension: "x".into(),
            target: "tool t".into(),
            error: Box::new(CallError::HostShutDown),
        };
        assert_eq!(call.exit_code(), EXIT_CALL_FAILED);
        let interrupted = |signal| CliError::Interrupted {
            signal,
            report: ShutdownReport::default(),
        };
        assert_eq!(interrupted(libc::SIGINT).exit_code(), 130);
        assert_eq!(interrupted(libc::SIGTERM).exit_code(), 143);
        assert_eq!(interrupted(libc::SIGHUP).exit_code(), 129);
    }

    #[test]
    fn remote_errors_carry_their_json_rpc_code() {
        let error = CliError::Call {
            extension: "x".into(),
            target: "tool t".into(),
            error: Box::new(CallError::Remote(crate::wire::ResponseError::new(
                -32001, "boom",
            ))),
        };
        let value = error.to_json();
        assert_eq!(value["code"], "call.remote_error");
        assert_eq!(value["rpc_code"], -32001);
        assert_eq!(value["exit_code"], 1);
    }

    /// The CLI's JSON of a start or call error is serve's error object for it, with the
    /// CLI's code, message and exit code beside serve's code.
    #[test]
    fn start_and_call_errors_carry_serves_error_object() {
        use crate::host::CancelReason;
        use crate::serve::error::ServeError;
        let calls = [
            CallError::Cancelled {
                reason: CancelReason::User,
            },
            CallError::DeadlineExceeded {
                after: std::time::Duration::from_millis(250),
            },
            CallError::RequestTooLarge {
                bytes: 10,
                limit: 5,
            },
            CallError::Overloaded { queued: 3 },
            CallError::Remote(crate::wire::ResponseError {
                code: -32001,
                message: "boom".into(),
                data: Some(serde_json::json!({"why": "because"})),
            }),
            CallError::HostShutDown,
        ];
        let starts = [
            StartError::UnknownExtension {
                name: "x".into(),
                discovered: vec!["y".into()],
                problems: Vec::new(),
            },
            StartError::HostShutDown,
        ];
        let errors = calls
            .into_iter()
            .map(|error| {
                let serve = ServeError::from(&error).to_value();
                let cli = CliError::Call {
                    extension: "x".into(),
                    target: "tool t".into(),
                    error: Box::new(error),
                };
                (cli, serve)
            })
            .chain(starts.into_iter().map(|error| {
                let serve = ServeError::from(&error).to_value();
                let cli = CliError::Start {
                    extension: "x".into(),
                    error,
                };
                (cli, serve)
            }));
        for (cli, serve) in errors {
            let value = cli.to_json();
            assert_eq!(value["serve_code"], serve["code"], "{value}");
            assert_eq!(value["code"], cli.code());
            assert_eq!(value["exit_code"], cli.exit_code());
            for (key, member) in serve.as_object().unwrap() {
                if key != "code" && key != "message" {
                    assert_eq!(&value[key], member, "{key} of {value}");
                }
            }
        }
    }
}
