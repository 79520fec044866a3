//! The closed params of the `composition/*` requests (section 2.25, SUPPLEMENT "2.25
//! composition details"), read by hand so that a refusal names the member and bound.

use serde_json::{Map, Value};

use crate::limits::{
    MAX_COMPOSITION_ARGUMENTS_BYTES, MAX_COMPOSITION_ARGUMENTS_DEPTH, MAX_COMPOSITION_STORE_KEYS,
    MAX_COMPOSITION_STORE_KEY_BYTES, MAX_COMPOSITION_STORE_VALUE_BYTES,
    MAX_COMPOSITION_TOOL_NAME_BYTES,
};
use crate::validate::{encoded_len, measure};

/// `composition/call` params.
#[derive(Clone, Debug, PartialEq)]
pub struct CallParams {
    /// The live model `tool/call` the program runs under.
    pub parent_request_id: u64,
    /// An exact frozen tool name.
    pub name: String,
    /// The nested call's arguments: an object unless `full_outcome` (then any JSON,
    /// refused as a host-created error outcome when not an object).
    pub arguments: Value,
    /// Answer with the complete outcome (`tool_call`, ordered content, `is_error`...).
    pub full_outcome: bool,
    /// Relay the nested call's partial results as `composition/update` (needs
    /// `full_outcome`).
    pub updates: bool,
}

/// `composition/store` params: the one write batch of a parent.
#[derive(Clone, Debug, PartialEq)]
pub struct StoreParams {
    /// The live model `tool/call` the program ran under.
    pub parent_request_id: u64,
    /// Keys to set, with their values.
    pub set: Map<String, Value>,
    /// Keys to delete.
    pub delete: Vec<String>,
}

/// Why params were refused (answered -32602 with these words).
pub type ParamsError = String;

fn object<'a>(params: &'a Value, allowed: &[&str]) -> Result<&'a Map<String, Value>, ParamsError> {
    let map = params.as_object().ok_or("params must be an object")?;
    if let Some(key) = map.keys().find(|k| !allowed.contains(&k.as_str())) {
        return Err(format!("params has an unknown member `{key}`"));
    }
    Ok(map)
}

/// `parent_request_id`: required, a non-negative integer.
pub fn parent_of(params: &Value) -> Result<u64, ParamsError> {
    params
        .get("parent_request_id")
        .and_then(Value::as_u64)
        .ok_or_else(|| "parent_request_id must be the numeric id of a live tool/call".into())
}

fn flag(map: &Map<String, Value>, key: &str) -> Result<bool, ParamsError> {
    match map.get(key) {
        None => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(format!("{key} must be a boolean")),
    }
}

/// `composition/context` params: `{parent_request_id}` and nothing else.
pub fn context(params: &Value) -> Result<u64, ParamsError> {
    object(params, &["parent_request_id"])?;
    parent_of(params)
}

/// `composition/call` params, with the name and argument bounds.
pub fn call(params: &Value) -> Result<CallParams, ParamsError> {
    let map = object(
        params,
        &[
            "parent_request_id",
            "name",
            "arguments",
            "full_outcome",
            "updates",
        ],
    )?;
    let parent_request_id = parent_of(params)?;
    let name = match map.get("name") {
        Some(Value::String(name))
            if !name.is_empty() && name.len() <= MAX_COMPOSITION_TOOL_NAME_BYTES =>
        {
            name.clone()
        }
        _ => {
            return Err(format!(
                "name must be a frozen tool name of 1 to {MAX_COMPOSITION_TOOL_NAME_BYTES} bytes"
            ))
        }
    };
    let full_outcome = flag(map, "full_outcome")?;
    let updates = flag(map, "updates")?;
    if updates && !full_outcome {
        return Err("updates needs full_outcome".into());
    }
    let arguments = map.get("arguments").cloned().unwrap_or(Value::Null);
    if !full_outcome && !arguments.is_object() {
        return Err("arguments must be an object".into());
    }
    let bytes = encoded_len(&arguments);
    if bytes > MAX_COMPOSITION_ARGUMENTS_BYTES {
        return Err(format!(
            "arguments are {bytes} bytes encoded, more than the {MAX_COMPOSITION_ARGUMENTS_BYTES} allowed"
        ));
    }
    let depth = measure(&arguments).depth;
    if depth > MAX_COMPOSITION_ARGUMENTS_DEPTH {
        return Err(format!(
            "arguments nest {depth} levels deep, more than the {MAX_COMPOSITION_ARGUMENTS_DEPTH} allowed"
        ));
    }
    Ok(CallParams {
        parent_request_id,
        name,
        arguments,
        full_outcome,
        updates,
    })
}

