//! A control line as docs/serve-protocol.schema.json writes it: one serde enum, tagged
//! on `op`, one variant per operation with the members the schema lists.
//!
//! Serde reads the line's shape (which members, of which JSON types); [`super`] then
//! checks what the shape does not say (a hook's payload, a menu item, a lifecycle
//! event's params) and builds the typed [`super::Op`]. The enum is read externally
//! tagged from `{op: members}`, not internally tagged from the line itself: an
//! internally tagged enum buffers the line before it picks the variant, which loses
//! the path of the member that broke a rule, and every error must name it.

use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;
use serde_json::{Map, Value};

use super::{ClientId, Secret};

/// Declares a call line: the members every call has (`call_id`, `extension`,
/// `timeout_ms`) and its own.
macro_rules! call_line {
    ($(#[$doc:meta])* $name:ident { $($(#[$attr:meta])* $member:ident: $ty:ty,)* }) => {
        $(#[$doc])*
        #[derive(Debug, Deserialize)]
        pub(super) struct $name {
            /// The caller's id for the call.
            pub call_id: ClientId,
            /// The extension called.
            pub extension: String,
            /// The call's deadline in milliseconds, when the caller set one.
            pub timeout_ms: Option<u64>,
            $($(#[$attr])* pub $member: $ty,)*
        }
    };
}

/// Every operation, with its members as the schema lists them (`op` and `id` are the
/// line's own). Members an operation does not define are ignored.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum Wire {
    Discover {},
    Start(Start),
    Stop(Extension),
    Reload(Extension),
    Call(ToolCall),
    Command(Command),
    Hook(Hook),
    Context(Context),
    StatusCollect(StatusCollect),
    Render(Render),
    Menu(Menu),
    MenuAction(MenuAction),
    Cancel {
        call_id: ClientId,
    },
    AnswerConfirmation {
        request_id: u64,
        confirmed: bool,
    },
    AnswerInput(AnswerInput),
    ServiceAnswer(ServiceAnswer),
    Notify(Notify),
    MessageDelta(MessageDelta),
    MessageSettled(MessageSettled),
    Autocomplete(Autocomplete),
    TerminalRevoke(TerminalRevoke),
    AgentReport {
        report: Value,
    },
    AgentEvent {
        agent_id: String,
        event: Value,
    },
    Status {},
    Artifact {
        extension: String,
        artifact_id: String,
    },
    GetApplicableOperations {
        arguments: Value,
    },
    Lifecycle(Lifecycle),
    Shutdown {},
}

/// `start`.
#[derive(Debug, Deserialize)]
pub(super) struct Start {
    pub extension: String,
    pub startup_timeout_ms: Option<u64>,
    pub services: Option<Vec<String>>,
    pub features: Option<Vec<String>>,
    pub bulk_storage: Option<String>,
}

/// `stop` and `reload`: the extension alone.
#[derive(Debug, Deserialize)]
pub(super) struct Extension {
    pub extension: String,
}

call_line!(
    /// `call`: `tool/call`.
    ToolCall {
        tool: String,
        arguments: Option<Map<String, Value>>,
    }
);

call_line!(
    /// `command`: `command/execute`.
    Command {
        name: String,
        arguments: Option<Vec<String>>,
    }
);

call_line!(
    /// `hook`: `hook/run`, its payload checked per hook by [`super`].
    Hook {
        hook: String,
        payload: Option<Map<String, Value>>,
    }
);

call_line!(
    /// `context`: `context/collect`.
    Context {
        prompt: Option<String>,
    }
);

call_line!(
    /// `status_collect`: `status/collect`.
    StatusCollect {
        surface: Option<String>,
    }
);

call_line!(
    /// `render`: `tool/render`.
    Render {
        tool: String,
        arguments: Option<Map<String, Value>>,
        output: String,
        is_error: Option<bool>,
    }
);

call_line!(
    /// `menu`: `menu/collect`.
    Menu {}
);

call_line!(
    /// `menu_action`: a menu action, run as `command/execute`.
    MenuAction {
        item: Map<String, Value>,
    }
);

/// `answer_input`: `value` is null to cancel (its presence is checked before the nulls
/// are dropped).
#[derive(Debug, Deserialize)]
pub(super) struct AnswerInput {
    pub request_id: u64,
    #[serde(default)]
    pub value: Option<Secret>,
}

/// `service_answer`: `result`, or `refusal` with an optional `message`.
#[derive(Debug, Deserialize)]
pub(super) struct ServiceAnswer {
    pub request_id: u64,
    pub result: Option<Value>,
    pub refusal: Option<String>,
    pub message: Option<String>,
}

/// `notify`: a client notification, its params checked against its row.
#[derive(Debug, Deserialize)]
pub(super) struct Notify {
    pub extension: String,
    pub method: String,
    pub params: Option<Map<String, Value>>,
    pub generation: Option<u64>,
}

/// `message_delta`: `delta`, or `deltas` (`updates` is an alias).
#[derive(Debug, Deserialize)]
pub(super) struct MessageDelta {
    pub extension: String,
    pub message_id: String,
    pub generation: Option<u64>,
    pub delta: Option<String>,
    pub deltas: Option<Vec<String>>,
    pub updates: Option<Vec<String>>,
}

/// `message_settled`.
#[derive(Debug, Deserialize)]
pub(super) struct MessageSettled {
    pub extension: String,
    pub message_id: String,
    pub generation: Option<u64>,
}

/// `autocomplete`.
#[derive(Debug, Deserialize)]
pub(super) struct Autocomplete {
    pub extension: Option<String>,
    pub text: String,
    pub cursor: u64,
    pub revision: u64,
}

/// `terminal_revoke`.
#[derive(Debug, Deserialize)]
pub(super) struct TerminalRevoke {
    pub extension: String,
    pub reason: String,
    pub generation: Option<u64>,
}

/// `lifecycle`: `event` and the notification's params beside it (section 1.10); which
/// of them an event requires is checked by [`super`].
#[derive(Debug, Deserialize)]
pub(super) struct Lifecycle {
    pub event: String,
    pub session_id: String,
    pub run_id: Option<String>,
    pub turn_id: Option<String>,
    pub tool_call_id: Option<String>,
    pub tool_name: Option<String>,
    pub outcome: Option<String>,
    pub duration_ms: Option<u64>,
    pub reason: Option<String>,
}

impl<'de> Deserialize<'de> for ClientId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<ClientId, D::Error> {
        struct IdVisitor;

        impl Visitor<'_> for IdVisitor {
            type Value = ClientId;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string or an integer")
            }

            fn visit_str<E: de::Error>(self, s: &str) -> Result<ClientId, E> {
                Ok(ClientId::Text(s.to_string()))
            }

            fn visit_string<E: de::Error>(self, s: String) -> Result<ClientId, E> {
                Ok(ClientId::Text(s))
            }

            fn visit_i64<E: de::Error>(self, n: i64) -> Result<ClientId, E> {
                Ok(ClientId::Int(n))
            }

            fn visit_u64<E: de::Error>(self, n: u64) -> Result<ClientId, E> {
                Ok(i64::try_from(n).map_or(ClientId::UInt(n), ClientId::Int))
            }
        }

        deserializer.deserialize_any(IdVisitor)
    }
}

impl<'de> Deserialize<'de> for Secret {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Secret, D::Error> {
        String::deserialize(deserializer).map(Secret)
    }
}
