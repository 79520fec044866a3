//! Single-use approval tokens, the optional `approvals` retry boundary of
//! `policy/evaluate` (section 2.9).
//!
//! A token is 32 bytes from the operating system's CSPRNG (`/dev/urandom`), written as
//! 64 lowercase hexadecimal characters. The store keeps only the SHA-256 digest of each
//! token, bound to the requesting extension, the owner triple (whose
//! `process_generation` is the generation), the parent request id and the intent's
//! canonical digest, with an expiry of at most [`MAX_APPROVAL_TOKEN_TTL`]. Redeeming a
//! token always removes it, whatever the outcome. Each extension's process generation
//! holds at most [`MAX_APPROVAL_TOKENS_PER_GENERATION`] live tokens, and
//! [`ApprovalTokens::invalidate_generation`] drops a generation's tokens when it is
//! replaced.
//!
//! Neither the store nor [`ApprovalToken`] shows a token in `Debug` output.

use std::collections::HashMap;
use std::fmt;
use std::io;
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use super::owner::ResourceOwner;
use super::policy::PolicyRequest;
use crate::limits::{
    APPROVAL_TOKEN_HEX_LEN, MAX_APPROVAL_TOKENS_PER_GENERATION, MAX_APPROVAL_TOKEN_TTL,
};

/// An approval token: exactly 64 lowercase hexadecimal characters.
#[derive(Clone, PartialEq, Eq)]
pub struct ApprovalToken(String);

impl ApprovalToken {
    /// Accepts `text` when it has the token form (section 2.9); whether the host issued
    /// it is for [`ApprovalTokens::redeem`] to say.
    pub fn parse(text: &str) -> Option<ApprovalToken> {
        let well_formed = text.len() == APPROVAL_TOKEN_HEX_LEN
            && text
                .bytes()
                .all(|byte| byte.is_ascii_digit() || (b'a'..=b'f').contains(&byte));
        well_formed.then(|| ApprovalToken(text.to_owned()))
    }

    /// The token's text, to send in the `policy/evaluate` response.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// A fresh token from the operating system's CSPRNG.
    fn generate() -> io::Result<ApprovalToken> {
        Ok(ApprovalToken(crate::hex::random(
            APPROVAL_TOKEN_HEX_LEN / 2,
        )?))
    }

    /// The digest the store keys this token by.
    fn key(&self) -> [u8; 32] {
        Sha256::digest(self.0.as_bytes()).into()
    }
}

impl fmt::Debug for ApprovalToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApprovalToken(<redacted>)")
    }
}

/// What redeeming a token found. The token is gone from the store in every case.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Redemption {
    /// The token was live and matches the extension, owner (and so the generation),
    /// parent and canonical intent.
    Valid,
    /// The host did not issue the token, or it was already redeemed, invalidated or
    /// purged after expiring.
    Unknown,
    /// The token was recognized but its expiry had passed.
    Expired,
    /// The token was recognized but was issued for another extension, owner,
    /// generation, parent or intent; it is consumed all the same.
    Mismatch,
}

/// Why no token could be issued.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IssueError {
    /// The generation already holds [`MAX_APPROVAL_TOKENS_PER_GENERATION`] live tokens.
    Exhausted,
    /// The operating system's CSPRNG could not be read.
    Randomness(io::ErrorKind),
}

impl fmt::Display for IssueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IssueError::Exhausted => write!(
                f,
                "the generation already holds {MAX_APPROVAL_TOKENS_PER_GENERATION} live approval tokens"
            ),
            IssueError::Randomness(kind) => {
                write!(f, "the system random source could not be read ({kind})")
            }
        }
    }
}

impl std::error::Error for IssueError {}

/// What a token was issued for.
struct Grant {
    extension: String,
    owner: ResourceOwner,
    parent_request_id: u64,
    intent: [u8; 32],
    expires_at: Instant,
}

impl Grant {
    /// Whether the grant was issued for exactly this request.
    fn matches(&self, request: &PolicyRequest<'_>) -> bool {
        self.extension == request.extension
            && self.owner == *request.owner
            && self.parent_request_id == request.parent_request_id
            && self.intent == request.intent.canonical_digest()
    }

    /// Whether the grant belongs to `extension`'s `process_generation`.
    fn of_generation(&self, extension: &str, process_generation: u64) -> bool {
        self.extension == extension && self.owner.process_generation == process_generation
    }
}

/// The live single-use approval tokens (section 2.9).
pub struct ApprovalTokens {
    ttl: Duration,
    grants: HashMap<[u8; 32], Grant>,
}

impl Default for ApprovalTokens {
    fn default() -> ApprovalTokens {
        ApprovalTokens::new()
    }
}

impl fmt::Debug for ApprovalTokens {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ApprovalTokens")
            .field("ttl", &self.ttl)
            .field("live", &self.grants.len())
            .finish()
    }
}

impl ApprovalTokens {
    /// An empty store whose tokens live [`MAX_APPROVAL_TOKEN_TTL`] (five minutes).
    pub fn new() -> ApprovalTokens {
        ApprovalTokens::with_ttl(MAX_APPROVAL_TOKEN_TTL)
    }

    /// An empty store whose tokens live `ttl`, clamped to at most
    /// [`MAX_APPROVAL_TOKEN_TTL`].
    pub fn with_ttl(ttl: Duration) -> ApprovalTokens {
        ApprovalTokens {
            ttl: ttl.min(MAX_APPROVAL_TOKEN_TTL),
            grants: HashMap::new(),
        }
    }

    /// How long a token lives after it was issued.
    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    /// How many tokens are stored, expired ones not yet purged included.
    pub fn len(&self) -> usize {
        self.grants.len()
    }