/// `composition/store` params, with the batch, key and value bounds (the bound of the
/// whole store is the store's to check).
pub fn store(params: &Value) -> Result<StoreParams, ParamsError> {
    let map = object(params, &["parent_request_id", "set", "delete"])?;
    let parent_request_id = parent_of(params)?;
    let set = match map.get("set") {
        None => Map::new(),
        Some(Value::Object(set)) => set.clone(),
        Some(_) => return Err("set must be an object of keys and values".into()),
    };
    let delete = match map.get("delete") {
        None => Vec::new(),
        Some(Value::Array(keys)) => keys
            .iter()
            .map(|k| {
                k.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| "delete must be a list of keys".to_string())
            })
            .collect::<Result<_, _>>()?,
        Some(_) => return Err("delete must be a list of keys".into()),
    };
    if set.len() + delete.len() > MAX_COMPOSITION_STORE_KEYS {
        return Err(format!(
            "a write batch has at most {MAX_COMPOSITION_STORE_KEYS} keys; this one has {}",
            set.len() + delete.len()
        ));
    }
    for key in set.keys().chain(delete.iter()) {
        if key.is_empty() || key.len() > MAX_COMPOSITION_STORE_KEY_BYTES {
            return Err(format!(
                "a store key is 1 to {MAX_COMPOSITION_STORE_KEY_BYTES} bytes"
            ));
        }
    }
    for (key, value) in &set {
        let bytes = encoded_len(value);
        if bytes > MAX_COMPOSITION_STORE_VALUE_BYTES {
            return Err(format!(
                "the value of `{key}` is {bytes} bytes encoded, more than the \
                 {MAX_COMPOSITION_STORE_VALUE_BYTES} allowed"
            ));
        }
    }
    Ok(StoreParams {
        parent_request_id,
        set,
        delete,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn call_params_are_closed_and_bounded() {
        let ok = call(&json!({"parent_request_id": 2, "name": "read", "arguments": {"p": 1}}));
        assert_eq!(ok.unwrap().name, "read");
        for bad in [
            json!({"parent_request_id": 2, "name": "", "arguments": {}}),
            json!({"parent_request_id": 2, "name": "x".repeat(129), "arguments": {}}),
            json!({"parent_request_id": 2, "name": "r", "arguments": []}),
            json!({"parent_request_id": 2, "name": "r", "arguments": {}, "updates": true}),
            json!({"parent_request_id": 2, "name": "r", "arguments": {}, "extra": 1}),
            json!({"parent_request_id": "2", "name": "r", "arguments": {}}),
            json!({"parent_request_id": 2, "name": "r", "arguments": {"a": "x".repeat(128 * 1024)}}),
        ] {
            assert!(call(&bad).is_err(), "{bad}");
        }
        let mut deep = json!({});
        for _ in 0..32 {
            deep = json!({ "d": deep });
        }
        let error = call(&json!({"parent_request_id": 2, "name": "r", "arguments": deep}));
        assert!(error.unwrap_err().contains("levels deep"));
        // Raw arguments are admitted only for complete outcomes.
        let raw = call(
            &json!({"parent_request_id": 2, "name": "r", "arguments": [1],
                              "full_outcome": true, "updates": true}),
        );
        assert!(raw.is_ok());
    }

    #[test]
    fn store_params_bound_the_batch_keys_and_values() {
        let ok = store(&json!({"parent_request_id": 1, "set": {"a": 1}, "delete": ["b"]}));
        assert_eq!(ok.unwrap().delete, vec!["b".to_string()]);
        let keys: Map<String, Value> = (0..4097).map(|n| (format!("k{n}"), json!(n))).collect();
        assert!(store(&json!({"parent_request_id": 1, "set": keys})).is_err());
        let long = "k".repeat(1025);
        assert!(store(&json!({"parent_request_id": 1, "delete": [long]})).is_err());
        let big = json!({"parent_request_id": 1, "set": {"a": "x".repeat(256 * 1024)}});
        assert!(store(&big).is_err());
        assert!(store(&json!({"parent_request_id": 1, "set": [], "x": 1})).is_err());
    }
}
