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
    Extension::new()
        .tool(
            "hello_world",
            "Greet someone from an executable extension",
            json!({
                "type": "object",
                "properties": {"name": {"type": "string"}},
                "required": ["name"],
                "additionalProperties": false
            }),
            |args: HelloArgs, cx: &Context| {
                cx.notify(
                    NotificationLevel::Success,
                    "Hello",
                    format!("hello_world greeted {}", args.name),
                );
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
        .renderer("hello_world", |request, _cx| {
            Ok(RenderOutput::new(vec![RenderSegment::styled(
                request.output_text(),
                "extension.hello_world.greeting",
            )]))
        })
}
