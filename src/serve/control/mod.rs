//! Control lines: one JSON object per line, parsed into a typed [`ControlLine`].
//!
//! serde reads each line's members as the enum [`wire::Wire`], tagged on `op`, which
//! mirrors the schema; [`read`] turns serde's errors into serve's, so every error names
//! the member and the rule and never repeats the value that was sent (a secret typed
//! into the wrong member must not come back in an error reply). What the shape does not
//! say (a hook's payload, a menu item, a notification's row) is checked here. Members an
//! operation does not define are ignored, so clients may add their own bookkeeping.

mod lifecycle;
mod read;
mod wire;

use std::fmt;
use std::time::Duration;

use serde_json::{Map, Value};

use self::lifecycle::lifecycle;
use self::wire::Wire;
use super::bindings::ServeBinding;
use super::error::{ErrorCode, ServeError};
use super::members::{
    closed_notification, hook_payload, menu_item, message_deltas, runtime_features, services,
    surface, u16_field,
};
use crate::host::BoundNotification;
use crate::host::LifecycleNotification;
use crate::manifest::UiSurface;
use crate::services::autocomplete::CompletionQuery;
use crate::services::bound::{HostNotification, Refusal, ServiceRefusal};
use crate::validate::{ExtensionMenuItem, HookPayload};

/// A caller-chosen id (`id` of a control line, `call_id` of a call): a string or an
/// integer, echoed back exactly as it was sent.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum ClientId {
    /// An integer in the signed 64-bit range.
    Int(i64),
    /// An integer above the signed 64-bit range.
    UInt(u64),
    /// A string.
    Text(String),
}

impl ClientId {
    /// The id in `value`, if it is a string or an integer (read as a member is, by its
    /// `Deserialize`).
    fn from_value(value: &Value) -> Option<ClientId> {
        serde::Deserialize::deserialize(value).ok()
    }

    /// The id as JSON.
    pub fn to_value(&self) -> Value {
        match self {
            ClientId::Int(n) => Value::from(*n),
            ClientId::UInt(n) => Value::from(*n),
            ClientId::Text(s) => Value::from(s.as_str()),
        }
    }
}

/// A string that must never be written anywhere: the answer to an input request. Its
/// `Debug` does not show it.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Secret(String);

impl Secret {
    /// The value, to hand to the extension.
    pub fn into_inner(self) -> String {
        self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(..)")
    }
}

/// One parsed control line.
#[derive(Debug, PartialEq)]
pub(crate) struct ControlLine {
    /// The caller's `id`, echoed in the reply.
    pub id: Option<ClientId>,
    /// What to do.
    pub op: Op,
}

/// The operations.
#[derive(Debug, PartialEq)]
pub(crate) enum Op {
    /// Scan the extension directories.
    Discover,
    /// The bytes of an artifact a live generation of `extension` published.
    Artifact {
        extension: String,
        artifact_id: String,
    },
    /// Start an extension, with its own `initialize` deadline if the client set one.
    Start {
        extension: String,
        startup_timeout: Option<Duration>,
        /// The services the client answers for this extension (feature or capability
        /// names).
        services: Vec<ServeBinding>,
        /// The features the runtime serves itself that this extension is offered
        /// (`tool_composition_v1`, `resource_refs_v1`, `operation_descriptors_v1`).
        features: Vec<crate::negotiation::Feature>,
        /// Configures the session's bulk storage in this directory (once) and offers
        /// `bulk_objects_v1` to this extension.
        bulk_storage: Option<std::path::PathBuf>,
    },
    /// Stop an extension.
    Stop { extension: String },
    /// Restart an extension candidate-first.
    Reload { extension: String },
    /// Admit a call; its result follows as a `result` line.
    Call(CallSpec),
    /// Cancel an active call.
    Cancel { call_id: ClientId },
    /// Answer a pending confirmation.
    AnswerConfirmation { request_id: u64, confirmed: bool },
    /// Answer a pending input request; `None` cancels it.
    AnswerInput {
        request_id: u64,
        value: Option<Secret>,
    },
    /// Tell the host of a child the client's `agent_sessions` serves.
    Agent(super::agents::AgentOp),
    /// Answer a pending `service_request`.
    ServiceAnswer {
        request_id: u64,
        answer: ServiceAnswerSpec,
    },
    /// Send a Wave-1 notification (section 1.11), or message deltas to batch.
    Notify {
        extension: String,
        generation: Option<u64>,
        notification: BoundNotification,
    },
    /// Complete an editor snapshot through the admitted autocomplete chains (section
    /// 2.24b): one extension's, or every one in turn under the aggregate deadline.
    Autocomplete {
        extension: Option<String>,
        query: CompletionQuery,
    },
    /// Snapshot every live generation.
    Status,
    /// Run the `get_applicable_operations` host tool (section 2.26).
    ApplicableOperations { arguments: Value },
    /// Report a lifecycle observation (section 1.10).
    Lifecycle(LifecycleNotification),
    /// Shut everything down and exit.
    Shutdown,
}

