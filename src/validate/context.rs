//! Prompt context contributions: the `context/collect` result (section 1.5), the
//! `context/contribution` notification (section 2.3), and the `context` member of command
//! and hook results (sections 1.3, 1.4).
//!
//! `label` and `content` are required strings; `placement` is optional and defaults to
//! `prompt_suffix`. A `context/collect` result of `null` is read as an empty list, the same
//! "nothing to contribute" that `status/collect` spells with `null`.

use serde_json::Value;

use super::error::{Expected, ResultError};
use super::field::{
    as_object, optional_keyword, optional_list, required_string, Keyword, Object, ResultPath,
};
use super::path::Path;

/// Where a contribution goes in the prompt.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Placement {
    /// Before the system prompt.
    SystemPrefix,
    /// After the system prompt.
    SystemSuffix,
    /// Before the user's prompt.
    PromptPrefix,
    /// After the user's prompt (the default).
    #[default]
    PromptSuffix,
}

impl Placement {
    /// The wire name, such as `"system_suffix"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Placement::SystemPrefix => "system_prefix",
            Placement::SystemSuffix => "system_suffix",
            Placement::PromptPrefix => "prompt_prefix",
            Placement::PromptSuffix => "prompt_suffix",
        }
    }
}

impl Keyword for Placement {
    const ALL: &'static [Placement] = &[
        Placement::SystemPrefix,
        Placement::SystemSuffix,
        Placement::PromptPrefix,
        Placement::PromptSuffix,
    ];
    const NAMES: &'static [&'static str] = &[
        "system_prefix",
        "system_suffix",
        "prompt_prefix",
        "prompt_suffix",
    ];
}

/// One prompt context contribution.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContextContribution {
    /// A short label naming the contribution's source.
    pub label: String,
    /// The text added to the prompt.
    pub content: String,
    /// Where it goes.
    pub placement: Placement,
}

#[doc(hidden)]
/// Validates the `result` of `context/collect`: an array of contributions, or `null`.
pub fn context_collect(result: &Value) -> Result<Vec<ContextContribution>, ResultError> {
    if result.is_null() {
        return Ok(Vec::new());
    }
    let root = Path::Root;
    result
        .as_array()
        .ok_or_else(|| root.wrong_type(Expected::ArrayOrNull))?
        .iter()
        .enumerate()
        .map(|(index, item)| contribution(item, &root.index(index)))
        .collect()
}

#[doc(hidden)]
/// Validates the `params` of a `context/contribution` notification (section 2.3).
pub fn context_contribution(params: &Value) -> Result<ContextContribution, ResultError> {
    contribution(params, &Path::Root)
}

/// One contribution at `path`.
pub(crate) fn contribution(value: &Value, path: &Path) -> Result<ContextContribution, ResultError> {
    let object = as_object(value, path)?;
    Ok(ContextContribution {
        label: required_string(object, "label", path)?,
        content: required_string(object, "content", path)?,
        placement: optional_keyword(object, "placement", path, Placement::PromptSuffix)?,
    })
}

/// The optional `context` member of a command or hook result, empty when absent.
pub(crate) fn context_member(
    object: &Object,
    path: &Path,
) -> Result<Vec<ContextContribution>, ResultError> {
    optional_list(object, "context", path, contribution)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::validate::error::ResultErrorKind;

    #[test]
    fn reference_example_context_collect() {
        let result = json!([
            {
                "label": "hello-world",
                "content": "The hello-world extension is active.",
                "placement": "system_suffix"
            }
        ]);
        assert_eq!(
            context_collect(&result).unwrap(),
            vec![ContextContribution {
                label: "hello-world".into(),
                content: "The hello-world extension is active.".into(),
                placement: Placement::SystemSuffix,
            }]
        );
    }

    #[test]
    fn reference_example_context_contribution() {
        let params = json!({
            "label": "file-watcher",
            "content": "src/main.rs was modified at 14:32.",
            "placement": "system_suffix"
        });
        let contribution = context_contribution(&params).unwrap();
        assert_eq!(contribution.label, "file-watcher");
        assert_eq!(contribution.placement, Placement::SystemSuffix);
    }

    #[test]
    fn placement_defaults_to_prompt_suffix() {
        let value = json!([{"label": "a", "content": "b"}, {"label": "a", "content": "b", "placement": null}]);
        let list = context_collect(&value).unwrap();
        assert!(list.iter().all(|c| c.placement == Placement::PromptSuffix));
    }

    #[test]
    fn every_placement_parses_and_round_trips() {
        for (placement, name) in Placement::ALL.iter().zip(Placement::NAMES) {
            let value = json!({"label": "l", "content": "c", "placement": name});
            assert_eq!(context_contribution(&value).unwrap().placement, *placement);
            assert_eq!(placement.as_str(), *name);
        }
    }

    #[test]
    fn null_result_is_empty() {
        assert_eq!(context_collect(&Value::Null).unwrap(), Vec::new());
    }

    #[test]
    fn errors_name_the_element() {
        let error = context_collect(&json!([{"label": "a", "content": "b"}, {"label": "a", "content": "b", "placement": "footer"}]))
            .unwrap_err();
        assert_eq!(error.path(), "[1].placement");
        assert!(matches!(error.kind(), ResultErrorKind::UnknownValue { .. }));
        let error = context_collect(&json!([{"label": "a"}])).unwrap_err();
        assert_eq!(error.path(), "[0].content");
        assert_eq!(error.kind(), &ResultErrorKind::Missing);
        let error = context_collect(&json!({"label": "a", "content": "b"})).unwrap_err();
        assert_eq!(error.path(), "");
        assert_eq!(
            error.kind(),
            &ResultErrorKind::WrongType {
                expected: Expected::ArrayOrNull
            }
        );
    }
}
