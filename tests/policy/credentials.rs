//! `provider/credentials` (section 1.1).

use super::*;

#[test]
fn provider_credentials_resolve_exactly_one_identity() {
    let owner = owner(1);
    let on = features(&[Feature::ProviderCredentials]);
    let resolver =
        InMemoryCredentialResolver::new().with_credential("anthropic", "claude-sonnet", SECRET);
    let answer = provider_credentials(
        &credential_params("anthropic", "claude-sonnet"),
        true,
        &on,
        Some(&resolver),
        &ctx(2, &owner),
    )
    .unwrap();
    assert_eq!(
        answer,
        json!({"provider": "anthropic", "model": "claude-sonnet", "credential": SECRET})
    );
    for (provider, model) in [("anthropic", "claude-opus"), ("openai", "claude-sonnet")] {
        assert_eq!(
            provider_credentials(
                &credential_params(provider, model),
                true,
                &on,
                Some(&resolver),
                &ctx(2, &owner),
            ),
            Err(ServiceError::CredentialUnavailable)
        );
    }
    // A resolver answering for another identity is refused, not widened.
    for resolver in [&Widening as &dyn CredentialResolver, &Failing] {
        let error = provider_credentials(
            &credential_params("anthropic", "claude-sonnet"),
            true,
            &on,
            Some(resolver),
            &ctx(2, &owner),
        )
        .unwrap_err();
        assert_eq!(
            (error, error.code()),
            (ServiceError::CredentialUnavailable, -32004)
        );
    }
}

#[test]
fn provider_credentials_need_the_declaration_the_feature_and_an_owner() {
    let owner = owner(1);
    let on = features(&[Feature::ProviderCredentials]);
    let resolver =
        InMemoryCredentialResolver::new().with_credential("anthropic", "claude-sonnet", SECRET);
    let request = credential_params("anthropic", "claude-sonnet");
    for (declared, features) in [(false, on), (true, FeatureSet::new())] {
        assert_eq!(
            provider_credentials(
                &request,
                declared,
                &features,
                Some(&resolver),
                &ctx(2, &owner)
            ),
            Err(ServiceError::NotNegotiated)
        );
    }
    assert_eq!(
        provider_credentials(&request, true, &on, None, &ctx(2, &owner)),
        Err(ServiceError::NoService)
    );
    assert_eq!(
        provider_credentials(&request, true, &on, Some(&resolver), &ctx(5, &owner)),
        Err(ServiceError::NoOwner)
    );
    for bad in [
        json!({"parent_request_id": 2, "provider": "anthropic"}),
        json!({"parent_request_id": 2, "provider": "", "model": "m"}),
        json!({"parent_request_id": 2, "provider": "p", "model": "x".repeat(257)}),
        json!({"parent_request_id": 2, "provider": "p", "model": "m", "endpoint": "https://x"}),
    ] {
        let error =
            provider_credentials(&bad, true, &on, Some(&resolver), &ctx(2, &owner)).unwrap_err();
        assert_eq!(error.code(), -32602, "{bad}");
    }
}
