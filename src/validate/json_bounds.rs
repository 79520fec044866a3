//! Measuring a JSON value against size, depth, node and key bounds (section 1.2).
//!
//! Definitions used throughout:
//! - *bytes*: the length of the compact `serde_json` encoding (no whitespace), counted
//!   without building the string.
//! - *depth*: the number of nested containers on the deepest path. A scalar has depth 0,
//!   `[]` and `{}` depth 1, `{"a":[1]}` depth 2.
//! - *nodes*: every value counts once (objects, arrays and scalars alike); object keys do
//!   not count as nodes of their own.
//! - *key bytes*: the UTF-8 length of an object key as decoded, at any depth.

use std::fmt;
use std::io;

use serde_json::Value;

use crate::limits::{
    MAX_JSON_DEPTH, MAX_JSON_KEY_BYTES, MAX_JSON_NODES, MAX_METADATA_BYTES,
    MAX_STRUCTURED_CONTENT_BYTES,
};

/// Upper bounds for one JSON value. Every bound is inclusive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounds {
    /// Largest compact encoding, in bytes.
    pub max_bytes: usize,
    /// Deepest container nesting.
    pub max_depth: usize,
    /// Most values in total.
    pub max_nodes: usize,
    /// Longest object key, in UTF-8 bytes.
    pub max_key_bytes: usize,
}

impl Bounds {
    /// The bounds of a tool result's `structured_content` (section 1.2). Keys are not
    /// bounded there beyond the total size.
    pub const STRUCTURED_CONTENT: Bounds = Bounds {
        max_bytes: MAX_STRUCTURED_CONTENT_BYTES,
        max_depth: MAX_JSON_DEPTH,
        max_nodes: MAX_JSON_NODES,
        max_key_bytes: usize::MAX,
    };

    /// The bounds of a tool result's `metadata` (section 1.2).
    pub const METADATA: Bounds = Bounds {
        max_bytes: MAX_METADATA_BYTES,
        max_depth: MAX_JSON_DEPTH,
        max_nodes: MAX_JSON_NODES,
        max_key_bytes: MAX_JSON_KEY_BYTES,
    };

    /// No bound at all.
    pub const UNLIMITED: Bounds = Bounds {
        max_bytes: usize::MAX,
        max_depth: usize::MAX,
        max_nodes: usize::MAX,
        max_key_bytes: usize::MAX,
    };

    /// Only an encoded-size bound.
    pub const fn bytes_only(max_bytes: usize) -> Bounds {
        Bounds {
            max_bytes,
            ..Bounds::UNLIMITED
        }
    }
}

/// The first bound a value was found to exceed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BoundsError {
    /// The compact encoding is longer than `max` bytes.
    TooManyBytes {
        /// The bound.
        max: usize,
    },
    /// Containers nest deeper than `max`.
    TooDeep {
        /// The bound.
        max: usize,
    },
    /// The value holds more than `max` nodes.
    TooManyNodes {
        /// The bound.
        max: usize,
    },
    /// An object key is longer than `max` bytes.
    KeyTooLong {
        /// The offending key's length in bytes.
        key_bytes: usize,
        /// The bound.
        max: usize,
    },
}

impl fmt::Display for BoundsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BoundsError::TooManyBytes { max } => write!(f, "encodes to more than {max} bytes"),
            BoundsError::TooDeep { max } => write!(f, "nests deeper than {max} levels"),
            BoundsError::TooManyNodes { max } => write!(f, "holds more than {max} JSON values"),
            BoundsError::KeyTooLong { key_bytes, max } => {
                write!(
                    f,
                    "has a {key_bytes}-byte object key, longer than {max} bytes"
                )
            }
        }
    }
}

impl std::error::Error for BoundsError {}

/// The full measurements of one value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JsonMeasure {
    /// Length of the compact encoding in bytes.
    pub bytes: usize,
    /// Deepest container nesting.
    pub depth: usize,
    /// Values in total.
    pub nodes: usize,
    /// Longest object key in bytes (0 without keys).
    pub longest_key_bytes: usize,
}