/// The client's answer to a `service_request`.
#[derive(Debug, PartialEq)]
pub(crate) enum ServiceAnswerSpec {
    /// `"result": {..}`, checked against the method's result rules.
    Result(Value),
    /// `"refusal": "<contract name>", "message": ".."`.
    Refusal(ServiceRefusal),
}

/// A call: which extension, which request, under which caller id.
#[derive(Debug, PartialEq)]
pub(crate) struct CallSpec {
    /// The caller's id for the call, unique among active calls.
    pub call_id: ClientId,
    /// The extension called.
    pub extension: String,
    /// The call's deadline, when the caller set one.
    pub timeout: Option<Duration>,
    /// The request.
    pub kind: CallKind,
}

/// The host-to-extension request a call makes.
#[derive(Debug, PartialEq)]
pub(crate) enum CallKind {
    /// `tool/call`.
    Tool { tool: String, arguments: Value },
    /// `command/execute`.
    Command {
        name: String,
        arguments: Vec<String>,
    },
    /// `hook/run`.
    Hook(HookPayload),
    /// `context/collect`.
    Context { prompt: Option<String> },
    /// `status/collect`.
    StatusCollect { surface: UiSurface },
    /// `tool/render`.
    Render {
        tool: String,
        arguments: Value,
        output: String,
        is_error: bool,
    },
    /// `menu/collect`.
    Menu,
    /// An attended menu action (`command/execute`, section 1.6b).
    MenuAction(ExtensionMenuItem),
}

/// The operations that are calls (each settles with a `result` line).
pub const CALL_OPS: [&str; 8] = [
    "call",
    "command",
    "hook",
    "context",
    "status_collect",
    "render",
    "menu",
    "menu_action",
];

impl CallKind {
    /// The operation name, as sent in `result` lines (one of [`CALL_OPS`]).
    pub fn op(&self) -> &'static str {
        match self {
            CallKind::Tool { .. } => "call",
            CallKind::Command { .. } => "command",
            CallKind::Hook(_) => "hook",
            CallKind::Context { .. } => "context",
            CallKind::StatusCollect { .. } => "status_collect",
            CallKind::Render { .. } => "render",
            CallKind::Menu => "menu",
            CallKind::MenuAction(_) => "menu_action",
        }
    }
}

/// A control line that could not be used, with the `id` when one was readable.
#[derive(Debug, PartialEq)]
pub(crate) struct ControlError {
    /// The caller's `id`, when the line had a valid one.
    pub id: Option<ClientId>,
    /// What is wrong.
    pub error: ServeError,
}

/// The operations before the calls, in the order of the schema.
const SESSION_OPS: [&str; 4] = ["discover", "start", "stop", "reload"];

/// The operations after the calls, in the order of the schema.
const OTHER_OPS: [&str; 16] = [
    "cancel",
    "answer_confirmation",
    "answer_input",
    "service_answer",
    "notify",
    "message_delta",
    "message_settled",
    "autocomplete",
    "terminal_revoke",
    "agent_report",
    "agent_event",
    "status",
    "artifact",
    "get_applicable_operations",
    "lifecycle",
    "shutdown",
];

/// Every operation, in the order of the schema.
fn ops() -> impl Iterator<Item = &'static str> {
    SESSION_OPS.into_iter().chain(CALL_OPS).chain(OTHER_OPS)
}

