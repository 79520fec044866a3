//! `hook NAME HOOK [JSON]`: run a lifecycle hook with a payload.

use clap::Args;
use serde_json::{json, Map, Value};

use super::call::{call_options, events_json, json_object, print_events};
use super::encode;
use super::error::{CliError, JsonInput};
use super::output::{context_line, notification_line, Report};
use super::session::Session;
use super::{progress, GlobalArgs};
use crate::validate::{Disposition, HookName, HookPayload, HookResult};

/// Arguments of `hook`.
#[derive(Debug, Args)]
pub(crate) struct HookArgs {
    /// The extension's name
    name: String,
    /// The hook, such as `before_prompt`
    hook: String,
    /// The payload: a JSON object, or `-` to read it from stdin. The legacy hooks take
    /// `{"prompt"}`, `{"response"}`, `{"name","arguments"?}` and
    /// `{"name","arguments"?,"output","is_error"?}`; others are sent as given
    #[arg(default_value = "{}")]
    payload: String,
    /// Deadline (`30s`, `500ms`, `2m`; a plain number is milliseconds); the request is
    /// cancelled after it [default: 30s]
    #[arg(long, value_name = "DURATION", value_parser = super::duration::parse)]
    timeout: Option<std::time::Duration>,
}

/// Runs `hook`.
pub(crate) fn run(global: &GlobalArgs, args: &HookArgs) -> Result<Report, CliError> {
    let hook = HookName::parse(&args.hook).ok_or_else(|| CliError::UnknownHook {
        name: args.hook.clone(),
    })?;
    let payload = payload(hook, json_object(&args.payload, JsonInput::HookPayload)?)?;
    let session = Session::open(global)?;
    let result = run_hook(&session, args, payload, global.json);
    session.finish(result)
}

fn run_hook(
    session: &Session,
    args: &HookArgs,
    payload: HookPayload,
    json: bool,
) -> Result<Report, CliError> {
    let hook = payload.hook();
    super::names::check(session, &args.name, super::names::Kind::Hook, hook.as_str())?;
    let extension = session.start(&args.name)?;
    let payload_json = payload.to_value();
    let pending = extension.run_hook_async(payload, call_options(args.timeout));
    let (outcome, events) = progress::wait(session.host(), &args.name, pending);
    print_events(&events, json);
    let output = outcome.map_err(|error| CliError::Call {
        extension: args.name.clone(),
        target: format!("hook `{}`", args.hook),
        error: Box::new(error),
    })?;
    Ok(Report::new(
        json!({
            "extension": args.name,
            "hook": args.hook,
            "payload": payload_json,
            "output": encode::hook_output(&output),
            "events": events_json(&events),
        }),
        hook_text(&output, ""),
    ))
}

/// The typed payload of `hook` from a JSON object: the four legacy hooks are checked
/// member by member (section 1.4), the typed API 0.2 hooks as closed payloads
/// (SUPPLEMENT "API 0.2 typed hooks"); every other hook's payload is sent as given.
pub(crate) fn payload(hook: HookName, value: Value) -> Result<HookPayload, CliError> {
    let Value::Object(map) = value else {
        return Err(CliError::NotAnObject {
            input: JsonInput::HookPayload,
        });
    };
    let fields = Fields { hook, map: &map };
    Ok(match hook {
        HookName::BeforePrompt => HookPayload::BeforePrompt {
            prompt: fields.string("prompt")?,
        },
        HookName::AfterResponse => HookPayload::AfterResponse {
            response: fields.string("response")?,
        },
        HookName::BeforeToolCall => HookPayload::BeforeToolCall {
            name: fields.string("name")?,
            arguments: fields.arguments()?,
        },
        HookName::AfterToolCall => HookPayload::AfterToolCall {
            name: fields.string("name")?,
            arguments: fields.arguments()?,
            output: fields.string("output")?,
            is_error: fields.is_error()?,
        },
        HookName::ProviderRetry => HookPayload::ProviderRetry(fields.typed(
            "run_id, attempt, max_attempts, operation, host_delay_ms and kind, nothing else",
        )?),
        HookName::BeforePersistence => HookPayload::BeforePersistence(fields.typed(
            "run_id, model, protocol, stop_reason, text_bytes, tool_call_count, \
             reasoning_part_count and media_part_count, nothing else",
        )?),
        HookName::PostMutation => HookPayload::PostMutation(fields.typed(
            "mutation_id, kind, affected_resources (at most 32), generation (at least 1) \
             and state, nothing else",
        )?),
        _ => HookPayload::Other {
            hook,
            payload: Value::Object(map),
        },
    })
}

