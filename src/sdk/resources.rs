//! The extension side of native resource refs and operation descriptors (section
//! 2.26, API 0.4): declare a tool's [`Operation`], register the values a call returns
//! with [`Context::register_resource`], and clean up the native objects the host
//! retires with [`crate::sdk::Extension::on_resource_dispose`].
//!
//! A tool with an operation asks for [`FEATURE_OPERATION_DESCRIPTORS`] (and
//! [`FEATURE_RESOURCE_REFS`] when it names a resource); a host that does not offer
//! them gets the tool without the descriptor.
//!
//! ```no_run
//! use octet_host::sdk::{resource_ref_schema, Context, Extension, Operation, Tool, ToolOutput};
//! use serde_json::{json, Value};
//!
//! let make = Tool::new("make_circuit", "Build a circuit", json!({"type": "object"}))
//!     .output_schema(json!({"type": "object",
//!                           "properties": {"circuit": resource_ref_schema("Circuit")}}))
//!     .operation(Operation::new("circuit.make").output("/circuit", "Circuit"));
//! Extension::new()
//!     .tool_def(make, |_: Value, cx: &Context| {
//!         let circuit = cx.register_resource("Circuit")?;
//!         Ok(ToolOutput::text("built").with_structured_content(json!({"circuit": circuit.to_value()})))
//!     })
//!     .on_resource_dispose(|_resource, _cx| true)
//!     .run()
//!     .unwrap();
//! ```

use serde_json::{json, Map, Value};

use super::context::Context;
use super::error::ChildRequestError;
use super::extension::Extension;
pub use super::operation::Operation;
use crate::negotiation::Feature;
use crate::validate::resource::ResourceRef;

/// The API 0.4 feature of `resource/register`, `resource/release` and
/// `resource/dispose` (section 2.26).
pub const FEATURE_RESOURCE_REFS: &str = Feature::ResourceRefsV1.as_str();

/// The API 0.4 feature of a tool definition's `operation` descriptor (section 2.26).
pub const FEATURE_OPERATION_DESCRIPTORS: &str = Feature::OperationDescriptorsV1.as_str();

/// The exact closed ResourceRef schema of `type_id`, for a tool's `parameters` or
/// `output_schema` at a descriptor's path.
pub fn resource_ref_schema(type_id: &str) -> Value {
    json!({
        "type": "object",
        "properties": {"$resource": {"type": "string"}, "type": {"const": type_id}},
        "required": ["$resource", "type"],
        "additionalProperties": false
    })
}

impl Extension {
    /// Cleans up the native objects the host retires (`resource/dispose`, section
    /// 2.26): `handler` is called once per retired value and answers whether its
    /// cleanup succeeded. Without one, every retired value is answered `completed`.
    /// The host ends a process that does not answer every value within 10 s.
    pub fn on_resource_dispose<F>(mut self, handler: F) -> Extension
    where
        F: Fn(&ResourceRef, &Context) -> bool + Send + Sync + 'static,
    {
        self.resource_dispose = Some(std::sync::Arc::new(handler));
        self
    }
}

/// The answer to `resource/dispose {resources, reason}`: a status for every ref.
pub(crate) fn dispose(ext: &Extension, params: &Map<String, Value>, cx: &Context) -> Value {
    let resources = params
        .get("resources")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let results: Vec<Value> = resources
        .into_iter()
        .map(|value| {
            let cleaned = match (ResourceRef::parse(&value), &ext.resource_dispose) {
                (Ok(resource), Some(handler)) => handler(&resource, cx),
                (Ok(_), None) => true,
                (Err(_), _) => false,
            };
            let status = if cleaned { "completed" } else { "failed" };
            json!({"resource": value, "status": status})
        })
        .collect();
    json!({ "results": results })
}

impl Context {
    /// `resource/register`: a new value of `type_id` under this call, for a native
    /// object the extension keeps. It is provisional: it becomes usable only when this
    /// call succeeds with it at a declared output path of its structured content.
    pub fn register_resource(&self, type_id: &str) -> Result<ResourceRef, ChildRequestError> {
        let mut params = Map::new();
        params.insert("type".into(), json!(type_id));
        let answer = self.request("resource/register", params)?;
        ResourceRef::parse(&answer).map_err(|_| ChildRequestError::MalformedAnswer {
            method: "resource/register",
        })
    }

    /// `resource/release`: retires `resource` at once; the host then asks for its
    /// cleanup with `resource/dispose`. A value a running call holds is refused
    /// (`resource_busy`).
    pub fn release_resource(&self, resource: &ResourceRef) -> Result<(), ChildRequestError> {
        let mut params = Map::new();
        params.insert("resource".into(), resource.to_value());
        let answer = self.request("resource/release", params)?;
        match answer.get("retired") {
            Some(Value::Bool(true)) => Ok(()),
            _ => Err(ChildRequestError::MalformedAnswer {
                method: "resource/release",
            }),
        }
    }
}