    /// True when no token is stored.
    pub fn is_empty(&self) -> bool {
        self.grants.is_empty()
    }

    /// Issues a token for exactly `request`, valid until `now + ttl` (exclusive).
    /// Expired tokens are purged first; a generation already holding
    /// [`MAX_APPROVAL_TOKENS_PER_GENERATION`] live tokens gets none.
    pub fn issue(
        &mut self,
        request: &PolicyRequest<'_>,
        now: Instant,
    ) -> Result<ApprovalToken, IssueError> {
        self.purge_expired(now);
        let live = self
            .grants
            .values()
            .filter(|grant| {
                grant.of_generation(request.extension, request.owner.process_generation)
            })
            .count();
        if live >= MAX_APPROVAL_TOKENS_PER_GENERATION {
            return Err(IssueError::Exhausted);
        }
        let token =
            ApprovalToken::generate().map_err(|error| IssueError::Randomness(error.kind()))?;
        let key = token.key();
        if self.grants.contains_key(&key) {
            // Two equal 256-bit draws mean the random source is broken.
            return Err(IssueError::Randomness(io::ErrorKind::InvalidData));
        }
        // An expiry that cannot be represented is treated as already passed.
        let expires_at = now.checked_add(self.ttl).unwrap_or(now);
        self.grants.insert(
            key,
            Grant {
                extension: request.extension.to_owned(),
                owner: request.owner.clone(),
                parent_request_id: request.parent_request_id,
                intent: request.intent.canonical_digest(),
                expires_at,
            },
        );
        Ok(token)
    }

    /// Atomically consumes `token` and says whether it authorizes exactly `request` at
    /// `now`. A recognized token is removed even when it does not match.
    pub fn redeem(
        &mut self,
        token: &ApprovalToken,
        request: &PolicyRequest<'_>,
        now: Instant,
    ) -> Redemption {
        match self.grants.remove(&token.key()) {
            None => Redemption::Unknown,
            Some(grant) if now >= grant.expires_at => Redemption::Expired,
            Some(grant) if !grant.matches(request) => Redemption::Mismatch,
            Some(_) => Redemption::Valid,
        }
    }

    /// Removes `token` without checking it; true when it was stored.
    pub fn discard(&mut self, token: &ApprovalToken) -> bool {
        self.grants.remove(&token.key()).is_some()
    }

    /// Removes every token of `extension`'s `process_generation`, as generation
    /// replacement requires (sections 2.9, 5); returns how many were removed.
    pub fn invalidate_generation(&mut self, extension: &str, process_generation: u64) -> usize {
        let before = self.grants.len();
        self.grants
            .retain(|_, grant| !grant.of_generation(extension, process_generation));
        before - self.grants.len()
    }

    /// Removes every token whose expiry has passed at `now`; returns how many.
    pub fn purge_expired(&mut self, now: Instant) -> usize {
        let before = self.grants.len();
        self.grants.retain(|_, grant| now < grant.expires_at);
        before - self.grants.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::services::policy::Intent;
    use serde_json::json;

    fn owner(generation: u64) -> ResourceOwner {
        ResourceOwner {
            session_id: "s".into(),
            extension_instance_id: "i".into(),
            process_generation: generation,
        }
    }

    #[test]
    fn tokens_are_64_lowercase_hex_and_distinct() {
        let a = ApprovalToken::generate().unwrap();
        let b = ApprovalToken::generate().unwrap();
        assert_ne!(a, b);
        assert!(ApprovalToken::parse(a.as_str()).is_some());
        assert_eq!(a.as_str().len(), 64);
        assert!(!format!("{a:?}").contains(a.as_str()));
        assert!(ApprovalToken::parse(&"A".repeat(64)).is_none());
        assert!(ApprovalToken::parse(&"a".repeat(63)).is_none());
        assert!(ApprovalToken::parse(&"g".repeat(64)).is_none());
        assert!(ApprovalToken::parse(&"0".repeat(64)).is_some());
    }

    #[test]
    fn the_ttl_is_clamped_to_five_minutes() {
        assert_eq!(ApprovalTokens::new().ttl(), Duration::from_secs(300));
        assert_eq!(
            ApprovalTokens::with_ttl(Duration::from_secs(3600)).ttl(),
            Duration::from_secs(300)
        );
        assert_eq!(
            ApprovalTokens::with_ttl(Duration::from_secs(5)).ttl(),
            Duration::from_secs(5)
        );
    }

    #[test]
    fn the_count_is_bounded_per_generation_and_expired_ones_are_purged() {
        let intent = Intent::parse(&json!({"kind": "k", "operation": "o"})).unwrap();
        let (one, two) = (owner(1), owner(2));
        let request = |owner| PolicyRequest {
            cancelled: None,
            extension: "e",
            owner,
            parent_request_id: 1,
            intent: &intent,
        };
        let mut tokens = ApprovalTokens::new();
        let now = Instant::now();
        for _ in 0..MAX_APPROVAL_TOKENS_PER_GENERATION {
            tokens.issue(&request(&one), now).unwrap();
        }
        assert_eq!(
            tokens.issue(&request(&one), now),
            Err(IssueError::Exhausted)
        );
        // Another generation has its own budget.
        tokens.issue(&request(&two), now).unwrap();
        assert_eq!(tokens.invalidate_generation("e", 1), 64);
        assert_eq!(tokens.len(), 1);
        tokens.issue(&request(&one), now).unwrap();
        assert_eq!(tokens.purge_expired(now + MAX_APPROVAL_TOKEN_TTL), 2);
        assert!(tokens.is_empty());
        assert!(!format!("{tokens:?}").contains("Grant"));
    }
}
