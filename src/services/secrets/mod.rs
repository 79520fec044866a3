//! `secret/get` (section 2.10) and `provider/credentials` (section 1.1): brokers the
//! embedder binds, the request flows, and secret values that never print and wipe
//! themselves.
//!
//! Everything denies by default: without a broker or resolver the host answers -32002,
//! and every broker miss or failure is the same opaque -32004.

mod broker;
mod credentials;
mod value;

pub use crate::wipe::wipe_bytes;
pub use broker::{secret_get, BrokerError, InMemorySecretBroker, SecretBroker, SecretRequest};
pub use credentials::{
    provider_credentials, CredentialRequest, CredentialResolver, InMemoryCredentialResolver,
    ProviderCredential,
};
pub use value::{wipe_json, SecretValue};
