//! The `intent` of a `policy/evaluate` request (section 2.9): its parsing, bounds and
//! canonical digest.
//!
//! # Shape
//!
//! The intent is a closed object; any other member is rejected.
//!
//! - `kind` (required): a non-empty string of at most [`MAX_INTENT_STRING_BYTES`]
//!   UTF-8 bytes without control characters, such as `"external_side_effect"`.
//! - `operation` (required): the same rules, such as `"browser.submit_form"`. The host
//!   classifies by it.
//! - `target` (optional): an object, at most [`MAX_INTENT_TARGET_BYTES`] as compact JSON
//!   and nested at most [`MAX_INTENT_TARGET_DEPTH`] deep; its members are free-form.
//! - `data_classes` (optional): an array of at most [`MAX_INTENT_DATA_CLASSES`]
//!   duplicate-free strings, each following the `kind` rules.
//! - `adapter_hints` (optional): a closed object with optional booleans `read_only` and
//!   `destructive`.
//!
//! An optional member may be absent but not `null`. The reference shows the shape only
//! by example; which members are required and every bound above are this host's
//! choices.
//!
//! # Canonical digest
//!
//! An approval token is bound to the intent it was issued for, compared as the SHA-256
//! digest of a canonical encoding of the intent object exactly as received (so member
//! order and whitespace do not matter, but an added, removed or changed member does,
//! `adapter_hints: {}` included). The encoding is `octet-canonical-json-v1`
//! ([`encode_canonical`]) whenever the intent can be written in it. An intent holding a
//! number that encoding refuses (a fraction or exponent, or an integer beyond
//! +-(2^53-1)) uses a deterministic fallback instead: the same sorted-key, whitespace-free
//! layout, with every number written as `serde_json` displays it and strings escaped as
//! `serde_json` escapes them. The digest input starts with a tag naming the encoding, so
//! the two can never collide.
//!
//! [`MAX_INTENT_STRING_BYTES`]: crate::limits::MAX_INTENT_STRING_BYTES
//! [`MAX_INTENT_TARGET_BYTES`]: crate::limits::MAX_INTENT_TARGET_BYTES
//! [`MAX_INTENT_TARGET_DEPTH`]: crate::limits::MAX_INTENT_TARGET_DEPTH
//! [`MAX_INTENT_DATA_CLASSES`]: crate::limits::MAX_INTENT_DATA_CLASSES

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::limits::{
    MAX_INTENT_DATA_CLASSES, MAX_INTENT_STRING_BYTES, MAX_INTENT_TARGET_BYTES,
    MAX_INTENT_TARGET_DEPTH,
};
use crate::services::operation::{check_label, closed_object, required_str, ParamsError};
use crate::wire::canonical::encode_canonical;

/// The digest-input tag of an intent written in `octet-canonical-json-v1`.
const CANONICAL_TAG: &[u8] = b"octet-canonical-json-v1\0";

/// The digest-input tag of an intent written with the fallback encoding.
const FALLBACK_TAG: &[u8] = b"octet-host-intent-fallback-v1\0";

/// A validated policy intent (section 2.9).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Intent {
    kind: String,
    operation: String,
    target: Option<Map<String, Value>>,
    data_classes: Vec<String>,
    adapter_hints: AdapterHints,
    digest: [u8; 32],
}

/// The extension's own description of an action. Hints can only make the host more
/// cautious; they never authorize anything (section 2.9).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AdapterHints {
    /// `adapter_hints.read_only`, when given.
    pub read_only: Option<bool>,
    /// `adapter_hints.destructive`, when given.
    pub destructive: Option<bool>,
}

