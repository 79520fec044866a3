//! `policy/evaluate` and its approval tokens (section 2.9).

use super::*;

#[test]
fn the_default_engine_denies_without_a_token() {
    let owner = owner(1);
    let service = PolicyService {
        engine: &DenyAll,
        approver: None,
        approvals: None,
    };
    let answer = policy_evaluate(
        &params(2, intent(), None),
        &ctx(2, &owner),
        &features(&[Feature::PolicyIntents]),
        service,
        Instant::now(),
    )
    .unwrap();
    assert_eq!(decision(&answer), "deny");
}

#[test]
fn without_policy_intents_the_method_does_not_exist() {
    let owner = owner(1);
    let service = PolicyService {
        engine: &DenyAll,
        approver: None,
        approvals: None,
    };
    let error = policy_evaluate(
        &params(2, intent(), None),
        &ctx(2, &owner),
        &features(&[Feature::Approvals]),
        service,
        Instant::now(),
    )
    .unwrap_err();
    assert_eq!(error, ServiceError::NotNegotiated);
    assert_eq!(error.code(), -32601);
}

#[test]
fn allow_and_deny_never_carry_a_token_even_with_an_approver() {
    let owner = owner(1);
    for (rule, expected) in [(Decision::Allow, "allow"), (Decision::Deny, "deny")] {
        let mut bench = Bench::new(rule);
        let answer = bench
            .evaluate(&params(2, intent(), None), &ctx(2, &owner))
            .unwrap();
        assert_eq!(decision(&answer), expected);
        assert!(bench.tokens.lock().is_empty());
        assert!(bench.approver.seen.lock().unwrap().is_empty());
    }
    // An operation without a rule is denied.
    let mut bench = Bench::new(Decision::Allow);
    let mut other = intent();
    other["operation"] = json!("browser.submit_form2");
    let answer = bench
        .evaluate(&params(2, other, None), &ctx(2, &owner))
        .unwrap();
    assert_eq!(decision(&answer), "deny");
}

#[test]
fn adapter_hints_only_raise_caution() {
    let owner = owner(1);
    let hinted = |hints: Value| {
        let mut intent = intent();
        intent["adapter_hints"] = hints;
        params(2, intent, None)
    };
    let mut bench = Bench::new(Decision::Allow);
    bench.features = features(&[Feature::PolicyIntents]);
    let answer = bench
        .evaluate(&hinted(json!({"destructive": true})), &ctx(2, &owner))
        .unwrap();
    assert_eq!(decision(&answer), "ask");
    let answer = bench
        .evaluate(&hinted(json!({"read_only": false})), &ctx(2, &owner))
        .unwrap();
    assert_eq!(decision(&answer), "allow");

    for (rule, expected) in [(Decision::Ask, "ask"), (Decision::Deny, "deny")] {
        let mut bench = Bench::new(rule);
        bench.features = features(&[Feature::PolicyIntents]);
        for hints in [
            json!({"read_only": true, "destructive": false}),
            json!({"read_only": true}),
            json!({"destructive": false}),
            json!({"read_only": false, "destructive": true}),
        ] {
            let answer = bench.evaluate(&hinted(hints), &ctx(2, &owner)).unwrap();
            assert_eq!(decision(&answer), expected);
        }
    }
}

#[test]
fn an_approved_ask_carries_a_single_use_token_that_allows_the_exact_retry() {
    let owner = owner(1);
    let mut bench = Bench::new(Decision::Ask);
    let token = bench.approved_token(&owner);
    assert!(is_token(&token), "{token}");
    assert_eq!(
        bench.approver.seen.lock().unwrap().as_slice(),
        [(
            EXTENSION.to_owned(),
            owner.clone(),
            2,
            "browser.submit_form".to_owned()
        )]
    );

    let retry = params(2, intent(), Some(&token));
    let answer = bench.evaluate(&retry, &ctx(2, &owner)).unwrap();
    assert_eq!(decision(&answer), "allow");
    assert!(bench.tokens.lock().is_empty());

    // Reuse is denied.
    let answer = bench.evaluate(&retry, &ctx(2, &owner)).unwrap();
    assert_eq!(decision(&answer), "deny");
}

#[test]
fn the_retry_may_reorder_members_but_not_change_them() {
    let owner = owner(1);
    let mut bench = Bench::new(Decision::Ask);
    let token = bench.approved_token(&owner);
    let reordered: Value = serde_json::from_str(
        r#"{"data_classes":["user_text"],"adapter_hints":{"destructive":false,"read_only":false},
            "target":{"label":"Publish comment","origin":"https://example.com"},
            "operation":"browser.submit_form","kind":"external_side_effect"}"#,
    )
    .unwrap();
    let answer = bench
        .evaluate(&params(2, reordered, Some(&token)), &ctx(2, &owner))
        .unwrap();
    assert_eq!(decision(&answer), "allow");
}

