//! Typed access to the members of a control line's object: every error names the
//! member (with its path) and the rule, never the value that was sent.

use serde_json::{Map, Value};

use super::error::ServeError;

/// Typed access to the members of one object; `prefix` qualifies member names in
/// errors (such as `payload.`). A member set to `null` counts as absent.
pub(crate) struct Fields<'a> {
    pub object: &'a Map<String, Value>,
    pub prefix: &'static str,
}

impl<'a> Fields<'a> {
    pub fn new(object: &'a Map<String, Value>, prefix: &'static str) -> Fields<'a> {
        Fields { object, prefix }
    }

    pub fn name(&self, name: &str) -> String {
        format!("{}{name}", self.prefix)
    }

    pub fn get(&self, name: &str) -> Option<&'a Value> {
        self.object.get(name).filter(|v| !v.is_null())
    }

    pub fn required(&self, name: &str) -> Result<&'a Value, ServeError> {
        self.get(name)
            .ok_or_else(|| ServeError::missing(&self.name(name)))
    }

    pub fn string(&self, name: &str) -> Result<String, ServeError> {
        self.opt_string(name)?
            .ok_or_else(|| ServeError::missing(&self.name(name)))
    }

    pub fn opt_string(&self, name: &str) -> Result<Option<String>, ServeError> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(ServeError::wrong_type(&self.name(name), "a string")),
        }
    }

    pub fn bool(&self, name: &str) -> Result<bool, ServeError> {
        self.opt_bool(name)?
            .ok_or_else(|| ServeError::missing(&self.name(name)))
    }

    pub fn opt_bool(&self, name: &str) -> Result<Option<bool>, ServeError> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(_) => Err(ServeError::wrong_type(&self.name(name), "a boolean")),
        }
    }

    pub fn u64(&self, name: &str) -> Result<u64, ServeError> {
        self.opt_u64(name)?
            .ok_or_else(|| ServeError::missing(&self.name(name)))
    }

    pub fn opt_u64(&self, name: &str) -> Result<Option<u64>, ServeError> {
        match self.get(name) {
            None => Ok(None),
            Some(value) => value.as_u64().map(Some).ok_or_else(|| {
                ServeError::wrong_type(&self.name(name), "an unsigned 64-bit integer")
            }),
        }
    }

    pub fn value(&self, name: &str) -> Result<Value, ServeError> {
        self.required(name).cloned()
    }

    pub fn array(&self, name: &str) -> Result<Vec<Value>, ServeError> {
        match self.required(name)? {
            Value::Array(items) => Ok(items.clone()),
            _ => Err(ServeError::wrong_type(&self.name(name), "an array")),
        }
    }

    pub fn object_or_empty(&self, name: &str) -> Result<Value, ServeError> {
        match self.get(name) {
            None => Ok(Value::Object(Map::new())),
            Some(value @ Value::Object(_)) => Ok(value.clone()),
            Some(_) => Err(ServeError::wrong_type(&self.name(name), "an object")),
        }
    }

    pub fn opt_strings(&self, name: &str) -> Result<Vec<String>, ServeError> {
        let wrong = || ServeError::wrong_type(&self.name(name), "an array of strings");
        match self.get(name) {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .map(|item| item.as_str().map(str::to_string).ok_or_else(wrong))
                .collect(),
            Some(_) => Err(wrong()),
        }
    }
}
