//! No error, `Debug` or `Display` output shows a secret value or an approval token.

use super::*;

#[test]
fn no_error_or_debug_output_shows_a_secret_or_a_token() {
    let owner = owner(1);
    let mut bench = Bench::new(Decision::Ask);
    let token = bench.approved_token(&owner);
    let mut texts: Vec<String> = Vec::new();
    let mut record = |error: ServiceError| {
        texts.push(format!("{error:?}"));
        texts.push(format!("{error:#?}"));
        texts.push(error.to_string());
        texts.push(serde_json::to_string(&error.to_response_error()).unwrap());
        texts.push(format!("{:?}", error.to_response_error()));
    };

    // Every policy failure, with the token or the secret smuggled into the request.
    let mut smuggled = params(2, intent(), Some(&token));
    smuggled[SECRET] = json!(SECRET);
    record(bench.evaluate(&smuggled, &ctx(2, &owner)).unwrap_err());
    let mut upper = params(2, intent(), None);
    upper["approval_token"] = json!(token.to_uppercase());
    record(bench.evaluate(&upper, &ctx(2, &owner)).unwrap_err());
    let mut bad_intent = intent();
    bad_intent["operation"] = json!(format!("{SECRET}\n{token}"));
    record(
        bench
            .evaluate(&params(2, bad_intent, None), &ctx(2, &owner))
            .unwrap_err(),
    );
    let token = bench.approved_token(&owner);
    bench.features = features(&[Feature::PolicyIntents]);
    record(
        bench
            .evaluate(&params(2, intent(), Some(&token)), &ctx(2, &owner))
            .unwrap_err(),
    );

    // Every secret failure.
    let broker = ScriptedBroker::new(|| Ok(Some(SecretValue::from(SECRET))));
    let oversize = ScriptedBroker::new(|| {
        Ok(Some(SecretValue::new(
            SECRET.repeat(MAX_SECRET_VALUE_BYTES),
        )))
    });
    record(
        secret_get(
            &secret_params(SECRET),
            &declared(),
            &secrets_on(),
            Some(&broker),
            &ctx(2, &owner),
        )
        .unwrap_err(),
    );
    record(
        secret_get(
            &secret_params("_other"),
            &declared(),
            &secrets_on(),
            Some(&oversize),
            &ctx(2, &owner),
        )
        .unwrap_err(),
    );
    record(
        secret_get(
            &secret_params("_other"),
            &declared(),
            &secrets_on(),
            Some(&broker),
            &ctx(7, &owner),
        )
        .unwrap_err(),
    );
    record(
        provider_credentials(
            &credential_params("anthropic", "claude-sonnet"),
            true,
            &features(&[Feature::ProviderCredentials]),
            Some(&Widening),
            &ctx(2, &owner),
        )
        .unwrap_err(),
    );
    for error in [
        ServiceError::NotNegotiated,
        ServiceError::NoOwner,
        ServiceError::NoService,
        ServiceError::SecretUnavailable,
        ServiceError::CredentialUnavailable,
    ] {
        record(error);
    }

    // Every value holder.
    let value = SecretValue::from(SECRET);
    texts.push(format!("{value:?}"));
    texts.push(format!("{value}"));
    let credential = ProviderCredential {
        provider: "p".into(),
        model: "m".into(),
        credential: SecretValue::from(SECRET),
    };
    texts.push(format!("{credential:?}"));
    texts.push(format!(
        "{:?}",
        InMemorySecretBroker::new().with_secret(EXTENSION, "_other", SECRET)
    ));
    texts.push(format!(
        "{:?}",
        InMemoryCredentialResolver::new().with_credential("p", "m", SECRET)
    ));
    texts.push(format!("{:?}", bench.tokens));
    texts.push(format!("{:?}", ApprovalToken::parse(&token).unwrap()));
    for error in [
        BrokerError::Unreachable,
        BrokerError::Refused,
        BrokerError::Failed,
    ] {
        texts.push(format!("{error:?} {error}"));
    }

    assert!(texts.len() > 40);
    for text in &texts {
        assert!(!text.contains(SECRET), "secret leaked: {text}");
        assert!(!text.contains(&token), "token leaked: {text}");
        assert!(
            !text.contains(&token.to_uppercase()),
            "token leaked: {text}"
        );
        assert!(!text.contains("very-secret"), "secret leaked: {text}");
    }
}