#[doc(hidden)]
/// Measures `value` completely.
pub fn measure(value: &Value) -> JsonMeasure {
    let mut walk = Walk::new(Bounds::UNLIMITED);
    // Nothing is bounded, so the walk cannot fail.
    let _ = walk.visit(value, 0);
    JsonMeasure {
        bytes: encoded_len(value),
        depth: walk.depth,
        nodes: walk.nodes,
        longest_key_bytes: walk.longest_key_bytes,
    }
}

#[doc(hidden)]
/// Length of the compact encoding of `value`, counted without allocating it.
pub fn encoded_len(value: &Value) -> usize {
    let mut counter = ByteCounter::new(usize::MAX);
    // The counter never refuses a write here, and a `Value` always serializes.
    let _ = serde_json::to_writer(&mut counter, value);
    counter.count
}

#[doc(hidden)]
/// Checks `value` against `bounds`, stopping at the first violation found: the structural
/// walk (nodes, depth and keys in document order) first, then the encoded size, which stops
/// serializing as soon as the bound is passed.
pub fn check_bounds(value: &Value, bounds: Bounds) -> Result<(), BoundsError> {
    Walk::new(bounds).visit(value, 0)?;
    let mut counter = ByteCounter::new(bounds.max_bytes);
    // A serialization error can only come from the counter refusing further bytes.
    if serde_json::to_writer(&mut counter, value).is_err() || counter.exceeded {
        return Err(BoundsError::TooManyBytes {
            max: bounds.max_bytes,
        });
    }
    Ok(())
}

/// A structural walk that counts nodes, tracks depth and keys, and stops at a bound.
struct Walk {
    bounds: Bounds,
    nodes: usize,
    depth: usize,
    longest_key_bytes: usize,
}

impl Walk {
    fn new(bounds: Bounds) -> Walk {
        Walk {
            bounds,
            nodes: 0,
            depth: 0,
            longest_key_bytes: 0,
        }
    }

    /// Visits `value`, whose enclosing containers number `outer`.
    fn visit(&mut self, value: &Value, outer: usize) -> Result<(), BoundsError> {
        self.nodes += 1;
        if self.nodes > self.bounds.max_nodes {
            return Err(BoundsError::TooManyNodes {
                max: self.bounds.max_nodes,
            });
        }
        let depth = match value {
            Value::Array(_) | Value::Object(_) => outer + 1,
            _ => return Ok(()),
        };
        if depth > self.bounds.max_depth {
            return Err(BoundsError::TooDeep {
                max: self.bounds.max_depth,
            });
        }
        self.depth = self.depth.max(depth);
        match value {
            Value::Array(items) => {
                for item in items {
                    self.visit(item, depth)?;
                }
            }
            Value::Object(members) => {
                for (key, member) in members {
                    if key.len() > self.bounds.max_key_bytes {
                        return Err(BoundsError::KeyTooLong {
                            key_bytes: key.len(),
                            max: self.bounds.max_key_bytes,
                        });
                    }
                    self.longest_key_bytes = self.longest_key_bytes.max(key.len());
                    self.visit(member, depth)?;
                }
            }
            _ => {}
        }
        Ok(())
    }
}

/// An `io::Write` that only counts bytes and refuses to go past a limit.
struct ByteCounter {
    limit: usize,
    count: usize,
    exceeded: bool,
}

impl ByteCounter {
    fn new(limit: usize) -> ByteCounter {
        ByteCounter {
            limit,
            count: 0,
            exceeded: false,
        }
    }
}