/// Parses one control line (without its LF): the JSON object, its `id`, then its
/// members through the serde enum [`Wire`] tagged on its `op`, then what the shape does
/// not say.
pub(crate) fn parse(line: &[u8]) -> Result<ControlLine, ControlError> {
    let no_id = |error| ControlError { id: None, error };
    let value: Value = serde_json::from_slice(line).map_err(|e| {
        no_id(ServeError::new(
            ErrorCode::InvalidJson,
            format!(
                "not a JSON value (line {}, column {})",
                e.line(),
                e.column()
            ),
        ))
    })?;
    let Value::Object(mut members) = value else {
        return Err(no_id(ServeError::new(
            ErrorCode::NotAnObject,
            "a control line must be a JSON object",
        )));
    };
    let id = match members.remove("id") {
        None | Some(Value::Null) => None,
        Some(value) => Some(ClientId::from_value(&value).ok_or_else(|| {
            no_id(ServeError::new(
                ErrorCode::InvalidId,
                "`id` must be a string or an integer",
            ))
        })?),
    };
    match parse_members(members) {
        Ok(op) => Ok(ControlLine { id, op }),
        Err(error) => Err(ControlError { id, error }),
    }
}

/// The operation of a line's `members` (without `id`).
fn parse_members(mut members: Map<String, Value>) -> Result<Op, ServeError> {
    let op = match members.remove("op") {
        None | Some(Value::Null) => return Err(ServeError::missing("op")),
        Some(Value::String(op)) => op,
        Some(_) => return Err(ServeError::wrong_type("op", "a string")),
    };
    if !ops().any(|known| known == op) {
        return Err(read::unknown_op());
    }
    // A member set to `null` counts as absent, but for `answer_input`'s `value`, whose
    // `null` cancels the input request.
    let value_sent = members.contains_key("value");
    members.retain(|_, value| !value.is_null());
    into_op(read::read(&op, members)?, value_sent)
}

