//! `octet-host replay FILE`: re-runs the calls, commands and hooks of a session that
//! `octet-host ui` recorded (`GET /api/recording`) against the extensions as they are
//! now, and prints where an outcome differs from the recorded one; exit 1 when any
//! does. A regression check an author runs after a change.
//!
//! The recording's `start` lines start the extensions again (with the features and
//! services they named); every call-shaped line (`call`, `command`, `hook`, `context`,
//! `status_collect`, `render`, `menu`, `menu_action`) is sent again, one at a time,
//! and its outcome (`ok` and `output`, or the error's `code`) is compared with the
//! `result` line the recording holds for it. Every other line (answers to questions,
//! cancellations, `stop`, `reload`) is not replayed.

use std::io::BufRead;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

use super::engine;
use super::hub::Hub;
use crate::cli::output;
use crate::cli::GlobalArgs;

/// How long one replayed call may take before it counts as a difference.
const CALL_TIMEOUT: Duration = Duration::from_secs(300);

/// `octet-host replay`'s own arguments.
#[derive(Debug, clap::Args)]
pub(crate) struct ReplayArgs {
    /// A session recorded by `octet-host ui` (its "Download the session" link)
    file: PathBuf,
}

/// One call of the recording and the outcome it had.
struct Recorded {
    line: Value,
    outcome: Option<Value>,
}

/// Replays `args.file`; 0 when every outcome is the same, 1 when one differs, 2 when
/// the file cannot be read.
pub(crate) fn run(global: &GlobalArgs, args: &ReplayArgs) -> i32 {
    let (starts, calls) = match read(&args.file) {
        Ok(read) => read,
        Err(message) => {
            output::eprint_line(&format!("error: replay: {message}"));
            return 2;
        }
    };
    let hub = Arc::new(Hub::default());
    let options = crate::cli::serve_options(global).no_input();
    let engine = match engine::start(options, hub.clone()) {
        Ok(engine) => engine,
        Err(e) => {
            output::eprint_line(&format!("error: replay: {e}"));
            return 1;
        }
    };
    let lines = hub.subscribe();
    let send = |mut line: Value| -> Option<Value> {
        let (id, reply) = hub.expect_reply();
        line["id"] = Value::from(id);
        let mut text = line.to_string();
        text.push('\n');
        engine.input.send(text.into_bytes()).ok()?;
        reply.recv_timeout(CALL_TIMEOUT).ok()
    };
    let mut differ = Vec::new();
    for start in starts {
        let extension = start["extension"].clone();
        match send(start) {
            Some(reply) if reply["ok"] == true => {}
            reply => differ.push(json!({
                "what": format!("start {extension}"),
                "why": format!("the start failed now: {}", reply.map_or(Value::Null, |r| r["error"].clone())),
            })),
        }
    }
    let mut same = 0;
    for recorded in &calls {
        let call_id = recorded.line["call_id"].clone();
        let what = describe(&recorded.line);
        let now = match send(recorded.line.clone()) {
            Some(reply) if reply["ok"] != true => {
                Some(json!({"ok": false, "error": reply["error"]}))
            }
            Some(_) => wait_result(&lines, &call_id),
            None => None,
        };
        let Some(now) = now else {
            differ.push(
                json!({"what": what, "why": "no outcome now (serve ended or the call timed out)"}),
            );
            continue;
        };
        match &recorded.outcome {
            None => {
                differ.push(json!({"what": what, "why": "the recording holds no outcome for it"}))
            }
            Some(before) => match difference(&outcome(before), &outcome(&now), "") {
                None => same += 1,
                Some(why) => differ.push(json!({"what": what, "why": why})),
            },
        }
    }
    drop(engine.input);
    let _ = engine.thread.join();
    for entry in &differ {
        output::print_line(&format!(
            "differs: {}: {}",
            entry["what"].as_str().unwrap_or_default(),
            entry["why"].as_str().unwrap_or_default()
        ));
    }
    output::print_line(&format!(
        "{same} of {} outcomes are the same{}",
        calls.len(),
        if differ.is_empty() { "" } else { "; see above" }
    ));
    i32::from(!differ.is_empty())
}