impl io::Write for ByteCounter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.count = self.count.saturating_add(buf.len());
        if self.count > self.limit {
            self.exceeded = true;
            return Err(io::Error::other("encoded size bound exceeded"));
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn nested_arrays(levels: usize) -> Value {
        let mut value = json!(1);
        for _ in 0..levels {
            value = Value::Array(vec![value]);
        }
        value
    }

    #[test]
    fn measure_matches_the_definitions() {
        let value = json!({"a": [1, {"bcd": null}], "é": "x\"y"});
        let measured = measure(&value);
        assert_eq!(measured.bytes, serde_json::to_string(&value).unwrap().len());
        assert_eq!(measured.depth, 3);
        // The object, the array, 1, the inner object, null, and "x\"y".
        assert_eq!(measured.nodes, 6);
        assert_eq!(measured.longest_key_bytes, 3);
        assert_eq!(measure(&json!("scalar")).depth, 0);
        assert_eq!(measure(&json!([])).depth, 1);
        assert_eq!(measure(&json!({"é": 1})).longest_key_bytes, 2);
    }

    #[test]
    fn encoded_len_counts_escapes() {
        let value = json!("line\nbreak");
        assert_eq!(encoded_len(&value), "\"line\\nbreak\"".len());
    }

    #[test]
    fn byte_bound_is_inclusive() {
        let value = json!({"k": "abc"});
        let exact = encoded_len(&value);
        assert_eq!(check_bounds(&value, Bounds::bytes_only(exact)), Ok(()));
        assert_eq!(
            check_bounds(&value, Bounds::bytes_only(exact - 1)),
            Err(BoundsError::TooManyBytes { max: exact - 1 })
        );
    }

    #[test]
    fn depth_bound_is_inclusive() {
        let bounds = Bounds {
            max_depth: 32,
            ..Bounds::UNLIMITED
        };
        assert_eq!(check_bounds(&nested_arrays(32), bounds), Ok(()));
        assert_eq!(
            check_bounds(&nested_arrays(33), bounds),
            Err(BoundsError::TooDeep { max: 32 })
        );
    }

    #[test]
    fn node_bound_is_inclusive() {
        let bounds = Bounds {
            max_nodes: 4,
            ..Bounds::UNLIMITED
        };
        assert_eq!(check_bounds(&json!([1, 2, 3]), bounds), Ok(()));
        assert_eq!(
            check_bounds(&json!([1, 2, 3, 4]), bounds),
            Err(BoundsError::TooManyNodes { max: 4 })
        );
    }

    #[test]
    fn key_bound_applies_at_any_depth() {
        let bounds = Bounds {
            max_key_bytes: 3,
            ..Bounds::UNLIMITED
        };
        assert_eq!(check_bounds(&json!({"abc": {"xyz": 1}}), bounds), Ok(()));
        assert_eq!(
            check_bounds(&json!({"abc": [{"wxyz": 1}]}), bounds),
            Err(BoundsError::KeyTooLong {
                key_bytes: 4,
                max: 3
            })
        );
    }

    #[test]
    fn metadata_bounds_match_section_1_2() {
        let at_limit = json!({"k".repeat(256): 1});
        assert_eq!(check_bounds(&at_limit, Bounds::METADATA), Ok(()));
        let over = json!({"k".repeat(257): 1});
        assert!(matches!(
            check_bounds(&over, Bounds::METADATA),
            Err(BoundsError::KeyTooLong { .. })
        ));
        // A string whose encoding is one byte over 64 KiB.
        let big = Value::String("x".repeat(64 * 1024 - 1));
        assert!(matches!(
            check_bounds(&big, Bounds::METADATA),
            Err(BoundsError::TooManyBytes { .. })
        ));
        let fits = Value::String("x".repeat(64 * 1024 - 2));
        assert_eq!(check_bounds(&fits, Bounds::METADATA), Ok(()));
    }

    #[test]
    fn node_bound_of_structured_content() {
        let fits = Value::Array(vec![json!(0); MAX_JSON_NODES - 1]);
        assert_eq!(check_bounds(&fits, Bounds::STRUCTURED_CONTENT), Ok(()));
        let over = Value::Array(vec![json!(0); MAX_JSON_NODES]);
        assert_eq!(
            check_bounds(&over, Bounds::STRUCTURED_CONTENT),
            Err(BoundsError::TooManyNodes {
                max: MAX_JSON_NODES
            })
        );
    }
}
