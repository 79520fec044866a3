//! A JSON-RPC frame's envelope, read without building a map for it.
//!
//! Parsing a frame into a `Value` and then taking the members out of its map costs a
//! map and one string per member name (and one for `"2.0"`) on every frame.
//! [`Envelope`] reads the members straight into their places instead. The result is
//! the same as parsing into a `Value` first, for every input:
//!
//! - a member given twice keeps its last value, as a `Value` map would;
//! - members the envelope does not know are still parsed into a `Value` and then
//!   dropped, so they are checked exactly as strictly (invalid UTF-8 inside one is
//!   still an error);
//! - a frame whose first token is not `{` is left to the `Value` path
//!   ([`super::message::decode`] does that), so its errors read the same.
//!
//! `tests/json_conformance.rs` checks the equivalence on every JSONTestSuite file, and
//! the unit tests below on the reference's frames.

use std::fmt;
use std::marker::PhantomData;

use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// The members of a JSON-RPC envelope, each as given (`None` when absent). `params`
/// is read as a `P`: a `Value`, or (for the SDK's reader) a `wire::deferred::ContextDeferred`
/// that keeps its `context` member as JSON text.
#[derive(Debug)]
pub(crate) struct Envelope<P = Value> {
    /// `Some(true)` when `jsonrpc` is exactly the string `"2.0"`.
    pub jsonrpc: Option<bool>,
    pub method: Option<Value>,
    pub id: Option<Value>,
    pub params: Option<P>,
    pub result: Option<Value>,
    pub error: Option<Value>,
}

impl<P> Default for Envelope<P> {
    fn default() -> Envelope<P> {
        Envelope {
            jsonrpc: None,
            method: None,
            id: None,
            params: None,
            result: None,
            error: None,
        }
    }
}

impl<P> Envelope<P> {
    /// The same envelope with its `params` turned into a `Q` by `f`.
    #[cfg(feature = "sdk")]
    pub fn map_params<Q>(self, f: impl FnOnce(P) -> Q) -> Envelope<Q> {
        Envelope {
            jsonrpc: self.jsonrpc,
            method: self.method,
            id: self.id,
            params: self.params.map(f),
            result: self.result,
            error: self.error,
        }
    }
}

impl Envelope {
    /// Takes the envelope's members out of an already parsed object.
    pub fn from_map(mut map: Map<String, Value>) -> Envelope {
        Envelope {
            jsonrpc: map
                .get("jsonrpc")
                .map(|v| matches!(v, Value::String(s) if s == "2.0")),
            method: map.remove("method"),
            id: map.remove("id"),
            params: map.remove("params"),
            result: map.remove("result"),
            error: map.remove("error"),
        }
    }
}

impl<'de, P: Deserialize<'de>> Deserialize<'de> for Envelope<P> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Envelope<P>, D::Error> {
        deserializer.deserialize_map(EnvelopeVisitor(PhantomData))
    }
}

struct EnvelopeVisitor<P>(PhantomData<P>);

impl<'de, P: Deserialize<'de>> Visitor<'de> for EnvelopeVisitor<P> {
    type Value = Envelope<P>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON-RPC object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Envelope<P>, A::Error> {
        let mut envelope = Envelope::default();
        while let Some(member) = map.next_key::<Member>()? {
            match member {
                Member::Jsonrpc => {
                    envelope.jsonrpc = Some(map.next_value::<IsVersion>()?.0);
                }
                Member::Method => envelope.method = Some(map.next_value()?),
                Member::Id => envelope.id = Some(map.next_value()?),
                Member::Params => envelope.params = Some(map.next_value()?),
                Member::Result => envelope.result = Some(map.next_value()?),
                Member::Error => envelope.error = Some(map.next_value()?),
                Member::Other => {
                    map.next_value::<Value>()?;
                }
            }
        }
        Ok(envelope)
    }
}

/// A member name of the envelope.
enum Member {
    Jsonrpc,
    Method,
    Id,
    Params,
    Result,
    Error,
    Other,
}

