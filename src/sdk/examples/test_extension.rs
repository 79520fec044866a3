//! `test-extension`: a kitchen-sink fixture for integration tests and benchmarks.

use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::sdk::{
    CommandOutput, Context, ContextContribution, Extension, ExtensionNotification, HandlerError,
    HookOutput, Menu, MenuItem, NotificationLevel, Placement, RenderOutput, RenderSegment,
    StatusContribution, ToolOutput, FEATURE_REQUEST_PROGRESS,
};

/// How often `sleep` checks for cancellation.
const SLEEP_STEP: Duration = Duration::from_millis(10);

/// The exit code of the `crash` tool.
pub const CRASH_EXIT_CODE: i32 = 3;

#[derive(Deserialize)]
struct SleepArgs {
    ms: u64,
}

#[derive(Deserialize)]
struct StepsArgs {
    steps: u64,
}

#[derive(Deserialize)]
struct PromptArgs {
    prompt: String,
    #[serde(default)]
    secret: bool,
}

#[derive(Deserialize)]
struct NotifyArgs {
    #[serde(default)]
    level: NotificationLevel,
    #[serde(default = "default_title")]
    title: String,
    #[serde(default = "default_message")]
    message: String,
}

fn default_title() -> String {
    "test-extension".to_owned()
}

fn default_message() -> String {
    "notified".to_owned()
}

#[derive(Deserialize)]
struct BigArgs {
    bytes: usize,
}

#[derive(Deserialize)]
struct FailArgs {
    code: i64,
    message: String,
}

#[derive(Deserialize)]
struct BeforePrompt {
    #[serde(default)]
    prompt: String,
}

fn object_schema(properties: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": properties, "required": required})
}

