//! `hook/run` results and payloads (sections 1.4 and 1.4b).

use super::*;

// ---------------------------------------------------------------------------
// hook/run (sections 1.4 and 1.4b).
// ---------------------------------------------------------------------------

fn deny(reason: &str) -> Value {
    json!({"disposition": {"action": "deny", "reason": reason}})
}

#[test]
fn deny_is_honoured_only_where_meaningful() {
    for hook in HookName::ALL {
        let outcome = hook_output(&deny("no"), hook);
        if hook.is_model_turn() {
            assert_eq!(
                expect_error(outcome, "disposition.action"),
                ResultErrorKind::DenyNotAllowed { hook }
            );
            continue;
        }
        let output = outcome.unwrap();
        let denied = Disposition::Deny {
            reason: Some("no".into()),
        };
        assert_eq!(output.disposition, denied, "{hook}");
        if hook.is_compaction() {
            // A compaction hook's deny counts as cancel (section 1.4b).
            assert_eq!(output.session_operation, Some(SessionOperation::Cancel));
            assert!(!output.denial_ignored(), "{hook}");
            continue;
        }
        if matches!(hook, HookName::BeforePrompt | HookName::BeforeToolCall) {
            assert_eq!(output.effective_disposition(), &denied);
            assert!(!output.denial_ignored());
        } else {
            assert_eq!(
                output.effective_disposition(),
                &Disposition::Continue,
                "{hook}"
            );
            assert!(output.denial_ignored(), "{hook}");
        }
    }
}

#[test]
fn deny_reason_is_optional() {
    let output = hook_output(
        &json!({"disposition": {"action": "deny"}}),
        HookName::BeforeToolCall,
    )
    .unwrap();
    assert_eq!(output.disposition, Disposition::Deny { reason: None });
}

#[test]
fn hook_envelope_rules() {
    let cases: Vec<(Value, HookName, &str, ResultErrorKind)> = vec![
        (
            json!({}),
            HookName::BeforePrompt,
            "disposition",
            ResultErrorKind::Missing,
        ),
        (
            json!({"disposition": "continue"}),
            HookName::BeforePrompt,
            "disposition",
            ResultErrorKind::WrongType {
                expected: Expected::Object,
            },
        ),
        (
            json!({"disposition": {}}),
            HookName::BeforePrompt,
            "disposition.action",
            ResultErrorKind::Missing,
        ),
        (
            json!({"disposition": {"action": "skip"}}),
            HookName::AfterResponse,
            "disposition.action",
            ResultErrorKind::UnknownValue {
                found: "skip".into(),
                allowed: &["continue", "deny"],
            },
        ),
        (
            json!({"disposition": {"action": "deny", "reason": 3}}),
            HookName::BeforePrompt,
            "disposition.reason",
            ResultErrorKind::WrongType {
                expected: Expected::String,
            },
        ),
        (
            json!({"disposition": {"action": "continue"}, "context": [{"label": "l", "content": "c"}]}),
            HookName::ModelTurnStart,
            "context",
            ResultErrorKind::ContextNotAllowed {
                hook: HookName::ModelTurnStart,
            },
        ),
        (
            json!({"disposition": {"action": "continue"}, "session_operation": {"action": "cancel"}}),
            HookName::ModelTurnEnd,
            "session_operation.action",
            ResultErrorKind::SessionOperationNotAllowed {
                hook: HookName::ModelTurnEnd,
                action: "cancel",
            },
        ),
        (
            json!({"disposition": {"action": "continue"}, "session_operation": {"action": "replace_compaction", "summary": "s"}}),
            HookName::ModelTurnStart,
            "session_operation.action",
            ResultErrorKind::SessionOperationNotAllowed {
                hook: HookName::ModelTurnStart,
                action: "replace_compaction",
            },
        ),
        (
            json!({"disposition": {"action": "continue"}, "session_operation": {"action": "cancel"}}),
            HookName::BeforePrompt,
            "session_operation.action",
            ResultErrorKind::SessionOperationNotAllowed {
                hook: HookName::BeforePrompt,
                action: "cancel",
            },
        ),
        (
            json!({"disposition": {"action": "continue"}, "session_operation": {"action": "pause"}}),
            HookName::ModelTurnStart,
            "session_operation.action",
            ResultErrorKind::UnknownValue {
                found: "pause".into(),
                allowed: &["continue", "cancel", "replace_compaction"],
            },
        ),
        (
            json!({"disposition": {"action": "continue"}, "notifications": [{"level": "info"}]}),
            HookName::ModelTurnEnd,
            "notifications[0].message",
            ResultErrorKind::Missing,
        ),
    ];
    for (result, hook, path, kind) in cases {
        let error = hook_output(&result, hook).expect_err(path);
        assert_eq!(error.path(), path, "{error}");
        assert_eq!(error.kind(), &kind, "{error}");
    }
}

#[test]
fn model_turn_hooks_accept_empty_context_and_notifications() {
    let result = json!({
        "disposition": {"action": "continue"},
        "context": [],
        "notifications": [{"level": "warning", "message": "slow turn"}]
    });
    let output = hook_output(&result, HookName::ModelTurnEnd).unwrap();
    assert_eq!(output.session_operation, None);
    assert_eq!(output.notifications[0].level, NotificationLevel::Warning);
}

#[test]
fn legacy_payloads_serialize_as_section_1_4_shows() {
    let cases = [
        (
            HookPayload::BeforePrompt { prompt: "p".into() },
            "before_prompt",
            json!({"prompt": "p"}),
        ),
        (
            HookPayload::AfterResponse {
                response: "r".into(),
            },
            "after_response",
            json!({"response": "r"}),
        ),
        (
            HookPayload::BeforeToolCall {
                name: "git_status".into(),
                arguments: json!({"max_entries": 80}),
            },
            "before_tool_call",
            json!({"name": "git_status", "arguments": {"max_entries": 80}}),
        ),
        (
            HookPayload::AfterToolCall {
                name: "git_status".into(),
                arguments: json!({}),
                output: "branch=main".into(),
                is_error: false,
            },
            "after_tool_call",
            json!({"name": "git_status", "arguments": {}, "output": "branch=main", "is_error": false}),
        ),
        (
            HookPayload::Other {
                hook: HookName::PostMutation,
                payload: json!({"paths": ["a"]}),
            },
            "post_mutation",
            json!({"paths": ["a"]}),
        ),
    ];
    for (payload, hook, expected) in cases {
        let params = hook_run_params(&payload, json!({"host": {}}));
        assert_eq!(
            params,
            json!({"hook": hook, "payload": expected, "context": {"host": {}}})
        );
    }
}
