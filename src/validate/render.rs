//! The result of `tool/render` (section 1.7): styled text segments.
//!
//! `segments` is a required array; each segment has a required `text` and an optional
//! `style_role` (`null` means unstyled).

use serde_json::Value;

use super::error::ResultError;
use super::field::{as_array, as_object, optional_string, required, required_string};
use super::path::Path;

/// One styled run of text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RenderSegment {
    /// The text.
    pub text: String,
    /// Its semantic style role, if styled.
    pub style_role: Option<String>,
}

/// A validated `tool/render` result.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RenderOutput {
    /// The segments, in display order.
    pub segments: Vec<RenderSegment>,
}

impl RenderOutput {
    /// The segments' text concatenated, without styles.
    pub fn plain_text(&self) -> String {
        self.segments.iter().map(|s| s.text.as_str()).collect()
    }
}

#[doc(hidden)]
/// Validates the `result` of one `tool/render`.
pub fn render_output(result: &Value) -> Result<RenderOutput, ResultError> {
    let root = Path::Root;
    let object = as_object(result, &root)?;
    let segments_path = root.key("segments");
    let segments = as_array(required(object, "segments", &root)?, &segments_path)?
        .iter()
        .enumerate()
        .map(|(index, item)| {
            let path = segments_path.index(index);
            let segment = as_object(item, &path)?;
            Ok(RenderSegment {
                text: required_string(segment, "text", &path)?,
                style_role: optional_string(segment, "style_role", &path)?,
            })
        })
        .collect::<Result<_, ResultError>>()?;
    Ok(RenderOutput { segments })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::validate::error::ResultErrorKind;

    #[test]
    fn reference_example_tool_render() {
        let result = json!({
            "segments": [
                { "text": "git · clean", "style_role": "extension.git_tools.clean" },
                { "text": "\n", "style_role": null },
                { "text": "...", "style_role": "extension.git_tools.detail" }
            ]
        });
        let output = render_output(&result).unwrap();
        assert_eq!(
            output.segments,
            vec![
                RenderSegment {
                    text: "git · clean".into(),
                    style_role: Some("extension.git_tools.clean".into())
                },
                RenderSegment {
                    text: "\n".into(),
                    style_role: None
                },
                RenderSegment {
                    text: "...".into(),
                    style_role: Some("extension.git_tools.detail".into())
                },
            ]
        );
        assert_eq!(output.plain_text(), "git · clean\n...");
    }

    #[test]
    fn segments_are_required_and_checked() {
        let error = render_output(&json!({})).unwrap_err();
        assert_eq!(error.path(), "segments");
        assert_eq!(error.kind(), &ResultErrorKind::Missing);
        let error =
            render_output(&json!({"segments": [{"text": "a"}, {"style_role": "x"}]})).unwrap_err();
        assert_eq!(error.path(), "segments[1].text");
        let error =
            render_output(&json!({"segments": [{"text": "a", "style_role": 3}]})).unwrap_err();
        assert_eq!(error.path(), "segments[0].style_role");
        assert_eq!(
            render_output(&json!({"segments": []})).unwrap(),
            RenderOutput::default()
        );
    }
}
