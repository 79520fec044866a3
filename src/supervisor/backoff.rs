//! Full-jitter exponential backoff (section 5): the delay before restart attempt `n`
//! (counted from 0) is uniform in `[0, min(cap, base * 2^n)]`.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::time::Duration;

/// The upper bound of the delay before attempt `attempt`.
pub fn ceiling(base: Duration, cap: Duration, attempt: u32) -> Duration {
    let factor = 1u32.checked_shl(attempt).unwrap_or(u32::MAX);
    base.saturating_mul(factor).min(cap)
}

/// A full-jitter delay before attempt `attempt`.
pub fn delay(base: Duration, cap: Duration, attempt: u32) -> Duration {
    let ceiling = ceiling(base, cap, attempt);
    let nanos = ceiling.as_nanos() as u64;
    if nanos == 0 {
        return Duration::ZERO;
    }
    Duration::from_nanos(random_u64() % (nanos + 1))
}

/// A random number from the standard library's per-process random hasher keys; good
/// enough to spread restarts, which is all jitter is for.
fn random_u64() -> u64 {
    let mut hasher = RandomState::new().build_hasher();
    hasher.write_u64(
        std::time::SystemTime::now()
            .elapsed()
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0),
    );
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::{RESTART_BACKOFF_BASE as BASE, RESTART_BACKOFF_CAP as CAP};

    #[test]
    fn ceiling_doubles_from_the_base_up_to_the_cap() {
        assert_eq!(ceiling(BASE, CAP, 0), Duration::from_millis(250));
        assert_eq!(ceiling(BASE, CAP, 1), Duration::from_millis(500));
        assert_eq!(ceiling(BASE, CAP, 6), Duration::from_secs(16));
        assert_eq!(ceiling(BASE, CAP, 7), Duration::from_secs(30));
        assert_eq!(ceiling(BASE, CAP, 40), Duration::from_secs(30));
    }

    #[test]
    fn delays_stay_within_the_ceiling() {
        for attempt in 0..10 {
            for _ in 0..50 {
                assert!(delay(BASE, CAP, attempt) <= ceiling(BASE, CAP, attempt));
            }
        }
    }
}
