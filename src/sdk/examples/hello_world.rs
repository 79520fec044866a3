//! `hello-world`: the reference's running example (sections 1.1, 1.5, 1.6, 2.1).

use serde::Deserialize;
use serde_json::{json, Value};

use crate::sdk::{
    CommandOutput, Context, ContextContribution, Extension, ExtensionNotification, HookOutput,
    NotificationLevel, Placement, RenderOutput, RenderSegment, StatusContribution, ToolOutput,
};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HelloArgs {
    name: String,
}

/// Tool `hello_world` {name} (answers `Hello, <name>!` and sends a success
/// notification), command `hello [name]`, hooks `before_prompt` and `after_response`
/// (both continue), context, status, and a renderer for `hello_world`.
pub fn hello_world() -> Extension {
    greeter("hello_world", true)
}

/// `hello-canonical`: hello-world with its tool named `hello_canonical`, so that it can
/// run beside hello-world (tool names are unique across a host, section 2.11). The demo
/// runs it on the API 0.3 canonical wire, whose vocabulary has no `notification`, so it
/// greets without one.
pub fn hello_canonical() -> Extension {
    greeter("hello_canonical", false)
}

/// hello-world's extension, its greeting tool (and renderer) called `tool`; `notify`
/// sends the success notification with each greeting.
fn greeter(tool: &'static str, notify: bool) -> Extension {
    Extension::new()
        .tool(
            tool,
            "Greet someone from an executable extension",
            json!({
                "type": "object",
                "properties": {"name": {"type": "string"}},
                "required": ["name"],
                "additionalProperties": false
            }),
            move |args: HelloArgs, cx: &Context| {
                if notify {
                    cx.notify(
                        NotificationLevel::Success,
                        "Hello",
                        format!("{tool} greeted {}", args.name),
                    );
                }
                Ok(ToolOutput::text(format!("Hello, {}!", args.name)))
            },
        )
        .command(
            "hello",
            "Show a greeting notification",
            Some("/hello [name]"),
            |args, _cx| {
                let name = if args.is_empty() {
                    "there".to_owned()
                } else {
                    args.join(" ")
                };
                let greeting = format!("Hello, {name}!");
                Ok(CommandOutput::text(greeting.clone())
                    .with_notification(ExtensionNotification::success("Hello", greeting)))
            },
        )
        .hook("before_prompt", |_payload: Value, _cx| {
            Ok(HookOutput::continue_())
        })
        .hook("after_response", |_payload: Value, _cx| {
            Ok(HookOutput::continue_())
        })
        .context(|_prompt, _cx| {
            Ok(vec![ContextContribution::new(
                "hello-world",
                "The hello-world extension is active.",
            )
            .with_placement(Placement::SystemSuffix)])
        })
        .status(|surface, _cx| {
            Ok(Some(
                StatusContribution::new(surface, "hello")
                    .with_style_role("extension.hello_world.status"),
            ))
        })
        .renderer(tool, |request, _cx| {
            Ok(RenderOutput::new(vec![RenderSegment::styled(
                request.output_text(),
                "extension.hello_world.greeting",
            )]))
        })
}