/// The fixture. Tools, in catalog order:
///
/// | tool | arguments | result |
/// |---|---|---|
/// | `echo` | any object | its arguments as compact JSON text |
/// | `sleep` | `{ms}` | `slept <ms> ms`, checking cancellation every 10 ms; -32800 when cancelled |
/// | `progress` | `{steps}` | sends `steps` status progress events (`step i of N`, current i, total N, unit `steps`; only with `request_progress`), then `progress sent=<events sent>` |
/// | `confirm` | `{prompt}` | `confirmed` or `denied` after a `confirmation/request` |
/// | `ask` | `{prompt, secret?}` | `answer=<value>` or `answer=null` after an `input/request` (API 0.2/0.4) |
/// | `notify` | `{level?, title?, message?}` | sends that `notification`, then `notified` |
/// | `crash` | `{}` | the process exits with code 3 mid-call |
/// | `big` | `{bytes}` | a text of exactly `bytes` bytes of `x` |
/// | `fail` | `{code, message}` | a JSON-RPC error with that code and message |
/// | `panic` | `{}` | the handler panics: -32603 |
/// | `env` | `{}` | `cwd=<dir>` then the sorted `KEY=value` environment lines |
/// | `events` | `{}` | the lifecycle methods received so far, one per line |
///
/// Command `fixture [args..]`: `fixture: <args>` with an info notification;
/// `fixture confirm <prompt..>` asks a confirmation first and answers
/// `fixture: confirmed|denied`. Hook `before_prompt`: denies prompts containing `deny`,
/// otherwise continues with a `prompt_suffix` context contribution `prompt length N`.
/// Also `context/collect`, `status/collect`, a renderer for `echo`, `menu/collect`
/// (API 0.2+), a lifecycle subscription to all six events, and the
/// `request_progress` feature.
pub fn test_extension() -> Extension {
    let events: Arc<Mutex<Vec<String>>> = Arc::new(Mutex::new(Vec::new()));
    let record = Arc::clone(&events);
    Extension::new()
        .feature(FEATURE_REQUEST_PROGRESS)
        .tool(
            "echo",
            "Return the arguments as JSON text",
            json!({"type": "object"}),
            |args: Value, _cx: &Context| Ok(ToolOutput::text(args.to_string())),
        )
        .tool(
            "sleep",
            "Sleep, honouring cancellation",
            object_schema(json!({"ms": {"type": "integer", "minimum": 0}}), &["ms"]),
            |args: SleepArgs, cx: &Context| {
                let deadline = Instant::now() + Duration::from_millis(args.ms);
                loop {
                    if cx.is_cancelled() {
                        return Err(HandlerError::cancelled());
                    }
                    let now = Instant::now();
                    if now >= deadline {
                        break;
                    }
                    std::thread::sleep(SLEEP_STEP.min(deadline - now));
                }
                Ok(ToolOutput::text(format!("slept {} ms", args.ms)))
            },
        )
        .tool(
            "progress",
            "Send status progress events",
            object_schema(
                json!({"steps": {"type": "integer", "minimum": 0}}),
                &["steps"],
            ),
            |args: StepsArgs, cx: &Context| {
                let mut sent = 0;
                for i in 1..=args.steps {
                    let message = format!("step {i} of {}", args.steps);
                    if cx.progress_status(message, Some(i), Some(args.steps), Some("steps")) {
                        sent += 1;
                    }
                }
                Ok(ToolOutput::text(format!("progress sent={sent}")))
            },
        )
        .tool(
            "confirm",
            "Ask the person a yes/no question",
            object_schema(json!({"prompt": {"type": "string"}}), &["prompt"]),
            |args: PromptArgs, cx: &Context| {
                let confirmed = cx.confirm(&args.prompt, None, false, false)?;
                Ok(ToolOutput::text(if confirmed {
                    "confirmed"
                } else {
                    "denied"
                }))
            },
        )
        .tool(
            "ask",
            "Ask the person for text",
            object_schema(
                json!({"prompt": {"type": "string"}, "secret": {"type": "boolean"}}),
                &["prompt"],
            ),
            |args: PromptArgs, cx: &Context| {
                Ok(ToolOutput::text(
                    match cx.input(&args.prompt, args.secret)? {
                        Some(value) => format!("answer={value}"),
                        None => "answer=null".to_owned(),
                    },
                ))
            },
        )
        .tool(
            "notify",
            "Send a notification",
            json!({"type": "object", "properties": {
                "level": {"enum": ["info", "success", "warning", "error"]},
                "title": {"type": "string"},
                "message": {"type": "string"}
            }}),
            |args: NotifyArgs, cx: &Context| {
                cx.notify(args.level, args.title, args.message);
                Ok(ToolOutput::text("notified"))
            },
        )
        .tool(
            "crash",
            "Exit the process in the middle of the call",
            json!({"type": "object"}),
            |_: Value, _cx: &Context| -> Result<ToolOutput, HandlerError> {
                eprintln!("test-extension: crashing on purpose");
                std::process::exit(CRASH_EXIT_CODE)
            },
        )
        .tool(
            "big",
            "Return a text of the given size",
            object_schema(
                json!({"bytes": {"type": "integer", "minimum": 0}}),
                &["bytes"],
            ),
            |args: BigArgs, _cx: &Context| Ok(ToolOutput::text("x".repeat(args.bytes))),
        )
        .tool(
            "fail",
            "Answer a JSON-RPC error",
            object_schema(
                json!({"code": {"type": "integer"}, "message": {"type": "string"}}),
                &["code", "message"],
            ),
            |args: FailArgs, _cx: &Context| -> Result<ToolOutput, HandlerError> {
                Err(HandlerError::new(args.code, args.message))
            },
        )
        .tool(
            "panic",
            "Panic inside the handler",
            json!({"type": "object"}),
            |_: Value, _cx: &Context| -> Result<ToolOutput, HandlerError> {
                panic!("test-extension panics on purpose")
            },
        )
        .tool(
            "env",
            "Show the working directory and environment",
            json!({"type": "object"}),
            |_: Value, _cx: &Context| {
                let cwd = std::env::current_dir()?;
                let mut vars: Vec<String> = std::env::vars_os()
                    .map(|(k, v)| format!("{}={}", k.to_string_lossy(), v.to_string_lossy()))
                    .collect();
                vars.sort();
                Ok(ToolOutput::text(format!(
                    "cwd={}\n{}",
                    cwd.display(),
                    vars.join("\n")
                )))
            },
        )
        .tool(
            "events",
            "List the lifecycle notifications received",
            json!({"type": "object"}),
            move |_: Value, _cx: &Context| Ok(ToolOutput::text(events.lock().join("\n"))),
        )
        .command(
            "fixture",
            "Echo the arguments; `fixture confirm <prompt>` asks first",
            Some("/fixture [confirm] [args..]"),
            |args, cx| {
                if args.first().map(String::as_str) == Some("confirm") {
                    let prompt = args[1..].join(" ");
                    let confirmed = cx.confirm(&prompt, None, false, false)?;
                    let answer = if confirmed { "confirmed" } else { "denied" };
                    return Ok(CommandOutput::text(format!("fixture: {answer}")));
                }
                Ok(
                    CommandOutput::text(format!("fixture: {}", args.join(" "))).with_notification(
                        ExtensionNotification::info(
                            "fixture",
                            format!("ran with {} arguments", args.len()),
                        ),
                    ),
                )
            },
        )
        .hook("before_prompt", |payload: BeforePrompt, _cx| {
            if payload.prompt.contains("deny") {
                return Ok(HookOutput::deny(
                    "the fixture denies prompts containing \"deny\"",
                ));
            }
            Ok(
                HookOutput::continue_().with_context(ContextContribution::new(
                    "test-extension",
                    format!("prompt length {}", payload.prompt.len()),
                )),
            )
        })
        .context(|_prompt, _cx| {
            Ok(vec![ContextContribution::new(
                "test-extension",
                "fixture context",
            )
            .with_placement(Placement::SystemSuffix)])
        })
        .status(|surface, _cx| {
            Ok(Some(
                StatusContribution::new(surface, "fixture ok")
                    .with_style_role("extension.test_extension.status"),
            ))
        })
        .renderer("echo", |request, _cx| {
            Ok(RenderOutput::new(vec![
                RenderSegment::styled("echo", "extension.test_extension.echo"),
                RenderSegment::plain(": "),
                RenderSegment::plain(request.output_text()),
            ]))
        })
        .menu(|_cx| {
            Ok(Menu::new(
                "Test extension",
                vec![
                    MenuItem::action("run", "Run the fixture", "fixture", vec!["menu".into()])
                        .recommended(),
                ],
            ))
        })
        .lifecycle(&[], move |event, _cx| record.lock().push(event.method))
}
