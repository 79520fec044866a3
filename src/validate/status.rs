//! Status contributions: the `status/collect` result (section 1.6) and the
//! `status/contribution` notification (section 2.4).
//!
//! `surface` and `text` are required; `style_role` is an optional string; `priority` is an
//! optional signed integer, 0 when absent.

use serde_json::Value;

use crate::manifest::UiSurface;

use super::error::{excerpt, Expected, ResultError, ResultErrorKind};
use super::field::{
    as_i64, as_object, as_str, member, optional_string, required, required_string, ResultPath,
};
use super::path::Path;

/// The names of [`UiSurface`] on the wire.
const SURFACE_NAMES: &[&str] = &["status", "header", "footer"];

/// One status, header or footer contribution.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatusContribution {
    /// The surface it belongs on.
    pub surface: UiSurface,
    /// The text to show.
    pub text: String,
    /// An optional semantic style role, such as `extension.hello_world.status`.
    pub style_role: Option<String>,
    /// Ordering among contributions (0 when absent).
    pub priority: i64,
}

#[doc(hidden)]
/// Validates the `result` of a `status/collect` for `requested`: `null` contributes
/// nothing; otherwise the contribution's surface must be the requested one.
pub fn status_collect(
    result: &Value,
    requested: UiSurface,
) -> Result<Option<StatusContribution>, ResultError> {
    if result.is_null() {
        return Ok(None);
    }
    if !result.is_object() {
        return Err(Path::Root.wrong_type(Expected::ObjectOrNull));
    }
    let contribution = parse_status(result)?;
    if contribution.surface != requested {
        return Err(Path::Root
            .key("surface")
            .error(ResultErrorKind::SurfaceMismatch {
                requested,
                found: contribution.surface,
            }));
    }
    Ok(Some(contribution))
}

#[doc(hidden)]
/// Validates the `params` of a `status/contribution` notification (section 2.4). Whether
/// the extension declared that surface is the caller's check.
pub fn status_contribution(params: &Value) -> Result<StatusContribution, ResultError> {
    parse_status(params)
}

/// One contribution at the root.
fn parse_status(value: &Value) -> Result<StatusContribution, ResultError> {
    let root = Path::Root;
    let object = as_object(value, &root)?;
    let surface_path = root.key("surface");
    let surface_name = as_str(required(object, "surface", &root)?, &surface_path)?;
    let surface = UiSurface::parse(surface_name).ok_or_else(|| {
        surface_path.error(ResultErrorKind::UnknownValue {
            found: excerpt(surface_name),
            allowed: SURFACE_NAMES,
        })
    })?;
    let priority = match member(object, "priority") {
        Some(value) => as_i64(value, &root.key("priority"))?,
        None => 0,
    };
    Ok(StatusContribution {
        surface,
        text: required_string(object, "text", &root)?,
        style_role: optional_string(object, "style_role", &root)?,
        priority,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn reference_example_status_collect() {
        let result = json!({
            "surface": "status",
            "text": "hello",
            "style_role": "extension.hello_world.status",
            "priority": 0
        });
        assert_eq!(
            status_collect(&result, UiSurface::Status).unwrap(),
            Some(StatusContribution {
                surface: UiSurface::Status,
                text: "hello".into(),
                style_role: Some("extension.hello_world.status".into()),
                priority: 0,
            })
        );
    }

    #[test]
    fn reference_example_status_contribution() {
        let params = json!({
            "surface": "status",
            "text": "watching src/",
            "style_role": "extension.watcher.status",
            "priority": 10
        });
        let contribution = status_contribution(&params).unwrap();
        assert_eq!(contribution.text, "watching src/");
        assert_eq!(contribution.priority, 10);
    }

    #[test]
    fn null_contributes_nothing() {
        assert_eq!(
            status_collect(&Value::Null, UiSurface::Footer).unwrap(),
            None
        );
    }

    #[test]
    fn surface_must_match_the_request() {
        let result = json!({"surface": "header", "text": "x"});
        let error = status_collect(&result, UiSurface::Footer).unwrap_err();
        assert_eq!(error.path(), "surface");
        assert_eq!(
            error.kind(),
            &ResultErrorKind::SurfaceMismatch {
                requested: UiSurface::Footer,
                found: UiSurface::Header
            }
        );
        let parsed = status_collect(&result, UiSurface::Header).unwrap().unwrap();
        assert_eq!(parsed.priority, 0);
        assert_eq!(parsed.style_role, None);
    }

    #[test]
    fn surface_and_priority_are_checked() {
        let error = status_contribution(&json!({"surface": "sidebar", "text": "x"})).unwrap_err();
        assert_eq!(error.path(), "surface");
        assert!(matches!(error.kind(), ResultErrorKind::UnknownValue { .. }));
        let error = status_contribution(&json!({"text": "x"})).unwrap_err();
        assert_eq!(error.path(), "surface");
        let error =
            status_contribution(&json!({"surface": "status", "text": "x", "priority": 1.5}))
                .unwrap_err();
        assert_eq!(error.path(), "priority");
        let parsed =
            status_contribution(&json!({"surface": "status", "text": "x", "priority": -3}))
                .unwrap();
        assert_eq!(parsed.priority, -3);
        let error = status_contribution(&json!({"surface": "status"})).unwrap_err();
        assert_eq!(error.path(), "text");
    }
}