#[test]
fn a_mismatched_intent_is_denied_and_consumes_the_token() {
    let owner = owner(1);
    let mut bench = Bench::new(Decision::Ask);
    let token = bench.approved_token(&owner);
    let mut changed = intent();
    changed["target"]["label"] = json!("Delete every comment");
    let answer = bench
        .evaluate(&params(2, changed, Some(&token)), &ctx(2, &owner))
        .unwrap();
    assert_eq!(decision(&answer), "deny");
    // The token is gone: even the exact original intent is now denied.
    let answer = bench
        .evaluate(&params(2, intent(), Some(&token)), &ctx(2, &owner))
        .unwrap();
    assert_eq!(decision(&answer), "deny");
}

#[test]
fn a_different_parent_is_denied_and_consumes_the_token() {
    let owner = owner(1);
    let mut bench = Bench::new(Decision::Ask);
    let token = bench.approved_token(&owner);
    let answer = bench
        .evaluate(&params(3, intent(), Some(&token)), &ctx(3, &owner))
        .unwrap();
    assert_eq!(decision(&answer), "deny");
    let answer = bench
        .evaluate(&params(2, intent(), Some(&token)), &ctx(2, &owner))
        .unwrap();
    assert_eq!(decision(&answer), "deny");
}

#[test]
fn a_different_generation_or_owner_is_denied() {
    let first = owner(1);
    let second = owner(2);
    let mut bench = Bench::new(Decision::Ask);
    let token = bench.approved_token(&first);
    let answer = bench
        .evaluate(&params(2, intent(), Some(&token)), &ctx(2, &second))
        .unwrap();
    assert_eq!(decision(&answer), "deny");

    let token = bench.approved_token(&first);
    let other_session = ResourceOwner {
        session_id: "session-2".into(),
        ..first.clone()
    };
    let answer = bench
        .evaluate(&params(2, intent(), Some(&token)), &ctx(2, &other_session))
        .unwrap();
    assert_eq!(decision(&answer), "deny");

    let token = bench.approved_token(&first);
    let other_instance = ResourceOwner {
        extension_instance_id: "instance-2".into(),
        ..first.clone()
    };
    let answer = bench
        .evaluate(&params(2, intent(), Some(&token)), &ctx(2, &other_instance))
        .unwrap();
    assert_eq!(decision(&answer), "deny");
    assert!(bench.tokens.lock().is_empty());
}

#[test]
fn generation_replacement_invalidates_tokens() {
    let owner = owner(1);
    let mut bench = Bench::new(Decision::Ask);
    let token = bench.approved_token(&owner);
    assert_eq!(bench.tokens.lock().invalidate_generation(EXTENSION, 1), 1);
    let answer = bench
        .evaluate(&params(2, intent(), Some(&token)), &ctx(2, &owner))
        .unwrap();
    assert_eq!(decision(&answer), "deny");
}

#[test]
fn tokens_expire_within_five_minutes() {
    let owner = owner(1);
    assert!(MAX_APPROVAL_TOKEN_TTL <= Duration::from_secs(300));
    let mut bench = Bench::new(Decision::Ask);
    let issued = bench.now;

    let token = bench.approved_token(&owner);
    let just_before = issued + MAX_APPROVAL_TOKEN_TTL - Duration::from_nanos(1);
    let answer = bench
        .evaluate_at(
            &params(2, intent(), Some(&token)),
            &ctx(2, &owner),
            just_before,
        )
        .unwrap();
    assert_eq!(decision(&answer), "allow");

    let token = bench.approved_token(&owner);
    let at_expiry = issued + MAX_APPROVAL_TOKEN_TTL;
    let answer = bench
        .evaluate_at(
            &params(2, intent(), Some(&token)),
            &ctx(2, &owner),
            at_expiry,
        )
        .unwrap();
    assert_eq!(decision(&answer), "deny");

    // A shorter configured lifetime is honoured; a longer one is clamped.
    bench.tokens = parking_lot::Mutex::new(ApprovalTokens::with_ttl(Duration::from_secs(10)));
    let token = bench.approved_token(&owner);
    let answer = bench
        .evaluate_at(
            &params(2, intent(), Some(&token)),
            &ctx(2, &owner),
            issued + Duration::from_secs(10),
        )
        .unwrap();
    assert_eq!(decision(&answer), "deny");
    bench.tokens =
        parking_lot::Mutex::new(ApprovalTokens::with_ttl(Duration::from_secs(24 * 3600)));
    let token = bench.approved_token(&owner);
    let answer = bench
        .evaluate_at(
            &params(2, intent(), Some(&token)),
            &ctx(2, &owner),
            at_expiry,
        )
        .unwrap();
    assert_eq!(decision(&answer), "deny");
}

