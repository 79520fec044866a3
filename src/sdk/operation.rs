//! A tool's operation descriptor as the SDK declares it (section 2.26): see
//! [`crate::sdk::Tool::operation`].

use serde_json::{json, Map, Value};

/// A tool's operation descriptor: what the tool does, the resources it takes (each
/// pinned exclusively while the call runs) and the ones it returns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Operation {
    id: String,
    receiver: Option<String>,
    inputs: Vec<(String, String)>,
    outputs: Vec<(String, String)>,
}

impl Operation {
    /// An operation of id `id` (1 to 128 ASCII bytes: a letter, then letters, digits,
    /// `_`, `.` or `-`).
    pub fn new(id: impl Into<String>) -> Operation {
        Operation {
            id: id.into(),
            receiver: None,
            inputs: Vec::new(),
            outputs: Vec::new(),
        }
    }

    /// Takes a resource of `type_id` at the JSON Pointer `path` of the arguments.
    pub fn input(mut self, path: impl Into<String>, type_id: impl Into<String>) -> Operation {
        self.inputs.push((path.into(), type_id.into()));
        self
    }

    /// Returns a resource of `type_id` at `path` of the structured content.
    pub fn output(mut self, path: impl Into<String>, type_id: impl Into<String>) -> Operation {
        self.outputs.push((path.into(), type_id.into()));
        self
    }

    /// Names the input the operation acts on, for presentation (one of the inputs).
    pub fn receiver(mut self, path: impl Into<String>) -> Operation {
        self.receiver = Some(path.into());
        self
    }

    /// True when the operation takes or returns a resource.
    pub fn is_resource_bearing(&self) -> bool {
        !self.inputs.is_empty() || !self.outputs.is_empty()
    }

    /// The descriptor as sent in a tool definition.
    pub fn to_wire(&self) -> Value {
        let mut map = Map::new();
        map.insert("id".into(), json!(self.id));
        if let Some(receiver) = &self.receiver {
            map.insert("receiver".into(), json!(receiver));
        }
        let inputs: Vec<Value> = self
            .inputs
            .iter()
            .map(|(path, t)| json!({"path": path, "type": t, "access": "exclusive"}))
            .collect();
        let outputs: Vec<Value> = self
            .outputs
            .iter()
            .map(|(path, t)| json!({"path": path, "type": t}))
            .collect();
        map.insert("resource_inputs".into(), Value::Array(inputs));
        map.insert("resource_outputs".into(), Value::Array(outputs));
        Value::Object(map)
    }
}
