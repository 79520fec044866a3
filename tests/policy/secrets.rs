//! `secret/get` (section 2.10).

use super::*;

#[test]
fn a_declared_secret_is_returned_with_the_host_derived_identity() {
    let owner = owner(4);
    let broker = ScriptedBroker::new(|| Ok(Some(SecretValue::from(SECRET))));
    let answer = secret_get(
        &secret_params("browser.api_token"),
        &declared(),
        &secrets_on(),
        Some(&broker),
        &ctx(2, &owner),
    )
    .unwrap();
    assert_eq!(answer, json!({ "value": SECRET }));
    assert_eq!(
        broker.seen.lock().unwrap().as_slice(),
        [(
            EXTENSION.to_owned(),
            owner.clone(),
            2,
            "browser.api_token".to_owned()
        )]
    );

    let empty = ScriptedBroker::new(|| Ok(Some(SecretValue::from(""))));
    let answer = secret_get(
        &secret_params("_other"),
        &declared(),
        &secrets_on(),
        Some(&empty),
        &ctx(2, &owner),
    )
    .unwrap();
    assert_eq!(answer, json!({ "value": "" }));
}

#[test]
fn the_in_memory_broker_scopes_by_extension_and_exact_name() {
    let owner = owner(1);
    let broker = InMemorySecretBroker::new()
        .with_secret(EXTENSION, "browser.api_token", SECRET)
        .with_secret("another", "_other", "theirs");
    let get = |name: &str| {
        secret_get(
            &secret_params(name),
            &declared(),
            &secrets_on(),
            Some(&broker),
            &ctx(2, &owner),
        )
    };
    assert_eq!(get("browser.api_token"), Ok(json!({ "value": SECRET })));
    assert_eq!(get("_other"), Err(ServiceError::SecretUnavailable));
    assert!(!format!("{broker:?}").contains(SECRET));
}

#[test]
fn undeclared_or_invalid_names_are_invalid_params() {
    let owner = owner(1);
    let broker = ScriptedBroker::new(|| Ok(Some(SecretValue::from(SECRET))));
    for (name, expected) in [
        ("browser.API_TOKEN", ParamsError::UndeclaredSecret),
        ("browser.api_tokens", ParamsError::UndeclaredSecret),
        ("undeclared", ParamsError::UndeclaredSecret),
    ] {
        assert_eq!(
            secret_get(
                &secret_params(name),
                &declared(),
                &secrets_on(),
                Some(&broker),
                &ctx(2, &owner),
            ),
            Err(ServiceError::InvalidParams(expected)),
            "{name:?}"
        );
    }
    for name in ["-bad", "", "a/b", "browser.api_token "] {
        let error = secret_get(
            &secret_params(name),
            &declared(),
            &secrets_on(),
            Some(&broker),
            &ctx(2, &owner),
        )
        .unwrap_err();
        assert!(
            matches!(
                error,
                ServiceError::InvalidParams(ParamsError::InvalidSecretName(_))
            ),
            "{name:?}: {error:?}"
        );
        assert_eq!(error.code(), -32602);
    }
    for bad in [
        json!({"parent_request_id": 2}),
        json!({"parent_request_id": 2, "name": 5}),
        json!({"name": "_other"}),
        json!({"parent_request_id": 2, "name": "_other", "session_id": "x"}),
    ] {
        let error = secret_get(
            &bad,
            &declared(),
            &secrets_on(),
            Some(&broker),
            &ctx(2, &owner),
        )
        .unwrap_err();
        assert_eq!(error.code(), -32602, "{bad}");
    }
    assert!(broker.seen.lock().unwrap().is_empty());
}

#[test]
fn no_feature_no_broker_or_no_owner_is_refused() {
    let owner = owner(1);
    let broker = ScriptedBroker::new(|| Ok(Some(SecretValue::from(SECRET))));
    let request = secret_params("_other");
    assert_eq!(
        secret_get(
            &request,
            &declared(),
            &features(&[Feature::PolicyIntents]),
            Some(&broker),
            &ctx(2, &owner)
        ),
        Err(ServiceError::NotNegotiated)
    );
    let error =
        secret_get(&request, &declared(), &secrets_on(), None, &ctx(2, &owner)).unwrap_err();
    assert_eq!((error, error.code()), (ServiceError::NoService, -32002));
    let settled = OperationContext {
        cancelled: None,
        extension: EXTENSION,
        parent: None,
    };
    let error = secret_get(
        &request,
        &declared(),
        &secrets_on(),
        Some(&broker),
        &settled,
    )
    .unwrap_err();
    assert_eq!((error, error.code()), (ServiceError::NoOwner, -32002));
    assert_eq!(
        secret_get(
            &secret_params("_other"),
            &declared(),
            &secrets_on(),
            Some(&broker),
            &ctx(3, &owner)
        ),
        Err(ServiceError::NoOwner)
    );
    assert!(broker.seen.lock().unwrap().is_empty());
}

#[test]
fn every_miss_failure_or_oversize_is_the_same_unavailable_response() {
    let owner = owner(1);
    let outcomes: [Outcome; 5] = [
        || Ok(None),
        || Err(BrokerError::Unreachable),
        || Err(BrokerError::Refused),
        || Err(BrokerError::Failed),
        || {
            Ok(Some(SecretValue::new(
                "s".repeat(MAX_SECRET_VALUE_BYTES + 1),
            )))
        },
    ];
    let mut responses = Vec::new();
    for outcome in outcomes {
        let broker = ScriptedBroker::new(outcome);
        let error = secret_get(
            &secret_params("_other"),
            &declared(),
            &secrets_on(),
            Some(&broker),
            &ctx(2, &owner),
        )
        .unwrap_err();
        assert_eq!(broker.seen.lock().unwrap().len(), 1);
        responses.push(serde_json::to_string(&error.to_response_error()).unwrap());
    }
    for response in &responses {
        assert_eq!(
            response,
            r#"{"code":-32004,"message":"secret is unavailable"}"#
        );
    }

    let at_cap =
        ScriptedBroker::new(|| Ok(Some(SecretValue::new("s".repeat(MAX_SECRET_VALUE_BYTES)))));
    let answer = secret_get(
        &secret_params("_other"),
        &declared(),
        &secrets_on(),
        Some(&at_cap),
        &ctx(2, &owner),
    )
    .unwrap();
    assert_eq!(answer["value"].as_str().unwrap().len(), 64 * 1024);
}