impl Intent {
    /// Parses and validates an intent (see the module documentation for the shape).
    pub fn parse(value: &Value) -> Result<Intent, ParamsError> {
        let map = closed_object(
            value,
            "intent",
            &[
                "kind",
                "operation",
                "target",
                "data_classes",
                "adapter_hints",
            ],
        )?;
        let kind = required_str(map, "kind", "intent.kind")?;
        check_label(kind, "intent.kind", MAX_INTENT_STRING_BYTES)?;
        let operation = required_str(map, "operation", "intent.operation")?;
        check_label(operation, "intent.operation", MAX_INTENT_STRING_BYTES)?;
        let target = match map.get("target") {
            None => None,
            Some(target) => Some(parse_target(target)?),
        };
        let data_classes = match map.get("data_classes") {
            None => Vec::new(),
            Some(classes) => parse_data_classes(classes)?,
        };
        let adapter_hints = match map.get("adapter_hints") {
            None => AdapterHints::default(),
            Some(hints) => parse_hints(hints)?,
        };
        Ok(Intent {
            kind: kind.to_owned(),
            operation: operation.to_owned(),
            target,
            data_classes,
            adapter_hints,
            digest: digest(value),
        })
    }

    /// `kind`.
    pub fn kind(&self) -> &str {
        &self.kind
    }

    /// `operation`.
    pub fn operation(&self) -> &str {
        &self.operation
    }

    /// `target`, when given.
    pub fn target(&self) -> Option<&Map<String, Value>> {
        self.target.as_ref()
    }

    /// `data_classes`, empty when not given.
    pub fn data_classes(&self) -> &[String] {
        &self.data_classes
    }

    /// `adapter_hints`, all `None` when not given.
    pub fn adapter_hints(&self) -> AdapterHints {
        self.adapter_hints
    }

    /// The SHA-256 digest of the intent's canonical encoding (see the module
    /// documentation). Two intents have the same digest exactly when they are the same
    /// JSON value.
    pub fn canonical_digest(&self) -> [u8; 32] {
        self.digest
    }
}

/// Validates `intent.target`.
fn parse_target(target: &Value) -> Result<Map<String, Value>, ParamsError> {
    let member = "intent.target";
    let Value::Object(map) = target else {
        return Err(ParamsError::WrongType { member });
    };
    if depth(target) > MAX_INTENT_TARGET_DEPTH {
        return Err(ParamsError::TooDeep {
            member,
            max: MAX_INTENT_TARGET_DEPTH,
        });
    }
    // Serializing a `Value` cannot fail: its keys are strings and its numbers finite.
    let encoded = serde_json::to_vec(target).unwrap_or_default();
    if encoded.len() > MAX_INTENT_TARGET_BYTES {
        return Err(ParamsError::TooLong {
            member,
            max: MAX_INTENT_TARGET_BYTES,
        });
    }
    Ok(map.clone())
}

/// Validates `intent.data_classes`.
fn parse_data_classes(classes: &Value) -> Result<Vec<String>, ParamsError> {
    let member = "intent.data_classes";
    let Value::Array(elements) = classes else {
        return Err(ParamsError::WrongType { member });
    };
    if elements.len() > MAX_INTENT_DATA_CLASSES {
        return Err(ParamsError::TooMany {
            member,
            max: MAX_INTENT_DATA_CLASSES,
        });
    }
    let mut out: Vec<String> = Vec::with_capacity(elements.len());
    for element in elements {
        let Value::String(class) = element else {
            return Err(ParamsError::WrongType { member });
        };
        check_label(class, member, MAX_INTENT_STRING_BYTES)?;
        if out.contains(class) {
            return Err(ParamsError::Duplicate { member });
        }
        out.push(class.clone());
    }
    Ok(out)
}

/// Validates `intent.adapter_hints`.
fn parse_hints(hints: &Value) -> Result<AdapterHints, ParamsError> {
    let map = closed_object(hints, "intent.adapter_hints", &["read_only", "destructive"])?;
    let flag = |key: &str, member: &'static str| match map.get(key) {
        None => Ok(None),
        Some(Value::Bool(flag)) => Ok(Some(*flag)),
        Some(_) => Err(ParamsError::WrongType { member }),
    };
    Ok(AdapterHints {
        read_only: flag("read_only", "intent.adapter_hints.read_only")?,
        destructive: flag("destructive", "intent.adapter_hints.destructive")?,
    })
}

