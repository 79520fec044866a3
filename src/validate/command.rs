//! The result of `command/execute` (section 1.3) and user-visible notifications
//! (section 2.1, and the `notifications` member of command and hook results).
//!
//! Command results: the result must be an object; `text` is an optional string,
//! `notifications` and `context` are optional arrays, empty when absent. An empty object
//! is a valid "done, nothing to show".
//!
//! Notifications: `message` is a required string, `title` an optional string, `level`
//! optional and `info` when absent.

use serde_json::Value;

use super::context::{context_member, ContextContribution};
use super::error::ResultError;
use super::field::{
    as_object, optional_keyword, optional_list, optional_string, required_string, Keyword, Object,
};
use super::path::Path;

/// The severity of a notification.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum NotificationLevel {
    /// Informational (the default).
    #[default]
    Info,
    /// Something succeeded.
    Success,
    /// Something needs attention.
    Warning,
    /// Something failed.
    Error,
}

impl NotificationLevel {
    /// The wire name, such as `"success"`.
    pub fn as_str(self) -> &'static str {
        match self {
            NotificationLevel::Info => "info",
            NotificationLevel::Success => "success",
            NotificationLevel::Warning => "warning",
            NotificationLevel::Error => "error",
        }
    }
}

impl Keyword for NotificationLevel {
    const ALL: &'static [NotificationLevel] = &[
        NotificationLevel::Info,
        NotificationLevel::Success,
        NotificationLevel::Warning,
        NotificationLevel::Error,
    ];
    const NAMES: &'static [&'static str] = &["info", "success", "warning", "error"];
}

/// A user-visible notification.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Notification {
    /// Its severity.
    pub level: NotificationLevel,
    /// An optional title.
    pub title: Option<String>,
    /// The message.
    pub message: String,
}

/// A validated `command/execute` result.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CommandResult {
    /// Text to show the person, if any.
    pub text: Option<String>,
    /// Notifications to raise, in order.
    pub notifications: Vec<Notification>,
    /// Prompt context to add, in order.
    pub context: Vec<ContextContribution>,
}

#[doc(hidden)]
/// Validates the `result` of one `command/execute`.
pub fn command_output(result: &Value) -> Result<CommandResult, ResultError> {
    let root = Path::Root;
    let object = as_object(result, &root)?;
    Ok(CommandResult {
        text: optional_string(object, "text", &root)?,
        notifications: notifications_member(object, &root)?,
        context: context_member(object, &root)?,
    })
}

#[doc(hidden)]
/// Validates the `params` of a `notification` notification (section 2.1).
pub fn notification(params: &Value) -> Result<Notification, ResultError> {
    parse_notification(params, &Path::Root)
}

/// One notification at `path`.
fn parse_notification(value: &Value, path: &Path) -> Result<Notification, ResultError> {
    let object = as_object(value, path)?;
    Ok(Notification {
        level: optional_keyword(object, "level", path, NotificationLevel::Info)?,
        title: optional_string(object, "title", path)?,
        message: required_string(object, "message", path)?,
    })
}

/// The optional `notifications` member of a command or hook result, empty when absent.
pub(crate) fn notifications_member(
    object: &Object,
    path: &Path,
) -> Result<Vec<Notification>, ResultError> {
    optional_list(object, "notifications", path, parse_notification)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::validate::error::{Expected, ResultErrorKind};

    #[test]
    fn reference_example_command_execute() {
        let result = json!({
            "text": "Checkpoint preview · release-v2\nmain · clean\n\n...",
            "notifications": [
                {
                    "level": "info",
                    "title": "Read-only checkpoint",
                    "message": "No commit or filesystem mutation was performed."
                }
            ],
            "context": []
        });
        assert_eq!(
            command_output(&result).unwrap(),
            CommandResult {
                text: Some("Checkpoint preview · release-v2\nmain · clean\n\n...".into()),
                notifications: vec![Notification {
                    level: NotificationLevel::Info,
                    title: Some("Read-only checkpoint".into()),
                    message: "No commit or filesystem mutation was performed.".into(),
                }],
                context: Vec::new(),
            }
        );
    }

    #[test]
    fn reference_example_notification() {
        let params = json!({
            "level": "success",
            "title": "Hello",
            "message": "hello_world greeted tinkerer"
        });
        assert_eq!(
            notification(&params).unwrap(),
            Notification {
                level: NotificationLevel::Success,
                title: Some("Hello".into()),
                message: "hello_world greeted tinkerer".into(),
            }
        );
    }

    #[test]
    fn every_member_of_a_command_result_is_optional() {
        assert_eq!(
            command_output(&json!({})).unwrap(),
            CommandResult::default()
        );
        assert_eq!(
            command_output(&json!({"text": null, "notifications": null, "context": null})).unwrap(),
            CommandResult::default()
        );
        let error = command_output(&Value::Null).unwrap_err();
        assert_eq!(
            error.kind(),
            &ResultErrorKind::WrongType {
                expected: Expected::Object
            }
        );
    }

    #[test]
    fn level_defaults_to_info_and_is_closed() {
        let parsed = notification(&json!({"message": "m"})).unwrap();
        assert_eq!(parsed.level, NotificationLevel::Info);
        assert_eq!(parsed.title, None);
        let error = notification(&json!({"message": "m", "level": "debug"})).unwrap_err();
        assert_eq!(error.path(), "level");
        for (level, name) in NotificationLevel::ALL.iter().zip(NotificationLevel::NAMES) {
            assert_eq!(level.as_str(), *name);
            assert_eq!(
                notification(&json!({"message": "m", "level": name}))
                    .unwrap()
                    .level,
                *level
            );
        }
    }

    #[test]
    fn errors_name_the_nested_field() {
        let error = command_output(&json!({"notifications": [{"message": "a"}, {"title": "t"}]}))
            .unwrap_err();
        assert_eq!(error.path(), "notifications[1].message");
        let error =
            command_output(&json!({"context": [{"label": 1, "content": "c"}]})).unwrap_err();
        assert_eq!(error.path(), "context[0].label");
        let error = command_output(&json!({"text": ["no"]})).unwrap_err();
        assert_eq!(error.path(), "text");
        let error = command_output(&json!({"notifications": {}})).unwrap_err();
        assert_eq!(error.path(), "notifications");
    }
}