#[test]
fn a_token_no_longer_allows_what_the_engine_now_denies() {
    let owner = owner(1);
    let mut bench = Bench::new(Decision::Ask);
    let token = bench.approved_token(&owner);
    bench.engine = RulesEngine::new().with_rule("browser.submit_form", Decision::Deny);
    let answer = bench
        .evaluate(&params(2, intent(), Some(&token)), &ctx(2, &owner))
        .unwrap();
    assert_eq!(decision(&answer), "deny");
    assert!(bench.tokens.lock().is_empty());
}

#[test]
fn an_unknown_well_formed_token_is_denied() {
    let owner = owner(1);
    let mut bench = Bench::new(Decision::Ask);
    let answer = bench
        .evaluate(&params(2, intent(), Some(&"0".repeat(64))), &ctx(2, &owner))
        .unwrap();
    assert_eq!(decision(&answer), "deny");
    // Without a token store nothing is recognized either.
    let service = PolicyService {
        engine: &bench.engine,
        approver: Some(&bench.approver),
        approvals: None,
    };
    let answer = policy_evaluate(
        &params(2, intent(), Some(&"0".repeat(64))),
        &ctx(2, &owner),
        &bench.features,
        service,
        bench.now,
    )
    .unwrap();
    assert_eq!(decision(&answer), "deny");
}

#[test]
fn a_token_without_negotiated_approvals_is_invalid_params() {
    let owner = owner(1);
    let mut bench = Bench::new(Decision::Ask);
    let token = bench.approved_token(&owner);
    bench.features = features(&[Feature::PolicyIntents]);
    let error = bench
        .evaluate(&params(2, intent(), Some(&token)), &ctx(2, &owner))
        .unwrap_err();
    assert_eq!(
        error,
        ServiceError::InvalidParams(ParamsError::ApprovalsNotNegotiated)
    );
    assert_eq!(error.code(), -32602);
    // Without approvals an ask is never approved into a token.
    let answer = bench
        .evaluate(&params(2, intent(), None), &ctx(2, &owner))
        .unwrap();
    assert_eq!(decision(&answer), "ask");
}

#[test]
fn malformed_tokens_are_invalid_params() {
    let owner = owner(1);
    let mut bench = Bench::new(Decision::Ask);
    let token = bench.approved_token(&owner);
    for bad in [
        json!(token.to_uppercase()),
        json!(&token[1..]),
        json!(format!("{token}0")),
        json!(null),
        json!(7),
    ] {
        let mut request = params(2, intent(), None);
        request["approval_token"] = bad;
        let error = bench.evaluate(&request, &ctx(2, &owner)).unwrap_err();
        assert_eq!(error.code(), -32602, "{error}");
    }
    // None of them touched the real token.
    assert_eq!(bench.tokens.lock().len(), 1);
}

#[test]
fn declined_or_unbound_approval_leaves_a_plain_ask() {
    let owner = owner(1);
    let engine = RulesEngine::new().with_rule("browser.submit_form", Decision::Ask);
    let all = features(&[Feature::PolicyIntents, Feature::Approvals]);
    let tokens = parking_lot::Mutex::new(ApprovalTokens::new());
    for approver in [Some(&Declining as &dyn Approver), None] {
        let service = PolicyService {
            engine: &engine,
            approver,
            approvals: Some(&tokens),
        };
        let answer = policy_evaluate(
            &params(2, intent(), None),
            &ctx(2, &owner),
            &all,
            service,
            Instant::now(),
        )
        .unwrap();
        assert_eq!(decision(&answer), "ask");
    }
    assert!(tokens.lock().is_empty());
}

#[test]
fn issuance_is_bounded_per_generation() {
    let owner = owner(1);
    let mut bench = Bench::new(Decision::Ask);
    for _ in 0..MAX_APPROVAL_TOKENS_PER_GENERATION {
        bench.approved_token(&owner);
    }
    let answer = bench
        .evaluate(&params(2, intent(), None), &ctx(2, &owner))
        .unwrap();
    assert_eq!(decision(&answer), "ask");
    assert_eq!(
        bench.tokens.lock().len(),
        MAX_APPROVAL_TOKENS_PER_GENERATION
    );
}