/// The nesting depth of `value`: 0 for a scalar, 1 for `{}` or `[]`.
fn depth(value: &Value) -> usize {
    match value {
        Value::Array(elements) => 1 + elements.iter().map(depth).max().unwrap_or(0),
        Value::Object(map) => 1 + map.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

/// The tagged canonical digest of a validated intent object.
fn digest(intent: &Value) -> [u8; 32] {
    let mut bytes = Vec::new();
    let mut hasher = Sha256::new();
    if encode_canonical(intent, &mut bytes).is_ok() {
        hasher.update(CANONICAL_TAG);
    } else {
        bytes.clear();
        write_fallback(intent, &mut bytes);
        hasher.update(FALLBACK_TAG);
    }
    hasher.update(&bytes);
    hasher.finalize().into()
}

/// Writes the fallback encoding: keys sorted by UTF-8 bytes, no whitespace, numbers and
/// strings as `serde_json` displays them.
fn write_fallback(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
            out.push(b'{');
            for (index, key) in keys.into_iter().enumerate() {
                if index > 0 {
                    out.push(b',');
                }
                write_fallback_string(key, out);
                out.push(b':');
                write_fallback(&map[key.as_str()], out);
            }
            out.push(b'}');
        }
        Value::Array(elements) => {
            out.push(b'[');
            for (index, element) in elements.iter().enumerate() {
                if index > 0 {
                    out.push(b',');
                }
                write_fallback(element, out);
            }
            out.push(b']');
        }
        Value::String(text) => write_fallback_string(text, out),
        Value::Number(number) => out.extend_from_slice(number.to_string().as_bytes()),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Null => out.extend_from_slice(b"null"),
    }
}