/// The typed operation of a line serde read: the checks its shape does not say.
fn into_op(wire: Wire, value_sent: bool) -> Result<Op, ServeError> {
    let call = |call_id, extension, timeout_ms: Option<u64>, kind| {
        Ok(Op::Call(CallSpec {
            call_id,
            extension,
            timeout: timeout_ms.map(Duration::from_millis),
            kind,
        }))
    };
    let notify = |extension, generation, notification| {
        Ok(Op::Notify {
            extension,
            generation,
            notification,
        })
    };
    match wire {
        Wire::Discover {} => Ok(Op::Discover),
        Wire::Start(start) => Ok(Op::Start {
            extension: start.extension,
            startup_timeout: start.startup_timeout_ms.map(Duration::from_millis),
            services: services(start.services.unwrap_or_default())?,
            features: runtime_features(start.features.unwrap_or_default())?,
            bulk_storage: start.bulk_storage.map(std::path::PathBuf::from),
        }),
        Wire::Stop(line) => Ok(Op::Stop {
            extension: line.extension,
        }),
        Wire::Reload(line) => Ok(Op::Reload {
            extension: line.extension,
        }),
        Wire::Call(c) => call(
            c.call_id,
            c.extension,
            c.timeout_ms,
            CallKind::Tool {
                tool: c.tool,
                arguments: Value::Object(c.arguments.unwrap_or_default()),
            },
        ),
        Wire::Command(c) => call(
            c.call_id,
            c.extension,
            c.timeout_ms,
            CallKind::Command {
                name: c.name,
                arguments: c.arguments.unwrap_or_default(),
            },
        ),
        Wire::Hook(c) => {
            let payload = hook_payload(&c.hook, c.payload.as_ref())?;
            call(
                c.call_id,
                c.extension,
                c.timeout_ms,
                CallKind::Hook(payload),
            )
        }
        Wire::Context(c) => call(
            c.call_id,
            c.extension,
            c.timeout_ms,
            CallKind::Context { prompt: c.prompt },
        ),
        Wire::StatusCollect(c) => {
            let surface = surface(c.surface.as_deref())?;
            call(
                c.call_id,
                c.extension,
                c.timeout_ms,
                CallKind::StatusCollect { surface },
            )
        }
        Wire::Render(c) => call(
            c.call_id,
            c.extension,
            c.timeout_ms,
            CallKind::Render {
                tool: c.tool,
                arguments: Value::Object(c.arguments.unwrap_or_default()),
                output: c.output,
                is_error: c.is_error.unwrap_or(false),
            },
        ),
        Wire::Menu(c) => call(c.call_id, c.extension, c.timeout_ms, CallKind::Menu),
        Wire::MenuAction(c) => {
            let item = menu_item(&c.item)?;
            call(
                c.call_id,
                c.extension,
                c.timeout_ms,
                CallKind::MenuAction(item),
            )
        }
        Wire::Cancel { call_id } => Ok(Op::Cancel { call_id }),
        Wire::AnswerConfirmation {
            request_id,
            confirmed,
        } => Ok(Op::AnswerConfirmation {
            request_id,
            confirmed,
        }),
        Wire::AnswerInput(answer) => match value_sent {
            true => Ok(Op::AnswerInput {
                request_id: answer.request_id,
                value: answer.value,
            }),
            false => Err(ServeError::missing("value")),
        },
        Wire::ServiceAnswer(answer) => Ok(Op::ServiceAnswer {
            request_id: answer.request_id,
            answer: service_answer(answer.result, answer.refusal, answer.message)?,
        }),
        Wire::Notify(line) => {
            let params = Value::Object(line.params.unwrap_or_default());
            let notification = client_notification(&line.method, &params)?;
            notify(line.extension, line.generation, notification)
        }
        Wire::MessageDelta(line) => {
            let deltas = message_deltas(line.delta, line.deltas, line.updates)?;
            notify(
                line.extension,
                line.generation,
                BoundNotification::MessageDeltas {
                    message_id: line.message_id,
                    deltas,
                },
            )
        }
        Wire::MessageSettled(line) => notify(
            line.extension,
            line.generation,
            BoundNotification::MessageSettled {
                message_id: line.message_id,
            },
        ),
        Wire::Autocomplete(line) => Ok(Op::Autocomplete {
            extension: line.extension,
            query: CompletionQuery::new(
                line.text,
                usize::try_from(line.cursor).unwrap_or(usize::MAX),
                line.revision,
            ),
        }),
        Wire::TerminalRevoke(line) => notify(
            line.extension,
            line.generation,
            BoundNotification::TerminalGrantLost {
                reason: line.reason,
            },
        ),
        Wire::AgentReport { report } => super::agents::report(report).map(Op::Agent),
        Wire::AgentEvent { agent_id, event } => {
            super::agents::event(agent_id, event).map(Op::Agent)
        }
        Wire::Status {} => Ok(Op::Status),
        Wire::Artifact {
            extension,
            artifact_id,
        } => Ok(Op::Artifact {
            extension,
            artifact_id,
        }),
        Wire::GetApplicableOperations { arguments } => Ok(Op::ApplicableOperations { arguments }),
        Wire::Lifecycle(line) => Ok(Op::Lifecycle(lifecycle(line)?)),
        Wire::Shutdown {} => Ok(Op::Shutdown),
    }
}

/// The typed notification a `notify` line sends: the notification table says which a
/// client sends, and their closed params.
fn client_notification(method: &str, params: &Value) -> Result<BoundNotification, ServeError> {
    let row = HostNotification::from_name(method)
        .filter(|row| row.from_client())
        .ok_or_else(|| {
            let sendable: Vec<&str> = HostNotification::ALL
                .iter()
                .filter(|row| row.from_client())
                .map(|row| row.name())
                .collect();
            ServeError::invalid_value(
                "method",
                &[&format!(
                    "{} (message/updated is sent by message_delta and message_settled, \
                     terminal/grant-lost by terminal_revoke)",
                    sendable.join(", ")
                )],
            )
        })?;
    let fields = closed_notification(method, params, row.members())?;
    match row {
        HostNotification::ShortcutTrigger => Ok(BoundNotification::ShortcutTrigger {
            id: fields.string("id")?,
        }),
        HostNotification::TerminalInput => Ok(BoundNotification::TerminalInput {
            data: fields.string("data")?,
        }),
        HostNotification::Resize => Ok(BoundNotification::Resize {
            columns: u16_field(&fields, "columns")?,
            rows: u16_field(&fields, "rows")?,
        }),
        // A row the client may send whose typed form this serve lacks.
        other => Err(ServeError::new(
            ErrorCode::InvalidValue,
            format!(
                "{} cannot be sent through notify by this serve",
                other.name()
            ),
        )
        .with("field", "method")),
    }
}