#[test]
fn an_inactive_or_ownerless_parent_is_not_foreground_and_consumes_the_token() {
    let owner = owner(1);
    let mut bench = Bench::new(Decision::Ask);
    let token = bench.approved_token(&owner);
    let settled = OperationContext {
        cancelled: None,
        extension: EXTENSION,
        parent: None,
    };
    let error = bench
        .evaluate(&params(2, intent(), Some(&token)), &settled)
        .unwrap_err();
    assert_eq!(error, ServiceError::NoOwner);
    assert_eq!(error.code(), -32002);
    assert!(bench.tokens.lock().is_empty());

    let ownerless = OperationContext {
        cancelled: None,
        extension: EXTENSION,
        parent: Some(ActiveParent {
            parent_request_id: 2,
            owner: None,
        }),
    };
    assert_eq!(
        bench.evaluate(&params(2, intent(), None), &ownerless),
        Err(ServiceError::NoOwner)
    );
    // The params name a parent other than the active one.
    assert_eq!(
        bench.evaluate(&params(9, intent(), None), &ctx(2, &owner)),
        Err(ServiceError::NoOwner)
    );
}

#[test]
fn an_invalid_intent_is_invalid_params_and_consumes_the_token() {
    let owner = owner(1);
    let mut bench = Bench::new(Decision::Ask);
    let token = bench.approved_token(&owner);
    let mut bad = intent();
    bad["surprise"] = json!(true);
    let error = bench
        .evaluate(&params(2, bad, Some(&token)), &ctx(2, &owner))
        .unwrap_err();
    assert_eq!(
        error,
        ServiceError::InvalidParams(ParamsError::UnknownMember { object: "intent" })
    );
    assert!(bench.tokens.lock().is_empty());
}

#[test]
fn params_are_a_closed_object() {
    let owner = owner(1);
    let mut bench = Bench::new(Decision::Allow);
    let cases = [
        (
            json!({"parent_request_id": 2}),
            ParamsError::Missing { member: "intent" },
        ),
        (
            json!({"intent": intent()}),
            ParamsError::Missing {
                member: "parent_request_id",
            },
        ),
        (
            json!({"parent_request_id": "2", "intent": intent()}),
            ParamsError::WrongType {
                member: "parent_request_id",
            },
        ),
        (
            json!({"parent_request_id": 2, "intent": intent(), "resource_owner": owner.to_value()}),
            ParamsError::UnknownMember { object: "params" },
        ),
        (json!([]), ParamsError::WrongType { member: "params" }),
    ];
    for (params, expected) in cases {
        assert_eq!(
            bench.evaluate(&params, &ctx(2, &owner)),
            Err(ServiceError::InvalidParams(expected))
        );
    }
}

#[test]
fn the_store_can_be_driven_directly() {
    let owner = owner(1);
    let intent = octet_host::services::Intent::parse(&intent()).unwrap();
    let request = PolicyRequest {
        cancelled: None,
        extension: EXTENSION,
        owner: &owner,
        parent_request_id: 2,
        intent: &intent,
    };
    let mut tokens = ApprovalTokens::new();
    let now = Instant::now();
    let token = tokens.issue(&request, now).unwrap();
    let parsed = ApprovalToken::parse(token.as_str()).unwrap();
    let other = PolicyRequest {
        parent_request_id: 3,
        ..request
    };
    assert_eq!(tokens.redeem(&parsed, &other, now), Redemption::Mismatch);
    assert_eq!(tokens.redeem(&parsed, &request, now), Redemption::Unknown);
    let token = tokens.issue(&request, now).unwrap();
    assert_eq!(
        tokens.redeem(&token, &request, now + MAX_APPROVAL_TOKEN_TTL),
        Redemption::Expired
    );
    let token = tokens.issue(&request, now).unwrap();
    assert_eq!(tokens.redeem(&token, &request, now), Redemption::Valid);
}

/// A policy engine that panics if consulted, to show which paths never reach it.
struct Unreachable;

impl PolicyEngine for Unreachable {
    fn evaluate(&self, _request: &PolicyRequest<'_>) -> Decision {
        panic!("the engine must not be consulted")
    }
}

#[test]
fn refusals_happen_before_classification() {
    let owner = owner(1);
    let all = features(&[Feature::PolicyIntents, Feature::Approvals]);
    for (params, ctx) in [
        (params(2, json!({"kind": "k"}), None), ctx(2, &owner)),
        (
            params(2, intent(), None),
            OperationContext {
                cancelled: None,
                extension: EXTENSION,
                parent: None,
            },
        ),
    ] {
        let service = PolicyService {
            engine: &Unreachable,
            approver: None,
            approvals: None,
        };
        assert!(policy_evaluate(&params, &ctx, &all, service, Instant::now()).is_err());
    }
}