/// Writes a JSON string literal as `serde_json` escapes it.
fn write_fallback_string(text: &str, out: &mut Vec<u8>) {
    // Serializing a `str` cannot fail.
    out.extend_from_slice(&serde_json::to_vec(text).unwrap_or_default());
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn example() -> Value {
        json!({
            "kind": "external_side_effect",
            "operation": "browser.submit_form",
            "target": {"origin": "https://example.com", "label": "Publish comment"},
            "data_classes": ["user_text"],
            "adapter_hints": {"read_only": false, "destructive": false}
        })
    }

    #[test]
    fn parses_the_reference_example() {
        let intent = Intent::parse(&example()).unwrap();
        assert_eq!(intent.kind(), "external_side_effect");
        assert_eq!(intent.operation(), "browser.submit_form");
        assert_eq!(intent.target().unwrap()["origin"], "https://example.com");
        assert_eq!(intent.data_classes(), ["user_text"]);
        assert_eq!(
            intent.adapter_hints(),
            AdapterHints {
                read_only: Some(false),
                destructive: Some(false)
            }
        );
    }

    #[test]
    fn only_kind_and_operation_are_required() {
        let intent = Intent::parse(&json!({"kind": "k", "operation": "o"})).unwrap();
        assert_eq!(intent.target(), None);
        assert!(intent.data_classes().is_empty());
        assert_eq!(intent.adapter_hints(), AdapterHints::default());
        assert_eq!(
            Intent::parse(&json!({"kind": "k"})),
            Err(ParamsError::Missing {
                member: "intent.operation"
            })
        );
        assert_eq!(
            Intent::parse(&json!({"operation": "o"})),
            Err(ParamsError::Missing {
                member: "intent.kind"
            })
        );
    }

    #[test]
    fn rejects_what_breaks_the_bounds() {
        let with = |key: &str, value: Value| {
            let mut intent = example();
            intent[key] = value;
            Intent::parse(&intent)
        };
        let long = "x".repeat(MAX_INTENT_STRING_BYTES + 1);
        assert!(with("operation", json!("x".repeat(MAX_INTENT_STRING_BYTES))).is_ok());
        assert_eq!(
            with("operation", json!(long)),
            Err(ParamsError::TooLong {
                member: "intent.operation",
                max: MAX_INTENT_STRING_BYTES
            })
        );
        assert_eq!(
            with("kind", json!("")),
            Err(ParamsError::Empty {
                member: "intent.kind"
            })
        );
        assert_eq!(
            with("kind", json!("a\nb")),
            Err(ParamsError::ControlCharacter {
                member: "intent.kind"
            })
        );
        assert_eq!(
            with("target", Value::Null),
            Err(ParamsError::WrongType {
                member: "intent.target"
            })
        );
        assert_eq!(
            with(
                "target",
                json!({ "big": "x".repeat(MAX_INTENT_TARGET_BYTES) })
            ),
            Err(ParamsError::TooLong {
                member: "intent.target",
                max: MAX_INTENT_TARGET_BYTES
            })
        );
        let mut deep = json!({});
        for _ in 0..MAX_INTENT_TARGET_DEPTH {
            deep = json!({ "d": deep });
        }
        assert_eq!(
            with("target", deep),
            Err(ParamsError::TooDeep {
                member: "intent.target",
                max: MAX_INTENT_TARGET_DEPTH
            })
        );
        let classes: Vec<String> = (0..=MAX_INTENT_DATA_CLASSES)
            .map(|i| format!("c{i}"))
            .collect();
        assert_eq!(
            with("data_classes", json!(classes)),
            Err(ParamsError::TooMany {
                member: "intent.data_classes",
                max: MAX_INTENT_DATA_CLASSES
            })
        );
        assert_eq!(
            with("data_classes", json!(["a", "a"])),
            Err(ParamsError::Duplicate {
                member: "intent.data_classes"
            })
        );
        assert_eq!(
            with("data_classes", json!([1])),
            Err(ParamsError::WrongType {
                member: "intent.data_classes"
            })
        );
        assert_eq!(
            with("adapter_hints", json!({"read_only": true, "safe": true})),
            Err(ParamsError::UnknownMember {
                object: "intent.adapter_hints"
            })
        );
        assert_eq!(
            with("adapter_hints", json!({"destructive": "no"})),
            Err(ParamsError::WrongType {
                member: "intent.adapter_hints.destructive"
            })
        );
        assert_eq!(
            with("extra", json!(1)),
            Err(ParamsError::UnknownMember { object: "intent" })
        );
        assert_eq!(
            Intent::parse(&json!("intent")),
            Err(ParamsError::WrongType { member: "intent" })
        );
    }

    #[test]
    fn the_digest_ignores_member_order_but_not_content() {
        let a = Intent::parse(&example()).unwrap();
        let reordered: Value = serde_json::from_str(
            r#"{"adapter_hints":{"destructive":false,"read_only":false},
                "data_classes":["user_text"],"operation":"browser.submit_form",
                "target":{"label":"Publish comment","origin":"https://example.com"},
                "kind":"external_side_effect"}"#,
        )
        .unwrap();
        assert_eq!(
            Intent::parse(&reordered).unwrap().canonical_digest(),
            a.canonical_digest()
        );
        let mut changed = example();
        changed["target"]["label"] = json!("Delete comment");
        assert_ne!(
            Intent::parse(&changed).unwrap().canonical_digest(),
            a.canonical_digest()
        );
        let mut without_hints = example();
        without_hints
            .as_object_mut()
            .unwrap()
            .remove("adapter_hints");
        assert_ne!(
            Intent::parse(&without_hints).unwrap().canonical_digest(),
            a.canonical_digest()
        );
    }

    #[test]
    fn floats_use_the_deterministic_fallback() {
        let with_float = |x: Value| {
            let mut intent = example();
            intent["target"]["amount"] = x;
            Intent::parse(&intent).unwrap().canonical_digest()
        };
        assert_eq!(with_float(json!(1.5)), with_float(json!(1.5)));
        assert_ne!(with_float(json!(1.5)), with_float(json!(2.5)));
        assert_ne!(with_float(json!(1.0)), with_float(json!(1)));
        let big = with_float(json!(u64::MAX));
        assert_eq!(big, with_float(json!(u64::MAX)));
        assert_ne!(big, with_float(json!(u64::MAX - 1)));

        let mut fallback = Vec::new();
        write_fallback(
            &json!({"b": [1.5, "q\""], "a": null, "\u{e9}": true}),
            &mut fallback,
        );
        assert_eq!(
            String::from_utf8(fallback).unwrap(),
            "{\"a\":null,\"b\":[1.5,\"q\\\"\"],\"\u{e9}\":true}"
        );
    }
}