/// Typed access to a legacy hook payload's members.
struct Fields<'a> {
    hook: HookName,
    map: &'a Map<String, Value>,
}

impl Fields<'_> {
    /// The whole payload as a typed hook's closed payload, `expected` naming its members.
    fn typed<T: serde::de::DeserializeOwned>(&self, expected: &'static str) -> Result<T, CliError> {
        serde_json::from_value(Value::Object(self.map.clone()))
            .map_err(|_| self.wrong("payload", expected))
    }

    fn wrong(&self, member: &'static str, expected: &'static str) -> CliError {
        CliError::HookPayload {
            hook: self.hook,
            member,
            expected,
        }
    }

    fn string(&self, member: &'static str) -> Result<String, CliError> {
        match self.map.get(member) {
            Some(Value::String(s)) => Ok(s.clone()),
            _ => Err(self.wrong(member, "a string")),
        }
    }

    /// `arguments`: an object, `{}` when absent.
    fn arguments(&self) -> Result<Value, CliError> {
        match self.map.get("arguments") {
            None => Ok(json!({})),
            Some(value @ Value::Object(_)) => Ok(value.clone()),
            Some(_) => Err(self.wrong("arguments", "an object")),
        }
    }

    /// `is_error`: a boolean, false when absent.
    fn is_error(&self) -> Result<bool, CliError> {
        match self.map.get("is_error") {
            None => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(self.wrong("is_error", "a boolean")),
        }
    }
}

/// The disposition, then context and notifications, each line prefixed.
pub(crate) fn hook_text(output: &HookResult, prefix: &str) -> String {
    let disposition = match &output.disposition {
        Disposition::Continue => "continue".to_owned(),
        Disposition::Deny { reason: Some(r) } => format!("deny ({r})"),
        Disposition::Deny { reason: None } => "deny".to_owned(),
    };
    let mut lines = vec![format!("{prefix}disposition: {disposition}")];
    if output.denial_ignored() {
        lines.push(format!(
            "{prefix}  ({} does not honour deny; the operation continues)",
            output.hook
        ));
    }
    for c in &output.context {
        lines.push(format!("{prefix}context {}", context_line(c)));
    }
    for n in &output.notifications {
        lines.push(format!("{prefix}notification {}", notification_line(n)));
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legacy_payloads_are_typed_and_checked() {
        let p = payload(HookName::BeforePrompt, json!({"prompt": "hi"})).unwrap();
        assert_eq!(
            p,
            HookPayload::BeforePrompt {
                prompt: "hi".into()
            }
        );
        let p = payload(
            HookName::AfterToolCall,
            json!({"name": "t", "output": "o", "is_error": true}),
        )
        .unwrap();
        assert_eq!(p.to_value()["arguments"], json!({}));
        assert_eq!(p.to_value()["is_error"], json!(true));
        let e = payload(HookName::BeforePrompt, json!({})).unwrap_err();
        assert_eq!(e.code(), "usage.hook_payload");
        let e = payload(
            HookName::BeforeToolCall,
            json!({"name": "t", "arguments": 3}),
        )
        .unwrap_err();
        assert!(e.to_string().contains("`arguments`"), "{e}");
    }

    #[test]
    fn the_typed_hooks_take_their_closed_payloads_and_others_pass_as_given() {
        let e = payload(HookName::PostMutation, json!({"paths": ["a"]})).unwrap_err();
        assert!(e.to_string().contains("mutation_id"), "{e}");
        let mutation = json!({"mutation_id": "m-1", "kind": "resource",
            "affected_resources": ["r-1"], "generation": 1, "state": "committed"});
        let p = payload(HookName::PostMutation, mutation.clone()).unwrap();
        assert_eq!(p.to_value(), mutation);
        let p = payload(HookName::SessionCompact, json!({"kind": "compacted"})).unwrap();
        assert_eq!(p.hook(), HookName::SessionCompact);
        assert_eq!(p.to_value(), json!({"kind": "compacted"}));
    }
}
