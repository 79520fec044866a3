//! A cheap hash for the integer ids the host assigns itself.
//!
//! The dispatcher looks up a connection, a call and a pending request for every frame
//! of a `tool/call`. The standard library's SipHash resists keys chosen to collide, at
//! a cost (1.8% of a depth-64 run's samples went to hashing, 0.65% with this hash;
//! `benches/README.md`); the ids here are counters the host hands out
//! (connection, call and outgoing request ids), so no peer chooses them, and one
//! multiplication spreads them over the table well enough. An id an extension sends
//! back is only looked up, never inserted, so it cannot crowd a bucket either. Keys
//! an extension chooses (the ids of its own requests, names) keep SipHash.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// A hash map keyed by host-assigned ids.
pub(crate) type IdMap<K, V> = HashMap<K, V, BuildHasherDefault<IdHasher>>;

/// A hash set of host-assigned ids.
pub(crate) type IdSet<K> = HashSet<K, BuildHasherDefault<IdHasher>>;

/// Multiply-rotate hashing of whole integers (the constant is the 64-bit golden
/// ratio, odd, so distinct ids never share a hash).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct IdHasher(u64);

const SEED: u64 = 0x9e37_79b9_7f4a_7c15;

impl Hasher for IdHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.write_u64(u64::from(byte));
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(26) ^ n).wrapping_mul(SEED);
    }

    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }

    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }

    fn finish(&self) -> u64 {
        // The table takes its bucket from the low bits and a tag from the top seven;
        // the product's high bits are its best mixed, so they go to both.
        self.0.rotate_left(26)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    fn hash(id: u64) -> u64 {
        BuildHasherDefault::<IdHasher>::default().hash_one(id)
    }

    #[test]
    fn counters_spread_over_buckets_and_tags() {
        // 4,096 consecutive ids into 1,024 buckets (low bits) and 128 tags (top bits).
        let mut buckets = vec![0u32; 1024];
        let mut tags = [0u32; 128];
        for id in 1..=4096 {
            let h = hash(id);
            buckets[(h & 1023) as usize] += 1;
            tags[(h >> 57) as usize] += 1;
        }
        assert!(buckets.iter().all(|&n| n <= 12), "{buckets:?}");
        assert!(tags.iter().all(|&n| (8..=64).contains(&n)), "{tags:?}");
    }

    #[test]
    fn maps_behave_as_maps() {
        let mut map: IdMap<u64, &str> = IdMap::default();
        for id in 0..1000 {
            map.insert(id, "x");
        }
        assert_eq!(map.len(), 1000);
        assert!((0..1000).all(|id| map.contains_key(&id)));
        assert!(map.remove(&500).is_some());
        assert!(!map.contains_key(&500));
        let mut set: IdSet<(u64, u32)> = IdSet::default();
        assert!(set.insert((1, 2)));
        assert!(!set.insert((1, 2)));
    }
}