/// `result` or `refusal` (with an optional `message`), exactly one of them.
fn service_answer(
    result: Option<Value>,
    refusal: Option<String>,
    message: Option<String>,
) -> Result<ServiceAnswerSpec, ServeError> {
    match (result, refusal) {
        (Some(result), None) => Ok(ServiceAnswerSpec::Result(result)),
        (None, Some(name)) => {
            let refusal = Refusal::from_name(&name).ok_or_else(|| {
                let names: Vec<&str> = Refusal::ALL.iter().map(|r| r.name()).collect();
                ServeError::invalid_value("refusal", &names)
            })?;
            Ok(ServiceAnswerSpec::Refusal(
                refusal.because(message.unwrap_or_default()),
            ))
        }
        (Some(_), Some(_)) => Err(ServeError::new(
            ErrorCode::InvalidValue,
            "a service answer has `result` or `refusal`, not both",
        )
        .with("field", "refusal")),
        (None, None) => Err(ServeError::missing("result")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(line: &str) -> ControlLine {
        parse(line.as_bytes()).unwrap()
    }

    fn err(line: &str) -> ControlError {
        parse(line.as_bytes()).unwrap_err()
    }

    #[test]
    fn every_call_op_parses_as_a_call() {
        for op in CALL_OPS {
            let line = format!(r#"{{"op": "{op}", "extension": "x", "call_id": "c"}}"#);
            match parse(line.as_bytes()) {
                Ok(ControlLine {
                    op: Op::Call(spec), ..
                }) => assert_eq!(spec.kind.op(), op),
                // A call whose own members are missing is refused for them, not as an
                // unknown operation.
                Ok(other) => panic!("{op} parsed as {other:?}"),
                Err(error) => assert_ne!(error.error.code, ErrorCode::UnknownOp, "{op}"),
            }
        }
    }

    #[test]
    fn every_op_is_known() {
        for op in ops() {
            let line = format!(r#"{{"op": "{op}"}}"#);
            if let Err(error) = parse(line.as_bytes()) {
                assert_ne!(error.error.code, ErrorCode::UnknownOp, "{op}");
            }
        }
    }

    #[test]
    fn a_wrong_member_is_named_by_its_path() {
        let nested = err(r#"{"op":"command","extension":"x","call_id":1,"arguments":["a",2]}"#);
        assert_eq!(nested.error.code, ErrorCode::WrongType);
        assert_eq!(nested.error.details["field"], "arguments[1]");
        let timeout = err(r#"{"op":"menu","extension":"x","call_id":1,"timeout_ms":-1}"#);
        assert_eq!(timeout.error.code, ErrorCode::WrongType);
        assert_eq!(timeout.error.details["field"], "timeout_ms");
        assert_eq!(
            timeout.error.message,
            "`timeout_ms` must be an unsigned 64-bit integer"
        );
        let id = err(r#"{"op":"cancel","call_id":1.5}"#);
        assert_eq!(id.error.message, "`call_id` must be a string or an integer");
        let op = err(r#"{"op": 7}"#);
        assert_eq!(op.error.code, ErrorCode::WrongType);
        assert_eq!(err(r#"{"id": 1}"#).error.code, ErrorCode::MissingField);
    }

    #[test]
    fn a_null_member_is_absent_but_a_null_input_cancels() {
        let null = err(r#"{"op":"call","extension":"x","tool":"t","call_id":null}"#);
        assert_eq!(null.error.code, ErrorCode::MissingField);
        assert_eq!(null.error.details["field"], "call_id");
        let cancelled = ok(r#"{"op":"answer_input","request_id":3,"value":null}"#);
        assert_eq!(
            cancelled.op,
            Op::AnswerInput {
                request_id: 3,
                value: None
            }
        );
        let absent = err(r#"{"op":"answer_input","request_id":3}"#);
        assert_eq!(absent.error.details["field"], "value");
        let extra = ok(r#"{"op":"status","client_tag":{"x":1}}"#);
        assert_eq!(extra.op, Op::Status);
    }

    #[test]
    fn parses_a_call_with_its_ids() {
        let line = ok(
            r#"{"id": 7, "op": "call", "extension": "x", "tool": "echo", "call_id": "c1", "timeout_ms": 500}"#,
        );
        assert_eq!(line.id, Some(ClientId::Int(7)));
        assert_eq!(
            line.op,
            Op::Call(CallSpec {
                call_id: ClientId::Text("c1".into()),
                extension: "x".into(),
                timeout: Some(Duration::from_millis(500)),
                kind: CallKind::Tool {
                    tool: "echo".into(),
                    arguments: serde_json::json!({}),
                },
            })
        );
        assert_eq!(
            ok(r#"{"op":"status","id":18446744073709551615}"#).id,
            Some(ClientId::UInt(u64::MAX))
        );
    }

    #[test]
    fn each_malformed_line_gets_a_typed_error_keeping_the_id() {
        assert_eq!(err("{nope").error.code, ErrorCode::InvalidJson);
        assert_eq!(err("[1]").error.code, ErrorCode::NotAnObject);
        assert_eq!(
            err(r#"{"id": 1.5, "op": "status"}"#).error.code,
            ErrorCode::InvalidId
        );
        let unknown = err(r#"{"id": "a", "op": "fly"}"#);
        assert_eq!(unknown.id, Some(ClientId::Text("a".into())));
        assert_eq!(unknown.error.code, ErrorCode::UnknownOp);
        let missing = err(r#"{"id": 2, "op": "call", "extension": "x", "tool": "t"}"#);
        assert_eq!(missing.id, Some(ClientId::Int(2)));
        assert_eq!(missing.error.code, ErrorCode::MissingField);
        assert_eq!(missing.error.details["field"], "call_id");
        let wrong = err(r#"{"op": "answer_confirmation", "request_id": 1, "confirmed": "yes"}"#);
        assert_eq!(wrong.error.code, ErrorCode::WrongType);
        let nested =
            err(r#"{"op":"hook","extension":"x","call_id":1,"hook":"before_prompt","payload":{}}"#);
        assert_eq!(nested.error.details["field"], "payload.prompt");
        let bad_hook =
            err(r#"{"op":"hook","extension":"x","call_id":1,"hook":"nope","payload":{}}"#);
        assert_eq!(bad_hook.error.code, ErrorCode::InvalidValue);
    }

    #[test]
    fn a_misplaced_secret_is_never_repeated() {
        let line = r#"{"op": "answer_input", "request_id": "hunter2-secret", "value": "x"}"#;
        let error = err(line).error.to_value().to_string();
        assert!(!error.contains("hunter2"), "{error}");
        let line = r#"{"op": "answer_confirmation", "request_id": 1, "confirmed": "hunter2"}"#;
        let error = err(line).error.to_value().to_string();
        assert!(!error.contains("hunter2"), "{error}");
        let parsed = ok(r#"{"op": "answer_input", "request_id": 3, "value": "hunter2"}"#);
        assert!(!format!("{parsed:?}").contains("hunter2"));
        for line in [
            r#"{"op": "cancel", "call_id": {"k": "hunter2"}}"#,
            r#"{"op": "menu", "extension": "x", "call_id": 1, "timeout_ms": "hunter2"}"#,
            r#"{"op": "command", "extension": "x", "call_id": 1, "name": "n", "arguments": [{"hunter2": 1}]}"#,
            r#"{"op": "hunter2"}"#,
            r#"{"op": "answer_input", "request_id": 1, "value": ["hunter2"]}"#,
        ] {
            let error = err(line).error.to_value().to_string();
            assert!(!error.contains("hunter2"), "{line}: {error}");
        }
    }

    #[test]
    fn lifecycle_lines_map_to_notifications() {
        let line = ok(
            r#"{"op":"lifecycle","event":"turn/settled","session_id":"s","run_id":"r","turn_id":"t","outcome":"completed","duration_ms":942}"#,
        );
        let Op::Lifecycle(notification) = line.op else {
            panic!("lifecycle expected")
        };
        assert_eq!(
            notification.params(),
            serde_json::json!({"session_id": "s", "run_id": "r", "turn_id": "t",
                               "outcome": "completed", "duration_ms": 942, "reason": null})
        );
        assert_eq!(
            err(r#"{"op":"lifecycle","event":"turn/settled","session_id":"s","run_id":"r","turn_id":"t","outcome":"meh","duration_ms":1}"#)
                .error
                .code,
            ErrorCode::InvalidValue
        );
    }
}