/// The `start` lines and the calls of the recording at `path`, each call with the
/// `result` line that followed it.
fn read(path: &PathBuf) -> Result<(Vec<Value>, Vec<Recorded>), String> {
    let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut starts = Vec::new();
    let mut calls: Vec<Recorded> = Vec::new();
    for (number, line) in std::io::BufReader::new(file).lines().enumerate() {
        let line = line.map_err(|e| format!("{}: {e}", path.display()))?;
        if line.trim().is_empty() {
            continue;
        }
        let value: Value = serde_json::from_str(&line)
            .map_err(|e| format!("{} line {}: not JSON: {e}", path.display(), number + 1))?;
        match value["type"].as_str() {
            Some("control") => {
                let mut control = value["line"].clone();
                if let Some(object) = control.as_object_mut() {
                    object.remove("id");
                }
                match control["op"].as_str() {
                    Some("start") => starts.push(control),
                    Some(op) if crate::serve::CALL_OPS.contains(&op) => calls.push(Recorded {
                        line: control,
                        outcome: None,
                    }),
                    _ => {}
                }
            }
            Some("result") => {
                // The result of the latest call with this id that has none yet.
                if let Some(call) = calls
                    .iter_mut()
                    .rev()
                    .find(|c| c.outcome.is_none() && c.line["call_id"] == value["call_id"])
                {
                    call.outcome = Some(value);
                }
            }
            _ => {}
        }
    }
    if calls.is_empty() {
        return Err(format!("{} holds no call to replay", path.display()));
    }
    Ok((starts, calls))
}

/// The `result` line of `call_id`, from serve's other lines.
fn wait_result(lines: &super::hub::TabLines, call_id: &Value) -> Option<Value> {
    let deadline = std::time::Instant::now() + CALL_TIMEOUT;
    while let Some(left) = deadline.checked_duration_since(std::time::Instant::now()) {
        let line = lines.recv_timeout(left).ok()?;
        let Ok(value) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        if value["type"] == "result" && value["call_id"] == *call_id {
            return Some(value);
        }
    }
    None
}

/// What is compared of a result: `ok`, and the output or the error's code.
fn outcome(result: &Value) -> Value {
    match result["ok"] == true {
        true => json!({"ok": true, "output": result["output"]}),
        false => json!({"ok": false, "error": result["error"]["code"]}),
    }
}

/// `extension tool (call c1)`, for people.
fn describe(line: &Value) -> String {
    let extension = line["extension"].as_str().unwrap_or("?");
    let op = line["op"].as_str().unwrap_or("?");
    let name = ["tool", "name", "hook"]
        .iter()
        .find_map(|key| line[*key].as_str())
        .unwrap_or(op);
    format!("{extension} {op} {name} (call_id {})", line["call_id"])
}

/// Where `before` and `now` first differ, as a JSON pointer and both values.
fn difference(before: &Value, now: &Value, at: &str) -> Option<String> {
    match (before, now) {
        (Value::Object(a), Value::Object(b)) => {
            let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
            keys.sort();
            keys.dedup();
            keys.into_iter().find_map(|key| {
                let (x, y) = (
                    a.get(key).unwrap_or(&Value::Null),
                    b.get(key).unwrap_or(&Value::Null),
                );
                difference(x, y, &format!("{at}/{key}"))
            })
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => a
            .iter()
            .zip(b)
            .enumerate()
            .find_map(|(i, (x, y))| difference(x, y, &format!("{at}/{i}"))),
        _ if before == now => None,
        _ => Some(format!(
            "at {}: recorded {}, now {}",
            if at.is_empty() { "/" } else { at },
            cut(before),
            cut(now)
        )),
    }
}

/// A value's JSON, cut at 200 characters.
fn cut(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(200) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_difference_is_named_by_its_pointer() {
        let before = json!({"ok": true, "output": {"content": [{"type": "text", "text": "a"}]}});
        let now = json!({"ok": true, "output": {"content": [{"type": "text", "text": "b"}]}});
        assert_eq!(
            difference(&before, &now, ""),
            Some(r#"at /output/content/0/text: recorded "a", now "b""#.into())
        );
        assert_eq!(difference(&before, &before, ""), None);
        let failed = outcome(&json!({"ok": false, "error": {"code": "cancelled", "message": "x"}}));
        assert_eq!(failed, json!({"ok": false, "error": "cancelled"}));
    }
}