impl<'de> Deserialize<'de> for Member {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Member, D::Error> {
        deserializer.deserialize_str(MemberVisitor)
    }
}

struct MemberVisitor;

impl Visitor<'_> for MemberVisitor {
    type Value = Member;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a member name")
    }

    fn visit_str<E: de::Error>(self, name: &str) -> Result<Member, E> {
        Ok(match name {
            "jsonrpc" => Member::Jsonrpc,
            "method" => Member::Method,
            "id" => Member::Id,
            "params" => Member::Params,
            "result" => Member::Result,
            "error" => Member::Error,
            _ => Member::Other,
        })
    }
}

/// Whether a value is exactly the string `"2.0"`; any other JSON value is parsed (and
/// checked) and answers false.
struct IsVersion(bool);

impl<'de> Deserialize<'de> for IsVersion {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<IsVersion, D::Error> {
        deserializer.deserialize_any(IsVersionVisitor)
    }
}

struct IsVersionVisitor;

impl<'de> Visitor<'de> for IsVersionVisitor {
    type Value = IsVersion;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<IsVersion, E> {
        Ok(IsVersion(v == "2.0"))
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<IsVersion, E> {
        Ok(IsVersion(false))
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<IsVersion, E> {
        Ok(IsVersion(false))
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<IsVersion, E> {
        Ok(IsVersion(false))
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<IsVersion, E> {
        Ok(IsVersion(false))
    }

    fn visit_unit<E: de::Error>(self) -> Result<IsVersion, E> {
        Ok(IsVersion(false))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<IsVersion, A::Error> {
        Value::deserialize(MapAccessDeserializer::new(map))?;
        Ok(IsVersion(false))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<IsVersion, A::Error> {
        Value::deserialize(SeqAccessDeserializer::new(seq))?;
        Ok(IsVersion(false))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn both(frame: &str) -> (Envelope, Envelope) {
        let typed: Envelope = serde_json::from_str(frame).unwrap();
        let Value::Object(map) = serde_json::from_str(frame).unwrap() else {
            panic!("not an object: {frame}");
        };
        (typed, Envelope::from_map(map))
    }

    #[test]
    fn typed_and_map_envelopes_agree() {
        for frame in [
            r#"{"jsonrpc":"2.0","id":1,"result":{"content":[]}}"#,
            r#"{"jsonrpc":"2.0","method":"$/progress","params":{"token":"t","value":1}}"#,
            r#"{"jsonrpc":"2.0","id":"a","method":"ui/confirm","params":[1]}"#,
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}"#,
            r#"{"jsonrpc":"1.0","id":1,"result":null}"#,
            r#"{"jsonrpc":2,"id":1,"result":null}"#,
            r#"{"jsonrpc":{"v":"2.0"},"id":[1],"result":null,"extra":{"a":[1,2]}}"#,
            r#"{"jsonrpc":"2\u002e0","id":1,"result":1}"#,
            r#"{"jsonrpc":"2.0","jsonrpc":"1.0","id":1,"id":2,"result":1}"#,
            r#"{"jsonrpc":"1.0","jsonrpc":"2.0","method":5}"#,
            r#"{"\u006asonrpc":"2.0","m\u0065thod":"x"}"#,
            r#"{}"#,
        ] {
            let (typed, map) = both(frame);
            assert_eq!(format!("{typed:?}"), format!("{map:?}"), "{frame}");
        }
    }

    #[test]
    fn unknown_members_are_checked_as_strictly_as_by_a_value() {
        let frame = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":1,\"x\":\"\xff\"}";
        assert!(serde_json::from_slice::<Envelope>(frame).is_err());
        assert!(serde_json::from_slice::<Value>(frame).is_err());
        let deep = format!("{{\"x\":{}1{}}}", "[".repeat(200), "]".repeat(200));
        assert!(serde_json::from_str::<Envelope>(&deep).is_err());
        assert!(serde_json::from_str::<Value>(&deep).is_err());
    }
}
